package figure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

// Sample is the subsample of the cells of a stream that a picture draws:
// at most PerDomain cells of each domain, drawn uniformly at random (a
// Reservoir per domain), kept domain by domain, each domain's cells in
// stream order, with their components and, when known, their inputs.
type Sample struct {
	// X holds the inputs of the kept cells (nil when they are not known,
	// as for components read from a file), Z their components.
	X, Z *mat.Dense
	// Row holds each kept cell's 0-based position in the stream.
	Row []int64
	// Domain indexes Domains, in the order the stream names them; Label
	// indexes Classes, in natural order ("2" before "10"), or holds
	// dataset.NoLabel (-1) for a cell without a label (a stream of
	// labelled and unlabelled files), or is nil when the stream is not
	// labelled.
	Domain  []int
	Label   []int
	Domains []string
	Classes []string
	// Value holds each kept cell's first regression target and ValueName
	// its name (nil and "" without targets).
	Value     []float64
	ValueName string
	// Total counts the cells of each domain in the stream.
	Total []int64
	// Method names the components ("DICA", "KPCA", ...); From, when not
	// empty, names where they were read from, for titles.
	Method string
	From   string
	// PerDomain and Seed are the subsample's size per domain and seed.
	PerDomain int
	Seed      uint64
}

// Cells returns the cells of the sample for a figure's builders, with the
// populations colored by palette (nil: by the sample's classes).
func (s *Sample) Cells(palette *Palette) Cells {
	if s == nil {
		return Cells{}
	}
	return Cells{
		Domain: s.Domain, DomainNames: s.Domains, Label: s.Label, ClassNames: s.Classes, Palette: palette,
		Value: s.Value, ValueName: s.ValueName, Total: s.Total,
	}
}

// Note says how the cells were subsampled: "80,000 of 693,643 cells drawn:
// at most 5,000 per sample, drawn at random (seed 1).", or "All 1,200
// cells." when every cell was kept.
func (s *Sample) Note() string {
	if s == nil || s.Z == nil {
		return ""
	}
	n, _ := s.Z.Dims()
	var total int64
	for _, t := range s.Total {
		total += t
	}
	if int64(n) == total {
		return fmt.Sprintf("All %s cells.", count64(total))
	}
	return fmt.Sprintf("%s of %s cells drawn: at most %s per sample, drawn at random (seed %d).", count(n), count64(total), count(s.PerDomain), s.Seed)
}

// SampleOptions set how a Sample is drawn.
type SampleOptions struct {
	// PerDomain is the largest number of cells kept per domain (at least
	// 1); Seed seeds the random draw.
	PerDomain int
	Seed      uint64
	// MaxCells bounds the cells kept in all (0: MaxSampleCells).
	MaxCells int
	// Progress, when not nil, is called after each block with the number
	// of rows read so far.
	Progress func(rows int64)
}

// MaxSampleCells is the default bound on the cells a Sample holds, all
// domains together: at 8 inputs and 3 components, about 200 MB.
const MaxSampleCells = 2_000_000

// TooManyCellsError is returned when a Sample would hold more than
// SampleOptions.MaxCells cells: lower PerDomain.
type TooManyCellsError struct {
	// Limit is the bound, Domains the number of domains seen when it was
	// reached, PerDomain the cells kept per domain.
	Limit, Domains, PerDomain int
}

func (e *TooManyCellsError) Error() string {
	if e == nil {
		return "figure: too many cells to draw"
	}
	return fmt.Sprintf("figure: more than %s cells to draw (%d samples so far, at most %s each)", count(e.Limit), e.Domains, count(e.PerDomain))
}

// ErrNoCells is returned when a stream has no cell to draw.
var ErrNoCells = errors.New("figure: no cells to draw")

func (o *SampleOptions) check() error {
	if o.PerDomain < 1 {
		return fmt.Errorf("figure: %d cells per domain: want at least 1", o.PerDomain)
	}
	if o.MaxCells < 0 {
		return fmt.Errorf("figure: MaxCells %d is negative", o.MaxCells)
	}
	return nil
}

