package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/plot/vg"
)

// Options adjust a figure. The zero value gives each builder's defaults.
type Options struct {
	// Title replaces the builder's title; Notes are added after its notes.
	Title string
	Notes []string
	// Width, Height and DPI set the size (0: the builder's default size,
	// DefaultDPI).
	Width, Height vg.Length
	DPI           int
	// X and Y are the components on the axes, from 0 (both 0: the first
	// two), of Projection, Samples and TrainingAndUnseen.
	X, Y int
	// Components is the number of components of a Pairs grid (0: 3, or
	// fewer when the view has fewer).
	Components int
	// Seed seeds the order in which the cells are listed in each panel,
	// the same in every panel. The picture does not depend on it: the
	// colors of overlapping cells are blended whatever their order.
	Seed uint64
	// DotRadius (points) and DotAlpha (opacity in (0, 1]) set how cells
	// are drawn; 0 chooses them from the number of cells per panel.
	DotRadius vg.Length
	DotAlpha  float64
}

func (o *Options) axes() (int, int) {
	if o.X == 0 && o.Y == 0 {
		return 0, 1
	}
	return o.X, o.Y
}

func (o *Options) finish(f *Figure, w, h vg.Length) *Figure {
	if o.Title != "" {
		f.Title = o.Title
	}
	f.Notes = append(f.Notes, o.Notes...)
	f.Width, f.Height, f.DPI = w, h, o.DPI
	if o.Width > 0 {
		f.Width = o.Width
	}
	if o.Height > 0 {
		f.Height = o.Height
	}
	return f
}

// dotStyle returns the radius and opacity of n dots in a panel of about
// area square points: the opacity falls as the dots would cover the panel
// more often, so dense populations stay distinguishable from sparse ones.
func (o *Options) dotStyle(n int, area float64) (vg.Length, float64) {
	r := o.DotRadius
	if r == 0 {
		switch {
		case n <= 2000:
			r = vg.Points(1.6)
		case n <= 20000:
			r = vg.Points(1.2)
		default:
			r = vg.Points(0.9)
		}
	}
	a := o.DotAlpha
	if a == 0 {
		cover := float64(n) * math.Pi * float64(r*r) / max(area, 1)
		a = math.Max(0.1, math.Min(0.9, 0.45/math.Sqrt(max(cover, 1e-9))))
	}
	return r, a
}

// order returns the seeded order in which n cells are listed.
func (o *Options) order(n int) []int {
	return rand.New(rand.NewPCG(o.Seed, 0x5eed)).Perm(n)
}

// The kinds of coloring of a panel.
const (
	byValue      = "value"
	byPopulation = "population"
	bySample     = "sample"
)

// cellColor is the color of cells that stand for themselves only: a
// sample's cells in its own panel when there is no population to show, or
// all cells when the samples are too many to color.
var cellColor = rgb(0x1f4e79)

// painter colors cells.
type painter struct {
	c   *Cells
	pal *Palette
	vlo float64
	vhi float64
	// samples are the domains with cells, smp their colors: one each
	// when they are at most MaxSampleColors, else the first
	// MaxSampleColors - 1 and OtherColor for the others (grouped).
	samples []int
	smp     map[int]color.NRGBA
	grouped bool
}

func newPainter(c *Cells) painter {
	p := painter{c: c, samples: c.present()}
	if c.Label != nil {
		p.pal = c.palette()
	}
	p.smp, p.grouped = sampleColors(p.samples)
	if c.Value != nil {
		// The color range is the central 96% of the values, so that a few
		// extreme values do not leave all others one color.
		s := slices.Clone(c.Value)
		slices.Sort(s)
		n := len(s)
		p.vlo, p.vhi = s[int(0.02*float64(n-1))], s[int(math.Ceil(0.98*float64(n-1)))]
		if !(p.vhi > p.vlo) {
			p.vlo, p.vhi = s[0], s[n-1]
		}
	}
	return p
}

