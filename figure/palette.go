package figure

import (
	"image/color"
	"math"
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
