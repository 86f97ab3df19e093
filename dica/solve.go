package dica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/lanczos"
)

// featureStats are the statistics in feature coordinates (dimension m).
type featureStats struct {
	n float64
	// nl is the number of points of the label term (docs/MATH.md,
	// "Partial labels"): those with a class label for a supervised method
	// with class labels, every point otherwise.
	nl   float64
	mu   []float64     // mean feature
	mc   *mat.Dense    // N x m: domain means minus their unweighted mean
	c    *mat.SymDense // Phi_c^T Phi_c (nil unless needed)
	g    *mat.Dense    // m x r: numerator factor, G = g g^T (supervised)
	m, N int

	// ridge caches the pieces of the lambda > 0 solve that depend on the
	// statistics alone (ridgeBasis), for the solves of a Family.
	ridgeMu sync.Mutex
	ridge   *ridgeBasis
}

// transformRaw returns T^T v for a raw-coordinate vector.
func transformRaw(t *mat.Dense, v []float64) []float64 {
	if t == nil {
		return slices.Clone(v)
	}
	_, m := t.Dims()
	out := make([]float64, m)
	blas64.Gemv(blas.Trans, 1, t.RawMatrix(), blas64.Vector{N: len(v), Inc: 1, Data: v}, 0,
		blas64.Vector{N: m, Inc: 1, Data: out})
	return out
}

func mapTransform(m approx.Map) *mat.Dense {
	if f, ok := m.(approx.Factored); ok {
		return f.Transform()
	}
	return nil
}

// features converts the raw statistics into feature coordinates and checks
// the data requirements of the method.
//
// Every centered quantity is formed from the shifted raw sums before the
// map's transform T is applied: with k' = k(x) - c the shifted raw features
// and dbar their mean,
//
//	mu        = T^T (c + dbar),
//	M_i - M̄   = T^T (d_i / n_i) - (1/N) sum_j T^T (d_j / n_j),   d_i = sum_{x in i} k',
//	C         = T^T (sum k' k'^T - n dbar dbar^T) T,
//	F (class) = T^T (sum_{x in j} k' - n_j dbar_L),
//	F (reg.)  = T^T (sum k' psi'^T - n dbar ebar^T),
//	S (reg.)  = sum psi' psi'^T - n ebar ebar^T,
//
// with psi' the shifted output features and ebar their mean, and dbar_L
// the mean shifted raw feature of the n_L labelled points (dbar itself when
// every point is labelled). The shifts c and c_y cancel exactly; the
// subtractions involve differences from a representative point, not the
// raw magnitudes.
func (s *Stats) features() (*featureStats, error) {
	cfg := s.plan.Config
	a := &s.acc
	if a.n == 0 {
		return nil, fmt.Errorf("dica: no points")
	}
	if cfg.needsGram() && !a.gram {
		return nil, fmt.Errorf("dica: the statistics lack the Gram sum that %v needs (split off by SplitGram: JoinGram it back)", cfg.Method)
	}
	counts := s.DomainCounts()
	for i, c := range counts {
		if c < 2 {
			return nil, fmt.Errorf("dica: domain %q has %d point(s); every domain needs at least 2", s.Domains[i], c)
		}
	}
	N := len(counts)
	if cfg.domainTerm() && N < 2 {
		return nil, fmt.Errorf("dica: %d domain(s); %v needs at least 2 (use %v for one domain)", N, cfg.Method, map[Method]Method{DICA: COIR, UDICA: KPCA}[cfg.Method])
	}
	t := mapTransform(s.plan.inMap)
	m := s.plan.inMap.Dim()
	n := float64(a.n)
	fs := &featureStats{n: n, nl: n, m: m, N: N}
	// dbar: mean shifted raw feature.
	dbar := make([]float64, a.mraw)
	for _, v := range a.domSum {
		addTo(dbar, v)
	}
	floats.Scale(1/n, dbar)
	{
		raw := slices.Clone(dbar)
		if c := s.plan.negInShift; c != nil {
			floats.Sub(raw, c) // dbar + c
		}
		fs.mu = transformRaw(t, raw)
	}
	{
		fs.mc = mat.NewDense(N, m, nil)
		mbar := make([]float64, m)
		di := make([]float64, a.mraw)
		for i := 0; i < N; i++ {
			floats.ScaleTo(di, 1/float64(counts[i]), a.domSum[i])
			mi := transformRaw(t, di)
			fs.mc.SetRow(i, mi)
			floats.Add(mbar, mi)
		}
		floats.Scale(1/float64(N), mbar)
		for i := 0; i < N; i++ {
			floats.Sub(fs.mc.RawRowView(i), mbar)
		}
	}
	if cfg.needsGram() {
		g := mat.NewSymDense(a.mraw, nil)
		for i := 0; i < a.mraw; i++ {
			for j := i; j < a.mraw; j++ {
				g.SetSym(i, j, a.gramSum[i*a.mraw+j])
			}
		}
		g.SymRankOne(g, -n, mat.NewVecDense(a.mraw, dbar))
		c := mat.NewSymDense(m, nil)
		if t != nil {
			symFrom(c, congruence(t, g, max(1, cfg.Workers)))
		} else {
			c.CopySym(g)
		}
		fs.c = c
	}
	if cfg.supervised() {
		dlab := dbar
		if s.plan.outMap == nil {
			// Class labels: the label term is over the labelled points.
			dlab = s.labelledMean(dbar, fs)
		}
		g, err := s.numeratorFactor(t, dlab, fs, fs.nl*cfg.Epsilon)
		if err != nil {
			return nil, err
		}
		fs.g = g
	}
	if finite(fs.mc) != nil || fs.g != nil && finite(fs.g) != nil || fs.c != nil && !finiteSym(fs.c) || !finiteVec(fs.mu) {
		return nil, errNotFinite
	}
	return fs, nil
}

