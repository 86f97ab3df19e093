package dica

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/preprocess"
)

const (
	kernNone = iota
	kernRBF
	kernLaplacian
	kernLaplacianL1
	kernLinear
)

func encodeKernel(e *encoder, k kernel.Kernel) {
	switch k := k.(type) {
	case nil:
		e.int(kernNone)
	case kernel.RBF:
		e.int(kernRBF)
		e.f64(k.Sigma)
	case kernel.Laplacian:
		if k.L1 {
			e.int(kernLaplacianL1)
		} else {
			e.int(kernLaplacian)
		}
		e.f64(k.Sigma)
	case kernel.Linear:
		e.int(kernLinear)
	default:
		panic(fmt.Sprintf("dica: cannot encode kernel %T", k))
	}
}

func decodeKernel(d *decoder) kernel.Kernel {
	switch t := d.int(); t {
	case kernNone:
		return nil
	case kernRBF:
		return kernel.RBF{Sigma: d.f64()}
	case kernLaplacian:
		return kernel.Laplacian{Sigma: d.f64()}
	case kernLaplacianL1:
		return kernel.Laplacian{Sigma: d.f64(), L1: true}
	case kernLinear:
		return kernel.Linear{}
	default:
		d.fail("unknown kernel type %d", t)
		return nil
	}
}

func (s *mapSpec) encode(e *encoder) {
	e.int(s.kind)
	encodeKernel(e, s.kern)
	e.dense(s.landmarks)
	e.f64(s.rcond)
	e.int(s.d)
	e.int(s.m)
	e.bool(s.orthogonal)
	e.u64(s.seed)
}

func decodeMapSpec(d *decoder) mapSpec {
	var s mapSpec
	s.kind = d.int()
	s.kern = decodeKernel(d)
	s.landmarks = d.dense()
	s.rcond = d.f64()
	s.d = d.int()
	s.m = d.int()
	s.orthogonal = d.bool()
	s.seed = d.u64()
	return s
}

// encode writes everything that determines the statistics and the solve.
func (p *Plan) encode(e *encoder) {
	c := p.Config
	e.int(int(c.Method))
	e.int(c.Components)
	e.f64(c.Lambda)
	e.f64(c.Epsilon)
	encodeKernel(e, c.Kernel)
	encodeKernel(e, c.OutputKernel)
	e.int(int(c.Solver))
	e.int(c.Rank)
	e.int(int(c.Landmarks))
	e.bool(c.Orthogonal)
	e.f64(c.RCond)
	e.int(c.OutputRank)
	e.int(int(c.Form))
	e.u64(c.Seed)
	e.strs(p.Schema.Features)
	e.bool(p.Schema.Labelled)
	e.strs(p.Schema.Targets)
	p.in.encode(e)
	e.bool(p.out != nil)
	if p.out != nil {
		p.out.encode(e)
	}
	encodePipeline(e, c.Preprocessing)
	prec := c.Precision
	if prec == 0 {
		prec = 64
	}
	e.int(prec)
}

func encodePipeline(e *encoder, p *preprocess.Pipeline) {
	e.bool(p != nil)
	if p == nil {
		return
	}
	e.str(p.Format)
	e.int(len(p.Channels))
	for _, c := range p.Channels {
		e.str(c.Name)
		e.str(c.Ref)
		e.int(c.Index)
		e.str(c.PnN)
		e.str(c.PnS)
	}
	e.bool(p.Linearize)
	e.bool(p.Compensation != nil)
	if s := p.Compensation; s != nil {
		e.bool(s.PerFile)
		e.str(s.Keyword)
		e.str(s.Source)
		e.strs(s.Channels)
		e.f64s(s.Matrix)
	}
	e.str(p.Transform)
	e.bool(p.TransformChannels != nil)
	e.strs(p.TransformChannels)
	e.bool(p.Unnamed)
}

// The encodings of a plan: without the preprocessing (the first model,
// statistics and plan files), with it, and with Pipeline.Unnamed.
const (
	planNoPipeline = iota
	planPipeline
	planUnnamed
)

