package dica

import (
	"fmt"

	"github.com/dicalab/dica/dataset"
)

// This file holds the pieces a distributed runner (such as the Apache Beam
// module github.com/dicalab/dica/beam) needs to drive a fit itself: a plan
// that travels as bytes, statistics fed one block at a time, and the m x m
// Gram sum split into row chunks that can be combined on different machines.

const (
	planMagic = "DICAPLAN"
	// planVersion 2: the plan records its preprocessing; version 1 plans
	// load with none.
	// planVersion 3: the preprocessing records Unnamed, and the plan its
	// precision.
	planVersion = 3
	gramMagic   = "DICAGRAM"
	// gramVersion 2: the Gram sum is of shifted raw features (see Stats);
	// version 1 parts are rejected.
	gramVersion = 2
)

// MarshalBinary encodes the plan (configuration, schema, kernels and feature
// maps) in a versioned format with a checksum. A plan decoded by
// UnmarshalBinary has the same Fingerprint, so statistics accumulated with
// it on another machine merge with statistics accumulated with p.
func (p *Plan) MarshalBinary() ([]byte, error) {
	if p == nil || p.inMap == nil {
		return nil, errNoPlan
	}
	var e encoder
	p.encode(&e)
	return seal(planMagic, planVersion, e.b), nil
}

