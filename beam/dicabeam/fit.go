package dicabeam

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

func init() {
	registerDoFns((*accumFn)(nil), (*mergePartFn)(nil), (*gatherFn)(nil), (*solveFn)(nil))
	beam.RegisterFunction(dropKey)
	beam.RegisterCoder(reflect.TypeOf(Part{}), encodePart, decodePart)
	beam.RegisterCoder(reflect.TypeOf(Gathered{}), encodeGathered, decodeGathered)
}

// DefaultGramParts is the default number of row chunks (keys) of the Gram
// sum in the keyed combine.
const DefaultGramParts = 8

// Options configure the Beam fit.
type Options struct {
	// Config is the fit configuration, as for dica.Fit. Workers and
	// Progress are ignored; kernels must be RBF, Laplacian or linear; the
	// exact solver is not available.
	Config dica.Config
	// Schema names the features and says whether cells carry class labels
	// (Labelled) or real targets (Targets), as a dataset.Source would.
	Schema dataset.Schema
	// Plan, when not nil, is used instead of a plan drawn on the pipeline
	// (its configuration then overrides Config).
	Plan *dica.Plan
	// BlockRows is the number of cells a worker buffers before adding them
	// to its statistics (Config.BlockRows, else dica.DefaultBlockRows).
	// FitFiles gives the model of an in-process fit bit for bit when the
	// two use the same BlockRows.
	BlockRows int
	// GramParts is the number of row chunks of the m x m Gram sum, each
	// combined under its own key (DefaultGramParts).
	GramParts int
	// Workers is the number of goroutines a bundle adds blocks on (default
	// 1; with FitFiles, the goroutines that accumulate each file; the
	// result does not depend on it). Runners run bundles in parallel on the cores of a worker: more
	// goroutines per bundle only help runners that do not, such as Prism
	// on one machine.
	Workers int
}

func (o Options) blockRows() int {
	switch {
	case o.BlockRows > 0:
		return o.BlockRows
	case o.Config.BlockRows > 0:
		return o.Config.BlockRows
	}
	return dica.DefaultBlockRows
}

func (o Options) workers() int { return max(1, o.Workers) }

func (o Options) gramParts() int {
	if o.GramParts > 0 {
		return o.GramParts
	}
	return DefaultGramParts
}

// Fit adds a DICA fit of the cells to the pipeline and returns a
// PCollection holding the fitted *dica.Model (one element): NewPlan,
// Accumulate and Solve.
func Fit(s beam.Scope, cells beam.PCollection, o Options) (beam.PCollection, error) {
	s = s.Scope("dica.Fit")
	plan, err := NewPlan(s, cells, o)
	if err != nil {
		return beam.PCollection{}, err
	}
	return Solve(s, Accumulate(s, cells, plan, o)), nil
}

// accumFn adds the cells of each bundle into statistics, in blocks of
// BlockRows cells, and emits them when the bundle finishes: the small
// statistics, and the Gram sum split into GramParts row chunks keyed by
// chunk number. With Workers > 1 the blocks are added on that many
// goroutines, each into its own statistics, merged at the end of the bundle;
// block i goes to goroutine i mod Workers and the merge is in goroutine
// order, so a bundle's statistics do not depend on the scheduling.
type accumFn struct {
	BlockRows int
	GramParts int
	Workers   int

	plan *dica.Plan
	blk  *dataset.Block
	doms dataset.Index
	cls  dataset.Index

	stats   *dica.Stats // Workers == 1
	work    []chan job  // Workers > 1: one channel per goroutine
	next    int         // the goroutine of the next block
	free    chan *dataset.Block
	results []result
	wg      sync.WaitGroup
}

type job struct {
	b          *dataset.Block
	doms, clss []string
}

type result struct {
	s   *dica.Stats
	err error
}

func (f *accumFn) StartBundle(_ func(*[]byte) bool, _ func(int, Part)) {
	f.stats, f.blk, f.work = nil, nil, nil
	f.doms, f.cls = dataset.Index{}, dataset.Index{}
}

