package dica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/gemm"
)

// Stats are the sufficient statistics of a DICA fit (docs/MATH.md, "4. Sufficient
// statistics"): counts and feature sums per domain and per class, the output
// cross sums for regression, and the Gram sum sum phi phi^T when the method
// needs it.
//
// Input features are kept in raw coordinates (for Nystrom, kernel rows
// k_m(x)), shifted by a fixed vector c of the plan: every sum is over
// k_m(x) - c, with c the mean kernel row of the landmarks (zero for random
// Fourier features). The map's transform T = K_mm^{-1/2} is applied once,
// in Solve, after the sums have been centered in raw coordinates. The shift
// keeps the centering of nearly constant kernel rows (wide kernels) from
// cancelling catastrophically, and costs one vector addition per point.
//
// Output features (regression with a kernel on real targets) are mapped
// point by point, psi(y) = T_y^T k_r(y) - c_y with c_y the mean output
// feature of the output landmarks: T_y amplifies rounding by up to
// (rcond s_max)^{-1/2}, so it must see each point's kernel row (a
// deterministic value) and not sums, whose rounding depends on how the
// points were grouped. Summing per-point values, statistics of the same
// points grouped differently (shards, blocks, workers) differ only by
// floating-point reassociation (TestShardsMerge and
// TestBlockRowsInvariance bound the agreement of models from several
// shards or block sizes, regression and wide kernels included).
//
// Statistics of disjoint parts of a data set add up: Merge combines them
// (domains and classes are matched by name), so shards can be accumulated in
// separate goroutines, processes or machines.
type Stats struct {
	plan *Plan
	acc  accum
	// Domains and Classes name the rows of the per-domain and per-class sums.
	Domains []string
	Classes []string

	scratch *shardScratch // buffers of AddBlock
	parts   []Part        // the data summarized (see Part)
	cells   []DomainPart  // the cells of each domain of each part
	legacy  uint32        // the format version of a file without cells, else 0
}

// accum holds sums over points, indexed by domain and class number. Input
// features are shifted raw features k(x) - c (mraw of them), output
// features are shifted features psi(y) - c_y (rout of them).
type accum struct {
	mraw, rout int
	gram       bool
	n          int64
	domCount   []int64
	domSum     [][]float64
	clsCount   []int64
	clsSum     [][]float64
	sumPsi     []float64 // rout
	sumPsiPsi  []float64 // rout x rout
	sumPhiPsi  []float64 // mraw x rout
	gramSum    []float64 // mraw x mraw, upper triangle
	domHash    []uint64  // per domain: sum of rowHash of its rows (Accumulate only)
	// fileHash holds the count and rowHash sum of the rows of each domain
	// in each source file (Block.File; file -1 for sources that do not
	// say), so that a file's cells are known apart from the other files'
	// cells of its domain (Accumulate only).
	fileHash map[fileDomain]fileSum
}

// fileDomain is the rows of one domain in one source file.
type fileDomain struct{ file, domain int }

// fileSum counts rows and sums their hashes.
type fileSum struct {
	n int64
	h uint64
}

func newAccum(mraw, rout int, gram bool) *accum {
	a := &accum{mraw: mraw, rout: rout, gram: gram}
	if rout > 0 {
		a.sumPsi = make([]float64, rout)
		a.sumPsiPsi = make([]float64, rout*rout)
		a.sumPhiPsi = make([]float64, mraw*rout)
	}
	if gram {
		a.gramSum = make([]float64, mraw*mraw)
	}
	return a
}

func (a *accum) reset() {
	a.n = 0
	for i := range a.domCount {
		a.domCount[i] = 0
		clear(a.domSum[i])
	}
	for i := range a.clsCount {
		a.clsCount[i] = 0
		clear(a.clsSum[i])
	}
	clear(a.sumPsi)
	clear(a.sumPsiPsi)
	clear(a.sumPhiPsi)
	clear(a.gramSum)
	clear(a.domHash)
	clear(a.fileHash)
}

