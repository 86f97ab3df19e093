// Experiment shift: when does DICA help? A controlled domain shift on the
// CyTOF samples.
//
//	go run ./bench shift [-quick] [-out DIR] [-seed N] [-strengths 0,0.1,...] [-cells N] ...
//
// Every sample (domain) of multicenter16_cytof, after log(1+|x|), training
// and test alike, gets its own instrument effect of strength s, drawn from
// the seed: for each channel j of domain g, with u, v, w standard normal
// draws of a generator seeded by (seed, g),
//
//	x' = exp(s * 0.25 * v) * f(x) + s * u,
//	f(x) = 10 * (x / 10)^exp(s * 0.25 * w)   (with -nonlinear; else f(x) = x),
//
// a gain (the scale factor, e^(±0.25) at s = 1), a monotone curve (a power
// on the log1p scale, which spans about 0 to 10 on these data) and an offset
// (standard deviation s log1p units). s = 0 is the real data, bit for bit;
// the draws do not depend on s, so the distortion of a domain grows along
// one direction as s grows, and they do not depend on the other domains.
//
// For each s, every method (the raw markers "input", KPCA, UDICA, COIR,
// DICA) and, with -batch, the same methods with each domain centered with
// its own mean (eval.Options.BatchCenter) are evaluated with package eval
// on the same random splits (-repeats draws of -train training samples, the
// others tested; at most -cells cells per sample): hyperparameters chosen by
// inner cross-validation on the training samples only, a linear SVM on the
// standardized components, accuracy pooled over the test cells and per
// test sample, and the mixing of the test samples (iLISI, cLISI, silhouette,
// distributional variance) in the space the SVM sees.
//
// The run checks itself: the distorted data at s = 0 is the data; each
// domain's distortion, recomputed from the seed alone in another order, is
// bit for bit the one applied; and the input's accuracies at s = 0 equal
// those of `dica eval` run as a command (built from ./cmd/dica) on the same
// files, splits and cells. With -out it writes shift_results.json (every
// number and setting) and shift_accuracy_ilisi.png (pooled accuracy and
// iLISI against s, one line per method, batch-centered variants dashed).
//
// -quick (for CI, under a minute): s in {0, 1}, 300 cells per sample, one
// split, a small grid, input, KPCA and DICA with their batch-centered
// variants, and it fails unless the input's iLISI falls as s grows.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/internal/atomicfile"
)

func init() {
	register("shift", "controlled per-sample instrument distortion of strength s: accuracy and mixing of input, KPCA, UDICA, COIR, DICA and their batch-centered variants (CyTOF)", runShift)
}

const shiftUsage = `usage: go run ./bench shift [flags]

Gives every CyTOF sample its own instrument effect (gain, curve, offset per
channel) of strength s and evaluates the raw markers, KPCA, UDICA, COIR and
DICA (and their batch-centered variants) on unseen samples at each s:
accuracy and the mixing of the test samples (iLISI, cLISI, silhouette,
distributional variance). -quick is the CI run.`

// Distortion scales of the model (see the package documentation of the
// experiment): offsets in log1p units, gains and exponents as log-factors.
const (
	shiftOffset = 1
	shiftGain   = 0.25
	shiftCurve  = 0.25
	shiftTop    = 10 // the power curve's fixed point on the log1p scale
)

// shiftConfig configures the shift experiment.
type shiftConfig struct {
	seed       uint64
	strengths  []float64
	cells      int // per domain and split
	train      int // training domains per split
	repeats    int
	methods    []string
	batch      bool
	nonlinear  bool
	grid       eval.Grid
	rank       int
	mixing     int // cells of the mixing measures
	quick      bool
	dicaBinary string // dica command for the s = 0 check ("" builds it)
}

func defaultShiftConfig(quick bool) shiftConfig {
	c := shiftConfig{
		seed: 1, strengths: []float64{0, 0.1, 0.25, 0.5, 1, 2}, cells: 1000, train: 8, repeats: 3,
		methods: eval.Methods(), batch: true, nonlinear: true, rank: 200, mixing: 4000,
		grid: eval.Grid{Sigma: []float64{1, 2, 4, 8}, Lambda: []float64{0, 0.1}, Components: []int{3, 10}, C: []float64{1}},
	}
	if quick {
		c.quick = true
		c.strengths = []float64{0, 1}
		c.cells, c.repeats, c.rank, c.mixing = 300, 1, 50, 2000
		c.methods = []string{"input", "kpca", "dica"}
		c.grid = eval.Grid{Sigma: []float64{1, 2}, Components: []int{3}, C: []float64{1}}
	}
	return c
}

