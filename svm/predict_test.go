package svm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomModel returns a model of nc classes on d features with random
// weights and intercepts; class absent (if in range) has intercept -Inf,
// and class tie (if in range) the weights and intercept of class tie-1.
func randomModel(rng *rand.Rand, nc, d, absent, tie int) *Model {
	m := &Model{NClass: nc, Dim: d, W: mat.NewDense(nc, d, nil), Intercept: make([]float64, nc)}
	for k := range nc {
		for j := range d {
			m.W.Set(k, j, rng.NormFloat64())
		}
		m.Intercept[k] = rng.NormFloat64()
	}
	if tie > 0 && tie < nc {
		m.W.SetRow(tie, m.W.RawRowView(tie-1))
		m.Intercept[tie] = m.Intercept[tie-1]
	}
	if absent >= 0 && absent < nc {
		m.Intercept[absent] = math.Inf(-1)
	}
	return m
}

// TestDecisionBits checks Decision, Predict and Scaler.Apply bit for bit
// against the plain loops that define them (the decision value summed
// over the features in order, then the intercept added; the largest
// value, ties to the smaller class; (x - mean) / sd), on strided inputs
// with row counts that are not multiples of a block and 1 to 17 features,
// 2 to 6 classes, a tie and an absent class.
func TestDecisionBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for _, c := range []struct{ n, d, nc, absent, tie int }{
		{n: 1, d: 1, nc: 2, absent: -1},
		{n: 7, d: 3, nc: 4, absent: -1},
		{n: 257, d: 3, nc: 4, absent: 2, tie: 1},
		{n: 1001, d: 4, nc: 4, absent: -1, tie: 3},
		{n: 999, d: 8, nc: 4, absent: 0},
		{n: 513, d: 10, nc: 5, absent: -1, tie: 2},
		{n: 300, d: 11, nc: 3, absent: -1},
		{n: 130, d: 12, nc: 6, absent: 5, tie: 4},
		{n: 65, d: 2, nc: 2, absent: -1, tie: 1},
		{n: 77, d: 17, nc: 4, absent: 1, tie: 3},
	} {
		t.Run(fmt.Sprintf("n=%d,d=%d,nc=%d", c.n, c.d, c.nc), func(t *testing.T) {
			wide := mat.NewDense(c.n, c.d+3, nil)
			for i := range c.n {
				for j := range c.d + 3 {
					wide.Set(i, j, 3*rng.NormFloat64()+1)
				}
			}
			x := wide.Slice(0, c.n, 2, c.d+2).(*mat.Dense)
			sc := &Scaler{Mean: make([]float64, c.d), SD: make([]float64, c.d)}
			for j := range c.d {
				sc.Mean[j], sc.SD[j] = rng.NormFloat64(), 0.5+rng.Float64()
			}
			z := ok[*mat.Dense](t)(sc.Apply(x))
			for i := range c.n {
				for j := range c.d {
					want := (x.At(i, j) - sc.Mean[j]) / sc.SD[j]
					if got := z.At(i, j); math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("Apply (%d, %d) = %v, want %v", i, j, got, want)
					}
				}
			}
			m := randomModel(rng, c.nc, c.d, c.absent, c.tie)
			dec := ok[*mat.Dense](t)(m.Decision(z))
			pred := ok[[]int](t)(m.Predict(z))
			counts := make([]int, c.nc)
			for i := range c.n {
				best, bestV := 0, 0.0
				for k := range c.nc {
					var v float64
					for j := range c.d {
						v += z.At(i, j) * m.W.At(k, j)
					}
					v += m.Intercept[k]
					if got := dec.At(i, k); math.Float64bits(got) != math.Float64bits(v) {
						t.Fatalf("Decision (%d, %d) = %v, want %v", i, k, got, v)
					}
					if k == 0 || v > bestV {
						best, bestV = k, v
					}
				}
				if pred[i] != best {
					t.Fatalf("row %d: Predict %d, want %d", i, pred[i], best)
				}
				counts[best]++
			}
			if c.absent >= 0 && counts[c.absent] != 0 || c.tie > 0 && counts[c.tie] != 0 {
				t.Errorf("predicted classes %v: an absent (%d) or tied (%d) class predicted", counts, c.absent, c.tie)
			}
		})
	}
}

// TestPredictNaN checks Predict against its defining loop on rows with
// NaN and infinite inputs, for which some classes' decision values are NaN
// (never larger than another value, even at class 0) and others infinite:
// for four classes, whose selection takes another path, and for five.
func TestPredictNaN(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, nc := range []int{4, 5} {
		const d = 3
		m := randomModel(rng, nc, d, -1, 0)
		// Class 2 ignores feature 0: +-Inf there makes the others infinite
		// and class 2's value NaN (0 * Inf).
		m.W.Set(2, 0, 0)
		vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, 1, -2}
		var rows []float64
		for _, a := range vals {
			for _, b := range vals {
				rows = append(rows, a, b, 0.5)
			}
		}
		n := len(rows) / d
		x := mat.NewDense(n, d, rows)
		pred := ok[[]int](t)(m.Predict(x))
		taken := map[int]bool{}
		for i := range n {
			best, bestV := 0, 0.0
			for k := range nc {
				var v float64
				for j := range d {
					v += x.At(i, j) * m.W.At(k, j)
				}
				v += m.Intercept[k]
				if k == 0 || v > bestV {
					best, bestV = k, v
				}
			}
			if pred[i] != best {
				t.Errorf("%d classes, row %v: Predict %d, want %d", nc, x.RawRowView(i), pred[i], best)
			}
			taken[best] = true
		}
		if len(taken) < 2 {
			t.Errorf("%d classes: only classes %v predicted", nc, taken)
		}
	}
}

// BenchmarkPredict predicts 4 classes on 20,000 rows of d features, as
// the evaluation's grid does on the held-out cells of an inner fold, and
// standardizes them first (Scaler.Apply).
func BenchmarkPredict(b *testing.B) {
	for _, d := range []int{3, 8, 10} {
		x, y := overlapping(5000, d, 4, 12)
		sc := ok[*Scaler](b)(Standardize(x))
		z := ok[*mat.Dense](b)(sc.Apply(x))
		m := ok[*Model](b)(Train(context.Background(), z, y, 4, Options{}))
		b.Run(fmt.Sprintf("Predict/d=%d", d), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Predict(z); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Apply/d=%d", d), func(b *testing.B) {
			for b.Loop() {
				if _, err := sc.Apply(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
