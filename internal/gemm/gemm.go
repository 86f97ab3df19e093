package gemm

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Blocking parameters: micro-tile mr x nr, inner block kc, row block mc.
const (
	mr = 4
	nr = 12
	kc = 256
	mc = 96 // multiple of mr
)

// impl carries the micro-kernel, so that tests can run the pure-Go kernel
// through exactly the same blocking as the assembly one.
type impl struct {
	// kern: C[i][j] = fma(alpha, acc[i][j], C[i][j]) for the mr x nr tile
	// at c (row stride ldc), acc[i][j] = sum_{p<k} a[p*sa+i]*b[p*sb+j]
	// with one FMA per term in increasing p. Packed panels have sa = mr,
	// sb = nr.
	kern func(k int, a []float64, sa int, b []float64, sb int, c []float64, ldc int, alpha float64)

	// trsmKern: forward substitution for trsmRows right-hand sides,
	// x_j = x[j*ldx : j*ldx+trsmRows]: for j < n,
	// x_j = (x_j - sum_{p<j} l[j*ldl+p] x_p) * rinv[j], with one FMA per
	// term in increasing p.
	trsmKern func(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64)

	// add: dst[i] += src[i] for i < len(src) rounded down to a multiple
	// of 16.
	add func(dst, src []float64)

	// addShifted: dst[i] += src[i] + shift[i] (src[i] + shift[i] rounded
	// first), and out[i] = that sum when out is not nil, for i < len(src)
	// rounded down to a multiple of 16.
	addShifted func(dst, src, shift, out []float64)

	// kern32: C[i][j] += float64(acc[i][j]) for the mr x nr32 tile at c
	// (row stride ldc), acc[i][j] = the float32 sum over p < k of
	// a[p*sa+i]*b[p*sb+j], one fma32 per term in increasing p.
	kern32 func(k int, a []float32, sa int, b []float32, sb int, c []float64, ldc int)

	// addShifted32: dst[i] += float64(src[i]) + shift[i] (the sum rounded
	// first), and out[i] = float32 of that sum when out is not nil, for
	// i < len(src) rounded down to a multiple of 16.
	addShifted32 func(dst []float64, src []float32, shift []float64, out []float32)
}

var goImpl = impl{kern: kernGo, trsmKern: trsmKernGo, add: addGo, addShifted: addShiftedGo, kern32: kern32Go, addShifted32: addShifted32Go}

// triangle restricts the elements of C that are written.
type triangle int

const (
	full  triangle = iota
	upper          // only j >= i
	lower          // only j <= i
)

// product describes C[i][j] += alpha * sum_k opA(i,k)*opB(k,j) for i < m,
// j < n, k < k, restricted to tri. opA(i,k) is a[i*lda+k], or a[k*lda+i]
// if transA; opB(k,j) is b[k*ldb+j], or b[j*ldb+k] if transB.
type product struct {
	m, n, k int
	alpha   float64
	a       []float64
	lda     int
	transA  bool
	b       []float64
	ldb     int
	transB  bool
	c       []float64
	ldc     int
	tri     triangle
	// packedB reports that the workspace passed to run already holds
	// opB packed (k <= kc).
	packedB bool
	// gram reports that opA = opB^T: the panels of A are read from the
	// packed B (see rowBlock), A is not packed.
	gram bool
	// prepacked, when not nil, holds opB packed by PackB: the block of
	// inner indices p0..p0+kb at prepacked[p0*np : (p0+kb)*np], np the
	// number of columns rounded up to a multiple of nr.
	prepacked []float64
}

