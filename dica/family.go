package dica

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/gemm"
)

// Family holds the statistics of one sampling pass and one streaming pass
// over a data set that serve several methods of the DICA family at once:
// the sums a supervised fit (DICA, COIR) accumulates, the domain sums an
// unsupervised fit (KPCA, UDICA) accumulates, and the Gram sum that KPCA,
// UDICA and every lambda > 0 need. Each kernel row is computed once for all
// of them. Solve gives, bit for bit, the model Fit gives for each
// configuration: a sweep over methods, lambda, epsilon and the number of
// components costs one pass over the data.
//
// A Family is safe for concurrent use.
type Family struct {
	// sup and uns are the statistics of the supervised and of the
	// unsupervised methods (nil when no configuration of that kind was
	// given); they share the plan's feature maps and the Gram sum.
	sup, uns *Stats
	// shape holds, for the supervised (index 1) and unsupervised (index 0)
	// configurations, the fields that must agree (see familyShape).
	shape [2]*Config

	mu    sync.Mutex
	cache map[familyKey]*featureStats

	// features holds the raw input features of the pass's rows
	// (NewFamilyFeatures), else nil.
	raw *mat.Dense
}

// familyKey names cached feature statistics: those of the supervised or
// unsupervised sums, and for the supervised ones the epsilon of the
// output Gram matrix.
type familyKey struct {
	supervised bool
	epsilon    float64
}

// familyShape returns the fields of c (defaults applied) that shape its
// statistics: every field but the solve settings (Method, Components,
// Lambda, Epsilon) and the settings that never change a result (Workers,
// Progress, MaxMemory). An unsupervised method does not use the output
// kernel, but its models record it, so configurations of one kind must
// agree on it too.
func familyShape(c Config) Config {
	c.Method, c.Components, c.Lambda, c.Epsilon = 0, 0, 0, 0
	c.Workers, c.Progress, c.MaxMemory = 0, nil, 0
	return c
}

func kindIndex(c Config) int {
	if c.supervised() {
		return 1
	}
	return 0
}

// NewFamily plans and accumulates, in one sampling pass (when the plan
// needs a sample) and one streaming pass over src, the statistics that
// serve every configuration of cfgs (Solve). The configurations must agree
// in everything but Method, Components, Lambda and Epsilon (and, between a
// supervised and an unsupervised method, the output kernel, which only the
// supervised methods use); the run settings Workers, Progress and MaxMemory
// are taken from the first. The Gram sum is accumulated when a
// configuration needs it (KPCA, UDICA or lambda > 0). It returns an error
// for no configuration, an invalid one, the exact solver (which streams
// nothing: use Fit), configurations that disagree, and the errors of
// NewPlan and Plan.Accumulate. NewFamily stops with ctx's error when ctx is
// cancelled.
func NewFamily(ctx context.Context, src dataset.Source, cfgs ...Config) (*Family, error) {
	return newFamily(ctx, src, false, cfgs)
}

// NewFamilyFeatures is NewFamily that also keeps the raw input features
// of every row of src, computed by the pass anyway, which Features returns:
// for a caller that projects the same rows afterwards, they replace a
// second computation of the kernel rows. They take 8 n RawDim bytes for
// the n rows of src (32 MB for 20,000 rows at RawDim 200); src must
// report its number of rows (dataset.Sizer). With Precision 32 the pass
// computes the features in float32 and none are kept (Features returns
// nil).
func NewFamilyFeatures(ctx context.Context, src dataset.Source, cfgs ...Config) (*Family, error) {
	if _, ok := src.(dataset.Sizer); !ok {
		return nil, fmt.Errorf("dica: NewFamilyFeatures needs a source that reports its number of rows (dataset.Sizer)")
	}
	return newFamily(ctx, src, true, cfgs)
}

// Features returns the raw input features of the rows of the family's
// source (n x RawDim of Plan, row i as Plan.MapRaw gives it for row i, bit
// for bit) when the family was made by NewFamilyFeatures at Precision 64,
// else nil. The matrix belongs to the family: do not modify it.
func (f *Family) Features() *mat.Dense {
	if f == nil {
		return nil
	}
	return f.raw
}

