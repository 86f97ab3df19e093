package dica

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCholeskyInPlace checks that choleskyInPlace gives the factor of
// mat.Cholesky bit for bit, and false where mat.Cholesky fails.
func TestCholeskyInPlace(t *testing.T) {
	for _, tc := range []struct {
		n     int
		shift float64 // added to the diagonal of B^T B
	}{
		{1, 1}, {2, 0.5}, {7, 1e-3}, {64, 1e-8}, {200, 0.1}, {3, -100},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), 5))
		b := mat.NewDense(tc.n+3, tc.n, nil)
		for i := range tc.n + 3 {
			for j := range tc.n {
				b.Set(i, j, rng.NormFloat64())
			}
		}
		a := mat.NewSymDense(tc.n, nil)
		a.SymOuterK(1, b.T())
		for i := range tc.n {
			a.SetSym(i, i, a.At(i, i)+tc.shift)
		}
		var chol mat.Cholesky
		want := chol.Factorize(a)
		r, got := choleskyInPlace(a)
		if got != want {
			t.Fatalf("n = %d, shift %v: choleskyInPlace ok = %v, mat.Cholesky %v", tc.n, tc.shift, got, want)
		}
		if !got {
			continue
		}
		var u mat.TriDense
		chol.UTo(&u)
		for i := range tc.n {
			for j := i; j < tc.n; j++ {
				g, w := r.Data[i*r.Stride+j], u.At(i, j)
				if math.Float64bits(g) != math.Float64bits(w) {
					t.Fatalf("n = %d: R[%d][%d] = %v, mat.Cholesky %v", tc.n, i, j, g, w)
				}
			}
		}
	}
}
