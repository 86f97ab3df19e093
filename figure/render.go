package figure

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	stdfnt "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Type sizes, in points.
const (
	titleSize = 15
	noteSize  = 10
	panelSize = 11
	labelSize = 10
	// compactSize is the size of the titles of small multiples.
	compactSize = 9.5
	tickSize    = 9
	legendSize  = 10
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// Font returns the typeface of the text of every picture: Liberation Sans,
// which has the metrics of Arial and Helvetica. Pictures drawn with
// gonum/plot directly (benchmark plots) set plot.DefaultFont to it, so that
// all pictures share one font family.
func Font() font.Font { return sans }

func style(size vg.Length, bold bool, c color.Color) text.Style {
	f := sans
	if bold {
		f.Weight = stdfnt.WeightBold
	}
	return text.Style{Color: c, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// render draws the figure in the format to w.
func render(f *Figure, w io.Writer, format Format) (err error) {
	defer func() {
		// The SVG canvas panics when it cannot encode an embedded image.
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: %v", r)
		}
	}()
	var (
		vc     vg.CanvasSizer
		out    io.WriterTo
		raster int
	)
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(f.dpi()))
		vc, out, raster = c, vgimg.PngCanvas{Canvas: c}, f.dpi()
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(f.Width, f.Height))
		vc, out, raster = c, c, max(f.dpi(), 150)
	default:
		return fmt.Errorf("figure: unknown format %v", format)
	}
	dc := draw.New(vc)
	draw1(f, dc, raster)
	if format != SVG {
		_, err = out.WriteTo(w)
		return err
	}
	// The SVG canvas labels its embedded PNG images image/jpg, which
	// renderers such as librsvg refuse to draw: label them image/png. The
	// text is laid out with Liberation Sans, which has the metrics of Arial
	// and Helvetica: name those as fallbacks, so that text keeps its width
	// where Liberation Sans is not installed.
	var buf bytes.Buffer
	if _, err := out.WriteTo(&buf); err != nil {
		return err
	}
	b := bytes.ReplaceAll(buf.Bytes(), []byte(`xlink:href="data:image/jpg;base64,`), []byte(`xlink:href="data:image/png;base64,`))
	b = bytes.ReplaceAll(b, []byte(`font-family:Liberation Sans;`), []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
	_, err = w.Write(b)
	return err
}