func newFamily(ctx context.Context, src dataset.Source, keep bool, cfgs []Config) (*Family, error) {
	if ctx == nil || src == nil {
		return nil, fmt.Errorf("dica: NewFamily needs a context and a source")
	}
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("dica: NewFamily needs at least one configuration")
	}
	f := &Family{cache: map[familyKey]*featureStats{}}
	var first [2]*Config
	var run Config // the first configuration: its run settings
	gram := false
	for i := range cfgs {
		c := cfgs[i].withDefaults()
		if i == 0 {
			run = c
		}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%w (configuration %d)", err, i+1)
		}
		if c.Solver == Exact {
			return nil, fmt.Errorf("dica: the exact solver streams nothing and has no family of statistics: use Fit")
		}
		gram = gram || c.needsGram()
		k := kindIndex(c)
		sh := familyShape(c)
		if f.shape[k] == nil {
			f.shape[k], first[k] = &sh, &c
		} else if !reflect.DeepEqual(sh, *f.shape[k]) {
			return nil, fmt.Errorf("dica: NewFamily: configuration %d differs from the first %v configuration in more than Method, Components, Lambda and Epsilon", i+1, c.Method)
		}
	}
	if f.shape[0] != nil && f.shape[1] != nil {
		a, b := *f.shape[0], *f.shape[1]
		a.OutputKernel, a.SigmaY = nil, 0
		b.OutputKernel, b.SigmaY = nil, 0
		if !reflect.DeepEqual(a, b) {
			return nil, fmt.Errorf("dica: NewFamily: the supervised and the unsupervised configurations differ in more than Method, Components, Lambda, Epsilon and the output kernel")
		}
	}
	// The plan is the supervised one when there is one: the unsupervised
	// plan is the same without the output map.
	base := first[1]
	if base == nil {
		base = first[0]
	}
	bc := *base
	bc.Workers, bc.Progress, bc.MaxMemory = run.Workers, run.Progress, run.MaxMemory
	if gram && !bc.needsGram() {
		gc := bc
		gc.Lambda = 1
		if err := checkMemory(gc, shapeOf(src)); err != nil {
			return nil, err
		}
	}
	p, err := NewPlan(ctx, src, bc)
	if err != nil {
		return nil, err
	}
	both := first[0] != nil && first[1] != nil
	if keep && !p.SinglePrecision() {
		n := src.(dataset.Sizer).Len()
		f.raw = mat.NewDense(max(n, 1), rawDim(p.inMap), nil)
		if n == 0 {
			f.raw = nil
		}
	}
	main, second, domains, classes, err := p.accumulateFamily(ctx, src, gram, both, f.raw)
	if err != nil {
		return nil, err
	}
	if f.raw != nil {
		if r, _ := f.raw.Dims(); int64(r) != main.n {
			return nil, fmt.Errorf("dica: NewFamilyFeatures: the source has %d rows but reported %d", main.n, r)
		}
	}
	st := &Stats{plan: p, acc: *main, Domains: domains}
	if main.n > 0 {
		pt, cells := main.part(domains)
		st.parts, st.cells = []Part{pt}, cells
	}
	st.acc.domHash, st.acc.fileHash = nil, nil
	if first[1] == nil {
		f.uns = st
		return f, nil
	}
	if p.Schema.Labelled {
		st.Classes = classes
	}
	f.sup = st
	if !both {
		return f, nil
	}
	// The unsupervised statistics: their own domain sums, the shared Gram
	// sum, and the plan without the output map.
	q := *p
	q.Config.Method, q.Config.Components, q.Config.Lambda, q.Config.Epsilon = first[0].Method, first[0].Components, first[0].Lambda, first[0].Epsilon
	q.Config.OutputKernel, q.Config.SigmaY = first[0].OutputKernel, first[0].SigmaY
	q.out, q.outMap, q.outShift = nil, nil, nil
	var e encoder
	q.encode(&e)
	q.fp = fingerprint(e.b)
	u := &Stats{plan: &q, acc: *second, Domains: slices.Clone(domains), parts: slices.Clone(st.parts)}
	u.acc.gram, u.acc.gramSum = main.gram, main.gramSum
	u.acc.domHash, u.acc.fileHash = nil, nil
	f.uns = u
	return f, nil
}

// Plan returns the plan of the family's pass: its input map is the map of
// every model Solve returns (see Plan.MapRaw and Model.ProjectRaw).
func (f *Family) Plan() *Plan {
	if f == nil {
		return nil
	}
	if f.sup != nil {
		return f.sup.plan
	}
	if f.uns != nil {
		return f.uns.plan
	}
	return nil
}