func growSums(count []int64, sums [][]float64, n, m int) ([]int64, [][]float64) {
	for len(count) < n {
		count = append(count, 0)
		sums = append(sums, make([]float64, m))
	}
	return count, sums
}

// add adds o into a; o's domain and class numbers map through dmap and cmap
// (identity when nil).
func (a *accum) add(o *accum, dmap, cmap []int) {
	a.n += o.n
	for i, c := range o.domCount {
		if c == 0 {
			continue
		}
		j := i
		if dmap != nil {
			j = dmap[i]
		}
		a.domCount, a.domSum = growSums(a.domCount, a.domSum, j+1, a.mraw)
		a.domCount[j] += c
		addTo(a.domSum[j], o.domSum[i])
		if i < len(o.domHash) {
			for len(a.domHash) <= j {
				a.domHash = append(a.domHash, 0)
			}
			a.domHash[j] += o.domHash[i]
		}
	}
	for k, v := range o.fileHash {
		if dmap != nil {
			k.domain = dmap[k.domain]
		}
		if a.fileHash == nil {
			a.fileHash = map[fileDomain]fileSum{}
		}
		w := a.fileHash[k]
		a.fileHash[k] = fileSum{w.n + v.n, w.h + v.h}
	}
	for i, c := range o.clsCount {
		if c == 0 {
			continue
		}
		j := i
		if cmap != nil {
			j = cmap[i]
		}
		a.clsCount, a.clsSum = growSums(a.clsCount, a.clsSum, j+1, a.mraw)
		a.clsCount[j] += c
		addTo(a.clsSum[j], o.clsSum[i])
	}
	addTo(a.sumPsi, o.sumPsi)
	addTo(a.sumPsiPsi, o.sumPsiPsi)
	addTo(a.sumPhiPsi, o.sumPhiPsi)
	addTo(a.gramSum, o.gramSum)
}

func addTo(dst, src []float64) {
	gemm.Add(dst, src)
}

// worker holds the per-goroutine buffers of the streaming pass.
type worker struct {
	plan       *Plan
	hash       bool // sum row hashes per domain (Accumulate)
	f, psi, ky *mat.Dense
	f32        []float32 // the rows in float32 (Precision 32)
	// keep, when not nil, receives the raw features of row start + i of
	// the pass in its row start + i (Precision 64 only).
	keep     *mat.Dense
	cells    []cell
	cellSums [][]float64
}

// cell is the running sum of the rows of one (domain, class) pair in a block.
type cell struct {
	g, c int
	n    int64
	sum  []float64
}

func rawMap(m approx.Map, dst, x *mat.Dense) {
	if f, ok := m.(approx.Factored); ok {
		f.MapRaw(dst, x)
		return
	}
	m.Map(dst, x)
}

func rawDim(m approx.Map) int {
	if f, ok := m.(approx.Factored); ok {
		return f.RawDim()
	}
	return m.Dim()
}

// cacheChunk is the size in bytes of the chunk of feature rows the
// streaming pass computes before summing them, so that they are summed while
// still in the core's L2 cache.
const cacheChunk = 512 << 10

