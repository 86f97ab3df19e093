package kernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// exp is the scalar exponential of the package, one value at a time.
func exp(x float64) float64 {
	v := [1]float64{x}
	expScale(v[:], 1)
	return v[0]
}

// ulpDiff returns the distance in units in the last place between a and b
// (finite, same sign).
func ulpDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

func TestExpTable(t *testing.T) {
	// expTab[j] = 2^(j/64) as hi + lo, checked with 200-bit arithmetic.
	const prec = 200
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range 6 {
		root.Sqrt(root)
	}
	v := new(big.Float).SetPrec(prec).SetInt64(1)
	for j := range expN {
		sum := new(big.Float).SetPrec(prec).SetFloat64(expTab[j][0])
		sum.Add(sum, new(big.Float).SetPrec(prec).SetFloat64(expTab[j][1]))
		diff := new(big.Float).SetPrec(prec).Sub(sum, v)
		d, _ := diff.Float64()
		if math.Abs(d) > 1e-32 {
			t.Errorf("expTab[%d] off by %g", j, d)
		}
		if hi, _ := v.Float64(); hi != expTab[j][0] {
			t.Errorf("expTab[%d] hi = %v, want %v", j, expTab[j][0], hi)
		}
		v.Mul(v, root)
	}
}

func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var xs []float64
	// Dense grid over the whole useful range, including the fast-path
	// boundaries and the subnormal range.
	for x := -750.0; x <= 710; x += 0.0137 {
		xs = append(xs, x)
	}
	for range 200000 {
		xs = append(xs, -745*rng.Float64(), 700*rng.Float64(), 1e-3*rng.NormFloat64())
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1e-300, -1e-300, 5e-324, expFastLo, expFastHi,
		math.Nextafter(expFastLo, 0), math.Nextafter(expFastLo, -1000),
		math.Nextafter(expFastHi, 0), math.Nextafter(expFastHi, 1000), -745.1332191019412, -745.14, 709.78, 709.79,
		math.Inf(-1), math.Inf(1), math.NaN())
	// Points next to the table nodes and the rounding boundaries k +- 1/2.
	for k := -65000; k <= 65000; k += 7 {
		c := float64(k) * math.Ln2 / expN
		xs = append(xs, c, math.Nextafter(c, 0), c+math.Ln2/(2*expN), c-math.Ln2/(2*expN))
	}
	vec := make([]float64, len(xs))
	ExpSlice(vec, xs)
	for _, f := range []struct {
		name string
		f    func(i int, x float64) float64
	}{
		{"scalar", func(_ int, x float64) float64 { return exp(x) }},
		{"ExpSlice", func(i int, _ float64) float64 { return vec[i] }},
	} {
		checkExp(t, f.name, xs, f.f)
	}
}

func checkExp(t *testing.T, name string, xs []float64, f func(i int, x float64) float64) {
	var maxRel, maxULP float64
	var worst float64
	for i, x := range xs {
		got, want := f(i, x), math.Exp(x)
		switch {
		case math.IsNaN(want):
			if !math.IsNaN(got) {
				t.Fatalf("%s: exp(%v) = %v, want NaN", name, x, got)
			}
			continue
		case want == 0 || math.IsInf(want, 0) || want < 0x1p-1022:
			// Zero, infinite and subnormal results come from math.Exp or
			// are exactly 0 below the underflow threshold.
			if got != want {
				t.Fatalf("%s: exp(%v) = %v, want %v", name, x, got, want)
			}
			continue
		}
		rel := math.Abs(got-want) / want
		if rel > maxRel {
			maxRel, worst = rel, x
		}
		maxULP = math.Max(maxULP, ulpDiff(got, want))
	}
	t.Logf("%s, %d points: max relative error vs math.Exp %.3g (at %v), max %.2f ulp", name, len(xs), maxRel, worst, maxULP)
	// math.Exp is itself within 1 ulp, so 2 ulp (4.4e-16) bounds the
	// difference.
	if maxRel > 4.5e-16 || maxULP > 2 {
		t.Errorf("%s: max relative error %.3g (%.2f ulp) at x = %v, want <= 4.5e-16 and <= 2 ulp", name, maxRel, maxULP, worst)
	}
}