// Stats returns the statistics the family holds for method m: those
// Plan.Accumulate gives, bit for bit, with the plan of Fit for a
// configuration of the family with method m (the supervised sums for DICA
// and COIR, the unsupervised ones for KPCA and UDICA; with the Gram sum
// when a configuration of the family needed it). They are shared with the
// family: do not merge into them. It returns nil when no configuration of
// m's kind was given to NewFamily.
func (f *Family) Stats(m Method) *Stats {
	if f == nil {
		return nil
	}
	if (Config{Method: m}).supervised() {
		return f.sup
	}
	return f.uns
}

// Solve solves the eigenproblem of cfg from the family's statistics and
// returns, bit for bit, the model Fit(ctx, src, cfg) returns. cfg must
// agree with the configurations given to NewFamily in everything but
// Method, Components, Lambda and Epsilon, its kind (supervised or not) must
// be among theirs, and a solve that needs the Gram sum needs a family that
// has it. The feature statistics of a kind (and, for the supervised
// methods, of an epsilon) are computed once and reused by every Solve.
func (f *Family) Solve(cfg Config) (*Model, error) {
	if f == nil || f.sup == nil && f.uns == nil {
		return nil, errNoPlan
	}
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	k := kindIndex(cfg)
	st := f.uns
	if k == 1 {
		st = f.sup
	}
	if st == nil {
		kind := "an unsupervised"
		if k == 1 {
			kind = "a supervised"
		}
		return nil, fmt.Errorf("dica: Family.Solve: %v needs the statistics of %s method, and NewFamily was given no such configuration", cfg.Method, kind)
	}
	if !reflect.DeepEqual(familyShape(cfg), *f.shape[k]) {
		return nil, fmt.Errorf("dica: Family.Solve: the configuration differs from the family's in more than Method, Components, Lambda and Epsilon")
	}
	rc := st.plan.Config
	rc.Method, rc.Components, rc.Lambda, rc.Epsilon = cfg.Method, cfg.Components, cfg.Lambda, cfg.Epsilon
	if rc.needsGram() && !st.acc.gram {
		return nil, fmt.Errorf("dica: Family.Solve: %v with lambda = %v needs the Gram sum, and no configuration given to NewFamily needed it", cfg.Method, cfg.Lambda)
	}
	fs, err := f.features(st, rc)
	if err != nil || rc.domainTerm() && fs.N < 2 {
		// SolveWith reports the error of this configuration.
		return st.SolveWith(rc)
	}
	p := *st.plan
	p.Config = rc
	var e encoder
	p.encode(&e)
	p.fp = fingerprint(e.b)
	sc := *st
	sc.plan = &p
	return sc.solveFeatures(fs)
}