// block accumulates the rows of b (the first row is row number start of the
// pass) into a, which must be reset.
func (w *worker) block(a *accum, b *dataset.Block, start int64) error {
	if err := checkBlock(b, start, a.rout > 0); err != nil {
		return err
	}
	a.n += int64(b.Rows)
	if w.hash {
		hashRows(a, b)
	}
	// The shifted rows k(x) - c are needed after the cell sums only by the
	// Gram and cross sums; otherwise the shift is added on the way into the
	// cell sum (bit-identical, one pass over the row instead of two).
	keepShifted := a.gram || a.rout > 0
	withClass := b.Label != nil && w.plan.Config.supervised()
	rows32 := w.plan.k32 != nil
	if rows32 {
		w.sumCells32(a, b, keepShifted, withClass)
	} else {
		w.sumCells(a, b, keepShifted, withClass, start)
	}
	w.foldCells(a, withClass)
	// With float32 rows, the float64 shifted rows that the cross sums and
	// a float64 Gram sum need are the float32 ones widened.
	if rows32 && (a.rout > 0 || a.gram && !w.plan.f32) {
		w.f = reuseDense(w.f, b.Rows, a.mraw)
		widen(w.f.RawMatrix().Data, w.f32[:b.Rows*a.mraw])
	}
	if a.rout > 0 {
		w.crossSums(a, b, w.f.RawMatrix())
	}
	if a.gram {
		gram := blas64.Symmetric{Uplo: blas.Upper, N: a.mraw, Stride: a.mraw, Data: a.gramSum}
		if !w.plan.f32 {
			gemm.Syrk(blas.Trans, w.f.RawMatrix(), gram)
			return nil
		}
		if !rows32 {
			w.f32 = narrow(w.f32, w.f.RawMatrix().Data[:b.Rows*a.mraw])
		}
		gemm.Syrk32(blas32.General{Rows: b.Rows, Cols: a.mraw, Stride: a.mraw, Data: w.f32[:b.Rows*a.mraw]}, gram)
	}
	return nil
}

// sumCells32 is sumCells with the kernel rows in float32 (Precision 32
// with a Nystrom map): the rows k(x) are computed in float32 by the plan's
// kernel.Prepared32, and k(x) - c is rounded to float64 and added to the
// float64 cell sums. With keepShifted, every row of w.f32 is replaced by
// k(x) - c rounded to float32 for the Gram and cross sums.
func (w *worker) sumCells32(a *accum, b *dataset.Block, keepShifted, withClass bool) {
	rows, d, m := b.Rows, b.D, a.mraw
	x := mat.NewDense(rows, d, b.X[:rows*d])
	neg := w.plan.negInShift
	w.cells = w.cells[:0]
	last := -1
	chunk := max(1, cacheChunk/(4*m))
	n := rows
	if !keepShifted {
		n = min(chunk, rows)
	}
	if cap(w.f32) < n*m {
		w.f32 = make([]float32, n*m)
	}
	f := w.f32[:n*m]
	base := 0
	for i := 0; i < rows; i++ {
		if i%chunk == 0 {
			hi := min(i+chunk, rows)
			if keepShifted {
				base = i
			}
			w.plan.k32.BlockPoints32(blas32.General{Rows: hi - i, Cols: m, Stride: m, Data: f[base*m : (base+hi-i)*m]},
				x.Slice(i, hi, 0, d), w.plan.pts32)
		}
		r := base + i%chunk
		frow := f[r*m : (r+1)*m]
		g, c := b.Domain[i], 0
		if withClass {
			c = b.Label[i]
		}
		if last < 0 || w.cells[last].g != g || w.cells[last].c != c {
			last = w.cell(g, c, m)
		}
		w.cells[last].n++
		var out []float32
		if keepShifted {
			out = frow
		}
		gemm.AddShifted32(w.cells[last].sum, frow, neg, out)
	}
}

// widen stores the float32 values src in dst as float64.
func widen(dst []float64, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// narrow returns the float64 values src rounded to float32, in buf when
// it is large enough.
func narrow(buf []float32, src []float64) []float32 {
	if cap(buf) < len(src) {
		buf = make([]float32, len(src))
	}
	buf = buf[:len(src)]
	for i, v := range src {
		buf[i] = float32(v)
	}
	return buf
}

// checkBlock returns an error naming the first value of b (and of its
// targets, when withTargets) that is not finite.
func checkBlock(b *dataset.Block, start int64, withTargets bool) error {
	rows, d := b.Rows, b.D
	for i := 0; i < rows*d; i++ {
		if v := b.X[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("dica: row %d, column %d: value %v is not finite", start+int64(i/d)+1, i%d+1, v)
		}
	}
	if withTargets {
		t := b.T
		for i := 0; i < rows*t; i++ {
			if v := b.Target[i]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dica: row %d, target column %d: value %v is not finite", start+int64(i/t)+1, i%t+1, v)
			}
		}
	}
	return nil
}

