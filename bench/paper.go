// Experiment paper: the experiments of the DICA paper (Muandet, Balduzzi &
// Schölkopf, ICML 2013, Section 5) that the shared data allows, with the
// paper's protocols.
//
//	go run ./bench paper [-quick] [-out DIR] [-toy-seeds 20] [-repeats 30] [-sizes 100,500,1000] ...
//
// Toy data (Section 5.1, Figure 2): 10 training domains and 3 unseen test
// domains of the paper's synthetic regression data (package toy), KPCA,
// UDICA, COIR and DICA fitted with the exact solver as in the paper (3
// components, lambda 1e-3, Gaussian kernels of median-heuristic bandwidth).
// For each of -toy-seeds data sets the distributional variance of the
// training and of the unseen domains in the projection is measured as
// bench toy measures it (first two components, standardized, Gaussian
// kernel of median-heuristic bandwidth); the table gives their mean and
// standard deviation over the seeds, where the paper shows one draw. With
// -out, paper_toy.png draws the projections of the first seed (the layout
// of Figure 2).
//
// Cytometry (Section 5.2): the paper draws 10 training patients of the 30
// of its GvHD flow cytometry data, n_i = 100, 500 or 1000 cells each, and
// compares a pooling SVM and the distributional SVM on the inputs and on
// the KPCA, COIR, UDICA and DICA components, over 30 random draws. Here the
// same protocol runs on the 16 CyTOF samples of multicenter16_cytof (8
// markers, log(1+|x|), 4 gated populations, ungated cells left out): each
// repeat draws 10 training samples, the 6 others are tested, with at most
// n_i cells per sample; the hyperparameters are chosen by inner
// cross-validation on the training samples only (package eval; Nystrom
// fits of rank -rank instead of the paper's exact ones; linear SVMs on the
// standardized components). The table gives the accuracy pooled over the
// test cells of each repeat, mean and standard deviation over the repeats,
// with the mixing of the test samples (iLISI, distributional variance).
// With -out, paper_cytometry.png draws it, and paper_results.json holds
// every number.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/toy"
)

func init() {
	register("paper", "the DICA paper's Section 5 protocols: toy Figure 2 over 20 seeds, the cytometry study (10 training samples, n_i = 100/500/1000, pooling and distributional SVM, 30 repeats) on CyTOF", runPaper)
}

const paperUsage = `usage: go run ./bench paper [flags]

The DICA paper's experiments with its protocols: the toy study of Section
5.1 (distributional variance of unseen domains over many seeds, Figure 2
as a picture) and the cytometry study of Section 5.2 run on the CyTOF
samples (random draws of 10 training samples, n_i cells per sample, pooling
and distributional SVM).`

// paperConfig configures the paper experiment.
type paperConfig struct {
	seed     uint64
	toySeeds int
	repeats  int
	train    int
	sizes    []int
	methods  []string
	learners []eval.Learner
	grid     eval.Grid
	rank     int
	mixing   int
	quick    bool
}

func defaultPaperConfig(quick bool) paperConfig {
	c := paperConfig{seed: 1, toySeeds: 20, repeats: 30, train: 10, sizes: []int{100, 500, 1000},
		methods: eval.Methods(), learners: []eval.Learner{eval.Plain, eval.Distributional}, rank: 200, mixing: 3000,
		grid: eval.Grid{Sigma: []float64{2, 4, 8}, Components: []int{10}, C: []float64{1}}}
	if quick {
		c.quick = true
		c.toySeeds, c.repeats, c.sizes, c.rank, c.mixing = 2, 2, []int{100}, 50, 600
		c.methods = []string{"input", "kpca", "dica"}
		c.grid = eval.Grid{Sigma: []float64{1}, Components: []int{3}, C: []float64{1}}
	}
	return c
}

