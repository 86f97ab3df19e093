package dica

import (
	"context"
	"testing"

	"github.com/dicalab/dica/dataset"
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
