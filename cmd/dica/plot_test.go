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
				fmt.Fprintf(&x, "%.6g", float64((c*(j+1))%4)+0.3*rng.NormFloat64()+0.25*float64(s))
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
	s, err := projectSample(ctx, m, src, per, 3, newProgress(true))
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
	s2, err := projectSample(ctx, m, src, per, 3, newProgress(true))
	require.NoError(t, err)
	require.Equal(t, s.Row, s2.Row)
	s3, err := projectSample(ctx, m, src, per, 4, newProgress(true))
	require.NoError(t, err)
	require.NotEqual(t, s.Row, s3.Row)

	fig, err := cellsFigure(ctx, "projection", m, s, "none", figure.Options{Seed: 1})
	require.NoError(t, err)
	require.Len(t, fig.Panels, 1, "one view: by population and by sample side by side")
	for j, col := range []func(i int) color.NRGBA{
		func(i int) color.NRGBA { return figure.ClassColor(s.Label[i], 3) },
		func(i int) color.NRGBA { return figure.SampleColor(s.Domain[i], 3) },
	} {
		p := fig.Panels[0][j]
		require.Len(t, p.Dots, n)
		for _, d := range p.Dots {
			r := int(s.Row[d.Cell])
			require.Equal(t, zAll.At(r, 0), d.X)
			require.Equal(t, zAll.At(r, 1), d.Y)
			require.Equal(t, col(d.Cell), d.Color)
		}
	}
	require.Equal(t, "1", fig.Legends[0].Entries[0].Name)
	require.Equal(t, "10", fig.Legends[0].Entries[2].Name)
	require.Equal(t, "sample10 (unseen)", fig.Legends[1].Entries[2].Name)
	require.Equal(t, "sample2", fig.Legends[1].Entries[1].Name)
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
	want, err := projectSample(ctx, m, src, 50, 9, newProgress(true))
	require.NoError(t, err)
	got, err := projectedSample(ctx, []string{csv}, nil, 50, 9, newProgress(true))
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

// TestPlotBaseline checks the PCA baseline against principal components
// computed here from an SVD of the centered inputs, and that the KPCA
// baseline is kernel PCA of the plotted cells: its components have mean 0
// over them and are uncorrelated.
func TestPlotBaseline(t *testing.T) {
	ctx := context.Background()
	dir := plotData(t)
	m, err := dica.Load(plotModel(t, dir))
	require.NoError(t, err)
	src, err := modelSource(plotFlags(dir), m, nil, io.Discard)
	require.NoError(t, err)
	s, err := projectSample(ctx, m, src, 80, 1, newProgress(true))
	require.NoError(t, err)
	n, d := s.X.Dims()

	v, note, err := baselineView(ctx, "pca", m, s, nil, 2)
	require.NoError(t, err)
	require.Contains(t, note, fmt.Sprintf("of the plotted cells (%d cells)", n))
	require.Equal(t, "PC", v.Name)
	xc := mat.DenseCopyOf(s.X)
	for j := 0; j < d; j++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += xc.At(i, j) / float64(n)
		}
		for i := 0; i < n; i++ {
			xc.Set(i, j, xc.At(i, j)-mean)
		}
	}
	var svd mat.SVD
	require.True(t, svd.Factorize(xc, mat.SVDThin))
	var u mat.Dense
	svd.UTo(&u)
	sv := svd.Values(nil)
	_, k := v.Z.Dims()
	require.Equal(t, 3, k)
	for j := 0; j < k; j++ {
		sign := 1.0
		if u.At(0, j)*v.Z.At(0, j) < 0 {
			sign = -1
		}
		for i := 0; i < n; i++ {
			require.InDelta(t, sign*u.At(i, j)*sv[j], v.Z.At(i, j), 1e-9)
		}
	}

	// Fitted to the training samples only (the unseen layout): centered
	// on their cells, not on sample10's.
	train := make([]bool, n)
	for i, g := range s.Domain {
		train[i] = s.Domains[g] != "sample10"
	}
	v, note, err = baselineView(ctx, "pca", m, s, train, 2)
	require.NoError(t, err)
	require.Contains(t, note, "of the training samples")
	var sumTrain, sumTest, nTrain, nTest float64
	for i := 0; i < n; i++ {
		if train[i] {
			sumTrain, nTrain = sumTrain+v.Z.At(i, 0), nTrain+1
		} else {
			sumTest, nTest = sumTest+v.Z.At(i, 0), nTest+1
		}
	}
	require.InDelta(t, 0, sumTrain/nTrain, 1e-12)
	require.Greater(t, math.Abs(sumTest/nTest), 0.05)

	v, _, err = baselineView(ctx, "kpca", m, s, nil, 2)
	require.NoError(t, err)
	require.Equal(t, "KPCA", v.Name)
	require.Equal(t, "KPCA baseline, sigma = 1, rank 40", v.Title)
	_, k = v.Z.Dims()
	for a := 0; a < k; a++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += v.Z.At(i, a) / float64(n)
		}
		require.InDelta(t, 0, mean, 1e-9)
		for b := 0; b < a; b++ {
			var ab, aa, bb float64
			for i := 0; i < n; i++ {
				ab += v.Z.At(i, a) * v.Z.At(i, b)
				aa += v.Z.At(i, a) * v.Z.At(i, a)
				bb += v.Z.At(i, b) * v.Z.At(i, b)
			}
			require.InDelta(t, 0, ab/math.Sqrt(aa*bb), 1e-6, "components %d and %d", a+1, b+1)
		}
	}

	out := filepath.Join(dir, "b.png")
	_, errs, code := runCmd(t, "plot", "--model", filepath.Join(dir, "m.dica"), "--data", filepath.Join(dir, "sample*.csv"),
		"--labels", filepath.Join(dir, "labels*.csv"), "--labels-ignore", "0", "--baseline", "kpca", "--out", out, "--quiet")
	require.Equal(t, 0, code, errs)
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
		require.Equal(t, fmt.Sprintf("%.4f ± %.4f", mm.Mean, mm.SD), fig.Panels[0][0].Labels[i].Text, "the mean and sd of dica eval")
	}
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
		{[]string{"--model", model, "--data", filepath.Join(dir, "sample1.csv"), "--kind", "unseen", "--out", png}, 2, "needs both samples"},
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