func decodePipeline(d *decoder, level int) *preprocess.Pipeline {
	if !d.bool() {
		return nil
	}
	p := &preprocess.Pipeline{Format: d.str()}
	n := d.count(5 * 8)
	for i := 0; i < n; i++ {
		p.Channels = append(p.Channels, preprocess.Channel{Name: d.str(), Ref: d.str(), Index: d.int(), PnN: d.str(), PnS: d.str()})
	}
	p.Linearize = d.bool()
	if d.bool() {
		s := &preprocess.Spill{PerFile: d.bool(), Keyword: d.str(), Source: d.str(), Channels: d.strs(), Matrix: d.f64s()}
		p.Compensation = s
	}
	p.Transform = d.str()
	all := !d.bool()
	p.TransformChannels = d.strs()
	if !all && p.TransformChannels == nil {
		p.TransformChannels = []string{}
	}
	if level >= planUnnamed {
		p.Unnamed = d.bool()
	}
	if d.err == nil {
		if err := p.Check(); err != nil {
			d.fail("%v", err)
		}
	}
	return p
}

// decodePlan decodes a plan of the given encoding (planNoPipeline, ...):
// files of the versions before the preprocessing was recorded have none,
// and those before the precision was recorded are of precision 64.
func decodePlan(d *decoder, level int) (*Plan, error) {
	var c Config
	c.Method = Method(d.int())
	c.Components = d.int()
	c.Lambda = d.f64()
	c.Epsilon = d.f64()
	c.Kernel = decodeKernel(d)
	c.OutputKernel = decodeKernel(d)
	c.Solver = Solver(d.int())
	c.Rank = d.int()
	c.Landmarks = Landmarks(d.int())
	c.Orthogonal = d.bool()
	c.RCond = d.f64()
	c.OutputRank = d.int()
	c.Form = Form(d.int())
	c.Seed = d.u64()
	p := &Plan{Config: c}
	p.Schema = dataset.Schema{Features: d.strs(), Labelled: d.bool(), Targets: d.strs()}
	p.in = decodeMapSpec(d)
	if d.bool() {
		o := decodeMapSpec(d)
		p.out = &o
	}
	if level >= planPipeline {
		p.Config.Preprocessing = decodePipeline(d, level)
	}
	if level >= planUnnamed {
		p.Config.Precision = d.int()
	}
	if d.err != nil {
		return nil, d.err
	}
	p.Config = p.Config.withDefaults()
	// The configuration must be one Fit accepts, with the feature map of
	// its solver.
	chk := p.Config
	if chk.Method == Input {
		// The identity model (see Input): the checks of every other field.
		_, linear := c.Kernel.(kernel.Linear)
		if p.in.kind != mapKernelRows || c.Solver != Exact || !linear || p.in.landmarks == nil || p.Schema.D() == 0 || !mat.Equal(p.in.landmarks, eye(p.Schema.D())) {
			return nil, fmt.Errorf("method input with the %v solver, kernel %v and other points than the unit vectors: its model is the linear kernel on the unit vectors", c.Solver, c.Kernel)
		}
		chk.Method = KPCA
	}
	if chk.Landmarks == GivenLandmarks {
		chk.LandmarkPoints = p.in.landmarks
	}
	if err := chk.check(); err != nil {
		// (The caller names the file: "dica: plan: ...".)
		return nil, errors.New(strings.TrimPrefix(err.Error(), "dica: "))
	}
	if want := map[Solver]int{Nystrom: mapNystrom, RFF: mapRFF, Exact: mapKernelRows}[c.Solver]; p.in.kind != want {
		return nil, fmt.Errorf("feature map kind %d does not match solver %v", p.in.kind, c.Solver)
	}
	// Random Fourier features are generated from the seed, d x m/2 of
	// them: check d and m against the rest of the plan before that.
	if s := p.in; s.kind == mapRFF && (s.d != p.Schema.D() || s.m != p.Config.Rank || s.m > MaxRank) {
		return nil, fmt.Errorf("random Fourier features of %d inputs and rank %d do not match the plan (%d features, rank %d, at most %d)", s.d, s.m, p.Schema.D(), p.Config.Rank, MaxRank)
	}
	if p.out != nil && p.out.kind != mapNystrom {
		return nil, fmt.Errorf("unknown output feature map kind %d", p.out.kind)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

const (
	statsMagic = "DICASTAT"
	// statsVersion 2: output features are mapped point by point
	// (psi = T_y^T k_r(y), r = the output map's Dim, not its raw dimension)
	// and every sum is shifted by the plan's c and c_y (see Stats).
	// Version 1 files hold sums of another meaning and are rejected.
	// statsVersion 3: the plan records its preprocessing and the
	// statistics their parts (see Part); version 2 files load without
	// them.
	// statsVersion 4: the preprocessing records Unnamed, the plan its
	// precision (Config.Precision), and the statistics the cells of each
	// domain of each part (see DomainPart); version 2 and 3 files load,
	// solve, and do not merge (see LegacyError).
	statsVersion = 4
)

// MarshalBinary encodes the statistics with their plan (configuration,
// kernels, feature maps, seed) in a versioned format with a checksum.
// Statistics without a plan (nil, or the zero Stats) are an error.
func (s *Stats) MarshalBinary() ([]byte, error) {
	if s == nil || s.plan == nil {
		return nil, errNoPlan
	}
	var e encoder
	s.plan.encode(&e)
	a := &s.acc
	e.int(a.mraw)
	e.int(a.rout)
	e.bool(a.gram)
	e.u64(uint64(a.n))
	e.strs(s.Domains)
	e.ints(int64s(padCounts(a.domCount, len(s.Domains))))
	for i := range s.Domains {
		e.f64s(rowOr(a.domSum, i, a.mraw))
	}
	e.strs(s.Classes)
	e.ints(int64s(padCounts(a.clsCount, len(s.Classes))))
	for i := range s.Classes {
		e.f64s(rowOr(a.clsSum, i, a.mraw))
	}
	e.f64s(a.sumPsi)
	e.f64s(a.sumPsiPsi)
	e.f64s(a.sumPhiPsi)
	e.f64s(a.gramSum)
	e.int(len(s.parts))
	for _, pt := range s.parts {
		e.b = append(e.b, pt.Digest[:]...)
		e.u64(uint64(pt.N))
	}
	e.int(len(s.cells))
	for _, c := range s.cells {
		e.int(slices.Index(s.parts, c.Part))
		e.str(c.Domain)
		e.u64(uint64(c.N))
		e.u64(c.Digest)
	}
	// Statistics read from a file without domain parts keep its version,
	// so that Merge still refuses them after a round trip.
	e.int(int(s.legacy))
	return seal(statsMagic, statsVersion, e.b), nil
}

func rowOr(rows [][]float64, i, m int) []float64 {
	if i < len(rows) {
		return rows[i]
	}
	return make([]float64, m)
}

// UnmarshalBinary decodes statistics written by MarshalBinary.
func (s *Stats) UnmarshalBinary(data []byte) error {
	payload, v, err := unseal(data, statsMagic, "statistics", statsVersion)
	if err != nil {
		return err
	}
	if v < 2 {
		return fmt.Errorf("dica: statistics format version %d is from an older dica whose sums mean something else: accumulate them again", v)
	}
	d := &decoder{b: payload}
	p, err := decodePlan(d, planLevel(v, 3, 4))
	if err != nil {
		return fmt.Errorf("dica: statistics: %w", err)
	}
	var a accum
	a.mraw, a.rout, a.gram = d.int(), d.int(), d.bool()
	a.n = int64(d.u64())
	doms := d.strs()
	a.domCount = toInt64s(d.ints())
	for range doms {
		a.domSum = append(a.domSum, d.f64s())
	}
	cls := d.strs()
	a.clsCount = toInt64s(d.ints())
	for range cls {
		a.clsSum = append(a.clsSum, d.f64s())
	}
	a.sumPsi, a.sumPsiPsi, a.sumPhiPsi, a.gramSum = d.f64s(), d.f64s(), d.f64s(), d.f64s()
	var parts []Part
	if v >= 3 {
		n := d.count(16 + 8)
		for i := 0; i < n && d.err == nil; i++ {
			var pt Part
			copy(pt.Digest[:], d.b[:16])
			d.b = d.b[16:]
			pt.N = int64(d.u64())
			parts = append(parts, pt)
		}
	}
	var cells []DomainPart
	if v >= 4 {
		n := d.count(4 * 8)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.int()
			c := DomainPart{Domain: d.str(), N: int64(d.u64()), Digest: d.u64()}
			if d.err == nil && (k < 0 || k >= len(parts) || c.N < 1) {
				d.fail("domain part %d of part %d of %d with %d cells", i, k, len(parts), c.N)
			}
			if d.err == nil {
				c.Part = parts[k]
				cells = append(cells, c)
			}
		}
	}
	legacy := v
	if v >= 4 {
		if legacy = uint32(d.int()); legacy != 0 && (legacy < 2 || legacy > 3 || len(cells) > 0) {
			d.fail("format version %d of the statistics' origin", legacy)
		}
		// Every part's cells are those of its domains.
		sum := make(map[Part]int64, len(parts))
		for _, c := range cells {
			sum[c.Part] += c.N
		}
		for _, pt := range parts {
			if d.err == nil && legacy == 0 && sum[pt] != pt.N {
				d.fail("part of %d cells has domain parts of %d", pt.N, sum[pt])
			}
		}
	}
	if d.err != nil {
		return fmt.Errorf("dica: statistics: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("dica: statistics: %d unexpected bytes at the end", len(d.b))
	}
	// Shapes.
	ok := a.mraw == rawDim(p.inMap) && len(a.domCount) == len(doms) && len(a.clsCount) == len(cls)
	for _, r := range slices.Concat(a.domSum, a.clsSum) {
		ok = ok && len(r) == a.mraw
	}
	if a.gram {
		ok = ok && len(a.gramSum) == a.mraw*a.mraw
	}
	ok = ok && a.rout == p.outDim() && (!a.gram || p.Config.needsGram())
	if a.rout > 0 {
		ok = ok && len(a.sumPsi) == a.rout && len(a.sumPsiPsi) == a.rout*a.rout && len(a.sumPhiPsi) == a.mraw*a.rout
	}
	if !ok {
		return fmt.Errorf("dica: statistics: inconsistent shapes")
	}
	*s = Stats{plan: p, acc: a, Domains: doms, Classes: cls, parts: parts, cells: cells}
	if legacy < 4 {
		s.legacy = legacy
	}
	return nil
}

// exactPlan wraps the kernel expansion of an exact fit as a plan, so exact
// and low-rank models share one representation and file format.
func exactPlan(cfg Config, sc dataset.Schema, k kernel.Kernel, x *mat.Dense) (*Plan, error) {
	var err error
	if cfg.Preprocessing, err = bindPipeline(cfg.Preprocessing, sc); err != nil {
		return nil, err
	}
	p := &Plan{Config: cfg, Schema: sc, in: mapSpec{kind: mapKernelRows, kern: k, landmarks: x}}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

const mapKernelRows = 3

var _ approx.Map = approx.KernelRows{}

// planLevel returns the encoding of the plan in a file of version v, for a
// kind of file whose version withPipeline first recorded the preprocessing
// and withUnnamed its Unnamed field.
func planLevel(v, withPipeline, withUnnamed uint32) int {
	switch {
	case v >= withUnnamed:
		return planUnnamed
	case v >= withPipeline:
		return planPipeline
	}
	return planNoPipeline
}

// inferUnnamed sets Unnamed in the preprocessing of a file from before it
// was recorded: a CSV model whose channels are all named V1, V2, ... after
// their columns was fitted on files without a header.
func inferUnnamed(p *preprocess.Pipeline) {
	if p == nil || p.Format != "csv" || len(p.Channels) == 0 {
		return
	}
	for _, c := range p.Channels {
		if c.Index <= 0 || c.Name != "V"+strconv.Itoa(c.Index) {
			return
		}
	}
	p.Unnamed = true
}