// UnmarshalBinary decodes a plan written by MarshalBinary. The decoded plan
// has Config.Workers = GOMAXPROCS, Config.Progress = nil and the default
// Sample and BlockRows: they are not part of the encoding.
func (p *Plan) UnmarshalBinary(data []byte) error {
	payload, v, err := unseal(data, planMagic, "plan", planVersion)
	if err != nil {
		return err
	}
	d := &decoder{b: payload}
	q, err := decodePlan(d, planLevel(v, 2, 3))
	if err != nil {
		return fmt.Errorf("dica: plan: %w", err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("dica: plan: %d unexpected bytes at the end", len(d.b))
	}
	*p = *q
	return nil
}

// NewStats returns empty statistics for the plan, to be filled with
// Stats.AddBlock and combined with Stats.Merge.
//
// The statistics of a nil or zero Plan have no plan: AddBlock and Solve
// return an error.
func (p *Plan) NewStats() *Stats {
	if p == nil || p.inMap == nil {
		return &Stats{}
	}
	return &Stats{plan: p, acc: *newAccum(rawDim(p.inMap), p.outDim(), p.Config.needsGram())}
}

// AddBlock adds the rows of b to the statistics. b.Domain[i] indexes
// domains and b.Label[i] (when the plan's schema is labelled) indexes
// classes, or is dataset.NoLabel for a row without a label (it counts in
// its domain and in no class); only the names rows refer to are added to
// s.Domains and s.Classes. Rows must have the plan's number of inputs (b.D) and targets
// (b.T), and finite values. Adding the blocks of a stream in turn gives the
// statistics Plan.Accumulate returns, up to rounding.
func (s *Stats) AddBlock(b *dataset.Block, domains, classes []string) error {
	if s == nil || s.plan == nil {
		return errNoPlan
	}
	p := s.plan
	if b == nil {
		return fmt.Errorf("dica: AddBlock of a nil block")
	}
	if b.Rows == 0 {
		return nil
	}
	if b.Rows < 0 || len(b.X) < b.Rows*b.D || len(b.Domain) < b.Rows || b.Label != nil && len(b.Label) < b.Rows || len(b.Target) < b.Rows*b.T {
		return fmt.Errorf("dica: block of %d rows holds %d values (%d inputs), %d domains, %d labels and %d targets: too few", b.Rows, len(b.X), b.D, len(b.Domain), len(b.Label), len(b.Target))
	}
	if b.D != p.Schema.D() {
		return fmt.Errorf("dica: block has %d inputs, the plan %d", b.D, p.Schema.D())
	}
	if s.acc.rout > 0 && b.T != len(p.Schema.Targets) {
		return fmt.Errorf("dica: block has %d targets, the plan %d", b.T, len(p.Schema.Targets))
	}
	withClass := p.Config.supervised() && p.Schema.Labelled
	if withClass && b.Label == nil {
		return fmt.Errorf("dica: block has no class labels; method %v needs them", p.Config.Method)
	}
	if s.scratch == nil {
		s.scratch = &shardScratch{w: worker{plan: p}}
	}
	sc := s.scratch
	// Map the block's domain and class numbers to the statistics' own,
	// adding only the names that rows use.
	nd, nc := len(s.Domains), len(s.Classes)
	var ok bool
	if sc.dmap, ok = remap(sc.dmap, &s.Domains, domains, b.Domain[:b.Rows], false); !ok {
		return fmt.Errorf("dica: block refers to a domain number outside its %d names", len(domains))
	}
	bb := *b
	sc.dom = translate(sc.dom, b.Domain[:b.Rows], sc.dmap)
	bb.Domain = sc.dom
	if withClass {
		if sc.cmap, ok = remap(sc.cmap, &s.Classes, classes, b.Label[:b.Rows], true); !ok {
			return fmt.Errorf("dica: block refers to a class number outside its %d names", len(classes))
		}
		sc.cls = translate(sc.cls, b.Label[:b.Rows], sc.cmap)
		bb.Label = sc.cls
	} else {
		bb.Label = nil
	}
	if sc.limit == nil {
		sc.limit = newGroupLimit(p)
	}
	if err := sc.limit.grow(len(s.Domains), len(s.Classes)); err != nil {
		s.Domains, s.Classes = s.Domains[:nd], s.Classes[:nc] // the block is not added
		return err
	}
	return sc.w.block(&s.acc, &bb, s.acc.n)
}

// shardScratch holds the buffers of Stats.AddBlock.
type shardScratch struct {
	w          worker
	limit      *groupLimit
	dmap, cmap []int
	dom, cls   []int
}

// remap returns m with m[i] the index of names[i] in *dst for every i that
// ids uses (appending the name when new), and false when an id is out of
// range. With none, the id dataset.NoLabel is in range (a row without a
// label) and names nothing.
func remap(m []int, dst *[]string, names []string, ids []int, none bool) ([]int, bool) {
	m = m[:0]
	for range names {
		m = append(m, -1)
	}
	for _, id := range ids {
		if none && id == dataset.NoLabel {
			continue
		}
		if id < 0 || id >= len(names) {
			return m, false
		}
		if m[id] >= 0 {
			continue
		}
		j := -1
		for k, n := range *dst {
			if n == names[id] {
				j = k
				break
			}
		}
		if j < 0 {
			j = len(*dst)
			*dst = append(*dst, names[id])
		}
		m[id] = j
	}
	return m, true
}

// translate returns the ids mapped through m; dataset.NoLabel stays
// NoLabel.
func translate(dst, ids, m []int) []int {
	dst = dst[:0]
	for _, id := range ids {
		if id == dataset.NoLabel {
			dst = append(dst, id)
			continue
		}
		dst = append(dst, m[id])
	}
	return dst
}

// GramPart holds rows Row0 to Row0+Rows-1 of the upper triangle of the Gram
// sum sum_p phi(x_p) phi(x_p)^T of statistics (raw coordinates, Dim x Dim):
// row i contributes its columns i to Dim-1, rows one after the other. Parts
// with the same rows add up (GramPart.Add), so the m x m sum can be
// combined in row chunks on different machines (Stats.SplitGram,
// Stats.JoinGram).
type GramPart struct {
	// Fingerprint is the fingerprint of the plan of the statistics.
	Fingerprint [32]byte
	Dim         int
	Row0, Rows  int
	Data        []float64
}

// GramRows returns the row boundaries of the Gram sum's row chunks: chunk k
// holds rows bounds[k] to bounds[k+1]-1. The chunks hold about the same
// number of upper-triangle entries; there are min(parts, dim) of them.
func GramRows(dim, parts int) []int {
	parts = max(1, min(parts, dim))
	bounds := []int{0}
	total := float64(dim) * float64(dim+1) / 2
	acc := 0.0
	for i := 0; i < dim; i++ {
		acc += float64(dim - i)
		k := len(bounds)
		if k < parts && acc >= total*float64(k)/float64(parts) && i+1 < dim {
			bounds = append(bounds, i+1)
		}
	}
	return append(bounds, dim)
}

func triLen(dim, row0, rows int) int {
	// sum_{i=row0}^{row0+rows-1} (dim - i)
	return rows*dim - (rows*(2*row0+rows-1))/2
}

// SplitGram removes the Gram sum from s and returns it in the row chunks of
// GramRows(m, parts). The statistics without their Gram sum still Merge with
// each other (but not with statistics that have one) and cannot Solve until
// JoinGram gives the sum back. Statistics without a Gram sum (the method
// does not need one) return no parts.
func (s *Stats) SplitGram(parts int) []*GramPart {
	if s == nil || s.plan == nil {
		return nil
	}
	a := &s.acc
	if !a.gram {
		return nil
	}
	m := a.mraw
	bounds := GramRows(m, parts)
	out := make([]*GramPart, 0, len(bounds)-1)
	for k := 0; k+1 < len(bounds); k++ {
		r0, r1 := bounds[k], bounds[k+1]
		g := &GramPart{Fingerprint: s.plan.fp, Dim: m, Row0: r0, Rows: r1 - r0,
			Data: make([]float64, 0, triLen(m, r0, r1-r0))}
		for i := r0; i < r1; i++ {
			g.Data = append(g.Data, a.gramSum[i*m+i:(i+1)*m]...)
		}
		out = append(out, g)
	}
	a.gram, a.gramSum = false, nil
	return out
}

// HasGram reports whether the statistics hold the Gram sum (the method
// needs it and it has not been split off by SplitGram).
func (s *Stats) HasGram() bool { return s != nil && s.acc.gram }

// JoinGram puts back the Gram sum of statistics that SplitGram left without
// one, from parts that cover every row exactly once (each the sum of the
// corresponding parts of all merged statistics).
func (s *Stats) JoinGram(parts []*GramPart) error {
	if s == nil || s.plan == nil {
		return errNoPlan
	}
	a := &s.acc
	if a.gram {
		return fmt.Errorf("dica: the statistics already hold a Gram sum")
	}
	if !s.plan.Config.needsGram() {
		return fmt.Errorf("dica: method %v (lambda = %v) needs no Gram sum", s.plan.Config.Method, s.plan.Config.Lambda)
	}
	m := a.mraw
	seen := make([]bool, m)
	sum := make([]float64, m*m)
	for _, g := range parts {
		if g == nil {
			return fmt.Errorf("dica: a nil Gram part")
		}
		if err := g.check(); err != nil {
			return err
		}
		if g.Fingerprint != s.plan.fp {
			return fmt.Errorf("dica: Gram part of rows %d..%d has another plan (fingerprint %x, want %x)", g.Row0, g.Row0+g.Rows-1, g.Fingerprint[:6], s.plan.fp[:6])
		}
		if g.Dim != m {
			return fmt.Errorf("dica: Gram part is %d x %d, the statistics' %d x %d", g.Dim, g.Dim, m, m)
		}
		off := 0
		for i := g.Row0; i < g.Row0+g.Rows; i++ {
			if seen[i] {
				return fmt.Errorf("dica: Gram row %d is in two parts", i)
			}
			seen[i] = true
			copy(sum[i*m+i:(i+1)*m], g.Data[off:off+m-i])
			off += m - i
		}
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("dica: Gram row %d is in no part", i)
		}
	}
	a.gram, a.gramSum = true, sum
	return nil
}