// TestDemoPlot draws the paper's Figure 2 from the demo's fits: the dots
// of each method's panels are its projections of the training and the
// unseen domains.
func TestDemoPlot(t *testing.T) {
	rows, err := demo(context.Background(), 2, 30)
	require.NoError(t, err)
	fig, err := demoFigure(rows, 2)
	require.NoError(t, err)
	require.Len(t, fig.Panels, 2)
	require.Len(t, fig.Panels[0], 4)
	ntr := rows[0].train.N()
	for j, r := range rows {
		require.Equal(t, strings.ToUpper(r.method), fig.Panels[0][j].XLabel[:len(r.method)])
		for _, d := range fig.Panels[0][j].Dots {
			require.Less(t, d.Cell, ntr)
			require.Equal(t, r.zTrain.At(d.Cell, 0), d.X)
			require.Equal(t, r.zTrain.At(d.Cell, 1), d.Y)
		}
		require.Len(t, fig.Panels[1][j].Dots, rows[0].test.N())
		for _, d := range fig.Panels[1][j].Dots {
			require.Equal(t, r.zTest.At(d.Cell-ntr, 0), d.X)
			require.Equal(t, r.zTest.At(d.Cell-ntr, 1), d.Y)
		}
	}
	require.NotNil(t, fig.Legends[0].Bar, "colored by the target")

	out := filepath.Join(t.TempDir(), "fig2.png")
	_, errs, code := runCmd(t, "demo", "--size", "30", "--plot", out)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
	_, errs, code = runCmd(t, "demo", "--plot", "fig.gif")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "must end in .png or .svg")
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
	require.Greater(t, img.Bounds().Dx(), 500)
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
	s, err := projectSample(ctx, m, src, 40, 2, newProgress(true))
	require.NoError(t, err)
	n, k := s.Z.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			w := want.At(int(s.Row[i]), j)
			require.InDelta(t, w, s.Z.At(i, j), 1e-9*math.Max(1, math.Abs(w)))
		}
	}
}

// TestSamplerBound: the cells a picture holds are bounded, whatever the
// number of samples.
func TestSamplerBound(t *testing.T) {
	s := newSampler(10, 1, 1, 1, false, false)
	s.limit = 25
	var b dataset.Block
	b.Reset(40, 1, false, 0)
	b.Rows = 40
	for i := range b.Domain {
		b.Domain[i] = i / 10 // 4 samples of 10 cells
	}
	z := mat.NewDense(40, 1, nil)
	err := s.add(&b, z, []string{"a", "b", "c", "d"}, nil)
	require.ErrorContains(t, err, "more than 25 cells to draw (3 samples so far, at most 10 each): lower --cells")
}

// TestPlotTarget: with a regression target the cells are colored by it.
func TestPlotTarget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := toy.Regression(toy.Options{Domains: 3, MeanSize: 60, Seed: 4})
	var b strings.Builder
	b.WriteString("patient,y")
	for j := 0; j < ds.D(); j++ {
		fmt.Fprintf(&b, ",X%d", j+1)
	}
	b.WriteString("\n")
	for i := 0; i < ds.N(); i++ {
		fmt.Fprintf(&b, "%s,%g", ds.DomainNames[ds.Domain[i]], ds.Target.At(i, 0))
		for _, v := range ds.X.RawRowView(i) {
			fmt.Fprintf(&b, ",%g", v)
		}
		b.WriteString("\n")
	}
	csv := filepath.Join(dir, "cells.csv")
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", csv, "--domain", "patient", "--target", "y", "--sigma", "1", "--rank", "30", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	src, err := modelSource(&dataFlags{data: listFlag{csv}, domain: "patient", target: "y", header: "auto", transform: "none"}, m, nil, io.Discard)
	require.NoError(t, err)
	s, err := projectSample(ctx, m, src, 1000, 1, newProgress(true))
	require.NoError(t, err)
	require.Equal(t, "y", s.ValueName)
	for i, r := range s.Row {
		require.Equal(t, ds.Target.At(int(r), 0), s.Value[i])
	}
	fig, err := cellsFigure(ctx, "projection", m, s, "none", figure.Options{})
	require.NoError(t, err)
	bar := fig.Legends[0].Bar
	require.NotNil(t, bar)
	require.Equal(t, "y", fig.Legends[0].Title)
	for _, d := range fig.Panels[0][0].Dots {
		v := math.Min(math.Max(s.Value[d.Cell], bar.Min), bar.Max)
		require.Equal(t, figure.Viridis((v-bar.Min)/(bar.Max-bar.Min)), d.Color)
	}
}
