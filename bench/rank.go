// Experiment rank: how the rank m of the low-rank solvers trades accuracy
// for time on the multicenter CyTOF data.
//
//	go run ./bench rank [-json] [-out DIR] [-m 25,50,...] [-fit-cells N]
//	    [-svm-cells N] [-test-cells N] [-exact-n N] [-kerr-n N] [-sigma S]
//
// Data: ../shared/data/multicenter16_cytof (or $DICA_DATA), log(1+|x|),
// labelled cells only. Solvers: Nystrom (uniform and k-means landmarks) and
// random Fourier features (plain and orthogonal) at each m, supervised DICA
// (delta output kernel, eps = 1e-4, lambda = 0, RBF with -sigma). Measured:
//
//   - agreement with the exact path on a seeded -exact-n cell subsample of
//     the training samples: the low-rank and exact fits on the same cells,
//     the relative error of each positive eigenvalue and the principal
//     angles between the two projections of those cells;
//   - the kernel approximation error ||K - Phi Phi^T|| / ||K|| (Frobenius
//     and spectral) of the map of each fit on -kerr-n training cells;
//   - leave-centers-out accuracy: fit on samples 1-8, project, train a
//     linear SVM (package svm, standardized components) on -svm-cells
//     training cells and test it on -test-cells cells of samples 9-16;
//     then the reverse. Baselines: the same SVM on the 8 inputs, and on the
//     exact DICA components of -exact-n training cells;
//   - fit time and the peak resident memory of each fit.
//
// Plots (with -out): rank_accuracy.png (mean accuracy of the two directions
// vs m, per solver, exact and input baselines as lines), rank_error.png
// (eigenvalue relative error vs m) and rank_kernel_error.png.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/svm"
)

func init() {
	register("rank", "accuracy, eigenvalue and kernel error, time and memory vs rank m (CyTOF)", runRank)
}

const rankUsage = `usage: go run ./bench rank [flags]

Nystrom (uniform, k-means) and RFF (plain, orthogonal) DICA at several ranks m
on multicenter16_cytof: agreement with the exact path, kernel error,
leave-centers-out linear-SVM accuracy (samples 1-8 vs 9-16, both ways), fit
time and peak RSS.`

// rankSolver is one low-rank solver configuration.
type rankSolver struct {
	name       string
	solver     dica.Solver
	landmarks  dica.Landmarks
	orthogonal bool
}

// rank returns the number of features used for a requested m: RFF needs
// an even m (sin/cos pairs).
func (s rankSolver) rank(m int) int {
	if s.solver == dica.RFF && m%2 == 1 {
		return m + 1
	}
	return m
}

var rankSolvers = []rankSolver{
	{"nystrom-uniform", dica.Nystrom, dica.UniformLandmarks, false},
	{"nystrom-kmeans", dica.Nystrom, dica.KMeansLandmarks, false},
	{"rff", dica.RFF, 0, false},
	{"rff-orth", dica.RFF, 0, true},
}

// rankConfig configures the rank experiment.
type rankConfig struct {
	ms        []int
	fitCells  int // training cells per low-rank fit (0: all)
	svmCells  int // training cells of the SVM
	testCells int // test cells (0: all)
	exactN    int // cells of the exact path
	kerrN     int // cells of the kernel error
	sigma     float64
	seed      uint64
}

// rankSplit is one direction of the leave-centers-out evaluation.
type rankSplit struct {
	name        string
	train, test *dataset.Dataset
}

