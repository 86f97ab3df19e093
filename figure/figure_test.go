package figure

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// testCells makes n cells in 4 domains (the last one unseen) and 3
// populations, with two views of 3 components: populations apart, each
// domain shifted.
func testCells(n int, seed uint64) (Cells, []View) {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := Cells{
		DomainNames: []string{"s1", "s2", "s10", "s3"},
		ClassNames:  []string{"B", "T", "NK"},
		Unseen:      []bool{false, false, false, true},
		Total:       []int64{1000, 2000, 3000, 4000},
	}
	z1 := mat.NewDense(n, 3, nil)
	z2 := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		g, l := rng.IntN(4), rng.IntN(3)
		c.Domain = append(c.Domain, g)
		c.Label = append(c.Label, l)
		for j := 0; j < 3; j++ {
			z1.Set(i, j, float64(l*(j+1)%3)+0.2*rng.NormFloat64()+0.1*float64(g))
			z2.Set(i, j, float64(l)-float64(j)+0.3*rng.NormFloat64())
		}
	}
	return c, []View{{Name: "DICA", Title: "DICA test", Z: z1}, {Name: "KPCA", Title: "KPCA test", Z: z2}}
}

// checkDots asserts that the dots are every selected cell once, at its
// coordinates on components x and y of z, in the color col gives.
func checkDots(t *testing.T, ds []Dot, z *mat.Dense, x, y int, want []int, col func(int) color.NRGBA) {
	t.Helper()
	var cells []int
	for _, d := range ds {
		require.Equal(t, z.At(d.Cell, x), d.X, "cell %d", d.Cell)
		require.Equal(t, z.At(d.Cell, y), d.Y, "cell %d", d.Cell)
		require.Equal(t, col(d.Cell), d.Color, "cell %d", d.Cell)
		cells = append(cells, d.Cell)
	}
	slices.Sort(cells)
	require.Equal(t, want, cells)
}

func allCells(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// natural holds the colors the test cells' populations must have: their
// places in natural order ("B" < "NK" < "T"), whatever the order of
// ClassNames.
var natural = map[string]color.NRGBA{"B": classPalette[0], "NK": classPalette[1], "T": classPalette[2]}

func popColor(c Cells) func(int) color.NRGBA {
	return func(i int) color.NRGBA { return natural[c.ClassNames[c.Label[i]]] }
}

func cellsOf(c Cells, g int) []int {
	var out []int
	for i, d := range c.Domain {
		if d == g {
			out = append(out, i)
		}
	}
	return out
}

func TestProjection(t *testing.T) {
	const n = 500
	c, views := testCells(n, 1)
	for _, tc := range []struct{ x, y int }{{0, 1}, {2, 0}} {
		f, err := Projection(c, views, Options{X: tc.x, Y: tc.y, Seed: 7})
		require.NoError(t, err)
		// 4 samples: small multiples of 2 x 2 beside a large panel of
		// 2 x 2 tiles, a block of rows per view.
		require.Len(t, f.Panels, 4)
		require.Len(t, f.Panels[0], 4)
		require.NoError(t, f.check())
		for b, v := range views {
			big := f.Panels[2*b][0]
			require.Equal(t, [2]int{2, 2}, [2]int{big.RowSpan, big.ColSpan})
			require.Nil(t, f.Panels[2*b][1])
			require.Nil(t, f.Panels[2*b+1][0])
			checkDots(t, big.Dots, v.Z, tc.x, tc.y, allCells(n), popColor(c))
			require.True(t, big.Balance)
			require.Equal(t, fmt.Sprintf("%s%d", v.Name, tc.x+1), big.XLabel)
			require.Equal(t, fmt.Sprintf("%s%d", v.Name, tc.y+1), big.YLabel)
			for _, d := range big.Dots {
				require.True(t, d.X > big.XMin && d.X < big.XMax && d.Y > big.YMin && d.Y < big.YMax)
			}
			for g := range c.DomainNames {
				p := f.Panels[2*b+g/2][2+g%2]
				checkDots(t, p.Dots, v.Z, tc.x, tc.y, cellsOf(c, g), popColor(c))
				checkDots(t, p.Backdrop, v.Z, tc.x, tc.y, allCells(n), func(int) color.NRGBA { return backdropColor })
				require.Equal(t, [4]float64{big.XMin, big.XMax, big.YMin, big.YMax}, [4]float64{p.XMin, p.XMax, p.YMin, p.YMax}, "the large panel's axes")
				require.Equal(t, c.Unseen[g], p.Shade == unseenShade)
				title := c.DomainNames[g]
				if c.Unseen[g] {
					title += " (unseen)"
				}
				require.Equal(t, title, p.Title)
				// Tick labels on the outer panels only.
				require.Equal(t, g < 2, p.HideXTickLabels, "sample %d", g)
				require.Equal(t, g%2 == 1, p.HideYTickLabels, "sample %d", g)
			}
		}
		require.Len(t, f.Legends, 1)
		require.Equal(t, []Entry{{Name: "B", Color: classPalette[0]}, {Name: "NK", Color: classPalette[1]}, {Name: "T", Color: classPalette[2]}}, f.Legends[0].Entries)
	}
	// The order is seeded: the same seed gives the same, another seed
	// another.
	a, _ := Projection(c, views, Options{Seed: 7})
	b, _ := Projection(c, views, Options{Seed: 7})
	d, _ := Projection(c, views, Options{Seed: 8})
	require.Equal(t, a.Panels[0][0].Dots, b.Panels[0][0].Dots)
	require.NotEqual(t, a.Panels[0][0].Dots, d.Panels[0][0].Dots)

	// Without labels: the large panel by sample (4 samples: 4 colors),
	// the small ones in one color.
	c.Label, c.ClassNames = nil, nil
	f, err := Projection(c, views[:1], Options{})
	require.NoError(t, err)
	require.Len(t, f.Panels, 2)
	checkDots(t, f.Panels[0][0].Dots, views[0].Z, 0, 1, allCells(n), func(i int) color.NRGBA { return samplePalette[c.Domain[i]] })
	checkDots(t, f.Panels[0][2].Dots, views[0].Z, 0, 1, cellsOf(c, 0), func(int) color.NRGBA { return cellColor })
	require.Equal(t, "s3 (unseen)", f.Legends[0].Entries[3].Name)
}

// TestProjectionManySamples: 30 samples are 30 small panels, and no panel
// has more than MaxSampleColors colors; past MaxSamplePanels samples, one
// panel by sample with the samples beyond the first 9 in OtherColor.
func TestProjectionManySamples(t *testing.T) {
	for _, tc := range []struct{ samples, panels int }{{30, 30}, {70, 0}} {
		c, views := testCells(3000, 12)
		c.Unseen, c.Total = nil, nil
		c.DomainNames = nil
		for g := range tc.samples {
			c.DomainNames = append(c.DomainNames, fmt.Sprintf("sample%d", g+1))
		}
		for i := range c.Domain {
			c.Domain[i] = i % tc.samples
		}
		c.Label, c.ClassNames = nil, nil
		f, err := Projection(c, views, Options{})
		require.NoError(t, err)
		small := 0
		for _, row := range f.Panels {
			for _, p := range row {
				if p == nil {
					continue
				}
				if p.Compact {
					small++
				}
				colors := map[color.NRGBA]bool{}
				for _, d := range p.Dots {
					colors[d.Color] = true
				}
				require.LessOrEqual(t, len(colors), MaxSampleColors, p.Title)
			}
		}
		require.Equal(t, 2*tc.panels, small, "%d samples, 2 views", tc.samples)
		require.LessOrEqual(t, float64(f.Width)/72*DefaultDPI, 1400.0, "at most 1400 pixels wide")
		var buf bytes.Buffer
		require.NoError(t, f.Write(&buf, PNG))
		if tc.panels == 0 {
			l := f.Legends[len(f.Legends)-1]
			require.Len(t, l.Entries, MaxSampleColors)
			require.Equal(t, Entry{Name: fmt.Sprintf("%d other samples", tc.samples-MaxSampleColors+1), Color: OtherColor}, l.Entries[MaxSampleColors-1])
		}
	}
}

func TestSamples(t *testing.T) {
	const n = 400
	c, views := testCells(n, 2)
	f, err := Samples(c, views[0], Options{X: 1, Y: 2})
	require.NoError(t, err)
	require.Len(t, f.Panels, 2)
	require.Len(t, f.Panels[0], 2)
	for g := range c.DomainNames {
		p := f.Panels[g/2][g%2]
		want := cellsOf(c, g)
		checkDots(t, p.Dots, views[0].Z, 1, 2, want, popColor(c))
		require.Len(t, p.Backdrop, n)
		mark := ""
		if c.Unseen[g] {
			mark = " (unseen)"
		}
		require.Equal(t, fmt.Sprintf("%s%s\n%s of %s cells", c.DomainNames[g], mark, count(len(want)), count(int(c.Total[g]))), p.Title)
		require.Equal(t, c.Unseen[g], p.TitleColor == unseenColor)
		require.Equal(t, c.Unseen[g], p.Shade == unseenShade)
		require.Equal(t, [4]float64{p.XMin, p.XMax, p.YMin, p.YMax}, [4]float64{f.Panels[0][0].XMin, f.Panels[0][0].XMax, f.Panels[0][0].YMin, f.Panels[0][0].YMax}, "same axes")
	}
}

func TestSamplesBound(t *testing.T) {
	c, views := testCells(100, 9)
	c.DomainNames = make([]string, 100)
	c.Unseen, c.Total = nil, nil
	for i := range c.Domain {
		c.Domain[i] = i
	}
	_, err := Samples(c, views[0], Options{})
	require.ErrorContains(t, err, "100 samples: small multiples draw at most 64")
}

func TestPairs(t *testing.T) {
	const n = 600
	c, views := testCells(n, 3)
	f, err := Pairs(c, views[0], Options{})
	require.NoError(t, err)
	require.Len(t, f.Panels, 3)
	z := views[0].Z
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			p := f.Panels[i][j]
			switch {
			case i > j:
				checkDots(t, p.Dots, z, j, i, allCells(n), popColor(c))
			case i < j:
				checkDots(t, p.Dots, z, j, i, allCells(n), func(k int) color.NRGBA { return samplePalette[c.Domain[k]] })
			default:
				require.Equal(t, fmt.Sprintf("density of DICA%d", i+1), p.YLabel, "every density is labelled")
				// A density per sample: it integrates to the sample's
				// share of cells inside the axis (all of them here).
				require.Len(t, p.Lines, 4)
				for g, l := range p.Lines {
					require.Equal(t, samplePalette[g], l.Color)
					w := l.X[1] - l.X[0]
					var area float64
					for _, v := range l.Y {
						area += v * w
					}
					require.InDelta(t, 1, area, 1e-9, "sample %d", g)
					// Against a count written here.
					m, in := 0, 0
					for k := range c.Domain {
						if c.Domain[k] != g {
							continue
						}
						m++
						if v := z.At(k, i); v >= l.X[10]-w/2 && v < l.X[10]+w/2 {
							in++
						}
					}
					require.InDelta(t, float64(in)/(float64(m)*w), l.Y[10], 1e-9)
				}
			}
		}
	}
	// Without populations: by sample below the diagonal, nothing above.
	c.Label, c.ClassNames = nil, nil
	f, err = Pairs(c, views[0], Options{Components: 2})
	require.NoError(t, err)
	require.Nil(t, f.Panels[0][1])
	checkDots(t, f.Panels[1][0].Dots, z, 0, 1, allCells(n), func(k int) color.NRGBA { return samplePalette[c.Domain[k]] })
	require.Len(t, f.Legends, 1)
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, PNG))

	// 12 samples: more than colors tell apart. Nothing above the
	// diagonal; on it a gray density per sample and that of all cells in
	// black, which integrates to 1.
	c, views = testCells(n, 3)
	c.Unseen, c.Total = nil, nil
	c.DomainNames = nil
	for g := range 12 {
		c.DomainNames = append(c.DomainNames, fmt.Sprintf("s%d", g+1))
	}
	for i := range c.Domain {
		c.Domain[i] = i % 12
	}
	f, err = Pairs(c, views[0], Options{})
	require.NoError(t, err)
	require.Nil(t, f.Panels[0][1])
	lines := f.Panels[1][1].Lines
	require.Len(t, lines, 13)
	for _, l := range lines[:12] {
		require.Equal(t, densityGray, l.Color)
	}
	all := lines[12]
	require.Equal(t, black, all.Color)
	var area float64
	for _, v := range all.Y {
		area += v * (all.X[1] - all.X[0])
	}
	require.InDelta(t, 1, area, 1e-9)

	_, err = Pairs(c, views[0], Options{Components: 4})
	require.ErrorContains(t, err, "has 3 components, the figure needs 4")
}

func TestTrainingAndUnseen(t *testing.T) {
	const n = 300
	c, views := testCells(n, 4)
	f, err := TrainingAndUnseen(c, views, Options{})
	require.NoError(t, err)
	require.Len(t, f.Panels, 2)
	var tr, te []int
	for i, g := range c.Domain {
		if c.Unseen[g] {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	for j, v := range views {
		// Top: every cell by population; bottom: the unseen sample's
		// cells in its color over the training cells in gray.
		checkDots(t, f.Panels[0][j].Dots, v.Z, 0, 1, allCells(n), popColor(c))
		checkDots(t, f.Panels[1][j].Dots, v.Z, 0, 1, te, func(int) color.NRGBA { return samplePalette[0] })
		checkDots(t, f.Panels[1][j].Backdrop, v.Z, 0, 1, tr, func(int) color.NRGBA { return backdropColor })
	}
	require.Equal(t, []Entry{{Name: "s3", Color: samplePalette[0]}, {Name: "training samples", Color: backdropColor}}, f.Legends[1].Entries)
	require.Equal(t, "Unseen samples among the training samples", f.Title)
	require.LessOrEqual(t, float64(f.Width)/72*DefaultDPI, 1400.0)

	// One view: its two panels side by side, a picture wider than high
	// with a title on one line.
	f, err = TrainingAndUnseen(c, views[:1], Options{})
	require.NoError(t, err)
	require.Len(t, f.Panels, 1)
	require.Len(t, f.Panels[0], 2)
	require.Greater(t, f.Width, 1.8*f.Height)
	require.Less(t, style(titleSize, true, black).Width(f.Title), f.Width-vg.Points(20))

	// Colored by value when there is one.
	c.Value = make([]float64, n)
	for i := range c.Value {
		c.Value[i] = float64(i)
	}
	f, err = TrainingAndUnseen(c, views, Options{})
	require.NoError(t, err)
	lo, hi := math.Floor(0.02*(n-1)), math.Ceil(0.98*(n-1))
	for _, d := range f.Panels[0][0].Dots {
		require.Equal(t, Viridis((math.Min(math.Max(float64(d.Cell), lo), hi)-lo)/(hi-lo)), d.Color)
	}
	require.Equal(t, &ColorBar{Min: lo, Max: hi}, &ColorBar{Min: f.Legends[0].Bar.Min, Max: f.Legends[0].Bar.Max})

	// 12 unseen samples: 9 colors and the others grouped; the words
	// given for domains that are not unseen.
	c, views = testCells(n, 4)
	c.Total = nil
	c.DomainNames, c.Unseen = nil, nil
	for g := range 14 {
		c.DomainNames = append(c.DomainNames, fmt.Sprintf("d%d", g+1))
		c.Unseen = append(c.Unseen, g >= 2)
	}
	for i := range c.Domain {
		c.Domain[i] = i % 14
	}
	c.DomainTerm, c.UnseenTerm = "domain", "chosen"
	f, err = TrainingAndUnseen(c, views[:1], Options{})
	require.NoError(t, err)
	colors := map[color.NRGBA]int{}
	for _, d := range f.Panels[0][1].Dots {
		colors[d.Color]++
	}
	require.Len(t, colors, MaxSampleColors)
	grouped := len(cellsOf(c, 11)) + len(cellsOf(c, 12)) + len(cellsOf(c, 13))
	require.Equal(t, grouped, colors[OtherColor], "d12 to d14 grouped")
	l := f.Legends[1]
	require.Equal(t, "chosen domain", l.Title)
	require.Equal(t, Entry{Name: "3 other domains", Color: OtherColor}, l.Entries[MaxSampleColors-1])
	require.Equal(t, Entry{Name: "other domains", Color: backdropColor}, l.Entries[MaxSampleColors])
	require.Equal(t, "Chosen domains among the other domains", f.Title)

	c.Unseen = nil
	_, err = TrainingAndUnseen(c, views, Options{})
	require.ErrorContains(t, err, "need both")
}

func TestRangeOf(t *testing.T) {
	vals := make([]float64, 1001)
	for i := range vals {
		vals[i] = float64(i)
	}
	r := rangeOf(vals)
	require.InDelta(t, -40, r.lo, 1e-12)
	require.InDelta(t, 1040, r.hi, 1e-12)
	require.Zero(t, r.outside)
	// One far cell does not squash the others: the axis keeps the central
	// 99.8% and counts the cells beyond.
	vals[1000] = 1e6
	r = rangeOf(vals)
	require.InDelta(t, 1-0.04*998, r.lo, 1e-9)
	require.InDelta(t, 999+0.04*998, r.hi, 1e-9)
	require.Equal(t, 2, r.outside)
	r = rangeOf([]float64{3, 3, 3})
	require.True(t, r.lo < 3 && r.hi > 3)
}

func TestReservoir(t *testing.T) {
	// Per domain: min(cap, rows) rows kept, deterministic for a seed.
	sizes := []int{3, 20, 50}
	keep := func(seed uint64, interleave bool) [][]int {
		r := NewReservoir(10, seed)
		kept := make([][]int, len(sizes))
		var stream []int
		for g, s := range sizes {
			for range s {
				stream = append(stream, g)
			}
		}
		if interleave {
			rand.New(rand.NewPCG(seed, 99)).Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
		}
		seen := make([]int, len(sizes))
		for _, g := range stream {
			slot, ok := r.Offer(g)
			if ok {
				if slot == len(kept[g]) {
					kept[g] = append(kept[g], 0)
				}
				kept[g][slot] = seen[g]
			}
			seen[g]++
		}
		require.Equal(t, []int64{3, 20, 50}, r.Seen())
		return kept
	}
	a, b, c := keep(1, false), keep(1, false), keep(2, false)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	for g, s := range sizes {
		require.Len(t, a[g], min(10, s))
	}
	// A domain's sample does not depend on how the others interleave.
	require.Equal(t, a, keep(1, true))

	// Uniform: over many seeds each of 40 rows is kept with probability
	// 10/40; the counts stay within 5 standard deviations.
	const trials = 4000
	counts := make([]int, 40)
	for s := range uint64(trials) {
		r := NewReservoir(10, s)
		slots := make([]int, 10)
		for i := range 40 {
			if slot, ok := r.Offer(0); ok {
				slots[slot] = i
			}
		}
		for _, i := range slots {
			counts[i]++
		}
	}
	p := 10.0 / 40
	sd := math.Sqrt(trials * p * (1 - p))
	for i, k := range counts {
		require.InDelta(t, trials*p, float64(k), 5*sd, "row %d", i)
	}
}

func TestWrite(t *testing.T) {
	c, views := testCells(200, 5)
	f, err := Projection(c, views, Options{Width: 600, Height: 450, DPI: 120})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, PNG))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 1000, 750), img.Bounds(), "600 x 450 points at 120 dpi")

	buf.Reset()
	require.NoError(t, f.Write(&buf, SVG))
	var root struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
	}
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &root))
	require.Equal(t, "svg", root.XMLName.Local)
	require.Equal(t, "600pt", root.Width)
	require.Equal(t, "450pt", root.Height)
	// The cells are embedded images (one per panel: 2 views of a large
	// panel and 4 small ones), PNG labelled as such, with drawn pixels.
	images := regexp.MustCompile(`xlink:href="data:image/png;base64,([^"]+)"`).FindAllStringSubmatch(buf.String(), -1)
	require.Len(t, images, 10)
	for _, m := range images {
		raw, err := base64.StdEncoding.DecodeString(m[1])
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(raw))
		require.NoError(t, err)
		drawn := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if _, _, _, a := img.At(x, y).RGBA(); a > 0 {
					drawn++
				}
			}
		}
		require.Greater(t, drawn, 100)
	}
	require.Less(t, buf.Len(), 2<<20)

	for _, tc := range []struct {
		f    Figure
		want string
	}{
		{Figure{Width: 0, Height: 10, Panels: [][]*Panel{{{}}}}, "both must be positive"},
		{Figure{Width: 10, Height: 10}, "no panels"},
		{Figure{Width: 10, Height: 10, Panels: [][]*Panel{{{}}, {{}, {}}}}, "row 1 has 1"},
		{Figure{Width: 1e5, Height: 1e5, Panels: [][]*Panel{{{}}}}, "pixels is more than"},
		{Figure{Width: 10, Height: 10, Panels: [][]*Panel{{{RowSpan: 2}}}}, "beyond the grid"},
		{Figure{Width: 10, Height: 10, Panels: [][]*Panel{{{ColSpan: 2}, {}}}}, "which holds a panel"},
	} {
		require.ErrorContains(t, tc.f.Write(&buf, PNG), tc.want)
	}
	_, err = FormatOf("a.jpg")
	require.Error(t, err)
	fm, err := FormatOf("A.SVG")
	require.NoError(t, err)
	require.Equal(t, SVG, fm)
}

// TestDotsDrawn renders one opaque dot and finds it in the PNG: a disc of
// its color and of the requested area, centered where the axes put it.
func TestDotsDrawn(t *testing.T) {
	red := color.NRGBA{R: 230, G: 10, B: 20, A: 255}
	const r = 4 // points; 96 dpi: 5.33 px
	f := &Figure{
		Width: 400, Height: 300, DPI: 96,
		Panels: [][]*Panel{{{
			XMin: 0, XMax: 1, YMin: 0, YMax: 1,
			Dots:      []Dot{{X: 0.25, Y: 0.75, Cell: 0, Color: red}},
			DotRadius: r, DotAlpha: 1,
		}}},
	}
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, PNG))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	var n, sx, sy float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.NRGBAModel.Convert(img.At(x, y)) == red {
				n++
				sx += float64(x) + 0.5
				sy += float64(y) + 0.5
			}
		}
	}
	rp := float64(r) / 72 * 96
	// Fully covered pixels: those within r - 0.5 of the center.
	require.InDelta(t, math.Pi*(rp-0.5)*(rp-0.5), n, 0.2*math.Pi*rp*rp)
	// The center is at a quarter of the width and of the height of the
	// data area, which lies inside the picture: left and top.
	cx, cy := sx/n, sy/n
	require.Less(t, cx, float64(b.Dx())/2)
	require.Less(t, cy, float64(b.Dy())/2)

	// The disc's total opacity is its area times alpha.
	l := newLayer(40, 40)
	l.disc(20, 20, 6, 0.5, 1, red)
	buf2 := make([]float32, 4*40*40)
	l.over(buf2)
	var mass float32
	for i := 3; i < len(buf2); i += 4 {
		mass += buf2[i]
	}
	require.InDelta(t, 0.5*math.Pi*36, float64(mass), 0.02*0.5*math.Pi*36)
	// Two half-transparent dots on one pixel: 1 - (1 - a)^2.
	l = newLayer(4, 4)
	l.disc(2, 2, 1.5, 0.5, 1, red)
	l.disc(2, 2, 1.5, 0.5, 1, red)
	buf3 := make([]float32, 4*4*4)
	l.over(buf3)
	require.InDelta(t, 0.75, float64(buf3[4*(2*4+2)+3]), 1e-6)
	require.InDelta(t, 0.75*230.0/255, float64(buf3[4*(2*4+2)]), 1e-6, "premultiplied red")
}

func TestSpectrum(t *testing.T) {
	vals := []float64{0.1, 0.02, 0.004, 1e-14, 0, -3e-20}
	f, err := Spectrum(vals, 3, 1e-11, Options{})
	require.NoError(t, err)
	p := f.Panels[0][0]
	require.True(t, p.LogY)
	require.Len(t, p.Marks, 6)
	for i, m := range p.Marks {
		require.Equal(t, float64(i+1), m.X)
		switch {
		case i < 3:
			require.Equal(t, vals[i], m.Y)
			require.Equal(t, Circle, m.Glyph)
			require.Equal(t, strconv.FormatFloat(vals[i], 'g', 3, 64), p.Labels[i].Text)
		case vals[i] > 0:
			require.Equal(t, vals[i], m.Y)
			require.Equal(t, Ring, m.Glyph)
		default:
			require.Equal(t, Triangle, m.Glyph)
			require.Less(t, m.Y, 1e-14)
			require.Greater(t, m.Y, p.YMin)
		}
	}
	require.Len(t, p.Labels, 3)
	require.Equal(t, []float64{1e-11, 1e-11}, p.Lines[0].Y)
	require.Len(t, f.Legends[0].Entries, 3)
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, PNG))

	// All values positive and no threshold: no triangle, no line.
	f, err = Spectrum([]float64{3, 2, 1}, 3, 0, Options{})
	require.NoError(t, err)
	require.Empty(t, f.Panels[0][0].Lines)
	require.Len(t, f.Legends[0].Entries, 1)

	for _, tc := range []struct {
		vals []float64
		pos  int
		want string
	}{
		{nil, 0, "no eigenvalues"},
		{[]float64{1, math.NaN()}, 1, "eigenvalue 2 is NaN"},
		{[]float64{1}, 2, "2 positive of 1"},
	} {
		_, err := Spectrum(tc.vals, tc.pos, 0, Options{})
		require.ErrorContains(t, err, tc.want)
	}
}

func TestEvalScores(t *testing.T) {
	s := Scores{
		Metric:  "accuracy",
		Methods: []string{"input", "dica"},
		Domains: []string{"a", "b", "c"},
		Score:   [][]float64{{0.99, 0.94, 1}, {0.95, math.NaN(), 0.85}},
		Min:     0, Max: 1,
	}
	f, err := EvalScores(s, Options{})
	require.NoError(t, err)
	p := f.Panels[0][0]
	require.Len(t, p.Marks, 5, "one mark per score present")
	k := 0
	for j := range s.Domains {
		for i := range s.Methods {
			if math.IsNaN(s.Score[i][j]) {
				continue
			}
			m := p.Marks[k]
			k++
			require.Equal(t, s.Score[i][j], m.Y)
			// At the right of the method's bar, within its column.
			require.Greater(t, m.X, float64(i)+0.05)
			require.Less(t, m.X, float64(i)+0.4)
			require.Equal(t, samplePalette[j], m.Color)
		}
	}
	// The joining lines first (a and c; b has one score), then per method
	// a white band, the bar on the method's tick and the mean: drawn last,
	// so no line crosses a bar.
	require.Len(t, p.Lines, 2+4*2)
	for i, row := range s.Score {
		var v []float64
		for _, x := range row {
			if !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		mean, sd := stat.MeanStdDev(v, nil)
		require.Equal(t, Tick{Value: float64(i), Label: fmt.Sprintf("%s\n%.4f ± %.4f", s.Methods[i], mean, sd)}, p.XTicks[i])
		halo, bar, mid := p.Lines[2+4*i], p.Lines[2+4*i+2], p.Lines[2+4*i+3]
		require.Equal(t, color.NRGBA{R: 255, G: 255, B: 255, A: 255}, halo.Color)
		require.Equal(t, []float64{float64(i), float64(i)}, bar.X, "on the method's tick")
		// The bar is mean ± sd, cut at 1: input's 0.9767 + 0.0321 would
		// pass 1.
		require.InDelta(t, math.Max(mean-sd, 0), bar.Y[0], 1e-15)
		require.InDelta(t, math.Min(mean+sd, 1), bar.Y[1], 1e-15)
		require.Equal(t, []float64{mean, mean}, mid.Y)
	}
	require.Equal(t, 1.0, p.Lines[2+2].Y[1], "input's bar stops at 1")
	require.LessOrEqual(t, p.YMax, 1.01, "the axis stops near 1")
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, SVG))

	// 12 samples: gray dots, no legend, each method's lowest score named.
	s.Domains = nil
	s.Score = [][]float64{make([]float64, 12), make([]float64, 12)}
	for j := range 12 {
		s.Domains = append(s.Domains, fmt.Sprintf("s%d", j+1))
		s.Score[0][j] = 0.9 + 0.005*float64(j)
		s.Score[1][j] = 0.99 - 0.007*float64(j)
	}
	f, err = EvalScores(s, Options{})
	require.NoError(t, err)
	require.Empty(t, f.Legends)
	p = f.Panels[0][0]
	for _, m := range p.Marks {
		require.Equal(t, OtherColor, m.Color)
	}
	require.Equal(t, []string{"s1", "s12"}, []string{p.Labels[0].Text, p.Labels[1].Text})
	require.Equal(t, 0.9, p.Labels[0].Y)

	for _, tc := range []struct {
		s    Scores
		want string
	}{
		{Scores{}, "need at least one"},
		{Scores{Methods: []string{"a"}, Domains: []string{"x"}}, "scores for 0 methods"},
		{Scores{Methods: []string{"a"}, Domains: []string{"x"}, Score: [][]float64{{1, 2}}}, "2 scores for 1 samples"},
		{Scores{Methods: []string{"a"}, Domains: []string{"x"}, Score: [][]float64{{math.NaN()}}}, "no scores"},
		{Scores{Methods: []string{"a"}, Domains: []string{"x"}, Score: [][]float64{{math.Inf(1)}}}, "+Inf"},
		{Scores{Methods: []string{"a"}, Domains: []string{"x"}, Score: [][]float64{{1.5}}, Max: 1}, "outside [0, 1]"},
	} {
		_, err := EvalScores(tc.s, Options{})
		require.ErrorContains(t, err, tc.want)
	}
}

