package figure

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// gatingCells returns cells of a reference domain r0 and two new domains
// n1, n2, 12 cells per population of pops, each labelled (reference) or
// predicted (new) with its population; the fifth cell of each new domain
// is unassigned.
func gatingCells(pops []string) (Gating, View) {
	var g Gating
	g.DomainNames = []string{"r0", "n1", "n2"}
	g.ClassNames, g.Populations = pops, pops
	g.Reference = []bool{true, false, false}
	var z []float64
	for d := range 3 {
		for p := range pops {
			for k := range 12 {
				g.Domain = append(g.Domain, d)
				g.Label = append(g.Label, p)
				pred := p
				if d > 0 && k == 5 {
					pred = -1
				}
				g.Predicted = append(g.Predicted, pred)
				z = append(z, float64(p)+0.1*float64(k), float64(d)-0.05*float64(k))
			}
		}
	}
	g.Palette = NewPalette(pops)
	return g, View{Name: "DICA", Title: "DICA", Z: mat.NewDense(len(g.Domain), 2, z)}
}

// TestGated checks the panels of a Gated figure: the reference's cells in
// the colors of their labels, each new domain's in the colors of their
// predictions, unassigned cells in UnassignedColor, and beyond
// MaxSampleColors populations the smallest grouped in OtherColor.
func TestGated(t *testing.T) {
	g, v := gatingCells([]string{"B", "T", "NK"})
	f, err := Gated(g, v, Options{Seed: 1})
	require.NoError(t, err)
	require.Len(t, f.Panels, 1)
	require.Len(t, f.Panels[0], 3)
	pal := NewPalette([]string{"B", "T", "NK"})
	for k, p := range f.Panels[0] {
		require.Len(t, p.Dots, 36)
		for _, d := range p.Dots {
			require.Equal(t, k, g.Domain[d.Cell])
			want := pal.Color(g.ClassNames[g.Label[d.Cell]])
			if k > 0 && g.Predicted[d.Cell] < 0 {
				want = UnassignedColor
			}
			require.Equal(t, want, d.Color)
		}
	}
	require.Equal(t, "reference: r0 (hand-gated)", f.Panels[0][0].Title)
	require.Equal(t, "n1: predicted, 91.7% as gated", f.Panels[0][1].Title, "33 of 36")
	var names []string
	for _, e := range f.Legends[0].Entries {
		names = append(names, e.Name)
	}
	require.Equal(t, []string{"B", "NK", "T", "unassigned"}, names, "natural order")
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, PNG))

	// Twelve populations: the nine with the most cells keep their colors,
	// the three smallest share OtherColor.
	pops := make([]string, 12)
	for p := range pops {
		pops[p] = "P" + strconv.Itoa(p+1)
	}
	g, v = gatingCells(pops)
	small := map[string]bool{"P2": true, "P5": true, "P11": true}
	var keep []int
	for i := range g.Domain {
		if !small[pops[g.Label[i]]] || i%3 == 0 {
			keep = append(keep, i)
		}
	}
	g, v = subset(g, v, keep)
	f, err = Gated(g, v, Options{Seed: 1})
	require.NoError(t, err)
	pal = NewPalette(pops)
	for _, p := range f.Panels[0] {
		for _, d := range p.Dots {
			name := pops[g.Label[d.Cell]]
			want := pal.Color(name)
			switch {
			case g.Reference[g.Domain[d.Cell]]:
			case g.Predicted[d.Cell] < 0:
				want = UnassignedColor
			}
			if small[name] && want != UnassignedColor {
				want = OtherColor
			}
			require.Equal(t, want, d.Color, name)
		}
	}
	names = names[:0]
	for _, e := range f.Legends[0].Entries {
		names = append(names, e.Name)
	}
	require.Equal(t, []string{"P1", "P3", "P4", "P6", "P7", "P8", "P9", "P10", "P12", "3 other populations", "unassigned"}, names)
	require.Contains(t, fmt.Sprint(f.Notes), "12 populations are more than colors tell apart")

	// Refusals.
	g, v = gatingCells([]string{"B", "T"})
	g.Reference = []bool{false, false, false}
	_, err = Gated(g, v, Options{})
	require.ErrorContains(t, err, "no cell of a reference sample")
	g.Reference = []bool{true, true, true}
	_, err = Gated(g, v, Options{})
	require.ErrorContains(t, err, "no cell of a new sample")
	g.Reference = []bool{true, false, false}
	g.Predicted[0] = 2
	_, err = Gated(g, v, Options{})
	require.ErrorContains(t, err, "predicted population 2")
}

// subset keeps the cells keep of g and v.
func subset(g Gating, v View, keep []int) (Gating, View) {
	out := g
	out.Domain, out.Label, out.Predicted = nil, nil, nil
	z := mat.NewDense(len(keep), 2, nil)
	for r, i := range keep {
		out.Domain = append(out.Domain, g.Domain[i])
		out.Label = append(out.Label, g.Label[i])
		out.Predicted = append(out.Predicted, g.Predicted[i])
		z.SetRow(r, v.Z.RawRowView(i))
	}
	v.Z = z
	return out, v
}

// TestSamplePartialLabels samples a stream of labelled and unlabelled
// domains: the unlabelled cells keep dataset.NoLabel, and a projection
// picture draws them in OtherColor with a legend entry.
func TestSamplePartialLabels(t *testing.T) {
	ds, m := sampleData(t)
	for i := range ds.Label {
		if ds.Domain[i] >= 2 {
			ds.Label[i] = dataset.NoLabel
		}
	}
	s, err := SampleModel(context.Background(), m, ds.Source(), SampleOptions{PerDomain: 20, Seed: 1})
	require.NoError(t, err)
	n, _ := s.Z.Dims()
	for i := range n {
		if s.Domain[i] >= 2 {
			require.Equal(t, dataset.NoLabel, s.Label[i])
		} else {
			require.GreaterOrEqual(t, s.Label[i], 0)
		}
	}
	f, err := Projection(s.Cells(nil), []View{{Name: "DICA", Title: "DICA", Z: s.Z}}, Options{})
	require.NoError(t, err)
	for _, d := range f.Panels[0][0].Dots {
		if s.Label[d.Cell] < 0 {
			require.Equal(t, OtherColor, d.Color)
		}
	}
	last := f.Legends[0].Entries[len(f.Legends[0].Entries)-1]
	require.Equal(t, Entry{Name: "no label", Color: OtherColor}, last)
}
