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
			got := symSquare(s)
			if !mat.Equal(got, &want) {
				t.Errorf("n = %d, scale %g: symSquare differs from Dense.Mul", n, scale)
			}
			if !sameBitsDense(got, symSquareRef(s)) {
				t.Errorf("n = %d, scale %g: symSquare differs from the plain loop", n, scale)
			}
		}
	}
}

// symSquareRef is symSquare as a plain loop: element (r, c) the sum over
// i, in order, of S[r][i] S[i][c].
func symSquareRef(s *mat.SymDense) *mat.Dense {
	n := s.SymmetricDim()
	out := mat.NewDense(n, n, nil)
	for r := range n {
		for c := range n {
			var v float64
			for i := range n {
				v += s.At(r, i) * s.At(i, c)
			}
			out.Set(r, c, v)
		}
	}
	return out
}

// BenchmarkSymSquare measures symSquare at the order of dica eval's inner
// grid (m = 200).
func BenchmarkSymSquare(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 5))
	const n = 200
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, rng.NormFloat64())
		}
	}
	for b.Loop() {
		symSquare(s)
	}
}