func (g *GramPart) check() error {
	if g.Dim < 1 || g.Row0 < 0 || g.Rows < 1 || g.Row0+g.Rows > g.Dim {
		return fmt.Errorf("dica: Gram part rows %d..%d of %d are out of range", g.Row0, g.Row0+g.Rows-1, g.Dim)
	}
	if want := triLen(g.Dim, g.Row0, g.Rows); len(g.Data) != want {
		return fmt.Errorf("dica: Gram part of rows %d..%d has %d values, want %d", g.Row0, g.Row0+g.Rows-1, len(g.Data), want)
	}
	return nil
}

// Add adds the part o (the same rows of the Gram sum of other statistics of
// the same plan) into g.
func (g *GramPart) Add(o *GramPart) error {
	if g == nil || o == nil {
		return fmt.Errorf("dica: Add of a nil Gram part")
	}
	if g.Fingerprint != o.Fingerprint {
		return fmt.Errorf("dica: cannot add Gram parts of different plans (fingerprints %x and %x)", g.Fingerprint[:6], o.Fingerprint[:6])
	}
	if g.Dim != o.Dim || g.Row0 != o.Row0 || g.Rows != o.Rows || len(g.Data) != len(o.Data) {
		return fmt.Errorf("dica: cannot add Gram parts of rows %d..%d and %d..%d", g.Row0, g.Row0+g.Rows-1, o.Row0, o.Row0+o.Rows-1)
	}
	addTo(g.Data, o.Data)
	return nil
}

// MarshalBinary encodes the part in a versioned format with a checksum.
func (g *GramPart) MarshalBinary() ([]byte, error) {
	if g == nil {
		return nil, fmt.Errorf("dica: MarshalBinary of a nil Gram part")
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	var e encoder
	e.b = append(e.b, g.Fingerprint[:]...)
	e.int(g.Dim)
	e.int(g.Row0)
	e.int(g.Rows)
	e.f64s(g.Data)
	return seal(gramMagic, gramVersion, e.b), nil
}

// UnmarshalBinary decodes a part written by MarshalBinary.
func (g *GramPart) UnmarshalBinary(data []byte) error {
	payload, v, err := unseal(data, gramMagic, "Gram part", gramVersion)
	if err != nil {
		return err
	}
	if v < gramVersion {
		return fmt.Errorf("dica: Gram part format version %d is from an older dica whose sums mean something else: accumulate them again", v)
	}
	if len(payload) < 32 {
		return fmt.Errorf("dica: Gram part %w", errTruncated)
	}
	var o GramPart
	copy(o.Fingerprint[:], payload)
	d := &decoder{b: payload[32:]}
	o.Dim, o.Row0, o.Rows = d.int(), d.int(), d.int()
	o.Data = d.f64s()
	if d.err != nil {
		return fmt.Errorf("dica: Gram part: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("dica: Gram part: %d unexpected bytes at the end", len(d.b))
	}
	if err := o.check(); err != nil {
		return err
	}
	*g = o
	return nil
}
