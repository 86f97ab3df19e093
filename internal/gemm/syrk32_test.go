package gemm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

// fma32Exact is x*y + z rounded once to float32, from exact arithmetic.
func fma32Exact(x, y, z float32) float32 {
	p := new(big.Float).SetPrec(400).SetFloat64(float64(x))
	p.Mul(p, new(big.Float).SetPrec(400).SetFloat64(float64(y)))
	p.Add(p, new(big.Float).SetPrec(400).SetFloat64(float64(z)))
	f, _ := p.Float32()
	return f
}

// TestFma32 checks the emulated fma32 against exact arithmetic on random
// operands of every scale (products far below, near and far above the
// addend, cancellations, subnormals) and on a case where rounding the sum
// to float64 first lands on a float32 tie and rounds the wrong way.
func TestFma32(t *testing.T) {
	// x*y = 2^-24 - 2^-70, z = 1 + 2^-23: the exact sum lies just below
	// the midpoint of 1 + 2^-23 and 1 + 2^-22; rounded to float64 first it
	// is the midpoint, which rounds to the even 1 + 2^-22.
	x := float32(math.Ldexp(1+0x1p-23, -12))
	y := float32(math.Ldexp(1-0x1p-23, -12))
	z := float32(1 + 0x1p-23)
	if naive := float32(float64(x)*float64(y) + float64(z)); naive == fma32Exact(x, y, z) {
		t.Fatal("the hard case is not hard: rounding through float64 gives the right answer")
	}
	if got, want := fma32(x, y, z), fma32Exact(x, y, z); got != want {
		t.Errorf("fma32(%v, %v, %v) = %v, want %v", x, y, z, got, want)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	r32 := func(e int) float32 {
		v := float32(math.Ldexp(rng.Float64()+0.5, e-rng.IntN(3)))
		if rng.IntN(2) == 0 {
			v = -v
		}
		return v
	}
	for i := range 200000 {
		ex, ey := rng.IntN(60)-30, rng.IntN(60)-30
		x, y := r32(ex), r32(ey)
		var z float32
		switch i % 5 {
		case 0:
			z = r32(ex + ey)
		case 1:
			z = -float32(float64(x) * float64(y)) // cancellation
		case 2:
			z = r32(ex + ey + 30) // product far below the addend
		case 3:
			z = r32(ex + ey - 30)
		default:
			z = math.Float32frombits(rng.Uint32() & 0x807fffff) // subnormal
		}
		if got, want := fma32(x, y, z), fma32Exact(x, y, z); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", x, y, z, got, want)
		}
	}
	inf := float32(math.Inf(1))
	if got := fma32(1e30, 1e30, 1); !math.IsInf(float64(got), 1) {
		t.Errorf("fma32 overflow = %v, want +Inf", got)
	}
	if got := fma32(inf, 0, 1); !math.IsNaN(float64(got)) {
		t.Errorf("fma32(Inf, 0, 1) = %v, want NaN", got)
	}
}

func randSlice32(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*rng.Float64() - 1)
	}
	return s
}

// TestKern32AsmMatchesGo: the assembly float32 micro-kernel and the
// portable one (exact fma32) give the same bits, with strided operands,
// and write nothing outside the tile.
func TestKern32AsmMatchesGo(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2+FMA: only the Go kernel is used")
	}
	rng := rand.New(rand.NewPCG(33, 34))
	for _, k := range []int{0, 1, 2, 3, 7, 128, 301} {
		for _, sa := range []int{mr, nr32} {
			a := randSlice32(rng, max(1, k*sa))
			b := randSlice32(rng, max(1, k*nr32+5))
			const ldc = nr32 + 3
			c0 := randSlice(rng, mr*ldc)
			c1, c2 := slices.Clone(c0), slices.Clone(c0)
			native.kern32(k, a, sa, b, nr32, c1, ldc)
			kern32Go(k, a, sa, b, nr32, c2, ldc)
			if !sameBits(c1, c2) {
				t.Fatalf("k=%d sa=%d: assembly and Go kernels differ", k, sa)
			}
			for i := range mr {
				for j := nr32; j < ldc; j++ {
					if c1[i*ldc+j] != c0[i*ldc+j] {
						t.Fatalf("k=%d: kernel wrote outside the tile at (%d,%d)", k, i, j)
					}
				}
			}
		}
	}
}