func runShift(args []string) error {
	quick := hasQuick(args)
	cfg := defaultShiftConfig(quick)
	fs, o := newFlags("shift", shiftUsage)
	fs.Bool("quick", false, "the CI run: s in {0, 1}, 300 cells per sample, one split, a small grid (under a minute)")
	fs.Uint64Var(&cfg.seed, "seed", cfg.seed, "`seed` of the distortions, splits and fits")
	strengths := fs.String("strengths", joinFloats(cfg.strengths), "distortion `strengths` s, comma-separated")
	fs.IntVar(&cfg.cells, "cells", cfg.cells, "at most `N` cells per sample and split")
	fs.IntVar(&cfg.train, "train", cfg.train, "training samples per split (`K`)")
	fs.IntVar(&cfg.repeats, "repeats", cfg.repeats, "random splits (`R`)")
	methods := fs.String("methods", strings.Join(cfg.methods, ","), "`methods`, comma-separated")
	fs.BoolVar(&cfg.batch, "batch", cfg.batch, "also evaluate the batch-centered variants")
	fs.BoolVar(&cfg.nonlinear, "nonlinear", cfg.nonlinear, "include the monotone curve in the distortion")
	fs.IntVar(&cfg.rank, "rank", cfg.rank, "Nystrom rank `m` of the fits")
	fs.IntVar(&cfg.mixing, "mixing-cells", cfg.mixing, "test cells of the mixing measures per split (`N`)")
	fs.StringVar(&cfg.dicaBinary, "dica", "", "`path` of a built dica command for the s = 0 check (default: build ./cmd/dica)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if cfg.strengths, err = parseFloats(*strengths); err != nil {
		return fmt.Errorf("-strengths: %w", err)
	}
	cfg.methods = splitComma(*methods)
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
	}
	start := time.Now()
	load0 := loadAvg()
	ds, err := loadCytof(context.Background(), seq(1, cytofSamples), false)
	if err != nil {
		return skipNoData("shift", err)
	}
	// The reporter prints the tables; the results go to shift_results.json, written
	// atomically, not to a .jsonl file.
	rep := newReporter(os.Stdout, "shift", &options{json: o.json})
	res, err := shiftRun(context.Background(), cfg, ds, rep)
	if err != nil {
		return err
	}
	if err := shiftCheckCommand(cfg, res); err != nil {
		return err
	}
	rep.note("sanity: at s = 0 the input's %d per-sample accuracies equal those of dica eval on the same files, splits and cells", res.commandChecked)
	res.Seconds = time.Since(start).Seconds()
	res.LoadAvg = [2]string{load0, loadAvg()}
	rep.note("%.0f s; load average (1, 5, 15 min) at the start %s, at the end %s", res.Seconds, load0, res.LoadAvg[1])
	if o.out != "" {
		if err := writeJSONFile(filepath.Join(o.out, "shift_results.json"), res); err != nil {
			return err
		}
		png := filepath.Join(o.out, "shift_accuracy_ilisi.png")
		if err := shiftPlot(png, res); err != nil {
			return err
		}
		rep.note("wrote %s and %s", filepath.Join(o.out, "shift_results.json"), png)
	}
	return rep.flush()
}

// distortion is the instrument effect of one domain at unit strength: per
// channel the draws u (offset), v (gain) and w (curve).
type distortion struct {
	Offset []float64 `json:"offset"`
	Gain   []float64 `json:"gain"`
	Curve  []float64 `json:"curve"`
}

// domainDistortion draws the distortion of domain g (0-based, in the order
// of the samples) for d channels from the seed alone.
func domainDistortion(seed uint64, g, d int) distortion {
	rng := rand.New(rand.NewPCG(seed, 0x5417f7<<20|uint64(g)))
	t := distortion{Offset: make([]float64, d), Gain: make([]float64, d), Curve: make([]float64, d)}
	for j := range d {
		t.Offset[j] = rng.NormFloat64()
		t.Gain[j] = rng.NormFloat64()
		t.Curve[j] = rng.NormFloat64()
	}
	return t
}

