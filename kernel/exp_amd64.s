//go:build amd64 && !noasm

#include "textflag.h"

// VEC4 defines name<> as four copies of the 64-bit pattern bits (a
// 32-byte operand for the packed instructions).
#define VEC4(name, bits) \
	DATA name<>+0(SB)/8, bits; \
	DATA name<>+8(SB)/8, bits; \
	DATA name<>+16(SB)/8, bits; \
	DATA name<>+24(SB)/8, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

VEC4(lo, $0xc086180000000000) // -707: below, exp(x) may be subnormal
VEC4(hi, $0x4086280000000000) // 709: above, exp(x) may overflow
VEC4(zero, $0xc087500000000000) // -746: below, exp(x) rounds to 0
VEC4(shift, $0x4338000000000000) // 1.5 * 2^52: adding it rounds to an integer
VEC4(invln2, $0x3ff71547652b82fe) // 1/ln 2
VEC4(ln2hi, $0x3fe62e42fee00000) // ln 2, high part (32 significant bits)
VEC4(ln2lo, $0x3dea39ef35793c76) // ln 2 - ln2hi
VEC4(c0, $0x3ff0000000000000) // c_k = 1/k!, rounded to double
VEC4(c1, $0x3ff0000000000000)
VEC4(c2, $0x3fe0000000000000)
VEC4(c3, $0x3fc5555555555555)
VEC4(c4, $0x3fa5555555555555)
VEC4(c5, $0x3f81111111111111)
VEC4(c6, $0x3f56c16c16c16c17)
VEC4(c7, $0x3f2a01a01a01a01a)
VEC4(c8, $0x3efa01a01a01a01a)
VEC4(c9, $0x3ec71de3a556c734)
VEC4(c10, $0x3e927e4fb7789f5c)
VEC4(c11, $0x3e5ae64567f544e4)
VEC4(c12, $0x3e21eed8eff8d898)
VEC4(c13, $0x3de6124613a86d09)
VEC4(absmask, $0x7fffffffffffffff) // clears the sign bit

// EXP4 replaces Y0 = x by exp(x), lane by lane, using Y2-Y7 and BX. Lanes
// with x < -746 become 0. If any lane is outside [-707, 709] and not below
// -746 (a subnormal or infinite result, or NaN), it jumps to bail with Y0
// unchanged.
//
// k = round(x / ln 2) (FMA with the 1.5 * 2^52 shifter), r = x - k ln 2 in
// two FMA steps (Cody-Waite), e^r by the degree-13 Taylor polynomial in
// Horner form (|r| <= ln2/2, truncation below 5e-18 relative), and 2^k
// added to the exponent bits. Y2: x >= -707 and x <= 709; Y3: x < -746;
// Y4: the shifted x/ln2, then k as an int64; Y5: k as a float; Y6: r; Y7:
// e^r, then the result; the lanes of Y3 are zeroed at the end.
#define EXP4(bail) \
	VCMPPD       $0x1D, lo<>(SB), Y0, Y2; \
	VCMPPD       $0x12, hi<>(SB), Y0, Y3; \
	VANDPD       Y3, Y2, Y2; \
	VCMPPD       $0x11, zero<>(SB), Y0, Y3; \
	VORPD        Y3, Y2, Y4; \
	VMOVMSKPD    Y4, BX; \
	CMPQ         BX, $15; \
	JNE          bail; \
	VMOVUPD      shift<>(SB), Y4; \
	VFMADD231PD  invln2<>(SB), Y0, Y4; \
	VSUBPD       shift<>(SB), Y4, Y5; \
	VPSUBQ       shift<>(SB), Y4, Y4; \
	VMOVAPD      Y0, Y6; \
	VFNMADD231PD ln2hi<>(SB), Y5, Y6; \
	VFNMADD231PD ln2lo<>(SB), Y5, Y6; \
	VMOVUPD      c13<>(SB), Y7; \
	VFMADD213PD  c12<>(SB), Y6, Y7; \
	VFMADD213PD  c11<>(SB), Y6, Y7; \
	VFMADD213PD  c10<>(SB), Y6, Y7; \
	VFMADD213PD  c9<>(SB), Y6, Y7; \
	VFMADD213PD  c8<>(SB), Y6, Y7; \
	VFMADD213PD  c7<>(SB), Y6, Y7; \
	VFMADD213PD  c6<>(SB), Y6, Y7; \
	VFMADD213PD  c5<>(SB), Y6, Y7; \
	VFMADD213PD  c4<>(SB), Y6, Y7; \
	VFMADD213PD  c3<>(SB), Y6, Y7; \
	VFMADD213PD  c2<>(SB), Y6, Y7; \
	VFMADD213PD  c1<>(SB), Y6, Y7; \
	VFMADD213PD  c0<>(SB), Y6, Y7; \
	VPSLLQ       $52, Y4, Y4; \
	VPADDQ       Y4, Y7, Y7; \
	VANDNPD      Y7, Y3, Y0

// func expAVX2(dst, src []float64) int
// Sets dst[i] = exp(src[i]) for i < len(src) rounded down to a multiple of 4,
// stopping before the first block of 4 that holds a lane EXP4 cannot handle.
// Returns the number of elements done. len(dst) >= len(src).
TEXT ·expAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	SHRQ $2, CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   expdone

exploop:
	VMOVUPD (SI)(AX*8), Y0
	EXP4(expdone)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	DECQ    CX
	JNZ     exploop

expdone:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET

