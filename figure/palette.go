package figure

import (
	"image/color"
	"math"
	"slices"

	"github.com/dicalab/dica/csvio"
)

func rgb(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// samplePalette holds 20 colors that stay distinguishable from one another
// as small dots on white: the saturated ones first, then lighter and
// darker ones (after Trubetskoy's list of 20 simple distinct colors, with
// the colors too pale for a white background darkened, and beige replaced
// by black).
var samplePalette = []color.NRGBA{
	rgb(0xe6194b), // red
	rgb(0x3cb44b), // green
	rgb(0x4363d8), // blue
	rgb(0xf58231), // orange
	rgb(0x911eb4), // purple
	rgb(0x2bbbd8), // cyan
	rgb(0xf032e6), // magenta
	rgb(0x9acd32), // lime
	rgb(0x469990), // teal
	rgb(0x9a6324), // brown
	rgb(0x800000), // maroon
	rgb(0x808000), // olive
	rgb(0x000075), // navy
	rgb(0x8c8c8c), // gray
	rgb(0xf08cb4), // pink
	rgb(0xa58be0), // lavender
	rgb(0xd4b000), // gold
	rgb(0x4fd18b), // mint
	rgb(0xe0a070), // apricot
	rgb(0x000000), // black
}

// classPalette holds 8 colors for populations, safe for the common forms
// of color blindness (Okabe and Ito), the yellow darkened for a white
// background.
var classPalette = []color.NRGBA{
	rgb(0x0072b2), // blue
	rgb(0xd55e00), // vermillion
	rgb(0x009e73), // bluish green
	rgb(0xcc79a7), // reddish purple
	rgb(0xe69f00), // orange
	rgb(0x56b4e9), // sky blue
	rgb(0x000000), // black
	rgb(0xbfae00), // yellow
}

// SampleColor returns the color of sample i of n: the 20 colors of a
// palette made to be told apart as small dots, then, beyond 20 samples,
// hues spaced evenly around the color wheel (which the eye no longer tells
// apart reliably; the legend names them). Indices wrap around: i and
// i + n (or i + 20 with the palette) have the same color, so that a
// negative i has one too.
func SampleColor(i, n int) color.NRGBA {
	if n <= len(samplePalette) {
		return samplePalette[modIndex(i, len(samplePalette))]
	}
	return hue(float64(modIndex(i, n))/float64(n), 0.75, 0.8)
}

// ClassColor returns the color of population i of n: a palette of 8 colors
// safe for color-blind readers, then SampleColor beyond 8. Indices wrap
// around as SampleColor's do.
func ClassColor(i, n int) color.NRGBA {
	if n <= len(classPalette) {
		return classPalette[modIndex(i, len(classPalette))]
	}
	return SampleColor(i, n)
}

// modIndex returns i modulo n > 0, in [0, n).
func modIndex(i, n int) int {
	if i %= n; i < 0 {
		i += n
	}
	return i
}

// hue returns the color of hue h in [0, 1) with saturation s and value v.
func hue(h, s, v float64) color.NRGBA {
	h = math.Mod(h, 1) * 6
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h, 2)-1))
	var r, g, b float64
	switch int(h) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := v - c
	to := func(f float64) uint8 { return uint8(math.Round(255 * (f + m))) }
	return color.NRGBA{R: to(r), G: to(g), B: to(b), A: 255}
}

// viridis holds 9 stops of the viridis color map (perceptually uniform,
// readable in gray scale and by color-blind readers), dark blue to yellow.
var viridis = []color.NRGBA{
	rgb(0x440154), rgb(0x472d7b), rgb(0x3b528b), rgb(0x2c728e), rgb(0x21918c),
	rgb(0x28ae80), rgb(0x5ec962), rgb(0xaadc32), rgb(0xfde725),
}

