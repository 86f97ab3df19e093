package lanczos_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/lanczos"
)

func benchMatrix(m int) *mat.SymDense {
	rng := rand.New(rand.NewPCG(1, uint64(m)))
	a := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	return a
}

// BenchmarkSym: the 10 largest eigenpairs of a random dense symmetric
// 1000 x 1000 matrix with default settings.
func BenchmarkSym(b *testing.B) {
	a := benchMatrix(1000)
	op := lanczos.Dense(a)
	b.ResetTimer()
	for b.Loop() {
		res, err := lanczos.Sym(context.Background(), op, lanczos.Settings{K: 10, Seed: 1})
		if err != nil || res.Status != lanczos.Converged {
			b.Fatal(err, res.Status)
		}
	}
}

// BenchmarkEigenSym: the dense baseline, all eigenpairs of the same matrix
// by mat.EigenSym with vectors.
func BenchmarkEigenSym(b *testing.B) {
	a := benchMatrix(1000)
	b.ResetTimer()
	for b.Loop() {
		var es mat.EigenSym
		if !es.Factorize(a, true) {
			b.Fatal("EigenSym failed")
		}
	}
}
