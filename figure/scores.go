package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/plot/vg"
)

// Scores are the per-sample scores of several methods: Score[i][j] is the
// score of method i on test sample j (NaN when the method was not tested
// on it).
type Scores struct {
	// Metric names the score ("accuracy", "rmse").
	Metric  string
	Methods []string
	Domains []string
	Score   [][]float64
	// Min and Max, when Max > Min, are the range a score can take
	// (accuracy: 0 and 1): the bars of plus and minus one standard
	// deviation stop at them, and so does the axis.
	Min, Max float64
}

// EvalScores draws the score of each method on each test sample: a column
// per method, at the method's tick the mean with a bar of plus and minus
// one sample standard deviation (within Scores.Min and Max), and at its
// right a dot per sample, a thin line joining the same sample across
// methods (so a method that helps one sample and hurts another shows),
// drawn behind the bars. The tick label gives the mean and the standard
// deviation. Up to MaxSampleColors samples each have a color and a legend
// entry; beyond, the dots are gray and each method's lowest score is named.
func EvalScores(s Scores, o Options) (*Figure, error) {
	if len(s.Methods) == 0 || len(s.Domains) == 0 {
		return nil, fmt.Errorf("figure: %d methods and %d test samples: need at least one of each", len(s.Methods), len(s.Domains))
	}
	if len(s.Score) != len(s.Methods) {
		return nil, fmt.Errorf("figure: scores for %d methods, %d names", len(s.Score), len(s.Methods))
	}
	bounded := s.Max > s.Min
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, row := range s.Score {
		if len(row) != len(s.Domains) {
			return nil, fmt.Errorf("figure: method %s has %d scores for %d samples", s.Methods[i], len(row), len(s.Domains))
		}
		for _, v := range row {
			if math.IsInf(v, 0) {
				return nil, fmt.Errorf("figure: method %s: score %v", s.Methods[i], v)
			}
			if bounded && (v < s.Min || v > s.Max) {
				return nil, fmt.Errorf("figure: method %s: score %v is outside [%v, %v]", s.Methods[i], v, s.Min, s.Max)
			}
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return nil, errors.New("figure: no scores")
	}
	metric := s.Metric
	if metric == "" {
		metric = "score"
	}
	p := &Panel{XLabel: "method", YLabel: metric + " per test sample", XMin: -0.4, XMax: float64(len(s.Methods)) - 0.45}
	nd := len(s.Domains)
	colored := nd <= MaxSampleColors
	// The bars' ends count in the range too.
	type summary struct {
		ok           bool
		mean, sd     float64
		barLo, barHi float64
		lowest       int
	}
	sums := make([]summary, len(s.Methods))
	for i := range s.Methods {
		var vals []float64
		low := -1
		for j, v := range s.Score[i] {
			if !math.IsNaN(v) {
				vals = append(vals, v)
				if low < 0 || v < s.Score[i][low] {
					low = j
				}
			}
		}
		if len(vals) == 0 {
			continue
		}
		mean, sd := meanSD(vals)
		bl, bh := mean-sd, mean+sd
		if bounded {
			bl, bh = math.Max(bl, s.Min), math.Min(bh, s.Max)
		}
		sums[i] = summary{true, mean, sd, bl, bh, low}
		lo, hi = math.Min(lo, bl), math.Max(hi, bh)
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(0.01, 0.05*math.Abs(hi))
	}
	p.YMin, p.YMax = lo-0.06*span, hi+0.06*span
	if !colored {
		// Room above for the names of the lowest samples is not needed:
		// they are written beside their dots.
		p.YMin = lo - 0.1*span
	}
	if bounded {
		pad := 0.015 * span
		p.YMin, p.YMax = math.Max(p.YMin, s.Min-pad), math.Min(p.YMax, s.Max+pad)
	}
	for i, m := range s.Methods {
		label := m
		if sums[i].ok {
			label += fmt.Sprintf("\n%.4f ± %.4f", sums[i].mean, sums[i].sd)
		}
		p.XTicks = append(p.XTicks, Tick{Value: float64(i), Label: label})
	}
	for j := range s.Domains {
		c, line := SampleColor(j, nd), SampleColor(j, nd)
		line.A = 110
		if !colored {
			c, line = OtherColor, densityGray
		}
		var l Line
		for i := range s.Methods {
			v := s.Score[i][j]
			if math.IsNaN(v) {
				continue
			}
			x := float64(i) + spread(j, nd)
			l.X, l.Y = append(l.X, x), append(l.Y, v)
			p.Marks = append(p.Marks, Mark{X: x, Y: v, Color: c, Glyph: Circle, Radius: vg.Points(3)})
		}
		if len(l.X) > 1 {
			l.Color, l.Width = line, vg.Points(0.8)
			p.Lines = append(p.Lines, l)
		}
	}
	// The bars after the lines, over a white band, so that no line
	// crosses them.
	for i, sm := range sums {
		if !sm.ok {
			continue
		}
		x := float64(i)
		white := color.NRGBA{R: 255, G: 255, B: 255, A: 255}
		p.Lines = append(p.Lines,
			Line{X: []float64{x, x}, Y: []float64{sm.barLo, sm.barHi}, Color: white, Width: vg.Points(7)},
			Line{X: []float64{x - 0.07, x + 0.07}, Y: []float64{sm.mean, sm.mean}, Color: white, Width: vg.Points(6)},
			Line{X: []float64{x, x}, Y: []float64{sm.barLo, sm.barHi}, Color: black, Width: vg.Points(1.5)},
			Line{X: []float64{x - 0.06, x + 0.06}, Y: []float64{sm.mean, sm.mean}, Color: black, Width: vg.Points(2.5)})
		if !colored {
			v := s.Score[i][sm.lowest]
			p.Labels = append(p.Labels, Label{X: float64(i) + spread(sm.lowest, nd), Y: v, Text: s.Domains[sm.lowest], Color: black, Below: true})
		}
	}
	f := &Figure{Title: capitalize(metric) + " of each method on each test sample", Panels: [][]*Panel{{p}}}
	note := "Black bar: the mean over the test samples ± one standard deviation (under each method's name)"
	if bounded {
		note += fmt.Sprintf(", cut at %g and %g", s.Min, s.Max)
	}
	note += "; at its right, one dot per test sample, joined across methods."
	if !colored {
		note += fmt.Sprintf(" %d test samples are more than colors tell apart: the lowest of each method is named.", nd)
	}
	f.Notes = append(f.Notes, note)
	if colored {
		l := Legend{Title: "test sample"}
		for j, d := range s.Domains {
			l.Entries = append(l.Entries, Entry{Name: d, Color: SampleColor(j, nd), Glyph: Circle})
		}
		f.Legends = []Legend{l}
	}
	w := vg.Length(math.Min(maxInches, 4.5+1.8*float64(len(s.Methods)))) * vg.Inch
	return o.finish(f, w, 6*vg.Inch), nil
}

// spread offsets sample j of n horizontally at the right of its method's
// bar, so equal scores do not hide one another.
func spread(j, n int) float64 {
	if n == 1 {
		return 0.2
	}
	return 0.1 + 0.25*float64(j)/float64(n-1)
}

// meanSD returns the mean and the sample standard deviation (0 for one
// value).
func meanSD(v []float64) (float64, float64) {
	var s float64
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var q float64
	for _, x := range v {
		q += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(q / float64(len(v)-1))
}

// capitalize returns s with its first letter in upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
