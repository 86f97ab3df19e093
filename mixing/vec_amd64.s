//go:build amd64 && !noasm

#include "textflag.h"

// func addAVX(dst, src []float64)
TEXT ·addAVX(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	SHRQ $2, CX
	JZ   done

loop:
	VMOVUPD (DI), Y0
	VADDPD  (SI), Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET

// func laneSumAVX(s *[4]float64, v []float64)
TEXT ·laneSumAVX(SB), NOSPLIT, $0-32
	MOVQ   s+0(FP), DI
	MOVQ   v_base+8(FP), SI
	MOVQ   v_len+16(FP), CX
	VXORPD Y0, Y0, Y0
	SHRQ   $2, CX
	JZ     done

loop:
	VADDPD (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JNZ    loop

done:
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET
