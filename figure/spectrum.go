package figure

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot/vg"
)

// Spectrum draws eigenvalues against their index, largest first: the first
// positive ones (the components a projection returns) as filled dots with
// their values, the others as gray rings; threshold, when positive, is
// drawn as a dashed line (the level under which an eigenvalue is not
// signal). The Y axis is logarithmic when the largest eigenvalue is
// positive; values at or below zero then sit at the bottom of the axis as
// gray triangles.
func Spectrum(values []float64, positive int, threshold float64, o Options) (*Figure, error) {
	if len(values) == 0 {
		return nil, errors.New("figure: no eigenvalues")
	}
	if positive < 0 || positive > len(values) {
		return nil, fmt.Errorf("figure: %d positive of %d eigenvalues", positive, len(values))
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("figure: eigenvalue %d is %v", i+1, v)
		}
	}
	p := &Panel{XLabel: "component", YLabel: "eigenvalue", XMin: 0.5, XMax: float64(len(values)) + 0.5}
	p.LogY = values[0] > 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !p.LogY || v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if threshold > 0 && p.LogY {
		lo = math.Min(lo, threshold)
	}
	floor := lo
	if p.LogY {
		floor = lo / 3
		p.YMin, p.YMax = floor/1.5, hi*3
	} else {
		pad := 0.08 * math.Max(hi-lo, math.Abs(hi))
		if pad == 0 {
			pad = 1
		}
		p.YMin, p.YMax = lo-pad, hi+pad
	}
	blue := ClassColor(0, 1)
	nonPositive, null := 0, 0
	for i, v := range values {
		m := Mark{X: float64(i + 1), Y: v, Color: blue, Glyph: Circle, Radius: vg.Points(4)}
		switch {
		case p.LogY && v <= 0:
			m.Y, m.Color, m.Glyph = floor, gray, Triangle
			nonPositive++
		case i >= positive:
			m.Color, m.Glyph = gray, Ring
			null++
		}
		p.Marks = append(p.Marks, m)
		if i < positive && positive <= 20 {
			p.Labels = append(p.Labels, Label{X: m.X, Y: m.Y, Text: fmt.Sprintf("%.3g", v), Color: black})
		}
	}
	if threshold > 0 && (!p.LogY || threshold > p.YMin) {
		p.Lines = append(p.Lines, Line{X: []float64{p.XMin, p.XMax}, Y: []float64{threshold, threshold}, Color: gray, Dashed: true})
	}
	if len(values) <= 30 {
		for i := range values {
			p.XTicks = append(p.XTicks, Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)})
		}
	}
	f := &Figure{
		Title:  "Eigenvalues",
		Panels: [][]*Panel{{p}},
	}
	f.Notes = append(f.Notes, fmt.Sprintf("%d of %d eigenvalues are signal (filled, with their values): the projection returns %d components.", positive, len(values), positive))
	l := Legend{Title: "eigenvalue"}
	if positive > 0 {
		l.Entries = append(l.Entries, Entry{Name: "component returned", Color: blue, Glyph: Circle})
	}
	if null > 0 {
		l.Entries = append(l.Entries, Entry{Name: "not signal", Color: gray, Glyph: Ring})
	}
	if nonPositive > 0 {
		l.Entries = append(l.Entries, Entry{Name: "zero or negative", Color: gray, Glyph: Triangle})
	}
	if threshold > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("Dashed: the threshold %.3g under which an eigenvalue is not signal.", threshold))
	}
	f.Legends = []Legend{l}
	w := vg.Length(math.Min(11, 5.5+0.25*float64(len(values)))) * vg.Inch
	return o.finish(f, w, 5*vg.Inch), nil
}
