package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/figure"
	"github.com/dicalab/dica/toy"
)

// plotData writes three samples as CyTOF-style CSV files (no header, 3
// markers) with row-aligned label files: populations "1", "2" and "10" and
// ungated cells "0"; each sample shifted. It returns the folder.
func plotData(t *testing.T) string {
	t.Helper()
	return plotDataNoise(t, 0.3)
}

// plotDataNoise writes the data of plotData with noise of standard
// deviation sd about each population's center.
func plotDataNoise(t *testing.T, sd float64) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 3))
	for s, name := range []string{"1", "2", "10"} {
		var x, l strings.Builder
		n := 150 + 60*s
		for range n {
			c := rng.IntN(4)
			lab := []string{"0", "1", "2", "10"}[c]
			for j := 0; j < 3; j++ {
				if j > 0 {
					x.WriteByte(',')
				}
				fmt.Fprintf(&x, "%.6g", float64((c*(j+1))%4)+sd*rng.NormFloat64()+0.25*float64(s))
			}
			x.WriteByte('\n')
			l.WriteString(lab + "\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sample"+name+".csv"), []byte(x.String()), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "labels"+name+".csv"), []byte(l.String()), 0o644))
	}
	return dir
}

// plotModel fits DICA to samples 1 and 2 (sample10 stays unseen).
func plotModel(t *testing.T, dir string) string {
	t.Helper()
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", filepath.Join(dir, "sample1.csv"), "--data", filepath.Join(dir, "sample2.csv"),
		"--labels", filepath.Join(dir, "labels1.csv"), "--labels", filepath.Join(dir, "labels2.csv"), "--labels-ignore", "0",
		"--sigma", "1", "--rank", "40", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	return model
}

func plotFlags(dir string) *dataFlags {
	return &dataFlags{
		data: listFlag{filepath.Join(dir, "sample*.csv")}, labels: listFlag{filepath.Join(dir, "labels*.csv")},
		labelsIgnore: "0", transform: "none", header: "auto",
	}
}

