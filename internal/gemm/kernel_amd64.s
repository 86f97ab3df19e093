//go:build amd64 && !noasm

#include "textflag.h"

// KSTEP is one step p of the 4 x 12 block: the 12 values of B at b0, b1,
// b2 (32 bytes apart) into Y0..Y2, then for each row i the value of A at
// ai broadcast into Y3 and multiplied into that row's accumulators.
#define KSTEP(b0, b1, b2, a0, a1, a2, a3) \
	VMOVUPD      b0, Y0;           \
	VMOVUPD      b1, Y1;           \
	VMOVUPD      b2, Y2;           \
	VBROADCASTSD a0, Y3;           \
	KROW(Y4, Y5, Y6);              \
	VBROADCASTSD a1, Y3;           \
	KROW(Y7, Y8, Y9);              \
	VBROADCASTSD a2, Y3;           \
	KROW(Y10, Y11, Y12);           \
	VBROADCASTSD a3, Y3;           \
	KROW(Y13, Y14, Y15)

// KROW adds Y3 times Y0..Y2 into the accumulators of one row.
#define KROW(c0, c1, c2)       \
	VFMADD231PD Y0, Y3, c0; \
	VFMADD231PD Y1, Y3, c1; \
	VFMADD231PD Y2, Y3, c2

// CSTORE updates the row of C at DX: C = fma(alpha (Y3), acc, C) for the
// accumulators c0..c2.
#define CSTORE(c0, c1, c2)     \
	VMOVUPD     0(DX), Y0;  \
	VMOVUPD     32(DX), Y1; \
	VMOVUPD     64(DX), Y2; \
	VFMADD231PD c0, Y3, Y0; \
	VFMADD231PD c1, Y3, Y1; \
	VFMADD231PD c2, Y3, Y2; \
	VMOVUPD     Y0, 0(DX);  \
	VMOVUPD     Y1, 32(DX); \
	VMOVUPD     Y2, 64(DX)

// CPREFETCH prefetches the 96 bytes of the row of C at AX.
#define CPREFETCH \
	PREFETCHT0 (AX);   \
	PREFETCHT0 64(AX); \
	PREFETCHT0 95(AX)

// func kernAVX2(k int, a []float64, sa int, b []float64, sb int, c []float64, ldc int, alpha float64)
//
// 4 x 12 register block: Y4..Y15 hold the accumulators (row i in
// Y(4+3i)..Y(6+3i)), Y0..Y2 the 12 values of B at step p, Y3 the broadcast
// A value. SI, DI walk A and B by R9 = 8*sa and R10 = 8*sb bytes per step.
TEXT ·kernAVX2(SB), NOSPLIT, $0-112
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ sa+32(FP), R9
	SHLQ $3, R9
	MOVQ b_base+40(FP), DI
	MOVQ sb+64(FP), R10
	SHLQ $3, R10
	MOVQ c_base+72(FP), DX
	MOVQ ldc+96(FP), R8
	SHLQ $3, R8

	// Prefetch the C tile (4 rows of 96 bytes): it is needed only at the
	// end, after k steps of arithmetic have hidden the latency.
	MOVQ DX, AX
	CPREFETCH
	ADDQ R8, AX
	CPREFETCH
	ADDQ R8, AX
	CPREFETCH
	ADDQ R8, AX
	CPREFETCH

	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $1, BX
	JZ   tail

loop2:
	// Two steps: p at (SI, DI), p+1 one stride further.
	KSTEP(0(DI), 32(DI), 64(DI), 0(SI), 8(SI), 16(SI), 24(SI))
	KSTEP(0(DI)(R10*1), 32(DI)(R10*1), 64(DI)(R10*1), 0(SI)(R9*1), 8(SI)(R9*1), 16(SI)(R9*1), 24(SI)(R9*1))
	LEAQ (SI)(R9*2), SI
	LEAQ (DI)(R10*2), DI
	DECQ BX
	JNZ  loop2

tail:
	ANDQ $1, CX
	JZ   store
	KSTEP(0(DI), 32(DI), 64(DI), 0(SI), 8(SI), 16(SI), 24(SI))

store:
	VBROADCASTSD alpha+104(FP), Y3
	CSTORE(Y4, Y5, Y6)
	ADDQ         R8, DX
	CSTORE(Y7, Y8, Y9)
	ADDQ         R8, DX
	CSTORE(Y10, Y11, Y12)
	ADDQ         R8, DX
	CSTORE(Y13, Y14, Y15)

	VZEROUPPER
	RET

// func trsmKernAVX2(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64)
//
// Forward substitution for 32 right-hand sides: for j < n,
// x_j = (x_j - sum_{p<j} l[j*ldl+p] x_p) * rinv[j], where x_j is the
// 32-vector x[j*ldx : j*ldx+32], one FNMADD per term in increasing p.
// Y0..Y7 hold x_j, Y8 the broadcast l[j][p] or rinv[j]; R12 points at x_j.
TEXT ·trsmKernAVX2(SB), NOSPLIT, $0-96
	MOVQ n+0(FP), CX
	MOVQ l_base+8(FP), SI
	MOVQ ldl+32(FP), R8
	SHLQ $3, R8
	MOVQ x_base+40(FP), DI
	MOVQ ldx+64(FP), DX
	SHLQ $3, DX
	MOVQ rinv_base+72(FP), R11
	XORQ BX, BX
	MOVQ DI, R12

