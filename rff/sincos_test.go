package rff

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSincos compares the features' sin/cos with math.Sincos: within 2.5e-16
// absolute (about 1 ulp at 1) wherever both are computed, exact where the
// fallback is used (|x| > 2^20, NaN, Inf). sincosPoly, the pure-Go
// candidate of BenchmarkSincos, is held to the same bound.
func TestSincos(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for range 50000 {
		xs = append(xs, 10*rng.NormFloat64(), 2e5*(rng.Float64()-0.5), 1e-3*rng.NormFloat64())
	}
	for k := -3000; k <= 3000; k++ {
		c := float64(k) * math.Pi / 4
		xs = append(xs, c, math.Nextafter(c, 0), math.Nextafter(c, math.Inf(1)))
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1<<20, -(1 << 20), 1<<20+1, 1e300, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324)
	for len(xs)%4 != 3 { // a ragged tail
		xs = append(xs, 1)
	}
	sin := make([]float64, len(xs))
	cos := make([]float64, len(xs))
	for _, c := range []struct {
		name string
		f    func(sin, cos, x []float64, scale float64)
	}{{"sincosScaled", sincosScaled}, {"sincosPoly", sincosPoly}} {
		c.f(sin, cos, xs, 1)
		var worst float64
		for i, x := range xs {
			ws, wc := math.Sincos(x)
			if math.IsNaN(ws) {
				if !math.IsNaN(sin[i]) || !math.IsNaN(cos[i]) {
					t.Fatalf("%s(%v) = %v, %v, want NaN", c.name, x, sin[i], cos[i])
				}
				continue
			}
			e := math.Max(math.Abs(sin[i]-ws), math.Abs(cos[i]-wc))
			if e > worst {
				worst = e
			}
			if e > 2.5e-16 {
				t.Fatalf("%s(%v) = %v, %v; math.Sincos %v, %v", c.name, x, sin[i], cos[i], ws, wc)
			}
		}
		t.Logf("%s, %d points: max absolute difference from math.Sincos %.3g", c.name, len(xs), worst)
	}
	// Scaling.
	s2 := make([]float64, 8)
	c2 := make([]float64, 8)
	sincosScaled(s2, c2, []float64{0, 1, 2, 3, 4, 5, 6, 7}, 0.5)
	for i := range 8 {
		ws, wc := math.Sincos(float64(i))
		if math.Abs(s2[i]-ws/2) > 2e-16 || math.Abs(c2[i]-wc/2) > 2e-16 {
			t.Errorf("scaled sincos(%d) = %v, %v", i, s2[i], c2[i])
		}
	}
}

// sincosPoly is the algorithm of the assembly in plain Go, one value at a
// time: j = round(x 2/pi), r = x - j pi/2 in three parts, the Cephes
// polynomials of math.Sincos for sin r and cos r, and the quadrant. It is
// the pure-Go candidate BenchmarkSincos compares the assembly with.
func sincosPoly(sin, cos, x []float64, scale float64) {
	const (
		p1 = 7.85398125648498535156e-1 * 2
		p2 = 3.77489470793079817668e-8 * 2
		p3 = 2.69515142907905952645e-15 * 2
	)
	sin, cos = sin[:len(x)], cos[:len(x)]
	for i, v := range x {
		if !(math.Abs(v) <= 1<<20) {
			s, c := math.Sincos(v)
			sin[i], cos[i] = scale*s, scale*c
			continue
		}
		j := math.RoundToEven(v * (2 / math.Pi))
		r := ((v - j*p1) - j*p2) - j*p3
		z := r * r
		s := r + r*z*((((((1.58962301576546568060e-10*z)-2.50507477628578072866e-8)*z+2.75573136213857245213e-6)*z-1.98412698295895385996e-4)*z+8.33333333332211858878e-3)*z-1.66666666666666307295e-1)
		c := 1.0 - 0.5*z + z*z*((((((-1.13585365213876817300e-11*z)+2.08757008419747316778e-9)*z-2.75573141792967388112e-7)*z+2.48015872888517045348e-5)*z-1.38888888888730564116e-3)*z+4.16666666666665929218e-2)
		q := int64(j) & 3
		if q&1 != 0 {
			s, c = c, s
		}
		if q == 1 || q == 2 {
			c = -c
		}
		if q >= 2 {
			s = -s
		}
		sin[i], cos[i] = scale*s, scale*c
	}
}

// BenchmarkSincos: the sines and cosines of m/2 = 250 projections (the
// features of one point at m = 500), by the package's sincosScaled
// (assembly with AVX2 and FMA), by math.Sincos, and by sincosPoly.
func BenchmarkSincos(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 250)
	for i := range x {
		x[i] = 3 * rng.NormFloat64()
	}
	sin := make([]float64, len(x))
	cos := make([]float64, len(x))
	for _, c := range []struct {
		name string
		f    func(sin, cos, x []float64, scale float64)
	}{{"sincosScaled", sincosScaled}, {"math.Sincos", sincosScalar}, {"sincosPoly", sincosPoly}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f(sin, cos, x, 0.1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
		})
	}
}
