package exact_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// BenchmarkFit measures canonical DICA with the delta kernel (3 classes,
// 10 domains, 5 dimensions, 5 components): kernel matrix, centering, the
// rank-(N-1) domain update, Cholesky of the n x n denominator and the thin
// c x c eigenproblem.
func BenchmarkFit(b *testing.B) {
	for _, n := range []int{500, 1000, 2000} {
		ds := blobs(1, 10, n/10, 5, 3)
		o := exact.Options{Method: exact.DICA, Components: 5, Lambda: 1e-3, Epsilon: 1e-3, Kernel: kernel.RBF{Sigma: 2}}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := exact.Fit(context.Background(), ds, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFitTargets measures canonical DICA on the paper's toy regression
// data (10 domains, about n points, RBF output kernel with the median
// heuristic, pivoted Cholesky factor of L).
func BenchmarkFitTargets(b *testing.B) {
	for _, n := range []int{1000, 2000} {
		ds := toy.Regression(toy.Options{Domains: 10, MeanSize: float64(n / 10), Seed: 1})
		o := exact.Options{Method: exact.DICA, Components: 5, Lambda: 1e-3, Epsilon: 1e-3}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := exact.Fit(context.Background(), ds, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