// Viridis maps t in [0, 1] (clamped) to the viridis color map, linearly
// between its stops.
func Viridis(t float64) color.NRGBA {
	if !(t > 0) {
		return viridis[0]
	}
	if t >= 1 {
		return viridis[len(viridis)-1]
	}
	p := t * float64(len(viridis)-1)
	i := int(p)
	f := p - float64(i)
	a, b := viridis[i], viridis[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + f*(float64(y)-float64(x)))) }
	return color.NRGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 255}
}

// Colors used for structure rather than data.
var (
	backdropColor = rgb(0xcfcfcf)
	unseenColor   = rgb(0xb3360f) // titles of unseen samples
	trainShade    = color.NRGBA{R: 0xee, G: 0xf1, B: 0xf6, A: 0xff}
	unseenShade   = color.NRGBA{R: 0xfc, G: 0xf1, B: 0xe8, A: 0xff}
	gridColor     = color.NRGBA{R: 0xe4, G: 0xe4, B: 0xe4, A: 0xff}
	black         = color.NRGBA{A: 0xff}
	gray          = rgb(0x7f7f7f)
)

// Palette gives each population a fixed color. The color of a population
// is a function of its place among the palette's names in natural order
// (csvio.NaturalCompare: "2" before "10", "B" before "NK"), whatever the
// order in which the names are given, so every picture made with the
// population names of one model colors each population alike, whichever
// populations its cells hold. The first 8 places take colors safe for the
// common forms of color blindness (Okabe and Ito); further places take
// other distinct colors, and adding a population after the others does not
// change their colors.
//
// The methods of a nil *Palette are safe: it holds no name.
type Palette struct {
	names []string
	index map[string]int
}

// NewPalette returns the palette of the populations named; a name given
// twice counts once.
func NewPalette(names []string) *Palette {
	p := &Palette{index: make(map[string]int, len(names))}
	for _, n := range names {
		if _, ok := p.index[n]; !ok {
			p.index[n] = 0
			p.names = append(p.names, n)
		}
	}
	slices.SortStableFunc(p.names, csvio.NaturalCompare)
	for i, n := range p.names {
		p.index[n] = i
	}
	return p
}

// Names returns the palette's names in natural order.
func (p *Palette) Names() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.names)
}

// Has reports whether the palette holds the name.
func (p *Palette) Has(name string) bool {
	if p == nil {
		return false
	}
	_, ok := p.index[name]
	return ok
}

// Color returns the color of the population name: the color of its place
// in the palette, or OtherColor for a name the palette does not hold.
func (p *Palette) Color(name string) color.NRGBA {
	if !p.Has(name) {
		return OtherColor
	}
	return placeColor(p.index[name])
}

// extraPalette holds the colors of the places after classPalette's: those
// of samplePalette that differ clearly from every color of classPalette
// and from OtherColor (its orange, cyan, gray, pink, gold and black do
// not).
var extraPalette = func() []color.NRGBA {
	var out []color.NRGBA
	for i, c := range samplePalette {
		if !slices.Contains([]int{3, 5, 13, 14, 16, 19}, i) {
			out = append(out, c)
		}
	}
	return out
}()

// placeColor returns the color of place i of a palette: the 8 colors of
// classPalette, then the 14 of extraPalette, then hues around the color
// wheel at golden-ratio steps.
func placeColor(i int) color.NRGBA {
	switch {
	case i < len(classPalette):
		return classPalette[i]
	case i < len(classPalette)+len(extraPalette):
		return extraPalette[i-len(classPalette)]
	}
	return hue(math.Mod(float64(i)*0.6180339887498949, 1), 0.75, 0.8)
}

// OtherColor is the color of the cells of a population a palette does not
// hold, and of the samples grouped as "other samples" where a panel would
// show more than MaxSampleColors.
var OtherColor = rgb(0x6b6b6b)

// MaxSampleColors is the largest number of samples a panel colors one by
// one: beyond it the eye no longer tells the colors apart, so pictures
// draw one small panel per sample or group the samples beyond the first
// MaxSampleColors - 1 as "other samples" in OtherColor.
const MaxSampleColors = 10
