// Package figure draws the pictures a user looks at before trusting a
// projection: all cells projected on components colored by population
// beside one small panel per sample, the same cells under a baseline,
// unseen samples among the training ones, new samples gated by a
// classifier beside its hand-gated reference, the eigenvalue spectrum, and
// the per-sample scores of an evaluation.
//
// The builders (Projection, Pairs, Samples, TrainingAndUnseen, Gated,
// Spectrum, EvalScores) take matrices and indices and return a Figure: the panels
// with the data they draw (every dot with the cell it stands for and its
// color, so a test can check a picture against its data), and legends.
// Figure.Write renders it as PNG or SVG to an io.Writer, with
// gonum.org/v1/plot. SampleModel and SampleComponents draw the cells of a
// picture from a stream (at most so many per sample, uniformly at random),
// and PCABaseline and KPCABaseline project them under a baseline.
//
// Colors mean one thing everywhere: a population's color comes from its
// place among the model's populations in natural order (Palette), the same
// in every picture of a model and safe for color-blind readers; no panel
// colors more than MaxSampleColors samples. Cells are drawn as small
// translucent dots rasterized at the output's resolution (in SVG as an
// embedded image; axes and text stay vector), their colors blended
// independently of the order they are drawn in, so that no sample or
// population hides another: a hundred thousand cells per panel draw in
// milliseconds, where one vector glyph per cell would take seconds and
// make SVG files of tens of megabytes.
package figure

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
)

// Format is an output format.
type Format int

// The formats.
const (
	PNG Format = iota
	SVG
)

// String returns "png" or "svg".
func (f Format) String() string {
	switch f {
	case PNG:
		return "png"
	case SVG:
		return "svg"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf returns the format named by the extension of path: .png or .svg
// (any case).
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return PNG, nil
	case ".svg":
		return SVG, nil
	}
	return 0, fmt.Errorf("figure: %q: the name must end in .png or .svg", path)
}

// DefaultDPI is the resolution of PNG output when Figure.DPI is 0, that of
// CSS pixels: a figure of 12 x 9 inches is 1152 x 864 pixels, in PNG as in
// a browser showing the SVG.
const DefaultDPI = 96

// Figure is a picture: a title, note lines under it, a grid of panels and
// legends at the right. The builders fill it; a caller may change titles,
// notes and the size before writing it.
type Figure struct {
	// Title is the figure's title, Notes the lines printed under it in
	// smaller type (the subsample, the seed, what is marked how).
	Title string
	Notes []string
	// Panels is the grid, row by row; a nil panel leaves its tile empty.
	// Every row has the same length.
	Panels [][]*Panel
	// Legends are drawn in a column at the right, each at the top of the
	// panel row Legend.Row, stacked when several share a row.
	Legends []Legend
	// Width and Height are the size of the picture; DPI the resolution of
	// PNG output (DefaultDPI when 0) and of the cells' image in SVG.
	Width, Height vg.Length
	DPI           int
}

// Panel is one plot and the data it draws. Axis ranges are fixed by the
// builder, so panels that show the same coordinates share their axes.
type Panel struct {
	// RowSpan and ColSpan, when more than 1, make the panel cover that
	// many tiles of the grid down and to the right of its own (a large
	// panel beside small ones); the tiles it covers must be nil.
	RowSpan, ColSpan int
	Title            string
	// Compact draws the title smaller, for small multiples.
	Compact bool
	// HideXTickLabels and HideYTickLabels keep the ticks of an axis but
	// not their labels: small multiples that share their axes label them
	// on the outer panels only.
	HideXTickLabels, HideYTickLabels bool
	// TitleColor colors the title (black when zero); Shade tints the data
	// area: both mark training and unseen samples.
	TitleColor color.NRGBA
	Shade      color.NRGBA
	XLabel     string
	YLabel     string
	// XMin, XMax, YMin and YMax are the axis ranges.
	XMin, XMax, YMin, YMax float64
	// LogY puts the Y axis on a log scale.
	LogY bool
	// XTicks, when not nil, replaces the numeric ticks of the X axis (the
	// names of methods on a categorical axis).
	XTicks []Tick
	// Backdrop dots are drawn first, in light gray whatever their color
	// (the other samples' cells behind one sample's); Dots are drawn
	// after them in order, the later ones on top. Both are cells: small
	// translucent discs of radius DotRadius (points) and opacity
	// DotAlpha.
	Backdrop  []Dot
	Dots      []Dot
	DotRadius vg.Length
	DotAlpha  float64
	// Balance weighs the colors of overlapping dots by the inverse of the
	// number of dots of each color: where a rare population overlaps a
	// common one, the pixel's color is the mean of the two colors weighted
	// by the density of each population rather than by its count of
	// cells, so a small population shows where it lies. The opacity of a
	// pixel still counts every dot.
	Balance bool
	// Lines are drawn after the dots, Marks (vector glyphs) and Labels
	// after the lines.
	Lines  []Line
	Marks  []Mark
	Labels []Label
}