// SampleModel projects every cell of src with the model m and keeps, for a
// picture, at most o.PerDomain cells of each domain, drawn uniformly at
// random, with their inputs. The components are those m.TransformStream
// gives (centered with the training mean), except for a model of the
// paper's form (dica.Paper) fitted with the exact solver, whose components
// are centered with the mean of all the cells of src, as the paper's code
// does and as dica transform writes them.
func SampleModel(ctx context.Context, m *dica.Model, src dataset.Source, o SampleOptions) (*Sample, error) {
	if m == nil || src == nil {
		return nil, errors.New("figure: SampleModel needs a model and a source")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	sc := src.Schema()
	s := newSampler(o, sc.D(), m.Positive, sc.Labelled, true)
	s.hasValue = len(sc.Targets) > 0
	batch := m.Config().Solver == dica.Exact && m.Config().Form == dica.Paper
	sums := make([]float64, m.Positive)
	var rows int64
	err := m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.add(b, z, domains, classes); err != nil {
			return err
		}
		if batch {
			for i := 0; i < b.Rows; i++ {
				for j, v := range z.RawRowView(i) {
					sums[j] += v
				}
			}
		}
		rows += int64(b.Rows)
		if o.Progress != nil {
			o.Progress(rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := s.sample()
	if err != nil {
		return nil, err
	}
	if batch {
		n, _ := out.Z.Dims()
		for j := range sums {
			sums[j] /= float64(rows)
		}
		for i := 0; i < n; i++ {
			for j, v := range out.Z.RawRowView(i) {
				out.Z.Set(i, j, v-sums[j])
			}
		}
	}
	out.Method = strings.ToUpper(m.Config().Method.String())
	if s.hasValue {
		out.ValueName = sc.Targets[0]
	}
	return out, nil
}

// SampleComponents keeps at most o.PerDomain cells of each domain of src,
// whose features are components already computed (the output of a
// transform), named by method ("DICA", "KPCA", ...). The sample has no
// inputs (X is nil).
func SampleComponents(ctx context.Context, src dataset.Source, method string, o SampleOptions) (*Sample, error) {
	if src == nil {
		return nil, errors.New("figure: SampleComponents needs a source")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	sc := src.Schema()
	s := newSampler(o, 0, sc.D(), sc.Labelled, false)
	rd, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var b dataset.Block
	var rows int64
	for {
		k, err := rd.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.add(&b, mat.NewDense(k, b.D, b.X[:k*b.D]), rd.Domains(), rd.Classes()); err != nil {
			return nil, err
		}
		rows += int64(k)
		if o.Progress != nil {
			o.Progress(rows)
		}
	}
	out, err := s.sample()
	if err != nil {
		return nil, err
	}
	out.Method = method
	return out, nil
}

// sampler collects a Sample from a stream of blocks with a per-domain
// reservoir.
type sampler struct {
	res            *Reservoir
	kept, limit    int
	d, k           int
	x, z           [][]float64 // per domain: Cap rows of d (x) or k (z) values
	row            [][]int64
	label          [][]int
	value          [][]float64 // per domain: the first target of each kept row
	domains        []string
	classes        []string
	pos            int64
	labelled, hasX bool
	hasValue       bool
}

func newSampler(o SampleOptions, d, k int, labelled, hasX bool) *sampler {
	limit := o.MaxCells
	if limit == 0 {
		limit = MaxSampleCells
	}
	return &sampler{res: NewReservoir(o.PerDomain, o.Seed), d: d, k: k, labelled: labelled, hasX: hasX, limit: limit}
}

// add offers the rows of a block, with z the components of its rows. It
// fails when the sample would hold more than its limit of cells.
func (s *sampler) add(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	for i := 0; i < b.Rows; i++ {
		g := b.Domain[i]
		for len(s.row) <= g {
			s.row = append(s.row, nil)
			s.z = append(s.z, nil)
			s.x = append(s.x, nil)
			s.label = append(s.label, nil)
			s.value = append(s.value, nil)
		}
		slot, keep := s.res.Offer(g)
		pos := s.pos + int64(i)
		if !keep {
			continue
		}
		if slot == len(s.row[g]) {
			if s.kept++; s.kept > s.limit {
				return &TooManyCellsError{Limit: s.limit, Domains: len(s.row), PerDomain: s.res.Cap}
			}
			s.row[g] = append(s.row[g], pos)
			s.z[g] = append(s.z[g], make([]float64, s.k)...)
			if s.hasX {
				s.x[g] = append(s.x[g], make([]float64, s.d)...)
			}
			if s.labelled {
				s.label[g] = append(s.label[g], 0)
			}
			if s.hasValue {
				s.value[g] = append(s.value[g], 0)
			}
		}
		s.row[g][slot] = pos
		copy(s.z[g][slot*s.k:(slot+1)*s.k], z.RawRowView(i))
		if s.hasX {
			copy(s.x[g][slot*s.d:(slot+1)*s.d], b.Row(i))
		}
		if s.labelled {
			s.label[g][slot] = b.Label[i]
		}
		if s.hasValue {
			s.value[g][slot] = b.Target[i*b.T]
		}
	}
	s.pos += int64(b.Rows)
	s.domains, s.classes = slices.Clone(domains), slices.Clone(classes)
	return nil
}

// sample returns the kept cells, domain by domain, each domain's cells in
// stream order, and the classes in natural order ("2" before "10").
func (s *sampler) sample() (*Sample, error) {
	n := 0
	for _, r := range s.row {
		n += len(r)
	}
	if n == 0 {
		return nil, ErrNoCells
	}
	out := &Sample{
		Z: mat.NewDense(n, s.k, nil), Domains: s.domains, Total: s.res.Seen(),
		PerDomain: s.res.Cap, Seed: s.res.Seed,
	}
	for len(out.Total) < len(s.domains) {
		out.Total = append(out.Total, 0)
	}
	if s.hasX {
		out.X = mat.NewDense(n, s.d, nil)
	}
	var remap []int
	if s.labelled {
		out.Classes = slices.Clone(s.classes)
		slices.SortStableFunc(out.Classes, csvio.NaturalCompare)
		remap = make([]int, len(s.classes))
		for i, c := range s.classes {
			remap[i] = slices.Index(out.Classes, c)
		}
		out.Label = make([]int, 0, n)
	}
	for g := range s.row {
		idx := make([]int, len(s.row[g]))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return s.row[g][idx[a]] < s.row[g][idx[b]] })
		for _, i := range idx {
			r := len(out.Row)
			out.Row = append(out.Row, s.row[g][i])
			out.Domain = append(out.Domain, g)
			out.Z.SetRow(r, s.z[g][i*s.k:(i+1)*s.k])
			if s.hasX {
				out.X.SetRow(r, s.x[g][i*s.d:(i+1)*s.d])
			}
			if s.labelled {
				l := s.label[g][i]
				if l >= 0 {
					l = remap[l]
				}
				out.Label = append(out.Label, l) // dataset.NoLabel stays
			}
			if s.hasValue {
				out.Value = append(out.Value, s.value[g][i])
			}
		}
	}
	return out, nil
}