// start prepares the bundle's statistics (and goroutines) once the plan is
// known.
func (f *accumFn) start() {
	if f.Workers <= 1 {
		f.stats = f.plan.NewStats()
		return
	}
	f.work = make([]chan job, f.Workers)
	f.next = 0
	f.free = make(chan *dataset.Block, 2*f.Workers)
	f.results = make([]result, f.Workers)
	for w := range f.Workers {
		f.work[w] = make(chan job, 1)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			s := f.plan.NewStats()
			var err error
			for j := range f.work[w] {
				if err == nil {
					err = s.AddBlock(j.b, j.doms, j.clss)
				}
				j.b.Rows = 0
				f.free <- j.b
			}
			f.results[w] = result{s, err}
		}()
	}
	for range 2 * f.Workers {
		f.free <- new(dataset.Block)
	}
}

// sidePlan decodes the plan of the side input planSide.
func sidePlan(planSide func(*[]byte) bool) (*dica.Plan, error) {
	var b []byte
	if !planSide(&b) {
		return nil, fmt.Errorf("dicabeam: no plan")
	}
	p := new(dica.Plan)
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return p, nil
}

func (f *accumFn) ProcessElement(c Cell, planSide func(*[]byte) bool, _ func(int, Part)) error {
	if f.plan == nil {
		p, err := sidePlan(planSide)
		if err != nil {
			return err
		}
		f.plan = p
	}
	if f.stats == nil && f.work == nil {
		f.start()
	}
	sc := f.plan.Schema
	d, t := sc.D(), len(sc.Targets)
	if len(c.Features) != d {
		return fmt.Errorf("dicabeam: cell %d has %d features, the plan's schema %d", c.Key, len(c.Features), d)
	}
	if len(c.Targets) != t {
		return fmt.Errorf("dicabeam: cell %d has %d targets, the plan's schema %d", c.Key, len(c.Targets), t)
	}
	if f.blk == nil {
		if f.work != nil {
			f.blk = <-f.free
		} else {
			f.blk = new(dataset.Block)
		}
		f.blk.Reset(f.BlockRows, d, sc.Labelled, t)
	}
	b := f.blk
	i := b.Rows
	copy(b.X[i*d:(i+1)*d], c.Features)
	b.Domain[i] = f.doms.ID(c.Domain)
	if b.Label != nil {
		b.Label[i] = f.cls.ID(c.Label)
	}
	if t > 0 {
		copy(b.Target[i*t:(i+1)*t], c.Targets)
	}
	b.Rows++
	if b.Rows == f.BlockRows {
		return f.flush()
	}
	return nil
}

func (f *accumFn) flush() error {
	b := f.blk
	if b == nil || b.Rows == 0 {
		return nil
	}
	if f.work != nil {
		f.work[f.next] <- job{b: b, doms: f.doms.Names(), clss: f.cls.Names()}
		f.next = (f.next + 1) % len(f.work)
		f.blk = nil
		return nil
	}
	err := f.stats.AddBlock(b, f.doms.Names(), f.cls.Names())
	b.Rows = 0
	return err
}

// finish returns the bundle's statistics, stopping the goroutines.
func (f *accumFn) finish() (*dica.Stats, error) {
	err := f.flush()
	if f.work == nil {
		return f.stats, err
	}
	f.stop()
	var total *dica.Stats
	for _, r := range f.results {
		if err == nil {
			err = r.err
		}
		if r.s.N() == 0 {
			continue
		}
		if total == nil {
			total = r.s
		} else if err == nil {
			err = total.Merge(r.s)
		}
	}
	f.results = nil
	return total, err
}

// stop ends the goroutines and waits for them.
func (f *accumFn) stop() {
	for _, c := range f.work {
		close(c)
	}
	f.wg.Wait()
	f.work = nil
}

// Teardown stops the goroutines of a bundle that failed.
func (f *accumFn) Teardown() {
	if f.work != nil {
		f.stop()
	}
}

func (f *accumFn) FinishBundle(_ func(*[]byte) bool, emit func(int, Part)) error {
	if f.stats == nil && f.work == nil {
		return nil
	}
	st, err := f.finish()
	f.stats, f.blk = nil, nil
	if err != nil || st == nil {
		return err
	}
	for k, g := range st.SplitGram(f.GramParts) {
		emit(k, Part{Gram: g})
	}
	emit(statsKey, Part{Stats: st})
	return nil
}

// statsKey is the key of the small statistics in the keyed combine; the
// Gram chunks have keys 0, 1, ...
const statsKey = -1

