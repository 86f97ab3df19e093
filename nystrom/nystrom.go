// Package nystrom implements the Nystrom low-rank approximation of a kernel,
// K ~ Phi Phi^T with phi(x) = K_mm^{-1/2} k_m(x), where
// k_m(x) = [k(x, z_1) ... k(x, z_m)] is the kernel row on m landmarks z_j and
// K_mm = k(Z, Z) (Williams and Seeger, 2001).
//
// The map is an approx.Factored map: raw(x) = k_m(x) and
// phi(x) = T^T k_m(x) with T = U_r S_r^{-1/2} (m x r), from the symmetric
// eigendecomposition K_mm = U S U^T with the eigenvalues below
// rcond * max(S) dropped, or above EigenMax landmarks from a Cholesky
// factor of K_mm (docs/MATH.md, "7. Kernels and feature maps"). The
// relative cutoff keeps
// duplicate or near-duplicate landmarks from blowing up the features: the
// largest entry of T is at most (rcond s_max)^{-1/2}, and every feature
// vector satisfies ||phi(x)||^2 <= k(x, x) (phi(x) is the projection of the
// RKHS element k(., x) on the span of the landmarks, orthonormalized).
//
// Landmarks are chosen uniformly (Uniform), by k-means++ with Lloyd steps
// (KMeansPP), or given by the caller. New is deterministic, so a Map is
// reconstructed bit-identically from (kernel, landmarks, rcond), which is all
// a saved model needs to store (on the same platform: kernel blocks are
// computed by different code on CPUs with and without AVX2+FMA, which may
// differ in the last bit).
package nystrom

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
)

// DefaultRCond is the default relative eigenvalue cutoff: eigenvalues of
// K_mm below DefaultRCond * max eigenvalue are dropped: a relative cutoff,
// not scikit-learn's absolute 1e-12, which amplifies near-duplicate
// landmarks by up to 1e6 (docs/MATH.md, "7. Kernels and feature maps").
//
// The floor it sets: with every training point a landmark (m = n),
// Phi Phi^T is K with its eigenvalues below 1e-10 s_max set to zero, so every
// eigenvalue of Phi Phi^T is within 1e-10 ||K||_2 of K's (Weyl;
// TestCutoffFloor checks it on a wide-RBF matrix), and quantities
// of the fit that are well conditioned in K (the leading DICA eigenvalues)
// agree with the exact path to about 1e-10 relative, below the 1e-8 the
// project asks for. Features are amplified by at most
// (1e-10 s_max)^{-1/2} = 1e5 / sqrt(s_max). A smaller cutoff would keep
// directions dominated by rounding: the eigenvalues of K_mm are only known to
// about 1e-16 m s_max.
const DefaultRCond = 1e-10

// Map is the Nystrom feature map of a kernel on fixed landmarks. It is
// immutable after New and safe for concurrent use.
type Map struct {
	k         kernel.Kernel
	landmarks *mat.Dense // m x d
	rcond     float64
	values    []float64  // kept eigenvalues of K_mm, decreasing
	t         *mat.Dense // m x r, U_r S_r^{-1/2}
	// pts holds the landmarks prepared for the kernel's BlockPoints when
	// it has one (nil otherwise).
	pts *kernel.Points
}

// newMap returns the map with its landmarks prepared for block evaluation.
func newMap(k kernel.Kernel, z *mat.Dense, rcond float64, values []float64, t *mat.Dense) *Map {
	m := &Map{k: k, landmarks: z, rcond: rcond, values: values, t: t}
	if _, ok := k.(kernel.Prepared); ok {
		m.pts = kernel.NewPoints(z)
	}
	return m
}

// block stores the kernel rows of x on the landmarks in dst.
func (m *Map) block(dst, x *mat.Dense) {
	if m.pts != nil {
		m.k.(kernel.Prepared).BlockPoints(dst, x, m.pts)
		return
	}
	m.k.Block(dst, x, m.landmarks)
}

var (
	_ approx.Map      = (*Map)(nil)
	_ approx.Factored = (*Map)(nil)
)

