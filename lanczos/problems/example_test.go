package problems_test

import (
	"context"
	"fmt"

	"github.com/dicalab/dica/lanczos"
	"github.com/dicalab/dica/lanczos/problems"
)

// The 2-D Laplacian on a 30 x 30 grid has its top eigenvalues in exact
// pairs; the solver, with default settings, returns both copies.
func Example() {
	p := problems.Laplacian2D(30)
	res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 4, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.N)
	for i, want := range p.Top(4) { // computed, exact
		fmt.Printf("%.10f %.10f\n", res.Values[i], want)
	}
	// Output:
	// 2-D Laplacian 900
	// 7.9794772936 7.9794772936
	// 7.9487985293 7.9487985293
	// 7.9487985293 7.9487985293
	// 7.9181197650 7.9181197650
}