// Part is a piece of statistics in the combines of Accumulate: the small
// statistics (counts, domain and class sums, output sums; Stats) or one row
// chunk of the Gram sum (Gram). Its coder uses the core binary encodings.
//
// The parts of FitFiles are in file order (see FitFiles): Stats or Gram
// then hold the sum of the partial sums of files 0 to Files-1, added in
// file order, and Pending holds the partial sums of later files that
// cannot be added yet because a file before them has not come; adding
// parts adds every pending file whose predecessors are all in. Parts of
// Accumulate (cells without a file order) have Files 0 and no Pending, and
// are added in the order the runner gives.
type Part struct {
	Stats *dica.Stats
	Gram  *dica.GramPart
	// Files is the number of files whose partial sums Stats or Gram hold
	// (parts in file order).
	Files int
	// Pending holds the partial sums of files after the first Files, in
	// increasing file order (parts in file order).
	Pending []FilePart
}

// FilePart is the partial sums of one file of FitFiles: its small
// statistics or one row chunk of its Gram sum.
type FilePart struct {
	File  int
	Stats *dica.Stats
	Gram  *dica.GramPart
}

// empty reports whether p holds nothing.
func (p Part) empty() bool {
	return p.Stats == nil && p.Gram == nil && p.Files == 0 && len(p.Pending) == 0
}

// ordered reports whether p is a part of FitFiles, in file order.
func (p Part) ordered() bool { return p.Files > 0 || len(p.Pending) > 0 }

// add adds o into p (parts of the same kind and rows).
func (p Part) add(o Part) (Part, error) {
	switch {
	case p.empty():
		return o, nil
	case o.empty():
		return p, nil
	case p.ordered() || o.ordered():
		return p.addOrdered(o)
	case p.Stats != nil && o.Stats != nil:
		return p, p.Stats.Merge(o.Stats)
	case p.Gram != nil && o.Gram != nil:
		return p, p.Gram.Add(o.Gram)
	}
	return p, fmt.Errorf("dicabeam: cannot add statistics and a Gram part")
}

// addOrdered adds the parts in file order: the pending files of both, and
// then every pending file that follows the files added, in turn.
func (p Part) addOrdered(o Part) (Part, error) {
	if !p.ordered() || !o.ordered() {
		return p, fmt.Errorf("dicabeam: cannot add statistics of files in order and statistics of cells")
	}
	if p.Files > 0 && o.Files > 0 {
		return p, fmt.Errorf("dicabeam: two parts both hold the statistics of file 0: a file was read twice")
	}
	if o.Files > 0 {
		p, o = o, p
	}
	pending := make([]FilePart, 0, len(p.Pending)+len(o.Pending))
	i, j := 0, 0
	for i < len(p.Pending) || j < len(o.Pending) {
		switch {
		case j == len(o.Pending) || i < len(p.Pending) && p.Pending[i].File < o.Pending[j].File:
			pending = append(pending, p.Pending[i])
			i++
		case i == len(p.Pending) || o.Pending[j].File < p.Pending[i].File:
			pending = append(pending, o.Pending[j])
			j++
		default:
			return p, fmt.Errorf("dicabeam: two parts hold the statistics of file %d: a file was read twice", o.Pending[j].File)
		}
	}
	for len(pending) > 0 && pending[0].File <= p.Files {
		f := pending[0]
		if f.File < p.Files {
			return p, fmt.Errorf("dicabeam: two parts hold the statistics of file %d: a file was read twice", f.File)
		}
		switch {
		case f.Stats != nil && p.Stats == nil && p.Gram == nil:
			p.Stats = f.Stats // the sum of no files is zero, and 0 + x = x
		case f.Gram != nil && p.Stats == nil && p.Gram == nil:
			p.Gram = f.Gram
		case f.Stats != nil && p.Stats != nil:
			if err := p.Stats.Merge(f.Stats); err != nil {
				return p, err
			}
		case f.Gram != nil && p.Gram != nil:
			if err := p.Gram.Add(f.Gram); err != nil {
				return p, err
			}
		default:
			return p, fmt.Errorf("dicabeam: cannot add statistics and a Gram part")
		}
		p.Files++
		pending = pending[1:]
	}
	p.Pending = pending
	if len(p.Pending) == 0 {
		p.Pending = nil
	}
	return p, nil
}