// packA packs rows i0..i0+mb of opA, inner indices p0..p0+kb, into
// micro-panels of mr rows: dst[panel*kb*mr + p*mr + i]. Rows past m are
// zero.
func (g *product) packA(dst []float64, i0, mb, p0, kb int) {
	full := mb / mr
	if g.transA {
		// opA(i, p) = a[p*lda+i]: row p of a holds the values for all
		// panels at step p.
		for p := 0; p < kb; p++ {
			src := g.a[(p0+p)*g.lda+i0 : (p0+p)*g.lda+i0+mb]
			for q := 0; q < full; q++ {
				s := src[q*mr : q*mr+mr : q*mr+mr]
				d := dst[q*kb*mr+p*mr : q*kb*mr+p*mr+mr : q*kb*mr+p*mr+mr]
				d[0], d[1], d[2], d[3] = s[0], s[1], s[2], s[3]
			}
			if rest := mb - full*mr; rest > 0 {
				d := dst[full*kb*mr+p*mr : full*kb*mr+p*mr+mr]
				copy(d, src[full*mr:])
				clear(d[rest:])
			}
		}
		return
	}
	// opA(i, p) = a[i*lda+p]: read mr rows side by side.
	for q := 0; q < full; q++ {
		d := dst[q*kb*mr : (q+1)*kb*mr]
		ib := (i0+q*mr)*g.lda + p0
		r0 := g.a[ib : ib+kb]
		r1 := g.a[ib+g.lda : ib+g.lda+kb]
		r2 := g.a[ib+2*g.lda : ib+2*g.lda+kb]
		r3 := g.a[ib+3*g.lda : ib+3*g.lda+kb]
		for p := range r0 {
			dp := d[p*mr : p*mr+mr : p*mr+mr]
			dp[0], dp[1], dp[2], dp[3] = r0[p], r1[p], r2[p], r3[p]
		}
	}
	if rest := mb - full*mr; rest > 0 {
		d := dst[full*kb*mr : (full+1)*kb*mr]
		clear(d)
		for i := 0; i < rest; i++ {
			ib := (i0+full*mr+i)*g.lda + p0
			for p, v := range g.a[ib : ib+kb] {
				d[p*mr+i] = v
			}
		}
	}
}

// packB packs columns j0..j0+nb of opB, inner indices p0..p0+kb, into
// micro-panels of nr columns: dst[panel*kb*nr + p*nr + j]. Columns past n
// are zero.
func (g *product) packB(dst []float64, j0, nb, p0, kb int) {
	full := nb / nr
	if !g.transB {
		// opB(p, j) = b[p*ldb+j]: row p of b holds the values for all
		// panels at step p.
		for p := 0; p < kb; p++ {
			src := g.b[(p0+p)*g.ldb+j0 : (p0+p)*g.ldb+j0+nb]
			for q := 0; q < full; q++ {
				s := src[q*nr : q*nr+nr : q*nr+nr]
				d := dst[q*kb*nr+p*nr : q*kb*nr+p*nr+nr : q*kb*nr+p*nr+nr]
				d[0], d[1], d[2], d[3] = s[0], s[1], s[2], s[3]
				d[4], d[5], d[6], d[7] = s[4], s[5], s[6], s[7]
				d[8], d[9], d[10], d[11] = s[8], s[9], s[10], s[11]
			}
			if rest := nb - full*nr; rest > 0 {
				d := dst[full*kb*nr+p*nr : full*kb*nr+p*nr+nr]
				copy(d, src[full*nr:])
				clear(d[rest:])
			}
		}
		return
	}
	// opB(p, j) = b[j*ldb+p]: read nr rows side by side.
	for q := 0; q < full; q++ {
		d := dst[q*kb*nr : (q+1)*kb*nr]
		var rows [nr][]float64
		for j := range rows {
			jb := (j0+q*nr+j)*g.ldb + p0
			rows[j] = g.b[jb : jb+kb]
		}
		for p := 0; p < kb; p++ {
			dp := d[p*nr : p*nr+nr : p*nr+nr]
			dp[0], dp[1], dp[2], dp[3] = rows[0][p], rows[1][p], rows[2][p], rows[3][p]
			dp[4], dp[5], dp[6], dp[7] = rows[4][p], rows[5][p], rows[6][p], rows[7][p]
			dp[8], dp[9], dp[10], dp[11] = rows[8][p], rows[9][p], rows[10][p], rows[11][p]
		}
	}
	if rest := nb - full*nr; rest > 0 {
		d := dst[full*kb*nr : (full+1)*kb*nr]
		clear(d)
		for j := 0; j < rest; j++ {
			jb := (j0+full*nr+j)*g.ldb + p0
			for p, v := range g.b[jb : jb+kb] {
				d[p*nr+j] = v
			}
		}
	}
}

