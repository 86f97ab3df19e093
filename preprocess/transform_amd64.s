//go:build amd64 && !noasm

#include "textflag.h"

// The vector transforms replay, 4 lanes at a time, the exact sequence of
// IEEE operations of the Go standard library's math.Log1p (log1p.go, the
// FreeBSD algorithm) and math.Asinh (asinh.go, with math.Log's amd64
// assembly, log_amd64.s): each multiply, add, divide and square root is
// one rounded instruction, none fused, in the same order, so every result
// is bit-identical to math's. Branches become lane masks; the lanes of the
// rare branches that are not replayed (NaN, infinities, |x| >= 2^53 in
// log1p, |x| > 2^28 in asinh, and a mantissa within 3 ulp of the next
// power of two in log1p's reduction) send the block of 4 back to the Go
// code.

#define VEC4(name, bits) \
	DATA name<>+0(SB)/8, bits; \
	DATA name<>+8(SB)/8, bits; \
	DATA name<>+16(SB)/8, bits; \
	DATA name<>+24(SB)/8, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

VEC4(absmask, $0x7fffffffffffffff)
VEC4(signbit, $0x8000000000000000)
VEC4(one, $0x3ff0000000000000) // 1.0, also the bits of the exponent of [1, 2)
VEC4(two, $0x4000000000000000)
VEC4(half, $0x3fe0000000000000) // 0.5, also the bits of the exponent of [0.5, 1)
VEC4(tiny29, $0x3e20000000000000) // 2^-29
VEC4(sqrt2m1, $0x3fda827999fcef32) // math.Log1p's Sqrt2M1, 4.142135623730950488017e-01
VEC4(two53, $0x4340000000000000) // 2^53
VEC4(mant, $0x000fffffffffffff)
VEC4(bias, $1023)
VEC4(sqrt2mantm1, $0x0006a09e667f3bcc) // the mantissa of sqrt(2), minus 1
VEC4(two52int, $0x0010000000000000)
VEC4(magic, $0x4338000000000000) // 1.5 * 2^52: int64 k + its bits is 1.5*2^52 + k
VEC4(ln2hi, $0x3fe62e42fee00000)
VEC4(ln2lo, $0x3dea39ef35793c76)
VEC4(lp1, $0x3fe5555555555593)
VEC4(lp2, $0x3fd999999997fa04)
VEC4(lp3, $0x3fd2492494229359)
VEC4(lp4, $0x3fcc71c51d8e78af)
VEC4(lp5, $0x3fc7466496cb03de)
VEC4(lp6, $0x3fc39a09d078c69f)
VEC4(lp7, $0x3fc2f112df3e5244)
VEC4(hsqrt2, $0x3fe6a09e667f3bcd) // sqrt(2)/2
VEC4(mask7ff, $0x7ff)
VEC4(c3fe, $0x3fe)
VEC4(near28, $0x3e30000000000000) // 2^-28
VEC4(large28, $0x41b0000000000000) // 2^28

