package figure

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Cells describes the cells a figure draws: for each cell its sample
// (domain) and, when known, its population (class) or a value to color by.
// The coordinates come separately, one View per projection of the same
// cells.
type Cells struct {
	// Domain holds each cell's sample, an index into DomainNames.
	Domain      []int
	DomainNames []string
	// Label holds each cell's population, an index into ClassNames or
	// -1 (dataset.NoLabel) for a cell without a label, drawn in
	// OtherColor; nil when the cells are not labelled.
	Label      []int
	ClassNames []string
	// Palette colors the populations by name (nil: NewPalette(ClassNames)).
	// Give the palette of the model's populations, so that a population
	// has its color in every picture of the model; a population the
	// palette does not hold is drawn in OtherColor.
	Palette *Palette
	// Value, when not nil, holds a number per cell to color by (a
	// regression target); ValueName names it.
	Value     []float64
	ValueName string
	// Unseen marks, per domain, the samples the model was not fitted on
	// (nil: every sample was a training sample).
	Unseen []bool
	// Total, when not nil, holds the number of cells of each domain in
	// the data before subsampling; titles then say "5,000 of 48,210
	// cells".
	Total []int64
	// DomainTerm is what a domain is called in titles, notes and legends,
	// in the singular ("sample" when empty; "domain", "patient").
	DomainTerm string
	// UnseenTerm is what the domains marked in Unseen are called ("unseen"
	// when empty); a picture that holds apart domains the model was
	// fitted on should not call them unseen.
	UnseenTerm string
}

// term returns what a domain is called, in the plural when many.
func (c *Cells) term(many bool) string {
	t := c.DomainTerm
	if t == "" {
		t = "sample"
	}
	if many {
		t += "s"
	}
	return t
}

// unseenTerm returns what the domains marked in Unseen are called.
func (c *Cells) unseenTerm() string {
	if c.UnseenTerm == "" {
		return "unseen"
	}
	return c.UnseenTerm
}

// palette returns the palette of the populations.
func (c *Cells) palette() *Palette {
	if c.Palette != nil {
		return c.Palette
	}
	return NewPalette(c.ClassNames)
}

// N returns the number of cells (0 for nil Cells).
func (c *Cells) N() int {
	if c == nil {
		return 0
	}
	return len(c.Domain)
}

// check validates the cells against n rows of coordinates.
func (c *Cells) check(n int) error {
	if len(c.Domain) != n {
		return fmt.Errorf("figure: %d domain indices for %d cells", len(c.Domain), n)
	}
	if n == 0 {
		return errors.New("figure: no cells to draw")
	}
	for i, g := range c.Domain {
		if g < 0 || g >= len(c.DomainNames) {
			return fmt.Errorf("figure: cell %d: domain %d, want 0 to %d", i+1, g, len(c.DomainNames)-1)
		}
	}
	if c.Label != nil {
		if len(c.Label) != n {
			return fmt.Errorf("figure: %d labels for %d cells", len(c.Label), n)
		}
		for i, l := range c.Label {
			if l < -1 || l >= len(c.ClassNames) {
				return fmt.Errorf("figure: cell %d: label %d, want -1 (none) or 0 to %d", i+1, l, len(c.ClassNames)-1)
			}
		}
	}
	if c.Value != nil {
		if len(c.Value) != n {
			return fmt.Errorf("figure: %d values for %d cells", len(c.Value), n)
		}
		for i, v := range c.Value {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("figure: cell %d: value %v is not finite", i+1, v)
			}
		}
	}
	if c.Unseen != nil && len(c.Unseen) != len(c.DomainNames) {
		return fmt.Errorf("figure: %d unseen marks for %d domains", len(c.Unseen), len(c.DomainNames))
	}
	if c.Total != nil && len(c.Total) != len(c.DomainNames) {
		return fmt.Errorf("figure: %d domain totals for %d domains", len(c.Total), len(c.DomainNames))
	}
	return nil
}

func (c *Cells) unseen(g int) bool { return c.Unseen != nil && c.Unseen[g] }

// present returns the domains that have cells, in index order.
func (c *Cells) present() []int {
	has := make([]bool, len(c.DomainNames))
	for _, g := range c.Domain {
		has[g] = true
	}
	var out []int
	for g, ok := range has {
		if ok {
			out = append(out, g)
		}
	}
	return out
}

