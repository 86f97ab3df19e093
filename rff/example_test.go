package rff_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/rff"
)

func Example() {
	k := kernel.RBF{Sigma: 1}
	f, err := rff.New(k, 2, 4000, true, 1) // 2000 orthogonal frequencies
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.NewDense(2, 2, []float64{
		0, 0,
		1, 0,
	})
	var phi mat.Dense
	f.Map(&phi, x)
	fmt.Printf("features %d, ||phi(x)||^2 = %.6f\n", f.Dim(), mat.Dot(phi.RowView(0), phi.RowView(0)))
	fmt.Printf("k(x, z) = %.2f, phi(x)'phi(z) = %.2f\n", k.Eval(x.RawRowView(0), x.RawRowView(1)), mat.Dot(phi.RowView(0), phi.RowView(1)))

	_, err = rff.New(k, 2, 5, false, 1)
	fmt.Println(err)
	// Output:
	// features 4000, ||phi(x)||^2 = 1.000000
	// k(x, z) = 0.61, phi(x)'phi(z) = 0.61
	// rff: m = 5 features, want an even number >= 2 (cos/sin pairs)
}