func runPaper(args []string) error {
	quick := hasQuick(args)
	cfg := defaultPaperConfig(quick)
	fs, o := newFlags("paper", paperUsage)
	fs.Bool("quick", false, "a small run (2 toy seeds, n_i = 100, 2 repeats, small grid)")
	fs.Uint64Var(&cfg.seed, "seed", cfg.seed, "`seed` of the splits, subsamples and fits")
	fs.IntVar(&cfg.toySeeds, "toy-seeds", cfg.toySeeds, "toy data sets (seeds 1..`N`)")
	fs.IntVar(&cfg.repeats, "repeats", cfg.repeats, "random draws of the training samples (`R`)")
	fs.IntVar(&cfg.train, "train", cfg.train, "training samples per draw (`K`)")
	sizes := fs.String("sizes", joinInts(cfg.sizes), "cells per sample n_i, comma-separated")
	methods := fs.String("methods", joinStrings(cfg.methods), "`methods`, comma-separated")
	fs.IntVar(&cfg.rank, "rank", cfg.rank, "Nystrom rank `m` of the cytometry fits")
	fs.IntVar(&cfg.mixing, "mixing-cells", cfg.mixing, "test cells of the mixing measures per split (`N`)")
	skipToy := fs.Bool("no-toy", false, "skip the toy study")
	skipCyto := fs.Bool("no-cytometry", false, "skip the cytometry study")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.methods = splitComma(*methods)
	cfg.sizes = nil
	for _, f := range splitComma(*sizes) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 {
			return fmt.Errorf("-sizes: %q is not a number of cells >= 2", f)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
	}
	start := time.Now()
	load0 := loadAvg()
	rep := newReporter(os.Stdout, "paper", &options{json: o.json})
	res := &paperResult{Seed: cfg.seed, Quick: cfg.quick}
	ctx := context.Background()
	if !*skipToy {
		t0 := time.Now()
		tr, panels, err := paperToy(ctx, cfg, rep, o.out != "")
		if err != nil {
			return err
		}
		tr.Seconds = time.Since(t0).Seconds()
		res.Toy = tr
		if o.out != "" {
			path := filepath.Join(o.out, "paper_toy.png")
			if err := writePNG(path, 9*vg.Inch, 8*vg.Inch, 2, 2, panels); err != nil {
				return err
			}
			rep.note("wrote %s", path)
		}
	}
	if !*skipCyto {
		t0 := time.Now()
		ds, err := loadCytof(ctx, seq(1, cytofSamples), false)
		if err != nil {
			if err := skipNoData("paper", err); err != nil {
				return err
			}
		} else {
			cr, err := paperCytometry(ctx, cfg, ds, rep)
			if err != nil {
				return err
			}
			cr.Seconds = time.Since(t0).Seconds()
			res.Cytometry = cr
			if o.out != "" {
				path := filepath.Join(o.out, "paper_cytometry.png")
				if err := paperPlot(path, cr); err != nil {
					return err
				}
				rep.note("wrote %s", path)
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.LoadAvg = [2]string{load0, loadAvg()}
	rep.note("%.0f s; load average (1, 5, 15 min) at the start %s, at the end %s", res.Seconds, load0, res.LoadAvg[1])
	if o.out != "" {
		path := filepath.Join(o.out, "paper_results.json")
		if err := writeJSONFile(path, res); err != nil {
			return err
		}
		rep.note("wrote %s", path)
	}
	return rep.flush()
}

// paperResult is everything the experiment measured (paper_results.json).
type paperResult struct {
	Seed      uint64           `json:"seed"`
	Quick     bool             `json:"quick"`
	Toy       *paperToyResult  `json:"toy,omitempty"`
	Cytometry *paperCytoResult `json:"cytometry,omitempty"`
	Seconds   float64          `json:"seconds"`
	LoadAvg   [2]string        `json:"loadavg_start_end"`
}

// paperToyResult holds the distributional variances of the toy study.
type paperToyResult struct {
	Seeds   []uint64 `json:"seeds"`
	Methods []string `json:"methods"`
	// DVTrain[m][i] and DVTest[m][i] are method m's distributional
	// variances of the training and unseen domains for seed i.
	DVTrain [][]float64 `json:"dv_train"`
	DVTest  [][]float64 `json:"dv_test"`
	Seconds float64     `json:"seconds"`
}

// paperToy runs the toy study over the seeds; with panels it returns the
// projections of the first seed as plot panels.
func paperToy(ctx context.Context, cfg paperConfig, rep *reporter, panels bool) (*paperToyResult, []*plot.Plot, error) {
	methods := []dica.Method{dica.KPCA, dica.UDICA, dica.COIR, dica.DICA}
	r := &paperToyResult{DVTrain: make([][]float64, len(methods)), DVTest: make([][]float64, len(methods))}
	for _, m := range methods {
		r.Methods = append(r.Methods, m.String())
	}
	var ps []*plot.Plot
	for s := 1; s <= cfg.toySeeds; s++ {
		seed := uint64(s)
		r.Seeds = append(r.Seeds, seed)
		train, test := toy.RegressionSplit(toy.Options{Seed: seed, MeanSize: 200, Domains: 10}, 3)
		for mi, method := range methods {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			m, err := dica.Fit(ctx, train.Source(), dica.Config{Method: method, Solver: dica.Exact, Components: 3, Lambda: 1e-3, Seed: seed})
			if err != nil {
				return nil, nil, fmt.Errorf("toy seed %d, %v: %w", seed, method, err)
			}
			dvTrain, ztr, err := projectedVariance(m, train)
			if err != nil {
				return nil, nil, err
			}
			dvTest, zte, err := projectedVariance(m, test)
			if err != nil {
				return nil, nil, err
			}
			r.DVTrain[mi] = append(r.DVTrain[mi], dvTrain)
			r.DVTest[mi] = append(r.DVTest[mi], dvTest)
			if panels && s == 1 {
				p, err := toyPanel(fmt.Sprintf("%s (seed 1): DV unseen %.4f", method, dvTest), train, ztr, test, zte)
				if err != nil {
					return nil, nil, err
				}
				// Room above the points for the legend.
				p.Y.Max += 0.3 * (p.Y.Max - p.Y.Min)
				ps = append(ps, p)
			}
		}
	}
	for mi, name := range r.Methods {
		mt, st := meanSD(r.DVTest[mi])
		mtr, str := meanSD(r.DVTrain[mi])
		if err := rep.add("toy (Section 5.1): distributional variance in the projection, mean ± sd over seeds", obj{{"method", name}, {"seeds", cfg.toySeeds}},
			obj{{"dv_unseen", mt}, {"sd", st}, {"dv_train", mtr}, {"sd_train", str}}); err != nil {
			return nil, nil, err
		}
	}
	// How often each method makes the unseen domains more alike than its
	// unsupervised or supervised counterpart (the paper's claim).
	for _, pair := range [][2]int{{1, 0}, {3, 2}} {
		wins := 0
		for i := range r.Seeds {
			if r.DVTest[pair[0]][i] < r.DVTest[pair[1]][i] {
				wins++
			}
		}
		rep.note("toy: %s gives the unseen domains a lower distributional variance than %s for %d of %d seeds", r.Methods[pair[0]], r.Methods[pair[1]], wins, len(r.Seeds))
	}
	return r, ps, nil
}

// paperCytoResult holds the cytometry study.
type paperCytoResult struct {
	Data     string        `json:"data"`
	Domains  []string      `json:"domains"`
	Train    int           `json:"train_domains"`
	Repeats  int           `json:"repeats"`
	Splits   [][2][]string `json:"splits"`
	Grid     eval.Grid     `json:"grid"`
	Rank     int           `json:"rank"`
	Settings []paperCell   `json:"settings"`
	Seconds  float64       `json:"seconds"`
}

// paperCell is one n_i and learner.
type paperCell struct {
	CellsPerDomain int          `json:"cells_per_domain"`
	Setting        string       `json:"setting"`
	Result         *eval.Result `json:"result"`
}

// paperCytometry runs the cytometry protocol on the data set.
func paperCytometry(ctx context.Context, cfg paperConfig, ds *dataset.Dataset, rep *reporter) (*paperCytoResult, error) {
	splits, err := eval.RandomSplits(ds, cfg.train, cfg.repeats, cfg.seed)
	if err != nil {
		return nil, err
	}
	r := &paperCytoResult{Data: "multicenter16_cytof, labelled cells (label 0 left out), log(1+|x|)", Domains: ds.DomainNames,
		Train: cfg.train, Repeats: cfg.repeats, Grid: cfg.grid, Rank: cfg.rank}
	for _, s := range splits {
		var tr, te []string
		for _, g := range s.Train {
			tr = append(tr, ds.DomainNames[g])
		}
		for _, g := range s.Test {
			te = append(te, ds.DomainNames[g])
		}
		r.Splits = append(r.Splits, [2][]string{tr, te})
	}
	rep.note("cytometry (Section 5.2) on %d labelled CyTOF cells of %d samples: %d random draws of %d training samples, the %d others tested",
		ds.N(), ds.NumDomains(), cfg.repeats, cfg.train, ds.NumDomains()-cfg.train)
	for _, n := range cfg.sizes {
		for _, l := range cfg.learners {
			t0 := time.Now()
			o := eval.Options{Methods: cfg.methods, Rank: cfg.rank, Grid: cfg.grid, CellsPerDomain: n, MixingCells: cfg.mixing,
				Learner: l, Seed: cfg.seed}
			res, err := eval.Evaluate(ctx, ds, splits, o)
			if err != nil {
				return nil, fmt.Errorf("n_i = %d, %s: %w", n, l.Setting(), err)
			}
			r.Settings = append(r.Settings, paperCell{CellsPerDomain: n, Setting: l.Setting(), Result: res})
			for _, m := range res.Methods {
				v := obj{{"pooled_acc", m.Pooled.Mean}, {"sd", m.Pooled.SD}, {"domain_mean", m.DomainMean.Mean}}
				if mx := m.Mixing; mx != nil {
					v = append(v, obj{{"iLISI", mx.ILISI.Mean}, {"dist_var", mx.DistributionalVariance.Mean}}...)
				}
				v = append(v, field{"seconds", m.Seconds})
				if err := rep.add("cytometry (Section 5.2): accuracy on unseen samples over the repeats", obj{{"n_i", n}, {"setting", l.Setting()}, {"method", m.Method}}, v); err != nil {
					return nil, err
				}
			}
			fmt.Fprintf(os.Stderr, "bench paper: n_i = %d, %s done in %.0f s\n", n, l.Setting(), time.Since(t0).Seconds())
		}
	}
	return r, nil
}

// paperPlot draws the pooled accuracy against n_i, one panel per setting,
// one line per method, with the standard deviation over the repeats as
// error bars.
func paperPlot(path string, r *paperCytoResult) error {
	var panels []*plot.Plot
	var sizes []int
	for _, c := range r.Settings {
		if len(sizes) == 0 || sizes[len(sizes)-1] != c.CellsPerDomain {
			sizes = append(sizes, c.CellsPerDomain)
		}
	}
	ticks := make([]plot.Tick, len(sizes))
	for i, n := range sizes {
		ticks[i] = plot.Tick{Value: float64(i), Label: strconv.Itoa(n)}
	}
	for _, setting := range []string{"pooling", "distributional"} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s SVM: %d training samples, %d repeats", setting, r.Train, r.Repeats)
		p.X.Label.Text = "cells per sample n_i"
		p.Y.Label.Text = "accuracy on unseen samples (pooled)"
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.3, float64(len(sizes)-1)+0.3
		p.Add(plotter.NewGrid())
		methods := []string{}
		for _, c := range r.Settings {
			if c.Setting == setting {
				for _, m := range c.Result.Methods {
					methods = append(methods, m.Method)
				}
				break
			}
		}
		for mi, name := range methods {
			var pts plotter.XYs
			var errs plotter.YErrors
			for i, n := range sizes {
				for _, c := range r.Settings {
					if c.Setting != setting || c.CellsPerDomain != n {
						continue
					}
					m := c.Result.Methods[mi]
					// Offset the methods a little so that the error bars
					// do not hide each other.
					x := float64(i) + 0.04*(float64(mi)-float64(len(methods)-1)/2)
					pts = append(pts, plotter.XY{X: x, Y: m.Pooled.Mean})
					errs = append(errs, struct{ Low, High float64 }{m.Pooled.SD, m.Pooled.SD})
				}
			}
			if len(pts) == 0 {
				continue
			}
			line, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			c := methodColor(name)
			line.Color, sc.Color = c, c
			line.Width = methodWidth(name)
			sc.Shape = plotutil.Shape(mi)
			sc.Radius = vg.Points(3)
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pts, errs})
			if err != nil {
				return err
			}
			eb.Color = c
			p.Add(line, sc, eb)
			p.Legend.Add(name, line, sc)
		}
		p.Legend.Top = false
		p.Legend.Left = false
		panels = append(panels, p)
	}
	// The same accuracy axis in both panels.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	for _, p := range panels {
		p.Y.Min, p.Y.Max = lo, hi
	}
	return writePNG(path, 12*vg.Inch, 5*vg.Inch, 1, 2, panels)
}

// meanSD returns the mean and sample standard deviation of v.
func meanSD(v []float64) (float64, float64) {
	m := mean(v)
	if len(v) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return joinStrings(s)
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