// View is one projection of the cells: Z holds a row per cell and a column
// per component.
type View struct {
	// Name names the components on the axes: "DICA" gives "DICA1",
	// "DICA2", ...
	Name string
	// Title heads the view's panels, such as "DICA, sigma 1, rank 500".
	Title string
	Z     *mat.Dense
}

func (v *View) check(c *Cells, need int) error {
	if v.Z == nil {
		return fmt.Errorf("figure: view %q has no coordinates", v.Name)
	}
	r, k := v.Z.Dims()
	if err := c.check(r); err != nil {
		return fmt.Errorf("%w (view %q)", err, v.Name)
	}
	if k < need {
		return fmt.Errorf("figure: view %q has %d components, the figure needs %d", v.Name, k, need)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < k; j++ {
			if x := v.Z.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("figure: view %q: cell %d, component %d is %v", v.Name, i+1, j+1, x)
			}
		}
	}
	return nil
}

func (v *View) axis(j int) string { return fmt.Sprintf("%s%d", v.Name, j+1) }

// axisRange is the range of an axis and how many cells fall outside it.
type axisRange struct {
	lo, hi  float64
	outside int
}

// rangeOf returns the axis range for the values: their full range, unless
// a few extreme cells stretch it beyond 1.5 times the range of the central
// 99.8% (then that central range, the others counted as outside), padded
// by 4% on each side.
func rangeOf(vals []float64) axisRange {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	lo, hi := s[0], s[n-1]
	qlo, qhi := s[int(0.001*float64(n-1))], s[int(math.Ceil(0.999*float64(n-1)))]
	r := axisRange{lo: lo, hi: hi}
	if hi-lo > 1.5*(qhi-qlo) && qhi > qlo {
		r.lo, r.hi = qlo, qhi
		for _, v := range s {
			if v < qlo || v > qhi {
				r.outside++
			}
		}
	}
	pad := 0.04 * (r.hi - r.lo)
	if pad == 0 {
		pad = math.Max(0.5, 0.04*math.Abs(r.lo))
	}
	r.lo -= pad
	r.hi += pad
	return r
}

// count64 formats n with thousands separators.
func count64(n int64) string { return count(int(n)) }

// column returns column j of z.
func column(z *mat.Dense, j int) []float64 {
	return mat.Col(nil, j, z)
}

// Reservoir draws a uniform random sample of at most Cap rows from each
// domain of a stream, in one pass and bounded memory (Vitter's algorithm R,
// with one random stream per domain seeded by the seed and the domain
// index, so a domain's sample does not depend on the other domains). Offer
// is called for every row in stream order; it returns the slot of the
// domain's sample that the row takes, and false when the row is not kept.
type Reservoir struct {
	// Cap is the largest number of rows kept per domain, Seed the seed;
	// both are set by NewReservoir.
	Cap  int
	Seed uint64
	seen []int64
	rngs []*rand.Rand
}

// NewReservoir returns a reservoir keeping at most perDomain rows of each
// domain. It panics if perDomain < 1.
func NewReservoir(perDomain int, seed uint64) *Reservoir {
	if perDomain < 1 {
		panic("figure: reservoir of fewer than 1 row per domain")
	}
	return &Reservoir{Cap: perDomain, Seed: seed}
}

// Offer offers the next row of domain g (g >= 0) and returns the slot in
// [0, Cap) that it replaces in the domain's sample, or false. A nil
// Reservoir keeps nothing, nor does any with a negative g.
func (r *Reservoir) Offer(g int) (slot int, keep bool) {
	if r == nil || g < 0 {
		return 0, false
	}
	for len(r.seen) <= g {
		d := len(r.seen)
		r.seen = append(r.seen, 0)
		r.rngs = append(r.rngs, rand.New(rand.NewPCG(r.Seed, 0x9e3779b97f4a7c15^uint64(d))))
	}
	t := r.seen[g]
	r.seen[g]++
	if t < int64(r.Cap) {
		return int(t), true
	}
	j := r.rngs[g].Int64N(t + 1)
	if j < int64(r.Cap) {
		return int(j), true
	}
	return 0, false
}

// Seen returns the number of rows offered for each domain (nil for a nil
// Reservoir).
func (r *Reservoir) Seen() []int64 {
	if r == nil {
		return nil
	}
	return slices.Clone(r.seen)
}
