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
	// Seed seeds the order in which cells are drawn, the same in every
	// panel: a random order, so that no sample or population is always
	// on top.
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

// order returns the seeded drawing order of n cells.
func (o *Options) order(n int) []int {
	return rand.New(rand.NewPCG(o.Seed, 0x5eed)).Perm(n)
}

// painter colors cells.
type painter struct {
	c    *Cells
	vlo  float64
	vhi  float64
	ncls int
}

func newPainter(c *Cells) painter {
	p := painter{c: c, ncls: len(c.ClassNames)}
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

func (p painter) sample(i int) color.NRGBA {
	return SampleColor(p.c.Domain[i], len(p.c.DomainNames))
}

func (p painter) class(i int) color.NRGBA { return ClassColor(p.c.Label[i], p.ncls) }

func (p painter) value(i int) color.NRGBA {
	t := 0.5
	if p.vhi > p.vlo {
		t = (p.c.Value[i] - p.vlo) / (p.vhi - p.vlo)
	}
	return Viridis(t)
}

// primary is the coloring of a panel that shows what the projection keeps:
// the value, else the population, else the sample.
func (p painter) primary() (func(int) color.NRGBA, string) {
	switch {
	case p.c.Value != nil:
		return p.value, "value"
	case p.c.Label != nil:
		return p.class, "population"
	}
	return p.sample, "sample"
}

// note adds to f what the colors of a value mean.
func (p painter) note(f *Figure, kind string) *Figure {
	if kind == "value" {
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

func (p painter) legend(kind string, row int) Legend {
	c := p.c
	switch kind {
	case "value":
		return Legend{Title: p.valueName(), Bar: &ColorBar{Min: p.vlo, Max: p.vhi, Map: Viridis}, Row: row}
	case "population":
		l := Legend{Title: "population", Row: row}
		for i, n := range c.ClassNames {
			l.Entries = append(l.Entries, Entry{Name: n, Color: ClassColor(i, p.ncls)})
		}
		return l
	}
	l := Legend{Title: "sample", Row: row}
	for _, g := range c.present() {
		name := c.DomainNames[g]
		if c.unseen(g) {
			name += " (unseen)"
		}
		l.Entries = append(l.Entries, Entry{Name: name, Color: SampleColor(g, len(c.DomainNames))})
	}
	return l
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

// Projection draws the cells in each view on components X and Y (options),
// one column per view (the method, then baselines), all panels of a view
// with the same axes: a row colored by population (or by value) when the
// cells carry one, and a row colored by sample, with unseen samples named
// so in the legend. A single view's two panels are drawn side by side.
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
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	f := &Figure{Title: "Cells projected on " + views[0].axis(x) + " and " + views[0].axis(y)}
	if len(views) > 1 {
		f.Title = fmt.Sprintf("Cells projected on components %d and %d", x+1, y+1)
	}
	w := vg.Length(5.2*float64(len(views))+2.2) * vg.Inch
	h := 9 * vg.Inch
	prim, kind := pt.primary()
	rows := [][2]any{}
	if kind != "sample" {
		rows = append(rows, [2]any{prim, kind})
	}
	rows = append(rows, [2]any{pt.sample, "sample"})
	if len(rows) == 1 {
		h = 5.4 * vg.Inch
	}
	area := float64(w/vg.Length(len(views))) * float64(h/vg.Length(len(rows))) * 0.55
	r, a := o.dotStyle(n, area)
	f.Panels = make([][]*Panel, len(rows))
	for j := range views {
		v := &views[j]
		xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
		if s := outsideNote(v, n, xr, yr); s != "" {
			f.Notes = append(f.Notes, s)
		}
		for i, row := range rows {
			col, kind := row[0].(func(int) color.NRGBA), row[1].(string)
			p := &Panel{
				Title:  v.Title + ": " + plural(kind),
				XLabel: v.axis(x), YLabel: v.axis(y),
				XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
				Dots: dotsOf(v, x, y, order, col, nil), DotRadius: r, DotAlpha: a,
			}
			f.Panels[i] = append(f.Panels[i], p)
		}
	}
	for i, row := range rows {
		f.Legends = append(f.Legends, pt.legend(row[1].(string), i))
	}
	if len(views) == 1 && len(rows) == 2 {
		// One view: its two panels side by side, the legends stacked.
		f.Panels = [][]*Panel{{f.Panels[0][0], f.Panels[1][0]}}
		f.Legends[1].Row = 0
		w, h = 12.6*vg.Inch, 5.8*vg.Inch
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

func plural(kind string) string {
	switch kind {
	case "population":
		return "populations"
	case "sample":
		return "samples"
	}
	return kind
}

// Pairs draws a grid of the first Components components (options) of a
// view: below the diagonal the cells colored by population (or value),
// above it colored by sample, and on the diagonal each sample's density of
// the component (a histogram of 60 bins over the axis range), so that
// shifts between samples show as shifted curves. Cells with neither
// population nor value are colored by sample below the diagonal, and the
// tiles above it stay empty.
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
	side := vg.Length(3.1*float64(k)) * vg.Inch
	w, h := side+2.6*vg.Inch, side+0.8*vg.Inch
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
	if kind == "sample" {
		f.Notes = append(f.Notes, "Below the diagonal the cells colored by sample; on the diagonal the density of each sample.")
	} else {
		f.Notes = append(f.Notes, fmt.Sprintf("Below the diagonal the cells colored by %s, above it by sample; on the diagonal the density of each sample.", kind))
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
				p.YMin, p.YMax = 0, 0
				densities(p, &c, column(v.Z, j), rs[j])
				if j == 0 {
					p.YLabel = "density of " + v.axis(i)
				}
			case i > j:
				p.Dots = dotsOf(&v, j, i, order, prim, nil)
			case kind == "sample":
				// Above the diagonal would repeat the panels below.
				continue
			default:
				p.Dots = dotsOf(&v, j, i, order, pt.sample, nil)
			}
			p.DotRadius, p.DotAlpha = r, a
			f.Panels[i][j] = p
		}
	}
	f.Legends = []Legend{pt.legend(kind, 0)}
	if kind != "sample" {
		f.Legends = append(f.Legends, pt.legend("sample", min(1, k-1)))
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// densities adds one histogram line per sample of the values to p and sets
// its Y range.
func densities(p *Panel, c *Cells, vals []float64, r axisRange) {
	const bins = 60
	width := (r.hi - r.lo) / bins
	top := 0.0
	for _, g := range c.present() {
		hist := make([]float64, bins)
		m := 0
		for i, v := range vals {
			if c.Domain[i] != g {
				continue
			}
			m++
			b := int((v - r.lo) / width)
			if b >= 0 && b < bins {
				hist[b]++
			}
		}
		l := Line{Color: SampleColor(g, len(c.DomainNames)), Width: vg.Points(1)}
		for b, v := range hist {
			d := v / (float64(m) * width)
			top = math.Max(top, d)
			l.X = append(l.X, r.lo+(float64(b)+0.5)*width)
			l.Y = append(l.Y, d)
		}
		p.Lines = append(p.Lines, l)
	}
	p.YMin, p.YMax = 0, top*1.05
	if top == 0 {
		p.YMax = 1
	}
}

// MaxSamplePanels bounds the number of panels of Samples: an 8 x 8 grid.
const MaxSamplePanels = 64

// Samples draws one panel per sample (small multiples), all with the same
// axes: the sample's cells colored by population (or value, or in the
// sample's color) over the cells of all samples in light gray, so a shift
// of one sample against the others shows. Unseen samples have a tinted
// panel and their title says so. At most MaxSamplePanels samples.
func Samples(c Cells, v View, o Options) (*Figure, error) {
	x, y := o.axes()
	if err := v.check(&c, max(x, y)+1); err != nil {
		return nil, err
	}
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	prim, kind := pt.primary()
	doms := c.present()
	if len(doms) > MaxSamplePanels {
		return nil, fmt.Errorf("figure: %d samples: small multiples draw at most %d", len(doms), MaxSamplePanels)
	}
	cols := int(math.Ceil(math.Sqrt(float64(len(doms)))))
	rows := (len(doms) + cols - 1) / cols
	w := vg.Length(2.6*float64(cols)+2.4) * vg.Inch
	h := vg.Length(2.4*float64(rows)+0.9) * vg.Inch
	xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
	f := &Figure{Title: fmt.Sprintf("%s: each sample on %s and %s", v.Title, v.axis(x), v.axis(y))}
	if s := outsideNote(&v, n, xr, yr); s != "" {
		f.Notes = append(f.Notes, s)
	}
	note := "In gray, the cells of all samples."
	if c.Unseen != nil {
		note += " Unseen samples (not used to fit) have a tinted panel and a red title."
	}
	f.Notes = append(f.Notes, note)
	back := dotsOf(&v, x, y, order, func(int) color.NRGBA { return backdropColor }, nil)
	perSample := 0
	for _, g := range doms {
		m := 0
		for _, d := range c.Domain {
			if d == g {
				m++
			}
		}
		perSample = max(perSample, m)
	}
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
		}
		p.DotRadius, p.DotAlpha = r, a
		if c.unseen(g) {
			p.Title += " (unseen)"
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
	if kind != "sample" {
		f.Legends = []Legend{pt.legend(kind, 0)}
	} else {
		f.Legends = []Legend{pt.legend("sample", 0)}
	}
	return o.finish(pt.note(f, kind), w, h), nil
}

// TrainingAndUnseen draws the layout of Figure 2 of the DICA paper
// (Muandet, Balduzzi & Schölkopf, ICML 2013): one column per view, the
// cells of the training samples in the top row (tinted panels) and those of
// the unseen samples in the bottom row, each column with the same axes in
// both rows, colored by value (the paper colors by the regression target),
// else by population, else by sample. It needs at least one training and
// one unseen sample (Cells.Unseen).
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
		return nil, fmt.Errorf("figure: %d cells of training samples and %d of unseen samples: need both", train, test)
	}
	n := c.N()
	pt := newPainter(&c)
	order := o.order(n)
	prim, kind := pt.primary()
	w := vg.Length(4.4*float64(len(views))+1.6) * vg.Inch
	h := 7 * vg.Inch
	cellArea := float64(w/vg.Length(len(views))) * float64(h/2) * 0.55
	rTrain, aTrain := o.dotStyle(train, cellArea)
	rTest, aTest := o.dotStyle(test, cellArea)
	f := &Figure{Title: "Training samples (top, tinted) and unseen samples (bottom)"}
	f.Panels = make([][]*Panel, 2)
	for j := range views {
		v := &views[j]
		xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
		if s := outsideNote(v, n, xr, yr); s != "" {
			f.Notes = append(f.Notes, s)
		}
		top := &Panel{
			Title: v.Title, XLabel: v.axis(x), YLabel: v.axis(y), Shade: trainShade,
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Dots:      dotsOf(v, x, y, order, prim, func(i int) bool { return !c.unseen(c.Domain[i]) }),
			DotRadius: rTrain, DotAlpha: aTrain,
		}
		bottom := &Panel{
			Title: v.Name + ": unseen samples", TitleColor: unseenColor, XLabel: v.axis(x), YLabel: v.axis(y),
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Dots:      dotsOf(v, x, y, order, prim, func(i int) bool { return c.unseen(c.Domain[i]) }),
			DotRadius: rTest, DotAlpha: aTest,
		}
		f.Panels[0] = append(f.Panels[0], top)
		f.Panels[1] = append(f.Panels[1], bottom)
	}
	f.Legends = []Legend{pt.legend(kind, 0)}
	return o.finish(pt.note(f, kind), w, h), nil
}
