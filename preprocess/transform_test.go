package preprocess

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// transformInputs returns values of every class the two transforms meet:
// zeros of both signs, subnormals, the thresholds of every branch of
// math.Log1p and math.Asinh and their neighbours, integers 2^k - 1 (where
// 1 + |x| is a power of two), values whose 1 + |x| lies within a few ulp
// below a power of two (the reduction's corner), 2^53 and beyond, huge
// values, NaN and infinities, random values over every binade of both
// signs, and cytometry-like intensities (log-normal, and integers).
func transformInputs() []float64 {
	rng := rand.New(rand.NewPCG(41, 42))
	var xs []float64
	add := func(v float64) {
		xs = append(xs, v, -v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)), -math.Nextafter(v, math.Inf(1)))
	}
	for _, v := range []float64{0, 5e-324, 2.2250738585072014e-308, 0x1p-1022, 0x1p-60, 0x1p-54, 0x1p-29, 0x1p-28,
		4.142135623730950488017e-01, -2.928932188134524755992e-01, 0.75, 1, 2, 3, 0x1p28, 0x1p29, 0x1p52, 0x1p53, 0x1p60,
		1e300, math.MaxFloat64, math.Sqrt2 - 1, math.Sqrt2, math.Sqrt2/2 - 1} {
		add(v)
	}
	for k := 1; k < 64; k++ {
		p := math.Ldexp(1, k)
		add(p - 1)
		for j := 1; j <= 6; j++ {
			// 1 + x just below 2^k: the mantissa of u within j ulp of 2^52.
			add(math.Ldexp(2-float64(j)*0x1p-52, k-1) - 1)
		}
	}
	for e := -1074; e <= 1023; e++ {
		for range 8 {
			xs = append(xs, math.Ldexp(1+rng.Float64(), e)*float64(1-2*rng.IntN(2)))
		}
	}
	for range 200000 {
		xs = append(xs, math.Exp(rng.NormFloat64()*3), float64(rng.IntN(5000)), 4*rng.NormFloat64())
	}
	xs = append(xs, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1))
	return xs
}

// sameValue reports whether a and b are the same float64 (both NaN counts),
// or, when the standard library was compiled with fused multiply-adds,
// within 1 ulp.
func sameValue(a, b float64) bool {
	if math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if !goFusesFMA || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return math.Abs(a-b) <= math.Abs(math.Nextafter(b, math.Inf(1))-b)
}

// TestVectorTransforms checks the block transforms against math.Log1p and
// math.Asinh value by value: bit-identical (0 ulp; 1 ulp when the standard
// library is built with GOAMD64=v3, which fuses its multiply-adds), with
// each value in each of the 4 lanes of a vector block (the input shifted
// by 0 to 3 positions), and checks that the vector code did the work for
// ordinary values.
func TestVectorTransforms(t *testing.T) {
	xs := transformInputs()
	for shift := range 4 {
		in := append(make([]float64, shift), xs...)
		got := slices.Clone(in)
		log1pAbsSlice(got)
		for i, v := range in {
			if want := math.Log1p(math.Abs(v)); !sameValue(got[i], want) {
				t.Fatalf("log1p(|%v|) (bits %#x) = %v, math.Log1p: %v", v, math.Float64bits(v), got[i], want)
			}
		}
		for _, cof := range []float64{1, 5, 150, 0.3} {
			inv := 1 / cof
			got := slices.Clone(in)
			asinhSlice(got, inv)
			for i, v := range in {
				if want := math.Asinh(v * inv); !sameValue(got[i], want) {
					t.Fatalf("asinh(%v * %v) (bits %#x) = %v, math.Asinh: %v", v, inv, math.Float64bits(v), got[i], want)
				}
			}
		}
	}
	if hasVector {
		rng := rand.New(rand.NewPCG(43, 44))
		v := make([]float64, 4096)
		for i := range v {
			v[i] = math.Exp(3 * rng.NormFloat64())
		}
		if n := log1pAbsAVX2(slices.Clone(v)); n < len(v)-16 {
			t.Errorf("the vector log1p did %d of %d ordinary values", n, len(v))
		}
		if n := asinhAVX2(slices.Clone(v), 0.2); n < len(v)-16 {
			t.Errorf("the vector asinh did %d of %d ordinary values", n, len(v))
		}
		// The branches the vector code replays: 1 + |x| a power of two,
		// |x| below 2^-29 and zeros, asinh's tiny, middle and large
		// arguments with both signs.
		if n := log1pAbsAVX2([]float64{1, 3, -7, 1023, 0, -1e-300, 1e-10, 0.3}); n != 8 {
			t.Errorf("the vector log1p did %d of 8 values of its replayed branches", n)
		}
		if n := asinhAVX2([]float64{0, -1e-10, 0.75, -1.5, 2, 3, -1e6, 0x1p28}, 1); n != 8 {
			t.Errorf("the vector asinh did %d of 8 values of its replayed branches", n)
		}
	}
}