// TestPlotMatchesTransform checks the cells a picture draws against the
// model's projection of the same rows: coordinates bit for bit, colors by
// population and by sample, the subsample per sample, and the unseen
// sample marked.
func TestPlotMatchesTransform(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	m, err := dica.Load(plotModel(t, dir))
	require.NoError(t, err)
	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	const per = 60
	s, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: per, Seed: 3})
	require.NoError(t, err)

	// The reference: every row read and projected at once.
	ds, err := dataset.Collect(ctx, src)
	require.NoError(t, err)
	zAll, err := m.Transform(ds.X, dica.TransformOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"sample1", "sample2", "sample10"}, s.Domains)
	require.Equal(t, []string{"1", "2", "10"}, s.Classes, "natural order")
	sizes := ds.DomainSizes()
	n, k := s.Z.Dims()
	require.Equal(t, m.Positive, k)
	got := make([]int, len(sizes))
	for i := 0; i < n; i++ {
		r := int(s.Row[i])
		require.Equal(t, zAll.RawRowView(r), s.Z.RawRowView(i), "row %d", r)
		require.Equal(t, ds.X.RawRowView(r), s.X.RawRowView(i))
		require.Equal(t, ds.DomainNames[ds.Domain[r]], s.Domains[s.Domain[i]])
		require.Equal(t, ds.ClassNames[ds.Label[r]], s.Classes[s.Label[i]])
		got[s.Domain[i]]++
		if i > 0 && s.Domain[i] == s.Domain[i-1] {
			require.Less(t, s.Row[i-1], s.Row[i], "stream order within a sample")
		}
	}
	for g, size := range sizes {
		require.Equal(t, min(per, size), got[g])
		require.EqualValues(t, size, s.Total[g])
	}
	// Seeded: the same seed, the same cells; another seed, others.
	s2, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: per, Seed: 3})
	require.NoError(t, err)
	require.Equal(t, s.Row, s2.Row)
	s3, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: per, Seed: 4})
	require.NoError(t, err)
	require.NotEqual(t, s.Row, s3.Row)

	// The picture: all cells by population in a large panel, each sample
	// in a small one (3 samples: 2 x 2 small panels beside a large panel
	// of 2 x 2 tiles). A population's color is its place among the
	// model's populations in natural order: 1, 2, 10.
	fig, err := cellsFigure(ctx, "projection", m, s, "none", nil, figure.Options{Seed: 1})
	require.NoError(t, err)
	require.Len(t, fig.Panels, 2)
	require.Len(t, fig.Panels[0], 4)
	pal := figure.NewPalette([]string{"1", "2", "10"})
	col := func(i int) color.NRGBA { return pal.Color(s.Classes[s.Label[i]]) }
	require.Equal(t, figure.ClassColor(2, 3), pal.Color("10"))
	big := fig.Panels[0][0]
	require.Len(t, big.Dots, n)
	for g, p := range []*figure.Panel{big, fig.Panels[0][2], fig.Panels[0][3], fig.Panels[1][2]} {
		for _, d := range p.Dots {
			r := int(s.Row[d.Cell])
			require.Equal(t, zAll.At(r, 0), d.X)
			require.Equal(t, zAll.At(r, 1), d.Y)
			require.Equal(t, col(d.Cell), d.Color)
			if g > 0 {
				require.Equal(t, g-1, s.Domain[d.Cell], "a sample's panel holds its cells")
			}
		}
	}
	require.Equal(t, "sample10 (unseen)", fig.Panels[1][2].Title)
	require.Equal(t, "sample2", fig.Panels[0][3].Title)
	require.Equal(t, []string{"1", "2", "10"}, []string{fig.Legends[0].Entries[0].Name, fig.Legends[0].Entries[1].Name, fig.Legends[0].Entries[2].Name})
	require.Contains(t, fig.Notes[0], fmt.Sprintf("at most %d per sample", per))

	// The command draws the same, at the requested size, the same bytes
	// twice.
	out := filepath.Join(dir, "fig.png")
	args := []string{"plot", "--model", filepath.Join(dir, "m.dica"), "--data", filepath.Join(dir, "sample*.csv"),
		"--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0", "--out", out, "--width", "800", "--height", "600", "--quiet"}
	_, errs, code := runCmd(t, args...)
	require.Equal(t, 0, code, errs)
	first, err := os.ReadFile(out)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(first))
	require.NoError(t, err)
	require.Equal(t, 800, img.Bounds().Dx())
	require.Equal(t, 600, img.Bounds().Dy())
	_, errs, code = runCmd(t, args...)
	require.Equal(t, 0, code, errs)
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(first, again), "the same picture twice")

	for _, kind := range []string{"samples", "pairs", "unseen"} {
		_, errs, code = runCmd(t, append(args, "--kind", kind)...)
		require.Equal(t, 0, code, "%s: %s", kind, errs)
	}
}

// TestPlotProjected draws a transform output: the same cells as from the
// model and the data, to the digits the CSV keeps.
func TestPlotProjected(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	model := plotModel(t, dir)
	m, err := dica.Load(model)
	require.NoError(t, err)
	csv := filepath.Join(dir, "z.csv")
	_, errs, code := runCmd(t, "transform", "--model", model, "--data", filepath.Join(dir, "sample*.csv"),
		"--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0", "--out", csv, "--quiet")
	require.Equal(t, 0, code, errs)

	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	so := figure.SampleOptions{PerDomain: 50, Seed: 9}
	want, err := figure.SampleModel(ctx, m, src, so)
	require.NoError(t, err)
	got, err := projectedSample(ctx, []string{csv}, nil, so)
	require.NoError(t, err)
	require.Equal(t, want.Row, got.Row)
	require.Equal(t, want.Domains, got.Domains)
	require.Equal(t, want.Domain, got.Domain)
	require.Equal(t, want.Classes, got.Classes)
	require.Equal(t, want.Label, got.Label)
	require.Equal(t, want.Total, got.Total)
	require.Equal(t, strings.ToUpper(m.Config().Method.String()), got.Method)
	require.Nil(t, got.X)
	n, k := want.Z.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			require.InDelta(t, want.Z.At(i, j), got.Z.At(i, j), 1e-9*math.Max(1, math.Abs(want.Z.At(i, j))))
		}
	}

	// An SVG of the requested size in CSS pixels.
	out := filepath.Join(dir, "pairs.svg")
	_, errs, code = runCmd(t, "plot", "--projected", csv, "--kind", "pairs", "--out", out, "--width", "960", "--height", "720", "--quiet")
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var root struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
	}
	require.NoError(t, xml.Unmarshal(b, &root))
	require.Equal(t, "svg", root.XMLName.Local)
	require.Equal(t, "720pt", root.Width, "960 px at 96 per inch")
	require.Equal(t, "540pt", root.Height)

	// A CSV without component columns.
	_, errs, code = runCmd(t, "plot", "--projected", filepath.Join(dir, "sample1.csv"), "--out", filepath.Join(dir, "x.png"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no component columns")
}

// TestPlotBaseline draws a baseline beside the model: fitted to the
// samples the model was fitted on (the baselines' numbers are checked in
// package figure).
func TestPlotBaseline(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	m, err := dica.Load(plotModel(t, dir))
	require.NoError(t, err)
	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	s, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: 80, Seed: 1})
	require.NoError(t, err)
	var train int
	for _, g := range s.Domain {
		if s.Domains[g] != "sample10" {
			train++
		}
	}
	for _, b := range []string{"pca", "kpca"} {
		fig, err := cellsFigure(ctx, "projection", m, s, b, nil, figure.Options{})
		require.NoError(t, err)
		require.Contains(t, fig.Notes[1], fmt.Sprintf("of the training samples (%d cells)", train), b)
		require.Len(t, fig.Panels, 4, "two blocks of 2 rows")
	}

	out := filepath.Join(dir, "b.png")
	for _, b := range []string{"pca", "kpca"} {
		_, errs, code := runCmd(t, "plot", "--model", filepath.Join(dir, "m.dica"), "--data", filepath.Join(dir, "sample*.csv"),
			"--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0", "--baseline", b, "--out", out, "--quiet")
		require.Equal(t, 0, code, errs)
	}
}

