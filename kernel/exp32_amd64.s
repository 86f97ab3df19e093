//go:build amd64 && !noasm

#include "textflag.h"

// VEC8 defines name<> as eight copies of the 32-bit pattern bits (a
// 32-byte operand for the packed single-precision instructions).
#define VEC8(name, bits) \
	DATA name<>+0(SB)/4, bits; \
	DATA name<>+4(SB)/4, bits; \
	DATA name<>+8(SB)/4, bits; \
	DATA name<>+12(SB)/4, bits; \
	DATA name<>+16(SB)/4, bits; \
	DATA name<>+20(SB)/4, bits; \
	DATA name<>+24(SB)/4, bits; \
	DATA name<>+28(SB)/4, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

VEC8(lo32, $0xc2ae0000) // -87: below, the result is flushed to 0
VEC8(hi32, $0x42b00000) // 88: above, exp(x) may overflow
VEC8(shift32, $0x4b400000) // 1.5 * 2^23: adding it rounds to an integer
VEC8(invln2f, $0x3fb8aa3b) // 1/ln 2
VEC8(ln2hif, $0x3f318000) // 0.693359375 (Cephes C1: k C1 is exact)
VEC8(ln2lof, $0xb95e8083) // -2.12194440e-4 (Cephes C2 = ln 2 - C1)
VEC8(p0f, $0x39506967) // Cephes expf: 1.9875691500e-4
VEC8(p1f, $0x3ab743ce) // 1.3981999507e-3
VEC8(p2f, $0x3c088908) // 8.3334519073e-3
VEC8(p3f, $0x3d2aa9c1) // 4.1665795894e-2
VEC8(p4f, $0x3e2aaaaa) // 1.6666665459e-1
VEC8(p5f, $0x3f000000) // 5.0000001201e-1
VEC8(onef, $0x3f800000) // 1
VEC8(absmask32, $0x7fffffff) // clears the sign bit

// EXP8 replaces Y0 = x by exp(x) in float32, lane by lane, using Y2-Y7 and
// BX. Lanes with x < -87 become 0. If any lane is above 88 or NaN (an
// infinite result, or NaN), it jumps to bail with Y0 unchanged.
//
// k = round(x / ln 2) (FMA with the 1.5 * 2^23 shifter), r = x - k ln 2 in
// two FMA steps (Cody-Waite with Cephes' split), e^r = 1 + r + r^2 P(r)
// with Cephes' degree-5 P (|r| <= ln2/2), and 2^k added to the exponent
// bits. Y2: x >= -87 and x <= 88; Y3: x < -87; Y4: the shifted x/ln2, then
// k as an int32; Y5: k as a float, then r^2; Y6: r; Y7: P, then the
// result; the lanes of Y3 are zeroed at the end.
#define EXP8(bail) \
	VCMPPS       $0x1D, lo32<>(SB), Y0, Y2; \
	VCMPPS       $0x12, hi32<>(SB), Y0, Y3; \
	VANDPS       Y3, Y2, Y2; \
	VCMPPS       $0x11, lo32<>(SB), Y0, Y3; \
	VORPS        Y3, Y2, Y4; \
	VMOVMSKPS    Y4, BX; \
	CMPQ         BX, $255; \
	JNE          bail; \
	VMOVUPS      shift32<>(SB), Y4; \
	VFMADD231PS  invln2f<>(SB), Y0, Y4; \
	VSUBPS       shift32<>(SB), Y4, Y5; \
	VPSUBD       shift32<>(SB), Y4, Y4; \
	VMOVAPS      Y0, Y6; \
	VFNMADD231PS ln2hif<>(SB), Y5, Y6; \
	VFNMADD231PS ln2lof<>(SB), Y5, Y6; \
	VMULPS       Y6, Y6, Y5; \
	VMOVUPS      p0f<>(SB), Y7; \
	VFMADD213PS  p1f<>(SB), Y6, Y7; \
	VFMADD213PS  p2f<>(SB), Y6, Y7; \
	VFMADD213PS  p3f<>(SB), Y6, Y7; \
	VFMADD213PS  p4f<>(SB), Y6, Y7; \
	VFMADD213PS  p5f<>(SB), Y6, Y7; \
	VFMADD213PS  Y6, Y5, Y7; \
	VADDPS       onef<>(SB), Y7, Y7; \
	VPSLLD       $23, Y4, Y4; \
	VPADDD       Y4, Y7, Y7; \
	VANDNPS      Y7, Y3, Y0

