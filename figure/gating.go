package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/csvio"
)

// Gating describes the cells of a Gated figure: the cells (their samples,
// the labels of the reference's cells, the palette of the model's
// populations and the cells per sample before subsampling), which samples
// are the reference, and the population a classifier predicts for each
// cell.
type Gating struct {
	Cells
	// Reference marks, per domain, the reference samples, whose cells are
	// drawn by their labels (Cells.Label: the hand gates a classifier
	// learned from; a cell without a label is drawn as unassigned). The
	// other domains are the new samples, whose cells are drawn by their
	// predicted population.
	Reference []bool
	// Predicted holds each cell's predicted population, an index into
	// Populations, or -1 for a cell left unassigned.
	Predicted   []int
	Populations []string
	// MinConfidence is the confidence below which the classifier left
	// cells unassigned (0: it assigned every cell); the notes say it.
	MinConfidence float64
}

// UnassignedColor is the color of the cells a classifier leaves
// unassigned, and of reference cells without a label: a gray lighter than
// OtherColor.
var UnassignedColor = rgb(0xa8a8a8)

// unassignedName is the name given to unassigned cells while counting.
const unassignedName = "\x00unassigned"

func (g *Gating) check(n int) error {
	if len(g.Reference) != len(g.DomainNames) {
		return fmt.Errorf("figure: %d reference marks for %d domains", len(g.Reference), len(g.DomainNames))
	}
	if len(g.Predicted) != n {
		return fmt.Errorf("figure: %d predictions for %d cells", len(g.Predicted), n)
	}
	for i, p := range g.Predicted {
		if p < -1 || p >= len(g.Populations) {
			return fmt.Errorf("figure: cell %d: predicted population %d, want -1 (unassigned) or 0 to %d", i+1, p, len(g.Populations)-1)
		}
	}
	return nil
}

// name returns the population a cell is drawn as: its label in a
// reference sample, its predicted population in a new one, unassignedName
// for neither.
func (g *Gating) name(i int) string {
	if g.Reference[g.Domain[i]] {
		if g.Label == nil || g.Label[i] < 0 {
			return unassignedName
		}
		return g.ClassNames[g.Label[i]]
	}
	if p := g.Predicted[i]; p >= 0 {
		return g.Populations[p]
	}
	return unassignedName
}

