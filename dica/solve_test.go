package dica

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestTopEigenLanczos checks the Lanczos branch of topEigen against a dense
// eigendecomposition on a kernel-like spectrum.
func TestTopEigenLanczos(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, k := lanczosMin+100, 10
	x := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x.Set(i, j, rng.NormFloat64()*math.Pow(0.95, float64(j)))
		}
	}
	var a mat.SymDense
	a.SymOuterK(1, x)
	vals, vecs := topEigen(&a, k)
	var es mat.EigenSym
	es.Factorize(&a, false)
	ref := es.Values(nil)
	for j := 0; j < k; j++ {
		if want := ref[n-1-j]; math.Abs(vals[j]-want) > 1e-10*want {
			t.Errorf("eigenvalue %d: %.15g, dense %.15g", j, vals[j], want)
		}
		v := mat.NewVecDense(n, mat.Col(nil, j, vecs))
		var av mat.VecDense
		av.MulVec(&a, v)
		av.AddScaledVec(&av, -vals[j], v)
		if r := av.Norm(2); r > 1e-9*ref[n-1] {
			t.Errorf("residual %d: %.3g", j, r)
		}
	}
}