// rowBlock computes the rows i0..i0+mb of C for the inner block packed in
// bp (all n columns) and ap (the rows i0..i0+mb), kb inner indices. If ap
// is nil, opA is opB^T (a Gram matrix) and the micro-panels of A are read
// from bp with stride nr.
func (im impl) rowBlock(g *product, ap, bp []float64, i0, mb, kb int, tmp *[mr * nr]float64) {
	for jq := 0; jq*nr < g.n; jq++ {
		j0 := jq * nr
		nj := min(nr, g.n-j0)
		switch g.tri {
		case upper:
			if j0+nj-1 < i0 {
				continue
			}
		case lower:
			if j0 > i0+mb-1 {
				return
			}
		}
		b := bp[jq*kb*nr : (jq+1)*kb*nr]
		for iq := 0; iq*mr < mb; iq++ {
			ti := i0 + iq*mr
			mi := min(mr, mb-iq*mr)
			var a []float64
			sa := mr
			if ap != nil {
				a = ap[iq*kb*mr : (iq+1)*kb*mr]
			} else {
				q := ti / nr
				a, sa = bp[q*kb*nr+ti-q*nr:(q+1)*kb*nr], nr
			}
			if g.tri == upper && j0+nj-1 < ti {
				// Entirely below the diagonal; so are later row panels.
				break
			}
			inside := mi == mr && nj == nr
			switch g.tri {
			case upper:
				inside = inside && j0 >= ti+mr-1
			case lower:
				if j0 > ti+mi-1 {
					continue
				}
				inside = inside && j0+nr-1 <= ti
			}
			if inside {
				im.kern(kb, a, sa, b, nr, g.c[ti*g.ldc+j0:], g.ldc, g.alpha)
				continue
			}
			clear(tmp[:])
			im.kern(kb, a, sa, b, nr, tmp[:], nr, 1)
			for i := 0; i < mi; i++ {
				jlo, jhi := 0, nj
				switch g.tri {
				case upper:
					jlo = max(0, ti+i-j0)
				case lower:
					jhi = min(nj, ti+i-j0+1)
				}
				if jlo >= jhi {
					continue
				}
				ci := g.c[(ti+i)*g.ldc+j0 : (ti+i)*g.ldc+j0+jhi]
				tr := tmp[i*nr : i*nr+jhi]
				// fma(±1, t, c) is c ± t rounded once.
				switch g.alpha {
				case 1:
					for j := jlo; j < jhi; j++ {
						ci[j] += tr[j]
					}
				case -1:
					for j := jlo; j < jhi; j++ {
						ci[j] -= tr[j]
					}
				default:
					for j := jlo; j < jhi; j++ {
						ci[j] = math.FMA(g.alpha, tr[j], ci[j])
					}
				}
			}
		}
	}
}

// workspace holds packing buffers that successive products reuse (one
// goroutine at a time).
type workspace struct {
	bp   []float64   // packed B, shared by the workers
	ap   [][]float64 // packed A, one per worker
	stop func() bool // when not nil and true, potrf stops at its next block
}

