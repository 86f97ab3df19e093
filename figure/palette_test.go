package figure

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPalette: a population's color is a function of its name's place
// among the palette's names in natural order, whatever the order they are
// given in and whichever populations a picture's cells hold.
func TestPalette(t *testing.T) {
	model := []string{"2", "4", "1", "3"} // first-seen order, as a model may list them
	p := NewPalette(model)
	require.Equal(t, []string{"1", "2", "3", "4"}, p.Names())
	for i, name := range []string{"1", "2", "3", "4"} {
		require.Equal(t, classPalette[i], p.Color(name), name)
	}
	// Any order, any number of calls, duplicates: the same colors.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(model)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		q := NewPalette(append(shuffled, shuffled[0]))
		for _, name := range model {
			require.Equal(t, p.Color(name), q.Color(name))
		}
	}
	// Natural order: "sample2" before "sample10"; a name that sorts last
	// leaves the others' colors.
	require.Equal(t, []string{"sample2", "sample10"}, NewPalette([]string{"sample10", "sample2"}).Names())
	wider := NewPalette(append(slices.Clone(model), "5"))
	for _, name := range model {
		require.Equal(t, p.Color(name), wider.Color(name))
	}
	// A name the palette does not hold, and a nil palette.
	require.Equal(t, OtherColor, p.Color("0"))
	var none *Palette
	require.Equal(t, OtherColor, none.Color("1"))
	require.Nil(t, none.Names())
	require.False(t, none.Has("1"))

	// The colors of the first 22 places are told apart (CIE76 difference
	// above 15) and differ from the gray of other populations and of the
	// cells behind; the first 8 are the color-blind-safe ones.
	for i := range 22 {
		a := placeColor(i)
		require.Greater(t, deltaE(a, OtherColor), 15.0, "place %d", i)
		require.Greater(t, deltaE(a, backdropColor), 15.0, "place %d", i)
		for j := range i {
			require.Greater(t, deltaE(a, placeColor(j)), 15.0, "places %d and %d", j, i)
		}
	}
	require.Equal(t, classPalette, []color.NRGBA{placeColor(0), placeColor(1), placeColor(2), placeColor(3), placeColor(4), placeColor(5), placeColor(6), placeColor(7)})
	require.NotEqual(t, placeColor(30), placeColor(31))
}

// TestPaletteAcrossPictures: with the model's palette, a population has
// one color in every picture, also when the cells hold only some of the
// model's populations, or one it does not know.
func TestPaletteAcrossPictures(t *testing.T) {
	c, views := testCells(300, 11)
	// The model knows populations "T", "NK", "B" and "gdT"; natural order
	// B, NK, T, gdT.
	pal := NewPalette([]string{"T", "NK", "B", "gdT"})
	want := map[string]color.NRGBA{"B": classPalette[0], "NK": classPalette[1], "T": classPalette[2]}
	c.Palette = pal
	check := func(ps []*Panel, c Cells) {
		t.Helper()
		require.NotEmpty(t, ps)
		for _, p := range ps {
			require.NotEmpty(t, p.Dots)
			for _, d := range p.Dots {
				w, ok := want[c.ClassNames[c.Label[d.Cell]]]
				if !ok {
					w = OtherColor
				}
				require.Equal(t, w, d.Color, "%s: cell %d", p.Title, d.Cell)
			}
		}
	}
	all := func(f *Figure) []*Panel {
		var ps []*Panel
		for _, row := range f.Panels {
			for _, p := range row {
				if p != nil {
					ps = append(ps, p)
				}
			}
		}
		return ps
	}
	for _, tc := range []struct {
		build func(Cells) (*Figure, error)
		pops  func(*Figure) []*Panel // the panels colored by population
	}{
		{func(c Cells) (*Figure, error) { return Projection(c, views, Options{}) }, all},
		{func(c Cells) (*Figure, error) { return Samples(c, views[0], Options{}) }, all},
		{func(c Cells) (*Figure, error) { return Pairs(c, views[0], Options{}) },
			func(f *Figure) []*Panel { return []*Panel{f.Panels[1][0], f.Panels[2][0], f.Panels[2][1]} }},
		{func(c Cells) (*Figure, error) { return TrainingAndUnseen(c, views, Options{}) },
			func(f *Figure) []*Panel { return f.Panels[0] }},
	} {
		f, err := tc.build(c)
		require.NoError(t, err)
		check(tc.pops(f), c)
		// The same cells with only populations NK and T, listed in
		// another order: the same colors.
		sub := c
		sub.ClassNames = []string{"T", "NK"}
		sub.Label = slices.Clone(c.Label)
		for i, l := range c.Label {
			if c.ClassNames[l] == "T" {
				sub.Label[i] = 0
			} else {
				sub.Label[i] = 1
			}
		}
		f, err = tc.build(sub)
		require.NoError(t, err)
		check(tc.pops(f), sub)
	}
	// A population the model does not know is drawn in gray and named so.
	c.ClassNames = []string{"B", "T", "X"}
	f, err := Projection(c, views, Options{})
	require.NoError(t, err)
	check(all(f), c)
	require.Equal(t, []Entry{{Name: "B", Color: classPalette[0]}, {Name: "T", Color: classPalette[2]}, {Name: "X (other)", Color: OtherColor}}, f.Legends[0].Entries)
}

// TestDrawingOrder: the picture does not depend on the order of the dots,
// so no population hides another by being drawn last; and a balanced
// panel shows a rare population where it lies among a common one.
func TestDrawingOrder(t *testing.T) {
	red, blue := color.NRGBA{R: 220, A: 255}, color.NRGBA{B: 220, A: 255}
	rng := rand.New(rand.NewPCG(5, 5))
	var ds []Dot
	for i := range 3000 {
		col, x := red, 0.3+0.4*rng.Float64()
		if i%10 == 0 {
			col, x = blue, 0.45+0.1*rng.Float64()
		}
		ds = append(ds, Dot{X: x, Y: 0.3 + 0.4*rng.Float64(), Cell: i, Color: col})
	}
	render := func(ds []Dot, balance bool) *image.RGBA {
		f := &Figure{Width: 300, Height: 300, Panels: [][]*Panel{{{
			XMin: 0, XMax: 1, YMin: 0, YMax: 1, Dots: ds, DotRadius: 2, DotAlpha: 0.3, Balance: balance,
		}}}}
		var buf bytes.Buffer
		require.NoError(t, f.Write(&buf, PNG))
		img, err := png.Decode(&buf)
		require.NoError(t, err)
		return img.(*image.RGBA)
	}
	rev := slices.Clone(ds)
	slices.Reverse(rev)
	// Blues first or last: the same picture, to rounding.
	blueLast := slices.Clone(ds)
	slices.SortStableFunc(blueLast, func(a, b Dot) int { return int(a.Color.B) - int(b.Color.B) })
	for _, balance := range []bool{false, true} {
		a := render(ds, balance)
		for _, other := range [][]Dot{rev, blueLast} {
			b := render(other, balance)
			worst, drawn := 0, 0
			for i := range a.Pix {
				d := int(a.Pix[i]) - int(b.Pix[i])
				worst = max(worst, d, -d)
				if a.Pix[i] < 200 {
					drawn++
				}
			}
			require.LessOrEqual(t, worst, 1)
			require.Greater(t, drawn, 10000, "the dots are drawn")
		}
	}
	// On one pixel, 9 red dots and 1 blue, from a panel of 2,700 red and
	// 300 blue: unbalanced, the pixel is 90% red; balanced (the blues weigh
	// 9 times more), half red, half blue.
	w := balance(ds)
	for _, tc := range []struct {
		wr, wb float32
		share  float64 // of red in the pixel's color
	}{{1, 1, 0.9}, {w[red], w[blue], 0.5}} {
		l := newLayer(1, 1)
		for range 9 {
			l.disc(0.5, 0.5, 3, 0.2, tc.wr, red)
		}
		l.disc(0.5, 0.5, 3, 0.2, tc.wb, blue)
		buf := make([]float32, 4)
		l.over(buf)
		a := float64(buf[3])
		require.InDelta(t, 1-math.Pow(0.8, 10), a, 1e-6, "the opacity counts every dot")
		require.InDelta(t, tc.share*220/255, float64(buf[0])/a, 1e-5)
		require.InDelta(t, (1-tc.share)*220/255, float64(buf[2])/a, 1e-5)
	}

	// The weights: each color's dots weigh as much in all.
	require.InDelta(t, 3000.0/(2*2700), float64(w[red]), 1e-6)
	require.InDelta(t, 3000.0/(2*300), float64(w[blue]), 1e-6)
}

// TestSizes: the pictures of 16 and 30 samples, the unseen layout and the
// scores stay at most 1400 pixels wide at the default resolution, and a
// single view's unseen picture is wider than high.
func TestSizes(t *testing.T) {
	px := func(l float64) float64 { return l / 72 * DefaultDPI }
	for _, samples := range []int{3, 16, 30} {
		c, views := testCells(2000, 13)
		c.Unseen, c.Total = nil, nil
		c.DomainNames = nil
		for g := range samples {
			c.DomainNames = append(c.DomainNames, fmt.Sprintf("sample%d", g+1))
		}
		for i := range c.Domain {
			c.Domain[i] = i % samples
		}
		for _, nv := range []int{1, 2} {
			f, err := Projection(c, views[:nv], Options{})
			require.NoError(t, err)
			w, h := px(float64(f.Width)), px(float64(f.Height))
			require.LessOrEqual(t, w, 1400.0, "%d samples, %d views", samples, nv)
			require.GreaterOrEqual(t, w, 900.0, "%d samples, %d views", samples, nv)
			require.LessOrEqual(t, h, 1400.0, "%d samples, %d views", samples, nv)
		}
		f, err := Pairs(c, views[0], Options{})
		require.NoError(t, err)
		require.LessOrEqual(t, px(float64(f.Width)), 1400.0)
		f, err = Samples(c, views[0], Options{})
		require.NoError(t, err)
		require.LessOrEqual(t, px(float64(f.Width)), 1400.0)
	}
	c, views := testCells(500, 14)
	four := append(slices.Clone(views), views...)
	for nv, v := range [][]View{views[:1], views, four} {
		f, err := TrainingAndUnseen(c, v, Options{})
		require.NoError(t, err)
		w, h := px(float64(f.Width)), px(float64(f.Height))
		require.LessOrEqual(t, w, 1400.0, "%d views", len(v))
		if nv == 0 {
			require.GreaterOrEqual(t, w, 900.0)
			require.Greater(t, w, 1.8*h)
		}
	}
	s := Scores{Metric: "accuracy", Methods: []string{"a", "b", "c", "d", "e", "f", "g", "h"}, Domains: []string{"x"}}
	for range s.Methods {
		s.Score = append(s.Score, []float64{0.9})
	}
	f, err := EvalScores(s, Options{})
	require.NoError(t, err)
	require.LessOrEqual(t, px(float64(f.Width)), 1400.0)
}
