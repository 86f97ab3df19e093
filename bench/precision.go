// Experiment precision: the error of the single-precision pass
// (dica.Config.Precision = 32) against the float64 fit, beside the error of
// the Nystrom approximation against the exact path at the same rank m.
//
//	go run ./bench precision [-json] [-out DIR] [-m 200,500,1000]
//	    [-exact-n 3000] [-data cytof,gvhd,toy] [-full=true]
//
// Data sets and fits (Nystrom with uniform landmarks, k = 10 components,
// eps = 1e-4):
//   - cytof: multicenter16_cytof, the labelled cells, log(1+|x|), RBF
//     sigma = 1: supervised DICA, DICA with lambda = 0.1, and UDICA;
//   - gvhd: gvhd_mclust, raw intensities, RBF sigma by the median heuristic
//     of all cells: UDICA and KPCA;
//   - toy: the paper's toy regression data (10 domains of 2,000 points on
//     average), RBF sigma and sigma_y by the median heuristic of all
//     points: DICA on the real targets and UDICA.
//
// For each data set, fit and m, on a seeded subsample of -exact-n cells:
// the exact fit, and the Nystrom fits at Precision 64 and 32 (the same
// landmarks). The Nystrom error is the float64 fit against the exact one,
// the float32 error the float32 fit against the float64 one, each as the
// largest relative error of the leading eigenvalues and the largest
// principal angle between the projections of the subsample's cells onto
// the leading components (those up to the last relative gap of 1% in the
// exact spectrum, at most 10). The ratios float32 / Nystrom are the
// figures of merit (docs/PERFORMANCE.md, "Single precision": float32 is the
// default only if every ratio is below 0.01). With -full, the float32 error
// of the fits on all the cells as well (their projections of the same
// subsample), and both fit times.
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

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

func init() {
	register("precision", "error of the float32 pass against float64, beside the Nystrom error against the exact path (CyTOF, GvHD, toy)", runPrecision)
}

const precisionUsage = `usage: go run ./bench precision [flags]

The error of dica.Config.Precision = 32 against the float64 fit, and the
error of the Nystrom fit against the exact path on the same cells, at each
rank m, on the CyTOF, GvHD and toy data sets.`

// precisionConfig configures the precision experiment.
type precisionConfig struct {
	ms     []int
	exactN int
	data   []string
	full   bool
	seed   uint64
}

// precisionSet is one data set and the fits measured on it.
type precisionSet struct {
	name string
	ds   *dataset.Dataset
	fits []precisionFit
}

// precisionFit is one fit configuration (without rank and precision).
type precisionFit struct {
	name string
	cfg  dica.Config
}

func runPrecision(args []string) error {
	fs, o := newFlags("precision", precisionUsage)
	cfg := precisionConfig{}
	msFlag := fs.String("m", "200,500,1000", "comma-separated ranks `m`")
	fs.IntVar(&cfg.exactN, "exact-n", 3000, "cells of the subsample of the exact path")
	dataFlag := fs.String("data", "cytof,gvhd,toy", "comma-separated data sets: cytof, gvhd, toy")
	fs.BoolVar(&cfg.full, "full", true, "also measure the float32 error of fits on all the cells")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of subsamples and fits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if cfg.ms, err = parseInts(*msFlag); err != nil {
		return fmt.Errorf("-m: %w", err)
	}
	cfg.data = strings.Split(*dataFlag, ",")
	ctx := context.Background()
	rep := newReporter(os.Stdout, "precision", o)
	for _, name := range cfg.data {
		set, err := precisionData(ctx, name, cfg.seed)
		if err != nil {
			return skipNoData("precision", err)
		}
		if err := precisionRun(ctx, cfg, set, rep); err != nil {
			return err
		}
	}
	return rep.flush()
}

