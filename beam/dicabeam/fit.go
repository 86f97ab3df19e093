package dicabeam

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*accumFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeStatsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeGramFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*solveFn)(nil)).Elem())
	beam.RegisterFunction(dropGramKey)
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
	BlockRows int
	// GramParts is the number of row chunks of the m x m Gram sum, each
	// combined under its own key (DefaultGramParts).
	GramParts int
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
	stats, gram := Accumulate(s, cells, plan, o)
	return Solve(s, stats, gram), nil
}

// accumFn adds the cells of each bundle into statistics, in blocks of
// BlockRows cells, and emits them when the bundle finishes: the small
// statistics, and the Gram sum split into GramParts row chunks keyed by
// chunk number.
type accumFn struct {
	BlockRows int
	GramParts int

	plan  *dica.Plan
	stats *dica.Stats
	blk   dataset.Block
	doms  dataset.Index
	cls   dataset.Index
}

func (f *accumFn) StartBundle(_ func(*[]byte) bool, _ func(*dica.Stats), _ func(int, *dica.GramPart)) {
	f.stats = nil
	f.doms, f.cls = dataset.Index{}, dataset.Index{}
}

func (f *accumFn) ProcessElement(c Cell, planSide func(*[]byte) bool, _ func(*dica.Stats), _ func(int, *dica.GramPart)) error {
	if f.plan == nil {
		var b []byte
		if !planSide(&b) {
			return fmt.Errorf("dicabeam: no plan")
		}
		p := new(dica.Plan)
		if err := p.UnmarshalBinary(b); err != nil {
			return err
		}
		f.plan = p
	}
	if f.stats == nil {
		f.stats = f.plan.NewStats()
		sc := f.plan.Schema
		f.blk.Reset(f.BlockRows, sc.D(), sc.Labelled, len(sc.Targets))
	}
	sc := f.plan.Schema
	d, t := sc.D(), len(sc.Targets)
	if len(c.Features) != d {
		return fmt.Errorf("dicabeam: cell %d has %d features, the plan's schema %d", c.Key, len(c.Features), d)
	}
	if len(c.Targets) != t {
		return fmt.Errorf("dicabeam: cell %d has %d targets, the plan's schema %d", c.Key, len(c.Targets), t)
	}
	b := &f.blk
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
	b := &f.blk
	if b.Rows == 0 {
		return nil
	}
	err := f.stats.AddBlock(b, f.doms.Names(), f.cls.Names())
	b.Rows = 0
	return err
}

func (f *accumFn) FinishBundle(_ func(*[]byte) bool, emitStats func(*dica.Stats), emitGram func(int, *dica.GramPart)) error {
	if f.stats == nil {
		return nil
	}
	if err := f.flush(); err != nil {
		return err
	}
	for k, g := range f.stats.SplitGram(f.GramParts) {
		emitGram(k, g)
	}
	emitStats(f.stats)
	f.stats = nil
	return nil
}

// mergeStatsFn combines statistics (without their Gram sum).
type mergeStatsFn struct{}

func (mergeStatsFn) CreateAccumulator() *dica.Stats { return nil }

func (mergeStatsFn) AddInput(a, b *dica.Stats) (*dica.Stats, error) { return mergeStats(a, b) }

func (mergeStatsFn) MergeAccumulators(a, b *dica.Stats) (*dica.Stats, error) { return mergeStats(a, b) }

func (mergeStatsFn) ExtractOutput(a *dica.Stats) *dica.Stats { return a }

func mergeStats(a, b *dica.Stats) (*dica.Stats, error) {
	switch {
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	}
	return a, a.Merge(b)
}

// mergeGramFn adds the Gram parts of one row chunk.
type mergeGramFn struct{}

func (mergeGramFn) CreateAccumulator() *dica.GramPart { return nil }

func (mergeGramFn) AddInput(a, b *dica.GramPart) (*dica.GramPart, error) { return mergeGram(a, b) }

func (mergeGramFn) MergeAccumulators(a, b *dica.GramPart) (*dica.GramPart, error) {
	return mergeGram(a, b)
}

func (mergeGramFn) ExtractOutput(a *dica.GramPart) *dica.GramPart { return a }

func mergeGram(a, b *dica.GramPart) (*dica.GramPart, error) {
	switch {
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	}
	return a, a.Add(b)
}

func dropGramKey(_ int, g *dica.GramPart) *dica.GramPart { return g }

// Accumulate adds the statistics pass to the pipeline: each bundle's cells
// are added into dica.Stats in blocks of Options.BlockRows cells with the
// plan (a PCollection of one plan encoding, from NewPlan); the bundles'
// small statistics are combined under one key and each of the
// Options.GramParts row chunks of the Gram sum under its own key. It returns
// the combined small statistics (*dica.Stats, one element) and the combined
// Gram chunks (*dica.GramPart, one per chunk; none when the method needs no
// Gram sum), for Solve.
func Accumulate(s beam.Scope, cells, plan beam.PCollection, o Options) (stats, gram beam.PCollection) {
	s = s.Scope("dica.Accumulate")
	parts, gramKV := beam.ParDo2(s, &accumFn{BlockRows: o.blockRows(), GramParts: o.gramParts()}, cells, beam.SideInput{Input: plan})
	stats = beam.Combine(s, mergeStatsFn{}, parts)
	gram = beam.ParDo(s, dropGramKey, beam.CombinePerKey(s, mergeGramFn{}, gramKV))
	return stats, gram
}

// solveFn joins the Gram chunks to the statistics and solves.
type solveFn struct{}

func (solveFn) ProcessElement(st *dica.Stats, gram func(**dica.GramPart) bool, emit func(*dica.Model)) error {
	if st == nil {
		return fmt.Errorf("dicabeam: no cells")
	}
	var parts []*dica.GramPart
	var g *dica.GramPart
	for gram(&g) {
		parts = append(parts, g)
	}
	if len(parts) > 0 {
		if err := st.JoinGram(parts); err != nil {
			return err
		}
	}
	m, err := st.Solve()
	if err != nil {
		return err
	}
	emit(m)
	return nil
}

// Solve adds the solve to the pipeline: it joins the combined statistics
// and Gram chunks of Accumulate and returns a PCollection holding the
// *dica.Model (one element).
func Solve(s beam.Scope, stats, gram beam.PCollection) beam.PCollection {
	s = s.Scope("dica.Solve")
	return beam.ParDo(s, solveFn{}, stats, beam.SideInput{Input: gram})
}
