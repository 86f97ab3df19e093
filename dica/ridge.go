package dica

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/pivchol"
)

// ridgeBasis holds the pieces of the lambda > 0 solve (solveRidge) that
// depend on the feature statistics alone, not on lambda or the method:
// the factor Y of C ~ Y Y^T (pivoted Cholesky stopped at rcond times the
// largest diagonal entry), Y^T Y and (Y^T Y)^2 / n. A sweep over lambda
// and methods (Family) computes them once.
type ridgeBasis struct {
	rcond float64
	y     *mat.Dense
	yty   *mat.SymDense
	p     int
	err   error
	sq    *mat.Dense // (Y^T Y)^2 / n, when computed
}

// ridgeBasis returns the ridge basis of fs for rcond, computed on the
// first call (and again for another rcond).
func (fs *featureStats) ridgeBasis(rcond float64) (*ridgeBasis, error) {
	fs.ridgeMu.Lock()
	defer fs.ridgeMu.Unlock()
	if rb := fs.ridge; rb != nil && rb.rcond == rcond {
		return rb, rb.err
	}
	rb := &ridgeBasis{rcond: rcond}
	fs.ridge = rb
	m := fs.m
	cr := fs.c.RawSymmetric()
	diag := make([]float64, m)
	dmax := 0.0
	for i := range diag {
		diag[i] = cr.Data[i*cr.Stride+i]
		dmax = max(dmax, diag[i])
	}
	if !(dmax > 0) {
		rb.err = fmt.Errorf("dica: the features have zero variance")
		return rb, rb.err
	}
	_, cols := pivchol.Factor(m, diag, func(p int, dst []float64) {
		for i := range dst {
			dst[i] = cr.Data[min(i, p)*cr.Stride+max(i, p)]
		}
	}, pivchol.Stop{MaxDiag: rcond * dmax})
	rb.p = len(cols)
	rb.y = mat.NewDense(m, rb.p, nil)
	for j, c := range cols {
		rb.y.SetCol(j, c)
	}
	rb.yty = new(mat.SymDense)
	rb.yty.SymOuterK(1, rb.y.T())
	return rb, nil
}

// ridgeSquare returns (Y^T Y)^2 / n of the ridge basis rb of fs, computed
// on the first call. The caller must not change it.
func (fs *featureStats) ridgeSquare(rb *ridgeBasis) *mat.Dense {
	fs.ridgeMu.Lock()
	defer fs.ridgeMu.Unlock()
	if rb.sq == nil {
		a := symSquare(rb.yty)
		a.Scale(1/fs.n, a)
		rb.sq = a
	}
	return rb.sq
}

// symSquare returns S S for the symmetric S, as gonum's Dense.Mul(S, S)
// computes it, bit for bit: element (r, c) is the sum over i, in order, of
// S[r][i] S[i][c], each product rounded and added (Mul has no faster path
// for two symmetric matrices and reads them element by element). Reading
// S[i][c] as S[c][i] and computing one triangle (the products of (c, r)
// are those of (r, c)) makes it several times faster.
func symSquare(s *mat.SymDense) *mat.Dense {
	n := s.SymmetricDim()
	full := mat.NewDense(n, n, nil)
	raw := s.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := raw.Data[i*raw.Stride+j]
			full.Set(i, j, v)
			full.Set(j, i, v)
		}
	}
	out := mat.NewDense(n, n, nil)
	for r := 0; r < n; r++ {
		row := full.RawRowView(r)
		c := r
		// Four elements at a time: four independent sums, each in the
		// order of the single one.
		for ; c+4 <= n; c += 4 {
			c0 := full.RawRowView(c)[:len(row)]
			c1 := full.RawRowView(c + 1)[:len(row)]
			c2 := full.RawRowView(c + 2)[:len(row)]
			c3 := full.RawRowView(c + 3)[:len(row)]
			var v0, v1, v2, v3 float64
			for i, e := range row {
				v0 += e * c0[i]
				v1 += e * c1[i]
				v2 += e * c2[i]
				v3 += e * c3[i]
			}
			for j, v := range [4]float64{v0, v1, v2, v3} {
				out.Set(r, c+j, v)
				out.Set(c+j, r, v)
			}
		}
		for ; c < n; c++ {
			col := full.RawRowView(c)[:len(row)]
			var v float64
			for i, e := range row {
				v += e * col[i]
			}
			out.Set(r, c, v)
			out.Set(c, r, v)
		}
	}
	return out
}