func TestErrors(t *testing.T) {
	c, views := testCells(50, 6)
	bad := func(mod func(c *Cells, v *View)) error {
		cc := c
		cc.Domain = slices.Clone(c.Domain)
		cc.Label = slices.Clone(c.Label)
		v := views[0]
		v.Z = mat.DenseCopyOf(views[0].Z)
		mod(&cc, &v)
		_, err := Projection(cc, []View{v}, Options{})
		return err
	}
	for _, tc := range []struct {
		mod  func(c *Cells, v *View)
		want string
	}{
		{func(c *Cells, v *View) { v.Z = nil }, "has no coordinates"},
		{func(c *Cells, v *View) { v.Z.Set(3, 1, math.NaN()) }, "cell 4, component 2 is NaN"},
		{func(c *Cells, v *View) { c.Domain[5] = 9 }, "cell 6: domain 9"},
		{func(c *Cells, v *View) { c.Label[0] = -2 }, "cell 1: label -2"},
		{func(c *Cells, v *View) { c.Domain = c.Domain[1:] }, "49 domain indices for 50 cells"},
		{func(c *Cells, v *View) { c.Label = c.Label[1:] }, "49 labels"},
		{func(c *Cells, v *View) { c.Unseen = []bool{true} }, "1 unseen marks for 4 domains"},
		{func(c *Cells, v *View) { c.Total = []int64{1} }, "1 domain totals"},
		{func(c *Cells, v *View) { c.Value = []float64{1} }, "1 values for 50 cells"},
		{func(c *Cells, v *View) { v.Z = mat.NewDense(50, 1, nil) }, "has 1 components, the figure needs 2"},
	} {
		require.ErrorContains(t, bad(tc.mod), tc.want)
	}
	_, err := Projection(c, nil, Options{})
	require.ErrorContains(t, err, "no view")
	_, err = Projection(Cells{}, []View{{Name: "A", Z: mat.NewDense(1, 2, nil)}}, Options{})
	require.ErrorContains(t, err, "1 cells")
}

