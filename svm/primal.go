package svm

import (
	"context"
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
)

// primalBlock is the number of rows gathered per SYRK update of the
// generalized Hessian.
const primalBlock = 512

// solvePrimal minimizes f(w) = 1/2 w'w + C sum_i max(0, 1 - y_i w'x~_i)^2 by
// the generalized Newton method (Mangasarian 2002; Keerthi and DeCoste 2005):
// with I = {i : y_i w'x~_i < 1},
//
//	grad f = w - 2C sum_{i in I} (1 - y_i w'x~_i) y_i x~_i,
//	H      = I + 2C sum_{i in I} x~_i x~_i',
//
// the step s = H^{-1} grad and w <- w - t s with t the exact minimizer of
// the convex piecewise-quadratic f(w - t s), found by safeguarded Newton
// iterations on t.
func solvePrimal(ctx context.Context, x *mat.Dense, y []float64, o Options) (*Binary, error) {
	pr := newPrimal(x, y, o)
	n, p := len(y), pr.p
	var npos int
	for _, v := range y {
		if v > 0 {
			npos++
		}
	}
	eps := o.Tol * math.Max(1, float64(min(npos, n-npos))) / float64(n)

	w := make([]float64, p)
	z := make([]float64, n)  // y_i w'x~_i
	dz := make([]float64, n) // y_i s'x~_i
	idx := make([]int, 0, n) // line search scratch
	g := make([]float64, p)
	h := make([]float64, p*p)
	res := &Binary{}
	var g0 float64
	it := 0
	for ; it < o.MaxEpochs; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr.gradHessian(g, h, w, z)
		gn := floats.Norm(g, 2)
		if it == 0 {
			g0 = gn
		}
		if gn <= eps*g0 {
			res.Converged = true
			break
		}
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(p, h)) {
			return nil, errors.New("svm: generalized Hessian is not positive definite")
		}
		var sv mat.VecDense
		if err := chol.SolveVecTo(&sv, mat.NewVecDense(p, g)); err != nil {
			return nil, err
		}
		s := sv.RawVector().Data
		pr.margins(dz, s)
		t, _, _ := lineSearch(w, s, z, dz, pr.c2, idx)
		floats.AddScaled(w, -t, s)
		for i := range n {
			z[i] -= t * dz[i]
		}
	}
	res.Epochs = it
	res.W = w[:pr.d:pr.d]
	if pr.hasBias {
		res.Intercept = w[pr.d] * pr.bias
	}
	res.Alpha = make([]float64, n)
	for i := range n {
		res.Alpha[i] = pr.c2 * math.Max(0, 1-z[i])
	}
	return res, nil
}

// primalProblem is the problem of solvePrimal: the rows x~_i = (x_i, B)
// of X with the bias feature B when there is one (p = d + 1 values, else
// p = d), the labels y, 2C, and a buffer of primalBlock scaled rows.
type primalProblem struct {
	x       *mat.Dense
	y       []float64
	d, p    int
	bias    float64
	hasBias bool
	c2      float64
	block   []float64 // primalBlock rows of sqrt(2C) x~_i
}

// newPrimal returns the problem of solvePrimal for x, y and o.
func newPrimal(x *mat.Dense, y []float64, o Options) *primalProblem {
	_, d := x.Dims()
	pr := &primalProblem{x: x, y: y, d: d, p: d, bias: o.Bias, hasBias: o.Bias > 0, c2: 2 * o.C}
	if pr.hasBias {
		pr.p++
	}
	pr.block = make([]float64, primalBlock*pr.p)
	return pr
}

// row returns x~_i in buf.
func (pr *primalProblem) row(buf []float64, i int) []float64 {
	copy(buf, pr.x.RawRowView(i))
	if pr.hasBias {
		buf[pr.d] = pr.bias
	}
	return buf[:pr.p]
}

// gradHessian stores in g the gradient w - 2C sum_{i in I} (1 - z_i) y_i x~_i
// and in the upper triangle of h the generalized Hessian
// I + 2C sum_{i in I} x~_i x~_i' at w, with z_i = y_i w'x~_i and
// I = {i : z_i < 1}; the outer products are summed by blocks of
// primalBlock rows.
func (pr *primalProblem) gradHessian(g, h, w, z []float64) {
	p := pr.p
	sc := math.Sqrt(pr.c2)
	copy(g, w)
	clear(h)
	for j := range p {
		h[j*p+j] = 1
	}
	nb := 0
	flush := func() {
		gemm.Syrk(blas.Trans, blas64.General{Rows: nb, Cols: p, Stride: p, Data: pr.block}, blas64.Symmetric{Uplo: blas.Upper, N: p, Stride: p, Data: h})
		nb = 0
	}
	for i := range pr.y {
		m := 1 - z[i]
		if m <= 0 {
			continue
		}
		r := pr.block[nb*p : (nb+1)*p]
		pr.row(r, i)
		floats.AddScaled(g, -pr.c2*m*pr.y[i], r)
		floats.Scale(sc, r)
		nb++
		if nb == primalBlock {
			flush()
		}
	}
	flush()
}

