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

// The constants: Cody-Waite pi/2 in three parts (twice math's Pi/4 split)
// and the sin and cos polynomial coefficients of Cephes (those of
// math.Sincos).
VEC4(absmask, $0x7fffffffffffffff) // clears the sign bit
VEC4(signmask, $0x8000000000000000) // the sign bit
VEC4(one64, $0x0000000000000001) // the integer 1
VEC4(maxarg, $0x4130000000000000) // 2^20: beyond, math.Sincos
VEC4(shift, $0x4338000000000000) // 1.5 * 2^52: adding it rounds to an integer
VEC4(twoopi, $0x3fe45f306dc9c883) // 2/pi
VEC4(p1, $0x3ff921fb40000000) // pi/2 = p1 + p2 + p3 (Cody-Waite)
VEC4(p2, $0x3e74442d00000000)
VEC4(p3, $0x3cf8469898cc5170)
VEC4(half, $0x3fe0000000000000) // 0.5
VEC4(fone, $0x3ff0000000000000) // 1.0
VEC4(s0, $0x3de5d8fd1fd19ccd) // sin r = r + r z P(z), P = s0 z^5 + ... + s5 (Cephes)
VEC4(s1, $0xbe5ae5e5a9291f5d)
VEC4(s2, $0x3ec71de3567d48a1)
VEC4(s3, $0xbf2a01a019bfdf03)
VEC4(s4, $0x3f8111111110f7d0)
VEC4(s5, $0xbfc5555555555548)
VEC4(c0, $0xbda8fa49a0861a9b) // cos r = 1 - z/2 + z^2 Q(z), Q = c0 z^5 + ... + c5 (Cephes)
VEC4(c1, $0x3e21ee9d7b4e3f05)
VEC4(c2, $0xbe927e4f7eac4bc6)
VEC4(c3, $0x3efa01a019c844f5)
VEC4(c4, $0xbf56c16c16c14f91)
VEC4(c5, $0x3fa555555555554b)

// func sincosAVX2(sin, cos, x []float64, scale float64) int
// For each block of 4 elements of x (up to len(x) rounded down to a multiple
// of 4) sets sin[i] = scale sin(x[i]) and cos[i] = scale cos(x[i]), stopping
// before the first block with |x| > 2^20 or NaN. Returns the number done.
//
// j = round(x 2/pi) (FMA with the 1.5 * 2^52 shifter), r = x - j pi/2 in
// three FMA steps, |r| <= pi/4; s = sin r and c = cos r by the Cephes
// polynomials in z = r^2; then by the quadrant q = j mod 4,
// sin x = (s, c, -s, -c)[q] and cos x = (c, -s, -c, s)[q].
TEXT ·sincosAVX2(SB), NOSPLIT, $0-88
	MOVQ sin_base+0(FP), DI
	MOVQ cos_base+24(FP), SI
	MOVQ x_base+48(FP), R8
	MOVQ x_len+56(FP), CX
	SHRQ $2, CX
	VBROADCASTSD scale+72(FP), Y15
	XORQ AX, AX
	TESTQ CX, CX
	JZ   done

loop:
	VMOVUPD (R8)(AX*8), Y0
	VANDPD  absmask<>(SB), Y0, Y1
	VCMPPD  $0x12, maxarg<>(SB), Y1, Y1   // |x| <= 2^20 (false for NaN)
	VMOVMSKPD Y1, BX
	CMPQ    BX, $15
	JNE     done
	VMOVUPD shift<>(SB), Y2
	VFMADD231PD twoopi<>(SB), Y0, Y2      // Y2 = x 2/pi + shift, rounded
	VSUBPD  shift<>(SB), Y2, Y3           // Y3 = j
	VPSUBQ  shift<>(SB), Y2, Y2           // Y2 = j as int64
	VFNMADD231PD p1<>(SB), Y3, Y0
	VFNMADD231PD p2<>(SB), Y3, Y0
	VFNMADD231PD p3<>(SB), Y3, Y0         // Y0 = r
	VMULPD  Y0, Y0, Y1                    // Y1 = z
	// s = r + r z P(z)
	VMOVUPD s0<>(SB), Y4
	VFMADD213PD s1<>(SB), Y1, Y4
	VFMADD213PD s2<>(SB), Y1, Y4
	VFMADD213PD s3<>(SB), Y1, Y4
	VFMADD213PD s4<>(SB), Y1, Y4
	VFMADD213PD s5<>(SB), Y1, Y4
	VMULPD  Y1, Y0, Y5                    // r z
	VFMADD213PD Y0, Y5, Y4                // Y4 = r z P + r = s
	// c = 1 - z/2 + z^2 Q(z)
	VMOVUPD c0<>(SB), Y6
	VFMADD213PD c1<>(SB), Y1, Y6
	VFMADD213PD c2<>(SB), Y1, Y6
	VFMADD213PD c3<>(SB), Y1, Y6
	VFMADD213PD c4<>(SB), Y1, Y6
	VFMADD213PD c5<>(SB), Y1, Y6
	VMULPD  Y1, Y1, Y7                    // z^2
	VMOVUPD fone<>(SB), Y5
	VFNMADD231PD half<>(SB), Y1, Y5       // 1 - z/2
	VFMADD213PD Y5, Y7, Y6                // Y6 = z^2 Q + (1 - z/2) = c
	// Quadrant: swap where j is odd.
	VPAND   one64<>(SB), Y2, Y7
	VPCMPEQQ one64<>(SB), Y7, Y7          // j odd
	VBLENDVPD Y7, Y6, Y4, Y8              // Y8 = odd ? c : s  (sin before sign)
	VBLENDVPD Y7, Y4, Y6, Y9              // Y9 = odd ? s : c  (cos before sign)
	// sin sign: bit 1 of j; cos sign: bit 1 of j + 1.
	VPSLLQ  $62, Y2, Y10
	VPAND   signmask<>(SB), Y10, Y10
	VXORPD  Y10, Y8, Y8
	VPADDQ  one64<>(SB), Y2, Y11
	VPSLLQ  $62, Y11, Y11
	VPAND   signmask<>(SB), Y11, Y11
	VXORPD  Y11, Y9, Y9
	VMULPD  Y15, Y8, Y8
	VMULPD  Y15, Y9, Y9
	VMOVUPD Y8, (DI)(AX*8)
	VMOVUPD Y9, (SI)(AX*8)
	ADDQ    $4, AX
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	MOVQ AX, ret+80(FP)
	RET

// func projAVX2(proj, x, wt []float64, stride int)
// proj[j] = sum_k x[k] wt[k*stride + j] for j < len(proj) (a multiple of 4),
// k < len(x) (at least 1).
TEXT ·projAVX2(SB), NOSPLIT, $0-80
	MOVQ proj_base+0(FP), DI
	MOVQ proj_len+8(FP), CX
	SHRQ $2, CX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), R8
	MOVQ wt_base+48(FP), R9
	MOVQ stride+72(FP), R10
	SHLQ $3, R10
	TESTQ CX, CX
	JZ   projdone

projloop:
	VXORPD Y0, Y0, Y0
	MOVQ   R9, R12
	MOVQ   SI, R13
	MOVQ   R8, DX

projk:
	VBROADCASTSD (R13), Y1
	VFMADD231PD  (R12), Y1, Y0
	ADDQ         $8, R13
	ADDQ         R10, R12
	DECQ         DX
	JNZ          projk
	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, R9
	DECQ    CX
	JNZ     projloop

projdone:
	VZEROUPPER
	RET