// New returns the Nystrom map of the kernel k on the landmarks (m x d, one
// per row; New keeps its own copy). rcond is the relative eigenvalue cutoff:
// 0 selects DefaultRCond, otherwise it must be in (0, 1).
//
// New returns an error if there are no landmarks, if a landmark is NaN or
// infinite, if rcond is out of range, if the kernel matrix of the landmarks
// is zero or not finite, or if m > 1 landmarks have effective rank 1 under
// a non-linear kernel (all landmarks duplicates of one another at the
// kernel's scale). New is deterministic: the same inputs give a
// bit-identical Map.
func New(k kernel.Kernel, landmarks *mat.Dense, rcond float64) (*Map, error) {
	if k == nil {
		return nil, errors.New("nystrom: nil kernel")
	}
	if landmarks == nil || landmarks.IsEmpty() {
		return nil, errors.New("nystrom: no landmarks")
	}
	m, d := landmarks.Dims()
	if m == 0 || d == 0 {
		return nil, fmt.Errorf("nystrom: landmarks are %d x %d", m, d)
	}
	if rcond == 0 {
		rcond = DefaultRCond
	}
	if !(rcond > 0 && rcond < 1) {
		return nil, fmt.Errorf("nystrom: rcond = %g, want 0 < rcond < 1 (or 0 for the default %g)", rcond, DefaultRCond)
	}
	for i := range m {
		for j, v := range landmarks.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("nystrom: landmark %d, coordinate %d is %g", i, j, v)
			}
		}
	}
	z := mat.DenseCopyOf(landmarks)

	var kmm mat.Dense
	k.Block(&kmm, z, z)
	sym := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			v := (kmm.At(i, j) + kmm.At(j, i)) / 2
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, kernelError(k, z, i, j, v)
			}
			sym.SetSym(i, j, v)
		}
	}
	if m > EigenMax {
		return newPivoted(k, z, sym, rcond)
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("nystrom: eigendecomposition of the landmark kernel matrix did not converge")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	smax := vals[m-1]
	if !(smax > 0) {
		return nil, fmt.Errorf("nystrom: kernel matrix of the %d landmarks is zero (largest eigenvalue %g)", m, smax)
	}
	cut := rcond * smax
	r := 0
	for _, v := range vals {
		if v >= cut {
			r++
		}
	}
	if r == 1 && m > 1 {
		if _, lin := k.(kernel.Linear); !lin {
			return nil, fmt.Errorf("nystrom: landmarks are duplicates: effective rank 1 of %d under %v (rcond %g)", m, k, rcond)
		}
	}
	t := mat.NewDense(m, r, nil)
	kept := make([]float64, r)
	for c := range r {
		// Decreasing order: column c is eigenvalue m-1-c.
		src := m - 1 - c
		s := vals[src]
		kept[c] = s
		f := 1 / math.Sqrt(s)
		for i := range m {
			t.Set(i, c, vecs.At(i, src)*f)
		}
	}
	return newMap(k, z, rcond, kept, t), nil
}

// kernelError is the error of a kernel value v of landmarks i and j that
// is not finite. Under an RBF or Laplacian kernel on finite landmarks that
// happens only when the bandwidth is so small that 1/sigma^2 (or
// 1/sigma) overflows: the error says so, with the scale of the data, the
// median distance between landmarks (kernel.MedianSigma of 1000 of them).
func kernelError(k kernel.Kernel, z *mat.Dense, i, j int, v float64) error {
	var sigma float64
	switch k := k.(type) {
	case kernel.RBF:
		sigma = k.Sigma
	case kernel.Laplacian:
		sigma = k.Sigma
	default:
		return fmt.Errorf("nystrom: kernel of landmarks %d and %d is %g", i, j, v)
	}
	if !(sigma < 1) {
		return fmt.Errorf("nystrom: kernel of landmarks %d and %d is %g under %v", i, j, v, k)
	}
	scale := fmt.Sprintf("the median distance between landmarks is %.3g", kernel.MedianSigma(z, 1000, 1))
	if m, _ := z.Dims(); m < 2 || allEqual(z) {
		scale = "the landmarks coincide; the median distance between data points is the usual choice"
	}
	return fmt.Errorf("nystrom: the bandwidth sigma = %g is too small for the data's scale (%s): the kernel of landmarks %d and %d is %g; use a sigma near the median distance (the median heuristic, the default)",
		sigma, scale, i, j, v)
}