// TestSyrk32 checks Syrk32 against the float64 Gram sum of the same
// float32 values (within the float32 error of blocks of kc32 rows), that
// the lower triangle and the padding are untouched, that the native and
// portable kernels give the same bits, and that the sum in float64 across
// blocks keeps the error from growing with the number of rows.
func TestSyrk32(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, tc := range []struct{ r, m, padF, padC int }{
		{1, 1, 0, 0}, {3, 1, 1, 0}, {1, 3, 0, 2}, {7, 13, 3, 1}, {13, 7, 0, 0},
		{127, 23, 0, 0}, {128, 24, 1, 3}, {129, 25, 0, 5}, {300, 48, 2, 0},
		{513, 100, 0, 0}, {100, 500, 0, 1}, {2000, 61, 7, 1},
	} {
		r, m := tc.r, tc.m
		ldf, ldc := m+tc.padF, m+tc.padC
		f := randSlice32(rng, r*ldf)
		c0 := randSlice(rng, m*ldc)
		for i := range m {
			for j := range i {
				c0[i*ldc+j] = math.NaN()
			}
		}
		c := slices.Clone(c0)
		a := blas32.General{Rows: r, Cols: m, Stride: ldf, Data: f}
		Syrk32(a, upperSym(m, ldc, c))
		cg := slices.Clone(c0)
		goImpl.syrk32(a, upperSym(m, ldc, cg))
		if !sameBitsNaN(c, cg) {
			t.Errorf("r=%d m=%d: Go and native kernels differ", r, m)
		}
		// Reference: float64 sums of the products; bound: a float32 sum of
		// up to kc32 terms (kc32 u sum |a_i a_j| per block) and the float64
		// additions.
		blocks := float64((r + kc32 - 1) / kc32)
		worst := 0.0
		for i := range m {
			for j := range m {
				got := c[i*ldc+j]
				if j < i {
					if !math.IsNaN(got) {
						t.Fatalf("r=%d m=%d: lower C[%d][%d] written", r, m, i, j)
					}
					continue
				}
				want, abs := c0[i*ldc+j], 0.0
				for k := range r {
					p := float64(f[k*ldf+i]) * float64(f[k*ldf+j])
					want += p
					abs += math.Abs(p)
				}
				tol := float64(min(r, kc32))*0x1p-24*abs + (blocks+2)*0x1p-52*(abs+math.Abs(c0[i*ldc+j]))
				if math.Abs(got-want) > tol {
					t.Fatalf("r=%d m=%d: C[%d][%d] = %v, want %v (tol %.3g)", r, m, i, j, got, want, tol)
				}
				if abs > 0 {
					worst = math.Max(worst, math.Abs(got-want)/(abs*0x1p-24))
				}
			}
			for j := m; j < ldc; j++ {
				if c[i*ldc+j] != c0[i*ldc+j] {
					t.Fatalf("r=%d m=%d: padding C[%d][%d] written", r, m, i, j)
				}
			}
		}
		if r >= 2000 {
			// Summed in float32 over all 2000 rows, the error would grow
			// like sqrt(2000) u; blocks of 128 keep it near sqrt(128) u.
			t.Logf("r=%d m=%d: largest error %.2f u sum|a_i a_j|", r, m, worst)
			if worst > 4 {
				t.Errorf("r=%d m=%d: largest error %.2f u sum|a_i a_j|, want <= 4", r, m, worst)
			}
		}
	}
}

// TestAddShifted32 checks AddShifted32 against its definition, bit for
// bit, for every implementation, with and without out, in place, and for
// lengths around the 16-element blocks of the assembly; short arguments
// panic.
func TestAddShifted32(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 500, 1001} {
		src := make([]float32, n)
		shift := make([]float64, n+2)
		dst := make([]float64, n+3)
		for i := range src {
			src[i] = float32(1 + rng.Float64()*1e-3)
			shift[i] = -1 - rng.Float64()*1e-3
		}
		for i := range dst {
			dst[i] = rng.NormFloat64() * 1e-4
		}
		want, wantOut := slices.Clone(dst), make([]float32, n)
		for i, v := range src {
			s := float64(v) + shift[i]
			want[i] += s
			wantOut[i] = float32(s)
		}
		for _, im := range []impl{native, goImpl} {
			got := slices.Clone(dst)
			im.addShifted32To(got, src, shift, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("n = %d: AddShifted32 differs from its definition", n)
			}
			got = slices.Clone(dst)
			out := make([]float32, n+1)
			im.addShifted32To(got, src, shift, out)
			if !slices.Equal(got, want) || !slices.Equal(out[:n], wantOut) || out[n] != 0 {
				t.Fatalf("n = %d: AddShifted32 with out differs from its definition", n)
			}
			got = slices.Clone(dst)
			in := slices.Clone(src)
			im.addShifted32To(got, in, shift, in)
			if !slices.Equal(got, want) || !slices.Equal(in, wantOut) {
				t.Fatalf("n = %d: AddShifted32 in place differs from its definition", n)
			}
		}
	}
	for _, f := range []func(){
		func() { AddShifted32(make([]float64, 3), make([]float32, 4), make([]float64, 4), nil) },
		func() { AddShifted32(make([]float64, 4), make([]float32, 4), make([]float64, 3), nil) },
		func() { AddShifted32(make([]float64, 4), make([]float32, 4), make([]float64, 4), make([]float32, 3)) },
		func() {
			Syrk32(blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}, upperSym(4, 4, make([]float64, 16)))
		},
		func() {
			Syrk32(blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 5)}, upperSym(3, 3, make([]float64, 9)))
		},
		func() {
			Syrk32(blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}, lowerSym(3, 3, make([]float64, 9)))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic on a bad shape")
				}
			}()
			f()
		}()
	}
}
