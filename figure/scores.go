package figure

import (
	"errors"
	"fmt"
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
}

// EvalScores draws the score of each method on each test sample: a column
// per method, a dot per sample in the sample's color with a thin line
// joining the same sample across methods (so a method that helps one
// sample and hurts another shows), and each method's mean with a bar of
// plus and minus one sample standard deviation, its value written above.
func EvalScores(s Scores, o Options) (*Figure, error) {
	if len(s.Methods) == 0 || len(s.Domains) == 0 {
		return nil, fmt.Errorf("figure: %d methods and %d test samples: need at least one of each", len(s.Methods), len(s.Domains))
	}
	if len(s.Score) != len(s.Methods) {
		return nil, fmt.Errorf("figure: scores for %d methods, %d names", len(s.Score), len(s.Methods))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, row := range s.Score {
		if len(row) != len(s.Domains) {
			return nil, fmt.Errorf("figure: method %s has %d scores for %d samples", s.Methods[i], len(row), len(s.Domains))
		}
		for _, v := range row {
			if math.IsInf(v, 0) {
				return nil, fmt.Errorf("figure: method %s: score %v", s.Methods[i], v)
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
	p := &Panel{XLabel: "method", YLabel: metric + " per test sample", XMin: -0.5, XMax: float64(len(s.Methods)) - 0.5}
	span := hi - lo
	if span == 0 {
		span = math.Max(0.01, 0.05*math.Abs(hi))
	}
	p.YMin, p.YMax = lo-0.08*span, hi+0.2*span
	for i, m := range s.Methods {
		p.XTicks = append(p.XTicks, Tick{Value: float64(i), Label: m})
	}
	nd := len(s.Domains)
	for j := range s.Domains {
		c := SampleColor(j, nd)
		faint := c
		faint.A = 110
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
			l.Color, l.Width = faint, vg.Points(0.8)
			p.Lines = append(p.Lines, l)
		}
	}
	for i := range s.Methods {
		var vals []float64
		for _, v := range s.Score[i] {
			if !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		mean, sd := meanSD(vals)
		x := float64(i) + 0.3
		p.Lines = append(p.Lines,
			Line{X: []float64{x, x}, Y: []float64{mean - sd, mean + sd}, Color: black, Width: vg.Points(1.5)},
			Line{X: []float64{x - 0.06, x + 0.06}, Y: []float64{mean, mean}, Color: black, Width: vg.Points(2)})
		p.Labels = append(p.Labels, Label{X: float64(i), Y: hi + 0.06*span, Text: fmt.Sprintf("%.4f ± %.4f", mean, sd), Color: black})
	}
	f := &Figure{Title: capitalize(metric) + " of each method on each test sample", Panels: [][]*Panel{{p}}}
	f.Notes = append(f.Notes, "Dots: test samples, joined across methods; black bars: mean ± one standard deviation over the samples (written above).")
	l := Legend{Title: "test sample"}
	for j, d := range s.Domains {
		l.Entries = append(l.Entries, Entry{Name: d, Color: SampleColor(j, nd), Glyph: Circle})
	}
	f.Legends = []Legend{l}
	w := vg.Length(math.Min(14, 4.5+1.6*float64(len(s.Methods)))) * vg.Inch
	return o.finish(f, w, 6*vg.Inch), nil
}

// spread offsets sample j of n horizontally within a method's column, so
// equal scores do not hide one another.
func spread(j, n int) float64 {
	if n == 1 {
		return 0
	}
	return -0.18 + 0.3*float64(j)/float64(n-1)
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
