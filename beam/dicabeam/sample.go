package dicabeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

func init() {
	registerDoFns((*sampleFn)(nil), (*mergeSampleFn)(nil), (*planFn)(nil))
	beam.RegisterCoder(reflect.TypeOf(sampleAcc{}), encodeSample, decodeSample)
}

// splitmix64 is the finalizer of SplitMix64 (Steele, Lea & Flood 2014), a
// bijective 64-bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Hash is the seeded hash of a cell that orders the planning sample: the
// sample is the k cells of smallest hash (bottom-k sampling, a uniform
// sample without replacement that does not depend on how the cells are
// split into bundles or in which order they arrive). It mixes the key, the
// features and the targets.
func Hash(seed uint64, c *Cell) uint64 {
	h := splitmix64(seed ^ 0x5eed5a3b1e)
	h = splitmix64(h ^ uint64(c.Key))
	for _, v := range c.Features {
		h = splitmix64(h ^ math.Float64bits(v))
	}
	for _, v := range c.Targets {
		h = splitmix64(h ^ math.Float64bits(v) ^ 0x7a)
	}
	return h
}

type sampleItem struct {
	H uint64
	C Cell
}

func (a *sampleItem) less(b *sampleItem) bool {
	return a.H < b.H || a.H == b.H && a.C.Key < b.C.Key
}

// sampleAcc holds the k cells of smallest hash seen so far, as a max-heap
// on (hash, key).
type sampleAcc struct {
	Items []sampleItem
}

// Sampler draws the planning sample in process: Add every cell, then Cells.
// The Beam transform NewPlan draws the same sample on a pipeline.
type Sampler struct {
	k    int
	seed uint64
	acc  sampleAcc
}

// NewSampler returns a sampler of k cells with the given seed (use the fit's
// Config.Seed and sample size).
func NewSampler(k int, seed uint64) *Sampler { return &Sampler{k: k, seed: seed} }

// Add offers a cell to the sample. A cell that enters the sample is
// copied, so the sample keeps neither the caller's slices nor the blocks
// they were cut from alive.
func (s *Sampler) Add(c Cell) {
	it := sampleItem{H: Hash(s.seed, &c), C: c}
	if !s.acc.wants(s.k, &it) {
		return
	}
	it.C.Features, it.C.Targets = slices.Clone(c.Features), slices.Clone(c.Targets)
	s.acc.add(s.k, it)
}

// Cells returns the sample in canonical order (by key, then hash).
func (s *Sampler) Cells() []Cell { return s.acc.canonical() }

// merge adds b's items to a and returns a: the bottom k of both.
func (a sampleAcc) merge(k int, b sampleAcc) sampleAcc {
	for _, it := range b.Items {
		a.add(k, it)
	}
	return a
}

// wants reports whether add would keep it.
func (a *sampleAcc) wants(k int, it *sampleItem) bool {
	return len(a.Items) < k || k > 0 && it.less(&a.Items[0])
}

