package exact

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSymDefEigLanczos checks the matrix-free Lanczos path used from
// LanczosMin points on against a dense eigendecomposition of the same
// reduced problem: eigenvalues to 1e-10 relative, B^T D B = I and residuals
// ||A b - gamma D b|| <= 1e-9 ||A|| ||b||.
func TestSymDefEigLanczos(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n, k = LanczosMin + 50, 6
	// A kernel-like G (decaying spectrum) and an SPD D.
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64()*math.Pow(0.97, float64(j)))
		}
	}
	d, chol := randomDenominator(t, rng, n, 20, 2)
	vals, b, ok := symDefEig(context.Background(), g, chol, k, 7)
	if !ok {
		t.Fatal("Lanczos path failed")
	}
	// Dense reference: eigenvalues of U^{-T} G G^T U^{-1}.
	var a mat.SymDense
	a.SymOuterK(1, g)
	var ui mat.TriDense
	if err := ui.InverseTri(chol.RawU()); err != nil {
		t.Fatal(err)
	}
	var t1, c mat.Dense
	t1.Mul(ui.T(), &a)
	c.Mul(&t1, &ui)
	cs := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			cs.SetSym(i, j, (c.At(i, j)+c.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	es.Factorize(cs, false)
	ref := es.Values(nil)
	for j := 0; j < k; j++ {
		want := ref[n-1-j]
		if math.Abs(vals[j]-want) > 1e-10*want {
			t.Errorf("eigenvalue %d: Lanczos %.15g, dense %.15g", j, vals[j], want)
		}
	}
	var db, btdb, ab mat.Dense
	db.Mul(d, b)
	btdb.Mul(b.T(), &db)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(btdb.At(i, j)-want) > 1e-9 {
				t.Fatalf("B^T D B [%d,%d] = %g", i, j, btdb.At(i, j))
			}
		}
	}
	ab.Mul(&a, b)
	anorm := mat.Norm(&a, 2)
	for j := 0; j < k; j++ {
		r := mat.Col(nil, j, &ab)
		dbj := mat.Col(nil, j, &db)
		var rn, bn float64
		for i := range r {
			e := r[i] - vals[j]*dbj[i]
			rn += e * e
			bn += b.At(i, j) * b.At(i, j)
		}
		if math.Sqrt(rn) > 1e-9*anorm*math.Sqrt(bn) {
			t.Errorf("component %d: residual %.3g > 1e-9 ||A|| ||b||", j, math.Sqrt(rn))
		}
	}
}