// hashRows adds the rows' hashes to their domains' sums and to those of
// their domain in their file (see Part).
func hashRows(a *accum, b *dataset.Block) {
	d, t := b.D, b.T
	files := len(b.File) >= b.Rows
	if a.fileHash == nil {
		a.fileHash = map[fileDomain]fileSum{}
	}
	// Rows come in runs of one file and domain: their sums are added to
	// the map once per run.
	run, sum := fileDomain{}, fileSum{}
	flush := func() {
		if sum.n > 0 {
			w := a.fileHash[run]
			a.fileHash[run] = fileSum{w.n + sum.n, w.h + sum.h}
		}
	}
	for i := 0; i < b.Rows; i++ {
		g := b.Domain[i]
		for len(a.domHash) <= g {
			a.domHash = append(a.domHash, 0)
		}
		h := rowHash(b.X[i*d:(i+1)*d], b.Target[i*t:(i+1)*t])
		a.domHash[g] += h
		k := fileDomain{-1, g}
		if files {
			k.file = b.File[i]
		}
		if k != run {
			flush()
			run, sum = k, fileSum{}
		}
		sum.n++
		sum.h += h
	}
	flush()
}

// sumCells maps the rows of b to raw features and sums them per (domain,
// class) cell of w.cells: one addition per row instead of one per domain
// and one per class. The features are computed in chunks small enough to
// stay in the core's cache until they are summed; with keepShifted every
// shifted row stays in w.f for the Gram and cross sums, otherwise every
// chunk reuses the first chunk's rows of the buffer, which stay in cache
// instead of streaming through memory. Rows kept for the caller (w.keep)
// are mapped into w.keep directly, and the shifted rows k(x) - c come
// from one pass that also adds them into their cell.
func (w *worker) sumCells(a *accum, b *dataset.Block, keepShifted, withClass bool, start int64) {
	rows, d := b.Rows, b.D
	x := mat.NewDense(rows, d, b.X[:rows*d])
	neg := w.plan.negInShift
	w.cells = w.cells[:0]
	last := -1
	chunk := max(1, cacheChunk/(8*a.mraw))
	if keepShifted {
		w.f = reuseDense(w.f, rows, a.mraw)
	} else {
		w.f = reuseDense(w.f, min(chunk, rows), a.mraw)
	}
	fr := w.f.RawMatrix()
	base := 0
	// src holds the raw features k(x) of the current chunk: rows of w.f,
	// or of w.keep (from row at).
	src, at := fr, 0
	for i := 0; i < rows; i++ {
		if i%chunk == 0 {
			hi := min(i+chunk, rows)
			if keepShifted {
				base = i
			}
			xs := x.Slice(i, hi, 0, d).(*mat.Dense)
			if at = int(start) + i; w.keep != nil && at+hi-i <= w.keep.RawMatrix().Rows {
				rawMap(w.plan.inMap, w.keep.Slice(at, at+hi-i, 0, a.mraw).(*mat.Dense), xs)
				src = w.keep.RawMatrix()
			} else {
				rawMap(w.plan.inMap, w.f.Slice(base, base+hi-i, 0, a.mraw).(*mat.Dense), xs)
				src, at = fr, base
			}
		}
		r := base + i%chunk
		frow := fr.Data[r*fr.Stride : r*fr.Stride+a.mraw]
		s := at + i%chunk
		srow := src.Data[s*src.Stride : s*src.Stride+a.mraw]
		g, c := b.Domain[i], 0
		if withClass {
			c = b.Label[i]
		}
		if last < 0 || w.cells[last].g != g || w.cells[last].c != c {
			last = w.cell(g, c, a.mraw)
		}
		w.cells[last].n++
		sum := w.cells[last].sum
		switch {
		case neg != nil && keepShifted:
			gemm.AddShiftedOut(sum, srow, neg, frow) // frow = k(x) - c
		case neg != nil:
			gemm.AddShifted(sum, srow, neg)
		default:
			if keepShifted && &srow[0] != &frow[0] {
				copy(frow, srow)
			}
			addTo(sum, srow)
		}
	}
}

