package approx_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
)

func ExamplePrincipalCosines() {
	// The x-y plane and a plane through the x axis tilted by 60 degrees.
	a := mat.NewDense(3, 2, []float64{
		1, 0,
		0, 1,
		0, 0,
	})
	th := math.Pi / 3
	b := mat.NewDense(3, 2, []float64{
		1, 0,
		0, math.Cos(th),
		0, math.Sin(th),
	})
	fmt.Printf("%.4f\n", approx.PrincipalCosines(a, b))
	// Output:
	// [1.0000 0.5000]
}

func ExampleKernelError() {
	// Kernel rows on the single point z = (1, 0) give phi(x) = x_1, which
	// keeps the first coordinate of the linear kernel k(x, z) = x'z and drops
	// the second.
	x := mat.NewDense(3, 2, []float64{
		1, 0,
		0, 1,
		2, 0,
	})
	m := approx.KernelRows{Kernel: kernel.Linear{}, Points: mat.NewDense(1, 2, []float64{1, 0})}
	frob, spec := approx.KernelError(kernel.Linear{}, m, x)
	// K = diag-block [[1 2] [2 4]] (+) [1]: ||K||_F = sqrt(26), ||K||_2 = 5;
	// the error is the 1 x 1 block [1].
	fmt.Printf("frob %.4f (1/sqrt(26) = %.4f) spec %.4f\n", frob, 1/math.Sqrt(26), spec)
	// Output:
	// frob 0.1961 (1/sqrt(26) = 0.1961) spec 0.2000
}