// sampleColors returns the colors of the domains: one each from the
// sample palette when they are at most MaxSampleColors, else the first
// MaxSampleColors - 1 and OtherColor for the others (grouped true).
func sampleColors(doms []int) (map[int]color.NRGBA, bool) {
	m := make(map[int]color.NRGBA, len(doms))
	grouped := len(doms) > MaxSampleColors
	for k, g := range doms {
		if grouped && k >= MaxSampleColors-1 {
			m[g] = OtherColor
			continue
		}
		m[g] = samplePalette[k]
	}
	return m, grouped
}

func (p painter) sample(i int) color.NRGBA { return p.smp[p.c.Domain[i]] }

func (p painter) class(i int) color.NRGBA {
	if p.c.Label[i] < 0 {
		return OtherColor // an unlabelled cell
	}
	return p.pal.Color(p.c.ClassNames[p.c.Label[i]])
}

func (p painter) value(i int) color.NRGBA {
	t := 0.5
	if p.vhi > p.vlo {
		t = (p.c.Value[i] - p.vlo) / (p.vhi - p.vlo)
	}
	return Viridis(t)
}

func (p painter) plain(int) color.NRGBA { return cellColor }

// primary is the coloring of a panel that shows what the projection keeps:
// the value, else the population, else the sample.
func (p painter) primary() (func(int) color.NRGBA, string) {
	switch {
	case p.c.Value != nil:
		return p.value, byValue
	case p.c.Label != nil:
		return p.class, byPopulation
	}
	return p.sample, bySample
}

// note adds to f what the colors of a value mean.
func (p painter) note(f *Figure, kind string) *Figure {
	if kind == byValue {
		f.Notes = append(f.Notes, fmt.Sprintf("Colors span the central 96%% of the %s values, %.3g to %.3g; values beyond take the end colors.", p.valueName(), p.vlo, p.vhi))
	}
	return f
}

func (p painter) valueName() string {
	if p.c.ValueName == "" {
		return "value"
	}
	return p.c.ValueName
}

// legend returns the legend of a coloring.
func (p painter) legend(kind string, row int) Legend {
	c := p.c
	switch kind {
	case byValue:
		return Legend{Title: p.valueName(), Bar: &ColorBar{Min: p.vlo, Max: p.vhi, Map: Viridis}, Row: row}
	case byPopulation:
		l := Legend{Title: "population", Row: row}
		names := slices.Clone(c.ClassNames)
		slices.SortStableFunc(names, func(a, b string) int {
			ia, ib := slices.Index(p.pal.names, a), slices.Index(p.pal.names, b)
			if ia < 0 || ib < 0 {
				return boolCompare(ia < 0, ib < 0)
			}
			return ia - ib
		})
		for _, n := range names {
			name := n
			if !p.pal.Has(n) {
				name += " (other)"
			}
			l.Entries = append(l.Entries, Entry{Name: name, Color: p.pal.Color(n)})
		}
		if slices.Contains(c.Label, -1) {
			l.Entries = append(l.Entries, Entry{Name: "no label", Color: OtherColor})
		}
		return l
	}
	return p.sampleLegend(p.samples, p.smp, p.grouped, c.term(false), row, true)
}

