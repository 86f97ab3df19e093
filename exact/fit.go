package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/internal/pivchol"
	"github.com/dicalab/dica/kernel"
)

// JitterScale sets the ridge used when Options.Lambda is 0: the centered
// kernel matrix is always singular (K 1 = 0), so K Q K + K is too, and Fit
// uses lambda = JitterScale * tr(K)/n instead (recorded in Model.Jitter).
// The change to the leading eigenvalues is of that relative order.
const JitterScale = 1e-8

// Options configures Fit.
type Options struct {
	// Method is the member of the family to fit (DICA by default).
	Method Method
	// Form is the eigenproblem solved (Canonical by default).
	Form Form
	// Components is the number k >= 1 of components returned (at most n).
	Components int
	// Lambda >= 0 is the ridge of the denominator K Q K + K + lambda I
	// (0 means a tiny jitter, see JitterScale).
	Lambda float64
	// Epsilon > 0 regularizes the output operator,
	// P = L (L + n Epsilon I)^{-1} (n_L, the number of labelled points,
	// in place of n when some points have no label). Required by DICA and
	// COIR, unused otherwise.
	Epsilon float64
	// Kernel is the input kernel; nil means RBF with the median heuristic
	// sigma = kernel.MedianSigma(X, 1000, Seed).
	Kernel kernel.Kernel
	// OutputKernel is the kernel on real targets; nil means RBF with the
	// median-heuristic sigma of the targets. Class labels always use the
	// delta kernel.
	OutputKernel kernel.Kernel
	// Seed seeds the median heuristic subsample and the completion of
	// null-space components.
	Seed uint64
}

// Model is a fitted DICA-family model: the components are kernel
// expansions on the training points, z_j(x) = sum_p B[p, j] k_c(x, x_p),
// with k_c the centered kernel (see Transform). Its methods do not modify
// it, so a Model may be used by many goroutines at once.
type Model struct {
	// Method and Form are copies of Options.Method and Options.Form.
	Method Method
	Form   Form
	// Options are the options used, with Kernel and OutputKernel resolved
	// (OutputKernel stays nil for class labels and unsupervised methods).
	Options Options
	// X holds the training points (n x d); Kernel is the input kernel.
	X      *mat.Dense
	Kernel kernel.Kernel
	// B holds the coefficients (n x k), one component per column, in the
	// order of Eigenvalues. In the canonical form B^T D B = I with
	// D = K Q K + K + lambda I. In the paper form each column is a
	// unit-norm eigenvector divided by sqrt(eigenvalue) (dica.m); columns
	// of components that are not positive are zero.
	B *mat.Dense
	// Eigenvalues holds the k eigenvalues, largest first (by magnitude, real
	// parts, in the paper form). Paper-form eigenvalues lack the 1/n (as in
	// dica.m): divided by n they equal the canonical ones for UDICA, KPCA
	// and COIR, and approximate them for DICA (the problems differ). When
	// the numerator has rank r < k (low-rank output kernels), eigenvalues
	// beyond the numerical rank are reported as exactly 0.
	Eigenvalues []float64
	// Positive is the number of leading components with
	// gamma_j > 1e-10 * gamma_1: the ones that carry signal. With c classes
	// and the delta kernel it is at most c - 1. The other components span
	// the null space of the numerator (eigenvalue 0 up to rounding): they are
	// arbitrary, and Transform returns them but they carry no information.
	Positive int
	// KColMean[p] is the mean of column p of the uncentered training kernel
	// matrix, and KMean its grand mean; they center new kernel rows.
	KColMean []float64
	KMean    float64
	// Jitter is the ridge used in place of Lambda when Lambda is 0
	// (0 otherwise).
	Jitter float64
	// Scale bounds the leading canonical eigenvalue on these data:
	// tr(P_0 K)/n with P_0 the projection onto the centered labels' span
	// (the between-class variance of the kernel features) or onto the
	// column space of the output factor (real targets), the limit of P as
	// Epsilon -> 0, and tr(K)/n for UDICA and KPCA (the total variance).
	// Since P <= P_0 and the denominator is at least K, gamma_1 <= Scale
	// for any Lambda and Epsilon, and Scale = 0 when the data carry no
	// signal. Paper-form eigenvalues, which lack the 1/n, compare with
	// n Scale.
	Scale float64
	// InputVariance is tr(K Q), the distributional variance of the
	// training domains in the kernel feature space (the paper's V_H(S),
	// Theorem 2): (1/N) sum_i ||mu_i - mu_bar||^2. It is 0 with one domain.
	InputVariance float64
	// ProjectedVariance is the distributional variance of the training
	// domains in the projection onto the Positive leading components, with
	// a linear kernel on z: (1/N) sum_i ||zbar_i - zbar||^2 with zbar_i the
	// mean projection of domain i and zbar the mean of those means, that is
	// tr(B^T K Q K B) over those columns of B.
	ProjectedVariance float64

	train *mat.Dense // K_c B, n x k
}

// Fit fits the model of o.Method on the data set.
//
// The data are validated (dataset.Validate); DICA and COIR need labels or
// targets and Epsilon > 0. One domain is accepted: then K Q K = 0 and DICA
// equals COIR, UDICA equals KPCA. Kernel matrices are centered, K = H K H and
// L = H L H with H = I - 11^T/n, as in the authors' code.
//
// Canonical form: D = K Q K + K + lambda I is factored by Cholesky,
// D = U^T U, with K Q K = (1/N) (K E H_N)(K E H_N)^T formed as a rank-(N-1)
// update; the numerator is always A = G G^T: G = K Yc S^{-1/2} / sqrt(n)
// (n x c) for class labels (Yc the centered one-hot labels,
// S = Yc^T Yc + n eps I, so P = Yc S^{-1} Yc^T exactly), G = K F / sqrt(n)
// with P = F F^T from a pivoted Cholesky factor of L for real targets (to
// relative trace 1e-12; see targetFactor), and G = K/sqrt(n)
// for UDICA and KPCA. The eigenproblem is then U^{-T} A U^{-1} v = gamma v,
// solved through the thin r x r problem when G has r <= n/2 columns.
//
// Paper form: the non-symmetric M = D^{-1} P K^2 (DICA, COIR) is low rank,
// M = (D^{-1} F)(K^2 F)^T, and its nonzero eigenpairs come exactly from the
// r x r matrix (K^2 F)^T D^{-1} F (mat.Eigen); for UDICA and KPCA,
// M = D^{-1} K^2 has the eigenvectors of the symmetric-definite pair
// (K^2, D). Eigenvectors are normalized to unit length and divided by
// sqrt(eigenvalue).
//
// Class labels may cover some points only (dataset.NoLabel for the
// others: labelled and unlabelled samples in one fit). The output term is
// then over the n_L labelled points: Yc is their one-hot labels centered
// over them (zero rows for the others), S = Yc^T Yc + n_L eps I and
// G = K Yc S^{-1/2} / sqrt(n_L), so the numerator is
// (1/n_L) K_{:,L} P_L K_{L,:}; K, its centering, the domain term and the
// complexity term use every point (docs/MATH.md, "Partial labels"). With
// every point labelled, n_L = n and nothing changes.
//
// Fit returns an error, never panics, for invalid data or options. It
// checks ctx between its steps, inside the Cholesky factorization between
// blocks of 192 columns and inside the Lanczos iterations (TestFitCancel):
// after ctx is done it stops within one step of at most 192 n^2 flops (a
// block of the factorization; 0.02 to 1.5 s at n = 8,025 on two shared
// cores). The dense eigendecompositions (below LanczosMin points, of the
// r x r reduced problems, r + 1 the number of classes, and the fallback
// when Lanczos fails) cannot be interrupted.
func Fit(ctx context.Context, ds *dataset.Dataset, o Options) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	if ds == nil {
		return nil, errors.New("exact: nil data set")
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	if err := checkOptions(ds, &o); err != nil {
		return nil, err
	}
	resolveKernels(ds, &o)
	m := &Model{Method: o.Method, Form: o.Form, Options: o, X: mat.DenseCopyOf(ds.X), Kernel: o.Kernel}

	// Centered input kernel.
	kc, err := gramContext(ctx, o.Kernel, ds.X)
	if err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	if err := checkGram(kc, o.Kernel); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	m.KColMean, m.KMean = center(kc)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	chol, mc, err := m.denominator(ctx, kc, ds)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	var f *mat.Dense // P = F F^T (supervised methods)
	nl := ds.N()     // points of the numerator's output term
	if o.Method.Supervised() {
		if f, nl, err = outputFactor(ds, o); err != nil {
			return nil, err
		}
		m.Scale = supervisedScale(kc, ds, o)
	} else {
		m.Scale = mat.Trace(kc) / float64(ds.N())
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("exact: %w", err)
		}
	}
	var ok bool
	m.Eigenvalues, m.B, ok = eigen(ctx, kc, f, nl, chol, o)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	if !ok {
		return nil, errors.New("exact: eigendecomposition did not converge")
	}
	m.Positive = countPositive(m.Eigenvalues)
	if o.Form == Paper {
		zeroNonPositive(m.B, m.Positive)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	n := ds.N()
	m.train = mat.NewDense(n, o.Components, nil)
	m.train.Mul(kc, m.B)
	if mc != nil && m.Positive > 0 {
		// tr(B^T K Q K B) = (1/N) ||(K E H_N)^T B||_F^2 over the positive columns.
		var p mat.Dense
		p.Mul(mc.T(), m.B.Slice(0, n, 0, m.Positive))
		f := mat.Norm(&p, 2)
		m.ProjectedVariance = f * f / float64(ds.NumDomains())
	}
	return m, nil
}

// resolveKernels sets the kernels that o leaves nil: RBF with the median
// heuristic on the inputs, and on real targets for the supervised
// methods; the output kernel is nil for class labels and unsupervised
// methods.
func resolveKernels(ds *dataset.Dataset, o *Options) {
	if o.Kernel == nil {
		o.Kernel = kernel.RBF{Sigma: kernel.MedianSigma(ds.X, kernel.DefaultMedianSample, o.Seed)}
	}
	labels := ds.Label != nil
	if o.Method.Supervised() && !labels && o.OutputKernel == nil {
		o.OutputKernel = kernel.RBF{Sigma: kernel.MedianSigma(ds.Target, kernel.DefaultMedianSample, o.Seed)}
	}
	if !o.Method.Supervised() || labels {
		o.OutputKernel = nil
	}
}

// denominator returns the Cholesky factorization of the denominator
// D = K Q K + K + lambda I (lambda the jitter, recorded in m, when
// Options.Lambda is 0; the domain term for DICA and UDICA only) and, with
// more than one domain, mc = K E H_N, from which it sets m.InputVariance.
func (m *Model) denominator(ctx context.Context, kc *mat.Dense, ds *dataset.Dataset) (*mat.Cholesky, *mat.Dense, error) {
	n := ds.N()
	lambda := m.Options.Lambda
	if lambda == 0 {
		lambda = JitterScale * mat.Trace(kc) / float64(n)
		if lambda == 0 {
			lambda = JitterScale
		}
		m.Jitter = lambda
	}
	d := mat.NewSymDense(n, nil)
	raw, kr := d.RawSymmetric(), kc.RawMatrix()
	for p := 0; p < n; p++ {
		copy(raw.Data[p*raw.Stride+p:p*raw.Stride+n], kr.Data[p*kr.Stride+p:p*kr.Stride+n])
		raw.Data[p*raw.Stride+p] += lambda
	}
	var mc *mat.Dense
	if ds.NumDomains() > 1 {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("exact: %w", err)
		}
		mc = domainMeans(kc, ds.Domain, ds.NumDomains())
		m.InputVariance = inputVariance(mc, ds.Domain, ds.NumDomains())
	}
	if m.Method.UsesDomains() && mc != nil {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("exact: %w", err)
		}
		blas64.Syrk(blas.NoTrans, 1/float64(ds.NumDomains()), mc.RawMatrix(), 1, d.RawSymmetric())
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("exact: %w", err)
	}
	var chol mat.Cholesky
	if ok, err := gemm.CholeskyToContext(ctx, &chol, d, runtime.GOMAXPROCS(0)); err != nil {
		return nil, nil, fmt.Errorf("exact: %w", err)
	} else if !ok {
		return nil, nil, fmt.Errorf("exact: the denominator K Q K + K + lambda I is not positive definite (lambda = %g); use a larger Lambda", lambda)
	}
	return &chol, mc, nil
}

// outputFactor returns F with P = F F^T, from the class labels or the
// targets of ds, reduced to its column space, and the number n_L of points
// of the output term (the labelled ones; every point for targets).
func outputFactor(ds *dataset.Dataset, o Options) (*mat.Dense, int, error) {
	var f *mat.Dense
	var err error
	nl := ds.N()
	if ds.Label != nil {
		f, nl, err = labelFactor(ds.Label, ds.NumClasses(), o.Epsilon)
	} else {
		f, err = targetFactor(o.OutputKernel, ds.Target, o.Epsilon)
	}
	if err != nil {
		return nil, 0, err
	}
	return reduceFactor(f), nl, nil
}

// eigen solves the eigenproblem of o.Form for o.Method, with the centered
// kernel kc, the output factor f over nl points (supervised methods) and
// the factored denominator, and returns the o.Components leading
// eigenvalues and coefficient columns.
func eigen(ctx context.Context, kc, f *mat.Dense, nl int, chol *mat.Cholesky, o Options) ([]float64, *mat.Dense, bool) {
	n, _ := kc.Dims()
	k := o.Components
	switch {
	case o.Form == Canonical && o.Method.Supervised():
		var g mat.Dense
		g.Mul(kc, f)
		g.Scale(1/math.Sqrt(float64(nl)), &g)
		if ctx.Err() != nil {
			return nil, nil, false
		}
		return symDefEig(ctx, &g, chol, k, o.Seed)
	case o.Form == Canonical:
		var g mat.Dense
		g.Scale(1/math.Sqrt(float64(n)), kc)
		return symDefEig(ctx, &g, chol, k, o.Seed)
	case o.Method.Supervised(): // paper form
		return paperLowRank(kc, f, chol, k)
	default: // paper form, UDICA or KPCA: eig(D^{-1} K^2) = pair (K^2, D).
		vals, b, ok := symDefEig(ctx, kc, chol, k, o.Seed)
		if ok {
			paperScale(b, vals)
		}
		return vals, b, ok
	}
}

// inputVariance returns tr(K Q) = (1/N) tr(E^T K E H_N) from mc = K E H_N
// (see domainMeans): the sum over domains i of the mean of column i of mc
// over the points of domain i, divided by N. O(n N).
func inputVariance(mc *mat.Dense, domains []int, N int) float64 {
	size := domainSizes(domains, N)
	var s float64
	for p, i := range domains {
		s += mc.At(p, i) / float64(size[i])
	}
	return s / float64(N)
}

func checkOptions(ds *dataset.Dataset, o *Options) error {
	if o.Method == Input {
		return fmt.Errorf("exact: method %v has no eigenproblem (it is the untransformed inputs)", o.Method)
	}
	if !o.Method.valid() {
		return fmt.Errorf("exact: unknown method %v", o.Method)
	}
	if !o.Form.valid() {
		return fmt.Errorf("exact: unknown form %v", o.Form)
	}
	if o.Components < 1 {
		return fmt.Errorf("exact: Components = %d; need at least 1", o.Components)
	}
	if o.Components > ds.N() {
		return fmt.Errorf("exact: Components = %d exceeds the number of points %d", o.Components, ds.N())
	}
	if math.IsNaN(o.Lambda) || math.IsInf(o.Lambda, 0) || o.Lambda < 0 {
		return fmt.Errorf("exact: Lambda = %v; need a finite value >= 0", o.Lambda)
	}
	if o.Method.Supervised() {
		if err := ds.RequireSupervision(); err != nil {
			return fmt.Errorf("exact: %v: %w", o.Method, err)
		}
		if math.IsNaN(o.Epsilon) || math.IsInf(o.Epsilon, 0) || o.Epsilon <= 0 {
			return fmt.Errorf("exact: %v needs Epsilon > 0 (got %v)", o.Method, o.Epsilon)
		}
	}
	return nil
}

// gram returns the kernel matrix of the rows of x, exactly symmetric.
func gram(k kernel.Kernel, x *mat.Dense) *mat.Dense {
	g, _ := gramContext(context.Background(), k, x)
	return g
}

// gramRows is the number of rows of the kernel matrix gramContext computes
// between checks of its context.
const gramRows = 256

// gramContext is gram, computed in blocks of gramRows rows (the kernels
// compute each row on its own, so the blocks give the same bits), between
// which it checks ctx.
func gramContext(ctx context.Context, k kernel.Kernel, x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	g := mat.NewDense(n, n, nil)
	for r0 := 0; r0 < n; r0 += gramRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r1 := min(r0+gramRows, n)
		k.Block(g.Slice(r0, r1, 0, n).(*mat.Dense), x.Slice(r0, r1, 0, d), x)
	}
	raw := g.RawMatrix()
	for p := 0; p < n; p++ {
		for q := p + 1; q < n; q++ {
			a := 0.5 * (raw.Data[p*raw.Stride+q] + raw.Data[q*raw.Stride+p])
			raw.Data[p*raw.Stride+q], raw.Data[q*raw.Stride+p] = a, a
		}
	}
	return g, nil
}

// checkGram returns an error if the kernel matrix has a non-finite entry
// (for example an RBF kernel with Sigma = 0).
func checkGram(g *mat.Dense, k kernel.Kernel) error {
	n, _ := g.Dims()
	for p := 0; p < n; p++ {
		for q, v := range g.RawRowView(p) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("exact: kernel %v gives the non-finite value %v for rows %d and %d; check its parameters and the size of the data values", k, v, p+1, q+1)
			}
		}
	}
	return nil
}

// center replaces the symmetric matrix k by H k H and returns the column
// means and grand mean of the original.
func center(k *mat.Dense) ([]float64, float64) {
	n, _ := k.Dims()
	raw := k.RawMatrix()
	mean := make([]float64, n)
	for p := 0; p < n; p++ {
		row := raw.Data[p*raw.Stride : p*raw.Stride+n]
		for q, v := range row {
			mean[q] += v
		}
	}
	var all float64
	for q := range mean {
		mean[q] /= float64(n)
		all += mean[q]
	}
	all /= float64(n)
	for p := 0; p < n; p++ {
		row := raw.Data[p*raw.Stride : p*raw.Stride+n]
		for q := range row {
			row[q] += all - mean[p] - mean[q]
		}
	}
	return mean, all
}

// domainMeans returns K E H_N (n x N): column i is the mean of the columns
// of the domain-i points, minus the average of those means over domains.
func domainMeans(kc *mat.Dense, domains []int, N int) *mat.Dense {
	n, _ := kc.Dims()
	size := domainSizes(domains, N)
	out := mat.NewDense(n, N, nil)
	kr, or := kc.RawMatrix(), out.RawMatrix()
	for p := 0; p < n; p++ {
		krow := kr.Data[p*kr.Stride : p*kr.Stride+n]
		orow := or.Data[p*or.Stride : p*or.Stride+N]
		for q, v := range krow {
			orow[domains[q]] += v
		}
		var s float64
		for i := range orow {
			orow[i] /= float64(size[i])
			s += orow[i]
		}
		s /= float64(N)
		for i := range orow {
			orow[i] -= s
		}
	}
	return out
}

// labelFactor returns F (n x c) with F F^T = P = Lc (Lc + n_L eps I)^{-1}
// for the delta kernel on the n_L labelled points centered over them,
// Lc = Yc Yc^T, and zero rows and columns for the points without a label
// (dataset.NoLabel): F = Yc C^{-1} with C^T C = S = Yc^T Yc + n_L eps I
// (push-through identity). It also returns n_L (n when every point is
// labelled).
func labelFactor(label []int, c int, eps float64) (*mat.Dense, int, error) {
	y, nl := kernelOneHot(label, c)
	f, err := pushThrough(y, nl, eps)
	return f, nl, err
}

// kernelOneHot returns the one-hot matrix of the labelled points centered
// over them, H_L Y (n x c, zero rows for the points without a label), and
// their number n_L. With every point labelled it is H Y.
func kernelOneHot(label []int, c int) (*mat.Dense, int) {
	n := len(label)
	nl := 0
	for _, l := range label {
		if l != dataset.NoLabel {
			nl++
		}
	}
	y := mat.NewDense(n, c, nil)
	frac := make([]float64, c)
	for p, l := range label {
		if l != dataset.NoLabel {
			y.Set(p, l, 1)
			frac[l] += 1 / float64(nl)
		}
	}
	for p := 0; p < n; p++ {
		if label[p] == dataset.NoLabel {
			continue
		}
		row := y.RawRowView(p)
		for j := range row {
			row[j] -= frac[j]
		}
	}
	return y, nl
}

// factorTol is the relative eigenvalue of F^T F below which reduceFactor
// drops a direction of F. The nonzero eigenvalues of F^T F are those of
// P = L (L + n eps I)^{-1}, l / (l + n eps) for the eigenvalues l of L, so
// this only drops directions that rounding made nonzero.
const factorTol = 1e-12

// reduceFactor returns an n x r' factor F' with F' F'^T = F F^T and r' the
// numerical rank of F: F' = F V' for the eigenvectors V' of F^T F with an
// eigenvalue above factorTol times the largest. The centered one-hot labels
// of c classes have rank c - 1, so a c-column F has one such direction; left
// in, it makes the paper form's non-symmetric solve report rounding noise,
// amplified by the condition number of D, as a c-th positive eigenvalue.
func reduceFactor(f *mat.Dense) *mat.Dense {
	_, r := f.Dims()
	var g mat.SymDense
	g.SymOuterK(1, f.T())
	var es mat.EigenSym
	if !es.Factorize(&g, true) {
		return f
	}
	vals := es.Values(nil)
	top := vals[r-1]
	keep := 0
	for _, v := range vals {
		if v > factorTol*top {
			keep++
		}
	}
	if keep == r || keep == 0 {
		return f
	}
	var v mat.Dense
	es.VectorsTo(&v)
	var out mat.Dense
	out.Mul(f, v.Slice(0, r, r-keep, r)) // EigenSym sorts ascending
	return &out
}

// pivotTol is the relative trace at which the pivoted Cholesky
// factorization of the output kernel matrix stops.
const pivotTol = 1e-12

// targetFactor returns F (n x r) with F F^T = P = Lc (Lc + n eps I)^{-1} for
// the centered output kernel matrix Lc. L is factored by pivoted Cholesky,
// L ~ Psi Psi^T, until the trace of the remainder E (PSD) is below
// 1e-12 tr(L); then Lc ~ Psi_c Psi_c^T with Psi_c = H Psi and, by the
// push-through identity, P = Psi_c S^{-1} Psi_c^T with
// S = Psi_c^T Psi_c + n eps I, so F = Psi_c C^{-1}, C^T C = S. The error in
// P is at most ||E|| / (n eps) <= 1e-12 tr(L) / (n eps) (1e-12 / eps for
// RBF). Smooth output kernels on few targets have r << n, so this costs
// O(n r^2) instead of an O(n^3) eigendecomposition.
func targetFactor(k kernel.Kernel, y *mat.Dense, eps float64) (*mat.Dense, error) {
	n0, _ := y.Dims()
	for p := 0; p < n0; p++ {
		yp := y.RawRowView(p)
		if v := k.Eval(yp, yp); math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("exact: output kernel %v gives the non-finite value %v for target row %d; check its parameters and the size of the targets", k, v, p+1)
		}
	}
	psi := pivotedCholesky(k, y, pivotTol)
	if psi == nil {
		return nil, fmt.Errorf("exact: the output kernel matrix of %v is zero", k)
	}
	n, _ := psi.Dims()
	centerCols(psi) // Psi_c = H Psi
	return pushThrough(psi, n, eps)
}

// pushThrough returns F = Psi C^{-1} with C^T C = Psi^T Psi + n eps I, so
// that F F^T = Psi Psi^T (Psi Psi^T + n eps I)^{-1} on the n points of the
// output term (the rows of psi, or its nonzero rows). psi is overwritten.
func pushThrough(psi *mat.Dense, n int, eps float64) (*mat.Dense, error) {
	_, r := psi.Dims()
	var s mat.SymDense
	s.SymOuterK(1, psi.T())
	for j := 0; j < r; j++ {
		s.SetSym(j, j, s.At(j, j)+float64(n)*eps)
	}
	var ch mat.Cholesky
	if !ch.Factorize(&s) {
		return nil, fmt.Errorf("exact: Psi^T Psi + n eps I is not positive definite (eps = %g)", eps)
	}
	u := ch.RawU().(*mat.TriDense).RawTriangular()
	// F = Psi C^{-1}: solve F C = Psi.
	blas64.Trsm(blas.Right, blas.NoTrans, 1, u, psi.RawMatrix())
	return psi, nil
}

// pivotedCholesky returns Psi (n x r) with K(y, y) ~ Psi Psi^T, choosing
// the largest remaining diagonal as pivot, until the remaining trace is at
// most tol times the trace (or no positive pivot is left). It returns nil
// for a zero kernel matrix.
func pivotedCholesky(k kernel.Kernel, y *mat.Dense, tol float64) *mat.Dense {
	n, _ := y.Dims()
	d := make([]float64, n)
	var trace float64
	for p := range d {
		d[p] = k.Eval(y.RawRowView(p), y.RawRowView(p))
		trace += d[p]
	}
	if !(trace > 0) {
		return nil
	}
	_, cols := pivchol.Factor(n, d, func(p int, dst []float64) {
		yp := y.RawRowView(p)
		for i := range dst {
			dst[i] = k.Eval(y.RawRowView(i), yp)
		}
	}, pivchol.Stop{Trace: tol * trace})
	if len(cols) == 0 {
		return nil
	}
	psi := mat.NewDense(n, len(cols), nil)
	for j, c := range cols {
		psi.SetCol(j, c)
	}
	return psi
}

// paperLowRank solves the paper's non-symmetric eig(D^{-1} F F^T K^2) through
// the r x r matrix (K^2 F)^T (D^{-1} F): with X = D^{-1} F, Z = K^2 F and
// Z^T X w = mu w, X w is an eigenvector of X Z^T with eigenvalue mu. The top k
// by magnitude are returned (real parts), unit-norm and divided by sqrt(mu);
// components beyond r have eigenvalue 0.
func paperLowRank(kc, f *mat.Dense, chol *mat.Cholesky, k int) ([]float64, *mat.Dense, bool) {
	n, r := f.Dims()
	var x, kf, z, small mat.Dense
	if err := chol.SolveTo(&x, f); err != nil {
		return nil, nil, false
	}
	kf.Mul(kc, f)
	z.Mul(kc, &kf)
	small.Mul(z.T(), &x)
	var eg mat.Eigen
	if !eg.Factorize(&small, mat.EigenRight) {
		return nil, nil, false
	}
	mu := eg.Values(nil)
	var w mat.CDense
	eg.VectorsTo(&w)
	order := sortByMagnitude(mu)
	vals := make([]float64, k)
	b := mat.NewDense(n, k, nil)
	wr := make([]float64, r)
	col := make([]float64, n)
	for m := 0; m < k && m < r; m++ {
		j := order[m]
		vals[m] = real(mu[j])
		for i := range wr {
			wr[i] = real(w.At(i, j))
		}
		// Re(X w) = X Re(w), X real.
		blas64.Gemv(blas.NoTrans, 1, x.RawMatrix(), blas64.Vector{N: r, Inc: 1, Data: wr}, 0, blas64.Vector{N: n, Inc: 1, Data: col})
		b.SetCol(m, col)
	}
	paperScale(b, vals)
	return vals, b, true
}

// paperScale normalizes each column of b to unit length and divides it by
// sqrt(vals[j]) when vals[j] > 0 (dica.m).
func paperScale(b *mat.Dense, vals []float64) {
	n, k := b.Dims()
	for j := 0; j < k; j++ {
		col := mat.Col(nil, j, b)
		s := blas64.Nrm2(blas64.Vector{N: n, Inc: 1, Data: col})
		if s == 0 {
			continue
		}
		if vals[j] > 0 {
			s *= math.Sqrt(vals[j])
		}
		for p := range col {
			col[p] /= s
		}
		b.SetCol(j, col)
	}
}

// zeroNonPositive zeroes the coefficient columns from positive on (the
// paper form has no meaningful scaling for them).
func zeroNonPositive(b *mat.Dense, positive int) {
	n, k := b.Dims()
	for j := positive; j < k; j++ {
		for p := 0; p < n; p++ {
			b.Set(p, j, 0)
		}
	}
}

// supervisedScale returns tr(P_0 kc)/n for the centered kernel matrix kc,
// with P_0 the projection onto the centered one-hot labels' span (O(n^2):
// the sum over classes of the class's block sum of kc over its size), or
// onto the span of the centered output kernel matrix for real targets
// (O(n^2 r)).
func supervisedScale(kc *mat.Dense, ds *dataset.Dataset, o Options) float64 {
	n := ds.N()
	var tr float64
	if ds.Label != nil {
		// Over the n_L labelled points L (all of them but for partial
		// labels): P_0 = sum_j 1_j 1_j^T / n_j - 1_L 1_L^T / n_L, the term
		// of 1_L vanishing when L is every point (1^T kc = 0).
		block := make([]float64, ds.NumClasses())
		var all float64
		nl := 0
		for _, c := range ds.Label {
			if c != dataset.NoLabel {
				nl++
			}
		}
		kr := kc.RawMatrix()
		for p, cp := range ds.Label {
			if cp == dataset.NoLabel {
				continue
			}
			row := kr.Data[p*kr.Stride : p*kr.Stride+n]
			for q, cq := range ds.Label {
				if cq == cp {
					block[cp] += row[q]
				}
				if nl < n && cq != dataset.NoLabel {
					all += row[q]
				}
			}
		}
		if nl == 0 {
			return 0
		}
		for j, size := range ds.ClassSizes() {
			if size > 0 {
				tr += block[j] / float64(size)
			}
		}
		if nl < n {
			tr -= all / float64(nl)
		}
		return tr / float64(nl)
	}
	// P_0 is the projection onto the span of the centered pivoted Cholesky
	// factor Psi_c of L (see targetFactor), which does not depend on
	// epsilon: tr(P_0 kc) = tr((Psi_c^T Psi_c)^+ Psi_c^T kc Psi_c), the
	// pseudo-inverse over the eigenvalues above factorTol times the
	// largest.
	psi := pivotedCholesky(o.OutputKernel, ds.Target, pivotTol)
	if psi == nil {
		return 0
	}
	centerCols(psi)
	_, r := psi.Dims()
	var g mat.SymDense
	g.SymOuterK(1, psi.T())
	var kf, fkf mat.Dense
	kf.Mul(kc, psi)
	fkf.Mul(psi.T(), &kf)
	var es mat.EigenSym
	if !es.Factorize(&g, true) {
		return math.NaN()
	}
	vals := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	var hv mat.Dense
	hv.Mul(&fkf, &v)
	for j := 0; j < r; j++ {
		if vals[j] > factorTol*vals[r-1] {
			tr += mat.Dot(v.ColView(j), hv.ColView(j)) / vals[j]
		}
	}
	return tr / float64(n)
}

// centerCols subtracts from each column of a its mean: a = H a.
func centerCols(a *mat.Dense) {
	n, r := a.Dims()
	for j := 0; j < r; j++ {
		var s float64
		for p := 0; p < n; p++ {
			s += a.At(p, j)
		}
		s /= float64(n)
		for p := 0; p < n; p++ {
			a.Set(p, j, a.At(p, j)-s)
		}
	}
}

// countPositive returns the number of leading eigenvalues above
// zeroTol * vals[0].
func countPositive(vals []float64) int {
	if len(vals) == 0 || !(vals[0] > 0) {
		return 0
	}
	c := 0
	for _, v := range vals {
		if v > zeroTol*vals[0] {
			c++
		} else {
			break
		}
	}
	return c
}