tjloop:
	CMPQ    BX, CX
	JGE     tdone
	VMOVUPD 0(R12), Y0
	VMOVUPD 32(R12), Y1
	VMOVUPD 64(R12), Y2
	VMOVUPD 96(R12), Y3
	VMOVUPD 128(R12), Y4
	VMOVUPD 160(R12), Y5
	VMOVUPD 192(R12), Y6
	VMOVUPD 224(R12), Y7
	MOVQ    DI, R13
	MOVQ    SI, R9
	MOVQ    BX, R10
	TESTQ   R10, R10
	JZ      tscale

tploop:
	VBROADCASTSD (R9), Y8
	VFNMADD231PD 0(R13), Y8, Y0
	VFNMADD231PD 32(R13), Y8, Y1
	VFNMADD231PD 64(R13), Y8, Y2
	VFNMADD231PD 96(R13), Y8, Y3
	VFNMADD231PD 128(R13), Y8, Y4
	VFNMADD231PD 160(R13), Y8, Y5
	VFNMADD231PD 192(R13), Y8, Y6
	VFNMADD231PD 224(R13), Y8, Y7
	ADDQ         $8, R9
	ADDQ         DX, R13
	DECQ         R10
	JNZ          tploop

tscale:
	VBROADCASTSD (R11)(BX*8), Y8
	VMULPD       Y8, Y0, Y0
	VMULPD       Y8, Y1, Y1
	VMULPD       Y8, Y2, Y2
	VMULPD       Y8, Y3, Y3
	VMULPD       Y8, Y4, Y4
	VMULPD       Y8, Y5, Y5
	VMULPD       Y8, Y6, Y6
	VMULPD       Y8, Y7, Y7
	VMOVUPD      Y0, 0(R12)
	VMOVUPD      Y1, 32(R12)
	VMOVUPD      Y2, 64(R12)
	VMOVUPD      Y3, 96(R12)
	VMOVUPD      Y4, 128(R12)
	VMOVUPD      Y5, 160(R12)
	VMOVUPD      Y6, 192(R12)
	VMOVUPD      Y7, 224(R12)
	ADDQ         R8, SI
	ADDQ         DX, R12
	INCQ         BX
	JMP          tjloop

tdone:
	VZEROUPPER
	RET

// LOAD4 loads the 16 values at p into Y0..Y3; ADD4 adds the 16 values at p
// into them; STORE4 stores them at p.
#define LOAD4(p)             \
	VMOVUPD (p), Y0;   \
	VMOVUPD 32(p), Y1; \
	VMOVUPD 64(p), Y2; \
	VMOVUPD 96(p), Y3

#define ADD4(p)                  \
	VADDPD (p), Y0, Y0;   \
	VADDPD 32(p), Y1, Y1; \
	VADDPD 64(p), Y2, Y2; \
	VADDPD 96(p), Y3, Y3

#define STORE4(p)            \
	VMOVUPD Y0, (p);   \
	VMOVUPD Y1, 32(p); \
	VMOVUPD Y2, 64(p); \
	VMOVUPD Y3, 96(p)

// func addAVX2(dst, src []float64)
//
// dst[i] += src[i] for i < len(src) rounded down to a multiple of 16; the
// caller adds the tail.
TEXT ·addAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	SHRQ $4, CX
	JZ   adddone

