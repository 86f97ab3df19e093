package dica

import (
	"math"
	"math/rand/v2"
	"runtime"
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

// TestNewLowRank checks C_Q = U diag(e) U^T against Mc^T Mc / N computed
// densely, with U orthonormal, for fewer domains than features (the N x N
// problem) and more (the m x m one), and that 2,000 domains of 10 features
// allocate for the 10 x 10 problem, not for a 2,000 x 2,000 one (96 MB).
func TestNewLowRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ n, m int }{{5, 12}, {12, 12}, {40, 12}, {300, 7}} {
		mc := mat.NewDense(c.n, c.m, nil)
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.m; j++ {
				mc.Set(i, j, rng.NormFloat64()+float64(j%3))
			}
		}
		lr, err := newLowRank(mc, c.n, 1e-12)
		if err != nil {
			t.Fatal(err)
		}
		var want mat.Dense
		want.Mul(mc.T(), mc)
		want.Scale(1/float64(c.n), &want)
		_, p := lr.u.Dims()
		if wantP := min(c.n, c.m); p != wantP {
			t.Errorf("N=%d m=%d: rank %d, want %d", c.n, c.m, p, wantP)
		}
		var ue, got, utu mat.Dense
		ue.Apply(func(i, j int, v float64) float64 { return v * lr.e[j] }, lr.u)
		got.Mul(&ue, lr.u.T())
		utu.Mul(lr.u.T(), lr.u)
		scale := mat.Norm(&want, math.Inf(1))
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.m; j++ {
				if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-13*scale {
					t.Fatalf("N=%d m=%d: C_Q[%d,%d] = %g, want %g", c.n, c.m, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				if d := math.Abs(utu.At(i, j) - b2f(i == j)); d > 1e-9 {
					t.Fatalf("N=%d m=%d: (U^T U)[%d,%d] = %g", c.n, c.m, i, j, utu.At(i, j))
				}
			}
		}
	}

	mc := mat.NewDense(2000, 10, nil)
	for i := range mc.RawMatrix().Data {
		mc.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := newLowRank(mc, 2000, 1e-12); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("2000 domains of 10 features allocated %d bytes, want under 1 MiB (the 10 x 10 problem)", got)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