// allEqual reports whether the rows of z are all equal.
func allEqual(z *mat.Dense) bool {
	m, _ := z.Dims()
	first := z.RawRowView(0)
	for i := 1; i < m; i++ {
		for c, v := range z.RawRowView(i) {
			if v != first[c] {
				return false
			}
		}
	}
	return true
}

// Kernel returns the kernel.
func (m *Map) Kernel() kernel.Kernel { return m.k }

// Landmarks returns the landmarks (m x d). The caller must not modify them.
func (m *Map) Landmarks() *mat.Dense { return m.landmarks }

// RCond returns the relative eigenvalue cutoff in use.
func (m *Map) RCond() float64 { return m.rcond }

// EffectiveRank returns r, the number of features (Dim): eigenvalues of
// K_mm kept, or landmarks kept by the pivoted Cholesky factorization when
// m > EigenMax.
func (m *Map) EffectiveRank() int { return len(m.values) }

// Eigenvalues returns the kept eigenvalues of K_mm in decreasing order. When
// m > EigenMax it returns the pivots of the Cholesky factorization instead
// (the residual variances of the kept landmarks, decreasing).
func (m *Map) Eigenvalues() []float64 { return append([]float64(nil), m.values...) }

// InputDim returns d.
func (m *Map) InputDim() int { _, d := m.landmarks.Dims(); return d }

// Dim returns r, the number of features (the effective rank).
func (m *Map) Dim() int { return len(m.values) }

// RawDim returns the number of landmarks m.
func (m *Map) RawDim() int { r, _ := m.landmarks.Dims(); return r }

// Transform returns T = U_r S_r^{-1/2} (m x r). The caller must not modify it.
func (m *Map) Transform() *mat.Dense { return m.t }

// blockRows is the number of rows mapped at a time: the kernel block
// (blockRows x m) stays in cache for the product with T.
const blockRows = 256

// MapRaw stores the kernel rows k_m(x_i) = [k(x_i, z_1) ... k(x_i, z_m)] in
// row i of dst (r x m, or empty to be resized). It panics if x does not have
// InputDim columns or dst has the wrong shape.
func (m *Map) MapRaw(dst, x *mat.Dense) {
	m.checkInput(x)
	m.block(dst, x)
}

// Map stores phi(x_i) = T^T k_m(x_i) in row i of dst (r x Dim, or empty to be
// resized), computing the kernel rows in blocks of rows. It panics if x does
// not have InputDim columns or dst has the wrong shape.
func (m *Map) Map(dst, x *mat.Dense) {
	m.checkInput(x)
	n, _ := x.Dims()
	r := m.Dim()
	if dst.IsEmpty() {
		dst.ReuseAs(n, r)
	} else if rr, cc := dst.Dims(); rr != n || cc != r {
		panic(fmt.Sprintf("nystrom: destination is %d x %d, want %d x %d", rr, cc, n, r))
	}
	if n == 0 {
		return
	}
	_, d := x.Dims()
	raw := mat.NewDense(min(n, blockRows), m.RawDim(), nil)
	for lo := 0; lo < n; lo += blockRows {
		hi := min(n, lo+blockRows)
		xb := x.Slice(lo, hi, 0, d).(*mat.Dense)
		rb := raw.Slice(0, hi-lo, 0, m.RawDim()).(*mat.Dense)
		m.block(rb, xb)
		dst.Slice(lo, hi, 0, r).(*mat.Dense).Mul(rb, m.t)
	}
}

func (m *Map) checkInput(x *mat.Dense) {
	if _, d := x.Dims(); d != m.InputDim() {
		panic(fmt.Sprintf("nystrom: input has %d columns, map expects %d", d, m.InputDim()))
	}
}