// LOG1P replaces Y0 = a (a >= 0) by math.Log1p(a), using Y1-Y15 and BX. It
// jumps to bail with Y0 unchanged if a lane is NaN, +Inf or >= 2^53, or
// meets the rare case of the reduction it does not replay. The lanes:
// T: a < 2^-29, a - a*a*0.5; K0: a < sqrt(2)-1, k = 0, f = a, c = 0; K:
// u = 1 + a, k its exponent, c the rounding correction, u normalized to
// [sqrt(2)/2, sqrt(2)) and f = u - 1; then the polynomial R of s = f/(2+f)
// and the formula for k = 0, for f = 0 (u a power of two) or the general
// one.
//
// Registers: Y1 a, Y2 u, Y3 k (int64, then float), Y8 c, Y11 f, Y14 the
// lanes where f = 0 by a power of two.
#define LOG1P(bail) \
	VMOVAPD      Y0, Y1; \
	VCMPPD       $0x11, two53<>(SB), Y1, Y2; \
	VMOVMSKPD    Y2, BX; \
	CMPQ         BX, $15; \
	JNE          bail; \
	VADDPD       one<>(SB), Y1, Y2; \
	VPSRLQ       $52, Y2, Y3; \
	VPSUBQ       bias<>(SB), Y3, Y3; \
	VSUBPD       Y1, Y2, Y4; \
	VMOVUPD      one<>(SB), Y5; \
	VSUBPD       Y4, Y5, Y4; \
	VSUBPD       one<>(SB), Y2, Y5; \
	VSUBPD       Y5, Y1, Y5; \
	VPXOR        Y6, Y6, Y6; \
	VPCMPGTQ     Y6, Y3, Y7; \
	VBLENDVPD    Y7, Y4, Y5, Y8; \
	VDIVPD       Y2, Y8, Y8; \
	VPAND        mant<>(SB), Y2, Y9; \
	VPCMPGTQ     sqrt2mantm1<>(SB), Y9, Y10; \
	VPSUBQ       Y10, Y3, Y3; \
	VMOVUPD      half<>(SB), Y11; \
	VMOVUPD      one<>(SB), Y12; \
	VBLENDVPD    Y10, Y11, Y12, Y11; \
	VPOR         Y9, Y11, Y11; \
	VMOVUPD      two52int<>(SB), Y12; \
	VPSUBQ       Y9, Y12, Y12; \
	VPSRLQ       $2, Y12, Y12; \
	VBLENDVPD    Y10, Y12, Y9, Y12; \
	VSUBPD       one<>(SB), Y11, Y11; \
	VCMPPD       $0x11, sqrt2m1<>(SB), Y1, Y13; \
	VBLENDVPD    Y13, Y1, Y11, Y11; \
	VPANDN       Y3, Y13, Y3; \
	VANDNPD      Y8, Y13, Y8; \
	VPCMPEQQ     Y6, Y12, Y14; \
	VPANDN       Y14, Y13, Y14; \
	VCMPPD       $0x04, Y6, Y11, Y15; \
	VANDPD       Y14, Y15, Y15; \
	VPTEST       Y15, Y15; \
	JNZ          bail; \
	VPADDQ       magic<>(SB), Y3, Y3; \
	VSUBPD       magic<>(SB), Y3, Y3; \
	VMULPD       half<>(SB), Y11, Y4; \
	VMULPD       Y11, Y4, Y4; \
	VADDPD       two<>(SB), Y11, Y5; \
	VDIVPD       Y5, Y11, Y6; \
	VMULPD       Y6, Y6, Y7; \
	VMULPD       lp7<>(SB), Y7, Y9; \
	VADDPD       lp6<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       lp5<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       lp4<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       lp3<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       lp2<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       lp1<>(SB), Y9, Y9; \
	VMULPD       Y7, Y9, Y9; \
	VADDPD       Y4, Y9, Y9; \
	VMULPD       Y6, Y9, Y9; \
	VSUBPD       Y9, Y4, Y10; \
	VSUBPD       Y10, Y11, Y10; \
	VMULPD       ln2lo<>(SB), Y3, Y12; \
	VADDPD       Y8, Y12, Y12; \
	VADDPD       Y12, Y9, Y12; \
	VSUBPD       Y12, Y4, Y12; \
	VSUBPD       Y11, Y12, Y12; \
	VMULPD       ln2hi<>(SB), Y3, Y13; \
	VSUBPD       Y12, Y13, Y12; \
	VMULPD       ln2lo<>(SB), Y3, Y15; \
	VADDPD       Y15, Y8, Y15; \
	VADDPD       Y15, Y13, Y15; \
	VXORPD       Y5, Y5, Y5; \
	VCMPPD       $0x00, Y5, Y3, Y5; \
	VBLENDVPD    Y5, Y10, Y12, Y12; \
	VBLENDVPD    Y14, Y15, Y12, Y12; \
	VMULPD       Y1, Y1, Y4; \
	VMULPD       half<>(SB), Y4, Y4; \
	VSUBPD       Y4, Y1, Y4; \
	VCMPPD       $0x11, tiny29<>(SB), Y1, Y5; \
	VBLENDVPD    Y5, Y4, Y12, Y0

// LOG replaces Y0 = z (positive, normal and finite) by math.Log(z) as the
// amd64 assembly of package math computes it, using Y1-Y10.
#define LOG \
	VPAND        mant<>(SB), Y0, Y1; \
	VPOR         half<>(SB), Y1, Y1; \
	VPSRLQ       $52, Y0, Y2; \
	VPAND        mask7ff<>(SB), Y2, Y2; \
	VPSUBQ       c3fe<>(SB), Y2, Y2; \
	VPADDQ       magic<>(SB), Y2, Y2; \
	VSUBPD       magic<>(SB), Y2, Y2; \
	VMOVUPD      hsqrt2<>(SB), Y3; \
	VCMPPD       $0x05, Y1, Y3, Y4; \
	VANDPD       one<>(SB), Y4, Y5; \
	VSUBPD       Y5, Y2, Y2; \
	VADDPD       one<>(SB), Y5, Y5; \
	VMULPD       Y5, Y1, Y1; \
	VSUBPD       one<>(SB), Y1, Y1; \
	VADDPD       two<>(SB), Y1, Y5; \
	VDIVPD       Y5, Y1, Y6; \
	VMULPD       Y6, Y6, Y7; \
	VMULPD       Y7, Y7, Y8; \
	VMULPD       lp7<>(SB), Y8, Y9; \
	VADDPD       lp5<>(SB), Y9, Y9; \
	VMULPD       Y8, Y9, Y9; \
	VADDPD       lp3<>(SB), Y9, Y9; \
	VMULPD       Y8, Y9, Y9; \
	VADDPD       lp1<>(SB), Y9, Y9; \
	VMULPD       Y9, Y7, Y7; \
	VMULPD       lp6<>(SB), Y8, Y9; \
	VADDPD       lp4<>(SB), Y9, Y9; \
	VMULPD       Y8, Y9, Y9; \
	VADDPD       lp2<>(SB), Y9, Y9; \
	VMULPD       Y9, Y8, Y8; \
	VADDPD       Y8, Y7, Y7; \
	VMULPD       half<>(SB), Y1, Y10; \
	VMULPD       Y1, Y10, Y10; \
	VADDPD       Y10, Y7, Y7; \
	VMULPD       Y7, Y6, Y6; \
	VMULPD       ln2lo<>(SB), Y2, Y8; \
	VADDPD       Y8, Y6, Y6; \
	VSUBPD       Y6, Y10, Y10; \
	VSUBPD       Y1, Y10, Y10; \
	VMULPD       ln2hi<>(SB), Y2, Y2; \
	VSUBPD       Y10, Y2, Y0