// sampleLegend lists the domains doms in their colors, the grouped ones
// as one entry; mark adds "(unseen)" to the names of unseen domains.
func (p painter) sampleLegend(doms []int, cols map[int]color.NRGBA, grouped bool, title string, row int, mark bool) Legend {
	c := p.c
	l := Legend{Title: title, Row: row}
	others := 0
	for _, g := range doms {
		if grouped && cols[g] == OtherColor {
			others++
			continue
		}
		name := c.DomainNames[g]
		if mark && c.unseen(g) {
			name += " (" + c.unseenTerm() + ")"
		}
		l.Entries = append(l.Entries, Entry{Name: name, Color: cols[g]})
	}
	if others > 0 {
		l.Entries = append(l.Entries, Entry{Name: fmt.Sprintf("%d other %s", others, c.term(others > 1)), Color: OtherColor})
	}
	return l
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// dotsOf returns the cells in the order, with the coordinates of columns x
// and y of v and the colors of col; keep selects cells (nil: all).
func dotsOf(v *View, x, y int, order []int, col func(int) color.NRGBA, keep func(int) bool) []Dot {
	ds := make([]Dot, 0, len(order))
	for _, i := range order {
		if keep != nil && !keep(i) {
			continue
		}
		ds = append(ds, Dot{X: v.Z.At(i, x), Y: v.Z.At(i, y), Cell: i, Color: col(i)})
	}
	return ds
}

func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func outsideNote(v *View, n int, rs ...axisRange) string {
	out := 0
	for _, r := range rs {
		out = max(out, r.outside)
	}
	if out == 0 {
		return ""
	}
	return fmt.Sprintf("%s: about %s of %s cells lie beyond the central 99.8%% and outside the axes.", v.Name, count(out), count(n))
}

// what says what a panel colored by kind shows: "populations", "samples"
// (or the domain term), or the value's name.
func (p painter) what(kind string) string {
	switch kind {
	case byPopulation:
		return "populations"
	case bySample:
		return p.c.term(true)
	}
	return p.valueName()
}

// blendNote says how overlapping cells of different colors are drawn.
const blendNote = "Where cells of several populations overlap, their colors mix in proportion to each population's density there (its share of its own cells), so a small population shows among a large one."

// sampleBlendNote says what overlapping samples' colors mean.
func sampleBlendNote(c *Cells) string {
	return fmt.Sprintf("Where %s mix, their colors blend toward brown; a region in one %s's color holds that %s's cells alone.", c.term(true), c.term(false), c.term(false))
}

// The size of figures: at most about 14 inches (1,350 pixels at 96 dpi)
// wide, the legends in a column of about legendInches at the right.
const (
	maxInches    = 14.2
	legendInches = 1.7
	headInches   = 0.9
)

// Projection draws the cells in each view on components X and Y (options),
// a block of panels per view (the method, then baselines): at the left, all
// cells in one large panel colored by population (or by value; without
// either, by sample when there are at most MaxSampleColors samples, else in
// one color); at the right, one small panel per sample (small multiples),
// the sample's cells colored the same way over the cells of all samples in
// gray, unseen samples in tinted panels with red titles, so that a sample
// that lies apart from the others shows, however many samples there are.
// Every panel of a view has the same axes. Beyond MaxSamplePanels samples
// the small multiples give way to one panel colored by sample, the samples
// beyond the first MaxSampleColors - 1 grouped in OtherColor.
func Projection(c Cells, views []View, o Options) (*Figure, error) {
	if len(views) == 0 {
		return nil, errors.New("figure: no view to draw")
	}
	x, y := o.axes()
	for i := range views {
		if err := views[i].check(&c, max(x, y)+1); err != nil {
			return nil, err
		}
	}
	pt := newPainter(&c)
	if len(pt.samples) > MaxSamplePanels {
		return projectionPanels(c, views, o, pt)
	}
	n := c.N()
	order := o.order(n)
	prim, kind := pt.primary()
	if kind == bySample && pt.grouped {
		prim = pt.plain
	}
	doms := pt.samples
	cols := int(math.Ceil(math.Sqrt(float64(len(doms)))))
	rows := (len(doms) + cols - 1) / cols
	k := max(rows, 2) // the large panel spans k x k tiles
	side := math.Min(2.3, (maxInches-legendInches)/float64(k+cols))
	side = math.Min(side, 13/float64(k*len(views)))
	tile := vg.Length(side) * vg.Inch
	w := vg.Length(float64(k+cols)*side+legendInches) * vg.Inch
	h := vg.Length(float64(k*len(views))*side+headInches) * vg.Inch

	f := &Figure{Title: "Cells projected on " + views[0].axis(x) + " and " + views[0].axis(y)}
	if len(views) > 1 {
		f.Title = fmt.Sprintf("Cells projected on components %d and %d", x+1, y+1)
	}
	what := "all cells"
	switch {
	case kind != bySample:
		what += " by " + kind
	case !pt.grouped:
		what += " by " + c.term(false)
	}
	f.Notes = append(f.Notes, fmt.Sprintf("Large panel: %s. Small panels: each %s's cells over those of all %s in gray, with the large panel's axes.", what, c.term(false), c.term(true)))
	if kind == byPopulation {
		f.Notes = append(f.Notes, blendNote)
	}
	if kind == bySample && !pt.grouped && len(doms) > 1 {
		f.Notes = append(f.Notes, sampleBlendNote(&c))
	}
	if c.Unseen != nil && slices.ContainsFunc(doms, c.unseen) {
		f.Notes = append(f.Notes, fmt.Sprintf("%s %s (not used to fit) have a tinted panel and a red title.", capitalize(c.unseenTerm()), c.term(true)))
	}
	perSample := c.mostCells(doms)
	bigR, bigA := o.dotStyle(n, sq(float64(tile)*float64(k))*0.55)
	smallR, smallA := o.dotStyle(perSample, sq(float64(tile))*0.4)
	f.Panels = make([][]*Panel, k*len(views))
	for i := range f.Panels {
		f.Panels[i] = make([]*Panel, k+cols)
	}
	for b := range views {
		v := &views[b]
		xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
		if s := outsideNote(v, n, xr, yr); s != "" {
			f.Notes = append(f.Notes, s)
		}
		title := v.Title + ": " + pt.what(kind)
		if kind == bySample && pt.grouped {
			title = v.Title + ": all cells"
		}
		f.Panels[b*k][0] = &Panel{
			Title:  title,
			XLabel: v.axis(x), YLabel: v.axis(y),
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Dots: dotsOf(v, x, y, order, prim, nil), DotRadius: bigR, DotAlpha: bigA, Balance: kind != byValue,
			RowSpan: k, ColSpan: k,
		}
		back := dotsOf(v, x, y, order, func(int) color.NRGBA { return backdropColor }, nil)
		col := prim
		if kind == bySample {
			col = pt.plain
		}
		for q, g := range doms {
			i, j := b*k+q/cols, k+q%cols
			p := &Panel{
				Title: c.DomainNames[g], Compact: true,
				XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
				Backdrop:  back,
				Dots:      dotsOf(v, x, y, order, col, func(i int) bool { return c.Domain[i] == g }),
				DotRadius: smallR, DotAlpha: smallA, Balance: kind == byPopulation,
				// Tick labels on the outer panels only: they all share
				// the axes.
				HideXTickLabels: q+cols < len(doms),
				HideYTickLabels: q%cols != 0,
			}
			if c.unseen(g) {
				p.Title += " (" + c.unseenTerm() + ")"
				p.TitleColor, p.Shade = unseenColor, unseenShade
			}
			f.Panels[i][j] = p
		}
	}
	switch {
	case kind != bySample:
		f.Legends = []Legend{pt.legend(kind, 0)}
	case !pt.grouped:
		f.Legends = []Legend{pt.legend(bySample, 0)}
	}
	if len(views) == 1 && o.Width == 0 && o.Height == 0 {
		// One view: the grid is one block, no taller than its content.
		h = vg.Length(float64(k)*side+headInches+0.2*float64(len(f.Notes))) * vg.Inch
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// projectionPanels draws more samples than small multiples hold: per view
// a panel by population (or value) and one by sample, the samples beyond
// the first MaxSampleColors - 1 grouped in OtherColor.
func projectionPanels(c Cells, views []View, o Options, pt painter) (*Figure, error) {
	x, y := o.axes()
	n := c.N()
	order := o.order(n)
	prim, kind := pt.primary()
	type coloring struct {
		col  func(int) color.NRGBA
		kind string
	}
	rows := []coloring{}
	if kind != bySample {
		rows = append(rows, coloring{prim, kind})
	}
	rows = append(rows, coloring{pt.sample, bySample})
	side := math.Min(5.2, (maxInches-legendInches)/float64(len(views)))
	w := vg.Length(side*float64(len(views))+legendInches) * vg.Inch
	h := vg.Length(side*0.85*float64(len(rows))+headInches) * vg.Inch
	r, a := o.dotStyle(n, sq(side*72*0.85)*0.55)
	f := &Figure{Title: fmt.Sprintf("Cells projected on components %d and %d", x+1, y+1)}
	if kind == byPopulation {
		f.Notes = append(f.Notes, blendNote)
	}
	f.Panels = make([][]*Panel, len(rows))
	for j := range views {
		v := &views[j]
		xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
		if s := outsideNote(v, n, xr, yr); s != "" {
			f.Notes = append(f.Notes, s)
		}
		for i, row := range rows {
			f.Panels[i] = append(f.Panels[i], &Panel{
				Title:  v.Title + ": " + pt.what(row.kind),
				XLabel: v.axis(x), YLabel: v.axis(y),
				XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
				Dots: dotsOf(v, x, y, order, row.col, nil), DotRadius: r, DotAlpha: a, Balance: row.kind != byValue,
			})
		}
	}
	for i, row := range rows {
		f.Legends = append(f.Legends, pt.legend(row.kind, i))
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// Pairs draws a grid of the first Components components (options) of a
// view: below the diagonal the cells colored by population (or value),
// above it colored by sample when there are at most MaxSampleColors
// samples, and on the diagonal each sample's density of the component (a
// histogram of 60 bins over the axis range), so that shifts between
// samples show as shifted curves: in the sample's color when there are at
// most MaxSampleColors samples, else in light gray with the density of all
// cells in black. Cells with neither population nor value are colored by
// sample below the diagonal, and the tiles above it stay empty.
func Pairs(c Cells, v View, o Options) (*Figure, error) {
	k := o.Components
	if k == 0 {
		k = 3
		if v.Z != nil {
			_, kz := v.Z.Dims()
			k = min(k, kz)
		}
	}
	if k < 2 {
		return nil, fmt.Errorf("figure: a pairs grid needs at least 2 components, got %d", k)
	}
	if err := v.check(&c, k); err != nil {
		return nil, err
	}
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	prim, kind := pt.primary()
	if kind == bySample && pt.grouped {
		prim = pt.plain
	}
	side := vg.Length(math.Min(3.1*float64(k), maxInches-legendInches-0.4)) * vg.Inch
	w, h := side+vg.Length(legendInches+0.4)*vg.Inch, side+vg.Length(headInches)*vg.Inch
	r, a := o.dotStyle(n, float64(side/vg.Length(k))*float64(side/vg.Length(k))*0.6)
	rs := make([]axisRange, k)
	var notes []string
	for j := range rs {
		rs[j] = rangeOf(column(v.Z, j))
	}
	if s := outsideNote(&v, n, rs...); s != "" {
		notes = append(notes, s)
	}
	f := &Figure{Title: fmt.Sprintf("%s: pairs of the first %d components", v.Title, k), Notes: notes}
	upper := kind != bySample && !pt.grouped
	below := "by " + kind
	if kind == bySample && pt.grouped {
		below = "in one color"
	}
	diag := fmt.Sprintf("the density of each %s", c.term(false))
	if pt.grouped {
		diag = fmt.Sprintf("the density of each %s in gray and of all cells in black", c.term(false))
	}
	switch {
	case upper:
		f.Notes = append(f.Notes, fmt.Sprintf("Below the diagonal the cells colored %s, above it by %s; on the diagonal %s.", below, c.term(false), diag))
	case pt.grouped:
		f.Notes = append(f.Notes, fmt.Sprintf("Below the diagonal the cells colored %s; on the diagonal %s. %d %s are more than colors tell apart: the small multiples of each %s show them apart.",
			below, diag, len(pt.samples), c.term(true), c.term(false)))
	default:
		f.Notes = append(f.Notes, fmt.Sprintf("Below the diagonal the cells colored %s; on the diagonal %s.", below, diag))
	}
	if kind == byPopulation {
		f.Notes = append(f.Notes, blendNote)
	}
	if (upper || kind == bySample) && !pt.grouped && len(pt.samples) > 1 {
		f.Notes = append(f.Notes, sampleBlendNote(&c))
	}
	f.Panels = make([][]*Panel, k)
	for i := 0; i < k; i++ {
		f.Panels[i] = make([]*Panel, k)
		for j := 0; j < k; j++ {
			p := &Panel{XMin: rs[j].lo, XMax: rs[j].hi, YMin: rs[i].lo, YMax: rs[i].hi}
			if i == k-1 {
				p.XLabel = v.axis(j)
			}
			if j == 0 {
				p.YLabel = v.axis(i)
			}
			switch {
			case i == j:
				densities(p, &pt, column(v.Z, j), rs[j])
				p.YLabel = "density of " + v.axis(i)
			case i > j:
				p.Dots = dotsOf(&v, j, i, order, prim, nil)
				p.Balance = kind != byValue
			case !upper:
				// Above the diagonal would repeat the panels below, or
				// show more samples than colors tell apart.
				continue
			default:
				p.Dots = dotsOf(&v, j, i, order, pt.sample, nil)
				p.Balance = true
			}
			p.DotRadius, p.DotAlpha = r, a
			f.Panels[i][j] = p
		}
	}
	switch {
	case kind != bySample:
		f.Legends = []Legend{pt.legend(kind, 0)}
		if !pt.grouped {
			f.Legends = append(f.Legends, pt.legend(bySample, min(1, k-1)))
		}
	case !pt.grouped:
		f.Legends = []Legend{pt.legend(bySample, 0)}
	}
	if pt.grouped {
		f.Legends = append(f.Legends, Legend{Title: "densities", Row: min(1, k-1), Entries: []Entry{
			{Name: "each " + c.term(false), Color: densityGray},
			{Name: "all cells", Color: black},
		}})
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// densityGray draws each sample's density where samples are too many to
// color.
var densityGray = rgb(0xb4b4b4)

// densities adds one histogram line per sample of the values to p, in the
// samples' colors, or, when they are too many to color, in light gray
// under the histogram of all cells in black; it sets p's Y range.
func densities(p *Panel, pt *painter, vals []float64, r axisRange) {
	const bins = 60
	width := (r.hi - r.lo) / bins
	top := 0.0
	c := pt.c
	hist := func(keep func(i int) bool, col color.NRGBA, lw vg.Length) {
		h := make([]float64, bins)
		m := 0
		for i, v := range vals {
			if !keep(i) {
				continue
			}
			m++
			if b := int((v - r.lo) / width); b >= 0 && b < bins {
				h[b]++
			}
		}
		l := Line{Color: col, Width: lw}
		for b, v := range h {
			d := v / (float64(m) * width)
			top = math.Max(top, d)
			l.X = append(l.X, r.lo+(float64(b)+0.5)*width)
			l.Y = append(l.Y, d)
		}
		p.Lines = append(p.Lines, l)
	}
	for _, g := range pt.samples {
		col := pt.smp[g]
		if pt.grouped {
			col = densityGray
		}
		hist(func(i int) bool { return c.Domain[i] == g }, col, vg.Points(1))
	}
	if pt.grouped {
		hist(func(int) bool { return true }, black, vg.Points(1.8))
	}
	p.YMin, p.YMax = 0, top*1.05
	if top == 0 {
		p.YMax = 1
	}
}

// MaxSamplePanels bounds the number of panels of Samples: an 8 x 8 grid.
const MaxSamplePanels = 64

// Samples draws one panel per sample (small multiples), all with the same
// axes: the sample's cells colored by population (or value, or in one
// color) over the cells of all samples in light gray, so a shift of one
// sample against the others shows. Unseen samples have a tinted panel and
// their title says so. At most MaxSamplePanels samples.
func Samples(c Cells, v View, o Options) (*Figure, error) {
	x, y := o.axes()
	if err := v.check(&c, max(x, y)+1); err != nil {
		return nil, err
	}
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	prim, kind := pt.primary()
	if kind == bySample {
		prim = pt.plain
	}
	doms := pt.samples
	if len(doms) > MaxSamplePanels {
		return nil, fmt.Errorf("figure: %d %s: small multiples draw at most %d", len(doms), c.term(true), MaxSamplePanels)
	}
	cols := int(math.Ceil(math.Sqrt(float64(len(doms)))))
	rows := (len(doms) + cols - 1) / cols
	side := math.Min(2.6, (maxInches-legendInches)/float64(cols))
	w := vg.Length(side*float64(cols)+legendInches) * vg.Inch
	h := vg.Length(side*0.92*float64(rows)+headInches) * vg.Inch
	xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
	f := &Figure{Title: fmt.Sprintf("%s: each %s on %s and %s", v.Title, c.term(false), v.axis(x), v.axis(y))}
	if s := outsideNote(&v, n, xr, yr); s != "" {
		f.Notes = append(f.Notes, s)
	}
	note := fmt.Sprintf("In gray, the cells of all %s.", c.term(true))
	if c.Unseen != nil && slices.ContainsFunc(doms, c.unseen) {
		note += fmt.Sprintf(" %s %s (not used to fit) have a tinted panel and a red title.", capitalize(c.unseenTerm()), c.term(true))
	}
	f.Notes = append(f.Notes, note)
	back := dotsOf(&v, x, y, order, func(int) color.NRGBA { return backdropColor }, nil)
	perSample := c.mostCells(doms)
	r, a := o.dotStyle(perSample, float64(w/vg.Length(cols))*float64(h/vg.Length(rows))*0.5)
	f.Panels = make([][]*Panel, rows)
	for i := range f.Panels {
		f.Panels[i] = make([]*Panel, cols)
	}
	for k, g := range doms {
		i, j := k/cols, k%cols
		p := &Panel{
			Title: c.DomainNames[g],
			XMin:  xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Backdrop: back,
			Dots:     dotsOf(&v, x, y, order, prim, func(i int) bool { return c.Domain[i] == g }),
			Balance:  kind == byPopulation,
		}
		p.DotRadius, p.DotAlpha = r, a
		if c.unseen(g) {
			p.Title += " (" + c.unseenTerm() + ")"
			p.TitleColor, p.Shade = unseenColor, unseenShade
		}
		if c.Total != nil {
			p.Title += fmt.Sprintf("\n%s of %s cells", count(len(p.Dots)), count(int(c.Total[g])))
		}
		if i == rows-1 || (i == rows-2 && (i+1)*cols+j >= len(doms)) {
			p.XLabel = v.axis(x)
		}
		if j == 0 {
			p.YLabel = v.axis(y)
		}
		f.Panels[i][j] = p
	}
	if kind != bySample {
		f.Legends = []Legend{pt.legend(kind, 0)}
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// TrainingAndUnseen draws, for each view, whether the unseen samples
// (Cells.Unseen) mix with the training samples: the cells of the unseen
// samples colored by sample (at most MaxSampleColors colors, the samples
// beyond grouped in OtherColor) over those of the training samples in
// gray, and above them every cell colored by value (the DICA paper's
// Figure 2 colors by the regression target), else by population. One
// column per view; a single view's panels side by side. It needs at least
// one training and one unseen sample.
func TrainingAndUnseen(c Cells, views []View, o Options) (*Figure, error) {
	if len(views) == 0 {
		return nil, errors.New("figure: no view to draw")
	}
	x, y := o.axes()
	for i := range views {
		if err := views[i].check(&c, max(x, y)+1); err != nil {
			return nil, err
		}
	}
	var train, test int
	for _, g := range c.Domain {
		if c.unseen(g) {
			test++
		} else {
			train++
		}
	}
	if train == 0 || test == 0 {
		return nil, fmt.Errorf("figure: %d cells of training %s and %d of %s %s: need both", train, c.term(true), test, c.unseenTerm(), c.term(true))
	}
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	prim, kind := pt.primary()
	var unseen []int
	for _, g := range pt.samples {
		if c.unseen(g) {
			unseen = append(unseen, g)
		}
	}
	ucol, grouped := sampleColors(unseen)
	isUnseen := func(i int) bool { return c.unseen(c.Domain[i]) }

	top := kind != bySample
	nrows := 1
	if top {
		nrows = 2
	}
	f := &Figure{Title: fmt.Sprintf("%s %s among the training %s", capitalize(c.unseenTerm()), c.term(true), c.term(true))}
	if c.UnseenTerm != "" {
		f.Title = fmt.Sprintf("%s %s among the other %s", capitalize(c.unseenTerm()), c.term(true), c.term(true))
	}
	rest := "training " + c.term(true)
	if c.UnseenTerm != "" {
		rest = "other " + c.term(true)
	}
	by := kind
	if kind == byValue {
		by = pt.valueName()
	}
	if top {
		f.Notes = append(f.Notes, fmt.Sprintf("Top: every cell by %s. Bottom: the cells of the %s %s, each %s in its color, over those of the %s in gray.", by, c.unseenTerm(), c.term(true), c.term(false), rest))
	} else {
		f.Notes = append(f.Notes, fmt.Sprintf("The cells of the %s %s, each %s in its color, over those of the %s in gray.", c.unseenTerm(), c.term(true), c.term(false), rest))
	}
	if kind == byPopulation {
		f.Notes = append(f.Notes, blendNote)
	}
	if len(unseen) > 1 {
		f.Notes = append(f.Notes, sampleBlendNote(&c))
	}
	V := len(views)
	single := V == 1 && top
	var cols int
	if single {
		cols = 2
	} else {
		cols = V
	}
	side := math.Min(4.6, (maxInches-legendInches)/float64(cols))
	w := vg.Length(side*float64(cols)+legendInches) * vg.Inch
	prows := nrows
	if single {
		prows = 1
	}
	h := vg.Length(side*0.9*float64(prows)+headInches) * vg.Inch
	area := sq(side*72*0.9) * 0.55
	rAll, aAll := o.dotStyle(n, area)
	rTest, aTest := o.dotStyle(test, area)
	f.Panels = make([][]*Panel, prows)
	for j := range views {
		v := &views[j]
		xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
		if s := outsideNote(v, n, xr, yr); s != "" {
			f.Notes = append(f.Notes, s)
		}
		bottom := &Panel{
			Title: v.Name + ": " + c.unseenTerm() + " " + c.term(true), TitleColor: unseenColor,
			XLabel: v.axis(x), YLabel: v.axis(y),
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Backdrop:  dotsOf(v, x, y, order, func(int) color.NRGBA { return backdropColor }, func(i int) bool { return !isUnseen(i) }),
			Dots:      dotsOf(v, x, y, order, func(i int) color.NRGBA { return ucol[c.Domain[i]] }, isUnseen),
			DotRadius: rTest, DotAlpha: aTest, Balance: true,
		}
		if !top {
			bottom.Title = v.Title + ": " + c.unseenTerm() + " " + c.term(true)
			f.Panels[0] = append(f.Panels[0], bottom)
			continue
		}
		upper := &Panel{
			Title: v.Title + ": " + pt.what(kind), XLabel: v.axis(x), YLabel: v.axis(y),
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Dots:      dotsOf(v, x, y, order, prim, nil),
			DotRadius: rAll, DotAlpha: aAll, Balance: kind == byPopulation,
		}
		if single {
			f.Panels[0] = append(f.Panels[0], upper, bottom)
			continue
		}
		f.Panels[0] = append(f.Panels[0], upper)
		f.Panels[1] = append(f.Panels[1], bottom)
	}
	row := 0
	if top {
		f.Legends = append(f.Legends, pt.legend(kind, 0))
		if !single {
			row = 1
		}
	}
	l := pt.sampleLegend(unseen, ucol, grouped, c.unseenTerm()+" "+c.term(false), row, false)
	l.Entries = append(l.Entries, Entry{Name: rest, Color: backdropColor})
	f.Legends = append(f.Legends, l)
	return o.finish(pt.note(f, kind), w, h), nil
}

func sq(v float64) float64 { return v * v }

// mostCells returns the largest number of cells of one of the domains.
func (c *Cells) mostCells(domains []int) int {
	most := 0
	for _, g := range domains {
		m := 0
		for _, d := range c.Domain {
			if d == g {
				m++
			}
		}
		most = max(most, m)
	}
	return most
}
