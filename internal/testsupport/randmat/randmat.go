// Package randmat draws the random matrices that tests and benchmarks use
// as points.
package randmat

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Normal returns an r x c matrix of standard normal values drawn from rng
// row by row (so that a seed gives the same points whatever the caller).
func Normal(rng *rand.Rand, r, c int) *mat.Dense {
	x := make([]float64, r*c)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return mat.NewDense(r, c, x)
}