// labelledMean sets fs.nl to the number n_L of points with a class label
// and returns dbar_L, the mean shifted raw feature over them: dbar (the
// mean over every point, given) when every point is labelled, so that
// statistics of fully labelled data solve as they always did, bit for
// bit; else the sum of the class sums divided by n_L.
func (s *Stats) labelledMean(dbar []float64, fs *featureStats) []float64 {
	var nl int64
	for _, c := range s.acc.clsCount {
		nl += c
	}
	if nl == s.acc.n || nl == 0 {
		return dbar
	}
	fs.nl = float64(nl)
	d := make([]float64, s.acc.mraw)
	for j, c := range s.acc.clsCount {
		if c > 0 {
			addTo(d, s.acc.clsSum[j])
		}
	}
	floats.Scale(1/fs.nl, d)
	return d
}

// congruence returns T^T G T (T is r x m, G symmetric r x r) by two
// products of internal/gemm on up to workers goroutines (the result does
// not depend on workers): T^T G, then (T^T G) T.
func congruence(t *mat.Dense, g *mat.SymDense, workers int) *mat.Dense {
	r, m := t.Dims()
	gr := g.RawSymmetric()
	full := make([]float64, r*r)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			v := gr.Data[i*gr.Stride+j]
			full[i*r+j], full[j*r+i] = v, v
		}
	}
	tr := t.RawMatrix()
	tg := mat.NewDense(m, r, nil)
	gemm.Gemm(blas.Trans, blas.NoTrans, 1, tr, blas64.General{Rows: r, Cols: r, Stride: r, Data: full}, tg.RawMatrix(), workers)
	out := mat.NewDense(m, m, nil)
	gemm.Gemm(blas.NoTrans, blas.NoTrans, 1, tg.RawMatrix(), tr, out.RawMatrix(), workers)
	return out
}

// numeratorFactor returns g = F R^{-1}, the factor of the numerator
// G = g g^T, from F (m x r) and S = R^T R + ridge I of the output features
// (class labels or real targets); dbar is the mean shifted raw feature of
// the points of the label term.
func (s *Stats) numeratorFactor(t *mat.Dense, dbar []float64, fs *featureStats, ridge float64) (*mat.Dense, error) {
	var f, sm *mat.Dense
	if s.plan.outMap != nil {
		f, sm = s.regressionFactor(t, dbar, fs)
	} else {
		var err error
		f, sm, err = s.classFactor(t, dbar, fs)
		if err != nil {
			return nil, err
		}
	}
	// S + n eps I, then g = F R^{-1} with S = R^T R.
	r, _ := sm.Dims()
	for i := 0; i < r; i++ {
		sm.Set(i, i, sm.At(i, i)+ridge)
	}
	var chol mat.Cholesky
	if !chol.Factorize(symOf(sm)) {
		return nil, fmt.Errorf("dica: the output Gram matrix is not positive definite; increase epsilon")
	}
	var rr mat.TriDense
	chol.UTo(&rr)
	// g = F R^{-1}: solve g R = F, i.e. R^T g^T = F^T.
	g := mat.DenseCopyOf(f)
	gr := g.RawMatrix()
	blas64.Trsm(blas.Right, blas.NoTrans, 1, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: r, Stride: rr.RawTriangular().Stride, Data: rr.RawTriangular().Data}, gr)
	return g, nil
}

