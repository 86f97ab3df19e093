package randmat

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNormal(t *testing.T) {
	x := Normal(rand.New(rand.NewPCG(1, 2)), 300, 4)
	if r, c := x.Dims(); r != 300 || c != 4 {
		t.Fatalf("Dims = %d, %d, want 300, 4", r, c)
	}
	// Row by row: the values of a second draw in order.
	rng := rand.New(rand.NewPCG(1, 2))
	var sum, sq float64
	for i := range 300 {
		for j := range 4 {
			want := rng.NormFloat64()
			if v := x.At(i, j); v != want {
				t.Fatalf("At(%d, %d) = %v, want %v", i, j, v, want)
			}
			sum += want
			sq += want * want
		}
	}
	// Standard normal: the mean and variance of 1200 values.
	mean := sum / 1200
	if v := sq/1200 - mean*mean; math.Abs(mean) > 0.15 || math.Abs(v-1) > 0.15 {
		t.Errorf("mean %v, variance %v", mean, v)
	}
}