// workspaces holds the packing buffers of products run without a
// workspace of their own.
var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// grow returns (*buf)[:n], reallocating if the capacity is short. The
// contents are unspecified.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// run computes the product with up to workers goroutines over row blocks
// of C. The result does not depend on workers.
func (im impl) run(g *product, workers int, ws *workspace) {
	if g.m == 0 || g.n == 0 || g.k == 0 || g.alpha == 0 {
		return
	}
	if ws == nil {
		// Callers such as a model's projection call this for every block
		// of a few hundred rows: the packing buffers come from a pool.
		ws = workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
	}
	if g.packedB && g.k > kc {
		panic("gemm: internal error: prepacked B with k > kc")
	}
	nPanels := (g.n + nr - 1) / nr
	kb0 := min(kc, g.k)
	var bp []float64
	if g.prepacked == nil {
		bp = grow(&ws.bp, nPanels*nr*kb0)
	}
	nBlocks := (g.m + mc - 1) / mc
	workers = max(1, min(workers, nBlocks))
	for len(ws.ap) < workers {
		ws.ap = append(ws.ap, nil)
	}
	aps := make([][]float64, workers)
	if !g.gram {
		for w := range aps {
			aps[w] = grow(&ws.ap[w], mc*kb0)
		}
	}
	var tmp [mr * nr]float64
	for p0 := 0; p0 < g.k; p0 += kc {
		kb := min(kc, g.k-p0)
		if g.prepacked != nil {
			bp = g.prepacked[p0*nPanels*nr : (p0+kb)*nPanels*nr]
		}
		if workers == 1 {
			if !g.packedB && g.prepacked == nil {
				g.packB(bp, 0, g.n, p0, kb)
			}
			for i0 := 0; i0 < g.m; i0 += mc {
				mb := min(mc, g.m-i0)
				if g.gram {
					im.rowBlock(g, nil, bp, i0, mb, kb, &tmp)
					continue
				}
				g.packA(aps[0], i0, mb, p0, kb)
				im.rowBlock(g, aps[0], bp, i0, mb, kb, &tmp)
			}
			continue
		}
		// Pack B in parallel, in runs of whole panels.
		if !g.packedB && g.prepacked == nil {
			parallel(nPanels, (nPanels+workers-1)/workers, workers, func(lo, hi int) {
				g.packB(bp[lo*nr*kb:], lo*nr, min(g.n, hi*nr)-lo*nr, p0, kb)
			})
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(ap []float64) {
				defer wg.Done()
				var tmp [mr * nr]float64
				for {
					// For the lower triangle the last blocks are the
					// largest: hand them out first.
					bl := int(next.Add(1)) - 1
					if bl >= nBlocks {
						return
					}
					if g.tri == lower {
						bl = nBlocks - 1 - bl
					}
					i0 := bl * mc
					mb := min(mc, g.m-i0)
					if g.gram {
						im.rowBlock(g, nil, bp, i0, mb, kb, &tmp)
						continue
					}
					g.packA(ap, i0, mb, p0, kb)
					im.rowBlock(g, ap, bp, i0, mb, kb, &tmp)
				}
			}(aps[w])
		}
		wg.Wait()
	}
}

// checkMatrix panics if a does not hold an r x c row-major matrix with
// leading dimension ld.
func checkMatrix(name string, a []float64, ld, r, c int) {
	if r < 0 || c < 0 {
		panic(fmt.Sprintf("gemm: negative dimension of %s: %d x %d", name, r, c))
	}
	if ld < max(1, c) {
		panic(fmt.Sprintf("gemm: leading dimension of %s %d < %d columns", name, ld, c))
	}
	if r > 0 && c > 0 && len(a) < (r-1)*ld+c {
		panic(fmt.Sprintf("gemm: %s has %d elements, need %d for %d x %d with stride %d", name, len(a), (r-1)*ld+c, r, c, ld))
	}
}

