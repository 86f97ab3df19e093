package approx

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// KernelError judges the approximation K ~ Phi Phi^T of the kernel k by the
// feature map m on the sample points x (n x d), returning the relative
// Frobenius and spectral errors
//
//	frob = ||K - Phi Phi^T||_F / ||K||_F,
//	spec = ||K - Phi Phi^T||_2 / ||K||_2,
//
// where K = k(X, X) and Phi = m(X). The spectral norms are the largest
// absolute eigenvalues of the symmetric matrices, from a dense symmetric
// eigendecomposition (eigenvalues only), so the cost is O(n^2 (d + Dim) + n^3)
// time and O(n^2) memory: pass a sample of a few thousand points at most
// (kernel.SampleRows draws one). The errors are undefined (NaN or +Inf) when
// K is zero.
//
// KernelError panics if x does not have m.InputDim() columns or has no rows.
func KernelError(k kernel.Kernel, m Map, x *mat.Dense) (frob, spec float64) {
	e, ks, frob := errorMatrix(k, m, x)
	return frob, symNorm2(e) / symNorm2(ks)
}

// FrobeniusError returns the relative Frobenius error
// ||K - Phi Phi^T||_F / ||K||_F of KernelError alone, in O(n^2 (d + Dim))
// time without the eigendecompositions. It panics as KernelError does.
func FrobeniusError(k kernel.Kernel, m Map, x *mat.Dense) float64 {
	_, _, frob := errorMatrix(k, m, x)
	return frob
}

// errorMatrix returns E = K - Phi Phi^T, K (symmetrized) and
// ||E||_F / ||K||_F.
func errorMatrix(k kernel.Kernel, m Map, x *mat.Dense) (e, ks *mat.SymDense, frob float64) {
	n, d := x.Dims()
	if d != m.InputDim() {
		panic(fmt.Sprintf("approx: sample has %d columns, map expects %d", d, m.InputDim()))
	}
	var kx mat.Dense
	k.Block(&kx, x, x)
	var phi mat.Dense
	m.Map(&phi, x)
	// E = K - Phi Phi^T, with Phi Phi^T from one SYRK.
	e = mat.NewSymDense(n, nil)
	e.SymOuterK(-1, &phi)
	ks = mat.NewSymDense(n, nil)
	var ef, kf float64
	for i := 0; i < n; i++ {
		erow := e.RawSymmetric().Data[i*e.RawSymmetric().Stride:]
		for j := i; j < n; j++ {
			// Symmetrize K so that a kernel block with rounding asymmetry
			// still gives a symmetric error matrix.
			kij := (kx.At(i, j) + kx.At(j, i)) / 2
			eij := kij + erow[j]
			erow[j] = eij
			ks.SetSym(i, j, kij)
			w := 2.0
			if i == j {
				w = 1
			}
			ef += w * eij * eij
			kf += w * kij * kij
		}
	}
	return e, ks, math.Sqrt(ef) / math.Sqrt(kf)
}

// symNorm2 returns the spectral norm of a symmetric matrix: its largest
// absolute eigenvalue.
func symNorm2(a *mat.SymDense) float64 {
	var eig mat.EigenSym
	if !eig.Factorize(a, false) {
		return math.NaN()
	}
	var s float64
	for _, v := range eig.Values(nil) {
		s = math.Max(s, math.Abs(v))
	}
	return s
}

// PrincipalCosines returns the cosines of the principal angles between the
// column spaces of a (n x ka) and b (n x kb), in decreasing order (so the
// smallest angle comes first); there are min(ka, kb) of them.
//
// Following Björck and Golub (1973), with thin QR factorizations a = Qa Ra and
// b = Qb Rb the cosines are the singular values of Qa^T Qb, clamped to
// [0, 1]. A cosine of 1 means a shared direction, 0 an orthogonal one; two
// projections span the same subspace exactly when all cosines are 1.
// The columns of a and b must be linearly independent (full column rank);
// the cosines of rank-deficient inputs are not meaningful.
//
// PrincipalCosines panics if a and b have different numbers of rows, or more
// columns than rows.
func PrincipalCosines(a, b *mat.Dense) []float64 {
	na, ka := a.Dims()
	nb, kb := b.Dims()
	if na != nb {
		panic(fmt.Sprintf("approx: principal angles between %d-row and %d-row matrices", na, nb))
	}
	if ka > na || kb > nb {
		panic(fmt.Sprintf("approx: principal angles need at most %d columns, have %d and %d", na, ka, kb))
	}
	qa, qb := thinQ(a), thinQ(b)
	var c mat.Dense
	c.Mul(qa.T(), qb)
	var svd mat.SVD
	if !svd.Factorize(&c, mat.SVDNone) {
		panic("approx: SVD of Qa^T Qb did not converge")
	}
	s := svd.Values(nil)
	for i, v := range s {
		s[i] = math.Min(1, math.Max(0, v))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	return s
}

// thinQ returns the n x k orthonormal factor of the thin QR factorization of
// a (Householder, LAPACK Dgeqrf + Dorgqr).
func thinQ(a *mat.Dense) *mat.Dense {
	n, k := a.Dims()
	q := mat.DenseCopyOf(a)
	if k == 0 {
		return q
	}
	raw := q.RawMatrix()
	tau := make([]float64, k)
	work := make([]float64, 1)
	lapack64.Geqrf(raw, tau, work, -1)
	lwork := max(int(work[0]), n)
	work = make([]float64, lwork)
	lapack64.Geqrf(raw, tau, work, lwork)
	lapack64.Orgqr(raw, tau, work[:1], -1)
	if w := int(work[0]); w > len(work) {
		work = make([]float64, w)
	}
	lapack64.Orgqr(raw, tau, work, len(work))
	return q
}