// TestPlotSpectrumAndEval draws a model's eigenvalues and the scores of a
// real 'dica eval --json' run.
func TestPlotSpectrumAndEval(t *testing.T) {
	dir := plotData(t)
	model := plotModel(t, dir)
	m, err := dica.Load(model)
	require.NoError(t, err)
	fig, err := spectrumFigure(m, figure.Options{})
	require.NoError(t, err)
	marks := fig.Panels[0][0].Marks
	require.Len(t, marks, len(m.Eigenvalues))
	for j := 0; j < m.Positive; j++ {
		require.Equal(t, m.Eigenvalues[j], marks[j].Y)
	}
	require.Contains(t, fig.Title, "DICA, sigma = 1, rank 40")
	out := filepath.Join(dir, "spec.png")
	_, errs, code := runCmd(t, "plot", "--model", model, "--out", out)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(out)
	require.NoError(t, err)
	_, err = png.Decode(f)
	f.Close()
	require.NoError(t, err)

	js, errs, code := runCmd(t, "eval", "--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"),
		"--labels-ignore", "0", "--methods", "input,dica", "--sigma", "1", "--rank", "30", "--json", "--quiet")
	require.Equal(t, 0, code, errs)
	evalPath := filepath.Join(dir, "eval.json")
	require.NoError(t, os.WriteFile(evalPath, []byte(js), 0o644))
	var raw struct {
		Methods []struct {
			Method string
			Scores []struct {
				Domain string
				Score  float64
			}
			Mean, SD float64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(js), &raw))
	sc, _, err := evalScores(strings.NewReader(js), "x")
	require.NoError(t, err)
	require.Equal(t, []string{"input", "dica"}, sc.Methods)
	require.Equal(t, []string{"sample1", "sample2", "sample10"}, sc.Domains)
	for i, mm := range raw.Methods {
		for _, d := range mm.Scores {
			require.Equal(t, d.Score, sc.Score[i][slices.Index(sc.Domains, d.Domain)])
		}
	}
	fig, err = evalFigure("-", strings.NewReader(js), figure.Options{})
	require.NoError(t, err)
	for i, mm := range raw.Methods {
		require.Equal(t, fmt.Sprintf("%s\n%.4f ± %.4f", mm.Method, mm.Mean, mm.SD), fig.Panels[0][0].XTicks[i].Label, "the mean and sd of dica eval")
	}
	require.Equal(t, [2]float64{0, 1}, [2]float64{sc.Min, sc.Max}, "accuracy is within 0 and 1")
	require.Contains(t, fig.Notes[len(fig.Notes)-1], "3 splits")
	out = filepath.Join(dir, "eval.svg")
	_, errs, code = runCmd(t, "plot", "--eval", evalPath, "--out", out)
	require.Equal(t, 0, code, errs)

	// Keys added to the JSON are ignored; broken JSON is an error.
	_, _, err = evalScores(strings.NewReader(`{"methods":[{"method":"a","new":1,"scores":[{"domain":"x","score":0.5,"extra":[1]}]}],"more":{}}`), "x")
	require.NoError(t, err)
	_, _, err = evalScores(strings.NewReader(`{"methods":[`), "bad.json")
	require.ErrorContains(t, err, "bad.json: not the JSON of dica eval --json")
	_, _, err = evalScores(strings.NewReader(`{"task":"classification"}`), "e.json")
	require.ErrorContains(t, err, "no methods")
}

