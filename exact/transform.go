package exact

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Centering selects how new kernel rows are centered by Transform.
type Centering int

const (
	// DefaultCentering is TrainCentering for the canonical form and
	// BatchCentering for the paper form (dica.m's convention).
	DefaultCentering Centering = iota
	// TrainCentering centers with the training means (inductive: each point
	// is projected independently of the others in its batch):
	//
	//	k_c(x)_p = k(x, x_p) - mean_q k(x, x_q) - KColMean_p + KMean.
	TrainCentering
	// BatchCentering centers with the batch's own column means, H_t K_t H
	// (transductive, as dica.m). It also removes the batch's mean shift; a
	// single point projects to 0.
	BatchCentering
)

// TransformOptions configures Transform.
type TransformOptions struct {
	// Scale divides component j by sqrt(gamma_j) (dica.m's convention). For
	// UDICA and KPCA in the canonical form the training features then have
	// Z^T Z = n I, since B^T K^2 B / n = Gamma. It is ignored in the paper
	// form, whose coefficients are already scaled.
	Scale bool
	// Center selects the centering of the kernel rows.
	Center Centering
}

// transformBlock bounds the rows of a batch whose kernel rows are held at once.
const transformBlock = 512

// Transform returns the projection Z (t x k) of the rows of x (t x d):
// z(x) = B^T k_c(x), with k_c(x) the kernel row of x on the training points,
// centered as o.Center says. Projecting the training points with
// TrainCentering gives K_c B exactly (TrainProjection) in the Positive
// leading columns; the columns of the components that are not positive
// (the null space of the numerator, which carries no signal) are 0.
//
// For the positive components of the canonical form B^T 1 = 0 (D 1 = lambda 1
// and A 1 = 0), so the inductive projection of those is simply
// B^T (k(x) - KColMean): the row-mean terms cancel. Transform applies the
// full formula, which is also right for the null-space components.
//
// Kernel rows are computed in blocks of 512, so memory is O(512 n + t k).
func (m *Model) Transform(x *mat.Dense, o TransformOptions) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, errors.New("exact: Transform: no points")
	}
	t, d := x.Dims()
	if _, dm := m.X.Dims(); d != dm {
		return nil, fmt.Errorf("exact: Transform: points have %d columns, the model was fitted on %d", d, dm)
	}
	for r := 0; r < t; r++ {
		for c, v := range x.RawRowView(r) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("exact: Transform: row %d, column %d: value %v is not finite", r, c, v)
			}
		}
	}
	center := o.Center
	if center == DefaultCentering {
		center = TrainCentering
		if m.Form == Paper {
			center = BatchCentering
		}
	}
	if center != TrainCentering && center != BatchCentering {
		return nil, fmt.Errorf("exact: Transform: unknown centering %d", center)
	}
	n, k := m.B.Dims()

	// b1 = B^T 1 and bm = B^T KColMean.
	b1 := make([]float64, k)
	bm := make([]float64, k)
	for p := 0; p < n; p++ {
		row := m.B.RawRowView(p)
		for j, v := range row {
			b1[j] += v
			bm[j] += v * m.KColMean[p]
		}
	}

	z := mat.NewDense(t, k, nil)
	rm := make([]float64, t) // row means of the kernel rows
	var kx mat.Dense
	for r0 := 0; r0 < t; r0 += transformBlock {
		r1 := min(r0+transformBlock, t)
		xb := x.Slice(r0, r1, 0, d)
		kx.Reset()
		kx.ReuseAs(r1-r0, n)
		m.Kernel.Block(&kx, xb, m.X)
		for r := r0; r < r1; r++ {
			var s float64
			for _, v := range kx.RawRowView(r - r0) {
				s += v
			}
			rm[r] = s / float64(n)
		}
		zb := z.Slice(r0, r1, 0, k).(*mat.Dense)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, kx.RawMatrix(), m.B.RawMatrix(), 0, zb.RawMatrix())
	}

	// z_r = Y_r - rm_r b1 - c, with c = B^T KColMean - KMean b1 (training)
	// or c = mean_r' Y_r' - mean(rm) b1 (batch).
	c := make([]float64, k)
	if center == TrainCentering {
		for j := range c {
			c[j] = bm[j] - m.KMean*b1[j]
		}
	} else {
		var g float64
		for r := 0; r < t; r++ {
			g += rm[r]
			for j, v := range z.RawRowView(r) {
				c[j] += v
			}
		}
		g /= float64(t)
		for j := range c {
			c[j] = c[j]/float64(t) - g*b1[j]
		}
	}
	scale := make([]float64, k)
	for j := range scale {
		switch {
		case j >= m.Positive:
			scale[j] = 0 // null space of the numerator: no signal
		case o.Scale && m.Form == Canonical:
			scale[j] = 1 / math.Sqrt(m.Eigenvalues[j])
		default:
			scale[j] = 1
		}
	}
	for r := 0; r < t; r++ {
		row := z.RawRowView(r)
		for j := range row {
			row[j] = (row[j] - rm[r]*b1[j] - c[j]) * scale[j]
		}
	}
	return z, nil
}

// TrainProjection returns a copy of K_c B (n x k), the projection of the
// training points with training centering.
func (m *Model) TrainProjection() *mat.Dense { return mat.DenseCopyOf(m.train) }

// Components returns the positive components only: their eigenvalues and
// coefficient columns (a view of B, not a copy).
func (m *Model) Components() ([]float64, *mat.Dense) {
	n, _ := m.B.Dims()
	if m.Positive == 0 {
		return nil, nil
	}
	return m.Eigenvalues[:m.Positive], m.B.Slice(0, n, 0, m.Positive).(*mat.Dense)
}
