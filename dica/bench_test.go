package dica

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/cputime"
	"github.com/dicalab/dica/svm"
	"github.com/dicalab/dica/toy"
)

func benchData(b *testing.B, n int) *dataset.Dataset {
	b.Helper()
	return toy.Classification(toy.Options{Domains: 16, MeanSize: float64(n) / 16, Dim: 8, Classes: 4, Seed: 1})
}

// BenchmarkFit measures a whole low-rank fit (sampling pass, statistics,
// solve) of supervised DICA and of UDICA (with the Gram sum) at m = 500 on
// 100,000 cells, at Precision 64 and 32 (sigma = 1: a well-conditioned
// map, so the pass runs in float32); it reports cells/s.
func BenchmarkFit(b *testing.B) {
	for _, bc := range []struct {
		name      string
		method    Method
		precision int
	}{{"dica", DICA, 64}, {"udica", UDICA, 64}, {"dica/precision=32", DICA, 32}, {"udica/precision=32", UDICA, 32}} {
		b.Run(bc.name, func(b *testing.B) {
			ds := benchData(b, 100000)
			cfg := Config{Method: bc.method, Rank: 500, Sigma: 1, Seed: 1, Precision: bc.precision}
			if p, err := NewPlan(context.Background(), ds.Source(), cfg); err != nil || p.SinglePrecision() != (bc.precision == 32) {
				b.Fatalf("plan: %v; single precision %v", err, p.SinglePrecision())
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Fit(context.Background(), ds.Source(), cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(ds.N()*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}

// BenchmarkTransform measures Model.Transform at m = 500 (target: >= 500,000
// cells/s on 2 cores).
func BenchmarkTransform(b *testing.B) {
	ds := benchData(b, 100000)
	m, err := Fit(context.Background(), ds.Source(), Config{Method: DICA, Rank: 500, Sigma: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Transform(ds.X, TransformOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ds.N()*b.N)/b.Elapsed().Seconds(), "cells/s")
}

// BenchmarkPredictStream measures PredictStream of a rank-500 DICA model
// carrying a 4-population linear SVM on 8-channel cells, 250,000 and
// 1,000,000 of them, from memory (target: >= 1,000,000 cells/s on 2
// cores; cells/2cpu-s is the rate two fully available cores give, for
// shared machines); its bytes and allocations per pass stay those of one
// block whatever the number of cells.
func BenchmarkPredictStream(b *testing.B) {
	ctx := context.Background()
	fitSet := toy.Classification(toy.Options{Domains: 16, MeanSize: 1250, Dim: 8, Classes: 4, Seed: 1})
	m, err := Fit(ctx, fitSet.Source(), Config{Method: DICA, Rank: 500, Sigma: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	z, err := m.Transform(fitSet.X, TransformOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sc, err := svm.Standardize(z)
	if err != nil {
		b.Fatal(err)
	}
	zs, err := sc.Apply(z)
	if err != nil {
		b.Fatal(err)
	}
	sv, err := svm.Train(ctx, zs, fitSet.Label, 4, svm.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	cl := &classify.Model{Kind: classify.SVM, Mean: sc.Mean, Scale: sc.SD, Classes: fitSet.ClassNames,
		W: sv.W, Intercept: sv.Intercept, InvTemperature: 1}
	if err := m.SetClassifier(cl); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{250000, 1000000} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			ds := toy.Classification(toy.Options{Domains: 16, MeanSize: float64(n) / 16, Dim: 8, Classes: 4, Seed: 2})
			src := ds.Source()
			b.ReportAllocs()
			b.ResetTimer()
			var cells int
			cpu0 := cputime.Process()
			for b.Loop() {
				err := m.PredictStream(ctx, src, PredictOptions{}, func(bl *dataset.Block, _ *mat.Dense, p *classify.Prediction, _, _ []string) error {
					cells += p.Rows
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cells)/b.Elapsed().Seconds(), "cells/s")
			// On a shared machine: cells per second of the process's CPU
			// time on both cores (twice the cells per CPU second).
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(2*float64(cells)/cpu.Seconds(), "cells/2cpu-s")
			}
		})
	}
}

// BenchmarkCongruence measures T^T G T of Stats.features (m x m, 4 m^3
// flops) by internal/gemm on all cores, against gonum's products (Dsymm,
// then Dgemm), which it replaced; it reports GFLOP/s of wall time.
func BenchmarkCongruence(b *testing.B) {
	for _, m := range []int{1000, 2000} {
		t := mat.NewDense(m, m, nil)
		g := mat.NewSymDense(m, nil)
		for i := range m {
			for j := range m {
				t.Set(i, j, math.Sin(float64(i*m+j)))
			}
			for j := i; j < m; j++ {
				g.SetSym(i, j, math.Cos(float64(i+2*j)))
			}
		}
		flops := 4 * float64(m) * float64(m) * float64(m)
		b.Run(fmt.Sprintf("m=%d/gemm", m), func(b *testing.B) {
			for b.Loop() {
				congruence(t, g, runtime.GOMAXPROCS(0))
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("m=%d/gonum", m), func(b *testing.B) {
			for b.Loop() {
				var tg, full mat.Dense
				tg.Mul(t.T(), g)
				full.Mul(&tg, t)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkProjector measures the projection of 20,000 cells by the 12
// models of one Family (KPCA, UDICA, COIR and DICA at lambda 0, 0.1 and
// 1, k = 10 clamped to 3 for the supervised methods: 78 columns, as in
// dica eval's inner grid at m = 200) in chunks of rows, on one goroutine,
// into outputs allocated beforehand: each chunk's raw features
// (Plan.MapRaw) and their projection (Projector.Project), reported in
// cells/s; and the projection alone of features computed beforehand,
// reported in GFLOP/s of the product.
func BenchmarkProjector(b *testing.B) {
	ds := benchData(b, 20000)
	var cfgs []Config
	for _, m := range []Method{KPCA, UDICA, COIR, DICA} {
		for _, l := range []float64{0, 0.1, 1} {
			cfgs = append(cfgs, Config{Method: m, Lambda: l, Components: 10, Rank: 200, Sigma: 2, Seed: 1})
		}
	}
	fam, err := NewFamily(context.Background(), ds.Source(), cfgs...)
	if err != nil {
		b.Fatal(err)
	}
	var models []*Model
	cols := 0
	for _, c := range cfgs {
		m, err := fam.Solve(c)
		if err != nil {
			b.Fatal(err)
		}
		models = append(models, m)
		cols += m.Components()
	}
	pr, err := NewProjector(models...)
	if err != nil {
		b.Fatal(err)
	}
	n, d := ds.X.Dims()
	raw := fam.Plan().RawDim()
	out := make([]*mat.Dense, len(models))
	for i, m := range models {
		out[i] = mat.NewDense(n, m.Components(), nil)
	}
	dst := make([]*mat.Dense, len(models))
	// project projects rows lo..hi-1 given by their features f.
	project := func(f *mat.Dense, lo, hi int) {
		for i, m := range models {
			dst[i] = out[i].Slice(lo, hi, 0, m.Components()).(*mat.Dense)
		}
		if err := pr.Project(dst, f); err != nil {
			b.Fatal(err)
		}
	}
	for _, chunk := range []int{256, 4096} {
		b.Run(fmt.Sprintf("cols=%d/chunk=%d", cols, chunk), func(b *testing.B) {
			var f mat.Dense
			for b.Loop() {
				for lo := 0; lo < n; lo += chunk {
					hi := min(lo+chunk, n)
					f.ReuseAs(hi-lo, raw)
					if err := fam.Plan().MapRaw(&f, ds.X.Slice(lo, hi, 0, d).(*mat.Dense)); err != nil {
						b.Fatal(err)
					}
					project(&f, lo, hi)
					f.Reset()
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
	var all mat.Dense
	all.ReuseAs(n, raw)
	if err := fam.Plan().MapRaw(&all, ds.X); err != nil {
		b.Fatal(err)
	}
	for _, chunk := range []int{256, 4096} {
		b.Run(fmt.Sprintf("product/cols=%d/chunk=%d", cols, chunk), func(b *testing.B) {
			for b.Loop() {
				for lo := 0; lo < n; lo += chunk {
					hi := min(lo+chunk, n)
					project(all.Slice(lo, hi, 0, raw).(*mat.Dense), lo, hi)
				}
			}
			b.ReportMetric(2*float64(n)*float64(cols)*float64(raw)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkFamilyGrid measures one task of the eval grid (package eval):
// a Family of KPCA, UDICA, COIR and DICA at lambda 0, 0.1 and 1 with
// 10 components, Nystrom m = 200, on 20,000 cells of 8 dimensions in 8
// domains, with the raw features kept (NewFamilyFeatures); "pass" is the
// family's passes, "solve" its 12 solves. One goroutine, so that
// cpu-ms/op is the work, whatever else the machine runs.
func BenchmarkFamilyGrid(b *testing.B) {
	ds := toy.Classification(toy.Options{Domains: 8, MeanSize: 2500, Dim: 8, Classes: 4, Seed: 1})
	var cfgs []Config
	for _, m := range []Method{KPCA, UDICA, COIR, DICA} {
		for _, l := range []float64{0, 0.1, 1} {
			cfgs = append(cfgs, Config{Method: m, Lambda: l, Components: 10, Rank: 200, Sigma: 1, Seed: 1, Workers: 1})
		}
	}
	ctx := context.Background()
	cpuPerOp := func(b *testing.B, cpu0 time.Duration) {
		b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	}
	b.Run("pass", func(b *testing.B) {
		cpu0 := cputime.Process()
		for b.Loop() {
			if _, err := NewFamilyFeatures(ctx, ds.Source(), cfgs...); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, cpu0)
	})
	b.Run("solve", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			f, err := NewFamilyFeatures(ctx, ds.Source(), cfgs...)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			c := cputime.Process()
			for _, cfg := range cfgs {
				if _, err := f.Solve(cfg); err != nil {
					b.Fatal(err)
				}
			}
			cpu += cputime.Process() - c
		}
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	})
}
