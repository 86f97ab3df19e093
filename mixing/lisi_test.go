package mixing

import (
	"math"
	"math/rand/v2"
	"testing"
)

// calibrateBisection is the published bisection, evaluating the entropy
// at every step: the reference of calibrate.
func calibrateBisection(d, w []float64, target float64) {
	beta, lo, hi := 1.0, math.Inf(-1), math.Inf(1)
	for try := 0; ; try++ {
		h, sum := weights(d, w, beta)
		diff := h - target
		if math.Abs(diff) < lisiTol || try == lisiTries {
			for t := range w {
				w[t] /= sum
			}
			return
		}
		if diff > 0 {
			lo = beta
			if math.IsInf(hi, 1) {
				beta *= 2
			} else {
				beta = (beta + hi) / 2
			}
		} else {
			hi = beta
			if math.IsInf(lo, -1) {
				beta /= 2
			} else {
				beta = (beta + lo) / 2
			}
		}
	}
}

// TestCalibrate checks that calibrate gives the weights of the plain
// bisection bit for bit: distances of many scales, equal distances (a
// flat entropy), many ties at 0 (targets out of reach), few neighbours,
// and perplexities from 1 to more than the number of neighbours.
func TestCalibrate(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 17))
	type dist func(k int) []float64
	sorted := func(f func() float64) dist {
		return func(k int) []float64 {
			d := make([]float64, k)
			for t := 1; t < k; t++ {
				d[t] = f()
			}
			// d[0] = 0 is the nearest; the order of the others
			// does not matter to the weights.
			return d
		}
	}
	for _, c := range []struct {
		name string
		d    dist
	}{
		{"uniform", sorted(func() float64 { return rng.Float64() })},
		{"small", sorted(func() float64 { return 1e-4 * rng.Float64() })},
		{"large", sorted(func() float64 { return 1e3 * rng.ExpFloat64() })},
		{"squared", sorted(func() float64 { v := 3 * rng.Float64(); return v * v })},
		{"equal", sorted(func() float64 { return 0.7 })},
		{"ties at 0", sorted(func() float64 { return float64(rng.IntN(2)) * rng.Float64() })},
		{"two values", sorted(func() float64 { return float64(1 + rng.IntN(2)) })},
	} {
		for _, k := range []int{1, 2, 5, 29, 89} {
			for _, perp := range []float64{1, 3, 10, 30, 100} {
				for rep := range 20 {
					d := c.d(k)
					want := make([]float64, k)
					calibrateBisection(d, want, math.Log(perp))
					got := make([]float64, k)
					// From log beta 0 and from far
					// off.
					for _, u0 := range []float64{0, -30, 30} {
						u := u0
						calibrate(d, got, math.Log(perp), &u)
						for i := range want {
							if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s, k = %d, perplexity %v, draw %d, start %v: weight %d is %v, bisection %v", c.name, k, perp, rep, u0, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