// cell returns the index in w.cells of the cell of domain g and class c,
// adding it (with a zero sum of m features) when it is new.
func (w *worker) cell(g, c, m int) int {
	for j := range w.cells {
		if w.cells[j].g == g && w.cells[j].c == c {
			return j
		}
	}
	w.cells = append(w.cells, cell{g: g, c: c})
	last := len(w.cells) - 1
	if len(w.cellSums) < len(w.cells) {
		w.cellSums = append(w.cellSums, make([]float64, m))
	}
	cl := &w.cells[last]
	cl.sum = w.cellSums[last][:m]
	clear(cl.sum)
	return last
}

// foldCells adds the cell sums into the domain and class sums of a: the
// cells of rows without a label (class dataset.NoLabel) into the domain
// sums only.
func (w *worker) foldCells(a *accum, withClass bool) {
	for _, cl := range w.cells {
		a.domCount, a.domSum = growSums(a.domCount, a.domSum, cl.g+1, a.mraw)
		a.domCount[cl.g] += cl.n
		addTo(a.domSum[cl.g], cl.sum)
		if withClass && cl.c != dataset.NoLabel {
			a.clsCount, a.clsSum = growSums(a.clsCount, a.clsSum, cl.c+1, a.mraw)
			a.clsCount[cl.c] += cl.n
			addTo(a.clsSum[cl.c], cl.sum)
		}
	}
}

// crossSums adds the output features of the rows of b (real targets) and
// their products with the shifted raw features fr into a.
func (w *worker) crossSums(a *accum, b *dataset.Block, fr blas64.General) {
	rows := b.Rows
	y := mat.NewDense(rows, b.T, b.Target[:rows*b.T])
	w.psi = reuseDense(w.psi, rows, a.rout)
	w.ky = w.plan.mapOutput(w.psi, w.ky, y)
	pr := w.psi.RawMatrix()
	for i := 0; i < rows; i++ {
		addTo(a.sumPsi, pr.Data[i*pr.Stride:i*pr.Stride+a.rout])
	}
	gemm.Gemm(blas.Trans, blas.NoTrans, 1, pr, pr, blas64.General{Rows: a.rout, Cols: a.rout, Stride: a.rout, Data: a.sumPsiPsi}, 1)
	gemm.Gemm(blas.Trans, blas.NoTrans, 1, fr, pr, blas64.General{Rows: a.mraw, Cols: a.rout, Stride: a.rout, Data: a.sumPhiPsi}, 1)
}

func reuseDense(m *mat.Dense, r, c int) *mat.Dense {
	if m != nil {
		raw := m.RawMatrix()
		if cap(raw.Data) >= r*c {
			return mat.NewDense(r, c, raw.Data[:r*c])
		}
	}
	return mat.NewDense(r, c, nil)
}