func TestExpSlice(t *testing.T) {
	src := []float64{-1000, -745.2, -720, -1, 0, 1, 700, 710, math.NaN()}
	dst := make([]float64, len(src))
	ExpSlice(dst, src)
	for i, x := range src {
		w := math.Exp(x)
		if !(dst[i] == w || math.Abs(dst[i]-w) <= 4.5e-16*w || math.IsNaN(w) && math.IsNaN(dst[i])) {
			t.Errorf("ExpSlice: exp(%v) = %v, want %v", x, dst[i], w)
		}
	}
	// In place.
	v := []float64{0, 1}
	ExpSlice(v, v)
	if v[0] != 1 || math.Abs(v[1]-math.E) > 4.5e-16*math.E {
		t.Errorf("in place: %v", v)
	}
}

func BenchmarkExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := make([]float64, 4096)
	for i := range src {
		src[i] = -20 * rng.Float64()
	}
	dst := make([]float64, len(src))
	b.Run("ExpSlice", func(b *testing.B) {
		c := cputime.StartThread()
		for b.Loop() {
			ExpSlice(dst, src)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/exp")
		c.Report(b, len(src), "exp")
	})
	src32, dst32 := make([]float32, len(src)), make([]float32, len(src))
	for i, v := range src {
		src32[i] = float32(v)
	}
	b.Run("float32", func(b *testing.B) {
		c := cputime.StartThread()
		for b.Loop() {
			expSlice32(dst32, src32)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/exp")
		c.Report(b, len(src), "exp")
	})
	b.Run("scalar", func(b *testing.B) {
		c := cputime.StartThread()
		for b.Loop() {
			expScalar(dst, src)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/exp")
		c.Report(b, len(src), "exp")
	})
	b.Run("math.Exp", func(b *testing.B) {
		c := cputime.StartThread()
		for b.Loop() {
			for i, x := range src {
				dst[i] = math.Exp(x)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/exp")
		c.Report(b, len(src), "exp")
	})
}

// bigExp returns exp(x) correctly rounded to float64 (for normal results),
// from 256-bit arithmetic: ln 2 from sum_k 1/(k 2^k), exp(x) = 2^k e^r with
// e^r a Taylor series.
func bigExp(x float64, ln2 *big.Float) float64 {
	const prec = 256
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(bx, ln2)
	qf, _ := q.Float64()
	k := math.Round(qf)
	r := new(big.Float).SetPrec(prec).Sub(bx, new(big.Float).SetPrec(prec).Mul(ln2, big.NewFloat(k)))
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := 1; n < 60; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(n)))
		sum.Add(sum, term)
	}
	sum.SetMantExp(sum, int(k))
	f, _ := sum.Float64()
	return f
}

func bigLn2() *big.Float {
	const prec = 256
	s := new(big.Float).SetPrec(prec)
	for k := 1; k < 300; k++ {
		t := new(big.Float).SetPrec(prec).SetInt64(1)
		t.SetMantExp(t, -k)
		t.Quo(t, new(big.Float).SetPrec(prec).SetInt64(int64(k)))
		s.Add(s, t)
	}
	return s
}

// TestExpCorrectlyRounded measures the error against a correctly rounded
// reference: both exps are within 1 ulp (math.Exp's error is reported too).
func TestExpCorrectlyRounded(t *testing.T) {
	ln2 := bigLn2()
	rng := rand.New(rand.NewPCG(13, 14))
	xs := make([]float64, 3000)
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = -707 * rng.Float64()
		case 1:
			xs[i] = 709 * rng.Float64()
		default:
			xs[i] = -5 * rng.Float64()
		}
	}
	vec := make([]float64, len(xs))
	ExpSlice(vec, xs)
	var worstS, worstV, worstM float64
	for i, x := range xs {
		want := bigExp(x, ln2)
		worstS = math.Max(worstS, ulpDiff(exp(x), want))
		worstV = math.Max(worstV, ulpDiff(vec[i], want))
		worstM = math.Max(worstM, ulpDiff(math.Exp(x), want))
	}
	t.Logf("max error in ulp vs correctly rounded: scalar %.0f, ExpSlice %.0f, math.Exp %.0f", worstS, worstV, worstM)
	if worstS > 1 || worstV > 1 {
		t.Errorf("scalar exp %g ulp, ExpSlice %g ulp, want <= 1", worstS, worstV)
	}
}
