package exact

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// TestPivotedCholesky checks the output-kernel factor: the remainder
// L - Psi Psi^T is PSD with trace at most 1e-12 tr(L), and a smooth kernel
// on one target needs far fewer than n columns.
func TestPivotedCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 400
	for _, tc := range []struct {
		name    string
		k       kernel.Kernel
		dim     int
		maxRank int
	}{
		{"rbf-1d", kernel.RBF{Sigma: 1}, 1, 60},
		{"rbf-3d", kernel.RBF{Sigma: 1}, 3, n},
		{"laplacian-1d", kernel.Laplacian{Sigma: 1}, 1, n},
	} {
		y := mat.NewDense(n, tc.dim, nil)
		for p := 0; p < n; p++ {
			for j := 0; j < tc.dim; j++ {
				y.Set(p, j, rng.NormFloat64())
			}
		}
		psi := pivotedCholesky(tc.k, y, pivotTol)
		_, r := psi.Dims()
		l := mat.NewDense(n, n, nil)
		tc.k.Block(l, y, y)
		var e mat.Dense
		e.Mul(psi, psi.T())
		e.Sub(l, &e)
		tr := mat.Trace(l)
		if et := mat.Trace(&e); et > 1e-12*tr || et < -1e-13*tr {
			t.Errorf("%s: remainder trace %g, want in [0, 1e-12 tr(L) = %g]", tc.name, et, 1e-12*tr)
		}
		if en := mat.Norm(&e, 2); en > 1e-12*tr {
			t.Errorf("%s: ||L - Psi Psi^T|| = %g > 1e-12 tr(L)", tc.name, en)
		}
		if r > tc.maxRank {
			t.Errorf("%s: rank %d > %d", tc.name, r, tc.maxRank)
		}
		t.Logf("%s: rank %d", tc.name, r)
	}
}

// normalDense returns an r x c matrix of standard normal values, drawn
// row by row.
func normalDense(rng *rand.Rand, r, c int) *mat.Dense {
	x := mat.NewDense(r, c, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return x
}

// randomDenominator returns an SPD matrix D = X X^T + shift I, with X an
// n x c normalDense, and its Cholesky factorization.
func randomDenominator(tb testing.TB, rng *rand.Rand, n, c int, shift float64) (*mat.SymDense, *mat.Cholesky) {
	tb.Helper()
	d := mat.NewSymDense(n, nil)
	d.SymOuterK(1, normalDense(rng, n, c))
	for i := 0; i < n; i++ {
		d.SetSym(i, i, d.At(i, i)+shift)
	}
	var chol mat.Cholesky
	if !chol.Factorize(d) {
		tb.Fatal("D not PD")
	}
	return d, &chol
}

// TestSymDefEigThinDense checks that the thin path (r <= n/2) and the dense
// path give the same eigenvalues for the same low-rank numerator.
func TestSymDefEigThinDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n, r, k = 40, 5, 8
	g := normalDense(rng, n, r)
	d, chol := randomDenominator(t, rng, n, n, 1)
	thin, bt, ok := symDefEig(context.Background(), g, chol, k, 1)
	if !ok {
		t.Fatal("thin failed")
	}
	// Pad G with zero columns to force the dense path (r > n/2).
	gp := mat.NewDense(n, n, nil)
	gp.Slice(0, n, 0, r).(*mat.Dense).Copy(g)
	dense, _, ok := symDefEig(context.Background(), gp, chol, k, 1)
	if !ok {
		t.Fatal("dense failed")
	}
	for j := 0; j < k; j++ {
		tol := 1e-10 * thin[0]
		if math.Abs(thin[j]-dense[j]) > tol {
			t.Errorf("eigenvalue %d: thin %g, dense %g", j, thin[j], dense[j])
		}
	}
	if countPositive(thin) != r {
		t.Errorf("thin: %d positive, want %d", countPositive(thin), r)
	}
	// B^T D B = I including the completed null-space columns.
	var db, btdb mat.Dense
	db.Mul(d, bt)
	btdb.Mul(bt.T(), &db)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(btdb.At(i, j)-want) > 1e-10 {
				t.Errorf("B^T D B [%d,%d] = %g", i, j, btdb.At(i, j))
			}
		}
	}
}