// Accumulate makes one streaming pass over src and returns its statistics.
// The pass runs on Config.Workers goroutines.
//
// Every sum follows one reduction order, so the result is bit-identical
// whatever the number of workers and however the source's reads split the
// rows: each source file's rows (Block.File; a source without file numbers
// is one file) are cut into blocks of Config.BlockRows rows counted from
// the file's first row; each block is summed into zeroed partial sums; a
// file's partial sums are the sums of its blocks added in block order,
// starting from zero; and the total is the sum of the files' partial sums
// added in file order, starting from zero. The statistics of the source
// therefore equal, bit for bit, those of each file accumulated alone
// (a source of that file only) and merged in file order into a zero Stats
// with Merge; a distributed fit that follows this order (one task per
// file) gives the same model as Fit.
func (p *Plan) Accumulate(ctx context.Context, src dataset.Source) (*Stats, error) {
	if p == nil || p.inMap == nil {
		return nil, errNoPlan
	}
	if ctx == nil || src == nil {
		return nil, fmt.Errorf("dica: Accumulate needs a context and a source")
	}
	sc := src.Schema()
	if !slices.Equal(sc.Features, p.Schema.Features) || sc.Labelled != p.Schema.Labelled || !slices.Equal(sc.Targets, p.Schema.Targets) {
		return nil, fmt.Errorf("dica: the data's columns %v differ from the plan's %v", sc.Features, p.Schema.Features)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	ps := newPass(p, p.Config.Workers, p.Config.needsGram(), false)
	go ps.read(ctx, cancel, newFileBlocks(r))
	ps.startWorkers(ctx)
	total, _, err := ps.merge(cancel)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Stats{plan: p, acc: *total, Domains: slices.Clone(r.Domains())}
	if total.n > 0 {
		pt, cells := total.part(s.Domains)
		s.parts, s.cells = []Part{pt}, cells
	}
	s.acc.domHash, s.acc.fileHash = nil, nil // only the part is kept
	if p.Config.supervised() && p.Schema.Labelled {
		s.Classes = slices.Clone(r.Classes())
	}
	return s, nil
}

// pass is one streaming pass of Accumulate (and of a Family): a reader
// fills blocks (of one file each, cut by fileBlocks), W workers sum each
// block into its own zeroed partial sums, and merge adds the partial sums
// in the order of Accumulate (blocks in order into their file's sums,
// files in order into the total), so the result does not depend on W.
type pass struct {
	p                *Plan
	workers          int
	mraw, rout       int
	gram             bool // the Gram sum is accumulated
	second           bool // the domain sums of an unsupervised method too (a Family's)
	pool, work, done chan *job
	readErr          error
	limit            *groupLimit // domains and classes within the budget
	reach            *reachCheck // the kernel relates the first cells
	keep             *mat.Dense  // when not nil, receives every row's raw features
}

// job is one block of a pass and its partial sums.
type job struct {
	seq   int64
	start int64 // the block's first row number in the pass
	file  int   // the block's source file (Block.File), -1 when unknown
	b     dataset.Block
	part  *accum
	sec   *accum // with pass.second: the unsupervised domain sums
	err   error
}

// newPass makes the pass of plan p on workers goroutines, accumulating the
// Gram sum when gram is set and, when second is set, the domain sums of an
// unsupervised method beside the plan's (see accumulateFamily).
func newPass(p *Plan, workers int, gram, second bool) *pass {
	ps := &pass{p: p, workers: workers, mraw: rawDim(p.inMap), rout: p.outDim(), gram: gram, second: second, limit: newGroupLimit(p), reach: newReachCheck(p)}
	nj := 2*workers + 2
	ps.pool = make(chan *job, nj)
	for i := 0; i < nj; i++ {
		j := &job{part: newAccum(ps.mraw, ps.rout, ps.gram)}
		if second {
			j.sec = newAccum(ps.mraw, 0, false)
		}
		ps.pool <- j
	}
	ps.work = make(chan *job, nj)
	ps.done = make(chan *job, nj)
	return ps
}

// read fills free jobs with the blocks of r, in order, until the end of
// the stream, an error (kept in readErr; the pass is cancelled) or ctx's
// end.
func (ps *pass) read(ctx context.Context, cancel func(), r dataset.Reader) {
	defer close(ps.work)
	var seq, start int64
	for {
		var j *job
		select {
		case j = <-ps.pool:
		case <-ctx.Done():
			return
		}
		k, err := r.Read(&j.b, ps.p.Config.BlockRows)
		if errors.Is(err, io.EOF) {
			err = ps.reach.end()
			if err == nil {
				return
			}
		}
		if err == nil {
			err = ps.limit.check(&j.b)
		}
		if err == nil {
			err = ps.reach.add(&j.b)
		}
		if err != nil {
			ps.readErr = err
			cancel()
			return
		}
		j.seq, j.start, j.file = seq, start, blockFile(&j.b)
		seq++
		start += int64(k)
		ps.work <- j
	}
}

// startWorkers starts the workers, which sum each block into its job's
// partial sums; done is closed after the last.
func (ps *pass) startWorkers(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < ps.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{plan: ps.p, hash: true, keep: ps.keep}
			u := &worker{plan: ps.p}
			for j := range ps.work {
				if ctx.Err() == nil {
					j.part.reset()
					j.err = w.block(j.part, &j.b, j.start)
					if j.err == nil && j.sec != nil {
						j.sec.reset()
						u.domainSums(j.sec, &j.b, w.f)
					}
				}
				ps.done <- j
			}
		}()
	}
	go func() { wg.Wait(); close(ps.done) }()
}

