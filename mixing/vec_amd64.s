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

// compressTable holds, for each 4-bit mask, the lanes of its set bits in
// increasing order (zeros after them): the control of VPERMILPS that packs
// the selected lanes first.
DATA compressTable<>+0(SB)/4, $0
DATA compressTable<>+4(SB)/4, $0
DATA compressTable<>+8(SB)/4, $0
DATA compressTable<>+12(SB)/4, $0
DATA compressTable<>+16(SB)/4, $0
DATA compressTable<>+20(SB)/4, $0
DATA compressTable<>+24(SB)/4, $0
DATA compressTable<>+28(SB)/4, $0
DATA compressTable<>+32(SB)/4, $1
DATA compressTable<>+36(SB)/4, $0
DATA compressTable<>+40(SB)/4, $0
DATA compressTable<>+44(SB)/4, $0
DATA compressTable<>+48(SB)/4, $0
DATA compressTable<>+52(SB)/4, $1
DATA compressTable<>+56(SB)/4, $0
DATA compressTable<>+60(SB)/4, $0
DATA compressTable<>+64(SB)/4, $2
DATA compressTable<>+68(SB)/4, $0
DATA compressTable<>+72(SB)/4, $0
DATA compressTable<>+76(SB)/4, $0
DATA compressTable<>+80(SB)/4, $0
DATA compressTable<>+84(SB)/4, $2
DATA compressTable<>+88(SB)/4, $0
DATA compressTable<>+92(SB)/4, $0
DATA compressTable<>+96(SB)/4, $1
DATA compressTable<>+100(SB)/4, $2
DATA compressTable<>+104(SB)/4, $0
DATA compressTable<>+108(SB)/4, $0
DATA compressTable<>+112(SB)/4, $0
DATA compressTable<>+116(SB)/4, $1
DATA compressTable<>+120(SB)/4, $2
DATA compressTable<>+124(SB)/4, $0
DATA compressTable<>+128(SB)/4, $3
DATA compressTable<>+132(SB)/4, $0
DATA compressTable<>+136(SB)/4, $0
DATA compressTable<>+140(SB)/4, $0
DATA compressTable<>+144(SB)/4, $0
DATA compressTable<>+148(SB)/4, $3
DATA compressTable<>+152(SB)/4, $0
DATA compressTable<>+156(SB)/4, $0
DATA compressTable<>+160(SB)/4, $1
DATA compressTable<>+164(SB)/4, $3
DATA compressTable<>+168(SB)/4, $0
DATA compressTable<>+172(SB)/4, $0
DATA compressTable<>+176(SB)/4, $0
DATA compressTable<>+180(SB)/4, $1
DATA compressTable<>+184(SB)/4, $3
DATA compressTable<>+188(SB)/4, $0
DATA compressTable<>+192(SB)/4, $2
DATA compressTable<>+196(SB)/4, $3
DATA compressTable<>+200(SB)/4, $0
DATA compressTable<>+204(SB)/4, $0
DATA compressTable<>+208(SB)/4, $0
DATA compressTable<>+212(SB)/4, $2
DATA compressTable<>+216(SB)/4, $3
DATA compressTable<>+220(SB)/4, $0
DATA compressTable<>+224(SB)/4, $1
DATA compressTable<>+228(SB)/4, $2
DATA compressTable<>+232(SB)/4, $3
DATA compressTable<>+236(SB)/4, $0
DATA compressTable<>+240(SB)/4, $0
DATA compressTable<>+244(SB)/4, $1
DATA compressTable<>+248(SB)/4, $2
DATA compressTable<>+252(SB)/4, $3
GLOBL compressTable<>(SB), RODATA|NOPTR, $256

DATA lanes0123<>+0(SB)/4, $0
DATA lanes0123<>+4(SB)/4, $1
DATA lanes0123<>+8(SB)/4, $2
DATA lanes0123<>+12(SB)/4, $3
GLOBL lanes0123<>(SB), RODATA|NOPTR, $16

// func candidatesAVX(idx []int32, d2 []float64, t float64) int
TEXT ·candidatesAVX(SB), NOSPLIT, $0-64
	MOVQ         idx_base+0(FP), DI
	MOVQ         d2_base+24(FP), SI
	MOVQ         d2_len+32(FP), CX
	VBROADCASTSD t+48(FP), Y1
	LEAQ         compressTable<>(SB), R8
	VMOVDQU      lanes0123<>(SB), X2
	MOVL         $4, R10
	VMOVD        R10, X3
	VPBROADCASTD X3, X3
	XORQ         AX, AX
	SHRQ         $2, CX
	JZ           done

loop:
	VMOVUPD   (SI), Y0
	VCMPPD    $2, Y1, Y0, Y0
	VMOVMSKPD Y0, DX
	MOVQ      DX, R9
	SHLQ      $4, R9
	VMOVDQU   (R8)(R9*1), X4
	VPERMILPS X4, X2, X5
	VMOVDQU   X5, (DI)(AX*4)
	POPCNTQ   DX, DX
	ADDQ      DX, AX
	VPADDD    X3, X2, X2
	ADDQ      $32, SI
	DECQ      CX
	JNZ       loop

done:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET

// func scaleAVX(dst, src []float64, a float64)
TEXT ·scaleAVX(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VBROADCASTSD a+48(FP), Y1
	SHRQ         $2, CX
	JZ           done

loop:
	VMULPD  (SI), Y1, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET
