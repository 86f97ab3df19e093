package dica

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// Settings of tridiagTop.
const (
	// tridiagGap is the smallest distance, relative to ||T||_1, between
	// a wanted eigenvalue and its neighbours for which tridiagTop computes
	// the vector by inverse iteration. Closer eigenvalues make the vector
	// depend on rounding (its error is about eps ||T|| / gap for any
	// backward-stable method), so the caller uses the full
	// decomposition and keeps its choice of basis.
	tridiagGap = 1e-6
	// tridiagCluster is the distance, relative to ||T||_1, within which
	// inverse iteration orthogonalizes a vector against those already
	// computed (LAPACK's Dstein uses 1e-3).
	tridiagCluster = 1e-3
	// tridiagIters bounds the inverse iterations per vector.
	tridiagIters = 10
)

// tridiagTop returns the k largest eigenvalues of the symmetric a (largest
// first) and their unit eigenvectors as the columns of an n x k matrix,
// without the n x n eigenvector matrix of a full decomposition:
//
//   - a is reduced to tridiagonal form Q^T A Q = T (Dsytrd), exactly as
//     mat.EigenSym reduces it;
//   - all eigenvalues of T come from the implicit QL/QR iteration without
//     vectors (Dsteqr), the same iteration mat.EigenSym runs, so the
//     values equal those of mat.EigenSym bit for bit;
//   - each of the k vectors of T by inverse iteration with T - lambda I
//     factored by Gaussian elimination with partial pivoting, vectors of
//     eigenvalues closer than tridiagCluster ||T||_1 orthogonalized
//     against each other (as LAPACK's Dstein);
//   - the vectors of A = Q z, applying the k columns to the Householder
//     reflectors of Q: O(n^2 k) instead of the O(n^3) of forming Q and
//     rotating it.
//
// The vectors agree with those of mat.EigenSym to about eps ||A|| / gap,
// with gap the distance of the eigenvalue to the others. ok is false, and
// nothing is returned, when that bound is not small: a wanted eigenvalue
// within tridiagGap ||T||_1 of another, a matrix whose norm needs scaling
// (as Dsyev would), a QL iteration or an inverse iteration that did not
// converge. The caller then uses the full decomposition. Signs are not
// normalized.
func tridiagTop(a *mat.SymDense, k int) (vals []float64, vecs *mat.Dense, ok bool) {
	n := a.SymmetricDim()
	if k < 1 || k > n || n < 2 {
		return nil, nil, false
	}
	var impl lapackgonum.Implementation
	raw := a.RawSymmetric()
	aa := make([]float64, n*n)
	anrm := 0.0
	for i := range n {
		row := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		copy(aa[i*n+i:i*n+n], row)
		for _, v := range row {
			anrm = math.Max(anrm, math.Abs(v))
		}
	}
	// Dsyev scales a matrix whose largest entry is outside [rmin, rmax].
	const eps = 0x1p-53
	smlnum := math.SmallestNonzeroFloat64 / eps
	if !(anrm >= math.Sqrt(smlnum) && anrm <= math.Sqrt(1/smlnum)) {
		return nil, nil, false
	}
	// The workspace of mat.EigenSym's Dsytrd: Dsyev's optimal size less
	// the 2n it keeps for e and tau, so the blocking is the same.
	nb := impl.Ilaenv(1, "DSYTRD", "U", n, -1, -1, -1)
	lwork := max(1, nb*n)
	d := make([]float64, n)
	e := make([]float64, n-1)
	tau := make([]float64, n-1)
	work := make([]float64, max(lwork, n))
	impl.Dsytrd(blas.Upper, n, aa, n, d, e, tau, work, lwork)

	w := make([]float64, n)
	copy(w, d)
	ew := make([]float64, n-1)
	copy(ew, e)
	if !impl.Dsteqr(lapack.EVCompNone, n, w, ew, nil, 1, nil) {
		return nil, nil, false
	}
	// ||T||_1.
	tnorm := 0.0
	for i := range n {
		s := math.Abs(d[i])
		if i > 0 {
			s += math.Abs(e[i-1])
		}
		if i < n-1 {
			s += math.Abs(e[i])
		}
		tnorm = math.Max(tnorm, s)
	}
	if tnorm == 0 {
		return nil, nil, false
	}
	// The wanted eigenvalues are w[n-k:], in increasing order.
	for j := n - k; j < n; j++ {
		if j > 0 && w[j]-w[j-1] < tridiagGap*tnorm {
			return nil, nil, false
		}
		if j < n-1 && w[j+1]-w[j] < tridiagGap*tnorm {
			return nil, nil, false
		}
	}

	// z holds the vectors of T as the columns of an n x k matrix, largest
	// eigenvalue first.
	z := make([]float64, n*k)
	f := newTridiagLU(n)
	x := make([]float64, n)
	zc := make([][]float64, k) // the vectors of T, by column of z
	for c := range k {
		lambda := w[n-1-c]
		f.factor(d, e, lambda, eps*tnorm)
		// A fixed start with all components present.
		for i := range x {
			x[i] = 1 + 0.5*math.Sin(float64(i*(c+1))+0.25)
		}
		converged := false
		for it := 0; it < tridiagIters; it++ {
			scaleTo1(x)
			f.solve(x)
			for p := c - 1; p >= 0 && w[n-1-p]-lambda <= tridiagCluster*tnorm; p-- {
				v := zc[p]
				dot := 0.0
				for i, xi := range x {
					dot += xi * v[i]
				}
				for i := range x {
					x[i] -= dot * v[i]
				}
			}
			scaleTo1(x)
			if converged {
				break
			}
			if tridiagResidual(d, e, lambda, x) <= 4*float64(n)*eps*tnorm {
				// One more iteration once the residual is at rounding
				// level, as Dstein does.
				converged = true
			}
		}
		if !converged {
			return nil, nil, false
		}
		zc[c] = make([]float64, n)
		copy(zc[c], x)
		for i, xi := range x {
			z[i*k+c] = xi
		}
	}

	// A's vectors: Q z = H_{n-2} ... H_0 z, H_i = I - tau_i v v^T with
	// v[i] = 1, v[0:i] = A[0:i, i+1] (Dsytrd's layout for blas.Upper).
	v := make([]float64, n)
	for i := 0; i < n-1; i++ {
		if tau[i] == 0 {
			continue
		}
		for r := 0; r < i; r++ {
			v[r] = aa[r*n+i+1]
		}
		v[i] = 1
		impl.Dlarf(blas.Left, i+1, k, v[:i+1], 1, tau[i], z, k, work)
	}
	vals = make([]float64, k)
	for c := range k {
		vals[c] = w[n-1-c]
	}
	return vals, mat.NewDense(n, k, z), true
}

// scaleTo1 scales x to unit Euclidean norm (x must not be zero).
func scaleTo1(x []float64) {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	s = 1 / math.Sqrt(s)
	for i := range x {
		x[i] *= s
	}
}

// tridiagResidual returns ||(T - lambda I) x||_inf for the symmetric
// tridiagonal T of diagonal d and off-diagonal e.
func tridiagResidual(d, e []float64, lambda float64, x []float64) float64 {
	n := len(d)
	r := 0.0
	for i := range n {
		s := (d[i] - lambda) * x[i]
		if i > 0 {
			s += e[i-1] * x[i-1]
		}
		if i < n-1 {
			s += e[i] * x[i+1]
		}
		r = math.Max(r, math.Abs(s))
	}
	return r
}

// tridiagLU is the LU factorization with partial pivoting of a tridiagonal
// matrix (LAPACK's Dgttrf): L unit lower bidiagonal with multipliers l and
// row interchanges swap, U upper triangular with diagonal u and two
// super-diagonals u1, u2.
type tridiagLU struct {
	l, u, u1, u2 []float64
	swap         []bool
}

func newTridiagLU(n int) *tridiagLU {
	return &tridiagLU{l: make([]float64, n), u: make([]float64, n), u1: make([]float64, n), u2: make([]float64, n), swap: make([]bool, n)}
}

// factor factors T - lambda I (diagonal d, off-diagonal e); a zero pivot
// is replaced by tiny, so that the solve of inverse iteration stays finite
// at an exact eigenvalue.
func (f *tridiagLU) factor(d, e []float64, lambda, tiny float64) {
	n := len(d)
	u, u1, u2, l := f.u, f.u1, f.u2, f.l
	for i := range n {
		u[i] = d[i] - lambda
		u2[i] = 0
		if i < n-1 {
			u1[i] = e[i]
			l[i] = e[i]
		}
		f.swap[i] = false
	}
	for i := 0; i < n-1; i++ {
		if math.Abs(u[i]) >= math.Abs(l[i]) {
			if u[i] == 0 {
				u[i] = tiny
			}
			m := l[i] / u[i]
			l[i] = m
			u[i+1] -= m * u1[i]
			continue
		}
		// Interchange rows i and i+1.
		f.swap[i] = true
		m := u[i] / l[i]
		u[i] = l[i]
		l[i] = m
		t := u1[i]
		u1[i] = u[i+1]
		u[i+1] = t - m*u[i+1]
		if i < n-2 {
			u2[i] = u1[i+1]
			u1[i+1] = -m * u1[i+1]
		}
	}
	if u[n-1] == 0 {
		u[n-1] = tiny
	}
}

// solve overwrites b with the solution of (T - lambda I) x = b.
func (f *tridiagLU) solve(b []float64) {
	n := len(b)
	for i := 0; i < n-1; i++ {
		if f.swap[i] {
			b[i], b[i+1] = b[i+1], b[i]-f.l[i]*b[i+1]
		} else {
			b[i+1] -= f.l[i] * b[i]
		}
	}
	b[n-1] /= f.u[n-1]
	if n > 1 {
		b[n-2] = (b[n-2] - f.u1[n-2]*b[n-1]) / f.u[n-2]
	}
	for i := n - 3; i >= 0; i-- {
		b[i] = (b[i] - f.u1[i]*b[i+1] - f.u2[i]*b[i+2]) / f.u[i]
	}
}
