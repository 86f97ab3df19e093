package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// syrkFMARef is the arithmetic of Syrk written as a plain loop: per block
// of kc rows, acc = fma(A[k][i], A[k][j], acc) from zero in increasing k,
// then C[i][j] += acc.
func syrkFMARef(c []float64, ldc int, a []float64, lda, r, n int) {
	for p0 := 0; p0 < r; p0 += kc {
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var acc float64
				for k := p0; k < min(r, p0+kc); k++ {
					acc = math.FMA(a[k*lda+i], a[k*lda+j], acc)
				}
				c[i*ldc+j] += acc
			}
		}
	}
}

// TestSyrkPadded checks SyrkPadded bit for bit against Syrk on the same
// rows (native kernel) and against the plain FMA loop (portable kernel),
// with NaN in every padding value and scratch element to show that they
// do not reach the result.
func TestSyrkPadded(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 11, 12, 13, 24, 25, 40} {
		for _, r := range []int{0, 1, 3, 31, 256, 257, 600} {
			ld := SyrkPad(n)
			a := make([]float64, r*n)
			for i := range a {
				a[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
			f := make([]float64, r*ld)
			for k := range r {
				copy(f[k*ld:k*ld+n], a[k*n:(k+1)*n])
				for j := n; j < ld; j++ {
					f[k*ld+j] = math.NaN()
				}
			}
			c0 := make([]float64, n*n)
			for i := range c0 {
				c0[i] = rng.NormFloat64()
			}
			want := append([]float64(nil), c0...)
			Syrk(tr(true), general(r, n, n, a), upperSym(n, n, want))
			ref := append([]float64(nil), c0...)
			syrkFMARef(ref, n, a, n, r, n)

			for _, im := range []struct {
				name string
				impl impl
				want []float64
			}{{"native", native, want}, {"go", goImpl, ref}} {
				s := make([]float64, SyrkPaddedLen(n))
				for i := range s {
					s[i] = math.NaN()
				}
				for i := range n {
					copy(s[i*ld+i:i*ld+n], c0[i*n+i:i*n+n])
				}
				im.impl.syrkPadded(s, f, r, n)
				for i := range n {
					for j := i; j < n; j++ {
						got, w := s[i*ld+j], im.want[i*n+j]
						if math.Float64bits(got) != math.Float64bits(w) {
							t.Fatalf("%s n=%d r=%d: C[%d][%d] = %v, want %v", im.name, n, r, i, j, got, w)
						}
					}
				}
			}
		}
	}
}

// TestSyrkPaddedShort checks the panics on short operands.
func TestSyrkPaddedShort(t *testing.T) {
	for _, tc := range []struct {
		name string
		s, f []float64
		r, n int
	}{
		{"f", make([]float64, SyrkPaddedLen(5)), make([]float64, 3*12-1), 3, 5},
		{"s", make([]float64, SyrkPaddedLen(5)-1), make([]float64, 3*12), 3, 5},
		{"r", make([]float64, SyrkPaddedLen(5)), nil, -1, 5},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			SyrkPadded(tc.s, tc.f, tc.r, tc.n)
		}()
	}
}
