//go:build amd64 && !noasm

#include "textflag.h"

// Vectors of four equal 64-bit constants: Cody-Waite pi/2 in three parts
// (twice math's Pi/4 split), and the sin and cos polynomial coefficients of
// Cephes (the ones math.Sincos uses).

DATA absmask<>+0(SB)/8, $0x7fffffffffffffff
DATA absmask<>+8(SB)/8, $0x7fffffffffffffff
DATA absmask<>+16(SB)/8, $0x7fffffffffffffff
DATA absmask<>+24(SB)/8, $0x7fffffffffffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32 // '0x7fffffffffffffff'

DATA signmask<>+0(SB)/8, $0x8000000000000000
DATA signmask<>+8(SB)/8, $0x8000000000000000
DATA signmask<>+16(SB)/8, $0x8000000000000000
DATA signmask<>+24(SB)/8, $0x8000000000000000
GLOBL signmask<>(SB), RODATA|NOPTR, $32 // '0x8000000000000000'

DATA one64<>+0(SB)/8, $0x0000000000000001
DATA one64<>+8(SB)/8, $0x0000000000000001
DATA one64<>+16(SB)/8, $0x0000000000000001
DATA one64<>+24(SB)/8, $0x0000000000000001
GLOBL one64<>(SB), RODATA|NOPTR, $32 // '0x0000000000000001'

DATA maxarg<>+0(SB)/8, $0x4130000000000000
DATA maxarg<>+8(SB)/8, $0x4130000000000000
DATA maxarg<>+16(SB)/8, $0x4130000000000000
DATA maxarg<>+24(SB)/8, $0x4130000000000000
GLOBL maxarg<>(SB), RODATA|NOPTR, $32 // 1048576.0

DATA shift<>+0(SB)/8, $0x4338000000000000
DATA shift<>+8(SB)/8, $0x4338000000000000
DATA shift<>+16(SB)/8, $0x4338000000000000
DATA shift<>+24(SB)/8, $0x4338000000000000
GLOBL shift<>(SB), RODATA|NOPTR, $32 // 6755399441055744.0

DATA twoopi<>+0(SB)/8, $0x3fe45f306dc9c883
DATA twoopi<>+8(SB)/8, $0x3fe45f306dc9c883
DATA twoopi<>+16(SB)/8, $0x3fe45f306dc9c883
DATA twoopi<>+24(SB)/8, $0x3fe45f306dc9c883
GLOBL twoopi<>(SB), RODATA|NOPTR, $32 // 0.6366197723675814

DATA p1<>+0(SB)/8, $0x3ff921fb40000000
DATA p1<>+8(SB)/8, $0x3ff921fb40000000
DATA p1<>+16(SB)/8, $0x3ff921fb40000000
DATA p1<>+24(SB)/8, $0x3ff921fb40000000
GLOBL p1<>(SB), RODATA|NOPTR, $32 // 1.570796251296997

DATA p2<>+0(SB)/8, $0x3e74442d00000000
DATA p2<>+8(SB)/8, $0x3e74442d00000000
DATA p2<>+16(SB)/8, $0x3e74442d00000000
DATA p2<>+24(SB)/8, $0x3e74442d00000000
GLOBL p2<>(SB), RODATA|NOPTR, $32 // 7.549789415861596e-08

DATA p3<>+0(SB)/8, $0x3cf8469898cc5170
DATA p3<>+8(SB)/8, $0x3cf8469898cc5170
DATA p3<>+16(SB)/8, $0x3cf8469898cc5170
DATA p3<>+24(SB)/8, $0x3cf8469898cc5170
GLOBL p3<>(SB), RODATA|NOPTR, $32 // 5.390302858158119e-15

DATA half<>+0(SB)/8, $0x3fe0000000000000
DATA half<>+8(SB)/8, $0x3fe0000000000000
DATA half<>+16(SB)/8, $0x3fe0000000000000
DATA half<>+24(SB)/8, $0x3fe0000000000000
GLOBL half<>(SB), RODATA|NOPTR, $32 // 0.5

DATA fone<>+0(SB)/8, $0x3ff0000000000000
DATA fone<>+8(SB)/8, $0x3ff0000000000000
DATA fone<>+16(SB)/8, $0x3ff0000000000000
DATA fone<>+24(SB)/8, $0x3ff0000000000000
GLOBL fone<>(SB), RODATA|NOPTR, $32 // 1.0

DATA s0<>+0(SB)/8, $0x3de5d8fd1fd19ccd
DATA s0<>+8(SB)/8, $0x3de5d8fd1fd19ccd
DATA s0<>+16(SB)/8, $0x3de5d8fd1fd19ccd
DATA s0<>+24(SB)/8, $0x3de5d8fd1fd19ccd
GLOBL s0<>(SB), RODATA|NOPTR, $32 // 1.5896230157654656e-10

