package rff

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSincos compares the features' sin/cos with math.Sincos: within 2.5e-16
// absolute (about 1 ulp at 1) wherever both are computed, exact where the
// fallback is used (|x| > 2^20, NaN, Inf).
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
	sincosScaled(sin, cos, xs, 1)
	var worst float64
	for i, x := range xs {
		ws, wc := math.Sincos(x)
		if math.IsNaN(ws) {
			if !math.IsNaN(sin[i]) || !math.IsNaN(cos[i]) {
				t.Fatalf("sincos(%v) = %v, %v, want NaN", x, sin[i], cos[i])
			}
			continue
		}
		e := math.Max(math.Abs(sin[i]-ws), math.Abs(cos[i]-wc))
		if e > worst {
			worst = e
		}
		if e > 2.5e-16 {
			t.Fatalf("sincos(%v) = %v, %v; math.Sincos %v, %v", x, sin[i], cos[i], ws, wc)
		}
	}
	t.Logf("%d points: max absolute difference from math.Sincos %.3g", len(xs), worst)
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
