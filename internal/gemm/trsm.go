package gemm

import (
	"fmt"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
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

// Trsm solves a triangular system with many right-hand sides in place, B
// being overwritten by X:
//
//	s = blas.Left:  op(A) X = B, with B n x nrhs,
//	s = blas.Right: X op(A) = B, with B m x n,
//
// where A is the n x n triangle a.Uplo of a (the other triangle is not
// read), op(A) is A for blas.NoTrans and A^T for blas.Trans. This is BLAS
// dtrsm with alpha = 1 (blas64.Trsm(s, tA, 1, a, b)). Every case is
// implemented except X L = B and X U^T = B (s = blas.Right with op(A) lower
// triangular), and a.Diag must be blas.NonUnit; the others panic, as do
// inconsistent shapes. A zero diagonal gives Inf/NaN, as in BLAS.
//
// The solve is recursive: the off-diagonal blocks go through the GEMM
// kernel, diagonal blocks of order <= 32 through a substitution kernel
// that solves 32 right-hand sides at once, each by
//
//	x[j] = (b[j] - sum_{p<j} L[j][p] x[p]) * (1/L[j][j])
//
// with one FMA per term in increasing p (or its backward form for L^T), as
// in BLAS dtrsm, which also multiplies by the reciprocal of the diagonal.
// The right-hand sides (columns of B for blas.Left, rows for blas.Right)
// are split among up to workers goroutines (workers < 1 counts as 1); the
// result is bit-identical for any workers >= 1, and an upper triangle gives
// the same bits as the lower triangle that is its transpose.
func Trsm(s blas.Side, tA blas.Transpose, a blas64.Triangular, b blas64.General, workers int) {
	native.trsm(s, tA, a, b, workers)
}

func (im impl) trsm(s blas.Side, tA blas.Transpose, a blas64.Triangular, b blas64.General, workers int) {
	n := a.N
	checkMatrix("A", a.Data, a.Stride, n, n)
	checkMatrix("B", b.Data, b.Stride, b.Rows, b.Cols)
	if a.Diag != blas.NonUnit {
		panic("gemm: Trsm: only a non-unit diagonal is implemented")
	}
	l := lowerTri{data: a.Data, ld: a.Stride, upper: isUpper(a.Uplo)}
	// op(A) is L itself for a lower A not transposed or an upper A
	// transposed, otherwise L^T.
	opL := l.upper == isTrans(tA)
	switch s {
	case blas.Left:
		if b.Rows != n {
			panic(fmt.Sprintf("gemm: Trsm: B has %d rows, want %d", b.Rows, n))
		}
	case blas.Right:
		if b.Cols != n {
			panic(fmt.Sprintf("gemm: Trsm: B has %d columns, want %d", b.Cols, n))
		}
		if opL {
			panic("gemm: Trsm: X op(A) = B with op(A) lower triangular is not implemented")
		}
	default:
		panic("gemm: Trsm: bad side")
	}
	if n == 0 {
		return
	}
	switch {
	case s == blas.Right:
		m := b.Rows
		parallel(m, max(mc, chunkSize(m, workers)), workers, func(lo, hi int) {
			im.trsmLTR(hi-lo, n, l, b.Data[lo*b.Stride:], b.Stride, new(workspace))
		})
	case opL:
		parallel(b.Cols, chunkSize(b.Cols, workers), workers, func(lo, hi int) {
			im.trsmLL(n, hi-lo, l, b.Data[lo:], b.Stride, new(workspace))
		})
	default:
		parallel(b.Cols, chunkSize(b.Cols, workers), workers, func(lo, hi int) {
			im.trsmLTL(n, hi-lo, l, b.Data[lo:], b.Stride, new(workspace))
		})
	}
}

// lowerTri is the lower triangular matrix L of a solve or a factorization,
// stored either as itself, row-major (L[i][j] = data[i*ld+j]), or as the
// upper triangle of its transpose U = L^T (L[i][j] = data[j*ld+i]), the
// layout of mat.SymDense and mat.Cholesky.
type lowerTri struct {
	data  []float64
	ld    int
	upper bool
}

// at returns L[i][j].
func (t lowerTri) at(i, j int) float64 {
	if t.upper {
		return t.data[j*t.ld+i]
	}
	return t.data[i*t.ld+j]
}

// trailing returns the trailing diagonal block L[h:, h:].
func (t lowerTri) trailing(h int) lowerTri {
	t.data = t.data[h*t.ld+h:]
	return t
}

// below returns the block L[h:, :h] below the leading h x h block, as an
// operand of a product with leading dimension t.ld: stored as itself
// (trans false) or, in an upper t, as its transpose (trans true).
func (t lowerTri) below(h int) (data []float64, trans bool) {
	if t.upper {
		return t.data[h:], true
	}
	return t.data[h*t.ld:], false
}

// base returns the leading n x n block (n <= trsmBase) of L in the layout
// the trsm kernel reads, row-major lower with stride ldl: t's own storage,
// or for an upper t a copy in buf. It stores the reciprocals of the
// diagonal in rinv.
func (t lowerTri) base(n int, buf *[trsmBase * trsmBase]float64, rinv *[trsmBase]float64) (l []float64, ldl int) {
	for j := 0; j < n; j++ {
		rinv[j] = 1 / t.at(j, j)
	}
	if !t.upper {
		return t.data, t.ld
	}
	for j := 0; j < n; j++ {
		for p := 0; p < j; p++ {
			buf[j*trsmBase+p] = t.data[p*t.ld+j]
		}
	}
	return buf[:], trsmBase
}

// isUpper reports whether uplo is blas.Upper; it panics unless uplo is
// blas.Upper or blas.Lower.
func isUpper(uplo blas.Uplo) bool {
	switch uplo {
	case blas.Upper:
		return true
	case blas.Lower:
		return false
	}
	panic("gemm: bad triangle (blas.Uplo)")
}

// isTrans reports whether t transposes; it panics on values other than
// blas.NoTrans, blas.Trans and blas.ConjTrans (which is blas.Trans for real
// matrices).
func isTrans(t blas.Transpose) bool {
	switch t {
	case blas.NoTrans:
		return false
	case blas.Trans, blas.ConjTrans:
		return true
	}
	panic("gemm: bad transpose (blas.Transpose)")
}

// trsmLL solves L X = B for the w columns at b, serially.
func (im impl) trsmLL(n, w int, l lowerTri, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		im.trsmLLBase(n, w, l, b, ldb)
		return
	}
	h := split(n)
	im.trsmLL(h, w, l, b, ldb, ws)
	// B2 -= L21 X1.
	l21, tr := l.below(h)
	im.run(&product{m: n - h, n: w, k: h, alpha: -1, a: l21, lda: l.ld, transA: tr,
		b: b, ldb: ldb, c: b[h*ldb:], ldc: ldb}, 1, ws)
	im.trsmLL(n-h, w, l.trailing(h), b[h*ldb:], ldb, ws)
}