// apply distorts one row at strength s. At s = 0 the row is unchanged.
func (t distortion) apply(row []float64, s float64, nonlinear bool) {
	if s == 0 {
		return
	}
	for j, x := range row {
		if nonlinear && x > 0 {
			x = shiftTop * math.Pow(x/shiftTop, math.Exp(s*shiftCurve*t.Curve[j]))
		}
		row[j] = math.Exp(s*shiftGain*t.Gain[j])*x + s*shiftOffset*t.Offset[j]
	}
}

// distort returns a copy of ds with every domain's distortion at strength s.
func distort(ds *dataset.Dataset, ts []distortion, s float64, nonlinear bool) *dataset.Dataset {
	out := *ds
	out.X = mat.DenseCopyOf(ds.X)
	for p, g := range ds.Domain {
		ts[g].apply(out.X.RawRowView(p), s, nonlinear)
	}
	return &out
}

// shiftResult is everything the experiment measured (shift_results.json).
type shiftResult struct {
	Data        string         `json:"data"`
	Cells       int            `json:"cells_read"`
	Domains     []string       `json:"domains"`
	Model       string         `json:"distortion_model"`
	Nonlinear   bool           `json:"nonlinear"`
	Seed        uint64         `json:"seed"`
	Distortions []distortion   `json:"distortions_unit_strength"`
	Splits      [][2][]string  `json:"splits"`
	Settings    map[string]any `json:"settings"`
	Strengths   []shiftLevel   `json:"strengths"`
	Seconds     float64        `json:"seconds"`
	LoadAvg     [2]string      `json:"loadavg_start_end"`
	Quick       bool           `json:"quick"`

	commandChecked int
	cfg            shiftConfig
}

// shiftLevel holds the evaluations at one strength.
type shiftLevel struct {
	S float64 `json:"s"`
	// Results holds one eval result per variant: plain, then batch-centered.
	Results []*eval.Result `json:"results"`
}

// shiftModel describes the distortion for shift_results.json.
const shiftModel = "x' = exp(s*0.25*gain) * f(x) + s*1*offset per channel, f(x) = 10*(x/10)^exp(s*0.25*curve) (nonlinear) or x; x = log(1+|raw|); gain, offset, curve standard normal, drawn per domain from PCG(seed, 0x5417f7<<20 | domain index)"

// shiftRun runs the experiment on the data set (domains in sample order).
func shiftRun(ctx context.Context, cfg shiftConfig, ds *dataset.Dataset, rep *reporter) (*shiftResult, error) {
	if len(cfg.strengths) == 0 {
		return nil, errors.New("no strengths")
	}
	d := ds.D()
	ts := make([]distortion, ds.NumDomains())
	for g := range ts {
		ts[g] = domainDistortion(cfg.seed, g, d)
	}
	splits, err := eval.RandomSplits(ds, cfg.train, cfg.repeats, cfg.seed)
	if err != nil {
		return nil, err
	}
	res := &shiftResult{Data: "multicenter16_cytof, labelled cells (label 0 left out), log(1+|x|)", Cells: ds.N(), Domains: ds.DomainNames,
		Model: shiftModel, Nonlinear: cfg.nonlinear, Seed: cfg.seed, Distortions: ts, Quick: cfg.quick, cfg: cfg}
	for _, s := range splits {
		var tr, te []string
		for _, g := range s.Train {
			tr = append(tr, ds.DomainNames[g])
		}
		for _, g := range s.Test {
			te = append(te, ds.DomainNames[g])
		}
		res.Splits = append(res.Splits, [2][]string{tr, te})
	}
	res.Settings = map[string]any{"cells_per_domain": cfg.cells, "train_domains": cfg.train, "repeats": cfg.repeats, "methods": cfg.methods,
		"batch_centered_variants": cfg.batch, "grid": cfg.grid, "rank": cfg.rank, "mixing_cells": cfg.mixing, "learner": "linear SVM (pooling)"}
	rep.note("%d labelled cells of %d samples; %d random splits of %d training samples; at most %d cells per sample; distortion: %s",
		ds.N(), ds.NumDomains(), len(splits), cfg.train, cfg.cells, shiftModel)
	if err := shiftCheckDistortion(ds, ts, cfg); err != nil {
		return nil, err
	}
	variants := []bool{false}
	if cfg.batch {
		variants = append(variants, true)
	}
	for _, s := range cfg.strengths {
		lvl := shiftLevel{S: s}
		dsS := distort(ds, ts, s, cfg.nonlinear)
		for _, batch := range variants {
			o := shiftOptions(cfg)
			o.BatchCenter = batch
			t0 := time.Now()
			r, err := eval.Evaluate(ctx, dsS, splits, o)
			if err != nil {
				return nil, fmt.Errorf("s = %g: %w", s, err)
			}
			lvl.Results = append(lvl.Results, r)
			for _, m := range r.Methods {
				if err := rep.add("accuracy and mixing of the test samples against the distortion strength s", shiftRow(s, m, batch),
					shiftValues(m)); err != nil {
					return nil, err
				}
			}
			fmt.Fprintf(os.Stderr, "bench shift: s = %g%s done in %.0f s\n", s, map[bool]string{true: " (batch-centered)"}[batch], time.Since(t0).Seconds())
		}
		res.Strengths = append(res.Strengths, lvl)
	}
	return res, shiftSanity(res)
}