// Gated draws how a classifier gates new samples beside the reference it
// learned from, on components X and Y (options) of the view: a first panel
// of the reference samples' cells colored by their (hand-gated) labels, in
// a tinted panel, then one panel per new sample (small multiples, all with
// the same axes) of its cells colored by the population the classifier
// predicts. A predicted population has the color of that population in the
// reference and in every picture of the model (Cells.Palette); unassigned
// cells are in UnassignedColor. No picture colors more than
// MaxSampleColors populations: beyond, those with the fewest cells drawn
// share OtherColor. The title of a new sample's panel says, when its cells
// have labels, the share of the drawn labelled cells predicted as labelled.
// It needs a reference sample and a new one with cells, and at most
// MaxSamplePanels panels.
func Gated(g Gating, v View, o Options) (*Figure, error) {
	x, y := o.axes()
	if err := v.check(&g.Cells, max(x, y)+1); err != nil {
		return nil, err
	}
	n := g.N()
	if err := g.check(n); err != nil {
		return nil, err
	}
	var refs, news []int
	for _, d := range g.present() {
		if g.Reference[d] {
			refs = append(refs, d)
		} else {
			news = append(news, d)
		}
	}
	switch {
	case len(refs) == 0:
		return nil, errors.New("figure: no cell of a reference sample to draw")
	case len(news) == 0:
		return nil, errors.New("figure: no cell of a new sample to draw")
	case len(news)+1 > MaxSamplePanels:
		return nil, fmt.Errorf("figure: %d new %s: small multiples draw at most %d beside the reference", len(news), g.term(true), MaxSamplePanels-1)
	}
	pal := g.palette()

	// The populations drawn, in palette order, and their colors: at most
	// MaxSampleColors, the others grouped in OtherColor.
	counts := map[string]int{}
	for i := range n {
		counts[g.name(i)]++
	}
	unassigned := counts[unassignedName] > 0
	delete(counts, unassignedName)
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	byPlace := func(a, b string) int {
		if pa, pb := pal.Has(a), pal.Has(b); pa != pb {
			return boolCompare(!pa, !pb)
		} else if pa {
			return pal.index[a] - pal.index[b]
		}
		return csvio.NaturalCompare(a, b)
	}
	slices.SortFunc(names, byPlace)
	grouped := map[string]bool{}
	if len(names) > MaxSampleColors {
		big := slices.Clone(names)
		slices.SortStableFunc(big, func(a, b string) int { return counts[b] - counts[a] })
		for _, name := range big[MaxSampleColors-1:] {
			grouped[name] = true
		}
	}
	colorOf := func(name string) color.NRGBA {
		switch {
		case name == unassignedName:
			return UnassignedColor
		case grouped[name]:
			return OtherColor
		}
		return pal.Color(name)
	}
	colors := make([]color.NRGBA, n)
	for i := range colors {
		colors[i] = colorOf(g.name(i))
	}

	panels := 1 + len(news)
	cols := panels
	if panels > 4 {
		cols = int(math.Ceil(math.Sqrt(float64(panels))))
	}
	rows := (panels + cols - 1) / cols
	side := math.Min(3.4, (maxInches-legendInches)/float64(cols))
	w := vg.Length(side*float64(cols)+legendInches) * vg.Inch

	newNames := make([]string, len(news))
	for k, d := range news {
		newNames[k] = g.DomainNames[d]
	}
	refNames := make([]string, len(refs))
	for k, d := range refs {
		refNames[k] = g.DomainNames[d]
	}
	what := fmt.Sprintf("%d new %s", len(news), g.term(true))
	if len(news) <= 3 {
		what = listNames(newNames)
	}
	f := &Figure{Title: fmt.Sprintf("%s: the populations predicted for %s, beside the hand-gated reference", v.Title, what)}
	xr, yr := rangeOf(column(v.Z, x)), rangeOf(column(v.Z, y))
	if s := outsideNote(&v, n, xr, yr); s != "" {
		f.Notes = append(f.Notes, s)
	}
	f.Notes = append(f.Notes, fmt.Sprintf("First panel, tinted: the cells of the reference %s by their hand-gated populations; then each new %s's cells by the population the classifier predicts, all on %s and %s.",
		g.term(len(refs) > 1), g.term(false), v.axis(x), v.axis(y)))
	if unassigned {
		un := "In gray, cells without a population"
		if g.MinConfidence > 0 {
			un += fmt.Sprintf(": the classifier's confidence in them is below %s", strconv.FormatFloat(g.MinConfidence, 'g', -1, 64))
		}
		f.Notes = append(f.Notes, un+".")
	}
	if len(grouped) > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("%d populations are more than colors tell apart: the %d with the fewest cells drawn share one dark gray.", len(names), len(grouped)))
	}
	f.Notes = append(f.Notes, blendNote)

	order := o.order(n)
	col := func(i int) color.NRGBA { return colors[i] }
	perPanel := 0
	inPanel := make([]func(int) bool, 0, panels)
	inPanel = append(inPanel, func(i int) bool { return g.Reference[g.Domain[i]] })
	for _, d := range news {
		inPanel = append(inPanel, func(i int) bool { return g.Domain[i] == d })
	}
	dots := make([][]Dot, panels)
	for k, keep := range inPanel {
		dots[k] = dotsOf(&v, x, y, order, col, keep)
		perPanel = max(perPanel, len(dots[k]))
	}
	// Each row: the panel, nearly square, and its title of two lines.
	h := vg.Length((side*0.95+0.45)*float64(rows)+headInches+0.16*float64(noteLines(f.Notes, float64(w/vg.Inch)))) * vg.Inch
	r, a := o.dotStyle(perPanel, float64(w/vg.Length(cols))*float64(vg.Length(side)*vg.Inch)*0.5)
	f.Panels = make([][]*Panel, rows)
	for i := range f.Panels {
		f.Panels[i] = make([]*Panel, cols)
	}
	for k := range panels {
		i, j := k/cols, k%cols
		p := &Panel{
			XMin: xr.lo, XMax: xr.hi, YMin: yr.lo, YMax: yr.hi,
			Dots: dots[k], DotRadius: r, DotAlpha: a, Balance: true,
		}
		var total int64
		if k == 0 {
			p.Title = "reference: " + strings.Join(refNames, ", ") + " (hand-gated)"
			p.Shade = trainShade
			for _, d := range refs {
				total += g.total(d)
			}
		} else {
			d := news[k-1]
			p.Title = g.DomainNames[d] + ": predicted"
			total = g.total(d)
		}
		if g.Total != nil {
			p.Title += fmt.Sprintf("\n%s of %s cells", count(len(p.Dots)), count64(total))
		}
		if k > 0 {
			if right, labelled := g.agreement(p.Dots); labelled > 0 {
				p.Title += fmt.Sprintf(", %.1f%% as gated", 100*float64(right)/float64(labelled))
			}
		}
		if k+cols >= panels {
			p.XLabel = v.axis(x)
		}
		if j == 0 {
			p.YLabel = v.axis(y)
		}
		f.Panels[i][j] = p
	}

	l := Legend{Title: "population"}
	for _, name := range names {
		if grouped[name] {
			continue
		}
		label := name
		if !pal.Has(name) {
			label += " (other)"
		}
		l.Entries = append(l.Entries, Entry{Name: label, Color: pal.Color(name)})
	}
	if len(grouped) > 0 {
		l.Entries = append(l.Entries, Entry{Name: fmt.Sprintf("%d other populations", len(grouped)), Color: OtherColor})
	}
	if unassigned {
		l.Entries = append(l.Entries, Entry{Name: "unassigned", Color: UnassignedColor})
	}
	f.Legends = []Legend{l}
	return o.finish(f, w, h), nil
}

// total returns the cells of domain d before subsampling (the cells drawn
// when not known).
func (g *Gating) total(d int) int64 {
	if g.Total != nil {
		return g.Total[d]
	}
	var k int64
	for _, e := range g.Domain {
		if e == d {
			k++
		}
	}
	return k
}

// agreement counts, among the cells of dots that have a label, those
// predicted as their label (right) and all of them (labelled).
func (g *Gating) agreement(dots []Dot) (right, labelled int) {
	if g.Label == nil {
		return 0, 0
	}
	for _, dot := range dots {
		i := dot.Cell
		if g.Label[i] < 0 {
			continue
		}
		labelled++
		if p := g.Predicted[i]; p >= 0 && g.Populations[p] == g.ClassNames[g.Label[i]] {
			right++
		}
	}
	return right, labelled
}

// listNames joins names with commas, "and" before the last.
func listNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// noteLines estimates the lines the notes take in a picture of width
// inches.
func noteLines(notes []string, width float64) int {
	per := max(20, int(width*13))
	k := 0
	for _, s := range notes {
		k += (len(s) + per - 1) / per
	}
	return k
}
