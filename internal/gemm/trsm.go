package gemm

import (
	"math"
	"sync"
	"sync/atomic"
)

// trsmBase is the largest order that the triangular solves hand to the
// substitution kernel (trsmRows right-hand sides at a time); larger systems
// are split in two and the off-diagonal block is applied with the GEMM
// kernel (recursive blocking).
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
// B are split among up to workers goroutines (workers < 1 counts as 1);
// the result is bit-identical for any workers >= 1. A zero diagonal gives
// Inf/NaN, as in BLAS. It panics on inconsistent shapes.
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
		im.trsmLLBase(n, w, l, ldl, b, ldb)
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
		im.trsmLTLBase(n, w, l, ldl, b, ldb)
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
		im.trsmLTRBase(m, n, l, ldl, b, ldb)
		return
	}
	h := split(n)
	im.trsmLTR(m, h, l, ldl, b, ldb, ws)
	// B2 -= X1 L21^T.
	im.run(&product{m: m, n: n - h, k: h, alpha: -1, a: b, lda: ldb,
		b: l[h*ldl:], ldb: ldl, transB: true, c: b[h:], ldc: ldb}, 1, ws)
	im.trsmLTR(m, n-h, l[h*ldl+h:], ldl, b[h:], ldb, ws)
}

// trsmRows is the number of right-hand sides that trsmKern solves at once.
const trsmRows = 32

// trsmLTRBase solves X L^T = B for n <= trsmBase: groups of trsmRows rows
// of B are transposed into a small buffer (zero rows past m) and solved by
// the trsm kernel, each row x by forward substitution
//
//	x[j] = (b[j] - sum_{p<j} L[j][p] x[p]) * (1/L[j][j]),
//
// with one FMA per term, as in BLAS dtrsm (which also multiplies by the
// reciprocal of the diagonal).
func (im impl) trsmLTRBase(m, n int, l []float64, ldl int, b []float64, ldb int) {
	var rinv [trsmBase]float64
	for j := 0; j < n; j++ {
		rinv[j] = 1 / l[j*ldl+j]
	}
	var xt [trsmBase * trsmRows]float64
	for r0 := 0; r0 < m; r0 += trsmRows {
		g := min(trsmRows, m-r0)
		if g < trsmRows {
			clear(xt[:])
		}
		i := 0
		for ; i+4 <= g; i += 4 {
			o := (r0 + i) * ldb
			b0, b1 := b[o:o+n], b[o+ldb:o+ldb+n]
			b2, b3 := b[o+2*ldb:o+2*ldb+n], b[o+3*ldb:o+3*ldb+n]
			for j := range b0 {
				d := xt[j*trsmRows+i : j*trsmRows+i+4 : j*trsmRows+i+4]
				d[0], d[1], d[2], d[3] = b0[j], b1[j], b2[j], b3[j]
			}
		}
		for ; i < g; i++ {
			for j, v := range b[(r0+i)*ldb : (r0+i)*ldb+n] {
				xt[j*trsmRows+i] = v
			}
		}
		im.trsmKern(n, l, ldl, xt[:], trsmRows, rinv[:])
		i = 0
		for ; i+4 <= g; i += 4 {
			o := (r0 + i) * ldb
			b0, b1 := b[o:o+n], b[o+ldb:o+ldb+n]
			b2, b3 := b[o+2*ldb:o+2*ldb+n], b[o+3*ldb:o+3*ldb+n]
			for j := range b0 {
				d := xt[j*trsmRows+i : j*trsmRows+i+4 : j*trsmRows+i+4]
				b0[j], b1[j], b2[j], b3[j] = d[0], d[1], d[2], d[3]
			}
		}
		for ; i < g; i++ {
			x := b[(r0+i)*ldb : (r0+i)*ldb+n]
			for j := range x {
				x[j] = xt[j*trsmRows+i]
			}
		}
	}
}

