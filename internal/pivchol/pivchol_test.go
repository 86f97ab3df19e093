package pivchol

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestFactor checks A = L L^T for a full-rank SPD matrix, the exact rank of
// a rank-deficient one, and the triangular structure of the pivot rows.
func TestFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ n, rank int }{{1, 1}, {7, 7}, {40, 40}, {40, 5}, {60, 1}} {
		x := mat.NewDense(tc.n, tc.rank, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = rng.NormFloat64()
		}
		var a mat.Dense
		a.Mul(x, x.T())
		diag := make([]float64, tc.n)
		for i := range diag {
			diag[i] = a.At(i, i)
		}
		tol := 1e-12 * mat.Norm(&a, math.Inf(1))
		piv, cols := Factor(tc.n, diag, func(p int, dst []float64) { mat.Col(dst, p, &a) }, Stop{MaxDiag: tol})
		if len(cols) != tc.rank {
			t.Fatalf("n = %d: rank %d, want %d", tc.n, len(cols), tc.rank)
		}
		l := mat.NewDense(tc.n, len(cols), nil)
		for j, c := range cols {
			l.SetCol(j, c)
		}
		var back mat.Dense
		back.Mul(l, l.T())
		back.Sub(&back, &a)
		if e := mat.Norm(&back, 2) / mat.Norm(&a, 2); e > 1e-12 {
			t.Errorf("n = %d, rank %d: ||A - L L^T|| / ||A|| = %.3g", tc.n, tc.rank, e)
		}
		for i, p := range piv {
			for j := i + 1; j < len(cols); j++ {
				if cols[j][p] != 0 {
					t.Fatalf("pivot row %d has a nonzero in column %d", i, j)
				}
			}
			if cols[i][p] <= 0 {
				t.Fatalf("pivot %d is not positive", i)
			}
		}
	}
}

// TestStopRules checks MaxRank and the trace rule.
func TestStopRules(t *testing.T) {
	n := 30
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		a.Set(i, i, math.Pow(0.5, float64(i)))
	}
	get := func() []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = a.At(i, i)
		}
		return d
	}
	col := func(p int, dst []float64) { mat.Col(dst, p, a) }
	if _, c := Factor(n, get(), col, Stop{MaxRank: 4}); len(c) != 4 {
		t.Errorf("MaxRank 4: rank %d", len(c))
	}
	// The trace of the rest after r pivots is 2^{1-r} - 2^{1-n}, <= 0.02
	// first at r = 7.
	if _, c := Factor(n, get(), col, Stop{Trace: 0.02}); len(c) != 7 {
		t.Errorf("trace rule: rank %d, want 7", len(c))
	}
	if _, c := Factor(n, get(), col, Stop{MaxDiag: math.Pow(0.5, 10) * 1.01}); len(c) != 10 {
		t.Errorf("diag rule: rank %d, want 10", len(c))
	}
}