// classFactor returns F = Phi_c^T Psi (m x c) and S = Psi^T Psi (c x c) for
// the delta output kernel, Psi the one-hot labels of the n_L labelled
// points centered over them (docs/MATH.md, "3. The low-rank reduction" and
// "Partial labels"): column j of F is T^T (sum_{x in class j} k' - n_j
// dbar), dbar the mean over the labelled points, and S has entries
// n_j [j = k] - n_j n_k / n_L.
func (s *Stats) classFactor(t *mat.Dense, dbar []float64, fs *featureStats) (f, sm *mat.Dense, err error) {
	counts := s.ClassCounts()
	present := 0
	for _, c := range counts {
		if c > 0 {
			present++
		}
	}
	if present < 2 {
		return nil, nil, fmt.Errorf("dica: one class only (%d class(es) with points); supervised %v needs at least 2", present, s.plan.Config.Method)
	}
	c := len(counts)
	f = mat.NewDense(fs.m, c, nil)
	sm = mat.NewDense(c, c, nil)
	raw := make([]float64, s.acc.mraw)
	for j := 0; j < c; j++ {
		nj := float64(counts[j])
		if nj > 0 {
			copy(raw, s.acc.clsSum[j])
			floats.AddScaled(raw, -nj, dbar)
			f.SetCol(j, transformRaw(t, raw))
		}
		for k := 0; k < c; k++ {
			v := -nj * float64(counts[k]) / fs.nl
			if j == k {
				v += nj
			}
			sm.Set(j, k, v)
		}
	}
	return f, sm, nil
}

// regressionFactor returns F = Phi_c^T Psi_c (m x r) and S = Psi_c^T Psi_c
// (r x r) for an output kernel represented by features psi, from the sums
// of the shifted output features psi' (see features).
func (s *Stats) regressionFactor(t *mat.Dense, dbar []float64, fs *featureStats) (f, sm *mat.Dense) {
	a := &s.acc
	r := a.rout
	ebar := slices.Clone(a.sumPsi)
	floats.Scale(1/fs.n, ebar)
	sm = mat.NewDense(r, r, slices.Clone(a.sumPsiPsi))
	sm.RankOne(sm, -fs.n, mat.NewVecDense(r, ebar), mat.NewVecDense(r, ebar))
	fp := mat.NewDense(a.mraw, r, slices.Clone(a.sumPhiPsi))
	fp.RankOne(fp, -fs.n, mat.NewVecDense(a.mraw, dbar), mat.NewVecDense(r, ebar))
	if t == nil {
		return fp, sm
	}
	f = new(mat.Dense)
	f.Mul(t.T(), fp)
	return f, sm
}

// solution is the result of a solve in feature coordinates.
type solution struct {
	w      *mat.Dense // m x k, columns are components (positive first)
	values []float64  // all returned eigenvalues, largest first
}

// solve solves the reduced generalized eigenproblem (docs/MATH.md, "5. The
// solve"):
//
//	(1/n_L) G w = gamma (C_Q + I + lambda C^{-1}) w,
//
// with G = g g^T (supervised; n_L the points of the label term) or C
// (UDICA, KPCA; n_L = n), and returns the k leading components, normalized
// so that W^T (C_Q + I + lambda C^{-1}) W = I.
func (fs *featureStats) solve(cfg Config) (*solution, error) {
	k := cfg.Components
	var cq *lowRank
	if cfg.domainTerm() {
		var err error
		if cq, err = newLowRank(fs.mc, fs.N, cfg.RCond); err != nil {
			return nil, err
		}
	}
	if cfg.Lambda == 0 {
		if fs.g != nil {
			return fs.solveLowRankNumerator(cq, k)
		}
		return fs.solveFullNumerator(cq, k)
	}
	return fs.solveRidge(cq, cfg)
}

