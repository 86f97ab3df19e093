package lanczos_test

import (
	"context"
	"fmt"
	"math"

	"github.com/dicalab/dica/lanczos"
)

// The five largest eigenvalues of the 1-D Dirichlet Laplacian of order 500,
// matrix-free, against the closed form 4 sin^2(j pi / (2 (n+1))).
func ExampleSym() {
	const n = 500
	a := lanczos.Func(n, func(dst, x []float64) {
		for i := range x {
			v := 2 * x[i]
			if i > 0 {
				v -= x[i-1]
			}
			if i < n-1 {
				v -= x[i+1]
			}
			dst[i] = v
		}
	})
	res, err := lanczos.Sym(context.Background(), a, lanczos.Settings{K: 5, Tol: 1e-10, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status)
	for i, v := range res.Values {
		s := math.Sin(float64(n-i) * math.Pi / (2 * (n + 1)))
		fmt.Printf("%.8f %.8f\n", v, 4*s*s)
	}
	// Output:
	// Converged
	// 3.99996068 3.99996068
	// 3.99984272 3.99984272
	// 3.99964612 3.99964612
	// 3.99937090 3.99937090
	// 3.99901706 3.99901706
}

// An exactly rank-2 operator asked for 4 pairs returns the 2 that exist.
func ExampleSym_lowRank() {
	a := lanczos.Func(100, func(dst, x []float64) {
		// A = 3 e1 e1^T + 2 e2 e2^T.
		for i := range dst {
			dst[i] = 0
		}
		dst[0] = 3 * x[0]
		dst[1] = 2 * x[1]
	})
	res, err := lanczos.Sym(context.Background(), a, lanczos.Settings{K: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, len(res.Values))
	fmt.Printf("%.12f %.12f\n", res.Values[0], res.Values[1])
	// Output:
	// ReachableSpaceExhausted 2
	// 3.000000000000 2.000000000000
}