DATA s1<>+0(SB)/8, $0xbe5ae5e5a9291f5d
DATA s1<>+8(SB)/8, $0xbe5ae5e5a9291f5d
DATA s1<>+16(SB)/8, $0xbe5ae5e5a9291f5d
DATA s1<>+24(SB)/8, $0xbe5ae5e5a9291f5d
GLOBL s1<>(SB), RODATA|NOPTR, $32 // -2.5050747762857807e-08

DATA s2<>+0(SB)/8, $0x3ec71de3567d48a1
DATA s2<>+8(SB)/8, $0x3ec71de3567d48a1
DATA s2<>+16(SB)/8, $0x3ec71de3567d48a1
DATA s2<>+24(SB)/8, $0x3ec71de3567d48a1
GLOBL s2<>(SB), RODATA|NOPTR, $32 // 2.7557313621385722e-06

DATA s3<>+0(SB)/8, $0xbf2a01a019bfdf03
DATA s3<>+8(SB)/8, $0xbf2a01a019bfdf03
DATA s3<>+16(SB)/8, $0xbf2a01a019bfdf03
DATA s3<>+24(SB)/8, $0xbf2a01a019bfdf03
GLOBL s3<>(SB), RODATA|NOPTR, $32 // -0.0001984126982958954

DATA s4<>+0(SB)/8, $0x3f8111111110f7d0
DATA s4<>+8(SB)/8, $0x3f8111111110f7d0
DATA s4<>+16(SB)/8, $0x3f8111111110f7d0
DATA s4<>+24(SB)/8, $0x3f8111111110f7d0
GLOBL s4<>(SB), RODATA|NOPTR, $32 // 0.008333333333322118

DATA s5<>+0(SB)/8, $0xbfc5555555555548
DATA s5<>+8(SB)/8, $0xbfc5555555555548
DATA s5<>+16(SB)/8, $0xbfc5555555555548
DATA s5<>+24(SB)/8, $0xbfc5555555555548
GLOBL s5<>(SB), RODATA|NOPTR, $32 // -0.1666666666666663

DATA c0<>+0(SB)/8, $0xbda8fa49a0861a9b
DATA c0<>+8(SB)/8, $0xbda8fa49a0861a9b
DATA c0<>+16(SB)/8, $0xbda8fa49a0861a9b
DATA c0<>+24(SB)/8, $0xbda8fa49a0861a9b
GLOBL c0<>(SB), RODATA|NOPTR, $32 // -1.1358536521387682e-11

DATA c1<>+0(SB)/8, $0x3e21ee9d7b4e3f05
DATA c1<>+8(SB)/8, $0x3e21ee9d7b4e3f05
DATA c1<>+16(SB)/8, $0x3e21ee9d7b4e3f05
DATA c1<>+24(SB)/8, $0x3e21ee9d7b4e3f05
GLOBL c1<>(SB), RODATA|NOPTR, $32 // 2.087570084197473e-09

DATA c2<>+0(SB)/8, $0xbe927e4f7eac4bc6
DATA c2<>+8(SB)/8, $0xbe927e4f7eac4bc6
DATA c2<>+16(SB)/8, $0xbe927e4f7eac4bc6
DATA c2<>+24(SB)/8, $0xbe927e4f7eac4bc6
GLOBL c2<>(SB), RODATA|NOPTR, $32 // -2.755731417929674e-07

DATA c3<>+0(SB)/8, $0x3efa01a019c844f5
DATA c3<>+8(SB)/8, $0x3efa01a019c844f5
DATA c3<>+16(SB)/8, $0x3efa01a019c844f5
DATA c3<>+24(SB)/8, $0x3efa01a019c844f5
GLOBL c3<>(SB), RODATA|NOPTR, $32 // 2.4801587288851704e-05

DATA c4<>+0(SB)/8, $0xbf56c16c16c14f91
DATA c4<>+8(SB)/8, $0xbf56c16c16c14f91
DATA c4<>+16(SB)/8, $0xbf56c16c16c14f91
DATA c4<>+24(SB)/8, $0xbf56c16c16c14f91
GLOBL c4<>(SB), RODATA|NOPTR, $32 // -0.0013888888888873056

DATA c5<>+0(SB)/8, $0x3fa555555555554b
DATA c5<>+8(SB)/8, $0x3fa555555555554b
DATA c5<>+16(SB)/8, $0x3fa555555555554b
DATA c5<>+24(SB)/8, $0x3fa555555555554b
GLOBL c5<>(SB), RODATA|NOPTR, $32 // 0.041666666666666595


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