// trsmLLBase solves L X = B for n <= trsmBase, w columns of B: groups of
// trsmRows columns are solved in place by the trsm kernel, the last
// partial group through a zero-padded copy. Each column x is computed by
// the forward substitution of trsmLTRBase.
func (im impl) trsmLLBase(n, w int, l []float64, ldl int, b []float64, ldb int) {
	var rinv [trsmBase]float64
	for j := 0; j < n; j++ {
		rinv[j] = 1 / l[j*ldl+j]
	}
	c0 := 0
	for ; c0+trsmRows <= w; c0 += trsmRows {
		im.trsmKern(n, l, ldl, b[c0:], ldb, rinv[:])
	}
	if g := w - c0; g > 0 {
		var xt [trsmBase * trsmRows]float64
		for j := 0; j < n; j++ {
			copy(xt[j*trsmRows:j*trsmRows+g], b[j*ldb+c0:j*ldb+w])
		}
		im.trsmKern(n, l, ldl, xt[:], trsmRows, rinv[:])
		for j := 0; j < n; j++ {
			copy(b[j*ldb+c0:j*ldb+w], xt[j*trsmRows:j*trsmRows+g])
		}
	}
}

// trsmKernGo is the portable trsm kernel (see impl.trsmKern).
func trsmKernGo(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64) {
	for j := 0; j < n; j++ {
		xj := x[j*ldx : j*ldx+trsmRows]
		lj := l[j*ldl : j*ldl+j]
		for p, v := range lj {
			xp := x[p*ldx : p*ldx+trsmRows]
			for i := range xj {
				xj[i] = math.FMA(-v, xp[i], xj[i])
			}
		}
		for i := range xj {
			xj[i] *= rinv[j]
		}
	}
}

// trsmKernGoMulAdd is trsmKernGo with x - y*z in place of fma(-y, z, x),
// for amd64 CPUs without FMA (see kernGoMulAdd).
func trsmKernGoMulAdd(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64) {
	for j := 0; j < n; j++ {
		xj := x[j*ldx : j*ldx+trsmRows]
		lj := l[j*ldl : j*ldl+j]
		for p, v := range lj {
			xp := x[p*ldx : p*ldx+trsmRows]
			for i := range xj {
				xj[i] -= v * xp[i]
			}
		}
		for i := range xj {
			xj[i] *= rinv[j]
		}
	}
}

// trsmLTLBase solves L^T X = B for n <= trsmBase, w columns of B, by
// backward substitution x[j] = (b[j] - sum_{p>j} L[p][j] x[p]) * (1/L[j][j])
// with the terms in decreasing p. In reversed order (j' = n-1-j) this is a
// forward substitution with the lower-triangular M[j'][p'] = L[n-1-p'][n-1-j'],
// which the trsm kernel solves on groups of trsmRows columns copied in
// reversed row order.
func (im impl) trsmLTLBase(n, w int, l []float64, ldl int, b []float64, ldb int) {
	var rinv [trsmBase]float64
	var mt [trsmBase * trsmBase]float64
	for jr := 0; jr < n; jr++ {
		j := n - 1 - jr
		rinv[jr] = 1 / l[j*ldl+j]
		for pr := 0; pr < jr; pr++ {
			mt[jr*trsmBase+pr] = l[(n-1-pr)*ldl+j]
		}
	}
	var xt [trsmBase * trsmRows]float64
	for c0 := 0; c0 < w; c0 += trsmRows {
		g := min(trsmRows, w-c0)
		if g < trsmRows {
			clear(xt[:])
		}
		for jr := 0; jr < n; jr++ {
			j := n - 1 - jr
			copy(xt[jr*trsmRows:jr*trsmRows+g], b[j*ldb+c0:j*ldb+c0+g])
		}
		im.trsmKern(n, mt[:], trsmBase, xt[:], trsmRows, rinv[:])
		for jr := 0; jr < n; jr++ {
			j := n - 1 - jr
			copy(b[j*ldb+c0:j*ldb+c0+g], xt[jr*trsmRows:jr*trsmRows+g])
		}
	}
}
