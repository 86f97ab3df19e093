package dica

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSymSquare checks symSquare against gonum's Dense.Mul of a symmetric
// matrix by itself, bit for bit, on matrices of several sizes and scales.
func TestSymSquare(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, n := range []int{1, 2, 7, 64, 201} {
		for _, scale := range []float64{1, 1e-6, 1e8} {
			s := mat.NewSymDense(n, nil)
			for i := range n {
				for j := i; j < n; j++ {
					s.SetSym(i, j, scale*rng.NormFloat64())
				}
			}
			var want mat.Dense
			want.Mul(s, s)
			if got := symSquare(s); !mat.Equal(got, &want) {
				t.Errorf("n = %d, scale %g: symSquare differs from Dense.Mul", n, scale)
			}
		}
	}
}