addloop:
	LOAD4(SI)
	ADD4(DI)
	STORE4(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  addloop

adddone:
	VZEROUPPER
	RET

// func addShiftedAVX2(dst, src, shift, out []float64)
//
// t = src[i] + shift[i]; dst[i] += t; out[i] = t when out is not nil; for
// i < len(src) rounded down to a multiple of 16 (the caller adds the
// tail). The 16 values of src are loaded before out is written, so out
// may be src.
TEXT ·addShiftedAVX2(SB), NOSPLIT, $0-96
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ shift_base+48(FP), DX
	MOVQ out_base+72(FP), R8
	SHRQ $4, CX
	JZ   addshdone
	TESTQ R8, R8
	JNZ  addshout

addshloop:
	LOAD4(SI)
	ADD4(DX)
	ADD4(DI)
	STORE4(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	DECQ CX
	JNZ  addshloop
	JMP  addshdone

addshout:
	LOAD4(SI)
	ADD4(DX)
	STORE4(R8)
	ADD4(DI)
	STORE4(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	ADDQ $128, R8
	DECQ CX
	JNZ  addshout

addshdone:
	VZEROUPPER
	RET

// KSTEP32 is one step p of the single-precision 4 x 24 block: the 24
// values of B at b0, b1, b2 (32 bytes apart) into Y0..Y2, then for each row
// i the value of A at ai broadcast into Y3 and multiplied into that row's
// accumulators (KROW32).
#define KSTEP32(b0, b1, b2, a0, a1, a2, a3) \
	VMOVUPS      b0, Y0;           \
	VMOVUPS      b1, Y1;           \
	VMOVUPS      b2, Y2;           \
	VBROADCASTSS a0, Y3;           \
	KROW32(Y4, Y5, Y6);            \
	VBROADCASTSS a1, Y3;           \
	KROW32(Y7, Y8, Y9);            \
	VBROADCASTSS a2, Y3;           \
	KROW32(Y10, Y11, Y12);         \
	VBROADCASTSS a3, Y3;           \
	KROW32(Y13, Y14, Y15)

#define KROW32(c0, c1, c2)     \
	VFMADD231PS Y0, Y3, c0; \
	VFMADD231PS Y1, Y3, c1; \
	VFMADD231PS Y2, Y3, c2

// CADD8 adds the 8 float32 of the accumulator acc (xacc its low half),
// converted to float64, into the 8 float64 at off(DX).
#define CADD8(acc, xacc, off) \
	VCVTPS2PD    xacc, Y0;         \
	VEXTRACTF128 $1, acc, X1;      \
	VCVTPS2PD    X1, Y1;           \
	VADDPD       off(DX), Y0, Y0;  \
	VADDPD       off+32(DX), Y1, Y1; \
	VMOVUPD      Y0, off(DX);      \
	VMOVUPD      Y1, off+32(DX)

// CSTORE32 updates the row of C at DX (24 float64) with the accumulators
// c0..c2.
#define CSTORE32(c0, x0, c1, x1, c2, x2) \
	CADD8(c0, x0, 0);   \
	CADD8(c1, x1, 64);  \
	CADD8(c2, x2, 128)

// func kern32AVX2(k int, a []float32, sa int, b []float32, sb int, c []float64, ldc int)
//
// 4 x 24 register block of float32: Y4..Y15 hold the accumulators (row i
// in Y(4+3i)..Y(6+3i), 8 columns each), Y0..Y2 the 24 values of B at step
// p, Y3 the broadcast A value. SI, DI walk A and B by R9 = 4*sa and
// R10 = 4*sb bytes per step. At the end each accumulator is converted to
// float64 and added to C.
TEXT ·kern32AVX2(SB), NOSPLIT, $0-104
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ sa+32(FP), R9
	SHLQ $2, R9
	MOVQ b_base+40(FP), DI
	MOVQ sb+64(FP), R10
	SHLQ $2, R10
	MOVQ c_base+72(FP), DX
	MOVQ ldc+96(FP), R8
	SHLQ $3, R8

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $1, BX
	JZ   tail32

loop32:
	KSTEP32(0(DI), 32(DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI))
	KSTEP32(0(DI)(R10*1), 32(DI)(R10*1), 64(DI)(R10*1), 0(SI)(R9*1), 4(SI)(R9*1), 8(SI)(R9*1), 12(SI)(R9*1))
	LEAQ (SI)(R9*2), SI
	LEAQ (DI)(R10*2), DI
	DECQ BX
	JNZ  loop32

tail32:
	ANDQ $1, CX
	JZ   store32
	KSTEP32(0(DI), 32(DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI))

store32:
	CSTORE32(Y4, X4, Y5, X5, Y6, X6)
	ADDQ R8, DX
	CSTORE32(Y7, X7, Y8, X8, Y9, X9)
	ADDQ R8, DX
	CSTORE32(Y10, X10, Y11, X11, Y12, X12)
	ADDQ R8, DX
	CSTORE32(Y13, X13, Y14, X14, Y15, X15)

	VZEROUPPER
	RET

// func addShifted32AVX2(dst []float64, src []float32, shift []float64, out []float32)
//
// t = float64(src[i]) + shift[i]; dst[i] += t; out[i] = float32(t) when out
// is not nil; for i < len(src) rounded down to a multiple of 16 (the caller
// does the rest). The 16 values of src are loaded before out is written,
// so out may be src.
TEXT ·addShifted32AVX2(SB), NOSPLIT, $0-96
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ shift_base+48(FP), DX
	MOVQ out_base+72(FP), R8
	SHRQ $4, CX
	JZ   as32done
	TESTQ R8, R8
	JNZ  as32store

as32loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VCVTPS2PD 32(SI), Y2
	VCVTPS2PD 48(SI), Y3
	ADD4(DX)
	ADD4(DI)
	STORE4(DI)
	ADDQ $64, SI
	ADDQ $128, DX
	ADDQ $128, DI
	DECQ CX
	JNZ  as32loop
	JMP  as32done

as32store:
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VCVTPS2PD  32(SI), Y2
	VCVTPS2PD  48(SI), Y3
	ADD4(DX)
	VCVTPD2PSY Y0, X4
	VCVTPD2PSY Y1, X5
	VCVTPD2PSY Y2, X6
	VCVTPD2PSY Y3, X7
	VMOVUPS    X4, (R8)
	VMOVUPS    X5, 16(R8)
	VMOVUPS    X6, 32(R8)
	VMOVUPS    X7, 48(R8)
	ADD4(DI)
	STORE4(DI)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $128, DX
	ADDQ $128, DI
	DECQ CX
	JNZ  as32store

as32done:
	VZEROUPPER
	RET
