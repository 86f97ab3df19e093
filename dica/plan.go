package dica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/preprocess"
	"github.com/dicalab/dica/rff"
)

// Plan is everything a streaming pass needs before it starts: the resolved
// configuration (kernels with their bandwidths), the column schema and the
// feature maps on inputs and (for regression) on targets. Plans built with
// the same configuration from the same data are identical; statistics can
// only be merged when their plans are (their Fingerprints agree). Config
// has its defaults applied (Config.WithDefaults); passes and solves use
// its values as they are.
type Plan struct {
	Config Config
	Schema dataset.Schema

	in  mapSpec
	out *mapSpec // nil unless the output kernel is an RBF on real targets

	inMap  approx.Map
	outMap approx.Map
	fp     [32]byte

	// Shifts of the streaming sums (Stats), derived from the maps by
	// finish (not encoded: they are functions of the encoded plan).
	// negInShift is -c, c the mean raw feature of the Nystrom landmarks
	// (nil for other maps); outShift is c_y, the mean output feature of
	// the output landmarks.
	negInShift []float64
	outShift   []float64

	// The single-precision kernel rows of a plan of Precision 32 with a
	// Nystrom map whose kernel has them (nil otherwise): the kernel and
	// the landmarks prepared for it.
	k32   kernel.Prepared32
	pts32 *kernel.Points
	// f32 reports that the streaming pass runs in float32: Precision 32
	// and a map that cannot amplify float32 rounding much (float32Safe).
	f32 bool
}

// mapSpec is the serializable description of a feature map.
type mapSpec struct {
	kind       int // mapNystrom, mapRFF
	kern       kernel.Kernel
	landmarks  *mat.Dense
	rcond      float64
	d, m       int
	orthogonal bool
	seed       uint64
}

const (
	mapNystrom = 1
	mapRFF     = 2
)

func (s mapSpec) build() (approx.Map, error) {
	switch s.kind {
	case mapNystrom:
		return nystrom.New(s.kern, s.landmarks, s.rcond)
	case mapRFF:
		return rff.New(s.kern, s.d, s.m, s.orthogonal, s.seed)
	case mapKernelRows:
		return approx.KernelRows{Kernel: s.kern, Points: s.landmarks}, nil
	}
	return nil, fmt.Errorf("dica: unknown feature map kind %d", s.kind)
}

// InputMap returns the feature map on inputs.
func (p *Plan) InputMap() approx.Map {
	if p == nil {
		return nil
	}
	return p.inMap
}

// OutputMap returns the feature map on real targets, or nil.
func (p *Plan) OutputMap() approx.Map {
	if p == nil {
		return nil
	}
	return p.outMap
}

// Fingerprint identifies the plan: a SHA-256 of its encoding (configuration,
// kernels, feature maps, seed).
func (p *Plan) Fingerprint() [32]byte {
	if p == nil {
		return [32]byte{}
	}
	return p.fp
}

// NeedsSample reports whether NewPlan draws a sample of data with schema sc
// (one pass over it): for median-heuristic bandwidths (no Kernel and no
// Sigma), for Nystrom landmarks chosen from the data, and for the output map
// of a supervised fit on real targets. Otherwise the plan follows from the
// configuration and the seed alone (random Fourier features or given
// landmarks with a given bandwidth), and NewPlan reads no row.
func (c Config) NeedsSample(sc dataset.Schema) bool {
	c = c.withDefaults()
	return c.Kernel == nil && c.Sigma == 0 ||
		c.Solver == Nystrom && c.Landmarks != GivenLandmarks ||
		c.supervised() && !sc.Labelled && len(sc.Targets) > 0
}

