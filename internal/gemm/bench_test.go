package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// BenchmarkSyrk measures the streaming Gram sum C += F^T F (upper) of an
// r x m block, r*m*(m+1) flops, against gonum's blas64.Syrk, and the same
// sum of float32 rows (Syrk32, gemm32).
func BenchmarkSyrk(b *testing.B) {
	for _, s := range []struct{ r, m int }{{1024, 500}, {1024, 1000}, {4096, 50}, {256, 2000}} {
		r, m := s.r, s.m
		rng := rand.New(rand.NewPCG(1, 1))
		f := randSlice(rng, r*m)
		c := make([]float64, m*m)
		flops := float64(r) * float64(m) * float64(m+1)
		b.Run(fmt.Sprintf("r=%d/m=%d/gemm", r, m), func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				Syrk(blas.Trans, general(r, m, m, f), upperSym(m, m, c))
			}
			ct.Report(b, flops)
		})
		f32 := make([]float32, len(f))
		for i, v := range f {
			f32[i] = float32(v)
		}
		b.Run(fmt.Sprintf("r=%d/m=%d/gemm32", r, m), func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				Syrk32(blas32.General{Rows: r, Cols: m, Stride: m, Data: f32}, upperSym(m, m, c))
			}
			ct.Report(b, flops)
		})
		b.Run(fmt.Sprintf("r=%d/m=%d/gonum", r, m), func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				blas64.Syrk(blas.Trans, 1, general(r, m, m, f), 1,
					blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: c})
			}
			ct.Report(b, flops)
		})
	}
}

// BenchmarkCholesky factors an n x n SPD matrix (n^3/3 flops) with 1 and
// 2 workers, against gonum's mat.Cholesky.
func BenchmarkCholesky(b *testing.B) {
	const n = 2000
	rng := rand.New(rand.NewPCG(2, 2))
	// Diagonally dominant, hence SPD, and cheap to build.
	a0 := randSlice(rng, n*n)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		a0[i*n+i] = n
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, a0[i*n+j])
		}
	}
	flops := float64(n) * float64(n) * float64(n) / 3
	a := make([]float64, n*n)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("n=%d/gemm/workers=%d", n, workers), func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				copy(a, a0)
				if _, ok := Potrf(lowerSym(n, n, a), workers); !ok {
					b.Fatal("not PD")
				}
			}
			ct.Report(b, flops)
		})
	}
	b.Run(fmt.Sprintf("n=%d/gonum", n), func(b *testing.B) {
		var chol mat.Cholesky
		ct := cputime.StartFlops()
		for b.Loop() {
			if !chol.Factorize(sym) {
				b.Fatal("not PD")
			}
		}
		ct.Report(b, flops)
	})
}

// BenchmarkCholeskyTo factors an n x n SPD mat.SymDense into a
// mat.Cholesky (n^3/3 flops, counting the copy into the factor and the
// condition estimate of SetFromU) with 2 workers, against gonum's
// mat.Cholesky.Factorize, at the orders of the solves of the package's
// callers.
func BenchmarkCholeskyTo(b *testing.B) {
	for _, n := range []int{50, 200, 500, 2000} {
		rng := rand.New(rand.NewPCG(6, uint64(n)))
		_, sym := spd(rng, n, n)
		flops := float64(n) * float64(n) * float64(n) / 3
		b.Run(fmt.Sprintf("n=%d/gemm", n), func(b *testing.B) {
			var chol mat.Cholesky
			ct := cputime.StartFlops()
			for b.Loop() {
				if !CholeskyTo(&chol, sym, 2) {
					b.Fatal("not PD")
				}
			}
			ct.Report(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/gonum", n), func(b *testing.B) {
			var chol mat.Cholesky
			ct := cputime.StartFlops()
			for b.Loop() {
				if !chol.Factorize(sym) {
					b.Fatal("not PD")
				}
			}
			ct.Report(b, flops)
		})
	}
}

// BenchmarkGemm measures a square NN product (2 n^3 flops).
func BenchmarkGemm(b *testing.B) {
	const n = 500
	rng := rand.New(rand.NewPCG(3, 3))
	x, y, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
	flops := 2 * float64(n) * float64(n) * float64(n)
	b.Run("gemm", func(b *testing.B) {
		ct := cputime.StartFlops()
		for b.Loop() {
			Gemm(blas.NoTrans, blas.NoTrans, 1, general(n, n, n, x), general(n, n, n, y), general(n, n, n, c), 1)
		}
		ct.Report(b, flops)
	})
	b.Run("gonum", func(b *testing.B) {
		ct := cputime.StartFlops()
		for b.Loop() {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(n, n, n, x), general(n, n, n, y), 1, general(n, n, n, c))
		}
		ct.Report(b, flops)
	})
}

// BenchmarkKernel measures the micro-kernel alone on L1-resident panels
// (2*4*12*256 flops per call): the ceiling of the blocked routines.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, bb, c := randSlice(rng, kc*mr), randSlice(rng, kc*nr), make([]float64, mr*nr)
	ct := cputime.StartFlops()
	for b.Loop() {
		native.kern(kc, a, mr, bb, nr, c, nr, 1)
	}
	ct.Report(b, 2*mr*nr*kc)
}

// BenchmarkTrsm solves L X = B and L^T X = B for n = 2000, 500 right-hand
// sides (n^2 nrhs flops), against gonum's blas64.Trsm.
func BenchmarkTrsm(b *testing.B) {
	const n, nrhs = 2000, 500
	rng := rand.New(rand.NewPCG(5, 5))
	l := randSlice(rng, n*n)
	for i := 0; i < n; i++ {
		l[i*n+i] = float64(n)
	}
	b0 := randSlice(rng, n*nrhs)
	x := make([]float64, n*nrhs)
	flops := float64(n) * n * nrhs
	lt := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: l}
	for _, trans := range []bool{false, true} {
		name := "LowerLeft"
		if trans {
			name = "LowerTransLeft"
		}
		b.Run(name+"/gemm", func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				copy(x, b0)
				Trsm(blas.Left, tr(trans), lt, general(n, nrhs, nrhs, x), 1)
			}
			ct.Report(b, flops)
		})
		b.Run(name+"/gonum", func(b *testing.B) {
			ct := cputime.StartFlops()
			for b.Loop() {
				copy(x, b0)
				blas64.Trsm(blas.Left, tr(trans), 1, lt, general(n, nrhs, nrhs, x))
			}
			ct.Report(b, flops)
		})
	}
}
