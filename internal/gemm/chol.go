package gemm

import (
	"context"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// nb is the block size of the Cholesky factorization: the inner dimension
// of the trailing update (at most kc, so one packed block).
const nb = 192

// nbInner is the block size for the diagonal blocks of size nb.
const nbInner = 32

// Potrf computes in place the Cholesky factorization of the n x n
// symmetric positive definite matrix A in a (LAPACK dpotrf, as
// lapack64.Potrf): for a.Uplo = blas.Lower, A = L L^T with L in the lower
// triangle; for blas.Upper, A = U^T U with U = L^T in the upper triangle,
// the layout of mat.SymDense and mat.Cholesky. Only that triangle is read
// and written; both give the same factor bit for bit. Potrf returns the
// factor, a view of a's data, and reports whether A is positive definite
// (every pivot finite and > 0); if not, the triangle holds a partial
// factorization. It panics on inconsistent shapes or a bad a.Uplo.
//
// The algorithm is the blocked right-looking factorization (dpotrf) with
// block size 192: for each diagonal block, its factorization (the same
// algorithm with block size 32, then unblocked Cholesky-Crout), the panel
// solve L21 = A21 L11^{-T} (Trsm) and the trailing update
// A22 -= L21 L21^T (one triangle, GEMM kernel). The panel and the trailing
// row blocks are shared among up to workers goroutines (workers < 1 counts
// as 1); the result is bit-identical for any workers >= 1. The work is
// n^3/3 flops; the extra memory is about 200 n float64 for packing.
func Potrf(a blas64.Symmetric, workers int) (t blas64.Triangular, ok bool) {
	return native.cholesky(a, workers)
}

// CholeskyTo computes the Cholesky factorization of the symmetric positive
// definite matrix a with Potrf and stores it in dst, the result of
// dst.Factorize(a) up to rounding (gonum factors with an unblocked LAPACK);
// dst then serves as any mat.Cholesky (SolveTo, LogDet, RawU, ...), its
// condition number estimated as mat.Cholesky.SetFromU does. It reports
// whether a is positive definite; if not, dst is reset, as by Factorize.
// a must not be empty.
func CholeskyTo(dst *mat.Cholesky, a mat.Symmetric, workers int) bool {
	ok, _ := CholeskyToContext(context.Background(), dst, a, workers)
	return ok
}

// CholeskyToContext is CholeskyTo that checks ctx before each block of 192
// columns (each block costs at most 192 n^2 flops, a fraction of a second
// at n = 8000) and stops with ctx's error when it is done, dst reset. The
// factor is the same, bit for bit.
func CholeskyToContext(ctx context.Context, dst *mat.Cholesky, a mat.Symmetric, workers int) (bool, error) {
	n := a.SymmetricDim()
	u := mat.NewTriDense(n, mat.Upper, nil)
	ur := u.RawTriangular()
	if s, ok := a.(mat.RawSymmetricer); ok && s.RawSymmetric().Uplo == blas.Upper {
		raw := s.RawSymmetric()
		for i := 0; i < n; i++ {
			copy(ur.Data[i*ur.Stride+i:i*ur.Stride+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
		}
	} else {
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				ur.Data[i*ur.Stride+j] = a.At(i, j)
			}
		}
	}
	ws := &workspace{stop: func() bool { return ctx.Err() != nil }}
	if _, ok := native.choleskyWith(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: ur.Stride, Data: ur.Data}, workers, ws); !ok {
		dst.Reset()
		return false, ctx.Err()
	}
	dst.SetFromU(u)
	return true, nil
}

func (im impl) cholesky(a blas64.Symmetric, workers int) (blas64.Triangular, bool) {
	return im.choleskyWith(a, workers, new(workspace))
}

func (im impl) choleskyWith(a blas64.Symmetric, workers int, ws *workspace) (blas64.Triangular, bool) {
	checkMatrix("A", a.Data, a.Stride, a.N, a.N)
	l := lowerTri{data: a.Data, ld: a.Stride, upper: isUpper(a.Uplo)}
	ok := im.potrf(l, a.N, nb, workers, ws)
	return blas64.Triangular{Uplo: a.Uplo, Diag: blas.NonUnit, N: a.N, Stride: a.Stride, Data: a.Data}, ok
}

// potrf is the blocked factorization of the n x n matrix held as l, with
// block size bs; the diagonal blocks are factored with block size nbInner,
// then unblocked.
func (im impl) potrf(l lowerTri, n, bs, workers int, ws *workspace) bool {
	tri := lower
	if l.upper {
		tri = upper
	}
	for k0 := 0; k0 < n; k0 += bs {
		if ws.stop != nil && ws.stop() {
			return false
		}
		kb := min(bs, n-k0)
		lkk := l.trailing(k0)
		if kb > nbInner && bs > nbInner {
			if !im.potrf(lkk, kb, nbInner, 1, ws) {
				return false
			}
		} else if !potf2(lkk, kb) {
			return false
		}
		n2 := n - k0 - kb
		if n2 == 0 {
			break
		}
		// The panel L21 (n2 x kb), stored as itself or as U12 = L21^T,
		// and the trailing update A22 -= L21 L21^T of the triangle.
		p, tr := lkk.below(kb)
		g := &product{m: n2, n: n2, k: kb, alpha: -1, a: p, lda: l.ld, transA: tr,
			b: p, ldb: l.ld, transB: !tr, c: lkk.trailing(kb).data, ldc: l.ld, tri: tri, gram: true}
		// Each chunk of rows of L21 (a multiple of nr) is solved, then
		// packed as columns of op(B) = L21^T for the trailing update.
		bp := grow(&ws.bp, (n2+nr-1)/nr*nr*kb)
		parallel(n2, max(mc, chunkSize(n2, workers)), workers, func(lo, hi int) {
			if tr {
				// Columns lo..hi of U12: L11 X = A12.
				im.trsmLL(kb, hi-lo, lkk, p[lo:], l.ld, new(workspace))
			} else {
				// Rows lo..hi of L21: X L11^T = A21.
				im.trsmLTR(hi-lo, kb, lkk, p[lo*l.ld:], l.ld, new(workspace))
			}
			g.packB(bp[lo*kb:], lo, hi-lo, 0, kb)
		})
		g.packedB = true
		im.run(g, workers, ws)
	}
	return true
}

// potf2 is the unblocked Cholesky factorization (Cholesky-Crout, by rows
// of L) of the n x n block held as l.
func potf2(l lowerTri, n int) bool {
	// L[i][j] = a[i*rs+j*cs].
	a, rs, cs := l.data, l.ld, 1
	if l.upper {
		rs, cs = 1, l.ld
	}
	for j := 0; j < n; j++ {
		d := a[j*rs+j*cs]
		for p := 0; p < j; p++ {
			v := a[j*rs+p*cs]
			d -= v * v
		}
		if !(d > 0) || math.IsInf(d, 1) {
			return false
		}
		d = math.Sqrt(d)
		a[j*rs+j*cs] = d
		for i := j + 1; i < n; i++ {
			s := a[i*rs+j*cs]
			for p := 0; p < j; p++ {
				s -= a[i*rs+p*cs] * a[j*rs+p*cs]
			}
			a[i*rs+j*cs] = s / d
		}
	}
	return true
}
