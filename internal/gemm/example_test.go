package gemm_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
)

// The streaming Gram sum: two blocks of rows of F are added into the upper
// triangle of C = F^T F; the strictly lower triangle is left untouched.
func ExampleSyrk() {
	const m = 2
	c := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: make([]float64, m*m)}
	block1 := blas64.General{Rows: 2, Cols: m, Stride: m, Data: []float64{
		1, 2,
		3, 4,
	}}
	block2 := blas64.General{Rows: 1, Cols: m, Stride: m, Data: []float64{
		5, 6,
	}}
	gemm.Syrk(blas.Trans, block1, c)
	gemm.Syrk(blas.Trans, block2, c)
	fmt.Println(c.Data[0:2])
	fmt.Println(c.Data[2:4])
	// Output:
	// [35 44]
	// [0 56]
}

// Solving A X = B with the Cholesky factor in mat.SymDense's layout:
// A = U^T U, then U^T Y = B and U X = Y.
func ExamplePotrf() {
	const n = 2
	a := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: []float64{
		4, 2,
		0, 3, // the lower triangle is not read
	}}
	u, ok := gemm.Potrf(a, 1)
	if !ok {
		fmt.Println("not positive definite")
		return
	}
	fmt.Printf("U = [%.4g %.4g; 0 %.4g]\n", u.Data[0], u.Data[1], u.Data[3])
	b := blas64.General{Rows: n, Cols: 2, Stride: 2, Data: []float64{ // two right-hand sides, one per column
		8, 4,
		8, 5,
	}}
	gemm.Trsm(blas.Left, blas.Trans, u, b, 1)
	gemm.Trsm(blas.Left, blas.NoTrans, u, b, 1)
	fmt.Printf("X = [%.4g %.4g; %.4g %.4g]\n", b.Data[0], b.Data[1], b.Data[2], b.Data[3])
	// Output:
	// U = [2 1; 0 1.414]
	// X = [1 0.25; 2 1.5]
}

// A mat.Cholesky from the blocked factorization, used as gonum's own.
func ExampleCholeskyTo() {
	a := mat.NewSymDense(2, []float64{
		4, 2,
		2, 3,
	})
	var chol mat.Cholesky
	if !gemm.CholeskyTo(&chol, a, 1) {
		fmt.Println("not positive definite")
		return
	}
	var x mat.Dense
	if err := chol.SolveTo(&x, mat.NewDense(2, 2, []float64{8, 4, 8, 5})); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("det = %.4g\n", chol.Det())
	fmt.Printf("X = [%.4g %.4g; %.4g %.4g]\n", x.At(0, 0), x.At(0, 1), x.At(1, 0), x.At(1, 1))
	// Output:
	// det = 8
	// X = [1 0.25; 2 1.5]
}