// margins stores y_i s'x~_i in dz for every row.
func (pr *primalProblem) margins(dz, s []float64) {
	var sb float64
	if pr.hasBias {
		sb = s[pr.d] * pr.bias
	}
	for i, yi := range pr.y {
		dz[i] = yi * (floats.Dot(s[:pr.d], pr.x.RawRowView(i)) + sb)
	}
}

// lineSearch returns the minimizer over t >= 0 of
// phi(t) = 1/2 ||w - t s||^2 + C sum_i max(0, 1 - z_i + t dz_i)^2, whose
// derivative is phi'(t) = t s's - w's + 2C sum_{active} (1 - z_i + t dz_i) dz_i.
// phi' is continuous, increasing and piecewise linear; Newton steps on it
// are safeguarded by bisection on a bracket [lo, hi].
//
// A term whose sign does not change on the bracket is linear there, so it
// is folded into two sums (its constant and its slope) and dropped: each
// evaluation of phi' visits only the terms that switch inside the current
// bracket, a list that shrinks with the bracket. It also returns the number
// of evaluations of phi' and the number of terms they visited. idx is
// scratch space for n indices.
func lineSearch(w, s, z, dz []float64, c2 float64, idx []int) (t float64, evals, visited int) {
	ss, ws := floats.Dot(s, s), floats.Dot(w, s)
	// a and b sum c2 (1 - z_i) dz_i and c2 dz_i^2 over the terms active on
	// all of [lo, hi]; idx lists the terms that switch inside it.
	var a, b float64
	lo, hi := 0.0, 1.0
	// sweep evaluates phi' at hi over all terms and sorts them for the
	// bracket [lo, hi].
	sweep := func() (d1, d2 float64) {
		evals++
		visited += len(z)
		a, b, idx = 0, 0, idx[:0]
		var e1, e2 float64
		for i, zi := range z {
			m0, m1 := 1-zi+lo*dz[i], 1-zi+hi*dz[i]
			switch {
			case m0 > 0 && m1 > 0:
				a += c2 * (1 - zi) * dz[i]
				b += c2 * dz[i] * dz[i]
			case m0 > 0 || m1 > 0:
				idx = append(idx, i)
				if m1 > 0 {
					e1 += c2 * m1 * dz[i]
					e2 += c2 * dz[i] * dz[i]
				}
			}
		}
		return hi*ss - ws + a + hi*b + e1, ss + b + e2
	}
	// deriv evaluates phi' at t in [lo, hi] over the listed terms, folding
	// those that no longer switch inside the (narrowed) bracket.
	deriv := func(t float64) (d1, d2 float64) {
		evals++
		visited += len(idx)
		var e1, e2 float64
		k := 0
		for _, i := range idx {
			m0, m1 := 1-z[i]+lo*dz[i], 1-z[i]+hi*dz[i]
			switch {
			case m0 > 0 && m1 > 0:
				a += c2 * (1 - z[i]) * dz[i]
				b += c2 * dz[i] * dz[i]
				continue
			case m0 <= 0 && m1 <= 0:
				continue
			}
			idx[k] = i
			k++
			if m := 1 - z[i] + t*dz[i]; m > 0 {
				e1 += c2 * m * dz[i]
				e2 += c2 * dz[i] * dz[i]
			}
		}
		idx = idx[:k]
		return t*ss - ws + a + t*b + e1, ss + b + e2
	}
	d1, d2 := sweep()
	for d1 < 0 && hi < 1e6 {
		lo, hi = hi, 2*hi
		d1, d2 = sweep()
	}
	t = hi
	for range 60 {
		if d1 == 0 {
			return t, evals, visited
		}
		if d1 > 0 {
			hi = t
		} else {
			lo = t
		}
		nt := t - d1/d2
		// At the root the Newton step is rounding-sized and may leave the
		// bracket by a hair (t is one of its ends): stop before the
		// bisection walks the whole bracket back to t.
		if math.Abs(nt-t) <= 1e-12*math.Max(1, t) {
			return t, evals, visited
		}
		if !(nt > lo && nt < hi) {
			nt = (lo + hi) / 2
		}
		t = nt
		d1, d2 = deriv(t)
	}
	return t, evals, visited
}
