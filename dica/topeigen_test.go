package dica

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// denseTop is the reference of tridiagTop: the full decomposition by
// mat.EigenSym, the k largest pairs, largest first, signs by fixSign.
func denseTop(t *testing.T, a *mat.SymDense, k int) ([]float64, *mat.Dense) {
	t.Helper()
	return eigenSymTop(a, k)
}

// symFromSpectrum returns Q diag(vals) Q^T for a random orthogonal Q.
func symFromSpectrum(rng *rand.Rand, vals []float64) *mat.SymDense {
	n := len(vals)
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s := 0.0
			for l, v := range vals {
				s += q.At(i, l) * v * q.At(j, l)
			}
			a.SetSym(i, j, s)
		}
	}
	return a
}

// TestTridiagTop checks tridiagTop against the full decomposition of
// mat.EigenSym: the same eigenvalues bit for bit, vectors (signs fixed) to
// 1e-10, on random, kernel-like (fast-decaying, positive) and clustered
// spectra; and that it declines (ok false) where the wanted eigenvalues
// are not separated.
func TestTridiagTop(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
		vals func(rng *rand.Rand, n int) []float64
		wok  bool
		vtol float64
	}{
		{"gaussian", 200, 10, nil, true, 1e-10},
		{"gaussian small", 7, 3, nil, true, 1e-10},
		{"decaying", 200, 10, func(_ *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Exp(-0.3 * float64(i))
			}
			return v
		}, true, 1e-10},
		{"cluster in the top", 120, 6, func(rng *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.Float64()
			}
			// Three eigenvalues within 1e-5 of each other (relative):
			// orthogonalized in the cluster, accurate to eps/gap.
			v[0], v[1], v[2] = 5, 5+2e-5, 5+4e-5
			return v
		}, true, 1e-9},
		{"tie in the top", 60, 4, func(rng *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.Float64()
			}
			v[0], v[1] = 3, 3
			return v
		}, false, 0},
		{"tie at the boundary", 60, 3, func(rng *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.Float64()
			}
			v[0], v[1], v[2], v[3] = 4, 3.5, 3, 3
			return v
		}, false, 0},
		{"low rank", 50, 5, func(_ *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			v[0], v[1], v[2] = 3, 2, 1
			return v
		}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.n)))
			var a *mat.SymDense
			if tc.vals == nil {
				a = mat.NewSymDense(tc.n, nil)
				for i := range tc.n {
					for j := i; j < tc.n; j++ {
						a.SetSym(i, j, rng.NormFloat64())
					}
				}
			} else {
				a = symFromSpectrum(rng, tc.vals(rng, tc.n))
			}
			vals, vecs, ok := tridiagTop(a, tc.k)
			if ok != tc.wok {
				t.Fatalf("ok = %v, want %v", ok, tc.wok)
			}
			if !ok {
				return
			}
			wvals, wvecs := denseTop(t, a, tc.k)
			for j := range tc.k {
				if vals[j] != wvals[j] {
					t.Errorf("value %d = %v, want %v (EigenSym)", j, vals[j], wvals[j])
				}
				col := mat.Col(nil, j, vecs)
				fixSign(col)
				var diff float64
				for i, x := range col {
					diff = math.Max(diff, math.Abs(x-wvecs.At(i, j)))
				}
				if diff > tc.vtol {
					t.Errorf("vector %d differs from EigenSym's by %.3g", j, diff)
				}
			}
			// Orthonormal columns.
			var g mat.Dense
			g.Mul(vecs.T(), vecs)
			for i := range tc.k {
				for j := range tc.k {
					want := 0.0
					if i == j {
						want = 1
					}
					if d := math.Abs(g.At(i, j) - want); d > 1e-12 {
						t.Errorf("V^T V [%d,%d] = %v, want %v", i, j, g.At(i, j), want)
					}
				}
			}
		})
	}
}

// TestTopEigenDensePaths checks that topEigen gives the same pairs through
// tridiagTop and through the full decomposition it falls back to.
func TestTopEigenDensePaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, k := 150, 10
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	vals, vecs := topEigen(a, k)
	wvals, wvecs := denseTop(t, a, k)
	for j := range k {
		if vals[j] != wvals[j] {
			t.Errorf("value %d = %v, want %v", j, vals[j], wvals[j])
		}
		for i := range n {
			if d := math.Abs(vecs.At(i, j) - wvecs.At(i, j)); d > 1e-10 {
				t.Fatalf("vector %d entry %d differs by %.3g", j, i, d)
			}
		}
	}
}

// BenchmarkTopEigenDense times topEigen's dense path (tridiagTop) for the
// top k pairs of a 200 x 200 matrix with a decaying spectrum, against the
// full decomposition by mat.EigenSym it replaces.
func BenchmarkTopEigenDense(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 200
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Exp(-0.05 * float64(i))
	}
	a := symFromSpectrum(rng, v)
	for _, k := range []int{3, 10} {
		b.Run(fmt.Sprintf("topEigen/k=%d", k), func(b *testing.B) {
			for b.Loop() {
				topEigen(a, k)
			}
		})
	}
	b.Run("eigensym", func(b *testing.B) {
		for b.Loop() {
			var es mat.EigenSym
			es.Factorize(a, true)
		}
	})
}
