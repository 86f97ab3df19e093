package eval

import (
	"context"
	"testing"

	"github.com/dicalab/dica/toy"
)

// BenchmarkRun evaluates DICA with a 2 x 2 grid (4 inner folds) on toy data
// of 8 domains of about 5000 cells: 4 training and 4 test domains.
func BenchmarkRun(b *testing.B) {
	ds := toy.Classification(toy.Options{Domains: 8, MeanSize: 5000, Classes: 3, Seed: 1})
	o := Options{Methods: []string{"dica"}, Rank: 100, Seed: 1, Grid: Grid{Sigma: []float64{1, 2}, Lambda: []float64{0, 0.1}}}
	b.ResetTimer()
	for range b.N {
		if _, err := Run(context.Background(), ds, []int{0, 1, 2, 3}, []int{4, 5, 6, 7}, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ds.N()), "cells")
}
