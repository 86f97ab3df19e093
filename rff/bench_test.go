package rff

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/randmat"
	"github.com/dicalab/dica/kernel"
)

// BenchmarkMap measures m = 500 features (250 frequencies) of 1024
// 8-dimensional points, per point.
func BenchmarkMap(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randmat.Normal(rng, 1024, 8)
	f, err := New(kernel.RBF{Sigma: 1}, 8, 500, true, 1)
	if err != nil {
		b.Fatal(err)
	}
	phi := mat.NewDense(1024, 500, nil)
	for b.Loop() {
		f.Map(phi, x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/point")
}