// TestLargeFast draws 16 samples of 5,000 cells in two views, the
// command's default, in all the cell kinds of picture.
func TestLargeFast(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 80,000 cells")
	}
	c, views := testCells(80000, 7)
	for _, build := range []func() (*Figure, error){
		func() (*Figure, error) { return Projection(c, views, Options{}) },
		func() (*Figure, error) { return Samples(c, views[0], Options{}) },
		func() (*Figure, error) { return Pairs(c, views[0], Options{}) },
	} {
		f, err := build()
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, f.Write(&buf, PNG))
		_, err = png.Decode(&buf)
		require.NoError(t, err)
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{-0.31, 0.62, []string{"-0.2", "0.0", "0.2", "0.4", "0.6"}},
		{0.94, 1.01, []string{"0.94", "0.96", "0.98", "1.00"}},
		{-7, 23, []string{"-5", "0", "5", "10", "15", "20"}},
		{0, 1e6, []string{"0", "2e5", "4e5", "6e5", "8e5", "1e6"}},
		{0, 0.0001, []string{"0", "2e-5", "4e-5", "6e-5", "8e-5", "0.0001"}},
	} {
		var got []string
		for _, tk := range (readableTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		require.Equal(t, tc.want, got, "%v..%v", tc.lo, tc.hi)
	}
	var got []string
	for _, tk := range (logTicks{}).Ticks(2e-13, 0.3) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	require.Equal(t, []string{"1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "0.01"}, got)
}

func TestPalettes(t *testing.T) {
	// The 20 sample colors are pairwise apart by a CIE76 color difference
	// of more than 20 (10 is a clear difference between patches), and none
	// is pale on white.
	for i, a := range samplePalette {
		require.Less(t, int(a.R)+int(a.G)+int(a.B), 3*235, "color %d too pale", i)
		for j, b := range samplePalette[:i] {
			require.Greater(t, deltaE(a, b), 20.0, "colors %d and %d", j, i)
		}
	}
	for i, a := range classPalette {
		for j, b := range classPalette[:i] {
			require.Greater(t, deltaE(a, b), 20.0, "colors %d and %d", j, i)
		}
	}
	require.Equal(t, samplePalette[3], SampleColor(3, 20))
	require.NotEqual(t, SampleColor(0, 21), SampleColor(1, 21))
	require.Equal(t, classPalette[2], ClassColor(2, 8))
	require.Equal(t, SampleColor(2, 9), ClassColor(2, 9))
	require.Equal(t, viridis[0], Viridis(-1))
	require.Equal(t, viridis[8], Viridis(2))
	require.Equal(t, viridis[4], Viridis(0.5))
}

// deltaE is the CIE76 difference of two sRGB colors (D65 white).
func deltaE(a, b color.NRGBA) float64 {
	lab := func(c color.NRGBA) [3]float64 {
		lin := func(v uint8) float64 {
			x := float64(v) / 255
			if x <= 0.04045 {
				return x / 12.92
			}
			return math.Pow((x+0.055)/1.055, 2.4)
		}
		r, g, b := lin(c.R), lin(c.G), lin(c.B)
		x := (0.4124*r + 0.3576*g + 0.1805*b) / 0.95047
		y := 0.2126*r + 0.7152*g + 0.0722*b
		z := (0.0193*r + 0.1192*g + 0.9505*b) / 1.08883
		f := func(t float64) float64 {
			if t > 0.008856 {
				return math.Cbrt(t)
			}
			return 7.787*t + 16.0/116
		}
		return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
	}
	p, q := lab(a), lab(b)
	return math.Sqrt(sq(p[0]-q[0]) + sq(p[1]-q[1]) + sq(p[2]-q[2]))
}

// BenchmarkProjection draws the command's default picture: 16 samples of
// 5,000 cells, the method and a baseline, each a large panel of 80,000 dots
// beside 16 small panels of 5,000 over a backdrop of 80,000, as a PNG.
func BenchmarkProjection(b *testing.B) {
	c, views := testCells(80000, 8)
	c.DomainNames = make([]string, 16)
	c.Unseen, c.Total = nil, nil
	for g := range c.DomainNames {
		c.DomainNames[g] = fmt.Sprintf("sample%d", g+1)
	}
	for i := range c.Domain {
		c.Domain[i] = i % 16
	}
	for b.Loop() {
		f, err := Projection(c, views, Options{})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, PNG); err != nil {
			b.Fatal(err)
		}
	}
}

// TestShorten: a title wider than its panel loses characters of its
// middle, keeps its start and end, and fits.
func TestShorten(t *testing.T) {
	sty := style(compactSize, true, black)
	name := "MiltenyiBiotec__FCS3.1__EY_2013-07-19_PBS_FCS_3.1_Well_A1.001.fcs"
	require.Equal(t, "sample1", shorten(sty, "sample1", 100))
	for _, w := range []vg.Length{60, 100, 160} {
		got := shorten(sty, name, w)
		require.LessOrEqual(t, sty.Width(got), w, got)
		require.Greater(t, sty.Width(got), w-sty.Width("MM"), "no shorter than needed: %s", got)
		parts := strings.Split(got, "…")
		require.Len(t, parts, 2, got)
		require.True(t, strings.HasPrefix(name, parts[0]) && strings.HasSuffix(name, parts[1]), got)
	}
}

// TestBackdropShared: small multiples that share one backdrop draw it once
// and reuse it; the picture is that of panels each drawing their own, but
// for the backdrop's sub-pixel offset.
func TestBackdropShared(t *testing.T) {
	c, views := testCells(4000, 15)
	f, err := Samples(c, views[0], Options{})
	require.NoError(t, err)
	render := func(f *Figure) *image.RGBA {
		var buf bytes.Buffer
		require.NoError(t, f.Write(&buf, PNG))
		img, err := png.Decode(&buf)
		require.NoError(t, err)
		return img.(*image.RGBA)
	}
	shared := render(f)
	for _, row := range f.Panels {
		for _, p := range row {
			if p != nil {
				p.Backdrop = slices.Clone(p.Backdrop)
			}
		}
	}
	own := render(f)
	var diff, big int
	for i := range shared.Pix {
		d := int(shared.Pix[i]) - int(own.Pix[i])
		diff += max(d, -d)
		if max(d, -d) > 64 {
			big++
		}
	}
	require.Less(t, float64(diff)/float64(len(shared.Pix)), 0.5, "mean difference per byte")
	require.Less(t, big, len(shared.Pix)/1000)

	// Two panels of one backdrop: the second reuses the first's layer; a
	// panel of another backdrop draws its own.
	back := f.Panels[0][0].Backdrop
	a, b := *f.Panels[0][0], *f.Panels[0][1]
	b.Backdrop = back
	b.XLabel, b.YLabel = a.XLabel, a.YLabel // the same data area
	other := b
	other.Backdrop = slices.Clone(back)
	backs := &backdrops{}
	canvas := draw.New(vgimg.New(300, 300))
	a.plot(96, backs).Draw(canvas)
	require.Equal(t, &back[0], backs.key.first)
	first := &backs.buf[0]
	b.plot(96, backs).Draw(canvas)
	require.Same(t, first, &backs.buf[0], "reused")
	other.plot(96, backs).Draw(canvas)
	require.NotSame(t, first, &backs.buf[0], "drawn anew")
}
