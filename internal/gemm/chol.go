package gemm

import "math"

// nb is the block size of the Cholesky factorization: the inner dimension
// of the trailing update (at most kc, so one packed block).
const nb = 192

// nbInner is the block size for the diagonal blocks of size nb.
const nbInner = 32

// Cholesky computes in place the Cholesky factorization A = L L^T of the
// n x n symmetric positive definite matrix A, stored row-major in a with
// leading dimension lda. Only the lower triangle (diagonal included) is
// read, and on return it holds L; the strictly upper triangle is neither
// read nor written. Cholesky reports whether A is positive definite (every
// pivot finite and > 0); if not, a holds a partial factorization.
//
// The algorithm is the blocked right-looking factorization (LAPACK dpotrf,
// lower) with block size 192: for each diagonal block, its factorization
// (the same algorithm with block size 32, then unblocked Cholesky-Crout),
// the panel solve L21 = A21 L11^{-T} (TrsmLowerTransRight) and the
// trailing update A22 -= L21 L21^T (lower triangle, GEMM kernel). The
// panel rows and the trailing row blocks are shared among up to workers
// goroutines (workers < 1 counts as 1); the result is bit-identical for
// any workers >= 1. The work is n^3/3 flops; the extra memory is about
// 200 n float64 for packing. It panics on inconsistent shapes.
func Cholesky(a []float64, lda, n int, workers int) bool {
	return native.cholesky(a, lda, n, workers)
}

func (im impl) cholesky(a []float64, lda, n int, workers int) bool {
	checkMatrix("A", a, lda, n, n)
	return im.potrf(a, lda, n, nb, workers, new(workspace))
}

// potrf is the blocked factorization with block size bs; the diagonal
// blocks are factored with block size nbInner, then unblocked.
func (im impl) potrf(a []float64, lda, n, bs, workers int, ws *workspace) bool {
	for k0 := 0; k0 < n; k0 += bs {
		kb := min(bs, n-k0)
		akk := a[k0*lda+k0:]
		if kb > nbInner && bs > nbInner {
			if !im.potrf(akk, lda, kb, nbInner, 1, ws) {
				return false
			}
		} else if !potf2(akk, lda, kb) {
			return false
		}
		n2 := n - k0 - kb
		if n2 == 0 {
			break
		}
		a21 := a[(k0+kb)*lda+k0:]
		g := &product{m: n2, n: n2, k: kb, alpha: -1, a: a21, lda: lda,
			b: a21, ldb: lda, transB: true, c: a[(k0+kb)*lda+k0+kb:], ldc: lda, tri: lower, gram: true}
		// Each chunk of rows of L21 (a multiple of nr) is solved, then
		// packed as columns of op(B) = L21^T for the trailing update.
		bp := grow(&ws.bp, (n2+nr-1)/nr*nr*kb)
		parallel(n2, max(mc, chunkSize(n2, workers)), workers, func(lo, hi int) {
			im.trsmLTR(hi-lo, kb, akk, lda, a21[lo*lda:], lda, new(workspace))
			g.packB(bp[lo*kb:], lo, hi-lo, 0, kb)
		})
		g.packedB = true
		im.run(g, workers, ws)
	}
	return true
}

// potf2 is the unblocked lower Cholesky factorization (row-oriented
// Cholesky-Crout) of the n x n block at a.
func potf2(a []float64, lda, n int) bool {
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+j+1]
		d := rj[j]
		for _, v := range rj[:j] {
			d -= v * v
		}
		if !(d > 0) || math.IsInf(d, 1) {
			return false
		}
		d = math.Sqrt(d)
		rj[j] = d
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			s := ri[j]
			for p, v := range rj[:j] {
				s -= ri[p] * v
			}
			ri[j] = s / d
		}
	}
	return true
}