func TestPlotUsageErrors(t *testing.T) {
	dir := plotData(t)
	model := plotModel(t, dir)
	data := filepath.Join(dir, "sample*.csv")
	in := filepath.Join(dir, "sample1.csv")
	before, err := os.ReadFile(in)
	require.NoError(t, err)
	png := filepath.Join(dir, "p.png")
	// A model whose name ends in .svg, to be refused as the output.
	modelSVG := filepath.Join(dir, "model.svg")
	mb, err := os.ReadFile(model)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(modelSVG, mb, 0o644))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--model", model, "--data", data}, 2, "--out is required"},
		{[]string{"--model", model, "--data", data, "--out", "p.jpg"}, 2, "must end in .png or .svg"},
		{[]string{"--data", data, "--out", png}, 2, "--data needs --model"},
		{[]string{"--out", png}, 2, "no cells"},
		{[]string{"--model", model, "--data", data, "--eval", "e.json", "--out", png}, 2, "give one of"},
		{[]string{"--model", model, "--data", data, "--kind", "bars", "--out", png}, 2, `--kind "bars"`},
		{[]string{"--model", model, "--data", data, "--axes", "1", "--out", png}, 2, "want two components"},
		{[]string{"--model", model, "--data", data, "--axes", "2,2", "--out", png}, 2, "two different"},
		{[]string{"--model", model, "--data", data, "--axes", "1,9", "--out", png}, 2, "component 9 was asked for"},
		{[]string{"--model", model, "--data", data, "--cells", "0", "--out", png}, 2, "--cells 0"},
		{[]string{"--model", model, "--data", data, "--baseline", "umap", "--out", png}, 2, `--baseline "umap"`},
		{[]string{"--model", model, "--data", data, "--kind", "samples", "--baseline", "pca", "--out", png}, 2, "applies to --kind projection"},
		{[]string{"--projected", in, "--baseline", "pca", "--out", png}, 2, "needs the cells' inputs"},
		{[]string{"--kind", "eval", "--out", png}, 2, "needs --eval"},
		{[]string{"--kind", "spectrum", "--out", png}, 2, "needs --model"},
		{[]string{"--model", model, "--data", data, "--kind", "spectrum", "--out", png}, 2, "give --model only"},
		{[]string{"--model", modelSVG, "--out", modelSVG}, 2, "also an input"},
		{[]string{"--model", model, "--data", filepath.Join(dir, "sample1.csv"), "--kind", "unseen", "--out", png}, 2, "the model was fitted on every sample given (sample1): name the samples to hold apart with --unseen"},
		{[]string{"--model", model, "--data", data, "--unseen", "sample10", "--out", png}, 2, "--unseen applies to --kind unseen"},
		{[]string{"--model", model, "--data", data, "--kind", "unseen", "--unseen", "sample3", "--out", png}, 2, `--unseen "sample3": no such sample in the data (its samples: sample1,sample2,sample10)`},
		{[]string{"--model", model, "--data", data, "--kind", "unseen", "--unseen", "sample*", "--out", png}, 2, "--unseen names every sample"},
		{[]string{"--model", model, "--data", data, "--kind", "unseen", "--unseen", "sample[", "--out", png}, 2, `--unseen "sample["`},
		{[]string{"--eval", filepath.Join(dir, "missing.json"), "--out", png}, 1, "missing.json"},
		{[]string{"--model", model, "--data", data, "--out", filepath.Join(dir, "no", "p.png")}, 2, "does not exist"},
		{[]string{"--model", model, "--data", data, "--width", "-3", "--out", png}, 2, "--width"},
	} {
		_, errs, code := runCmd(t, append([]string{"plot", "--quiet"}, tc.args...)...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.want, "%v", tc.args)
		require.NotContains(t, errs, "Options", "no Go names in messages")
	}
	after, err := os.ReadFile(in)
	require.NoError(t, err)
	require.Equal(t, before, after, "an input is never overwritten")
	after, err = os.ReadFile(modelSVG)
	require.NoError(t, err)
	require.Equal(t, mb, after, "an input is never overwritten")
}