// features returns the feature statistics of st for the configuration rc,
// computed once per kind and epsilon: with the Gram matrix C whenever the
// statistics have the Gram sum (a solve that does not use C ignores it).
func (f *Family) features(st *Stats, rc Config) (*featureStats, error) {
	key := familyKey{supervised: rc.supervised()}
	if key.supervised {
		key.epsilon = rc.Epsilon
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fs, ok := f.cache[key]; ok {
		return fs, nil
	}
	p := *st.plan
	p.Config = rc
	if st.acc.gram {
		p.Config.Lambda = 1 // features computes C when the configuration needs it
	}
	sc := *st
	sc.plan = &p
	fs, err := sc.features()
	if err != nil {
		return nil, err
	}
	f.cache[key] = fs
	return fs, nil
}

// accumulateFamily is Accumulate for a family: the statistics of the plan
// (main), with the Gram sum when gram is set, and, when second is set,
// the domain sums and counts of an unsupervised method beside them (the
// plan's method is then supervised, so that main's domain sums come from
// the per-class cells). It returns the domain and class names of src.
func (p *Plan) accumulateFamily(ctx context.Context, src dataset.Source, gram, second bool, keep *mat.Dense) (main, sec *accum, domains, classes []string, err error) {
	sc := src.Schema()
	if !slices.Equal(sc.Features, p.Schema.Features) || sc.Labelled != p.Schema.Labelled || !slices.Equal(sc.Targets, p.Schema.Targets) {
		return nil, nil, nil, nil, fmt.Errorf("dica: the data's columns %v differ from the plan's %v", sc.Features, p.Schema.Features)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := src.Open(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer r.Close()
	ps := newPass(p, p.Config.Workers, gram, second)
	ps.keep = keep
	go ps.read(ctx, cancel, newFileBlocks(r))
	ps.startWorkers(ctx)
	if main, sec, err = ps.merge(cancel); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, nil, err
	}
	domains = slices.Clone(r.Domains())
	if p.Config.supervised() && p.Schema.Labelled {
		classes = slices.Clone(r.Classes())
	}
	return main, sec, domains, classes, nil
}

// domainSums adds the counts and the sums per domain of the shifted raw
// features f (the rows of b, as worker.block leaves them when it keeps the
// shifted rows) into a, as the pass of an unsupervised method sums them:
// per domain cell, then folded into a.
func (w *worker) domainSums(a *accum, b *dataset.Block, f *mat.Dense) {
	a.n += int64(b.Rows)
	fr := f.RawMatrix()
	w.cells = w.cells[:0]
	last := -1
	for i := 0; i < b.Rows; i++ {
		g := b.Domain[i]
		if last < 0 || w.cells[last].g != g {
			last = w.cell(g, 0, a.mraw)
		}
		w.cells[last].n++
		addTo(w.cells[last].sum, fr.Data[i*fr.Stride:i*fr.Stride+a.mraw])
	}
	w.foldCells(a, false)
}

// RawDim returns the number of raw input features of the plan's map: the
// kernel rows k_m(x) against the m landmarks for the Nystrom map, the
// features themselves for a map without a factored form (random Fourier
// features).
func (p *Plan) RawDim() int {
	if p == nil || p.inMap == nil {
		return 0
	}
	return rawDim(p.inMap)
}

// MapRaw stores in dst (r x RawDim, or empty to be resized) the raw input
// features of the r rows of x (preprocessed as the plan's data): the values
// whose sums the statistics hold (before their fixed shift) and that
// Model.ProjectRaw projects. Each row is computed on its own, so a row's
// features do not depend on the rows beside it. MapRaw runs on the calling
// goroutine; it returns an error for an empty plan, x with the wrong number
// of columns and dst of the wrong shape.
func (p *Plan) MapRaw(dst, x *mat.Dense) error {
	if p == nil || p.inMap == nil {
		return errNoPlan
	}
	if x == nil || x.IsEmpty() {
		return fmt.Errorf("dica: MapRaw of no data (nil or empty matrix)")
	}
	r, d := x.Dims()
	if d != p.inMap.InputDim() {
		return fmt.Errorf("dica: data has %d columns, the plan expects %d", d, p.inMap.InputDim())
	}
	if dst == nil {
		return fmt.Errorf("dica: MapRaw into a nil matrix")
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, p.RawDim())
	} else if rr, cc := dst.Dims(); rr != r || cc != p.RawDim() {
		return fmt.Errorf("dica: MapRaw destination is %d x %d, want %d x %d", rr, cc, r, p.RawDim())
	}
	rawMap(p.inMap, dst, x)
	return nil
}

// ProjectRaw stores in dst (r x Components, or empty to be resized) the
// projection of r rows given by their raw input features f (r x RawDim of
// the model's plan, from Plan.MapRaw of that plan or of the Family the
// model was solved from): z = W^T (phi(x) - mu), computed as Transform
// computes it, so when f holds the raw features of the rows of x the
// result equals Transform(x) bit for bit (without Scale or BatchCenter):
// every element of the product is a sum in a fixed order whatever the
// rows around it (see package internal/gemm). ProjectRaw runs on the
// calling goroutine; it returns an error for an empty model and for f or
// dst of the wrong shape.
func (m *Model) ProjectRaw(dst, f *mat.Dense) error {
	p, err := NewProjector(m)
	if err != nil {
		return err
	}
	return p.Project([]*mat.Dense{dst}, f)
}

// projectBuffers holds the products of Projector.Project for reuse.
var projectBuffers = sync.Pool{New: func() any { return new([]float64) }}

// Projector projects rows given by their raw input features by several
// models of one input map at once: one matrix product for all of them,
// whose every element equals the one Model.ProjectRaw (and Transform)
// computes. Build it once for a set of models and use it for every block
// of rows.
type Projector struct {
	models []*Model
	raw    int
	w      *gemm.PackedB // the models' wraw stacked side by side: raw x sum k
	cols   int           // sum of the models' components
	// shift holds, side by side, each model's offsets negated (0 - o):
	// the initial value of each row of the product.
	shift []float64
}

// NewProjector returns the projector of the models, which must all have
// been fitted (or loaded) with the same input map: the models of one
// Family, or one model. It returns an error for no model, an empty one,
// or models whose maps differ.
func NewProjector(models ...*Model) (*Projector, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("dica: NewProjector needs at least one model")
	}
	p := &Projector{models: models}
	for i, m := range models {
		if err := m.ready(); err != nil {
			return nil, err
		}
		if i == 0 {
			p.raw = rawDim(m.plan.inMap)
		} else if m.plan.inMap != models[0].plan.inMap && !reflect.DeepEqual(m.plan.in, models[0].plan.in) {
			return nil, fmt.Errorf("dica: NewProjector: model %d has another input map than model 1", i+1)
		}
		p.cols += m.Positive
	}
	w := make([]float64, 0, p.cols*p.raw)
	for _, m := range models {
		w = append(w, m.wrawT[:m.Positive*p.raw]...)
		for _, o := range m.offset[:m.Positive] {
			p.shift = append(p.shift, 0-o)
		}
	}
	p.w = gemm.PackB(blas.Trans, blas64.General{Rows: p.cols, Cols: p.raw, Stride: p.raw, Data: w})
	return p, nil
}