func runRank(args []string) error {
	fs, o := newFlags("rank", rankUsage)
	cfg := rankConfig{}
	msFlag := fs.String("m", "25,50,100,200,400,800,1600", "comma-separated ranks `m`")
	fs.IntVar(&cfg.fitCells, "fit-cells", 120000, "training cells per low-rank fit, a seeded subsample (0: all ~350k)")
	fs.IntVar(&cfg.svmCells, "svm-cells", 30000, "training cells of the linear SVM (seeded subsample)")
	fs.IntVar(&cfg.testCells, "test-cells", 100000, "test cells (seeded subsample; 0: all)")
	fs.IntVar(&cfg.exactN, "exact-n", 3000, "cells of the exact path (seeded subsample of the training samples)")
	fs.IntVar(&cfg.kerrN, "kerr-n", 1000, "cells on which the kernel approximation error is measured")
	fs.Float64Var(&cfg.sigma, "sigma", 1, "RBF bandwidth (0: median heuristic)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of subsamples and fits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ms, err := parseInts(*msFlag)
	if err != nil {
		return fmt.Errorf("-m: %w", err)
	}
	cfg.ms = ms
	ctx := context.Background()
	a, err := loadCytof(ctx, seq(1, 8), false)
	if err != nil {
		return skipNoData("rank", err)
	}
	b, err := loadCytof(ctx, seq(9, 16), false)
	if err != nil {
		return skipNoData("rank", err)
	}
	rep := newReporter(os.Stdout, "rank", o)
	splits := []rankSplit{{"train 1-8, test 9-16", a, b}, {"train 9-16, test 1-8", b, a}}
	start := time.Now()
	if err := rank(ctx, cfg, splits, rep, o.out); err != nil {
		return err
	}
	rep.note("rank: total wall time %.1f s", time.Since(start).Seconds())
	return rep.flush()
}

// svmAccuracy standardizes the training features, trains a one-vs-rest
// linear SVM and returns its accuracy on the test features.
func svmAccuracy(ctx context.Context, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int, nc int, seed uint64) (float64, error) {
	sc, err := svm.Standardize(xtr)
	if err != nil {
		return 0, err
	}
	ztr, err := sc.Apply(xtr)
	if err != nil {
		return 0, err
	}
	m, err := svm.Train(ctx, ztr, ytr, nc, svm.Options{Seed: seed})
	if err != nil {
		return 0, err
	}
	zte, err := sc.Apply(xte)
	if err != nil {
		return 0, err
	}
	pred, err := m.Predict(zte)
	if err != nil {
		return 0, err
	}
	return svm.Accuracy(pred, yte), nil
}

// rankBaseConfig is the DICA configuration shared by every fit.
func rankBaseConfig(cfg rankConfig) dica.Config {
	return dica.Config{Method: dica.DICA, Components: 10, Sigma: cfg.sigma, Epsilon: 1e-4, Seed: cfg.seed}
}

// rankPoint holds the results of one solver at one m, for the plots.
type rankPoint struct {
	acc      []float64 // per direction
	eigErr   float64
	kernFrob float64
}

// rankRun is the state of one run of the rank experiment: its settings,
// where it reports, and the results that the summary and the plots need.
type rankRun struct {
	ctx                context.Context
	cfg                rankConfig
	rep                *reporter
	base               dica.Config
	res                map[string]map[int]*rankPoint // by solver name and m
	exactAcc, inputAcc []float64                     // per direction
}

// rankSets are the seeded subsamples of one direction: the training cells
// of the low-rank fits, of the SVM, of the exact path and of the kernel
// error, and the test cells, with the SVM's labels in a shared numbering.
type rankSets struct {
	fit, svm, test, exact *dataset.Dataset
	kerrX                 *mat.Dense
	ysvm, ytest           []int
	nc                    int
}

// rank runs the experiment on the given directions.
func rank(ctx context.Context, cfg rankConfig, splits []rankSplit, rep *reporter, out string) error {
	r := &rankRun{ctx: ctx, cfg: cfg, rep: rep, base: rankBaseConfig(cfg), res: map[string]map[int]*rankPoint{}}
	for _, s := range rankSolvers {
		r.res[s.name] = map[int]*rankPoint{}
		for _, m := range cfg.ms {
			r.res[s.name][m] = &rankPoint{eigErr: math.NaN(), kernFrob: math.NaN()}
		}
	}
	for di, sp := range splits {
		if err := r.direction(di, sp); err != nil {
			return err
		}
	}
	if err := r.summary(); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	return r.plots(out)
}

// direction measures one direction: the input and exact baselines, then
// every solver at every m. The first direction (di == 0) also measures
// the agreement with the exact path and the kernel error.
func (r *rankRun) direction(di int, sp rankSplit) error {
	cfg := r.cfg
	set := &rankSets{
		fit:   subsample(sp.train, cfg.fitCells, cfg.seed+1),
		svm:   subsample(sp.train, cfg.svmCells, cfg.seed+2),
		test:  subsample(sp.test, cfg.testCells, cfg.seed+3),
		exact: subsample(sp.train, cfg.exactN, cfg.seed+4),
		kerrX: subsample(sp.train, cfg.kerrN, cfg.seed+5).X,
	}
	set.ysvm, set.ytest, set.nc = sharedLabels(set.svm, set.test)
	r.rep.note("%s: %d training cells (fits use %d, SVM %d, exact path %d), %d test cells (%d used)",
		sp.name, sp.train.N(), set.fit.N(), set.svm.N(), set.exact.N(), sp.test.N(), set.test.N())
	if err := r.inputBaseline(sp, set); err != nil {
		return err
	}
	em, err := r.exactBaseline(sp, set)
	if err != nil {
		return err
	}
	for _, s := range rankSolvers {
		for _, m := range cfg.ms {
			if err := r.solverFit(di, sp, set, em, s, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// inputBaseline measures the SVM on the inputs themselves.
func (r *rankRun) inputBaseline(sp rankSplit, set *rankSets) error {
	t0 := time.Now()
	acc, err := svmAccuracy(r.ctx, set.svm.X, set.ysvm, set.test.X, set.ytest, set.nc, r.cfg.seed)
	if err != nil {
		return fmt.Errorf("input baseline: %w", err)
	}
	r.inputAcc = append(r.inputAcc, acc)
	return r.rep.add("baselines", obj{{"direction", sp.name}, {"solver", "input (8 markers)"}, {"m", "-"}, {"fit_cells", 0}},
		obj{{"accuracy", acc}, {"svm_s", time.Since(t0).Seconds()}})
}

// exactBaseline fits the exact path on its subsample, measures the SVM on
// its components, and returns the model.
func (r *rankRun) exactBaseline(sp rankSplit, set *rankSets) (*dica.Model, error) {
	ec := r.base
	ec.Solver = dica.Exact
	resetPeakRSS()
	t0 := time.Now()
	em, err := dica.Fit(r.ctx, set.exact.Source(), ec)
	if err != nil {
		return nil, fmt.Errorf("exact fit: %w", err)
	}
	efit := time.Since(t0).Seconds()
	erss := peakRSS()
	acc, err := projectedAccuracy(r.ctx, em, set.svm.X, set.ysvm, set.test.X, set.ytest, set.nc, r.cfg.seed)
	if err != nil {
		return nil, fmt.Errorf("exact baseline: %w", err)
	}
	r.exactAcc = append(r.exactAcc, acc)
	if err := r.rep.add("baselines", obj{{"direction", sp.name}, {"solver", "exact"}, {"m", "-"}, {"fit_cells", set.exact.N()}},
		obj{{"accuracy", acc}, {"fit_s", efit}, {"peak_rss_mb", mb(erss)}, {"eigenvalues", head(em.Eigenvalues, em.Positive)}}); err != nil {
		return nil, err
	}
	return em, nil
}

// solverFit measures solver s at rank m in one direction: in the first
// (di == 0), the agreement with the exact model em on its cells (when m
// does not exceed them); then the fit's time, peak memory, kernel error
// and leave-centers-out accuracy.
func (r *rankRun) solverFit(di int, sp rankSplit, set *rankSets, em *dica.Model, s rankSolver, m int) error {
	c := r.base
	c.Solver, c.Landmarks, c.Orthogonal, c.Rank = s.solver, s.landmarks, s.orthogonal, s.rank(m)
	conf := obj{{"direction", sp.name}, {"solver", s.name}, {"m", c.Rank}, {"fit_cells", set.fit.N()}}
	p := r.res[s.name][m]
	if di == 0 && c.Rank <= set.exact.N() {
		v, err := exactAgreement(r.ctx, c, em, set.exact)
		if err != nil {
			return fmt.Errorf("%s m=%d agreement: %w", s.name, m, err)
		}
		p.eigErr = v[0].V.(float64)
		if err := r.rep.add("agreement with the exact path", obj{{"solver", s.name}, {"m", c.Rank}, {"n", set.exact.N()}}, v); err != nil {
			return err
		}
	}
	resetPeakRSS()
	t0 := time.Now()
	model, err := dica.Fit(r.ctx, set.fit.Source(), c)
	if err != nil {
		return fmt.Errorf("%s m=%d: %w", s.name, m, err)
	}
	fitS := time.Since(t0).Seconds()
	rss := peakRSS()
	t0 = time.Now()
	acc, err := projectedAccuracy(r.ctx, model, set.svm.X, set.ysvm, set.test.X, set.ytest, set.nc, r.cfg.seed)
	if err != nil {
		return fmt.Errorf("%s m=%d accuracy: %w", s.name, m, err)
	}
	evalS := time.Since(t0).Seconds()
	frob, spec := approx.KernelError(model.Config().Kernel, model.Map(), set.kerrX)
	p.acc = append(p.acc, acc)
	if di == 0 {
		p.kernFrob = frob
	}
	return r.rep.add("leave-centers-out", conf, obj{
		{"accuracy", acc}, {"kernel_frob", frob}, {"kernel_spec", spec},
		{"fit_s", fitS}, {"eval_s", evalS}, {"peak_rss_mb", mb(rss)}, {"components", model.Positive},
	})
}

// summary reports each solver at each m, and the baselines, as means over
// the directions.
func (r *rankRun) summary() error {
	const kind = "summary (mean of both directions)"
	for _, s := range rankSolvers {
		for _, m := range r.cfg.ms {
			p := r.res[s.name][m]
			if err := r.rep.add(kind, obj{{"solver", s.name}, {"m", s.rank(m)}},
				obj{{"accuracy", mean(p.acc)}, {"eig_rel_err", p.eigErr}, {"kernel_frob", p.kernFrob}}); err != nil {
				return err
			}
		}
	}
	if err := r.rep.add(kind, obj{{"solver", "exact"}, {"m", "-"}}, obj{{"accuracy", mean(r.exactAcc)}}); err != nil {
		return err
	}
	return r.rep.add(kind, obj{{"solver", "input"}, {"m", "-"}}, obj{{"accuracy", mean(r.inputAcc)}})
}

// plots draws rank_accuracy.png, rank_error.png and rank_kernel_error.png
// into the folder out.
func (r *rankRun) plots(out string) error {
	cfg := r.cfg
	var accS, errS, kerS []series
	for _, s := range rankSolvers {
		var xs, acc, ee, ke []float64
		for _, m := range cfg.ms {
			p := r.res[s.name][m]
			xs = append(xs, float64(s.rank(m)))
			acc = append(acc, mean(p.acc))
			ee = append(ee, p.eigErr)
			ke = append(ke, p.kernFrob)
		}
		accS = append(accS, series{s.name, xs, acc})
		errS = append(errS, series{s.name, xs, ee})
		kerS = append(kerS, series{s.name, xs, ke})
	}
	files := []string{filepath.Join(out, "rank_accuracy.png"), filepath.Join(out, "rank_error.png"), filepath.Join(out, "rank_kernel_error.png")}
	if err := linePlot(files[0], "Leave-centers-out accuracy (linear SVM on DICA components, "+sigmaText(cfg.sigma)+")", "rank m", "accuracy (mean of 2 directions)", plotOpts{logX: true, legendBottom: true, yMin: 0, yMax: 1},
		accS, []hline{{fmt.Sprintf("exact DICA (n=%d)", cfg.exactN), mean(r.exactAcc)}, {"input (8 markers)", mean(r.inputAcc)}}); err != nil {
		return err
	}
	if err := linePlot(files[1], fmt.Sprintf("Eigenvalue relative error vs exact (n=%d)", cfg.exactN), "rank m", "max relative error of the positive eigenvalues", plotOpts{logX: true, logY: true, yMin: 1e-3, yMax: 10}, errS, nil); err != nil {
		return err
	}
	if err := linePlot(files[2], "Kernel approximation error", "rank m", "||K - Phi Phi^T||_F / ||K||_F", plotOpts{logX: true, logY: true}, kerS, nil); err != nil {
		return err
	}
	r.rep.note("plots: %s", strings.Join(files, ", "))
	return nil
}

// transformer is a fitted model that projects points.
type transformer interface {
	Transform(x *mat.Dense, o dica.TransformOptions) (*mat.Dense, error)
}

// projectedAccuracy projects the training and test points with the model and
// returns the accuracy of a linear SVM on the projections.
func projectedAccuracy(ctx context.Context, m transformer, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int, nc int, seed uint64) (float64, error) {
	ztr, err := m.Transform(xtr, dica.TransformOptions{})
	if err != nil {
		return 0, err
	}
	zte, err := m.Transform(xte, dica.TransformOptions{})
	if err != nil {
		return 0, err
	}
	return svmAccuracy(ctx, ztr, ytr, zte, yte, nc, seed)
}

// exactAgreement fits the low-rank configuration c on the exact path's
// cells and compares it with the exact model em: the largest relative error
// of the positive eigenvalues (first value), each of them, and the principal
// angles between the two projections of the cells.
func exactAgreement(ctx context.Context, c dica.Config, em *dica.Model, ds *dataset.Dataset) (obj, error) {
	lm, err := dica.Fit(ctx, ds.Source(), c)
	if err != nil {
		return nil, err
	}
	k := min(lm.Positive, em.Positive)
	if k == 0 {
		return nil, fmt.Errorf("no positive component")
	}
	rel := make([]float64, k)
	worst := 0.0
	for j := range rel {
		rel[j] = math.Abs(lm.Eigenvalues[j]-em.Eigenvalues[j]) / math.Abs(em.Eigenvalues[j])
		worst = math.Max(worst, rel[j])
	}
	ze, err := em.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		return nil, err
	}
	zl, err := lm.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		return nil, err
	}
	cos := approx.PrincipalCosines(ze.Slice(0, ds.N(), 0, k).(*mat.Dense), zl.Slice(0, ds.N(), 0, k).(*mat.Dense))
	angles := make([]float64, len(cos))
	for i, c := range cos {
		angles[i] = math.Acos(math.Min(1, c)) * 180 / math.Pi
	}
	return obj{{"eig_rel_err_max", worst}, {"eig_rel_err", rel}, {"max_angle_deg", angles[len(angles)-1]}, {"angles_deg", angles}}, nil
}

// sigmaText describes the bandwidth setting of a plot.
func sigmaText(sigma float64) string {
	if sigma == 0 {
		return "median-heuristic sigma"
	}
	return fmt.Sprintf("sigma = %g", sigma)
}