// Part encodings: a tag byte ('s' small statistics, 'g' a Gram chunk, 'o'
// a part in file order), empty for an empty part.
func encodePart(p Part) ([]byte, error) {
	if p.ordered() {
		out := binary.AppendUvarint([]byte{'o'}, uint64(p.Files))
		add := func(q Part) error {
			b, err := encodePart(q)
			out = binary.AppendUvarint(out, uint64(len(b)))
			out = append(out, b...)
			return err
		}
		if err := add(Part{Stats: p.Stats, Gram: p.Gram}); err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(p.Pending)))
		for _, f := range p.Pending {
			out = binary.AppendUvarint(out, uint64(f.File))
			if err := add(Part{Stats: f.Stats, Gram: f.Gram}); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	switch {
	case p.Stats != nil:
		b, err := p.Stats.MarshalBinary()
		out := binary.AppendUvarint([]byte{'s'}, uint64(len(b)))
		return append(out, b...), err
	case p.Gram != nil:
		b, err := p.Gram.MarshalBinary()
		return append([]byte{'g'}, b...), err
	}
	return []byte{}, nil
}

// decodeOrdered decodes the encoding of a part in file order, after its
// tag.
func decodeOrdered(b []byte) (Part, error) {
	r := &reader{b: b}
	next := func() Part {
		n := r.uvarint()
		if r.err != nil || n > uint64(len(r.b)) {
			r.err = fmt.Errorf("dicabeam: truncated statistics part")
			return Part{}
		}
		q, err := decodePart(r.b[:n])
		if err == nil && q.ordered() {
			err = fmt.Errorf("dicabeam: a part in file order within another")
		}
		if err != nil {
			r.err = err
		}
		r.b = r.b[n:]
		return q
	}
	files := r.uvarint()
	if files > math.MaxInt32 {
		return Part{}, fmt.Errorf("dicabeam: statistics of %d files", files)
	}
	head := next()
	p := Part{Stats: head.Stats, Gram: head.Gram, Files: int(files)}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		return Part{}, fmt.Errorf("dicabeam: truncated statistics part")
	}
	for k := uint64(0); k < n && r.err == nil; k++ {
		f := r.uvarint()
		q := next()
		if r.err == nil && (f > math.MaxInt32 || int(f) < p.Files || len(p.Pending) > 0 && int(f) <= p.Pending[len(p.Pending)-1].File) {
			return Part{}, fmt.Errorf("dicabeam: pending statistics of file %d out of order", f)
		}
		p.Pending = append(p.Pending, FilePart{File: int(f), Stats: q.Stats, Gram: q.Gram})
	}
	if err := r.done(); err != nil {
		return Part{}, err
	}
	if !p.ordered() {
		return Part{}, fmt.Errorf("dicabeam: a part in file order holds no file")
	}
	return p, nil
}

func decodePart(b []byte) (Part, error) {
	if len(b) == 0 {
		return Part{}, nil
	}
	switch b[0] {
	case 'o':
		return decodeOrdered(b[1:])
	case 's':
		r := &reader{b: b[1:]}
		n := r.uvarint()
		if r.err != nil || n == 0 || n > uint64(len(r.b)) {
			return Part{}, fmt.Errorf("dicabeam: truncated statistics part")
		}
		s, err := decodeStats(r.b[:n])
		if err != nil {
			return Part{}, err
		}
		r.b = r.b[n:]
		return Part{Stats: s}, r.done()
	case 'g':
		g, err := decodeGram(b[1:])
		return Part{Gram: g}, err
	}
	return Part{}, fmt.Errorf("dicabeam: bad statistics part tag %q", b[0])
}

// mergePartFn adds the parts of one key: the bundles' small statistics
// under statsKey, the bundles' Gram chunk k under key k.
type mergePartFn struct{}

func (*mergePartFn) CreateAccumulator() Part                   { return Part{} }
func (*mergePartFn) AddInput(a, b Part) (Part, error)          { return a.add(b) }
func (*mergePartFn) MergeAccumulators(a, b Part) (Part, error) { return a.add(b) }
func (*mergePartFn) ExtractOutput(a Part) Part                 { return a }

// Gathered holds the combined statistics of a fit: the small statistics
// and the Gram chunks, on one worker, ready for Solve.
type Gathered struct {
	Parts []Part
}

// gatherFn collects the combined parts of every key.
type gatherFn struct{}

func (*gatherFn) CreateAccumulator() Gathered { return Gathered{} }
func (*gatherFn) AddInput(a Gathered, p Part) Gathered {
	a.Parts = append(a.Parts, p)
	return a
}
func (*gatherFn) MergeAccumulators(a, b Gathered) Gathered {
	a.Parts = append(a.Parts, b.Parts...)
	return a
}
func (*gatherFn) ExtractOutput(a Gathered) Gathered { return a }