// TestChannelsVector: Channels.Apply on blocks, with all columns, with
// chosen columns (gathered in batches, more rows than a batch holds), with
// a column chosen twice (transformed twice), and with more chosen columns
// than the gather buffer, gives the values of its scalar definition bit
// for bit: math.Log1p(math.Abs(v)), and math.Asinh(v * (1/C)) (the
// reciprocal of the cofactor, once, as Apply has always computed it).
func TestChannelsVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	const n, d = 301, 9
	x := make([]float64, n*d)
	for i := range x {
		x[i] = 100 * rng.NormFloat64()
	}
	wide := make([]int, 300)
	for i := range wide {
		wide[i] = i
	}
	for _, f := range []Func{Log1pAbs{}, Asinh{Cofactor: 5}, Asinh{Cofactor: 150}} {
		eval := f.Eval
		if a, ok := f.(Asinh); ok {
			inv := 1 / a.Cofactor
			eval = func(v float64) float64 { return math.Asinh(v * inv) }
		}
		for _, cols := range [][]int{nil, {0, 3, 8}, {2}, {4, 4}, {}} {
			got := slices.Clone(x)
			Channels{F: f, Cols: cols}.Apply(got, d)
			want := slices.Clone(x)
			for r := range n {
				row := want[r*d : (r+1)*d]
				if cols == nil {
					for j := range row {
						row[j] = eval(row[j])
					}
				}
				for _, j := range cols {
					row[j] = eval(row[j])
				}
			}
			for i := range got {
				if !sameValue(got[i], want[i]) {
					t.Fatalf("%v cols %v: value %d = %v, want %v", f, cols, i, got[i], want[i])
				}
			}
		}
		got := make([]float64, 2*300)
		for i := range got {
			got[i] = float64(i) - 250
		}
		want := slices.Clone(got)
		Channels{F: f, Cols: wide}.Apply(got, 300)
		for i, v := range want {
			if w := eval(v); !sameValue(got[i], w) {
				t.Fatalf("%v, 300 columns: value %d = %v, want %v", f, i, got[i], w)
			}
		}
	}
}

// BenchmarkTransforms measures log(1+|x|) and asinh(x/5) per value (wall
// and thread CPU time) on a block of 1024 rows of 8 cytometry-like
// intensities: Channels.Apply (the vector code), Channels.Apply on 2 of
// the 8 columns (gathered), and the scalar loop of the math functions.
func BenchmarkTransforms(b *testing.B) {
	rng := rand.New(rand.NewPCG(47, 48))
	const n, d = 1024, 8
	src := make([]float64, n*d)
	for i := range src {
		src[i] = math.Exp(2 + 2*rng.NormFloat64())
	}
	x := make([]float64, len(src))
	for _, f := range []Func{Log1pAbs{}, Asinh{Cofactor: 5}} {
		name := f.String()
		b.Run(name+"/Apply", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				copy(x, src)
				Channels{F: f}.Apply(x, d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
			c.Report(b, len(x), "value")
		})
		b.Run(name+"/Apply-2-cols", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				copy(x, src)
				Channels{F: f, Cols: []int{1, 5}}.Apply(x, d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*2), "ns/value")
			c.Report(b, n*2, "value")
		})
		b.Run(name+"/math", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				copy(x, src)
				for i, v := range x {
					x[i] = f.Eval(v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
			c.Report(b, len(x), "value")
		})
	}
}