// precisionData loads a data set and names its fits.
func precisionData(ctx context.Context, name string, seed uint64) (*precisionSet, error) {
	base := dica.Config{Components: 10, Epsilon: 1e-4, Seed: seed}
	with := func(m dica.Method, lambda, sigma, sigmaY float64) dica.Config {
		c := base
		c.Method, c.Lambda, c.Sigma, c.SigmaY = m, lambda, sigma, sigmaY
		return c
	}
	switch name {
	case "cytof":
		ds, err := loadCytof(ctx, seq(1, cytofSamples), false)
		if err != nil {
			return nil, err
		}
		return &precisionSet{name, ds, []precisionFit{
			{"dica", with(dica.DICA, 0, 1, 0)},
			{"dica lambda=0.1", with(dica.DICA, 0.1, 1, 0)},
			{"udica", with(dica.UDICA, 0, 1, 0)},
		}}, nil
	case "gvhd":
		dir, err := dataPath("gvhd_mclust")
		if err != nil {
			return nil, err
		}
		src, err := csvio.NewSource([]string{filepath.Join(dir, "GvHD.pos.csv"), filepath.Join(dir, "GvHD.control.csv")}, csvio.Options{Header: csvio.WithHeader})
		if err != nil {
			return nil, err
		}
		ds, err := dataset.Collect(ctx, src)
		if err != nil {
			return nil, err
		}
		sigma := kernel.MedianSigma(ds.X, 0, seed)
		return &precisionSet{name, ds, []precisionFit{
			{"udica", with(dica.UDICA, 0, sigma, 0)},
			{"kpca", with(dica.KPCA, 0, sigma, 0)},
		}}, nil
	case "toy":
		ds := toy.Regression(toy.Options{Domains: 10, MeanSize: 2000, Seed: seed})
		sigma := kernel.MedianSigma(ds.X, 0, seed)
		sigmaY := kernel.MedianSigma(ds.Target, 0, seed)
		return &precisionSet{name, ds, []precisionFit{
			{"dica (targets)", with(dica.DICA, 0, sigma, sigmaY)},
			{"udica", with(dica.UDICA, 0, sigma, 0)},
		}}, nil
	}
	return nil, fmt.Errorf("-data: unknown data set %q (want cytof, gvhd or toy)", name)
}

// precisionRun measures every fit of a data set at every m.
func precisionRun(ctx context.Context, cfg precisionConfig, set *precisionSet, rep *reporter) error {
	sub := subsample(set.ds, cfg.exactN, cfg.seed+4)
	rep.note("%s: %d cells, exact path on %d", set.name, set.ds.N(), sub.N())
	for _, f := range set.fits {
		ec := f.cfg
		ec.Solver = dica.Exact
		em, err := dica.Fit(ctx, sub.Source(), ec)
		if err != nil {
			return fmt.Errorf("%s %s exact: %w", set.name, f.name, err)
		}
		ze, err := em.Transform(sub.X, dica.TransformOptions{})
		if err != nil {
			return err
		}
		k := leadingGap(em.Eigenvalues[:em.Positive], f.cfg.Components)
		for _, m := range cfg.ms {
			c64 := f.cfg
			c64.Rank = m
			c32 := c64
			c32.Precision = 32
			var ms [2]*dica.Model
			var zs [2]*mat.Dense
			for i, c := range []dica.Config{c64, c32} {
				if ms[i], err = dica.Fit(ctx, sub.Source(), c); err != nil {
					return fmt.Errorf("%s %s m=%d: %w", set.name, f.name, m, err)
				}
				if zs[i], err = ms[i].Transform(sub.X, dica.TransformOptions{}); err != nil {
					return err
				}
			}
			kk := min(k, ms[0].Positive, ms[1].Positive)
			nysEig, nysAng := modelError(em.Eigenvalues, ms[0].Eigenvalues, ze, zs[0], kk)
			f32Eig, f32Ang := modelError(ms[0].Eigenvalues, ms[1].Eigenvalues, zs[0], zs[1], kk)
			vals := obj{{"nystrom_eig_err", nysEig}, {"float32_eig_err", f32Eig}, {"eig_ratio", f32Eig / nysEig},
				{"nystrom_angle_deg", nysAng}, {"float32_angle_deg", f32Ang}, {"angle_ratio", f32Ang / nysAng}}
			if cfg.full {
				full, err := fullError(ctx, set.ds, sub, c64, c32, kk)
				if err != nil {
					return fmt.Errorf("%s %s m=%d, all cells: %w", set.name, f.name, m, err)
				}
				vals = append(vals, full...)
			}
			if err := rep.add("float32 error and Nystrom error", obj{{"data", set.name}, {"fit", f.name}, {"m", m}, {"k", kk}}, vals); err != nil {
				return err
			}
		}
	}
	return nil
}

