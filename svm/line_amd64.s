//go:build amd64 && !noasm

#include "textflag.h"

// func signedFirstAVX2(z, dz []float64, y []int, k int, br, cand []int) (nb, nc int)
//
// For four rows at a time: d = dz_i with its sign flipped when y_i != k
// (stored back), u = 1 - z_i, in = u > 0, sw = in != (u + d > 0); the row
// is appended to br when sw, and to cand when !sw and (in ? -d : d) > 0.
// The appends store the index unconditionally and advance the count by
// the mask bit (BT, ADC), without branches. Every operation is exact or
// correctly rounded (no fused multiply-add), as the Go loop.
TEXT ·signedFirstAVX2(SB), NOSPLIT, $0-144
	MOVQ z_base+0(FP), SI
	MOVQ z_len+8(FP), CX
	MOVQ dz_base+24(FP), DI
	MOVQ y_base+48(FP), DX
	MOVQ k+72(FP), AX
	MOVQ br_base+80(FP), R8
	MOVQ cand_base+104(FP), R9
	XORQ R10, R10
	XORQ R11, R11
	XORQ R12, R12
	SHRQ $2, CX
	JZ   done

	MOVQ         AX, X12
	VPBROADCASTQ X12, Y12               // k
	MOVQ         $0x3ff0000000000000, AX
	MOVQ         AX, X11
	VPBROADCASTQ X11, Y11               // 1.0
	MOVQ         $0x8000000000000000, AX
	MOVQ         AX, X13
	VPBROADCASTQ X13, Y13               // the sign bit
	VXORPD       Y14, Y14, Y14          // 0