// shiftOptions returns the evaluation options of the experiment.
func shiftOptions(cfg shiftConfig) eval.Options {
	return eval.Options{Methods: cfg.methods, Rank: cfg.rank, Grid: cfg.grid, CellsPerDomain: cfg.cells, MixingCells: cfg.mixing, Seed: cfg.seed}
}

// variantName names a method and its centering.
func variantName(method string, batch bool) string {
	if batch {
		return method + "+bc"
	}
	return method
}

func shiftRow(s float64, m eval.MethodResult, batch bool) obj {
	return obj{{"s", s}, {"method", variantName(m.Method, batch)}}
}

func shiftValues(m eval.MethodResult) obj {
	v := obj{{"pooled_acc", m.Pooled.Mean}, {"sd", m.Pooled.SD}, {"domain_mean", m.DomainMean.Mean}, {"worst_domain", minScore(m)}}
	if mx := m.Mixing; mx != nil {
		cl := math.NaN()
		if mx.CLISI != nil {
			cl = mx.CLISI.Mean
		}
		v = append(v, obj{{"iLISI", mx.ILISI.Mean}, {"cLISI", cl}, {"silhouette", mx.Silhouette.Mean}, {"dist_var", mx.DistributionalVariance.Mean}}...)
	}
	return append(v, field{"seconds", m.Seconds})
}

func minScore(m eval.MethodResult) float64 {
	lo := math.Inf(1)
	for _, d := range m.Scores {
		lo = math.Min(lo, d.Score)
	}
	return lo
}

// shiftCheckDistortion checks that s = 0 leaves the data as it is, that
// the distortion of each domain is the one its seed gives (drawn again in
// reverse order of the domains), and that the curve is monotone.
func shiftCheckDistortion(ds *dataset.Dataset, ts []distortion, cfg shiftConfig) error {
	zero := distort(ds, ts, 0, cfg.nonlinear)
	if !mat.Equal(zero.X, ds.X) {
		return errors.New("sanity: the distortion at s = 0 changed the data")
	}
	s := cfg.strengths[len(cfg.strengths)-1]
	if s == 0 {
		s = 1
	}
	got := distort(ds, ts, s, cfg.nonlinear)
	for g := ds.NumDomains() - 1; g >= 0; g-- {
		t := domainDistortion(cfg.seed, g, ds.D())
		for p, dg := range ds.Domain {
			if dg != g {
				continue
			}
			row := append([]float64(nil), ds.X.RawRowView(p)...)
			t.apply(row, s, cfg.nonlinear)
			for j, v := range row {
				if math.Float64bits(v) != math.Float64bits(got.X.At(p, j)) {
					return fmt.Errorf("sanity: domain %s, cell %d, channel %d: the distortion drawn again from seed %d gives %v, the run applied %v",
						ds.DomainNames[g], p+1, j+1, cfg.seed, v, got.X.At(p, j))
				}
			}
		}
	}
	// Every channel's distortion is increasing: compare two rows that
	// differ by 0.5 in every channel.
	for g, t := range ts {
		lo, hi := make([]float64, ds.D()), make([]float64, ds.D())
		for j := range lo {
			lo[j], hi[j] = 1, 1.5
		}
		t.apply(lo, s, cfg.nonlinear)
		t.apply(hi, s, cfg.nonlinear)
		for j := range lo {
			if !(hi[j] > lo[j]) {
				return fmt.Errorf("sanity: domain %s channel %d: the distortion is not increasing", ds.DomainNames[g], j+1)
			}
		}
	}
	return nil
}