// TestDemoPlot draws the demo's fits: each method's first two components,
// every point by target (top) and the unseen domains' points, one color
// each, over the training domains' in gray (bottom); at most 1400 pixels
// wide.
func TestDemoPlot(t *testing.T) {
	rows, err := demo(context.Background(), 2, 30)
	require.NoError(t, err)
	fig, err := demoFigure(rows, 2)
	require.NoError(t, err)
	require.Len(t, fig.Panels, 2)
	require.Len(t, fig.Panels[0], 4)
	ntr, nte := rows[0].train.N(), rows[0].test.N()
	for j, r := range rows {
		require.Equal(t, strings.ToUpper(r.method), fig.Panels[0][j].XLabel[:len(r.method)])
		require.Len(t, fig.Panels[0][j].Dots, ntr+nte)
		for _, d := range fig.Panels[0][j].Dots {
			z, i := r.zTrain, d.Cell
			if d.Cell >= ntr {
				z, i = r.zTest, d.Cell-ntr
			}
			require.Equal(t, z.At(i, 0), d.X)
			require.Equal(t, z.At(i, 1), d.Y)
		}
		bottom := fig.Panels[1][j]
		require.Len(t, bottom.Dots, nte)
		require.Len(t, bottom.Backdrop, ntr)
		colors := map[color.NRGBA]bool{}
		for _, d := range bottom.Dots {
			require.Equal(t, r.zTest.At(d.Cell-ntr, 0), d.X)
			require.Equal(t, r.zTest.At(d.Cell-ntr, 1), d.Y)
			colors[d.Color] = true
		}
		require.Len(t, colors, 3, "one color per unseen domain")
		require.Equal(t, fmt.Sprintf("%s: unseen, DV %.6f", strings.ToUpper(r.method), r.dvTest), bottom.Title)
	}
	require.NotNil(t, fig.Legends[0].Bar, "colored by the target")
	require.Equal(t, "unseen domain", fig.Legends[1].Title)
	require.Equal(t, "training domains", fig.Legends[1].Entries[3].Name)
	for _, p := range fig.Panels[1] {
		require.NotContains(t, p.Title, "sample", "domains, not samples")
	}

	out := filepath.Join(t.TempDir(), "fig2.png")
	_, errs, code := runCmd(t, "demo", "--size", "30", "--plot", out)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.LessOrEqual(t, img.Bounds().Dx(), 1400)
	require.Less(t, img.Bounds().Dy(), img.Bounds().Dx())
	_, errs, code = runCmd(t, "demo", "--plot", "fig.gif")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "must end in .png or .svg")
}

// TestPlotUnseenNamed draws --kind unseen with a model fitted on every
// sample by naming the samples to hold apart: they are called chosen, not
// unseen, and the picture says the model saw them; the populations keep
// the model's colors.
func TestPlotUnseenNamed(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	model := filepath.Join(dir, "all.dica")
	data := []string{"--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0"}
	_, errs, code := runCmd(t, append([]string{"fit", "--sigma", "1", "--rank", "40", "--out", model, "--quiet"}, data...)...)
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	s, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: 50, Seed: 1})
	require.NoError(t, err)
	fig, err := cellsFigure(ctx, "unseen", m, s, "none", []string{"sample1?"}, figure.Options{})
	require.NoError(t, err)
	require.Equal(t, "Chosen samples among the other samples", fig.Title)
	require.Contains(t, fig.Notes[1], "The model was fitted on sample10 too")
	pal := figure.NewPalette(m.Summary.Classes)
	for _, d := range fig.Panels[0][0].Dots {
		require.Equal(t, pal.Color(s.Classes[s.Label[d.Cell]]), d.Color)
	}
	for _, d := range fig.Panels[0][1].Dots {
		require.Equal(t, "sample10", s.Domains[s.Domain[d.Cell]])
	}
	require.Len(t, fig.Panels[0][1].Backdrop, len(s.Domain)-len(fig.Panels[0][1].Dots))

	out := filepath.Join(dir, "unseen.png")
	_, errs, code = runCmd(t, append([]string{"plot", "--model", model, "--kind", "unseen", "--unseen", "sample10", "--out", out, "--quiet"}, data...)...)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), 900)
	require.Greater(t, img.Bounds().Dx(), 2*img.Bounds().Dy())
}