// func expScaleAVX2(v []float64, gamma float64) int
// Sets v[i] = exp(gamma v[i]) for i < len(v) rounded down to a multiple of
// 4 (the product rounded, then EXP4, as distRowAVX2 computes its blocks),
// stopping before the first block of 4 that holds a lane EXP4 cannot
// handle, which is left unchanged. Returns the number of elements done.
TEXT ·expScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ v_base+0(FP), DI
	MOVQ v_len+8(FP), CX
	SHRQ $2, CX
	VBROADCASTSD gamma+24(FP), Y15
	XORQ AX, AX
	TESTQ CX, CX
	JZ   scaledone

scaleloop:
	VMOVUPD (DI)(AX*8), Y0
	VMULPD  Y15, Y0, Y0
	EXP4(scaledone)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	DECQ    CX
	JNZ     scaleloop

scaledone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func distRowAVX2(row, x, zt []float64, stride int, gamma float64, mode int) int
// For each block of 4 columns j < len(row) (a multiple of 4):
//   s_j = sum_k (x[k] - zt[k*stride + j])^2   (k < len(x), len(x) >= 1)
//   row[j] = s_j (mode 0), exp(g s_j) (mode 1), exp(g sqrt(s_j)) (mode 2),
//   or exp(g sum_k |x[k] - zt[k*stride + j]|) (mode 3),
// stopping before the first block EXP4 cannot handle. Returns the number of
// columns done.
TEXT ·distRowAVX2(SB), NOSPLIT, $0-104
	MOVQ row_base+0(FP), DI
	MOVQ row_len+8(FP), CX
	SHRQ $2, CX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), R8
	MOVQ zt_base+48(FP), R9
	MOVQ stride+72(FP), R10
	SHLQ $3, R10
	VBROADCASTSD gamma+80(FP), Y15
	MOVQ mode+88(FP), R11
	XORQ AX, AX
	TESTQ CX, CX
	JZ   distdone

	// Pairs of 4-column blocks share the broadcasts of x.
dist8:
	CMPQ CX, $2
	JLT  dist8end
	VXORPD Y0, Y0, Y0
	VXORPD Y8, Y8, Y8
	MOVQ   R9, R12
	MOVQ   SI, R13
	MOVQ   R8, DX
	CMPQ   R11, $3
	JEQ    k8l1

k8:
	VBROADCASTSD (R13), Y1
	VSUBPD       (R12), Y1, Y2
	VSUBPD       32(R12), Y1, Y3
	VFMADD231PD  Y2, Y2, Y0
	VFMADD231PD  Y3, Y3, Y8
	ADDQ         $8, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k8
	JMP          k8mode

k8l1:
	VBROADCASTSD (R13), Y1
	VSUBPD       (R12), Y1, Y2
	VSUBPD       32(R12), Y1, Y3
	VANDPD       absmask<>(SB), Y2, Y2
	VANDPD       absmask<>(SB), Y3, Y3
	VADDPD       Y2, Y0, Y0
	VADDPD       Y3, Y8, Y8
	ADDQ         $8, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k8l1

k8mode:
	CMPQ    R11, $0
	JEQ     k8store0
	CMPQ    R11, $2
	JNE     k8scale
	VSQRTPD Y0, Y0
	VSQRTPD Y8, Y8

k8scale:
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y8, Y8
	EXP4(distdone)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	VMOVAPD Y8, Y0
	EXP4(distdone)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     k8next

k8store0:
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y8, 32(DI)(AX*8)
	ADDQ    $8, AX

k8next:
	ADDQ $64, R9
	SUBQ $2, CX
	JMP  dist8

dist8end:
	TESTQ CX, CX
	JZ    distdone

distloop:
	VXORPD Y0, Y0, Y0
	VXORPD Y8, Y8, Y8
	MOVQ   R9, R12
	MOVQ   SI, R13
	MOVQ   R8, DX
	CMPQ   R11, $3
	JEQ    kloopl1
	// Two accumulators (even and odd k) halve the FMA dependency chain.
	CMPQ   DX, $2
	JLT    ktail

kloop2:
	VBROADCASTSD (R13), Y1
	VSUBPD       (R12), Y1, Y1
	VFMADD231PD  Y1, Y1, Y0
	VBROADCASTSD 8(R13), Y9
	VSUBPD       (R12)(R10*1), Y9, Y9
	VFMADD231PD  Y9, Y9, Y8
	ADDQ         $16, R13
	LEAQ         (R12)(R10*2), R12
	SUBQ         $2, DX
	CMPQ         DX, $2
	JGE          kloop2

ktail:
	TESTQ        DX, DX
	JZ           ksum
	VBROADCASTSD (R13), Y1
	VSUBPD       (R12), Y1, Y1
	VFMADD231PD  Y1, Y1, Y0

	JMP          ksum

kloopl1:
	// L1 distance: sum_k |x_k - z_k|.
	VBROADCASTSD (R13), Y1
	VSUBPD       (R12), Y1, Y1
	VANDPD       absmask<>(SB), Y1, Y1
	VADDPD       Y1, Y0, Y0
	ADDQ         $8, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          kloopl1

ksum:
	VADDPD Y8, Y0, Y0
	CMPQ   R11, $0
	JEQ    diststore
	CMPQ   R11, $2
	JNE    distscale
	VSQRTPD Y0, Y0

distscale:
	VMULPD Y15, Y0, Y0
	EXP4(distdone)

diststore:
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	ADDQ    $32, R9
	DECQ    CX
	JNZ     distloop

distdone:
	VZEROUPPER
	MOVQ AX, ret+96(FP)
	RET