// draw1 lays the figure out on the canvas: the title and notes at the top,
// the legends in a column at the right, the panels in the rest.
func draw1(f *Figure, dc draw.Canvas, raster int) {
	pad := vg.Points(10)
	area := dc
	area.Min.X += pad
	area.Max.X -= pad
	area.Min.Y += pad
	area.Max.Y -= pad
	top := area.Max.Y
	if f.Title != "" {
		sty := style(titleSize, true, black)
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
		for _, line := range wrap(sty, f.Title, area.Size().X) {
			dc.FillText(sty, vg.Point{X: area.Min.X, Y: top}, line)
			top -= sty.Height(line) * 1.15
		}
	}
	if len(f.Notes) > 0 {
		sty := style(noteSize, false, rgb(0x404040))
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
		top -= vg.Points(2)
		for _, n := range f.Notes {
			for _, line := range wrap(sty, n, area.Size().X) {
				dc.FillText(sty, vg.Point{X: area.Min.X, Y: top}, line)
				top -= sty.Height(line) * 1.2
			}
		}
	}
	area.Max.Y = top - vg.Points(4)

	lw := legendWidth(f.Legends, area.Size().X*0.3)
	grid := area
	if lw > 0 {
		grid.Max.X -= lw + vg.Points(12)
	}
	rows, cols := len(f.Panels), len(f.Panels[0])
	plots := make([][]*plot.Plot, rows)
	backs := &backdrops{}
	type spanned struct {
		p          *plot.Plot
		r, c       int
		rows, cols int
	}
	var spans []spanned
	for r, row := range f.Panels {
		plots[r] = make([]*plot.Plot, cols)
		for c, p := range row {
			if p == nil {
				continue
			}
			if p.RowSpan > 1 || p.ColSpan > 1 {
				// Drawn over the tiles it covers, apart from the
				// alignment of the others.
				spans = append(spans, spanned{p.plot(raster, backs), r, c, max(p.RowSpan, 1), max(p.ColSpan, 1)})
				continue
			}
			plots[r][c] = p.plot(raster, backs)
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(12)}
	canvases := plot.Align(plots, tiles, grid)
	for _, s := range spans {
		// The tiles it covers, as aligned: free of the others' axes.
		first, last := canvases[s.r][s.c], canvases[s.r+s.rows-1][s.c+s.cols-1]
		dc := grid
		dc.Min = vg.Point{X: first.Min.X, Y: last.Min.Y}
		dc.Max = vg.Point{X: last.Max.X - vg.Points(12), Y: first.Max.Y}
		p := f.Panels[s.r][s.c]
		dc.Max.Y -= titleBand(p)
		drawTitle(dc, s.p, p)
		s.p.Draw(dc)
	}
	for r := range plots {
		// The titles of a row take one band, so that the data areas
		// stay aligned.
		var band vg.Length
		for c, p := range plots[r] {
			if p != nil {
				band = max(band, titleBand(f.Panels[r][c]))
			}
		}
		for c, p := range plots[r] {
			if p == nil {
				continue
			}
			dc := canvases[r][c]
			dc.Max.Y -= band
			drawTitle(dc, p, f.Panels[r][c])
			p.Draw(dc)
		}
	}
	if lw == 0 {
		return
	}
	col := area
	col.Min.X = col.Max.X - lw
	y := make([]vg.Length, rows)
	for r := range y {
		y[r] = canvases[r][0].Max.Y
	}
	next := col.Max.Y
	for _, l := range f.Legends {
		at := next
		if l.Row >= 0 && l.Row < rows {
			at = min(next, y[l.Row])
		}
		next = drawLegend(dc, l, col.Min.X, at) - vg.Points(14)
	}
}

// titleStyle returns the style of a panel's title.
func titleStyle(p *Panel) text.Style {
	size := vg.Length(panelSize)
	if p.Compact {
		size = compactSize
	}
	c := color.Color(black)
	if p.TitleColor != (color.NRGBA{}) {
		c = p.TitleColor
	}
	sty := style(size, true, c)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	return sty
}

// titleBand returns the height a panel's title takes above its plot.
func titleBand(p *Panel) vg.Length {
	if p.Title == "" {
		return 0
	}
	return titleStyle(p).Height(p.Title) + vg.Points(5)
}

// drawTitle writes the panel's title centered over the data area of its
// plot pl drawn in dc, each line shortened to about the data area's width.
func drawTitle(dc draw.Canvas, pl *plot.Plot, p *Panel) {
	if p.Title == "" {
		return
	}
	sty := titleStyle(p)
	data := pl.DataCanvas(dc)
	lines := strings.Split(p.Title, "\n")
	for i, l := range lines {
		lines[i] = shorten(sty, l, data.Max.X-data.Min.X+vg.Points(12))
	}
	dc.FillText(sty, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: data.Max.Y + vg.Points(4)}, strings.Join(lines, "\n"))
}

// shorten returns s, or, when it is wider than w, s with characters of its
// middle replaced by an ellipsis until it fits ("Miltenyi…Well_A1.fcs"):
// the start and the end of a file name tell samples apart best.
func shorten(sty text.Style, s string, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for keep := len(r) - 1; keep > 1; keep-- {
		head := (keep + 1) / 2
		t := string(r[:head]) + "…" + string(r[len(r)-(keep-head):])
		if sty.Width(t) <= w {
			return t
		}
	}
	return string(r[:1]) + "…"
}

