package kernel_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

func ExampleExpSlice() {
	v := []float64{0, 1, -1, -800}
	kernel.ExpSlice(v, v)
	fmt.Printf("%.15f\n", v)
	// Output:
	// [1.000000000000000 2.718281828459045 0.367879441171442 0.000000000000000]
}

func ExampleRBF_Block() {
	x := mat.NewDense(2, 2, []float64{
		0, 0,
		1, 1,
	})
	z := mat.NewDense(3, 2, []float64{
		0, 0,
		1, 0,
		3, 4,
	})
	var k mat.Dense
	kernel.RBF{Sigma: 1}.Block(&k, x, z)
	fmt.Printf("%.6f\n", mat.Formatted(&k))
	// Output:
	// ⎡1.000000  0.606531  0.000004⎤
	// ⎣0.367879  0.606531  0.001503⎦
}
