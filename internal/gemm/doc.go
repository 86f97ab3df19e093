// Package gemm provides fast dense level-3 kernels for the two hot spots of
// dica: the streaming Gram sum C += F^T F of a block of raw feature rows
// (SyrkTransUpper) and the Cholesky factorization of the dense SPD
// denominator of the exact solver (Cholesky), with the triangular solves
// with many right-hand sides that go with it (TrsmLowerLeft,
// TrsmLowerTransLeft, TrsmLowerTransRight) and the general product Gemm
// (C += alpha op(A) op(B), any transposition).
//
// Conventions: all matrices are dense, row-major float64 slices with a
// leading dimension (row stride) ld >= number of columns, as in gonum's
// blas64.General; an r x c matrix needs len >= (r-1)*ld + c. Shape errors
// are programmer errors and panic, as in gonum/blas. The Cholesky factor is
// lower triangular, A = L L^T, stored in the lower triangle of A; the
// strictly upper triangle is neither read nor written (and SyrkTransUpper
// neither reads nor writes the strictly lower triangle of C).
//
// Solving A X = B with a Cholesky factor (B is n x nrhs, overwritten by X):
//
//	if !gemm.Cholesky(a, n, n, workers) { /* not positive definite */ }
//	gemm.TrsmLowerLeft(n, nrhs, a, n, b, nrhs, workers)      // L Y = B
//	gemm.TrsmLowerTransLeft(n, nrhs, a, n, b, nrhs, workers) // L^T X = Y
//
// Design: the kernels follow GotoBLAS/BLIS (Goto and van de Geijn, "Anatomy
// of high-performance matrix multiplication", ACM TOMS 34(3), 2008). The
// operands are packed, per block of kc = 256 inner indices, into
// micro-panels of 4 rows of op(A) and 12 columns of op(B) (for
// SyrkTransUpper with m <= 160 the rows of F are only copied into rows
// padded to a multiple of 12, and the kernel reads them with a stride), and
// a 4 x 12 register-blocked micro-kernel accumulates a tile of C in 12 YMM
// registers. The triangular solves are recursive: the off-diagonal blocks
// go through the GEMM kernel, diagonal blocks of order <= 32 through a
// substitution kernel that solves 32 right-hand sides at once. On amd64
// CPUs with AVX2 and FMA (detected with CPUID/XGETBV) both kernels are
// assembly; on other architectures, or with the build tag noasm, they are
// pure Go with math.FMA and give bit-identical results (on amd64 CPUs
// without FMA they use plain multiply-add, as math.FMA would be emulated).
//
// Determinism: every element of a product is computed as
//
//	C[i][j] = fma(alpha, acc_b, C[i][j]) for each block b of kc inner indices in turn,
//	acc_b   = fma(a_k, b_k, acc_b) over the indices k of the block in increasing order,
//
// and every element of a triangular solve by a fixed sequence of such
// products and substitutions, so the results depend only on the inputs and
// the fixed block sizes, never on the number of workers, GOMAXPROCS or
// timing. Each function uses only its arguments and memory it allocates: they
// are safe for concurrent use on distinct output buffers.
//
// Performance (AMD EPYC Zen 4, AVX2 path, GFLOP/s per CPU second, ranges
// over runs on a shared, loaded machine; go test -bench . ./internal/gemm):
// the micro-kernel alone reaches 50-55; SyrkTransUpper 31-46 at m = 500,
// 35-51 at m = 1000-2000, 16-26 at m = 50 (gonum's blas64.Syrk: 4-7);
// Cholesky n = 2000: 27-41 (gonum's mat.Cholesky: 4.4); TrsmLowerLeft and
// TrsmLowerTransLeft n = 2000, 500 right-hand sides: 34-41 (gonum: 7-8);
// Gemm n = 500: 40-43 (gonum: 6).
package gemm