// merge adds the partial sums of the jobs in block order into their
// file's sums, and the files' sums in file order into the totals, and
// returns the totals (sec with pass.second, else nil), or the first error
// of the reader or a worker.
//
// The first file's blocks are added into the totals directly (the totals
// are zero until then, and 0 + x = x), so the sums of a second file only
// are allocated when the source has one.
func (ps *pass) merge(cancel func()) (total, sec *accum, err error) {
	total = newAccum(ps.mraw, ps.rout, ps.gram)
	if ps.second {
		sec = newAccum(ps.mraw, 0, false)
	}
	// into and intoSec are the sums of the current file: the totals for
	// the first file, else file and fileSec.
	into, intoSec := total, sec
	var file, fileSec *accum
	cur, started := 0, false
	pending := make(map[int64]*job)
	var next int64
	var firstErr error
	for j := range ps.done {
		if j.err != nil && firstErr == nil {
			firstErr = j.err
			cancel()
		}
		pending[j.seq] = j
		for {
			q, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if firstErr == nil {
				if started && q.file != cur {
					// A new file: the current file's sums are complete.
					if into != total {
						total.add(into, nil, nil)
						if sec != nil {
							sec.add(intoSec, nil, nil)
						}
					}
					if file == nil {
						file = newAccum(ps.mraw, ps.rout, ps.gram)
						if sec != nil {
							fileSec = newAccum(ps.mraw, 0, false)
						}
					}
					file.reset()
					if fileSec != nil {
						fileSec.reset()
					}
					into, intoSec = file, fileSec
				}
				cur, started = q.file, true
				into.add(q.part, nil, nil)
				if sec != nil {
					intoSec.add(q.sec, nil, nil)
				}
			}
			next++
			if ps.p.Config.Progress != nil {
				n := total.n
				if into != total {
					n += into.n
				}
				ps.p.Config.Progress("accumulate", n)
			}
			ps.pool <- q
		}
	}
	if ps.readErr != nil {
		return nil, nil, ps.readErr
	}
	if firstErr != nil {
		return nil, nil, firstErr
	}
	if into != total {
		total.add(into, nil, nil)
		if sec != nil {
			sec.add(intoSec, nil, nil)
		}
	}
	return total, sec, nil
}

// N returns the number of points accumulated.
func (s *Stats) N() int64 {
	if s == nil {
		return 0
	}
	return s.acc.n
}

// Plan returns the plan the statistics were accumulated with.
func (s *Stats) Plan() *Plan {
	if s == nil {
		return nil
	}
	return s.plan
}

// DomainCounts returns the number of points of each domain.
func (s *Stats) DomainCounts() []int64 {
	if s == nil {
		return nil
	}
	return padCounts(s.acc.domCount, len(s.Domains))
}

// ClassCounts returns the number of points of each class.
func (s *Stats) ClassCounts() []int64 {
	if s == nil {
		return nil
	}
	return padCounts(s.acc.clsCount, len(s.Classes))
}

func padCounts(c []int64, n int) []int64 {
	out := make([]int64, n)
	copy(out, c)
	return out
}