// shiftSanity checks the results: scores in range, iLISI between 1 and the
// number of test samples, and, in the quick run, the input's iLISI falling
// with the distortion.
func shiftSanity(res *shiftResult) error {
	for _, lvl := range res.Strengths {
		for _, r := range lvl.Results {
			for _, m := range r.Methods {
				for _, s := range m.Splits {
					if !(s.Pooled >= 0 && s.Pooled <= 1) {
						return fmt.Errorf("sanity: s = %g, %s: pooled accuracy %v", lvl.S, m.Method, s.Pooled)
					}
					if mx := s.Mixing; mx != nil && (mx.ILISI < 1-1e-9 || mx.ILISI > float64(len(s.Test))+1e-9) {
						return fmt.Errorf("sanity: s = %g, %s: iLISI %v of %d test samples", lvl.S, m.Method, mx.ILISI, len(s.Test))
					}
				}
			}
		}
	}
	first, last := res.Strengths[0], res.Strengths[len(res.Strengths)-1]
	if res.Quick && first.S == 0 && last.S > 0 {
		a, b := inputMixing(first), inputMixing(last)
		if !(b < a) {
			return fmt.Errorf("sanity: the input's iLISI is %v at s = 0 and %v at s = %g: the distortion did not separate the samples", a, b, last.S)
		}
	}
	return nil
}

// inputMixing returns the input's mean iLISI at a level (NaN without it).
func inputMixing(l shiftLevel) float64 {
	for _, m := range l.Results[0].Methods {
		if m.Method == eval.Input && m.Mixing != nil {
			return m.Mixing.ILISI.Mean
		}
	}
	return math.NaN()
}

// shiftCheckCommand runs `dica eval` on the same files, splits and cells
// for the input and compares its accuracies with those of the run at s = 0.
func shiftCheckCommand(cfg shiftConfig, res *shiftResult) error {
	var lvl *shiftLevel
	for i := range res.Strengths {
		if res.Strengths[i].S == 0 {
			lvl = &res.Strengths[i]
		}
	}
	if lvl == nil {
		return nil
	}
	var want *eval.MethodResult
	for i, m := range lvl.Results[0].Methods {
		if m.Method == eval.Input {
			want = &lvl.Results[0].Methods[i]
		}
	}
	if want == nil {
		return nil
	}
	dir, err := dataPath("multicenter16_cytof")
	if err != nil {
		return err
	}
	bin := cfg.dicaBinary
	if bin == "" {
		tmp, err := os.MkdirTemp("", "bench-shift-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		root, err := repoRoot()
		if err != nil {
			return err
		}
		bin = filepath.Join(tmp, "dica")
		build := exec.Command("go", "build", "-o", bin, "./cmd/dica")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building dica for the s = 0 check: %v\n%s", err, out)
		}
	}
	args := []string{"eval", "--labels-ignore", "0", "--transform", "log1p", "--header", "no", "--methods", "input",
		"--splits", "random", "--train-count", strconv.Itoa(cfg.train), "--repeats", strconv.Itoa(cfg.repeats),
		"--seed", strconv.FormatUint(cfg.seed, 10), "--cells-per-domain", strconv.Itoa(cfg.cells), "--mixing-cells", "0",
		"--json", "--quiet"}
	if len(cfg.grid.C) > 0 {
		args = append(args, "--C", joinFloats(cfg.grid.C))
	}
	for i := 1; i <= cytofSamples; i++ {
		args = append(args, "--data", filepath.Join(dir, fmt.Sprintf("sample%d.csv", i)), "--labels", filepath.Join(dir, fmt.Sprintf("labels%d.csv", i)))
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("sanity: dica eval: %v: %s", err, stderr.String())
	}
	var got eval.Result
	if err := json.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("sanity: dica eval output: %v", err)
	}
	if len(got.Methods) != 1 || len(got.Methods[0].Scores) != len(want.Scores) {
		return fmt.Errorf("sanity: dica eval gave %d methods; want the input's %d scores", len(got.Methods), len(want.Scores))
	}
	for i, d := range want.Scores {
		g := got.Methods[0].Scores[i]
		if g.Domain != d.Domain || g.Cells != d.Cells || g.Score != d.Score {
			return fmt.Errorf("sanity: at s = 0 the input scores %s %d cells %.6f, dica eval %s %d cells %.6f", d.Domain, d.Cells, d.Score, g.Domain, g.Cells, g.Score)
		}
	}
	res.commandChecked = len(want.Scores)
	return nil
}

