// Package dicabeam fits Domain-Invariant Component Analysis (package
// github.com/dicalab/dica/dica) on Apache Beam, for data sets that outgrow
// one machine.
//
// A DICA fit is a plan chosen from a sample (kernel bandwidths by the
// median heuristic, Nystrom landmarks or random Fourier features), one pass
// of mergeable sufficient statistics and a small solve (docs/MATH.md, "3.
// The low-rank reduction", in the core module). On Beam:
//
//  1. NewPlan draws a bottom-k sample of the cells by a seeded hash of each
//     cell (deterministic whatever the bundling), orders it by Cell.Key and
//     builds the plan with dica.NewPlan on one worker. When the data has at
//     most Config.Sample cells and the keys follow the in-process stream
//     order, the plan is the one dica.Fit builds, bit for bit. A plan can
//     also be given (Options.Plan); one that needs no sample
//     (dica.Config.NeedsSample) is built from the seed with the pipeline.
//  2. Accumulate adds the cells into dica.Stats bundle by bundle, in blocks
//     of Options.BlockRows rows (the plan is a side input in its binary
//     encoding). Each bundle emits its small statistics (counts, domain and
//     class sums) and, when the method needs it, its m x m Gram sum split
//     into Options.GramParts row chunks. The small statistics are combined
//     under one key, each Gram chunk under its own key, so no worker
//     combines the whole m x m sum of every bundle.
//  3. The combined parts (one small statistics, GramParts Gram chunks) are
//     gathered on one worker by a global combine, and Solve joins them
//     (dica.Stats.JoinGram) and solves once: the result is the *dica.Model
//     of the core library. (Gathering by a combine rather than a side input
//     also avoids a Prism race seen with side inputs read right after a
//     sibling combine.)
//
// Transform applies a model to cells. ReadFiles reads CSV and FCS files
// with the core readers (packages csvio and fcs), one domain per file or by
// a domain column; FitFiles fits files reading them twice, as the core's
// two passes do, inside the sampling and statistics DoFns: a file is an
// element, a cell never is, so the runner neither holds the cells nor does
// per-cell work.
//
// The coders of *dica.Stats, *dica.GramPart, *dica.Model (and of Part and
// Gathered) use the core binary encodings; Cell and Projection have a
// compact binary coder.
package dicabeam

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dicalab/dica/dica"
)

// Cell is one row of a data set: a cell of a cytometry sample, or any point.
type Cell struct {
	// Key orders the cells canonically: the sample behind the plan is
	// sorted by it, so a plan drawn on the pipeline equals the in-process
	// one when the keys follow the in-process stream order (ReadFiles uses
	// file number << 40 | row number). Keys should be distinct; cells with
	// equal keys are ordered by their hash.
	Key int64
	// Domain names the cell's domain (sample, patient, batch).
	Domain string
	// Label is the class label ("" when the data is not labelled).
	Label string
	// Features are the d inputs.
	Features []float64
	// Targets are real targets for regression (nil otherwise).
	Targets []float64
}

// Projection is a cell projected by a model: z = W^T (phi(x) - mu).
type Projection struct {
	Key    int64
	Domain string
	Label  string
	Z      []float64
}

// registerDoFns registers the types of the DoFns given as nil pointers, so
// that runners can rebuild them.
func registerDoFns(fns ...any) {
	for _, f := range fns {
		beam.RegisterType(reflect.TypeOf(f).Elem())
	}
}

func init() {
	beam.RegisterType(reflect.TypeOf(Cell{}))
	beam.RegisterType(reflect.TypeOf(Projection{}))
	beam.RegisterCoder(reflect.TypeOf(Cell{}), encodeCell, decodeCell)
	beam.RegisterCoder(reflect.TypeOf(Projection{}), encodeProjection, decodeProjection)
	beam.RegisterCoder(reflect.TypeOf((*dica.Stats)(nil)), encodeStats, decodeStats)
	beam.RegisterCoder(reflect.TypeOf((*dica.GramPart)(nil)), encodeGram, decodeGram)
	beam.RegisterCoder(reflect.TypeOf((*dica.Model)(nil)), encodeModel, decodeModel)
}

// The coders of the core types use their binary encodings (versioned, with
// a checksum); a nil value (an empty accumulator) is an empty byte slice.

func encodeStats(s *dica.Stats) ([]byte, error) {
	if s == nil {
		return []byte{}, nil
	}
	return s.MarshalBinary()
}

func decodeStats(b []byte) (*dica.Stats, error) {
	if len(b) == 0 {
		return nil, nil
	}
	s := new(dica.Stats)
	return s, s.UnmarshalBinary(b)
}

func encodeGram(g *dica.GramPart) ([]byte, error) {
	if g == nil {
		return []byte{}, nil
	}
	return g.MarshalBinary()
}

func decodeGram(b []byte) (*dica.GramPart, error) {
	if len(b) == 0 {
		return nil, nil
	}
	g := new(dica.GramPart)
	return g, g.UnmarshalBinary(b)
}

func encodeModel(m *dica.Model) ([]byte, error) {
	if m == nil {
		return []byte{}, nil
	}
	return m.MarshalBinary()
}

func decodeModel(b []byte) (*dica.Model, error) {
	if len(b) == 0 {
		return nil, nil
	}
	m := new(dica.Model)
	return m, m.UnmarshalBinary(b)
}

// Cell and Projection: varint key, length-prefixed strings, and
// length-prefixed little-endian float64 slices.

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendF64s(b []byte, v []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("dicabeam: truncated element")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = fmt.Errorf("dicabeam: truncated element")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) f64s() []float64 {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)/8) {
		r.err = fmt.Errorf("dicabeam: truncated element")
		return nil
	}
	if n == 0 {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n:]
	return v
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("dicabeam: %d unexpected bytes after an element", len(r.b))
	}
	return r.err
}

// appendHead encodes what cells and projections begin with: the key, the
// domain and the label; extra is the number of float64 values that follow.
func appendHead(key int64, domain, label string, extra int) []byte {
	b := make([]byte, 0, 16+len(domain)+len(label)+8*extra)
	b = binary.AppendVarint(b, key)
	b = appendStr(b, domain)
	return appendStr(b, label)
}

// readHead decodes what appendHead encodes and returns a reader of the
// rest.
func readHead(b []byte, what string) (key int64, domain, label string, r *reader, err error) {
	k, n := binary.Varint(b)
	if n <= 0 {
		return 0, "", "", nil, fmt.Errorf("dicabeam: truncated %s", what)
	}
	r = &reader{b: b[n:]}
	return k, r.str(), r.str(), r, nil
}

func encodeCell(c Cell) []byte {
	b := appendHead(c.Key, c.Domain, c.Label, len(c.Features)+len(c.Targets))
	b = appendF64s(b, c.Features)
	return appendF64s(b, c.Targets)
}

func decodeCell(b []byte) (Cell, error) {
	var c Cell
	var r *reader
	var err error
	if c.Key, c.Domain, c.Label, r, err = readHead(b, "cell"); err != nil {
		return c, err
	}
	c.Features = r.f64s()
	c.Targets = r.f64s()
	return c, r.done()
}

func encodeProjection(p Projection) []byte {
	return appendF64s(appendHead(p.Key, p.Domain, p.Label, len(p.Z)), p.Z)
}

func decodeProjection(b []byte) (Projection, error) {
	var p Projection
	var r *reader
	var err error
	if p.Key, p.Domain, p.Label, r, err = readHead(b, "projection"); err != nil {
		return p, err
	}
	p.Z = r.f64s()
	return p, r.done()
}
