package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkSyrk measures the streaming Gram sum C += F^T F (upper) of an
// r x m block, r*m*(m+1) flops, against gonum's blas64.Syrk.
func BenchmarkSyrk(b *testing.B) {
	for _, s := range []struct{ r, m int }{{1024, 500}, {4096, 50}, {256, 2000}} {
		r, m := s.r, s.m
		rng := rand.New(rand.NewPCG(1, 1))
		f := randSlice(rng, r*m)
		c := make([]float64, m*m)
		flops := float64(r) * float64(m) * float64(m+1)
		b.Run(fmt.Sprintf("r=%d/m=%d/gemm", r, m), func(b *testing.B) {
			ct := startCPU()
			for b.Loop() {
				SyrkTransUpper(c, m, f, m, r, m)
			}
			ct.report(b, flops)
		})
		b.Run(fmt.Sprintf("r=%d/m=%d/gonum", r, m), func(b *testing.B) {
			ct := startCPU()
			for b.Loop() {
				blas64.Syrk(blas.Trans, 1, general(r, m, m, f), 1,
					blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: c})
			}
			ct.report(b, flops)
		})
	}
}

// BenchmarkCholesky factors an n x n SPD matrix (n^3/3 flops) with 1 and
// 2 workers, against gonum's mat.Cholesky.
func BenchmarkCholesky(b *testing.B) {
	const n = 2000
	rng := rand.New(rand.NewPCG(2, 2))
	a0, sym := spd(rng, n, n)
	flops := float64(n) * float64(n) * float64(n) / 3
	a := make([]float64, n*n)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("n=%d/gemm/workers=%d", n, workers), func(b *testing.B) {
			ct := startCPU()
			for b.Loop() {
				copy(a, a0)
				if !Cholesky(a, n, n, workers) {
					b.Fatal("not PD")
				}
			}
			ct.report(b, flops)
		})
	}
	b.Run(fmt.Sprintf("n=%d/gonum", n), func(b *testing.B) {
		var chol mat.Cholesky
		ct := startCPU()
		for b.Loop() {
			if !chol.Factorize(sym) {
				b.Fatal("not PD")
			}
		}
		ct.report(b, flops)
	})
}

// BenchmarkGemm measures a square NN product (2 n^3 flops).
func BenchmarkGemm(b *testing.B) {
	const n = 500
	rng := rand.New(rand.NewPCG(3, 3))
	x, y, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
	flops := 2 * float64(n) * float64(n) * float64(n)
	b.Run("gemm", func(b *testing.B) {
		ct := startCPU()
		for b.Loop() {
			Gemm(false, false, n, n, n, 1, x, n, y, n, c, n, 1)
		}
		ct.report(b, flops)
	})
	b.Run("gonum", func(b *testing.B) {
		ct := startCPU()
		for b.Loop() {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(n, n, n, x), general(n, n, n, y), 1, general(n, n, n, c))
		}
		ct.report(b, flops)
	})
}

// BenchmarkKernel measures the micro-kernel alone on L1-resident panels
// (2*4*12*256 flops per call): the ceiling of the blocked routines.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, bb, c := randSlice(rng, kc*mr), randSlice(rng, kc*nr), make([]float64, mr*nr)
	ct := startCPU()
	for b.Loop() {
		native.kern(kc, a, mr, bb, nr, c, nr, 1)
	}
	ct.report(b, 2*mr*nr*kc)
}