// Gemm computes C += alpha * op(A) * op(B), where op(X) is X for
// blas.NoTrans and X^T for blas.Trans (or blas.ConjTrans), C is m x n,
// op(A) m x k and op(B) k x n: BLAS dgemm with beta = 1
// (blas64.Gemm(tA, tB, alpha, a, b, 1, c)). Each element is computed as the
// package documentation describes. The rows of C are split among up to
// workers goroutines (workers < 1 counts as 1); the result is bit-identical
// for any workers >= 1. Gemm panics on inconsistent shapes.
func Gemm(tA, tB blas.Transpose, alpha float64, a, b, c blas64.General, workers int) {
	native.gemm(tA, tB, alpha, a, b, c, workers)
}

func (im impl) gemm(tA, tB blas.Transpose, alpha float64, a, b, c blas64.General, workers int) {
	transA, transB := isTrans(tA), isTrans(tB)
	checkMatrix("A", a.Data, a.Stride, a.Rows, a.Cols)
	checkMatrix("B", b.Data, b.Stride, b.Rows, b.Cols)
	checkMatrix("C", c.Data, c.Stride, c.Rows, c.Cols)
	m, n := c.Rows, c.Cols
	am, k := a.Rows, a.Cols
	if transA {
		am, k = k, am
	}
	bk, bn := b.Rows, b.Cols
	if transB {
		bk, bn = bn, bk
	}
	if am != m || bk != k || bn != n {
		panic(fmt.Sprintf("gemm: Gemm: op(A) is %d x %d, op(B) %d x %d and C %d x %d", am, k, bk, bn, m, n))
	}
	im.run(&product{m: m, n: n, k: k, alpha: alpha, a: a.Data, lda: a.Stride, transA: transA,
		b: b.Data, ldb: b.Stride, transB: transB, c: c.Data, ldc: c.Stride}, workers, nil)
}

// PackedB is the right operand op(B) of products C += alpha op(A) op(B)
// packed once (PackB) for use with many left operands (GemmPacked): the
// layout Gemm packs op(B) into for each call.
type PackedB struct {
	k, n int
	data []float64
}

// Dims returns the dimensions k x n of the packed op(B).
func (b *PackedB) Dims() (k, n int) { return b.k, b.n }

// PackB returns op(B) packed for GemmPacked, where op(B) is B for
// blas.NoTrans and B^T for blas.Trans (or blas.ConjTrans). It uses
// k x n rounded up to a multiple of 12 float64 and does not keep b.
func PackB(tB blas.Transpose, b blas64.General) *PackedB {
	checkMatrix("B", b.Data, b.Stride, b.Rows, b.Cols)
	transB := isTrans(tB)
	k, n := b.Rows, b.Cols
	if transB {
		k, n = n, k
	}
	nPanels := (n + nr - 1) / nr
	g := &product{k: k, n: n, b: b.Data, ldb: b.Stride, transB: transB}
	p := &PackedB{k: k, n: n, data: make([]float64, k*nPanels*nr)}
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		g.packB(p.data[p0*nPanels*nr:(p0+kb)*nPanels*nr], 0, n, p0, kb)
	}
	return p
}

// GemmPacked computes C += alpha * op(A) * op(B) for op(B) packed by
// PackB: the same product, bit for bit, as Gemm with the matrix PackB was
// given, without packing op(B) again. It panics on inconsistent shapes.
func GemmPacked(tA blas.Transpose, alpha float64, a blas64.General, b *PackedB, c blas64.General, workers int) {
	native.gemmPacked(tA, alpha, a, b, c, workers)
}

func (im impl) gemmPacked(tA blas.Transpose, alpha float64, a blas64.General, b *PackedB, c blas64.General, workers int) {
	transA := isTrans(tA)
	checkMatrix("A", a.Data, a.Stride, a.Rows, a.Cols)
	checkMatrix("C", c.Data, c.Stride, c.Rows, c.Cols)
	m, n := c.Rows, c.Cols
	am, k := a.Rows, a.Cols
	if transA {
		am, k = k, am
	}
	if am != m || b.k != k || b.n != n {
		panic(fmt.Sprintf("gemm: GemmPacked: op(A) is %d x %d, op(B) %d x %d and C %d x %d", am, k, b.k, b.n, m, n))
	}
	im.run(&product{m: m, n: n, k: k, alpha: alpha, a: a.Data, lda: a.Stride, transA: transA,
		c: c.Data, ldc: c.Stride, prepacked: b.data}, workers, nil)
}