// Merge adds the statistics o into s. Domains and classes are matched by
// name; new names are appended in o's order. Merging statistics accumulated
// with different plans (another feature map, kernel, seed or method) is an
// error. Merge is associative up to floating-point reassociation of the
// sums.
//
// Statistics of Plan.Accumulate record which cells they summarize
// (DomainParts): Merge refuses, and leaves s unchanged, when o holds cells
// s already holds: a part already merged (*DuplicateError) or the cells of
// a domain already merged, under the same or another name
// (*OverlapError). A domain whose cells are split between shards merges.
// Statistics from a file that records no domain parts (format version 3
// or older) do not merge with others (*LegacyError). Statistics of
// AddBlock record no parts: their caller partitions the data.
//
// The zero Stats is the empty sum: merging o into it makes s a copy of o
// (o is not shared), so
//
//	var total dica.Stats
//	for _, part := range parts {
//		if err := total.Merge(part); err != nil { ... }
//	}
//
// works. Merging a zero Stats o into s leaves s unchanged.
func (s *Stats) Merge(o *Stats) error {
	if s == nil || o == nil {
		return fmt.Errorf("dica: Merge of nil statistics")
	}
	if s == o {
		return fmt.Errorf("dica: cannot merge statistics with themselves: that would count every cell twice")
	}
	if o.plan == nil {
		return nil
	}
	if s.plan == nil {
		*s = o.clone()
		return nil
	}
	if s.plan.fp != o.plan.fp {
		if ps, po := s.plan.Config.Precision, o.plan.Config.Precision; ps != po {
			return fmt.Errorf("dica: cannot merge statistics of precision %d and %d bits: accumulate every shard with the same precision", ps, po)
		}
		return fmt.Errorf("dica: cannot merge statistics of different configurations: %s", strings.Join(planDiff(s.plan, o.plan), "; "))
	}
	if err := s.checkOverlap(o); err != nil {
		return err
	}
	if s.acc.gram != o.acc.gram {
		return fmt.Errorf("dica: cannot merge statistics with and without the Gram sum (split off by SplitGram)")
	}
	dmap := nameMap(&s.Domains, o.Domains)
	cmap := nameMap(&s.Classes, o.Classes)
	s.acc.add(&o.acc, dmap, cmap)
	s.parts = append(s.parts, o.parts...)
	s.cells = append(s.cells, o.cells...)
	return nil
}

// clone returns a deep copy of s (without its AddBlock buffers).
func (s *Stats) clone() Stats {
	a := s.acc
	a.domCount = slices.Clone(a.domCount)
	a.clsCount = slices.Clone(a.clsCount)
	a.domSum = cloneRows(a.domSum)
	a.clsSum = cloneRows(a.clsSum)
	a.sumPsi = slices.Clone(a.sumPsi)
	a.sumPsiPsi = slices.Clone(a.sumPsiPsi)
	a.sumPhiPsi = slices.Clone(a.sumPhiPsi)
	a.gramSum = slices.Clone(a.gramSum)
	a.domHash = slices.Clone(a.domHash)
	return Stats{plan: s.plan, acc: a, Domains: slices.Clone(s.Domains), Classes: slices.Clone(s.Classes),
		parts: slices.Clone(s.parts), cells: slices.Clone(s.cells), legacy: s.legacy}
}

func cloneRows(rows [][]float64) [][]float64 {
	if rows == nil {
		return nil
	}
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// errNoPlan is returned by the methods of a zero Stats that need a plan.
var errNoPlan = errors.New("dica: empty statistics without a plan (create them with Plan.NewStats or Plan.Accumulate, or Merge into them)")

func nameMap(dst *[]string, names []string) []int {
	m := make([]int, len(names))
	for i, n := range names {
		j := slices.Index(*dst, n)
		if j < 0 {
			j = len(*dst)
			*dst = append(*dst, n)
		}
		m[i] = j
	}
	return m
}