// Project stores in dst[i] (r x Components of model i, or empty to be
// resized) the projection by model i of the r rows given by their raw
// input features f (r x RawDim), the values Model.ProjectRaw gives. It
// runs on the calling goroutine and returns an error for f or dst of the
// wrong shape.
func (p *Projector) Project(dst []*mat.Dense, f *mat.Dense) error {
	if p == nil || len(p.models) == 0 {
		return fmt.Errorf("dica: empty projector (use NewProjector)")
	}
	if f == nil || f.IsEmpty() {
		return fmt.Errorf("dica: ProjectRaw of no features (nil or empty matrix)")
	}
	r, c := f.Dims()
	if c != p.raw {
		return fmt.Errorf("dica: features have %d columns, the model's map has %d raw features", c, p.raw)
	}
	if len(dst) != len(p.models) {
		return fmt.Errorf("dica: %d destinations for %d models", len(dst), len(p.models))
	}
	for i, d := range dst {
		k := p.models[i].Positive
		if d == nil {
			return fmt.Errorf("dica: ProjectRaw into a nil matrix")
		}
		if d.IsEmpty() {
			d.ReuseAs(r, k)
		} else if rr, cc := d.Dims(); rr != r || cc != k {
			return fmt.Errorf("dica: ProjectRaw destination is %d x %d, want %d x %d", rr, cc, r, k)
		}
	}
	// Each element starts at 0 - o for the model's offset o, so that the
	// product's single rounding of acc + (0 - o), acc the exact-order sum
	// of the products, gives the bits of (0 + acc) - o.
	var zr blas64.General
	if len(dst) == 1 {
		zr = dst[0].RawMatrix()
		for i := 0; i < r; i++ {
			copy(zr.Data[i*zr.Stride:i*zr.Stride+p.cols], p.shift)
		}
	} else {
		// The models' columns side by side, in a buffer that successive
		// calls reuse.
		buf := projectBuffers.Get().(*[]float64)
		defer projectBuffers.Put(buf)
		if cap(*buf) < r*p.cols {
			*buf = make([]float64, r*p.cols)
		}
		*buf = (*buf)[:r*p.cols]
		for i := 0; i < r; i++ {
			copy((*buf)[i*p.cols:(i+1)*p.cols], p.shift)
		}
		zr = blas64.General{Rows: r, Cols: p.cols, Stride: p.cols, Data: *buf}
	}
	gemm.GemmPacked(blas.NoTrans, 1, f.RawMatrix(), p.w, blas64.General{Rows: r, Cols: p.cols, Stride: zr.Stride, Data: zr.Data}, 1)
	if len(dst) == 1 {
		return nil
	}
	off := 0
	for mi, m := range p.models {
		k := m.Positive
		d := dst[mi].RawMatrix()
		for i := 0; i < r; i++ {
			copy(d.Data[i*d.Stride:i*d.Stride+k], zr.Data[i*zr.Stride+off:i*zr.Stride+off+k])
		}
		off += k
	}
	return nil
}