// Syrk adds A^T A to the upper triangle of C: for 0 <= i <= j < n,
//
//	C[i][j] += sum_{k<r} A[k][i] * A[k][j],
//
// where A is r x n and C is n x n. This is BLAS dsyrk with alpha = beta = 1
// (blas64.Syrk(t, 1, a, 1, c)) in the one case implemented, t = blas.Trans
// and c.Uplo = blas.Upper: the streaming Gram sum of a block of r feature
// rows. The strictly lower triangle of C is neither read nor written. The
// computation is single-threaded (call it from several goroutines on
// distinct C buffers for parallelism), uses O(min(r, 256) * n) float64 of
// scratch per call (about 4 MB at n = 2000, 0.5 MB at n = 160; up to
// n = 160 it comes from a pool), and its result is a deterministic function
// of the inputs: the same bits whatever the goroutine, GOMAXPROCS or machine
// load (C[i][j] += acc_b for each block b of 256 rows in turn, as described
// in the package documentation). It panics on inconsistent shapes and on
// the cases not implemented.
func Syrk(t blas.Transpose, a blas64.General, c blas64.Symmetric) {
	native.syrk(t, a, c)
}

func (im impl) syrk(t blas.Transpose, a blas64.General, c blas64.Symmetric) {
	if !isTrans(t) || !isUpper(c.Uplo) {
		panic("gemm: Syrk: only A^T A (blas.Trans) into an upper triangle is implemented")
	}
	r, m := a.Rows, a.Cols
	checkMatrix("A", a.Data, a.Stride, r, m)
	checkMatrix("C", c.Data, c.Stride, c.N, c.N)
	if c.N != m {
		panic(fmt.Sprintf("gemm: Syrk: A has %d columns, C is %d x %d", m, c.N, c.N))
	}
	if m <= smallSyrk {
		im.syrkSmall(c.Data, c.Stride, a.Data, a.Stride, r, m)
		return
	}
	im.syrkPacked(c.Data, c.Stride, a.Data, a.Stride, r, m)
}

// smallSyrk is the largest order for which Syrk uses syrkSmall.
const smallSyrk = 160

// syrkPacked is Syrk with packed micro-panels. Since opA = F^T
// is opB^T, only B is packed, and the micro-kernel reads the 4-row panels
// of A from the 12-column panels of B.
func (im impl) syrkPacked(c []float64, ldc int, f []float64, ldf, r, m int) {
	im.run(&product{m: m, n: m, k: r, alpha: 1, a: f, lda: ldf, transA: true,
		b: f, ldb: ldf, c: c, ldc: ldc, tri: upper, gram: true}, 1, nil)
}

// smallScratch holds the scratch buffers of syrkSmall.
var smallScratch = sync.Pool{New: func() any { return new([]float64) }}