loop:
	VMOVUPD  (SI)(R12*8), Y0
	VSUBPD   Y0, Y11, Y1        // u = 1 - z
	VMOVDQU  (DX)(R12*8), Y2
	VPCMPEQQ Y12, Y2, Y2        // y_i == k
	VPANDN   Y13, Y2, Y2        // the sign bit where y_i != k
	VMOVUPD  (DI)(R12*8), Y3
	VXORPD   Y2, Y3, Y3         // d
	VMOVUPD  Y3, (DI)(R12*8)
	VCMPPD   $0x1e, Y14, Y1, Y4 // in = u > 0
	VADDPD   Y3, Y1, Y5         // u + d
	VCMPPD   $0x1e, Y14, Y5, Y5 // u + d > 0
	VXORPD   Y4, Y5, Y5         // sw
	VANDPD   Y13, Y4, Y6
	VXORPD   Y3, Y6, Y6         // -d if in, else d
	VCMPPD   $0x1e, Y14, Y6, Y6 // > 0
	VANDNPD  Y6, Y5, Y6         // and not sw
	VMOVMSKPD Y5, AX
	VMOVMSKPD Y6, BX
	MOVQ R12, (R8)(R10*8)
	BTQ  $0, AX
	ADCQ $0, R10
	MOVQ R12, (R9)(R11*8)
	BTQ  $0, BX
	ADCQ $0, R11
	LEAQ 1(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $1, AX
	ADCQ $0, R10
	MOVQ R13, (R9)(R11*8)
	BTQ  $1, BX
	ADCQ $0, R11
	LEAQ 2(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $2, AX
	ADCQ $0, R10
	MOVQ R13, (R9)(R11*8)
	BTQ  $2, BX
	ADCQ $0, R11
	LEAQ 3(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $3, AX
	ADCQ $0, R10
	MOVQ R13, (R9)(R11*8)
	BTQ  $3, BX
	ADCQ $0, R11
	ADDQ $4, R12
	DECQ CX
	JNZ  loop

done:
	MOVQ R10, nb+128(FP)
	MOVQ R11, nc+136(FP)
	VZEROUPPER
	RET


// func stepAVX2(z, dz []float64, mt float64, in []bool, ch []int) (nc, active int)
//
// For four rows at a time: z_i += mt dz_i (a product, then a sum: no
// fused multiply-add), act = z_i < 1; the row is counted in active when
// act, and appended to ch when act != in_i, without branches.
TEXT ·stepAVX2(SB), NOSPLIT, $0-120
	MOVQ z_base+0(FP), SI
	MOVQ z_len+8(FP), CX
	MOVQ dz_base+24(FP), DI
	MOVSD mt+48(FP), X10
	MOVQ in_base+56(FP), DX
	MOVQ ch_base+80(FP), R8
	XORQ R10, R10
	XORQ R11, R11
	XORQ R12, R12
	SHRQ $2, CX
	JZ   stepdone

	VBROADCASTSD X10, Y10               // mt
	MOVQ         $0x3ff0000000000000, AX
	MOVQ         AX, X11
	VPBROADCASTQ X11, Y11               // 1.0
	VPXOR        Y14, Y14, Y14          // 0

steploop:
	VMULPD    (DI)(R12*8), Y10, Y0 // mt dz
	VADDPD    (SI)(R12*8), Y0, Y0  // z + mt dz
	VMOVUPD   Y0, (SI)(R12*8)
	VCMPPD    $0x11, Y11, Y0, Y1   // act = z < 1
	VPMOVZXBQ (DX)(R12*1), Y2      // in
	VPCMPEQQ  Y14, Y2, Y2          // !in
	VMOVMSKPD Y1, AX
	VMOVMSKPD Y2, BX
	XORQ      AX, BX               // act == in (4 bits)
	XORQ      $15, BX              // act != in
	MOVQ R12, (R8)(R10*8)
	BTQ  $0, BX
	ADCQ $0, R10
	BTQ  $0, AX
	ADCQ $0, R11
	LEAQ 1(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $1, BX
	ADCQ $0, R10
	BTQ  $1, AX
	ADCQ $0, R11
	LEAQ 2(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $2, BX
	ADCQ $0, R10
	BTQ  $2, AX
	ADCQ $0, R11
	LEAQ 3(R12), R13
	MOVQ R13, (R8)(R10*8)
	BTQ  $3, BX
	ADCQ $0, R10
	BTQ  $3, AX
	ADCQ $0, R11
	ADDQ $4, R12
	DECQ CX
	JNZ  steploop

stepdone:
	MOVQ R10, nc+104(FP)
	MOVQ R11, active+112(FP)
	VZEROUPPER
	RET


// func marginsAVX2(dz, cols []float64, terms []uint64)
//
// For four rows at a time: dz_i = sum over the terms (off, s) of
// s x_i, x the column at byte offset off in cols, summed in the order of
// the terms from zero, each product rounded and then added (no fused
// multiply-add), as floats.AddScaled column after column does.
TEXT ·marginsAVX2(SB), NOSPLIT, $0-72
	MOVQ dz_base+0(FP), DI
	MOVQ dz_len+8(FP), CX
	MOVQ cols_base+24(FP), SI
	MOVQ terms_base+48(FP), R8
	MOVQ terms_len+56(FP), R9
	SHLQ $3, R9
	ADDQ R8, R9             // the end of the terms
	SHRQ $2, CX
	JZ   margdone

margloop:
	VXORPD Y0, Y0, Y0
	MOVQ   R8, R10

margterm:
	CMPQ         R10, R9
	JAE          margstore
	MOVQ         (R10), AX          // off
	VBROADCASTSD 8(R10), Y1         // s
	VMULPD       (SI)(AX*1), Y1, Y2 // s x
	VADDPD       Y2, Y0, Y0
	ADDQ         $16, R10
	JMP          margterm

margstore:
	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNZ     margloop

margdone:
	VZEROUPPER
	RET


// func predict4AVX2(x []float64, stride, d int, w, b []float64, pred []int) (nan int)
//
// For each of the len(pred) rows of x (d values, stride apart): the four
// decision values sum_j x_j w[4j+k] + b[k] in one register, each product
// rounded and then added from zero in increasing j (no fused
// multiply-add), as the Go loop; pred gets the first class of the largest
// (of the first pair, of the second, the second pair's if strictly
// larger), or -1 if a value is NaN; it returns the number of such rows.
TEXT ·predict4AVX2(SB), NOSPLIT, $0-120
	MOVQ x_base+0(FP), SI
	MOVQ stride+24(FP), R10
	SHLQ $3, R10
	MOVQ d+32(FP), R8
	MOVQ w_base+40(FP), DX
	MOVQ b_base+64(FP), AX
	MOVQ pred_base+88(FP), R9
	MOVQ pred_len+96(FP), CX
	XORQ R12, R12
	TESTQ CX, CX
	JZ   preddone
	VMOVUPD (AX), Y12 // the intercepts

predrow:
	VXORPD Y0, Y0, Y0
	XORQ   R11, R11
	MOVQ   DX, R13

predterm:
	CMPQ         R11, R8
	JAE          predsum
	VBROADCASTSD (SI)(R11*8), Y1
	VMULPD       (R13), Y1, Y2
	VADDPD       Y2, Y0, Y0
	ADDQ         $32, R13
	INCQ         R11
	JMP          predterm

predsum:
	VADDPD    Y12, Y0, Y0
	VCMPPD    $3, Y0, Y0, Y1 // NaN lanes
	VMOVMSKPD Y1, AX
	TESTQ     AX, AX
	JNZ       prednan
	VPERMILPD $5, Y0, Y1          // v1 v0 v3 v2
	VCMPPD    $0x1e, Y0, Y1, Y2   // v1 > v0, _, v3 > v2, _
	VMOVMSKPD Y2, AX
	VMAXPD    Y1, Y0, Y3          // the pairs' largest, twice each
	VPERM2F128 $1, Y3, Y3, Y4     // the halves swapped
	VCMPPD    $0x1e, Y3, Y4, Y5   // the second pair's > the first's
	VMOVMSKPD Y5, BX
	MOVQ      AX, R13
	ANDQ      $1, R13             // ia
	SHRQ      $2, AX
	ANDQ      $1, AX
	ADDQ      $2, AX              // ib
	BTQ       $0, BX
	CMOVQCS   AX, R13
	MOVQ      R13, (R9)
	JMP       prednext

prednan:
	MOVQ $-1, (R9)
	INCQ R12

prednext:
	ADDQ R10, SI
	ADDQ $8, R9
	DECQ CX
	JNZ  predrow

preddone:
	MOVQ R12, nan+112(FP)
	VZEROUPPER
	RET

// func addRowsAVX2(v, rows, sy []float64)
//
// For each of the len(sy) rows of 12 values in rows, in order: v +=
// sy_i row_i over the 12 values of v, each product rounded and then added
// (no fused multiply-add), as the Go loop, with v in three registers.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ    v_base+0(FP), DI
	MOVQ    rows_base+24(FP), SI
	MOVQ    sy_base+48(FP), DX
	MOVQ    sy_len+56(FP), CX
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	TESTQ   CX, CX
	JZ      rowsdone

rowsloop:
	VBROADCASTSD (DX), Y3
	VMULPD       0(SI), Y3, Y4
	VMULPD       32(SI), Y3, Y5
	VMULPD       64(SI), Y3, Y6
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	ADDQ         $8, DX
	ADDQ         $96, SI
	DECQ         CX
	JNZ          rowsloop

rowsdone:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VZEROUPPER
	RET

// func sumCompactAVX2(bt, bab []float64, lo, hi, t float64) (k int, e1, e2, g1, g2 float64)
//
// For each term j in order: x = bt_j, P = (alpha_j, beta_j) from bab;
// below = x <= lo, on = x < t and !below (ordered comparisons, false for
// NaN, as Go's); G += below ? P : 0 and E += on ? P + (t beta_j, 0) : 0
// in one register each (G = (g1, g2), E = (e1, e2); the product rounded
// and then added, as the Go loop; beta_j + 0 is beta_j but for -0, which
// the sums, never -0 from their +0 start, do not tell apart); the term is
// stored at k, and k advances when x < hi and !below.
TEXT ·sumCompactAVX2(SB), NOSPLIT, $0-112
	MOVQ     bt_base+0(FP), SI
	MOVQ     bt_len+8(FP), CX
	MOVQ     bab_base+24(FP), DI
	MOVQ     DI, R11
	VMOVDDUP lo+48(FP), X10                // (lo, lo)
	VMOVDDUP hi+56(FP), X11                // (hi, hi)
	VMOVDDUP t+64(FP), X13                 // (t, t)
	XORQ     AX, AX                        // k
	XORQ     R8, R8                        // j
	VXORPD   X0, X0, X0                    // G
	VXORPD   X1, X1, X1                    // E
	TESTQ    CX, CX
	JZ       compactdone

compactloop:
	VMOVDDUP  (SI)(R8*8), X2 // (x, x)
	VMOVUPD   (DI), X3       // P = (alpha, beta)
	VCMPPD    $0x12, X10, X2, X4 // below = x <= lo
	VCMPPD    $0x11, X13, X2, X5 // x < t
	VANDNPD   X5, X4, X5         // on = x < t and !below
	VANDPD    X3, X4, X6
	VADDPD    X6, X0, X0         // G += below ? P : 0
	VPERMILPD $1, X3, X7         // (beta, alpha)
	VMULSD    X13, X7, X7        // (t beta, alpha)
	VMOVQ     X7, X7             // (t beta, 0)
	VADDPD    X7, X3, X7         // (alpha + t beta, beta + 0)
	VANDPD    X7, X5, X7
	VADDPD    X7, X1, X1         // E += on ? ... : 0
	VCMPPD    $0x11, X11, X2, X8 // x < hi
	VANDNPD   X8, X4, X8         // kept = x < hi and !below
	VMOVSD    X2, (SI)(AX*8)     // bt[k] = x
	MOVQ      AX, R10
	SHLQ      $4, R10
	VMOVUPD   X3, (R11)(R10*1)   // the pair at k
	VMOVMSKPD X8, BX
	ANDQ      $1, BX
	ADDQ      BX, AX
	INCQ      R8
	ADDQ      $16, DI
	DECQ      CX
	JNZ       compactloop

compactdone:
	MOVQ      AX, k+72(FP)
	VMOVSD    X1, e1+80(FP)
	VPERMILPD $1, X1, X1
	VMOVSD    X1, e2+88(FP)
	VMOVSD    X0, g1+96(FP)
	VPERMILPD $1, X0, X0
	VMOVSD    X0, g2+104(FP)
	RET

// func listAVX2(idx []int, z, dz []float64, c2, t float64, bt, bab []float64) (e1, e2 float64)
//
// For each term j in order, i = idx[j], u = 1 - z_i, d = dz_i: sg = -c2
// when u > 0 (ordered, false for NaN, as Go's), else c2;
// (alpha, beta) = (sg u, sg d) d into bab, (-u) / d into bt, and
// E += (alpha + t beta, beta + 0) (E = (e1, e2); each product rounded and
// then added, as the Go loop; beta + 0 is beta but for -0, which the sums,
// never -0 from their +0 start, do not tell apart).
TEXT ·listAVX2(SB), NOSPLIT, $0-152
	MOVQ         idx_base+0(FP), SI
	MOVQ         idx_len+8(FP), CX
	MOVQ         z_base+24(FP), R8
	MOVQ         dz_base+48(FP), R9
	VMOVSD       c2+72(FP), X12        // c2
	VMOVSD       t+80(FP), X13         // t
	MOVQ         bt_base+88(FP), DI
	MOVQ         bab_base+112(FP), DX
	MOVQ         $0x3ff0000000000000, AX
	MOVQ         AX, X15               // 1.0
	MOVQ         $0x8000000000000000, AX
	MOVQ         AX, X14               // the sign bit
	VXORPD       X11, X11, X11         // 0
	VXORPD       X1, X1, X1            // E
	TESTQ        CX, CX
	JZ           listdone

listloop:
	MOVQ      (SI), R10
	VMOVSD    (R8)(R10*8), X2    // z
	VMOVSD    (R9)(R10*8), X3    // d
	VSUBSD    X2, X15, X4        // u = 1 - z
	VCMPSD    $0x1e, X11, X4, X5 // u > 0
	VANDPD    X14, X5, X5
	VXORPD    X12, X5, X6        // sg
	VUNPCKLPD X3, X4, X7         // (u, d)
	VMOVDDUP  X6, X6             // (sg, sg)
	VMULPD    X7, X6, X7         // (sg u, sg d)
	VMOVDDUP  X3, X8             // (d, d)
	VMULPD    X8, X7, X7         // (alpha, beta)
	VMOVUPD   X7, (DX)
	VXORPD    X14, X4, X9        // -u
	VDIVSD    X3, X9, X9         // -u / d
	VMOVSD    X9, (DI)
	VPERMILPD $1, X7, X10        // (beta, alpha)
	VMULSD    X13, X10, X10      // (t beta, alpha)
	VMOVQ     X10, X10           // (t beta, 0)
	VADDPD    X10, X7, X10       // (alpha + t beta, beta + 0)
	VADDPD    X10, X1, X1        // E += ...
	ADDQ      $8, SI
	ADDQ      $8, DI
	ADDQ      $16, DX
	DECQ      CX
	JNZ       listloop

listdone:
	VMOVSD    X1, e1+136(FP)
	VPERMILPD $1, X1, X1
	VMOVSD    X1, e2+144(FP)
	RET

// func splitCandAVX2(cand, br []int, z, dz []float64, hi float64) (nb, k int)
//
// For each term i of cand in order: u = 1 - z_i, sw = (u + hi dz_i > 0)
// != (u > 0) (the product rounded and then added, ordered comparisons, as
// the Go loop); i is stored at br[nb] and at cand[k], and nb advances by
// sw, k by !sw, without branches.
TEXT ·splitCandAVX2(SB), NOSPLIT, $0-120
	MOVQ   cand_base+0(FP), SI
	MOVQ   cand_len+8(FP), CX
	MOVQ   br_base+24(FP), DI
	MOVQ   z_base+48(FP), R8
	MOVQ   dz_base+72(FP), R9
	VMOVSD hi+96(FP), X13
	MOVQ   $0x3ff0000000000000, AX
	MOVQ   AX, X15                 // 1.0
	VXORPD X11, X11, X11           // 0
	XORQ   R12, R12                // nb
	XORQ   R13, R13                // k
	XORQ   R11, R11                // j
	TESTQ  CX, CX
	JZ     splitdone

splitloop:
	MOVQ   (SI)(R11*8), R10
	VMOVSD (R8)(R10*8), X2     // z
	VMOVSD (R9)(R10*8), X3     // d
	VSUBSD X2, X15, X4         // u = 1 - z
	VMULSD X3, X13, X5         // hi d
	VADDSD X5, X4, X5          // u + hi d
	VCMPSD $0x1e, X11, X5, X6  // u + hi d > 0
	VCMPSD $0x1e, X11, X4, X7  // u > 0
	VXORPD X7, X6, X6          // sw
	VMOVQ  X6, AX
	ANDQ   $1, AX
	MOVQ   R10, (DI)(R12*8)
	ADDQ   AX, R12
	MOVQ   R10, (SI)(R13*8)
	XORQ   $1, AX
	ADDQ   AX, R13
	INCQ   R11
	DECQ   CX
	JNZ    splitloop

splitdone:
	MOVQ R12, nb+104(FP)
	MOVQ R13, k+112(FP)
	RET