// NewPlan draws a seeded reservoir sample of the source in one pass and
// builds the plan from it: median-heuristic bandwidths where none is given,
// Nystrom landmarks (uniform or k-means++ on the sample) or random Fourier
// features. The exact solver has no plan: use Fit.
func NewPlan(ctx context.Context, src dataset.Source, cfg Config) (*Plan, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Solver == Exact {
		return nil, fmt.Errorf("dica: the exact solver streams nothing and has no plan")
	}
	if src == nil {
		return nil, fmt.Errorf("dica: NewPlan with no source")
	}
	sc := src.Schema()
	if sc.D() == 0 {
		return nil, fmt.Errorf("dica: the data has no input columns")
	}
	if err := checkMemory(cfg, shapeOf(src)); err != nil {
		return nil, err
	}
	if cfg.supervised() && !sc.Labelled && len(sc.Targets) == 0 {
		return nil, fmt.Errorf("dica: method %v needs class labels or real targets", cfg.Method)
	}
	needY := cfg.supervised() && !sc.Labelled && len(sc.Targets) > 0
	needSample := cfg.NeedsSample(sc)
	var (
		xs, ys *mat.Dense
		n      int64
	)
	if needSample {
		var err error
		xs, ys, n, err = reservoir(ctx, src, cfg.Sample, cfg.Seed, needY, cfg.Progress)
		if err != nil {
			return nil, err
		}
	}
	p := &Plan{Config: cfg, Schema: sc}
	pipe, err := bindPipeline(cfg.Preprocessing, sc)
	if err != nil {
		return nil, err
	}
	p.Config.Preprocessing = pipe
	// Input kernel.
	k := cfg.Kernel
	if k == nil {
		sigma := cfg.Sigma
		if sigma == 0 {
			sigma = kernel.MedianSigma(xs, DefaultMedianSample, cfg.Seed)
		}
		k = kernel.RBF{Sigma: sigma}
	}
	p.Config.Kernel = k
	switch {
	case xs != nil:
		err = checkReach(k, xs, "the sample")
	case cfg.Solver == Nystrom && cfg.Landmarks == GivenLandmarks:
		err = checkReach(k, cfg.LandmarkPoints, "the landmarks")
	}
	if err != nil {
		return nil, err
	}
	switch cfg.Solver {
	case Nystrom:
		lm, err := landmarks(cfg, xs, n, sc.D())
		if err != nil {
			return nil, err
		}
		p.in = mapSpec{kind: mapNystrom, kern: k, landmarks: lm, rcond: cfg.RCond}
	case RFF:
		p.in = mapSpec{kind: mapRFF, kern: k, d: sc.D(), m: cfg.Rank, orthogonal: cfg.Orthogonal, seed: cfg.Seed}
	}
	if needY {
		ok := cfg.OutputKernel
		if ok == nil {
			sy := cfg.SigmaY
			if sy == 0 {
				sy = kernel.MedianSigma(ys, DefaultMedianSample, cfg.Seed+1)
			}
			ok = kernel.RBF{Sigma: sy}
		}
		p.Config.OutputKernel = ok
		r := min(int64(cfg.OutputRank), n)
		ylm, err := nystrom.Uniform(ys, int(r), cfg.Seed+2)
		if err != nil {
			return nil, err
		}
		p.out = &mapSpec{kind: mapNystrom, kern: ok, landmarks: ylm, rcond: min(cfg.RCond, OutputRCond)}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// landmarks returns the Nystrom landmarks of cfg: drawn from the sample xs
// of the n points (uniformly or by k-means++), or the given ones, which must
// have d columns.
func landmarks(cfg Config, xs *mat.Dense, n int64, d int) (*mat.Dense, error) {
	switch cfg.Landmarks {
	case UniformLandmarks, KMeansLandmarks:
		if int64(cfg.Rank) > n {
			return nil, fmt.Errorf("dica: m = %d landmarks but only %d points", cfg.Rank, n)
		}
		if cfg.Landmarks == UniformLandmarks {
			return nystrom.Uniform(xs, cfg.Rank, cfg.Seed)
		}
		return nystrom.KMeansPP(xs, cfg.Rank, cfg.LloydIters, cfg.Seed)
	case GivenLandmarks:
		lm := mat.DenseCopyOf(cfg.LandmarkPoints)
		if _, c := lm.Dims(); c != d {
			return nil, fmt.Errorf("dica: landmarks have %d columns, the data %d", c, d)
		}
		return lm, nil
	}
	return nil, fmt.Errorf("dica: unknown landmark choice %v", cfg.Landmarks)
}

// bindPipeline returns a copy of the recorded preprocessing p for data of
// schema sc: its channels are the data's columns (filled in when p names
// none), and must be when it names them.
func bindPipeline(p *preprocess.Pipeline, sc dataset.Schema) (*preprocess.Pipeline, error) {
	if p == nil {
		return nil, nil
	}
	q := *p
	if len(q.Channels) == 0 {
		q.Channels = make([]preprocess.Channel, len(sc.Features))
		for j, f := range sc.Features {
			q.Channels[j] = preprocess.Channel{Name: f}
		}
	} else {
		q.Channels = slices.Clone(q.Channels)
		if !slices.Equal(q.Names(), sc.Features) {
			return nil, fmt.Errorf("dica: the preprocessing records the channels %v, the data's columns are %v", q.Names(), sc.Features)
		}
	}
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("dica: preprocessing: %w", err)
	}
	return &q, nil
}

// shapeOf returns what is known of the shape of src's data without a pass.
func shapeOf(src dataset.Source) Shape {
	sc := src.Schema()
	s := Shape{D: sc.D(), T: len(sc.Targets)}
	if sz, ok := src.(dataset.Sizer); ok {
		s.N = int64(sz.Len())
	}
	if pb, ok := src.(interface{ PassBytes() int64 }); ok {
		s.Reader = pb.PassBytes()
	}
	return s
}

// finish builds the maps from their specs, derives the shifts of the
// streaming sums and computes the fingerprint.
func (p *Plan) finish() error {
	if err := checkKernel(p.in.kern); err != nil {
		return err
	}
	var err error
	if p.inMap, err = p.in.build(); err != nil {
		return err
	}
	p.negInShift, p.outShift = nil, nil
	p.k32, p.pts32 = nil, nil
	p.f32 = p.Config.Precision == 32 && float32Safe(p.inMap, p.in.kern, p.in.landmarks)
	if k, ok := p.in.kern.(kernel.Prepared32); ok && p.f32 && p.in.kind == mapNystrom {
		p.k32, p.pts32 = k, kernel.NewPoints(p.in.landmarks)
	}
	if p.in.kind == mapNystrom {
		// c = mean kernel row of the landmarks, computed by the code that
		// computes the streamed rows.
		c := meanRow(p.inMap, p.in.landmarks, nil)
		for i := range c {
			c[i] = -c[i]
		}
		p.negInShift = c
	}
	if p.out != nil {
		if err := checkKernel(p.out.kern); err != nil {
			return fmt.Errorf("dica: output kernel: %w", err)
		}
		if p.outMap, err = p.out.build(); err != nil {
			return fmt.Errorf("dica: output feature map: %w", err)
		}
		p.outShift = meanRow(nil, p.out.landmarks, p.mapOutput)
	}
	var e encoder
	p.encode(&e)
	p.fp = fingerprint(e.b)
	return nil
}

// SinglePrecision reports whether the streaming pass of the plan runs in
// float32 (see Config.Precision): the configuration asks for precision 32
// and the input feature map cannot amplify float32 rounding much (random
// Fourier features, or a Nystrom map whose landmarks' kernel matrix has a
// condition number bounded by 1e7). Otherwise the pass is float64.
func (p *Plan) SinglePrecision() bool {
	return p != nil && p.f32
}

// float32MaxCond bounds the condition number of the landmarks' kernel
// matrix K_mm under which Precision 32 runs the pass in float32. The map's
// transform T = K_mm^{-1/2} amplifies rounding of the raw features and
// sums by up to cond(K_mm) relative to their leading directions: the
// per-cell rounding of float32 kernel rows (about 1e-7, random) moves the
// leading eigenvalues by about 1e-14 cond(K_mm) relative, the rounding of
// float32 Gram sums (about 1e-7 of the sums) makes spurious leading
// eigenvalues of UDICA and KPCA from cond(K_mm) of about 1e9 on (bench
// precision, TestPrecision32Conditioning). Up to a few 1e7 both move the
// eigenvalues by at most about 1e-6. float32Safe's bound overestimates the
// condition number, typically by 10 to 100.
const float32MaxCond = 1e7

// float32Safe reports whether the pass over the raw features of m may run
// in float32: m has no transform (random Fourier features, bounded by 1),
// or an upper bound of the condition number of its landmarks z's kernel
// matrix (restricted to the kept directions) is at most float32MaxCond.
// The bound is lambda_max(K_mm) <= max_i sum_j |K_ij| (Gershgorin) times
// 1/lambda_min = ||T||_2^2 <= ||T||_F^2 (T^T K_mm T = I on the kept
// directions); K_mm is computed in blocks of rows.
func float32Safe(m approx.Map, k kernel.Kernel, z *mat.Dense) bool {
	f, ok := m.(approx.Factored)
	if !ok {
		return true
	}
	t := f.Transform()
	if t == nil || z == nil {
		return false
	}
	var tf float64
	r, c := t.Dims()
	for i := 0; i < r; i++ {
		for _, v := range t.RawRowView(i)[:c] {
			tf += v * v
		}
	}
	n, d := z.Dims()
	const rows = 256
	var blk mat.Dense
	rowMax := 0.0
	for lo := 0; lo < n; lo += rows {
		hi := min(n, lo+rows)
		blk.Reset()
		k.Block(&blk, z.Slice(lo, hi, 0, d), z)
		for i := 0; i < hi-lo; i++ {
			s := 0.0
			for _, v := range blk.RawRowView(i) {
				s += math.Abs(v)
			}
			rowMax = max(rowMax, s)
		}
	}
	return rowMax*tf <= float32MaxCond
}

// meanRow returns the mean over the rows of pts of their raw features under
// m, or of their output features under out when m is nil; the rows are
// summed in order.
func meanRow(m approx.Map, pts *mat.Dense, out func(dst, scratch, y *mat.Dense) *mat.Dense) []float64 {
	n, _ := pts.Dims()
	var f mat.Dense
	if m != nil {
		f.ReuseAs(n, rawDim(m))
		rawMap(m, &f, pts)
	} else {
		out(&f, nil, pts)
	}
	_, c := f.Dims()
	mean := make([]float64, c)
	for i := 0; i < n; i++ {
		for j, v := range f.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	return mean
}

// outDim returns the number of output features (0 without an output map).
func (p *Plan) outDim() int {
	if p.outMap == nil {
		return 0
	}
	return p.outMap.Dim()
}

// mapOutput stores the output features of the rows of y, shifted by
// p.outShift when it is set, in dst (resized when empty), using scratch
// (returned, possibly reallocated) for the kernel rows. Each row is
// psi(y) = T_y^T k_r(y) computed on its own (a product whose every element
// sums its terms in a fixed order), so the value of a point does not
// depend on the block it comes in.
func (p *Plan) mapOutput(dst, scratch, y *mat.Dense) *mat.Dense {
	rows, _ := y.Dims()
	r := p.outMap.Dim()
	if dst.IsEmpty() {
		dst.ReuseAs(rows, r)
	}
	f, ok := p.outMap.(approx.Factored)
	if !ok {
		p.outMap.Map(dst, y)
	} else {
		rraw := f.RawDim()
		scratch = reuseDense(scratch, rows, rraw)
		f.MapRaw(scratch, y)
		kr, tr, dr := scratch.RawMatrix(), f.Transform().RawMatrix(), dst.RawMatrix()
		for i := 0; i < rows; i++ {
			clear(dr.Data[i*dr.Stride : i*dr.Stride+r])
		}
		gemm.Gemm(blas.NoTrans, blas.NoTrans, 1, kr, tr, blas64.General{Rows: rows, Cols: r, Stride: dr.Stride, Data: dr.Data}, 1)
	}
	if p.outShift != nil {
		dr := dst.RawMatrix()
		for i := 0; i < rows; i++ {
			row := dr.Data[i*dr.Stride : i*dr.Stride+r]
			for j, c := range p.outShift {
				row[j] -= c
			}
		}
	}
	return scratch
}

// reservoir draws a uniform sample of at most size rows (Algorithm R with a
// PCG generator seeded by seed) and returns it with the number of rows seen.
//
// A source with random access (dataset.RowAccess: data in memory) is not
// read: Algorithm R is run on the row indices alone (the same generator
// calls, so the same sample as a pass would draw) and only the sampled rows
// are copied. A dataset.Skimmer (CSV and FCS files) decodes only the rows
// that enter the sample, again with the same generator calls.
func reservoir(ctx context.Context, src dataset.Source, size int, seed uint64, withY bool, progress func(string, int64)) (xs, ys *mat.Dense, n int64, err error) {
	sc := src.Schema()
	if ra, ok := src.(dataset.RowAccess); ok {
		return reservoirRows(ctx, ra, sc, size, seed, withY, progress)
	}
	d, t := sc.D(), len(sc.Targets)
	alg := newAlgR(size, seed)
	xbuf := make([]float64, 0, size*d)
	var ybuf []float64
	// add puts row i in its slot j, after checking it: only rows that
	// enter the sample are checked here (the statistics pass checks every
	// row), since a non-finite landmark would otherwise fail later with a
	// less clear message.
	add := func(i, j int64, row, yrow []float64) error {
		for c, v := range row {
			if isBad(v) {
				return fmt.Errorf("dica: row %d, column %d (%s): value %v is not finite", i+1, c+1, sc.Features[c], v)
			}
		}
		if j*int64(d) == int64(len(xbuf)) {
			xbuf = append(xbuf, row...)
			if withY {
				ybuf = append(ybuf, yrow...)
			}
		} else {
			copy(xbuf[int(j)*d:], row)
			if withY {
				copy(ybuf[int(j)*t:], yrow)
			}
		}
		return nil
	}
	if sk, ok := src.(dataset.Skimmer); ok {
		var slot int64
		n, err = sk.Skim(ctx, func(i int64) bool {
			if progress != nil && i&(1<<16-1) == 0 && i > 0 {
				progress("sample", i)
			}
			slot = alg.slot(i)
			return slot >= 0
		}, func(x, y []float64) error {
			// put follows keep(i) for the same row, so alg.last is i.
			return add(alg.last, slot, x, y)
		})
		if err != nil {
			return nil, nil, 0, err
		}
		if progress != nil {
			progress("sample", n)
		}
	} else if n, err = reservoirPass(ctx, src, alg, add, progress); err != nil {
		return nil, nil, 0, err
	}
	if n == 0 {
		return nil, nil, 0, fmt.Errorf("dica: no points")
	}
	rows := len(xbuf) / d
	xs = mat.NewDense(rows, d, xbuf)
	if withY {
		ys = mat.NewDense(rows, t, ybuf)
	}
	return xs, ys, n, nil
}

// reservoirPass offers every row of a pass over src to Algorithm R.
func reservoirPass(ctx context.Context, src dataset.Source, alg *algR, add func(i, j int64, row, yrow []float64) error, progress func(string, int64)) (int64, error) {
	r, err := src.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	t := len(src.Schema().Targets)
	var (
		b dataset.Block
		n int64
	)
	for {
		k, err := r.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		for i := 0; i < k; i++ {
			if j := alg.slot(n); j >= 0 {
				if err := add(n, j, b.Row(i), b.Target[i*t:(i+1)*t]); err != nil {
					return 0, err
				}
			}
			n++
		}
		if progress != nil {
			progress("sample", n)
		}
	}
}

// algR is the choice of Algorithm R for rows offered in order from index 0:
// a pass over the rows, over their indices and a skim make the same
// generator calls, so they draw the same sample.
type algR struct {
	rng  *rand.Rand
	size int64
	last int64 // the index of the last row offered
}

func newAlgR(size int, seed uint64) *algR {
	return &algR{rng: rand.New(rand.NewPCG(seed, 0x5eed5a3b1e)), size: int64(size)}
}

// slot returns the slot of the sample that row i takes, or -1 when the row
// is not kept.
func (a *algR) slot(i int64) int64 {
	a.last = i
	if i < a.size {
		return i
	}
	if j := a.rng.Int64N(i + 1); j < a.size {
		return j
	}
	return -1
}

// reservoirRows is reservoir for a source with random access.
func reservoirRows(ctx context.Context, src dataset.RowAccess, sc dataset.Schema, size int, seed uint64, withY bool, progress func(string, int64)) (xs, ys *mat.Dense, n int64, err error) {
	total := src.Len()
	if total == 0 {
		return nil, nil, 0, fmt.Errorf("dica: no points")
	}
	alg := newAlgR(size, seed)
	slots := make([]int, 0, min(size, total))
	for p := 0; p < total; p++ {
		if j := alg.slot(int64(p)); j == int64(len(slots)) {
			slots = append(slots, p)
		} else if j >= 0 {
			slots[j] = p
		}
		if p&(1<<20-1) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, 0, err
			}
		}
	}
	xs = mat.NewDense(len(slots), sc.D(), nil)
	if withY {
		ys = mat.NewDense(len(slots), len(sc.Targets), nil)
	}
	src.CopyRows(slots, xs, ys)
	// The sampled rows are checked here, in row order; the statistics pass
	// checks every row.
	bad := -1
	for i, p := range slots {
		if bad >= 0 && p > slots[bad] {
			continue
		}
		for _, v := range xs.RawRowView(i) {
			if isBad(v) {
				bad = i
				break
			}
		}
	}
	if bad >= 0 {
		for c, v := range xs.RawRowView(bad) {
			if isBad(v) {
				return nil, nil, 0, fmt.Errorf("dica: row %d, column %d (%s): value %v is not finite", slots[bad]+1, c+1, sc.Features[c], v)
			}
		}
	}
	if progress != nil {
		progress("sample", int64(total))
	}
	return xs, ys, int64(total), nil
}

func isBad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