// syrkSmall is Syrk for small m, where packing would cost as
// much as the arithmetic: each block of kc rows of F is copied once into
// rows padded with zeros to a multiple of nr columns, the micro-kernel
// reads its operands straight from those rows, and accumulates into a
// padded copy of C, so that no tile needs masking. The arithmetic of every
// element is that of the packed path (same kc blocks, same order), so the
// results are bit-identical.
func (im impl) syrkSmall(c []float64, ldc int, f []float64, ldf, r, m int) {
	if m == 0 || r == 0 {
		return
	}
	ldp := (m + nr - 1) / nr * nr // a multiple of mr too
	mp := (m + mr - 1) / mr * mr
	// The scratch comes from a pool: callers such as the SVM's Hessian
	// update call this thousands of times a solve on a few hundred rows.
	buf := smallScratch.Get().(*[]float64)
	defer smallScratch.Put(buf)
	all := grow(buf, mp*ldp+min(kc, r)*ldp)
	s, fp := all[:mp*ldp], all[mp*ldp:]
	clear(s)
	for i := 0; i < m; i++ {
		copy(s[i*ldp+i:i*ldp+m], c[i*ldc+i:i*ldc+m])
	}
	for p0 := 0; p0 < r; p0 += kc {
		kb := min(kc, r-p0)
		for p := 0; p < kb; p++ {
			copy(fp[p*ldp:p*ldp+m], f[(p0+p)*ldf:(p0+p)*ldf+m])
			clear(fp[p*ldp+m : (p+1)*ldp]) // the zero padding
		}
		for j0 := 0; j0 < m; j0 += nr {
			for i0 := 0; i0 < min(m, j0+nr); i0 += mr {
				im.kern(kb, fp[i0:], ldp, fp[j0:], ldp, s[i0*ldp+j0:], ldp, 1)
			}
		}
	}
	for i := 0; i < m; i++ {
		copy(c[i*ldc+i:i*ldc+m], s[i*ldp+i:i*ldp+m])
	}
}

// Add adds src into dst element-wise: dst[i] += src[i] for i < len(src)
// (BLAS daxpy with alpha = 1, on AVX2 four elements per instruction). It
// panics if dst is shorter than src.
func Add(dst, src []float64) {
	native.addTo(dst, src)
}

func (im impl) addTo(dst, src []float64) {
	if len(dst) < len(src) {
		panic("gemm: Add: dst shorter than src")
	}
	n := len(src) &^ 15
	if n > 0 {
		im.add(dst, src[:n])
	}
	dst = dst[n:len(src)]
	for i, v := range src[n:] {
		dst[i] += v
	}
}

// addGo is the portable add kernel.
func addGo(dst, src []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// AddShifted adds src + shift into dst element-wise: dst[i] += src[i] +
// shift[i] for i < len(src), with src[i] + shift[i] rounded before it is
// added, so the result is bit-identical to shifting src in place and then
// calling Add, in one pass over memory and without writing src. It panics if
// dst or shift is shorter than src.
func AddShifted(dst, src, shift []float64) {
	native.addShiftedTo(dst, src, shift, nil)
}

// AddShiftedOut is AddShifted that also stores each sum src[i] + shift[i]
// in out[i]: dst and out are bit for bit those of shifting src into out
// and then calling Add(dst, out), in one pass over memory. out may be src
// (the shift in place) but must not otherwise overlap src, dst or shift.
// It panics if dst, shift or out is shorter than src.
func AddShiftedOut(dst, src, shift, out []float64) {
	if len(out) < len(src) {
		panic("gemm: AddShiftedOut: out shorter than src")
	}
	native.addShiftedTo(dst, src, shift, out)
}

func (im impl) addShiftedTo(dst, src, shift, out []float64) {
	if len(dst) < len(src) || len(shift) < len(src) {
		panic("gemm: AddShifted: dst or shift shorter than src")
	}
	n := len(src) &^ 15
	if n > 0 {
		im.addShifted(dst, src[:n], shift, out)
	}
	var rest []float64
	if out != nil {
		rest = out[n:]
	}
	addShiftedGo(dst[n:], src[n:], shift[n:], rest)
}

// addShiftedGo is the portable kernel of AddShifted and AddShiftedOut.
func addShiftedGo(dst, src, shift, out []float64) {
	dst, shift = dst[:len(src)], shift[:len(src)]
	if out == nil {
		for i, v := range src {
			t := v + shift[i]
			dst[i] += t
		}
		return
	}
	out = out[:len(src)]
	for i, v := range src {
		t := v + shift[i]
		out[i] = t
		dst[i] += t
	}
}