// writeJSONFile writes v as JSON on one line (the results of every split
// make the files large; jq or python -m json.tool indent them), atomically.
func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// writePNG draws panels side by side (cols per row) and writes the PNG
// atomically.
func writePNG(path string, w, h vg.Length, rows, cols int, panels []*plot.Plot) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			if i := r*cols + c; i < len(panels) {
				grid[r][c] = panels[i]
			}
		}
	}
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(grid, t, dc)
	for r := range grid {
		for c := range grid[r] {
			if grid[r][c] != nil {
				grid[r][c].Draw(canvases[r][c])
			}
		}
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Commit()
}

// shiftPlot draws the pooled accuracy and the iLISI of the test samples
// against s, one line per method (batch-centered variants dashed), with s
// at evenly spaced positions.
func shiftPlot(path string, res *shiftResult) error {
	var labels []string
	for _, l := range res.Strengths {
		labels = append(labels, strconv.FormatFloat(l.S, 'g', -1, 64))
	}
	ticks := make([]plot.Tick, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(i), Label: l}
	}
	panel := func(title, ylabel string, legend bool, value func(m eval.MethodResult) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "distortion strength s (log1p units)"
		p.Y.Label.Text = ylabel
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.2, float64(len(labels)-1)+0.2
		p.Add(plotter.NewGrid())
		for v := range res.Strengths[0].Results {
			for mi, m := range res.Strengths[0].Results[v].Methods {
				pts := make(plotter.XYs, len(res.Strengths))
				for i, l := range res.Strengths {
					pts[i] = plotter.XY{X: float64(i), Y: value(l.Results[v].Methods[mi])}
				}
				line, sc, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, err
				}
				c := methodColor(m.Method)
				line.Color, sc.Color = c, c
				line.Width = methodWidth(m.Method)
				sc.Shape = plotutil.Shape(mi)
				sc.Radius = vg.Points(3)
				if v == 1 {
					line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				}
				p.Add(line, sc)
				if legend {
					p.Legend.Add(variantName(m.Method, v == 1), line, sc)
				}
			}
		}
		p.Legend.Top = false
		p.Legend.Left = true
		return p, nil
	}
	acc, err := panel("accuracy on unseen samples (pooled)", "accuracy", true, func(m eval.MethodResult) float64 { return m.Pooled.Mean })
	if err != nil {
		return err
	}
	il, err := panel("mixing of the unseen samples (iLISI)", fmt.Sprintf("iLISI (1 to %d test samples)", len(res.Splits[0][1])), false, func(m eval.MethodResult) float64 {
		if m.Mixing == nil {
			return math.NaN()
		}
		return m.Mixing.ILISI.Mean
	})
	if err != nil {
		return err
	}
	return writePNG(path, 12*vg.Inch, 5*vg.Inch, 1, 2, []*plot.Plot{acc, il})
}

// methodWidth gives KPCA and COIR wide lines, drawn before the narrower
// lines of UDICA and DICA: where a pair coincides, as it often does, both
// stay visible.
func methodWidth(m string) vg.Length {
	switch m {
	case "kpca", "coir":
		return vg.Points(4)
	}
	return vg.Points(1.6)
}

// methodColor gives each method one color in every plot (the Okabe-Ito
// palette, distinguishable with the common color vision deficiencies).
func methodColor(m string) color.Color {
	switch m {
	case eval.Input:
		return color.RGBA{0, 0, 0, 255}
	case "kpca":
		return color.RGBA{230, 159, 0, 255}
	case "udica":
		return color.RGBA{204, 121, 167, 255}
	case "coir":
		return color.RGBA{0, 158, 115, 255}
	case "dica":
		return color.RGBA{0, 114, 178, 255}
	}
	return color.RGBA{86, 180, 233, 255}
}

// parseFloats parses a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitComma(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a finite number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}