// func exp32AVX2(dst, src []float32) int
// Sets dst[i] = exp(src[i]) in float32 for i < len(src) rounded down to a
// multiple of 8, stopping before the first block of 8 that holds a lane
// EXP8 cannot handle. Returns the number of elements done.
// len(dst) >= len(src).
TEXT ·exp32AVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	SHRQ $3, CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   exp32done

exp32loop:
	VMOVUPS (SI)(AX*4), Y0
	EXP8(exp32done)
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	DECQ    CX
	JNZ     exp32loop

exp32done:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET

// func distRow32AVX2(row, x, zt []float32, stride int, gamma float32, mode int) int
// For each block of 8 columns j < len(row) (a multiple of 8), in float32:
//   s_j = sum_k (x[k] - zt[k*stride + j])^2   (k < len(x), len(x) >= 1)
//   row[j] = exp(g s_j) (mode 1), exp(g sqrt(s_j)) (mode 2),
//   or exp(g sum_k |x[k] - zt[k*stride + j]|) (mode 3),
// stopping before the first block EXP8 cannot handle. Returns the number
// of columns done.
TEXT ·distRow32AVX2(SB), NOSPLIT, $0-104
	MOVQ row_base+0(FP), DI
	MOVQ row_len+8(FP), CX
	SHRQ $3, CX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), R8
	MOVQ zt_base+48(FP), R9
	MOVQ stride+72(FP), R10
	SHLQ $2, R10
	VBROADCASTSS gamma+80(FP), Y15
	MOVQ mode+88(FP), R11
	XORQ AX, AX
	TESTQ CX, CX
	JZ   d32done

	// Pairs of 8-column blocks share the broadcasts of x.
d32pair:
	CMPQ CX, $2
	JLT  d32pairend
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	MOVQ   R9, R12
	MOVQ   SI, R13
	MOVQ   R8, DX
	CMPQ   R11, $3
	JEQ    k16l1

k16:
	VBROADCASTSS (R13), Y1
	VSUBPS       (R12), Y1, Y2
	VSUBPS       32(R12), Y1, Y3
	VFMADD231PS  Y2, Y2, Y0
	VFMADD231PS  Y3, Y3, Y8
	ADDQ         $4, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k16
	JMP          k16mode

k16l1:
	VBROADCASTSS (R13), Y1
	VSUBPS       (R12), Y1, Y2
	VSUBPS       32(R12), Y1, Y3
	VANDPS       absmask32<>(SB), Y2, Y2
	VANDPS       absmask32<>(SB), Y3, Y3
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y8, Y8
	ADDQ         $4, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k16l1

k16mode:
	CMPQ    R11, $2
	JNE     k16scale
	VSQRTPS Y0, Y0
	VSQRTPS Y8, Y8

k16scale:
	VMULPS  Y15, Y0, Y0
	VMULPS  Y15, Y8, Y8
	EXP8(d32done)
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	VMOVAPS Y8, Y0
	EXP8(d32done)
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	ADDQ    $64, R9
	SUBQ    $2, CX
	JMP     d32pair

d32pairend:
	TESTQ CX, CX
	JZ    d32done

	// The last block of 8 columns.
	VXORPS Y0, Y0, Y0
	MOVQ   R9, R12
	MOVQ   SI, R13
	MOVQ   R8, DX
	CMPQ   R11, $3
	JEQ    k8l1

k8:
	VBROADCASTSS (R13), Y1
	VSUBPS       (R12), Y1, Y1
	VFMADD231PS  Y1, Y1, Y0
	ADDQ         $4, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k8
	JMP          k8mode

k8l1:
	VBROADCASTSS (R13), Y1
	VSUBPS       (R12), Y1, Y1
	VANDPS       absmask32<>(SB), Y1, Y1
	VADDPS       Y1, Y0, Y0
	ADDQ         $4, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          k8l1

k8mode:
	CMPQ    R11, $2
	JNE     k8scale
	VSQRTPS Y0, Y0

k8scale:
	VMULPS  Y15, Y0, Y0
	EXP8(d32done)
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX

d32done:
	VZEROUPPER
	MOVQ AX, ret+96(FP)
	RET
