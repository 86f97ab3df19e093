// Package gemm provides fast dense level-3 kernels for the hot spots of
// dica, on gonum's types: the streaming Gram sum C += F^T F of a block of
// raw feature rows (Syrk), the Cholesky factorization of a dense symmetric
// positive definite matrix (Potrf, and CholeskyTo for a mat.Cholesky), the
// triangular solves with many right-hand sides that go with it (Trsm), the
// general product (Gemm, and GemmPacked with a right operand packed once by
// PackB for many left operands), and the Gram sum of float32 rows, in float32
// within blocks of 128 rows and in float64 across them (Syrk32, with a
// 4 x 24 float32 micro-kernel). Gemm, Syrk, Trsm and Potrf mirror the blas64
// or lapack64 function of the same name, with one more argument, the number
// of goroutines, and fewer cases (see each function).
//
// Conventions: matrices are blas64.General, blas64.Symmetric and
// blas64.Triangular values (row-major, Stride >= number of columns; an
// r x c matrix needs len(Data) >= (r-1)*Stride + c), as in gonum's blas64.
// Shape errors are programmer errors and panic, as in gonum/blas. Only
// the triangle named by Uplo of a symmetric or triangular matrix is read or
// written.
//
// Solving A X = B with a Cholesky factor, in the layout of mat.SymDense
// (upper, A = U^T U; B is n x nrhs, overwritten by X):
//
//	u, ok := gemm.Potrf(a, workers) // a is a blas64.Symmetric
//	if !ok { /* not positive definite */ }
//	gemm.Trsm(blas.Left, blas.Trans, u, b, workers)   // U^T Y = B
//	gemm.Trsm(blas.Left, blas.NoTrans, u, b, workers) // U X = Y
//
// Design: the kernels follow GotoBLAS/BLIS (Goto and van de Geijn, "Anatomy
// of high-performance matrix multiplication", ACM TOMS 34(3), 2008). The
// operands are packed, per block of kc = 256 inner indices, into
// micro-panels of 4 rows of op(A) and 12 columns of op(B) (for Syrk with
// n <= 160 the rows of F are only copied into rows padded to a multiple of
// 12, and the kernel reads them with a stride; SyrkPadded takes rows the
// caller has already laid out so), and a 4 x 12
// register-blocked micro-kernel accumulates a tile of C in 12 YMM
// registers. The triangular solves are recursive: the off-diagonal blocks
// go through the GEMM kernel, diagonal blocks of order <= 32 through a
// substitution kernel that solves 32 right-hand sides at once. An upper
// triangle U is handled as the lower triangle L = U^T read in transposed
// order, so both layouts give the same bits. On amd64 CPUs with AVX2 and
// FMA (detected with CPUID/XGETBV) both kernels are assembly; on other
// architectures, or with the build tag noasm, they are pure Go with
// math.FMA and give bit-identical results (on amd64 CPUs without FMA they
// use plain multiply-add, as math.FMA would be emulated: kern_muladd.go,
// generated from kern_go.go).
//
// Determinism: every element of a product is computed as
//
//	C[i][j] = fma(alpha, acc_b, C[i][j]) for each block b of kc inner indices in turn,
//	acc_b   = fma(a_k, b_k, acc_b) over the indices k of the block in increasing order,
//
// and every element of a triangular solve or a factorization by a fixed
// sequence of such products and substitutions, so the results depend only
// on the inputs and the fixed block sizes, never on the number of workers,
// GOMAXPROCS or timing. Each function uses only its arguments and memory it
// allocates: they are safe for concurrent use on distinct output buffers.
//
// Performance: the benchmarks of this package (go test -bench .
// ./internal/gemm) measure each kernel in GFLOP/s per CPU second against
// gonum's blas64 and mat.Cholesky; docs/PERFORMANCE.md, "GEMM kernels",
// records their results.
package gemm