// func log1pAbsAVX2(x []float64) int
// Sets x[i] = math.Log1p(math.Abs(x[i])) for i < len(x) rounded down to a
// multiple of 4, stopping before the first block of 4 that LOG1P leaves to
// the Go code. Returns the number of elements done.
TEXT ·log1pAbsAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	SHRQ $2, CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   l1done

l1loop:
	VMOVUPD (DI)(AX*8), Y0
	VANDPD  absmask<>(SB), Y0, Y0
	LOG1P(l1done)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	DECQ    CX
	JNZ     l1loop

l1done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func asinhAVX2(x []float64, inv float64) int
// Sets x[i] = math.Asinh(x[i] * inv) for i < len(x) rounded down to a
// multiple of 4, stopping before the first block of 4 with a lane that is
// NaN, infinite or beyond 2^28 in magnitude, or that LOG1P leaves to the
// Go code. Returns the number of elements done.
//
// Per block: y = x*inv; t = -y where y < 0 (as math.Asinh, so -0 stays -0);
// w = t + t*t/(1 + sqrt(1 + t*t)) and z = 2t + 1/(sqrt(t*t + 1) + t) for
// every lane; log1p(w) for every lane when a lane has 2^-28 <= t <= 2, and
// log(z) for every lane when a lane has t > 2 (both harmless in the lanes
// that do not use them); then t where t < 2^-28, log(z) where t > 2,
// log1p(w) elsewhere, and the sign of y. The frame holds t (0), the sign
// lanes (32), w (64), z (96), log1p(w) (128).
TEXT ·asinhAVX2(SB), NOSPLIT, $160-40
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	SHRQ $2, CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   asdone

asloop:
	VBROADCASTSD inv+24(FP), Y1
	VMULPD       (DI)(AX*8), Y1, Y0
	VXORPD       Y2, Y2, Y2
	VCMPPD       $0x11, Y2, Y0, Y3
	VANDPD       signbit<>(SB), Y3, Y4
	VXORPD       Y4, Y0, Y0
	VCMPPD       $0x12, large28<>(SB), Y0, Y5
	VMOVMSKPD    Y5, BX
	CMPQ         BX, $15
	JNE          asdone
	VMOVUPD      Y0, 0(SP)
	VMOVUPD      Y4, 32(SP)
	VMULPD       Y0, Y0, Y5
	VADDPD       one<>(SB), Y5, Y6
	VSQRTPD      Y6, Y6
	VMOVAPD      Y6, Y7
	VADDPD       one<>(SB), Y6, Y6
	VDIVPD       Y6, Y5, Y6
	VADDPD       Y6, Y0, Y6
	VMOVUPD      Y6, 64(SP)
	VADDPD       Y0, Y7, Y7
	VMOVUPD      one<>(SB), Y8
	VDIVPD       Y7, Y8, Y7
	VMULPD       two<>(SB), Y0, Y8
	VADDPD       Y7, Y8, Y8
	VMOVUPD      Y8, 96(SP)
	VCMPPD       $0x1E, two<>(SB), Y0, Y9
	VMOVMSKPD    Y9, R8
	VCMPPD       $0x1D, near28<>(SB), Y0, Y10
	VANDNPD      Y10, Y9, Y10
	VMOVMSKPD    Y10, R9
	TESTQ        R9, R9
	JZ           asnomid
	VMOVAPD      Y6, Y0
	LOG1P(asdone)
	VMOVUPD      Y0, 128(SP)

asnomid:
	TESTQ        R8, R8
	JZ           asnolarge
	VMOVUPD      96(SP), Y0
	LOG

asnolarge:
	VMOVUPD      0(SP), Y1
	VCMPPD       $0x1E, two<>(SB), Y1, Y2
	VMOVUPD      128(SP), Y3
	VBLENDVPD    Y2, Y0, Y3, Y0
	VCMPPD       $0x11, near28<>(SB), Y1, Y2
	VBLENDVPD    Y2, Y1, Y0, Y0
	VXORPD       32(SP), Y0, Y0
	VMOVUPD      Y0, (DI)(AX*8)
	ADDQ         $4, AX
	DECQ         CX
	JNZ          asloop

asdone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
