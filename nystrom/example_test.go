package nystrom_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
)

func Example() {
	x := mat.NewDense(6, 2, []float64{
		0, 0,
		1, 0,
		0, 1,
		1, 1,
		2, 2,
		3, 1,
	})
	k := kernel.RBF{Sigma: 1}
	// Two landmarks drawn from the points, and every point as a landmark.
	z, err := nystrom.Uniform(x, 2, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	few, _ := nystrom.New(k, z, 0)
	all, _ := nystrom.New(k, x, 0)
	f2, _ := approx.KernelError(k, few, x)
	f6, _ := approx.KernelError(k, all, x)
	fmt.Printf("m = 2: %d features, error %.2f\n", few.Dim(), f2)
	fmt.Printf("m = 6: %d features, error < 1e-12: %v\n", all.Dim(), f6 < 1e-12)

	_, err = nystrom.New(k, mat.NewDense(3, 2, []float64{1, 1, 1, 1, 1, 1}), 0)
	fmt.Println(err)
	// Output:
	// m = 2: 2 features, error 0.51
	// m = 6: 6 features, error < 1e-12: true
	// nystrom: landmarks are duplicates: effective rank 1 of 3 under rbf(sigma=1) (rcond 1e-10)
}
