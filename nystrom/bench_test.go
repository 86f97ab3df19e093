package nystrom

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/randmat"
	"github.com/dicalab/dica/kernel"
)

// BenchmarkMapRaw measures the kernel rows k_m(x) for a block of 1024
// 8-dimensional points and m = 500 landmarks (the per-point cost of a fit),
// and the full features T^T k_m(x) (the transform), per point.
func BenchmarkMapRaw(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randmat.Normal(rng, 1024, 8)
	z, _ := Uniform(randmat.Normal(rng, 5000, 8), 500, 1)
	m, err := New(kernel.RBF{Sigma: 1}, z, 0)
	if err != nil {
		b.Fatal(err)
	}
	raw := mat.NewDense(1024, m.RawDim(), nil)
	phi := mat.NewDense(1024, m.Dim(), nil)
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			m.MapRaw(raw, x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/point")
	})
	b.Run("features", func(b *testing.B) {
		for b.Loop() {
			m.Map(phi, x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/point")
	})
}

// BenchmarkNew measures New on each of its paths: the eigendecomposition
// of K_mm (m <= EigenMax), the plain blocked Cholesky factorization of a
// well-conditioned K_mm, and the pivoted one (every landmark given twice,
// so that K_mm is singular).
func BenchmarkNew(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := randmat.Normal(rng, 500, 8)
	twice := mat.NewDense(1000, 8, nil)
	for i := range 1000 {
		twice.SetRow(i, z.RawRowView(i%500))
	}
	for _, c := range []struct {
		name string
		z    *mat.Dense
	}{
		{"eigen/m=256", z.Slice(0, EigenMax, 0, 8).(*mat.Dense)},
		{"cholesky/m=500", z},
		{"pivoted/m=1000", twice},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := New(kernel.RBF{Sigma: 1}, c.z, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