func (a *sampleAcc) add(k int, it sampleItem) {
	h := a.Items
	if len(h) < k {
		h = append(h, it)
		// Sift up.
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[p].less(&h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		a.Items = h
		return
	}
	if k == 0 || !it.less(&h[0]) {
		return
	}
	h[0] = it
	// Sift down.
	for i := 0; ; {
		l, r, big := 2*i+1, 2*i+2, i
		if l < len(h) && h[big].less(&h[l]) {
			big = l
		}
		if r < len(h) && h[big].less(&h[r]) {
			big = r
		}
		if big == i {
			break
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

func (a *sampleAcc) canonical() []Cell {
	items := slices.Clone(a.Items)
	slices.SortFunc(items, func(x, y sampleItem) int {
		if x.C.Key != y.C.Key {
			if x.C.Key < y.C.Key {
				return -1
			}
			return 1
		}
		if x.H != y.H {
			if x.H < y.H {
				return -1
			}
			return 1
		}
		return 0
	})
	out := make([]Cell, len(items))
	for i := range items {
		out[i] = items[i].C
	}
	return out
}

func encodeSample(a sampleAcc) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(a.Items)))
	for _, it := range a.Items {
		b = binary.LittleEndian.AppendUint64(b, it.H)
		c := encodeCell(it.C)
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

func decodeSample(b []byte) (sampleAcc, error) {
	var a sampleAcc
	r := &reader{b: b}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return a, fmt.Errorf("dicabeam: truncated sample")
	}
	a.Items = make([]sampleItem, 0, n)
	for i := uint64(0); i < n; i++ {
		if len(r.b) < 8 {
			return a, fmt.Errorf("dicabeam: truncated sample")
		}
		h := binary.LittleEndian.Uint64(r.b)
		r.b = r.b[8:]
		l := r.uvarint()
		if r.err != nil || l > uint64(len(r.b)) {
			return a, fmt.Errorf("dicabeam: truncated sample")
		}
		c, err := decodeCell(r.b[:l])
		if err != nil {
			return a, err
		}
		r.b = r.b[l:]
		a.Items = append(a.Items, sampleItem{H: h, C: c})
	}
	return a, r.done()
}

// sampleFn is the bottom-k CombineFn.
type sampleFn struct {
	K    int
	Seed uint64
}

func (f *sampleFn) CreateAccumulator() sampleAcc { return sampleAcc{} }

func (f *sampleFn) AddInput(a sampleAcc, c Cell) sampleAcc {
	a.add(f.K, sampleItem{H: Hash(f.Seed, &c), C: c})
	return a
}

func (f *sampleFn) MergeAccumulators(a, b sampleAcc) sampleAcc { return a.merge(f.K, b) }

func (f *sampleFn) ExtractOutput(a sampleAcc) sampleAcc { return a.output() }

// output is the canonical sample (ordered by key) without the hashes.
func (a sampleAcc) output() sampleAcc {
	items := a.canonical()
	out := sampleAcc{Items: make([]sampleItem, len(items))}
	for i, c := range items {
		out.Items[i] = sampleItem{C: c}
	}
	return out
}

// mergeSampleFn combines bottom-k samples (of bundles) into one: the
// sampling step of FitFiles, whose bundles sample their files themselves.
type mergeSampleFn struct {
	K int
}

func (f *mergeSampleFn) CreateAccumulator() sampleAcc { return sampleAcc{} }

func (f *mergeSampleFn) AddInput(a, b sampleAcc) sampleAcc { return a.merge(f.K, b) }

func (f *mergeSampleFn) MergeAccumulators(a, b sampleAcc) sampleAcc { return a.merge(f.K, b) }

func (f *mergeSampleFn) ExtractOutput(a sampleAcc) sampleAcc { return a.output() }

// PlanFromSample builds the plan of a fit from a sample in canonical order
// (Sampler.Cells): dica.NewPlan on the sampled cells, all of them held by
// its reservoir. The schema names the features and says whether cells carry
// labels or targets. When the sample holds every cell of a data set in the
// in-process stream order, the plan equals the one dica.Fit builds on that
// stream.
func PlanFromSample(ctx context.Context, sample []Cell, schema dataset.Schema, cfg dica.Config) (*dica.Plan, error) {
	if len(sample) == 0 {
		return nil, fmt.Errorf("dicabeam: no cells to plan from")
	}
	d, t := schema.D(), len(schema.Targets)
	x := make([]float64, 0, len(sample)*d)
	var y []float64
	for i, c := range sample {
		if len(c.Features) != d {
			return nil, fmt.Errorf("dicabeam: cell %d (key %d) has %d features, the schema %d", i, c.Key, len(c.Features), d)
		}
		if len(c.Targets) != t {
			return nil, fmt.Errorf("dicabeam: cell %d (key %d) has %d targets, the schema %d", i, c.Key, len(c.Targets), t)
		}
		x = append(x, c.Features...)
		y = append(y, c.Targets...)
	}
	n := len(sample)
	ds := &dataset.Dataset{
		X:           mat.NewDense(n, d, x),
		Features:    schema.Features,
		Domain:      make([]int, n),
		DomainNames: []string{"sample"},
	}
	if schema.Labelled {
		ds.Label, ds.ClassNames = make([]int, n), []string{"sample"}
	}
	if t > 0 {
		ds.Target, ds.TargetNames = mat.NewDense(n, t, y), schema.Targets
	}
	cfg.Sample = max(sampleSize(cfg), n)
	cfg.Progress = nil
	return dica.NewPlan(ctx, ds.Source(), cfg)
}

// planFn builds the plan from the canonical sample and emits its encoding.
type planFn struct {
	Config configSpec
	Schema dataset.Schema
}

func (f *planFn) ProcessElement(ctx context.Context, sample sampleAcc, emit func([]byte)) error {
	cells := make([]Cell, len(sample.Items))
	for i := range sample.Items {
		cells[i] = sample.Items[i].C
	}
	p, err := PlanFromSample(ctx, cells, f.Schema, f.Config.config())
	if err != nil {
		return err
	}
	b, err := p.MarshalBinary()
	if err != nil {
		return err
	}
	emit(b)
	return nil
}

// NewPlan adds the planning step to the pipeline: a bottom-k sample of the
// cells (k = Config.Sample, default max(dica.DefaultSample, 20 m)) by a
// seeded hash, ordered by key, and dica.NewPlan on it. It returns a
// PCollection holding the plan's binary encoding (dica.Plan.MarshalBinary),
// one element, to be used as a side input. With Options.Plan set, it
// returns that plan instead and draws no sample; when the configuration
// needs no sample (dica.Config.NeedsSample false: random Fourier features or
// given landmarks, with a given bandwidth), the plan is built when the
// pipeline is, from the configuration and the seed, and the cells are not
// read for it.
func NewPlan(s beam.Scope, cells beam.PCollection, o Options) (beam.PCollection, error) {
	s = s.Scope("dica.NewPlan")
	if err := o.fixPlan(); err != nil {
		return beam.PCollection{}, err
	}
	if o.Plan != nil {
		b, err := o.Plan.MarshalBinary()
		if err != nil {
			return beam.PCollection{}, err
		}
		return beam.Create(s, b), nil
	}
	spec, err := o.planSpec()
	if err != nil {
		return beam.PCollection{}, err
	}
	sample := beam.Combine(s, &sampleFn{K: sampleSize(o.Config), Seed: o.Config.Seed}, cells)
	return beam.ParDo(s, &planFn{Config: spec, Schema: o.Schema}, sample), nil
}

// fixPlan sets o.Plan, when it is nil and the configuration needs no
// sample (dica.Config.NeedsSample: random Fourier features or given
// landmarks with a given bandwidth), to the plan that follows from the
// configuration and the seed, so that the pipeline reads nothing for it.
func (o *Options) fixPlan() error {
	if o.Plan != nil || o.Config.NeedsSample(o.Schema) {
		return nil
	}
	if o.Schema.D() == 0 {
		return fmt.Errorf("dicabeam: the schema names no features")
	}
	cfg := o.Config
	cfg.Progress = nil
	p, err := dica.NewPlan(context.Background(), schemaOnly{o.Schema}, cfg)
	if err != nil {
		return err
	}
	o.Plan = p
	return nil
}

// schemaOnly is a source with a schema and no rows to read.
type schemaOnly struct{ sc dataset.Schema }

func (s schemaOnly) Schema() dataset.Schema { return s.sc }
func (s schemaOnly) Open(context.Context) (dataset.Reader, error) {
	return nil, fmt.Errorf("dicabeam: internal error: a plan that needs no sample read the data")
}

// planFromSamples is NewPlan's plan step on bottom-k samples of parts of the
// data (PCollection<sampleAcc>) instead of cells.
func planFromSamples(s beam.Scope, samples beam.PCollection, o Options) (beam.PCollection, error) {
	s = s.Scope("dica.NewPlan")
	spec, err := o.planSpec()
	if err != nil {
		return beam.PCollection{}, err
	}
	sample := beam.Combine(s, &mergeSampleFn{K: sampleSize(o.Config)}, samples)
	return beam.ParDo(s, &planFn{Config: spec, Schema: o.Schema}, sample), nil
}

// planSpec checks what the plan step needs and returns the configuration in
// the form the plan DoFn carries.
func (o *Options) planSpec() (configSpec, error) {
	spec, err := newConfigSpec(o.Config)
	if err != nil {
		return spec, err
	}
	if o.Schema.D() == 0 {
		return spec, fmt.Errorf("dicabeam: the schema names no features")
	}
	return spec, nil
}
