// Experiment gvhd: distributional variance of the two GvHD domains before
// and after UDICA, at several Nystrom ranks.
//
//	go run ./bench gvhd [-json] [-out DIR] [-m 25,50,...] [-exact-n N] [-transform none|log1p|asinh] [-sigma S]
//
// Data: ../shared/data/gvhd_mclust (or $DICA_DATA): GvHD.pos.csv and
// GvHD.control.csv (Brinkman et al. 2007, 15,892 cells, 4 markers, header),
// one domain per file, no labels. The RBF bandwidth is the median heuristic
// of the cells (or -sigma) and is shared by every fit.
//
// Measured:
//   - the exact input distributional variance V_H(S) = tr(KQ) (the paper's
//     Theorem 2) with the RBF Gram matrix: on a seeded -exact-n cell
//     subsample with exact.DistributionalVariance, and on all cells from the
//     block sums of K (never stored);
//   - for UDICA and, for comparison, KPCA with Nystrom uniform landmarks at
//     each m: Model.InputVariance (tr(KQ) in the Nystrom features, which
//     tends to the exact value as m grows), Model.ProjectedVariance (linear
//     kernel on all returned components) and the scale-free variance of the
//     first two components (standardized, Gaussian kernel with the
//     median-heuristic bandwidth, as `dica demo`), and the fit time.
//
// With -out, gvhd_variance.png plots the variances against m.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

func init() {
	register("gvhd", "distributional variance of the 2 GvHD domains before and after UDICA vs m", runGvHD)
}

const gvhdUsage = `usage: go run ./bench gvhd [flags]

Distributional variance of the two GvHD domains (gvhd_mclust) in the input
(exact tr(KQ)) and after UDICA and KPCA with Nystrom features at several m.`

// gvhdConfig configures the gvhd experiment.
type gvhdConfig struct {
	ms        []int
	exactN    int
	sigma     float64
	transform string
	seed      uint64
}

func runGvHD(args []string) error {
	fs, o := newFlags("gvhd", gvhdUsage)
	cfg := gvhdConfig{}
	msFlag := fs.String("m", "25,50,100,200,400,800", "comma-separated ranks `m`")
	fs.IntVar(&cfg.exactN, "exact-n", 3000, "cells of the subsample for exact.DistributionalVariance")
	fs.Float64Var(&cfg.sigma, "sigma", 0, "RBF bandwidth (0: median heuristic)")
	fs.StringVar(&cfg.transform, "transform", "none", "transform of the intensities: none, log1p or asinh (asinh(x/5))")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ms, err := parseInts(*msFlag)
	if err != nil {
		return fmt.Errorf("-m: %w", err)
	}
	cfg.ms = ms
	ctx := context.Background()
	ds, err := loadGvHD(ctx, cfg.transform)
	if err != nil {
		return skipNoData("gvhd", err)
	}
	rep := newReporter(os.Stdout, "gvhd", o)
	if err := gvhdRun(ctx, cfg, ds, rep, o.out); err != nil {
		return err
	}
	return rep.flush()
}

// loadGvHD reads the two GvHD files, one domain each.
func loadGvHD(ctx context.Context, transform string) (*dataset.Dataset, error) {
	dir, err := dataPath("gvhd_mclust")
	if err != nil {
		return nil, err
	}
	o := csvio.Options{Header: csvio.WithHeader}
	switch transform {
	case "none":
	case "log1p":
		o.Transform = log1pAbs
	case "asinh":
		o.Transform = func(row []float64) {
			for i, v := range row {
				row[i] = math.Asinh(v / 5)
			}
		}
	default:
		return nil, fmt.Errorf("-transform: %q is not none, log1p or asinh", transform)
	}
	src, err := csvio.NewSource([]string{filepath.Join(dir, "GvHD.pos.csv"), filepath.Join(dir, "GvHD.control.csv")}, o)
	if err != nil {
		return nil, err
	}
	return dataset.Collect(ctx, src)
}

// blockDistributionalVariance returns tr(KQ) for the kernel k on all rows of
// ds from the domain-block sums S_ij of K, computed in row blocks on all
// cores without storing K (the formula of exact.DistributionalVariance).
func blockDistributionalVariance(k kernel.Kernel, ds *dataset.Dataset) float64 {
	n, nd := ds.N(), ds.NumDomains()
	const block = 256
	workers := runtime.GOMAXPROCS(0)
	sums := make([][]float64, workers)
	bufs := make([]*mat.Dense, workers)
	parallelBlocks(n, block, func(w, lo, hi int) {
		if sums[w] == nil {
			sums[w] = make([]float64, nd*nd)
			bufs[w] = mat.NewDense(block, n, nil)
		}
		dst := bufs[w].Slice(0, hi-lo, 0, n).(*mat.Dense)
		k.Block(dst, ds.X.Slice(lo, hi, 0, ds.D()), ds.X)
		s := sums[w]
		for i := lo; i < hi; i++ {
			row := dst.RawRowView(i - lo)
			di := ds.Domain[i] * nd
			for q, v := range row {
				s[di+ds.Domain[q]] += v
			}
		}
	})
	total := make([]float64, nd*nd)
	for _, s := range sums {
		for i, v := range s { // nil for idle workers
			total[i] += v
		}
	}
	sizes := ds.DomainSizes()
	var diag, all float64
	for i := 0; i < nd; i++ {
		for j := 0; j < nd; j++ {
			g := total[i*nd+j] / (float64(sizes[i]) * float64(sizes[j]))
			all += g
			if i == j {
				diag += g
			}
		}
	}
	N := float64(nd)
	return diag/N - all/(N*N)
}