// fullError fits c64 and c32 on all the cells of ds and returns the
// float32 error (eigenvalues and the projections of sub) and the fit
// times.
func fullError(ctx context.Context, ds, sub *dataset.Dataset, c64, c32 dica.Config, k int) (obj, error) {
	var ms [2]*dica.Model
	var zs [2]*mat.Dense
	var secs [2]float64
	for i, c := range []dica.Config{c64, c32} {
		t0 := time.Now()
		var err error
		if ms[i], err = dica.Fit(ctx, ds.Source(), c); err != nil {
			return nil, err
		}
		secs[i] = time.Since(t0).Seconds()
		if zs[i], err = ms[i].Transform(sub.X, dica.TransformOptions{}); err != nil {
			return nil, err
		}
	}
	eig, ang := modelError(ms[0].Eigenvalues, ms[1].Eigenvalues, zs[0], zs[1], min(k, ms[0].Positive, ms[1].Positive))
	return obj{{"all_cells_float32_eig_err", eig}, {"all_cells_float32_angle_deg", ang}, {"all_cells_fit64_s", secs[0]}, {"all_cells_fit32_s", secs[1]}}, nil
}

// leadingGap returns the number of leading eigenvalues, at most k, up to the
// last relative gap of 1% (vals decreasing and positive): the components
// whose subspace is well defined.
func leadingGap(vals []float64, k int) int {
	best := 1
	for j := 1; j <= min(k, len(vals)); j++ {
		if j == len(vals) || vals[j-1] > 1.01*vals[j] {
			best = j
		}
	}
	return best
}

// modelError returns the largest relative error of the first k eigenvalues
// of b against a, and the largest principal angle in degrees between the
// first k columns of the projections za and zb.
func modelError(a, b []float64, za, zb *mat.Dense, k int) (eig, angle float64) {
	for j := range k {
		eig = math.Max(eig, math.Abs(b[j]-a[j])/math.Abs(a[j]))
	}
	n, _ := za.Dims()
	return eig, largestAngle(za.Slice(0, n, 0, k).(*mat.Dense), zb.Slice(0, n, 0, k).(*mat.Dense))
}

// largestAngle returns the largest principal angle in degrees between the
// column spaces of a and b (n x k each) from its sine, the 2-norm of
// Qb - Qa Qa^T Qb with Qa and Qb orthonormal bases: accurate for small
// angles, where the arccosine of the cosines (approx.PrincipalCosines)
// cannot resolve angles below about 1e-6 degrees.
func largestAngle(a, b *mat.Dense) float64 {
	qa, qb := orthonormal(a), orthonormal(b)
	var c, r mat.Dense
	c.Mul(qa.T(), qb)
	r.Mul(qa, &c)
	r.Sub(qb, &r)
	var svd mat.SVD
	if !svd.Factorize(&r, mat.SVDNone) {
		return math.NaN()
	}
	return math.Asin(math.Min(1, svd.Values(nil)[0])) * 180 / math.Pi
}

// orthonormal returns an orthonormal basis of the columns of a (thin QR).
func orthonormal(a *mat.Dense) *mat.Dense {
	n, k := a.Dims()
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, n, 0, k))
}
