package gemm

import (
	"sync"
	"sync/atomic"
)

// trsmBase is the order below which the triangular solves use scalar
// substitution; larger systems are split in two and the off-diagonal block
// is applied with the GEMM kernel (recursive blocking).
const trsmBase = 32

// split returns the order of the leading diagonal block when an order-n
// triangle is split in two.
func split(n int) int {
	h := n / 2
	if h >= 16 {
		h &^= 7
	}
	return h
}

// parallel calls f(lo, hi) on consecutive chunks [lo, hi) covering
// [0, total), each of chunk indices (the last one shorter), from up to
// workers goroutines.
func parallel(total, chunk, workers int, f func(lo, hi int)) {
	nChunks := (total + chunk - 1) / chunk
	workers = max(1, min(workers, nChunks))
	if workers == 1 {
		if total > 0 {
			f(0, total)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				f(c*chunk, min(total, (c+1)*chunk))
			}
		}()
	}
	wg.Wait()
}

// chunkSize returns the width of the independent chunks that a solve with
// total independent columns (or rows) is split into for workers goroutines:
// about two per worker, a multiple of nr, at least 2*nr.
func chunkSize(total, workers int) int {
	c := (total + 2*workers - 1) / (2 * workers)
	c = (c + nr - 1) / nr * nr
	return max(c, 2*nr)
}

// TrsmLowerLeft solves L X = B in place: on return B (n x nrhs, row-major,
// leading dimension ldb) holds X = L^{-1} B, where L is the n x n lower
// triangle (diagonal included) of l (row-major, leading dimension ldl; the
// strictly upper part is not read). This is BLAS dtrsm with side = Left,
// uplo = Lower, trans = NoTrans, diag = NonUnit, alpha = 1. The columns of
// B are split among up to workers goroutines; the result is bit-identical
// for any workers >= 1. A zero diagonal gives Inf/NaN, as in BLAS. It
// panics on inconsistent shapes.
func TrsmLowerLeft(n, nrhs int, l []float64, ldl int, b []float64, ldb int, workers int) {
	native.trsmLowerLeft(n, nrhs, l, ldl, b, ldb, workers)
}

func (im impl) trsmLowerLeft(n, nrhs int, l []float64, ldl int, b []float64, ldb int, workers int) {
	checkMatrix("L", l, ldl, n, n)
	checkMatrix("B", b, ldb, n, nrhs)
	if n == 0 {
		return
	}
	parallel(nrhs, chunkSize(nrhs, workers), workers, func(lo, hi int) {
		im.trsmLL(n, hi-lo, l, ldl, b[lo:], ldb, new(workspace))
	})
}

// trsmLL solves L X = B for the w columns at b, serially.
func (im impl) trsmLL(n, w int, l []float64, ldl int, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		for i := 0; i < n; i++ {
			bi := b[i*ldb : i*ldb+w]
			li := l[i*ldl : i*ldl+i+1]
			for p, lp := range li[:i] {
				bp := b[p*ldb : p*ldb+w]
				for j := range bi {
					bi[j] -= lp * bp[j]
				}
			}
			d := li[i]
			for j := range bi {
				bi[j] /= d
			}
		}
		return
	}
	h := split(n)
	im.trsmLL(h, w, l, ldl, b, ldb, ws)
	// B2 -= L21 X1.
	im.run(&product{m: n - h, n: w, k: h, alpha: -1, a: l[h*ldl:], lda: ldl,
		b: b, ldb: ldb, c: b[h*ldb:], ldc: ldb}, 1, ws)
	im.trsmLL(n-h, w, l[h*ldl+h:], ldl, b[h*ldb:], ldb, ws)
}

// TrsmLowerTransLeft solves L^T X = B in place: on return B (n x nrhs)
// holds X = L^{-T} B, with L the n x n lower triangle of l as in
// TrsmLowerLeft (BLAS dtrsm with side = Left, uplo = Lower, trans = Trans,
// diag = NonUnit, alpha = 1). With the factor of Cholesky, TrsmLowerLeft
// followed by TrsmLowerTransLeft solves A X = B. The columns of B are split
// among up to workers goroutines; the result is bit-identical for any
// workers >= 1. It panics on inconsistent shapes.
func TrsmLowerTransLeft(n, nrhs int, l []float64, ldl int, b []float64, ldb int, workers int) {
	native.trsmLowerTransLeft(n, nrhs, l, ldl, b, ldb, workers)
}