// gvhdRun runs the experiment on the data set ds (2 or more domains).
func gvhdRun(ctx context.Context, cfg gvhdConfig, ds *dataset.Dataset, rep *reporter, out string) error {
	sigma := cfg.sigma
	if sigma == 0 {
		sigma = kernel.MedianSigma(ds.X, 1000, cfg.seed)
	}
	k := kernel.RBF{Sigma: sigma}
	rep.note("%d cells in %d domains %v (sizes %v), %d markers, transform %s, RBF sigma %.4g",
		ds.N(), ds.NumDomains(), ds.DomainNames, ds.DomainSizes(), ds.D(), cfg.transform, sigma)

	sub := subsample(ds, cfg.exactN, cfg.seed)
	t0 := time.Now()
	var g mat.Dense
	k.Block(&g, sub.X, sub.X)
	r := g.RawMatrix()
	dvSub := exact.DistributionalVariance(mat.NewSymDense(r.Rows, r.Data), sub.Domain, sub.NumDomains())
	if err := rep.add("input distributional variance (exact RBF Gram)", obj{{"cells", sub.N()}, {"how", "exact.DistributionalVariance on a seeded subsample"}},
		obj{{"tr_KQ", dvSub}, {"seconds", time.Since(t0).Seconds()}}); err != nil {
		return err
	}
	t0 = time.Now()
	dvAll := blockDistributionalVariance(k, ds)
	if err := rep.add("input distributional variance (exact RBF Gram)", obj{{"cells", ds.N()}, {"how", "block sums of K over all cells"}},
		obj{{"tr_KQ", dvAll}, {"seconds", time.Since(t0).Seconds()}}); err != nil {
		return err
	}

	type curve struct{ input, proj, rbf2 []float64 }
	curves := map[dica.Method]*curve{dica.UDICA: {}, dica.KPCA: {}}
	var xs []float64
	for _, m := range cfg.ms {
		if m > ds.N() {
			continue
		}
		xs = append(xs, float64(m))
		for _, method := range []dica.Method{dica.UDICA, dica.KPCA} {
			c := dica.Config{Method: method, Solver: dica.Nystrom, Rank: m, Sigma: sigma, Components: 10, Seed: cfg.seed}
			resetPeakRSS()
			t0 := time.Now()
			model, err := dica.Fit(ctx, ds.Source(), c)
			if err != nil {
				return fmt.Errorf("%v m=%d: %w", method, m, err)
			}
			secs := time.Since(t0).Seconds()
			rss := peakRSS()
			rbf2, _, err := projectedVariance(model, ds)
			if err != nil {
				return err
			}
			cv := curves[method]
			cv.input = append(cv.input, model.InputVariance)
			cv.proj = append(cv.proj, model.ProjectedVariance)
			cv.rbf2 = append(cv.rbf2, rbf2)
			if err := rep.add("variance vs m (nystrom, uniform landmarks)", obj{{"method", method.String()}, {"m", m}},
				obj{{"input_dv_features", model.InputVariance}, {"input_dv_exact_all", dvAll}, {"projected_dv_linear", model.ProjectedVariance},
					{"projected_dv_rbf_2comp", rbf2}, {"components", model.Positive}, {"fit_s", secs}, {"peak_rss_mb", mb(rss)}}); err != nil {
				return err
			}
		}
	}
	if out == "" || len(xs) == 0 {
		return nil
	}
	path := filepath.Join(out, "gvhd_variance.png")
	err := linePlot(path, "GvHD: distributional variance of the 2 domains", "rank m", "distributional variance", plotOpts{logX: true, logY: true, legendBottom: true},
		[]series{
			{"input, Nystrom features", xs, curves[dica.UDICA].input},
			{"UDICA, linear on components", xs, curves[dica.UDICA].proj},
			{"KPCA, linear on components", xs, curves[dica.KPCA].proj},
			{"UDICA, RBF on 2 std. components", xs, curves[dica.UDICA].rbf2},
			{"KPCA, RBF on 2 std. components", xs, curves[dica.KPCA].rbf2},
		},
		[]hline{{"input, exact tr(KQ), all cells", dvAll}})
	if err != nil {
		return err
	}
	rep.note("plot: %s", path)
	return nil
}
