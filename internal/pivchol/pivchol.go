// Package pivchol computes pivoted partial Cholesky factorizations of
// positive semidefinite matrices, A ~ L L^T with L n x r (Harbrecht, Peters &
// Schneider 2012): at each step the row with the largest residual variance
// (diagonal of A - L L^T) becomes a pivot. It is the rank-revealing
// factorization the project uses where a full eigendecomposition would be
// O(n^3) with a large constant: Nystrom maps on many landmarks, the output
// kernel of the exact path, and the feature covariance of the ridge solve.
package pivchol

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// Stop says when the factorization ends. It ends at the first of: the
// largest residual diagonal entry is <= MaxDiag; the sum of the positive
// residual diagonal entries is <= Trace; the rank reaches MaxRank (when > 0).
type Stop struct {
	MaxDiag, Trace float64
	MaxRank        int
}

// Factor factors the n x n positive semidefinite matrix A given by its
// diagonal (which Factor overwrites with the residual diagonal) and a
// function storing column p of A in dst. It returns the pivots in order and
// the columns of L (each of length n): L[j][piv[i]] = 0 for i > j, so the
// pivot rows of L form a lower triangular matrix.
func Factor(n int, diag []float64, column func(p int, dst []float64), stop Stop) (piv []int, cols [][]float64) {
	col := make([]float64, n)
	for len(cols) < n && (stop.MaxRank <= 0 || len(cols) < stop.MaxRank) {
		p, rest := 0, 0.0
		for i, v := range diag {
			if v > diag[p] {
				p = i
			}
			if v > 0 {
				rest += v
			}
		}
		if !(diag[p] > stop.MaxDiag) || rest <= stop.Trace {
			break
		}
		column(p, col)
		for _, c := range cols {
			if a := c[p]; a != 0 {
				floats.AddScaled(col, -a, c)
			}
		}
		s := 1 / math.Sqrt(diag[p])
		nc := make([]float64, n)
		for i := range nc {
			nc[i] = col[i] * s
			diag[i] -= nc[i] * nc[i]
		}
		// Rows already pivoted are exactly zero from here on.
		for _, q := range piv {
			nc[q] = 0
		}
		nc[p] = 1 / s
		diag[p] = 0
		piv = append(piv, p)
		cols = append(cols, nc)
	}
	return piv, cols
}