// Dot is one cell in a panel: its coordinates, the row of the cell in the
// data given to the builder (-1 when it is not a cell) and its color.
type Dot struct {
	X, Y  float64
	Cell  int
	Color color.NRGBA
}

// Line is a polyline.
type Line struct {
	X, Y   []float64
	Color  color.NRGBA
	Width  vg.Length
	Dashed bool
}

// Glyph is the shape of a Mark.
type Glyph int

// The glyphs.
const (
	Circle Glyph = iota
	Ring
	Square
	Triangle
	Cross
)

// Mark is a vector glyph at a point (an eigenvalue, a score).
type Mark struct {
	X, Y   float64
	Color  color.NRGBA
	Glyph  Glyph
	Radius vg.Length
}

// Label is a text at a point of the data, centered above it, or below it
// when Below is set.
type Label struct {
	X, Y  float64
	Text  string
	Color color.NRGBA
	Below bool
}

// Tick is a labelled position of an axis.
type Tick struct {
	Value float64
	Label string
}

// Legend is a titled list of colored entries, or a color bar when Bar is
// set.
type Legend struct {
	Title   string
	Entries []Entry
	Bar     *ColorBar
	// Row is the panel row at whose top the legend starts.
	Row int
}

// Entry is one line of a legend: a swatch of Color in the given glyph and
// the name.
type Entry struct {
	Name  string
	Color color.NRGBA
	Glyph Glyph
}

// ColorBar maps values in [Min, Max] to colors (Map(0) at Min, Map(1) at
// Max).
type ColorBar struct {
	Min, Max float64
	Map      func(t float64) color.NRGBA
}

// Write renders the figure in the format to w.
func (f *Figure) Write(w io.Writer, format Format) error {
	if f == nil {
		return errors.New("figure: nil figure")
	}
	if err := f.check(); err != nil {
		return err
	}
	return render(f, w, format)
}

// check validates the figure's shape before rendering.
func (f *Figure) check() error {
	if !(f.Width > 0 && f.Height > 0) {
		return fmt.Errorf("figure: size %v x %v: both must be positive", f.Width, f.Height)
	}
	if f.DPI < 0 {
		return fmt.Errorf("figure: DPI %d is negative", f.DPI)
	}
	if px := float64(f.Width) / 72 * float64(f.dpi()) * float64(f.Height) / 72 * float64(f.dpi()); px > MaxPixels {
		return fmt.Errorf("figure: %.0f pixels is more than %d: make the figure smaller or lower its DPI", px, MaxPixels)
	}
	if len(f.Panels) == 0 {
		return errors.New("figure: no panels")
	}
	for i, row := range f.Panels {
		if len(row) != len(f.Panels[0]) {
			return fmt.Errorf("figure: panel row %d has %d panels, row 1 has %d", i+1, len(row), len(f.Panels[0]))
		}
	}
	for i, row := range f.Panels {
		for j, p := range row {
			if p == nil || (p.RowSpan <= 1 && p.ColSpan <= 1) {
				continue
			}
			rs, cs := max(p.RowSpan, 1), max(p.ColSpan, 1)
			if i+rs > len(f.Panels) || j+cs > len(row) {
				return fmt.Errorf("figure: the panel at row %d, column %d spans %d x %d tiles, beyond the grid of %d x %d", i+1, j+1, rs, cs, len(f.Panels), len(row))
			}
			for a := i; a < i+rs; a++ {
				for b := j; b < j+cs; b++ {
					if (a != i || b != j) && f.Panels[a][b] != nil {
						return fmt.Errorf("figure: the panel at row %d, column %d spans the tile at row %d, column %d, which holds a panel", i+1, j+1, a+1, b+1)
					}
				}
			}
		}
	}
	return nil
}

// MaxPixels bounds the size of a picture: 25 megapixels (5000 x 5000).
// Drawing one takes 4 bytes per pixel for a PNG, and 16 bytes per pixel of
// a panel while its cells are drawn.
const MaxPixels = 25_000_000

func (f *Figure) dpi() int {
	if f.DPI == 0 {
		return DefaultDPI
	}
	return f.DPI
}
