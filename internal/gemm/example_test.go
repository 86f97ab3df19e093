package gemm_test

import (
	"fmt"

	"github.com/dicalab/dica/internal/gemm"
)

// The streaming Gram sum: two blocks of rows of F are added into the upper
// triangle of C = F^T F; the strictly lower triangle is left untouched.
func ExampleSyrkTransUpper() {
	const m = 2
	c := make([]float64, m*m)
	block1 := []float64{
		1, 2,
		3, 4,
	}
	block2 := []float64{
		5, 6,
	}
	gemm.SyrkTransUpper(c, m, block1, m, 2, m)
	gemm.SyrkTransUpper(c, m, block2, m, 1, m)
	fmt.Println(c[0:2])
	fmt.Println(c[2:4])
	// Output:
	// [35 44]
	// [0 56]
}

// Solving A X = B with the Cholesky factor: A = L L^T, then L Y = B and
// L^T X = Y.
func ExampleCholesky() {
	const n = 2
	a := []float64{
		4, 0, // the upper triangle is not read
		2, 3,
	}
	if !gemm.Cholesky(a, n, n, 1) {
		fmt.Println("not positive definite")
		return
	}
	fmt.Printf("L = [%.4g 0; %.4g %.4g]\n", a[0], a[2], a[3])
	b := []float64{ // two right-hand sides, one per column
		8, 4,
		8, 5,
	}
	gemm.TrsmLowerLeft(n, 2, a, n, b, 2, 1)
	gemm.TrsmLowerTransLeft(n, 2, a, n, b, 2, 1)
	fmt.Printf("X = [%.4g %.4g; %.4g %.4g]\n", b[0], b[1], b[2], b[3])
	// Output:
	// L = [2 0; 1 1.414]
	// X = [1 0.25; 2 1.5]
}