func encodeGathered(g Gathered) ([]byte, error) {
	var out []byte
	for _, p := range g.Parts {
		b, err := encodePart(p)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

func decodeGathered(b []byte) (Gathered, error) {
	var g Gathered
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return g, fmt.Errorf("dicabeam: truncated statistics")
		}
		p, err := decodePart(b[k : k+int(n)])
		if err != nil {
			return g, err
		}
		g.Parts = append(g.Parts, p)
		b = b[k+int(n):]
	}
	return g, nil
}

func dropKey(_ int, p Part) Part { return p }

// Accumulate adds the statistics pass to the pipeline: each bundle's cells
// are added into dica.Stats in blocks of Options.BlockRows cells with the
// plan (a PCollection of one plan encoding, from NewPlan, as a side input).
// Each bundle emits its small statistics under one key and its Gram sum (when
// the method needs one) as Options.GramParts row chunks under one key each;
// the keyed combine adds them per key, on different workers, so that no
// worker adds the whole m x m sum of every bundle. The combined parts are
// then gathered on one worker: the result holds one Gathered element, for
// Solve.
//
// The sums are added in the order the runner gives the bundles and the
// parts, so the model equals that of dica.Fit on the same cells to about
// 1e-15 relative, not bit for bit: cells carry no file order. FitFiles
// follows dica.Plan.Accumulate's order and is bit-identical.
func Accumulate(s beam.Scope, cells, plan beam.PCollection, o Options) beam.PCollection {
	s = s.Scope("dica.Accumulate")
	parts := beam.ParDo(s, &accumFn{BlockRows: o.blockRows(), GramParts: o.gramParts(), Workers: o.workers()}, cells, beam.SideInput{Input: plan})
	return CombineParts(s, parts)
}

// CombineParts is the second half of Accumulate: parts, a PCollection of
// KV<int, Part> (the small statistics of a bundle under key -1, row chunk k
// of its Gram sum under key k, every bundle splitting at the same rows), are
// added per key by a keyed combine and then gathered on one worker. The
// result holds one Gathered element, for Solve.
func CombineParts(s beam.Scope, parts beam.PCollection) beam.PCollection {
	combined := beam.ParDo(s, dropKey, beam.CombinePerKey(s, &mergePartFn{}, parts))
	return beam.Combine(s, &gatherFn{}, combined)
}

// Solve joins the gathered statistics and solves; it returns the
// *dica.Model.
func (g Gathered) Solve() (*dica.Model, error) {
	var st *dica.Stats
	var parts []*dica.GramPart
	files := -1
	for _, p := range g.Parts {
		if p.ordered() {
			if len(p.Pending) > 0 {
				return nil, fmt.Errorf("dicabeam: the statistics of file %d are missing (those of %d later files came)", p.Files, len(p.Pending))
			}
			if files >= 0 && p.Files != files {
				return nil, fmt.Errorf("dicabeam: the gathered parts hold the statistics of %d and of %d files", files, p.Files)
			}
			files = p.Files
		}
		switch {
		case p.Stats != nil && st != nil:
			return nil, fmt.Errorf("dicabeam: two sets of small statistics gathered")
		case p.Stats != nil:
			st = p.Stats
		case p.Gram != nil:
			parts = append(parts, p.Gram)
		}
	}
	if st == nil {
		return nil, fmt.Errorf("dicabeam: no cells")
	}
	// Without parts for a method that needs them, Solve says the Gram sum
	// is missing.
	if len(parts) > 0 {
		if err := st.JoinGram(parts); err != nil {
			return nil, err
		}
	}
	return st.Solve()
}

// solveFn solves the gathered statistics.
type solveFn struct{}

func (*solveFn) ProcessElement(g Gathered, emit func(*dica.Model)) error {
	m, err := g.Solve()
	if err != nil {
		return err
	}
	emit(m)
	return nil
}

// Solve adds the solve to the pipeline: the gathered statistics of
// Accumulate are joined and solved on one worker. It returns a PCollection
// holding the *dica.Model (one element).
func Solve(s beam.Scope, gathered beam.PCollection) beam.PCollection {
	s = s.Scope("dica.Solve")
	return beam.ParDo(s, &solveFn{}, gathered)
}