// wrap breaks s into lines no wider than w at spaces.
func wrap(sty text.Style, s string, w vg.Length) []string {
	if sty.Width(s) <= w {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && sty.Width(try) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	return append(lines, line)
}

const (
	swatchW = vg.Length(14)
	barW    = vg.Length(14)
	barH    = vg.Length(150)
)

// legendWidth returns the width of the legend column, at most limit.
func legendWidth(ls []Legend, limit vg.Length) vg.Length {
	var w vg.Length
	ts, es := style(legendSize, true, black), style(legendSize, false, black)
	for _, l := range ls {
		w = max(w, ts.Width(l.Title))
		for _, e := range l.Entries {
			w = max(w, swatchW+vg.Points(5)+es.Width(e.Name))
		}
		if l.Bar != nil {
			w = max(w, barW+vg.Points(5)+es.Width(tickLabel(l.Bar.Min))+vg.Points(30))
		}
	}
	// A little more than the text needs, for viewers of an SVG that
	// substitute a wider font.
	return min(w*1.08, limit)
}

// drawLegend draws a legend with its top left corner at (x, y) and returns
// the y of its bottom.
func drawLegend(dc draw.Canvas, l Legend, x, y vg.Length) vg.Length {
	ts, es := style(legendSize, true, black), style(legendSize, false, black)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	es.XAlign, es.YAlign = draw.XLeft, draw.YCenter
	if l.Title != "" {
		dc.FillText(ts, vg.Point{X: x, Y: y}, l.Title)
		y -= ts.Height(l.Title) * 1.3
	}
	lineH := es.Height("Mg") * 1.35
	for _, e := range l.Entries {
		cy := y - lineH/2
		dc.DrawGlyph(glyphStyle(e.Glyph, e.Color, vg.Points(4)), vg.Point{X: x + swatchW/2, Y: cy})
		dc.FillText(es, vg.Point{X: x + swatchW + vg.Points(5), Y: cy}, e.Name)
		y -= lineH
	}
	if b := l.Bar; b != nil {
		const steps = 64
		y -= vg.Points(4)
		for i := 0; i < steps; i++ {
			y0 := y - barH + barH*vg.Length(i)/steps
			y1 := y - barH + barH*vg.Length(i+1)/steps + vg.Points(0.3)
			dc.FillPolygon(b.Map((float64(i)+0.5)/steps), []vg.Point{{X: x, Y: y0}, {X: x + barW, Y: y0}, {X: x + barW, Y: y1}, {X: x, Y: y1}})
		}
		if b.Max > b.Min {
			for _, t := range (readableTicks{}).Ticks(b.Min, b.Max) {
				if t.Label == "" {
					continue
				}
				ly := y - barH + barH*vg.Length((t.Value-b.Min)/(b.Max-b.Min))
				dc.StrokeLine2(draw.LineStyle{Color: black, Width: vg.Points(0.7)}, x+barW, ly, x+barW+vg.Points(3), ly)
				dc.FillText(es, vg.Point{X: x + barW + vg.Points(5), Y: ly}, t.Label)
			}
		}
		y -= barH + vg.Points(6)
	}
	return y
}

// tickLabel formats a number with 3 significant digits.
func tickLabel(v float64) string {
	return fmt.Sprintf("%.3g", v)
}

func glyphStyle(g Glyph, c color.NRGBA, r vg.Length) draw.GlyphStyle {
	sty := draw.GlyphStyle{Color: c, Radius: r}
	switch g {
	case Ring:
		sty.Shape = draw.RingGlyph{}
	case Square:
		sty.Shape = draw.SquareGlyph{}
	case Triangle:
		sty.Shape = draw.TriangleGlyph{}
	case Cross:
		sty.Shape = draw.CrossGlyph{}
	default:
		sty.Shape = draw.CircleGlyph{}
	}
	return sty
}

// plot builds the gonum plot of a panel; raster is the resolution of the
// cells' image in dots per inch.
func (p *Panel) plot(raster int, backs *backdrops) *plot.Plot {
	pl := plot.New()
	// The title is drawn by draw1 (drawTitle), shortened to fit.
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Padding = vg.Points(2)
		a.Label.Padding = vg.Points(2)
	}
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = p.XMin, p.XMax, p.YMin, p.YMax
	ticks := readableTicks{few: p.Compact}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = ticks, ticks
	if p.HideXTickLabels {
		pl.X.Tick.Marker = unlabelled{ticks}
	}
	if p.HideYTickLabels {
		pl.Y.Tick.Marker = unlabelled{ticks}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	}
	if p.XTicks != nil {
		ts := make(plot.ConstantTicks, len(p.XTicks))
		for i, t := range p.XTicks {
			ts[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		pl.X.Tick.Marker = ts
	}
	if p.Shade != (color.NRGBA{}) {
		pl.Add(shade{p.Shade})
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridColor, gridColor
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	if p.XTicks != nil {
		g.Vertical.Color = nil
	}
	pl.Add(g)
	if len(p.Backdrop)+len(p.Dots) > 0 {
		pl.Add(&dots{p: p, dpi: raster, backs: backs})
	}
	for _, l := range p.Lines {
		pts := make(plotter.XYs, len(l.X))
		for i := range l.X {
			pts[i] = plotter.XY{X: l.X[i], Y: l.Y[i]}
		}
		pl.Add(&polyline{pts: pts, sty: draw.LineStyle{Color: l.Color, Width: max(l.Width, vg.Points(1))}, dashed: l.Dashed})
	}
	if len(p.Marks) > 0 {
		pl.Add(marks(p.Marks))
	}
	if len(p.Labels) > 0 {
		pl.Add(labels(p.Labels))
	}
	return pl
}

// readableTicks label about 5 round values (1, 2, 2.5 or 5 times a power
// of 10), or about 3 when few is set (small panels), with as many decimals
// as the step needs, and put 4 or 5 minor ticks between them.
type readableTicks struct{ few bool }

func (rt readableTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}}
	}
	// The step of 1, 2, 2.5 or 5 times a power of 10 that gives closest to
	// 5 (or 3) intervals (2.5 only when clearly better).
	want := 5.0
	if rt.few {
		want = 3.5
	}
	p := math.Pow(10, math.Floor(math.Log10((hi-lo)/want)))
	step, minor, best := p, 5, math.Inf(1)
	for _, m := range []struct {
		f       float64
		n       int
		penalty float64
	}{{1, 5, 0}, {2, 4, 0}, {2.5, 5, 1}, {5, 5, 0}, {10, 5, 0}, {20, 4, 0}} {
		if cost := math.Abs((hi-lo)/(m.f*p)-want) + m.penalty; cost < best {
			step, minor, best = m.f*p, m.n, cost
		}
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	if math.Abs(step/math.Pow(10, math.Floor(math.Log10(step)+1e-9))-2.5) < 1e-9 {
		dec++
	}
	sci := math.Max(math.Abs(lo), math.Abs(hi)) >= 1e5 || step < 1e-4
	var ts []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for v := first; v <= hi+1e-9*step; v += step {
		if math.Abs(v) < 1e-9*step {
			v = 0
		}
		l := strconv.FormatFloat(v, 'f', dec, 64)
		if sci {
			l = strings.Replace(strconv.FormatFloat(v, 'g', 3, 64), "e-0", "e-", 1)
			l = strings.Replace(l, "e+0", "e", 1)
			l = strings.Replace(l, "e+", "e", 1)
		}
		ts = append(ts, plot.Tick{Value: v, Label: l})
	}
	sub := step / float64(minor)
	for v := math.Ceil(lo/sub-1e-9) * sub; v <= hi+1e-9*sub; v += sub {
		if r := math.Abs(math.Remainder(v, step)); r > 1e-6*step {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// unlabelled keeps the ticks of a marker without their labels.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// logTicks label the powers of 10 (every second or third when the range
// spans more than 8 or 16 decades) as 0.01, 0.1, 1, 10, 100, and 1e-3 or
// 1e3 beyond, with minor ticks at 2 to 9 times a power of 10 when the
// range spans at most 6 decades.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	every := 1
	switch {
	case b-a > 16:
		every = 3
	case b-a > 8:
		every = 2
	}
	var ts []plot.Tick
	for k := a; k <= b; k++ {
		v := math.Pow(10, float64(k))
		if v >= lo && v <= hi {
			l := ""
			if k%every == 0 {
				l = fmt.Sprintf("1e%d", k)
				if k >= -2 && k <= 2 {
					l = strconv.FormatFloat(v, 'f', -1, 64)
				}
			}
			ts = append(ts, plot.Tick{Value: v, Label: l})
		}
		if b-a <= 6 {
			for m := 2; m <= 9; m++ {
				if u := float64(m) * v; u >= lo && u <= hi {
					ts = append(ts, plot.Tick{Value: u})
				}
			}
		}
	}
	return ts
}

// shade fills the data area.
type shade struct{ c color.NRGBA }

func (s shade) Plot(c draw.Canvas, _ *plot.Plot) {
	c.FillPolygon(s.c, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// polyline is a line clipped to the data area.
type polyline struct {
	pts    plotter.XYs
	sty    draw.LineStyle
	dashed bool
}

func (l *polyline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pts := make([]vg.Point, 0, len(l.pts))
	for _, q := range l.pts {
		if p.Y.Scale != nil {
			if _, isLog := p.Y.Scale.(plot.LogScale); isLog && !(q.Y > 0) {
				continue
			}
		}
		pts = append(pts, vg.Point{X: trX(q.X), Y: trY(q.Y)})
	}
	sty := l.sty
	if l.dashed {
		sty.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	c.StrokeLines(sty, c.ClipLinesXY(pts)...)
}

type marks []Mark

func (ms marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, m := range ms {
		r := m.Radius
		if r == 0 {
			r = vg.Points(3.5)
		}
		c.DrawGlyph(glyphStyle(m.Glyph, m.Color, r), vg.Point{X: trX(m.X), Y: trY(m.Y)})
	}
}

type labels []Label

func (ls labels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, l := range ls {
		sty := style(tickSize, false, l.Color)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		at := vg.Point{X: trX(l.X), Y: trY(l.Y) + vg.Points(5)}
		if l.Below {
			sty.YAlign = draw.YTop
			at.Y = trY(l.Y) - vg.Points(5)
		}
		c.FillText(sty, at, l.Text)
	}
}

// dots rasterizes a panel's cells at the output's resolution as
// anti-aliased discs, composited over the plot: pixel for pixel into a PNG,
// as an embedded image in SVG. The backdrop and the dots are two layers,
// each blended independently of the order of its dots (a layer), the dots
// over the backdrop: where several populations or samples overlap, a
// pixel shows the mean of their colors weighted by how many of their dots
// cover it, so none hides another whatever the order they are drawn in.
type dots struct {
	p     *Panel
	dpi   int
	backs *backdrops
}

// backdrops keeps the last backdrop layer drawn, so that small multiples
// that share one backdrop (the same dots, axes, size in pixels and style)
// draw it once; the others reuse it at the first one's sub-pixel offset,
// less than a pixel from where they would draw it.
type backdrops struct {
	key backdropKey
	buf []float32 // premultiplied
}

type backdropKey struct {
	first                  *Dot
	n, w, h                int
	radius, alpha          float64
	xMin, xMax, yMin, yMax float64
}

func (d *dots) Plot(c draw.Canvas, p *plot.Plot) {
	dpi := float64(d.dpi)
	img, direct := baseCanvas(c.Canvas).(*vgimg.Canvas)
	if direct {
		dpi = img.DPI()
	}
	toPx := func(l vg.Length) float64 { return float64(l) / 72 * dpi }
	x0, x1 := math.Floor(toPx(c.Min.X)), math.Ceil(toPx(c.Max.X))
	y0, y1 := math.Floor(toPx(c.Min.Y)), math.Ceil(toPx(c.Max.Y))
	w, h := int(x1-x0), int(y1-y0)
	if w <= 0 || h <= 0 {
		return
	}
	trX, trY := p.Transforms(&c)
	radius := toPx(d.p.DotRadius)
	if radius <= 0 {
		radius = toPx(vg.Points(1))
	}
	alpha := d.p.DotAlpha
	if !(alpha > 0 && alpha <= 1) {
		alpha = 1
	}
	buf := make([]float32, 4*w*h)
	var key backdropKey
	if len(d.p.Backdrop) > 0 {
		key = backdropKey{first: &d.p.Backdrop[0], n: len(d.p.Backdrop), w: w, h: h, radius: radius, alpha: alpha,
			xMin: d.p.XMin, xMax: d.p.XMax, yMin: d.p.YMin, yMax: d.p.YMax}
	}
	cached := d.backs != nil && key.first != nil && d.backs.key == key
	if cached {
		copy(buf, d.backs.buf)
	}
	l := newLayer(w, h)
	for i, ds := range [][]Dot{d.p.Backdrop, d.p.Dots} {
		if len(ds) == 0 || (i == 0 && cached) {
			continue
		}
		l.reset()
		var weight map[color.NRGBA]float32
		if i == 1 && d.p.Balance {
			weight = balance(ds)
		}
		for _, q := range ds {
			col := q.Color
			if i == 0 {
				col = backdropColor
			}
			wt := float32(1)
			if weight != nil {
				wt = weight[col]
			}
			// Image coordinates: x to the right, y down from the top.
			l.disc(toPx(trX(q.X))-x0, y1-toPx(trY(q.Y)), radius, float32(alpha), wt, col)
		}
		l.over(buf)
		if i == 0 && d.backs != nil {
			d.backs.key, d.backs.buf = key, slices.Clone(buf)
		}
	}
	if direct {
		if dst, ok := img.Image().(*image.RGBA); ok {
			H := dst.Bounds().Dy()
			compositeRGBA(dst, buf, w, h, int(x0), H-int(y1))
			return
		}
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		a := buf[4*i+3]
		if a <= 0 {
			continue
		}
		out.Pix[4*i+0] = to8(buf[4*i+0] / a)
		out.Pix[4*i+1] = to8(buf[4*i+1] / a)
		out.Pix[4*i+2] = to8(buf[4*i+2] / a)
		out.Pix[4*i+3] = to8(a)
	}
	rect := vg.Rectangle{
		Min: vg.Point{X: vg.Length(x0 / dpi * 72), Y: vg.Length(y0 / dpi * 72)},
		Max: vg.Point{X: vg.Length(x1 / dpi * 72), Y: vg.Length(y1 / dpi * 72)},
	}
	c.DrawImage(rect, out)
}

// baseCanvas returns the canvas that draw.Canvas values (the tiles of a
// grid) wrap.
func baseCanvas(v vg.Canvas) vg.Canvas {
	for {
		switch c := v.(type) {
		case draw.Canvas:
			v = c.Canvas
		case *draw.Canvas:
			v = c.Canvas
		default:
			return v
		}
	}
}

func to8(v float32) uint8 {
	if v >= 1 {
		return 255
	}
	if v <= 0 {
		return 0
	}
	return uint8(v*255 + 0.5)
}

// layer accumulates translucent discs independently of their order: per
// pixel, the sum of the dots' colors weighted by their opacity, the sum of
// the opacities and the product of the transparencies (1 - opacity). A
// pixel's color is the weighted mean color and its opacity 1 minus the
// product: one dot of opacity a gives its color at opacity a, two give
// 1 - (1 - a)^2 as when drawn one over the other, and a dot drawn before or
// after the others changes nothing.
type layer struct {
	w, h int
	acc  []float32 // per pixel: weighted R, G, B, sum of weights, transparency
}

func newLayer(w, h int) *layer {
	l := &layer{w: w, h: h, acc: make([]float32, 5*w*h)}
	l.reset()
	return l
}

func (l *layer) reset() {
	for i := 0; i < len(l.acc); i += 5 {
		l.acc[i], l.acc[i+1], l.acc[i+2], l.acc[i+3], l.acc[i+4] = 0, 0, 0, 0, 1
	}
}

// disc adds an anti-aliased disc of radius r (pixels) centered at (cx, cy)
// with opacity alpha and color col.
func (l *layer) disc(cx, cy, r float64, alpha, weight float32, col color.NRGBA) {
	cr, cg, cb := float32(col.R)/255, float32(col.G)/255, float32(col.B)/255
	lx, hx := max(int(math.Floor(cx-r-0.5)), 0), min(int(math.Ceil(cx+r+0.5)), l.w-1)
	ly, hy := max(int(math.Floor(cy-r-0.5)), 0), min(int(math.Ceil(cy+r+0.5)), l.h-1)
	for y := ly; y <= hy; y++ {
		dy := float64(y) + 0.5 - cy
		for x := lx; x <= hx; x++ {
			dx := float64(x) + 0.5 - cx
			cov := r + 0.5 - math.Sqrt(dx*dx+dy*dy)
			if cov <= 0 {
				continue
			}
			a := alpha * float32(min(cov, 1))
			p := l.acc[5*(y*l.w+x):][:5]
			wa := weight * a
			p[0] += cr * wa
			p[1] += cg * wa
			p[2] += cb * wa
			p[3] += wa
			p[4] *= 1 - a
		}
	}
}

// balance returns the weight of each color of the dots: the number of dots
// over the number of colors times the number of dots of that color, so the
// dots of each color weigh as much in all.
func balance(ds []Dot) map[color.NRGBA]float32 {
	n := map[color.NRGBA]int{}
	for _, d := range ds {
		n[d.Color]++
	}
	w := make(map[color.NRGBA]float32, len(n))
	for c, k := range n {
		w[c] = float32(len(ds)) / float32(len(n)*k)
	}
	return w
}

// over composites the layer over the premultiplied buffer dst of the same
// size.
func (l *layer) over(dst []float32) {
	for i := 0; i < l.w*l.h; i++ {
		p := l.acc[5*i:][:5]
		if p[3] <= 0 {
			continue
		}
		a := 1 - p[4]
		k := a / p[3]
		d := dst[4*i:][:4]
		for j := 0; j < 3; j++ {
			d[j] = p[j]*k + d[j]*p[4]
		}
		d[3] = a + d[3]*p[4]
	}
}

// compositeRGBA draws the premultiplied w x h buffer over dst with its top
// left corner at (ox, oy).
func compositeRGBA(dst *image.RGBA, buf []float32, w, h, ox, oy int) {
	b := dst.Bounds()
	for y := 0; y < h; y++ {
		dy := oy + y
		if dy < b.Min.Y || dy >= b.Max.Y {
			continue
		}
		for x := 0; x < w; x++ {
			dx := ox + x
			if dx < b.Min.X || dx >= b.Max.X {
				continue
			}
			s := buf[4*(y*w+x):][:4]
			if s[3] <= 0 {
				continue
			}
			i := dst.PixOffset(dx, dy)
			d := dst.Pix[i : i+4]
			k := 1 - s[3]
			for j := 0; j < 4; j++ {
				d[j] = to8(s[j] + float32(d[j])/255*k)
			}
		}
	}
}