// lowRank represents C_Q = U diag(e) U^T with U orthonormal (m x p).
type lowRank struct {
	u *mat.Dense
	e []float64
}

// newLowRank builds C_Q = Mc^T Mc / N (Mc is N x m) through the smaller of
// two eigenproblems with the same nonzero eigenvalues, dropping eigenvalues
// below rcond times the largest: the N x N one of Mc Mc^T / N when N <= m,
// else the m x m one of C_Q itself, so that many domains cost no more than
// the rank (5,000 domains at m = 500: a decomposition of size 500, not one
// of size 5,000 that took minutes).
func newLowRank(mc *mat.Dense, N int, rcond float64) (*lowRank, error) {
	if rows, mdim := mc.Dims(); rows > mdim {
		return newLowRankFeatures(mc, N, rcond)
	}
	var small mat.SymDense
	small.SymOuterK(1/float64(N), mc)
	if !finiteSym(&small) {
		return nil, errNotFinite
	}
	var es mat.EigenSym
	if !es.Factorize(&small, true) {
		panic("dica: eigendecomposition of the domain-mean Gram matrix failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	emax := floats.Max(vals)
	lr := &lowRank{}
	_, mdim := mc.Dims()
	var cols [][]float64
	for j, e := range vals {
		if e <= rcond*emax || e <= 0 {
			continue
		}
		// u = Mc^T v / sqrt(N e)
		v := mat.Col(nil, j, &vecs)
		u := make([]float64, mdim)
		blas64.Gemv(blas.Trans, 1/math.Sqrt(float64(N)*e), mc.RawMatrix(),
			blas64.Vector{N: len(v), Inc: 1, Data: v}, 0, blas64.Vector{N: mdim, Inc: 1, Data: u})
		cols = append(cols, u)
		lr.e = append(lr.e, e)
	}
	if len(cols) > 0 {
		lr.u = mat.NewDense(mdim, len(cols), nil)
		for j, c := range cols {
			lr.u.SetCol(j, c)
		}
	}
	return lr, nil
}

// newLowRankFeatures is newLowRank through the m x m eigenproblem of
// C_Q = Mc^T Mc / N: U holds its eigenvectors of eigenvalues above rcond
// times the largest.
func newLowRankFeatures(mc *mat.Dense, N int, rcond float64) (*lowRank, error) {
	var cq mat.SymDense
	cq.SymOuterK(1/float64(N), mc.T())
	if !finiteSym(&cq) {
		return nil, errNotFinite
	}
	var es mat.EigenSym
	if !es.Factorize(&cq, true) {
		panic("dica: eigendecomposition of the domain-mean covariance failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	emax := floats.Max(vals)
	lr := &lowRank{}
	var keep []int
	for j, e := range vals {
		if e <= rcond*emax || e <= 0 {
			continue
		}
		keep = append(keep, j)
		lr.e = append(lr.e, e)
	}
	if len(keep) > 0 {
		_, mdim := mc.Dims()
		lr.u = mat.NewDense(mdim, len(keep), nil)
		for c, j := range keep {
			lr.u.SetCol(c, mat.Col(nil, j, &vecs))
		}
	}
	return lr, nil
}

// applyFunc stores (I + U diag(f(e) - 1) U^T) x in place of x, i.e. the
// function f of the operator I + C_Q applied to the columns of x (f(1+e)
// on range(U), f(1) = 1 elsewhere).
func (lr *lowRank) applyFunc(x *mat.Dense, f func(float64) float64) {
	if lr == nil || lr.u == nil {
		return
	}
	_, p := lr.u.Dims()
	var ut mat.Dense
	ut.Mul(lr.u.T(), x) // p x r
	for i := 0; i < p; i++ {
		floats.Scale(f(1+lr.e[i])-1, ut.RawRowView(i))
	}
	var corr mat.Dense
	corr.Mul(lr.u, &ut)
	x.Add(x, &corr)
}

// solveLowRankNumerator: lambda = 0 and G = g g^T. The nonzero eigenpairs
// come from the r x r matrix g^T B0^{-1} g / n_L with B0 = I + C_Q, and
// w = B0^{-1} g u / sqrt(n_L gamma) (docs/MATH.md, "5. The solve", lambda =
// 0; n_L = n unless some points have no label). No m x m decomposition.
func (fs *featureStats) solveLowRankNumerator(cq *lowRank, k int) (*solution, error) {
	h := mat.DenseCopyOf(fs.g)
	cq.applyFunc(h, func(x float64) float64 { return 1 / x })
	var small mat.Dense
	small.Mul(fs.g.T(), h)
	small.Scale(1/fs.nl, &small)
	vals, vecs, err := topEigenFinite(symOf(&small), min(k, fs.m))
	if err != nil {
		return nil, err
	}
	w := mat.NewDense(fs.m, len(vals), nil)
	for j, g := range vals {
		if g <= 0 {
			continue
		}
		col := make([]float64, fs.m)
		blas64.Gemv(blas.NoTrans, 1/math.Sqrt(fs.nl*g), h.RawMatrix(),
			blas64.Vector{N: vecs.RawMatrix().Rows, Inc: vecs.RawMatrix().Stride, Data: vecs.RawMatrix().Data[j:]},
			0, blas64.Vector{N: fs.m, Inc: 1, Data: col})
		w.SetCol(j, col)
	}
	return &solution{w: w, values: padValues(vals, min(k, fs.m))}, nil
}

// solveFullNumerator: lambda = 0 and G = C (UDICA, KPCA). Solve the
// symmetric problem B0^{-1/2} (C/n) B0^{-1/2} v = gamma v, w = B0^{-1/2} v.
func (fs *featureStats) solveFullNumerator(cq *lowRank, k int) (*solution, error) {
	a := mat.DenseCopyOf(fs.c)
	a.Scale(1/fs.n, a)
	isqrt := func(x float64) float64 { return 1 / math.Sqrt(x) }
	cq.applyFunc(a, isqrt)
	at := mat.DenseCopyOf(a.T())
	cq.applyFunc(at, isqrt)
	vals, vecs, err := topEigenFinite(symOf(at), min(k, fs.m))
	if err != nil {
		return nil, err
	}
	cq.applyFunc(vecs, isqrt)
	return &solution{w: vecs, values: vals}, nil
}

// solveRidge: lambda > 0, through a rank-revealing factorization
// C ~ Y Y^T of C = Phi_c^T Phi_c (docs/MATH.md, "5. The solve", uses
// C = V S V^T, Y = V S^{1/2};
// any factor with C = Y Y^T gives the same problem, and a pivoted Cholesky
// factorization stopping at RCond times the largest diagonal entry costs
// O(m p^2) instead of a full eigendecomposition). With W = Y beta,
//
//	W^T W = beta^T Y^T Y beta,  W^T C_Q W = beta^T Y^T C_Q Y beta,
//	lambda W^T C^{-1} W = lambda beta^T beta,
//
// so the problem is (1/n) Y^T G Y beta = gamma (Y^T C_Q Y + Y^T Y + lambda I)
// beta, symmetric-definite of size p.
func (fs *featureStats) solveRidge(cq *lowRank, cfg Config) (*solution, error) {
	rb, err := fs.ridgeBasis(cfg.RCond)
	if err != nil {
		return nil, err
	}
	y, yty, p := rb.y, rb.yty, rb.p
	// D' = Y^T C_Q Y + Y^T Y + lambda I.
	d := mat.NewSymDense(p, nil)
	d.CopySym(yty)
	if cq != nil && cq.u != nil {
		var yu mat.Dense
		yu.Mul(y.T(), cq.u) // p x q
		_, q := yu.Dims()
		for l := 0; l < q; l++ {
			d.SymRankOne(d, cq.e[l], mat.NewVecDense(p, mat.Col(nil, l, &yu)))
		}
	}
	for i := 0; i < p; i++ {
		d.SetSym(i, i, d.At(i, i)+cfg.Lambda)
	}
	rt, ok := choleskyInPlace(d)
	if !ok {
		return nil, fmt.Errorf("dica: the reduced denominator is not positive definite")
	}
	k := min(cfg.Components, p)
	var vals []float64
	var beta *mat.Dense
	if fs.g != nil {
		// a = Y^T g / sqrt(n_L); h = R^{-T} a; eig of h^T h.
		h := new(mat.Dense)
		h.Mul(y.T(), fs.g)
		h.Scale(1/math.Sqrt(fs.nl), h)
		blas64.Trsm(blas.Left, blas.Trans, 1, rt, h.RawMatrix())
		var small mat.Dense
		small.Mul(h.T(), h)
		ev, u, err := topEigenFinite(symOf(&small), k)
		if err != nil {
			return nil, err
		}
		vals = padValues(ev, k)
		beta = mat.NewDense(p, len(ev), nil)
		for j, g := range ev {
			if g <= 0 {
				continue
			}
			col := make([]float64, p)
			blas64.Gemv(blas.NoTrans, 1/math.Sqrt(g), h.RawMatrix(),
				blas64.Vector{N: u.RawMatrix().Rows, Inc: u.RawMatrix().Stride, Data: u.RawMatrix().Data[j:]},
				0, blas64.Vector{N: p, Inc: 1, Data: col})
			beta.SetCol(j, col)
		}
	} else {
		// A' = Y^T C Y / n = (Y^T Y)^2 / n; symmetric R^{-T} A' R^{-1}.
		a := mat.DenseCopyOf(fs.ridgeSquare(rb))
		blas64.Trsm(blas.Left, blas.Trans, 1, rt, a.RawMatrix())
		blas64.Trsm(blas.Right, blas.NoTrans, 1, rt, a.RawMatrix())
		var err error
		if vals, beta, err = topEigenFinite(symOf(a), k); err != nil {
			return nil, err
		}
	}
	// beta = R^{-1} y
	blas64.Trsm(blas.Left, blas.NoTrans, 1, rt, beta.RawMatrix())
	var w mat.Dense
	w.Mul(y, beta)
	return &solution{w: &w, values: vals}, nil
}

// choleskyInPlace factors the symmetric positive definite a (upper
// storage) as R^T R in place, R upper triangular, and returns R in a's
// upper triangle: the factor mat.Cholesky.Factorize computes, bit for bit
// (both are lapack64.Potrf on the upper triangle), without its copy of a
// and its condition number estimate. It returns false, with a destroyed,
// when a is not positive definite.
func choleskyInPlace(a *mat.SymDense) (blas64.Triangular, bool) {
	r := a.RawSymmetric()
	if r.Uplo != blas.Upper {
		panic("dica: choleskyInPlace of a lower-stored matrix")
	}
	_, ok := lapack64.Potrf(r)
	return blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: r.N, Stride: r.Stride, Data: r.Data}, ok
}

// lanczosMin is the size from which topEigen uses the Lanczos solver
// instead of a dense eigendecomposition (dense EigenSym with vectors costs
// 0.26 s at 500, 42 s at 2000; Lanczos for k = 10 a few hundred
// matrix-vector products). Lanczos already wins from about n = 80
// (exact.LanczosMin, measured); below 300 the dense solve takes under 50 ms,
// nothing beside the pass over the data, and is exact to rounding, so the
// m x m solves of a fit keep the dense path there.
const lanczosMin = 300

// Test hooks of topEigen: lanczosHook adjusts the settings of its Lanczos
// solves, eigenTrace is told which path gave the result ("lanczos" or
// "dense") and the Lanczos status (when Lanczos ran).
var (
	lanczosHook func(*lanczos.Settings)
	eigenTrace  func(path string, status lanczos.Status, ran bool)
)

// errNotFinite reports a solve that met a value that is not finite: sums
// so large that they or their products overflow. Data with values near
// 1e150 under a linear kernel gets there, and so can a damaged statistics
// file whose checksum was recomputed.
var errNotFinite = errors.New("dica: the solve met values that are not finite: the statistics overflow float64 (rescale or transform the data; a linear kernel squares its values)")

// finiteSym reports whether every entry of the upper triangle of a is
// finite.
func finiteSym(a *mat.SymDense) bool {
	r := a.RawSymmetric()
	for i := 0; i < r.N; i++ {
		if !finiteVec(r.Data[i*r.Stride+i : i*r.Stride+r.N]) {
			return false
		}
	}
	return true
}

func finiteVec(v []float64) bool {
	for _, x := range v {
		if isBad(x) {
			return false
		}
	}
	return true
}

// topEigenFinite is topEigen for a matrix that may hold values that are
// not finite: those are an error (errNotFinite), not a failed
// decomposition.
func topEigenFinite(a *mat.SymDense, k int) ([]float64, *mat.Dense, error) {
	if !finiteSym(a) {
		return nil, nil, errNotFinite
	}
	vals, vecs := topEigen(a, k)
	return vals, vecs, nil
}

// topEigen returns the k largest eigenvalues of a (largest first) and their
// unit eigenvectors as columns.
//
// From lanczosMin on (and 4 k <= n) it uses the Lanczos solver, whose
// result is accepted only when its status is lanczos.Converged, or
// lanczos.ReachableSpaceExhausted: an exactly low-rank matrix with fewer
// than k nonzero eigenvalues, whose missing pairs are genuinely zero
// (returned as zero values and zero vectors). Any other outcome (an error,
// BudgetExceeded, ResidualCheckFailed) falls back to the dense symmetric
// eigendecomposition. The dense path computes only the k wanted vectors
// (tridiagTop: the same eigenvalues as mat.EigenSym, vectors by inverse
// iteration) when 2 k <= n and the wanted eigenvalues are separated, else
// all of them (mat.EigenSym).
func topEigen(a *mat.SymDense, k int) ([]float64, *mat.Dense) {
	n := a.SymmetricDim()
	k = min(k, n)
	var (
		status lanczos.Status
		ran    bool
	)
	if n >= lanczosMin && 4*k <= n {
		set := lanczos.Settings{K: k, Tol: 1e-12, Seed: 1}
		if lanczosHook != nil {
			lanczosHook(&set)
		}
		res, err := lanczos.Sym(context.Background(), lanczos.Dense(a), set)
		if err == nil {
			status, ran = res.Status, true
		}
		if err == nil && (res.Status == lanczos.Converged || res.Status == lanczos.ReachableSpaceExhausted) {
			out := make([]float64, k)
			vv := mat.NewDense(n, k, nil)
			for j := 0; j < len(res.Values) && j < k; j++ {
				out[j] = res.Values[j]
				col := mat.Col(nil, j, res.Vectors)
				fixSign(col)
				vv.SetCol(j, col)
			}
			if eigenTrace != nil {
				eigenTrace("lanczos", status, ran)
			}
			return out, vv
		}
	}
	if eigenTrace != nil {
		eigenTrace("dense", status, ran)
	}
	if 2*k <= n {
		if vals, vecs, ok := tridiagTop(a, k); ok {
			for j := range k {
				col := vecs.RawMatrix().Data
				v := make([]float64, n)
				for i := range n {
					v[i] = col[i*k+j]
				}
				fixSign(v)
				vecs.SetCol(j, v)
			}
			return vals, vecs
		}
	}
	return eigenSymTop(a, k)
}

// eigenSymTop returns the k largest eigenpairs of a (largest first) from
// the full decomposition by mat.EigenSym, signs by fixSign.
func eigenSymTop(a *mat.SymDense, k int) ([]float64, *mat.Dense) {
	n := a.SymmetricDim()
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		panic("dica: symmetric eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	out := make([]float64, k)
	vv := mat.NewDense(n, k, nil)
	for j := 0; j < k; j++ {
		out[j] = vals[idx[j]]
		col := mat.Col(nil, idx[j], &vecs)
		fixSign(col)
		vv.SetCol(j, col)
	}
	return out, vv
}

// fixSign makes the entry of largest magnitude of v positive, so results do
// not depend on the eigensolver's arbitrary signs.
func fixSign(v []float64) {
	best := 0
	for i, x := range v {
		if math.Abs(x) > math.Abs(v[best]) {
			best = i
		}
	}
	if v[best] < 0 {
		floats.Scale(-1, v)
	}
}

// padValues extends vals with zeros (the exact null eigenvalues of a
// low-rank numerator) to length k.
func padValues(vals []float64, k int) []float64 {
	out := make([]float64, k)
	copy(out, vals)
	return out
}

func symOf(m mat.Matrix) *mat.SymDense {
	r, _ := m.Dims()
	s := mat.NewSymDense(r, nil)
	symFrom(s, m)
	return s
}

// symFrom stores the symmetric part (M + M^T)/2 of m in s.
func symFrom(s *mat.SymDense, m mat.Matrix) {
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			s.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
}