// TestPlotCyTOF draws the 16 CyTOF samples, the README's picture.
func TestPlotCyTOF(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 46 MB of CSV")
	}
	dir := dataDir(t, "multicenter16_cytof")
	tmp := t.TempDir()
	model := filepath.Join(tmp, "m.dica")
	flags := []string{"--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0", "--transform", "log1p"}
	_, errs, code := runCmd(t, append([]string{"fit", "--sigma", "1", "--rank", "100", "--out", model, "--quiet"}, flags...)...)
	require.Equal(t, 0, code, errs)
	out := filepath.Join(tmp, "cytof.png")
	_, errs, code = runCmd(t, append([]string{"plot", "--model", model, "--out", out, "--quiet"}, flags...)...)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), 900)
	require.LessOrEqual(t, img.Bounds().Dx(), 1400)
}

// TestPlotPaperModel: a --form paper model's cells are drawn as dica
// transform writes them by default, centered with the mean of all cells.
func TestPlotPaperModel(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	model := filepath.Join(dir, "paper.dica")
	data := []string{"--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0"}
	// Fitted on two samples, so that the mean of the three differs from
	// the training mean.
	_, errs, code := runCmd(t, "fit", "--solver", "exact", "--form", "paper", "--sigma", "1", "--lambda", "0.1", "--out", model, "--quiet",
		"--data", filepath.Join(dir, "sample1.csv"), "--data", filepath.Join(dir, "sample2.csv"),
		"--labels", filepath.Join(dir, "labels1.csv"), "--labels", filepath.Join(dir, "labels2.csv"), "--labels-ignore", "0")
	require.Equal(t, 0, code, errs)
	csv := filepath.Join(dir, "z.csv")
	_, errs, code = runCmd(t, append([]string{"transform", "--model", model, "--out", csv, "--quiet"}, data...)...)
	require.Equal(t, 0, code, errs)
	_, want := readZ(t, csv)
	m, err := dica.Load(model)
	require.NoError(t, err)
	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	s, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: 40, Seed: 2})
	require.NoError(t, err)
	n, k := s.Z.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			w := want.At(int(s.Row[i]), j)
			require.InDelta(t, w, s.Z.At(i, j), 1e-9*math.Max(1, math.Abs(w)))
		}
	}
}

// TestPlotTarget: with a regression target the cells are colored by it.
func TestPlotTarget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := toy.Regression(toy.Options{Domains: 3, MeanSize: 60, Seed: 4})
	csv := writeToyRegressionCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", csv, "--domain", "patient", "--target", "y", "--sigma", "1", "--rank", "30", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	src, err := modelSource(&dataFlags{data: listFlag{csv}, domain: "patient", target: "y", header: "auto", transform: "none"}, m, nil, io.Discard)
	require.NoError(t, err)
	s, err := figure.SampleModel(ctx, m, src, figure.SampleOptions{PerDomain: 1000, Seed: 1})
	require.NoError(t, err)
	require.Equal(t, "y", s.ValueName)
	for i, r := range s.Row {
		require.Equal(t, ds.Target.At(int(r), 0), s.Value[i])
	}
	fig, err := cellsFigure(ctx, "projection", m, s, "none", nil, figure.Options{})
	require.NoError(t, err)
	bar := fig.Legends[0].Bar
	require.NotNil(t, bar)
	require.Equal(t, "y", fig.Legends[0].Title)
	for _, d := range fig.Panels[0][0].Dots {
		v := math.Min(math.Max(s.Value[d.Cell], bar.Min), bar.Max)
		require.Equal(t, figure.Viridis((v-bar.Min)/(bar.Max-bar.Min)), d.Color)
	}
}