// trsmLTL solves L^T X = B for the w columns at b, serially.
func (im impl) trsmLTL(n, w int, l lowerTri, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		im.trsmLTLBase(n, w, l, b, ldb)
		return
	}
	h := split(n)
	im.trsmLTL(n-h, w, l.trailing(h), b[h*ldb:], ldb, ws)
	// B1 -= L21^T X2.
	l21, tr := l.below(h)
	im.run(&product{m: h, n: w, k: n - h, alpha: -1, a: l21, lda: l.ld, transA: !tr,
		b: b[h*ldb:], ldb: ldb, c: b, ldc: ldb}, 1, ws)
	im.trsmLTL(h, w, l, b, ldb, ws)
}

// trsmLTR solves X L^T = B for the m rows at b, serially: each row x of X
// solves L x^T = b^T.
func (im impl) trsmLTR(m, n int, l lowerTri, b []float64, ldb int, ws *workspace) {
	if n <= trsmBase {
		im.trsmLTRBase(m, n, l, b, ldb)
		return
	}
	h := split(n)
	im.trsmLTR(m, h, l, b, ldb, ws)
	// B2 -= X1 L21^T.
	l21, tr := l.below(h)
	im.run(&product{m: m, n: n - h, k: h, alpha: -1, a: b, lda: ldb,
		b: l21, ldb: l.ld, transB: !tr, c: b[h:], ldc: ldb}, 1, ws)
	im.trsmLTR(m, n-h, l.trailing(h), b[h:], ldb, ws)
}

// trsmRows is the number of right-hand sides that trsmKern solves at once.
const trsmRows = 32

// trsmLTRBase solves X L^T = B for n <= trsmBase: groups of trsmRows rows
// of B are transposed into a small buffer (zero rows past m) and solved by
// the trsm kernel, each row by forward substitution.
func (im impl) trsmLTRBase(m, n int, lt lowerTri, b []float64, ldb int) {
	var rinv [trsmBase]float64
	var buf [trsmBase * trsmBase]float64
	l, ldl := lt.base(n, &buf, &rinv)
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
// partial group through a zero-padded copy.
func (im impl) trsmLLBase(n, w int, lt lowerTri, b []float64, ldb int) {
	var rinv [trsmBase]float64
	var buf [trsmBase * trsmBase]float64
	l, ldl := lt.base(n, &buf, &rinv)
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

// trsmLTLBase solves L^T X = B for n <= trsmBase, w columns of B, by
// backward substitution x[j] = (b[j] - sum_{p>j} L[p][j] x[p]) * (1/L[j][j])
// with the terms in decreasing p. In reversed order (j' = n-1-j) this is a
// forward substitution with the lower-triangular M[j'][p'] = L[n-1-p'][n-1-j'],
// which the trsm kernel solves on groups of trsmRows columns copied in
// reversed row order.
func (im impl) trsmLTLBase(n, w int, l lowerTri, b []float64, ldb int) {
	var rinv [trsmBase]float64
	var mt [trsmBase * trsmBase]float64
	for jr := 0; jr < n; jr++ {
		j := n - 1 - jr
		rinv[jr] = 1 / l.at(j, j)
		for pr := 0; pr < jr; pr++ {
			mt[jr*trsmBase+pr] = l.at(n-1-pr, j)
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