func (im impl) trsmLowerTransLeft(n, nrhs int, l []float64, ldl int, b []float64, ldb int, workers int) {
	checkMatrix("L", l, ldl, n, n)
	checkMatrix("B", b, ldb, n, nrhs)
	if n == 0 {
		return
	}
	parallel(nrhs, chunkSize(nrhs, workers), workers, func(lo, hi int) {
		im.trsmLTL(n, hi-lo, l, ldl, b[lo:], ldb, new(workspace))
	})
}

// trsmLTL solves L^T X = B for the w columns at b, serially.
func (im impl) trsmLTL(n, w int, l []float64, ldl int, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		for i := n - 1; i >= 0; i-- {
			bi := b[i*ldb : i*ldb+w]
			li := l[i*ldl : i*ldl+i+1]
			d := li[i]
			for j := range bi {
				bi[j] /= d
			}
			for p, lp := range li[:i] {
				bp := b[p*ldb : p*ldb+w]
				for j := range bp {
					bp[j] -= lp * bi[j]
				}
			}
		}
		return
	}
	h := split(n)
	im.trsmLTL(n-h, w, l[h*ldl+h:], ldl, b[h*ldb:], ldb, ws)
	// B1 -= L21^T X2.
	im.run(&product{m: h, n: w, k: n - h, alpha: -1, a: l[h*ldl:], lda: ldl, transA: true,
		b: b[h*ldb:], ldb: ldb, c: b, ldc: ldb}, 1, ws)
	im.trsmLTL(h, w, l, ldl, b, ldb, ws)
}

// TrsmLowerTransRight solves X L^T = B in place: on return B (m x n,
// row-major, leading dimension ldb) holds X = B L^{-T}, with L the n x n
// lower triangle of l (BLAS dtrsm with side = Right, uplo = Lower,
// trans = Trans, diag = NonUnit, alpha = 1). Equivalently each row x of X
// solves L x^T = b^T. Cholesky uses it for the panel below each diagonal
// block. The rows of B are split among up to workers goroutines; the
// result is bit-identical for any workers >= 1. It panics on inconsistent
// shapes.
func TrsmLowerTransRight(m, n int, l []float64, ldl int, b []float64, ldb int, workers int) {
	native.trsmLowerTransRight(m, n, l, ldl, b, ldb, workers)
}

func (im impl) trsmLowerTransRight(m, n int, l []float64, ldl int, b []float64, ldb int, workers int) {
	checkMatrix("L", l, ldl, n, n)
	checkMatrix("B", b, ldb, m, n)
	if n == 0 {
		return
	}
	parallel(m, max(mc, chunkSize(m, workers)), workers, func(lo, hi int) {
		im.trsmLTR(hi-lo, n, l, ldl, b[lo*ldb:], ldb, new(workspace))
	})
}

// trsmLTR solves X L^T = B for the m rows at b, serially.
func (im impl) trsmLTR(m, n int, l []float64, ldl int, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		r := 0
		// Four rows at a time: four independent dependency chains.
		for ; r+4 <= m; r += 4 {
			x0 := b[r*ldb : r*ldb+n]
			x1 := b[(r+1)*ldb : (r+1)*ldb+n]
			x2 := b[(r+2)*ldb : (r+2)*ldb+n]
			x3 := b[(r+3)*ldb : (r+3)*ldb+n]
			for j := range x0 {
				lj := l[j*ldl : j*ldl+j+1]
				s0, s1, s2, s3 := x0[j], x1[j], x2[j], x3[j]
				for p, v := range lj[:j] {
					s0 -= x0[p] * v
					s1 -= x1[p] * v
					s2 -= x2[p] * v
					s3 -= x3[p] * v
				}
				d := lj[j]
				x0[j], x1[j], x2[j], x3[j] = s0/d, s1/d, s2/d, s3/d
			}
		}
		for ; r < m; r++ {
			x := b[r*ldb : r*ldb+n]
			for j := range x {
				lj := l[j*ldl : j*ldl+j+1]
				s := x[j]
				for p, v := range lj[:j] {
					s -= x[p] * v
				}
				x[j] = s / lj[j]
			}
		}
		return
	}
	h := split(n)
	im.trsmLTR(m, h, l, ldl, b, ldb, ws)
	// B2 -= X1 L21^T.
	im.run(&product{m: m, n: n - h, k: h, alpha: -1, a: b, lda: ldb,
		b: l[h*ldl:], ldb: ldl, transB: true, c: b[h:], ldc: ldb}, 1, ws)
	im.trsmLTR(m, n-h, l[h*ldl+h:], ldl, b[h:], ldb, ws)
}