// TestPlotPredicted draws how a model's classifier gates new samples beside
// its hand-gated reference: a tinted first panel of the reference's cells
// in the colors of their labels (read from the label file), then one panel
// per new sample of its cells in the colors of the populations that the
// library's Model.Predict gives them (gray below the minimum confidence),
// with the palette's fixed colors of the populations 1, 2 and 10, shared
// axes, a title that scores the drawn cells against their labels, and the
// picture's size; and the refusals.
func TestPlotPredicted(t *testing.T) {
	ctx := context.Background()
	dir := plotDataNoise(t, 0.6) // populations that overlap: confidences below 1
	file := func(name string) string { return filepath.Join(dir, name) }
	model := file("svm.dica")
	_, errs, code := runCmd(t, "fit", "--data", file("sample*.csv"), "--labels", file("sample1.csv")+"="+file("labels1.csv"),
		"--labels-ignore", "0", "--sigma", "1", "--rank", "40", "--classifier", "svm", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)

	// Each cell's label, by its three markers (unique random values).
	label := map[string]string{}
	for _, s := range []string{"1", "2", "10"} {
		xs := readCSV(t, file("sample"+s+".csv"))
		ls := readCSV(t, file("labels"+s+".csv"))
		for i, r := range xs {
			label[strings.Join(r, ",")] = ls[i][0]
		}
	}
	key := func(x []float64) string {
		p := make([]string, len(x))
		for j, v := range x {
			p[j] = strconv.FormatFloat(v, 'g', 6, 64)
		}
		return strings.Join(p, ",")
	}

	const minConf = 0.8
	const per = 70
	args := []string{"--kind", "predicted", "--model", model, "--data", file("sample2.csv") + "," + file("sample10.csv"),
		"--labels", file("labels2.csv") + "," + file("labels10.csv"),
		"--reference", file("sample1.csv"), "--reference-labels", file("labels1.csv"), "--labels-ignore", "0",
		"--min-confidence", strconv.FormatFloat(minConf, 'g', -1, 64), "--cells", strconv.Itoa(per), "--quiet"}
	fs := newFlags("plot", plotUsage, io.Discard)
	var df dataFlags
	df.register(fs, true)
	var f plotSettings
	f.register(fs)
	pos, err := parseArgs(fs, args)
	require.NoError(t, err)
	require.NoError(t, f.checkKind(true))
	o, err := f.options(figure.PNG)
	require.NoError(t, err)
	d, err := f.predictedPicture(ctx, fs, &df, pos, m, io.Discard, o)
	require.NoError(t, err)
	s, fig := d.sample, d.fig

	// The palette: the populations 1, 2 and 10 in natural order take the
	// first three colors safe for color-blind readers (Okabe and Ito),
	// unassigned cells a light gray.
	want := map[string]color.NRGBA{
		"1":          {R: 0x00, G: 0x72, B: 0xb2, A: 0xff},
		"2":          {R: 0xd5, G: 0x5e, B: 0x00, A: 0xff},
		"10":         {R: 0x00, G: 0x9e, B: 0x73, A: 0xff},
		"unassigned": {R: 0xa8, G: 0xa8, B: 0xa8, A: 0xff},
	}
	require.Len(t, fig.Panels, 1)
	require.Len(t, fig.Panels[0], 3)
	ref, s2, s10 := fig.Panels[0][0], fig.Panels[0][1], fig.Panels[0][2]
	require.True(t, strings.HasPrefix(ref.Title, "reference: sample1 (hand-gated)\n"), ref.Title)
	require.True(t, strings.HasPrefix(s2.Title, "sample2: predicted\n"), s2.Title)
	require.True(t, strings.HasPrefix(s10.Title, "sample10: predicted\n"), s10.Title)
	require.NotZero(t, ref.Shade, "the reference's panel is tinted")

	// The reference's cells in the colors of their labels.
	require.Len(t, ref.Dots, per)
	for _, dot := range ref.Dots {
		require.Equal(t, "sample1", s.Domains[s.Domain[dot.Cell]])
		l := label[key(s.X.RawRowView(dot.Cell))]
		require.Contains(t, []string{"1", "2", "10"}, l, "ungated cells are left out")
		require.Equal(t, want[l], dot.Color)
	}
	// Each new sample's cells in the colors Model.Predict gives them, on
	// the model's components; the title's share of cells predicted as
	// gated.
	unassigned := 0
	for k, p := range []*figure.Panel{s2, s10} {
		name := []string{"sample2", "sample10"}[k]
		require.Len(t, p.Dots, per)
		raw := mat.NewDense(len(p.Dots), 3, nil)
		for i, dot := range p.Dots {
			require.Equal(t, name, s.Domains[s.Domain[dot.Cell]])
			raw.SetRow(i, s.X.RawRowView(dot.Cell))
		}
		labels, conf, err := m.Predict(raw)
		require.NoError(t, err)
		z, err := m.Transform(raw, dica.TransformOptions{})
		require.NoError(t, err)
		right := 0
		for i, dot := range p.Dots {
			got := labels[i]
			if conf[i] < minConf {
				got = "unassigned"
				unassigned++
			}
			require.Equal(t, want[got], dot.Color, "%s, cell %d", name, i)
			require.Equal(t, z.At(i, 0), dot.X)
			require.Equal(t, z.At(i, 1), dot.Y)
			if got == label[key(raw.RawRowView(i))] {
				right++
			}
		}
		require.Contains(t, p.Title, fmt.Sprintf(", %.1f%% as gated", 100*float64(right)/float64(per)))
		require.Equal(t, [4]float64{ref.XMin, ref.XMax, ref.YMin, ref.YMax}, [4]float64{p.XMin, p.XMax, p.YMin, p.YMax}, "shared axes")
	}
	require.Positive(t, unassigned, "some cells below the minimum confidence")
	var legend []string
	for _, e := range fig.Legends[0].Entries {
		legend = append(legend, e.Name)
		require.Equal(t, want[e.Name], e.Color, e.Name)
	}
	require.Equal(t, []string{"1", "2", "10", "unassigned"}, legend)
	require.Equal(t, "DICA1", s10.XLabel)
	require.Equal(t, "DICA2", ref.YLabel)

	// The picture: three panels of 3.4 inches and the legend's 1.7, at 96
	// pixels per inch.
	out := file("gated.png")
	_, errs, code = runCmd(t, append([]string{"plot", "--out", out}, args...)...)
	require.Equal(t, 0, code, errs)
	r, err := os.Open(out)
	require.NoError(t, err)
	img, err := png.Decode(r)
	r.Close()
	require.NoError(t, err)
	require.Equal(t, int(math.Round((3*3.4+1.7)*96)), img.Bounds().Dx())
	require.Less(t, img.Bounds().Dy(), img.Bounds().Dx()/2)
	require.Greater(t, img.Bounds().Dy(), 300)

	// Without --reference, the samples of --data with labels are the
	// reference.
	_, errs, code = runCmd(t, "plot", "--kind", "predicted", "--model", model, "--data", file("sample*.csv"),
		"--labels", file("sample1.csv")+"="+file("labels1.csv"), "--labels-ignore", "0", "--out", file("g2.svg"), "--quiet")
	require.Equal(t, 0, code, errs)

	// Refusals.
	plain := plotModel(t, dir)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--kind", "predicted", "--model", plain, "--data", file("sample2.csv"), "--reference", file("sample1.csv"), "--reference-labels", file("labels1.csv")},
			"this model has no classifier: fit it with --classifier svm"},
		{[]string{"--kind", "predicted", "--model", model, "--data", file("sample*.csv"), "--labels", file("labels*.csv"), "--labels-ignore", "0"},
			"every sample of --data has labels"},
		{[]string{"--kind", "predicted", "--model", model, "--data", file("sample2.csv")}, "no reference"},
		{[]string{"--kind", "predicted", "--model", model, "--data", file("sample2.csv"), "--reference", file("sample1.csv")}, "--reference has no labels"},
		{[]string{"--kind", "predicted", "--model", model, "--data", file("sample2.csv"), "--reference-labels", file("labels1.csv")}, "--reference-labels goes with --reference"},
		{[]string{"--model", model, "--data", file("sample2.csv"), "--min-confidence", "0.5"}, "apply to --kind predicted"},
		{[]string{"--kind", "predicted", "--model", model, "--data", file("sample2.csv"), "--reference", file("sample1.csv"), "--reference-labels", file("labels1.csv"),
			"--min-confidence", "2"}, "--min-confidence 2: want a number from 0 to 1"},
	} {
		_, errs, code := runCmd(t, append(append([]string{"plot"}, c.args...), "--out", file("x.png"), "--quiet")...)
		require.Equal(t, 2, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, c.msg, c.args)
		require.NoFileExists(t, file("x.png"))
	}
}
