package mixing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSqrtSlice checks sqrtSlice against math.Sqrt bit for bit, on every
// length up to 11 (the vector part and the rest) and special values.
func TestSqrtSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 12 {
		src := make([]float64, n)
		for i := range src {
			src[i] = math.Exp(20 * rng.NormFloat64())
		}
		if n >= 8 {
			src[0], src[1], src[2], src[3], src[4] = 0, math.Inf(1), math.SmallestNonzeroFloat64, math.MaxFloat64, 2
		}
		dst := make([]float64, n+1)
		dst[n] = 42
		sqrtSlice(dst, src)
		for i, x := range src {
			if w := math.Sqrt(x); math.Float64bits(dst[i]) != math.Float64bits(w) {
				t.Errorf("n = %d: sqrt(%v) = %v, math.Sqrt %v", n, x, dst[i], w)
			}
		}
		if dst[n] != 42 {
			t.Errorf("n = %d: sqrtSlice wrote past len(src)", n)
		}
	}
}

// TestRunSums checks that the sums by runs of groups equal those of
// groupSums bit for bit, for runs that start and end at every lane, a
// group that comes back after others, and a tail shorter than sumLanes.
func TestRunSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		runs []int // lengths of the runs; group r mod 3
		ok   bool  // long enough for runs
	}{
		{[]int{40, 37, 19, 61}, true},
		{[]int{16, 17, 18, 19, 20, 21}, true},
		{[]int{101}, true},
		{[]int{3, 90, 1, 33}, true},
		{[]int{50, 2, 3, 5, 7, 1, 1, 1}, false},
	} {
		var groups []int
		for r, l := range c.runs {
			for range l {
				groups = append(groups, r%3)
			}
		}
		runs := groupRuns(groups)
		if (runs != nil) != c.ok {
			t.Errorf("%v: groupRuns = %v, want runs %v", c.runs, runs, c.ok)
		}
		if runs == nil {
			continue
		}
		if len(runs) != len(c.runs) {
			t.Fatalf("%v: %d runs, want %d", c.runs, len(runs), len(c.runs))
		}
		n := len(groups)
		t.Run(fmt.Sprint(c.runs), func(t *testing.T) {
			v := make([]float64, n)
			for j := range v {
				// Values of many magnitudes, so that the order of
				// the sums shows in the last bits.
				v[j] = math.Exp(8 * rng.NormFloat64())
			}
			p := &pass{groups: groups, ngroups: 3}
			acc := make([]float64, sumLanes*3)
			want := make([]float64, 3)
			p.groupSums(want, v, acc)
			p.runs = runs
			got := make([]float64, 3)
			p.sums(got, v, acc)
			for g := range want {
				if math.Float64bits(got[g]) != math.Float64bits(want[g]) {
					t.Errorf("group %d: %v, groupSums %v", g, got[g], want[g])
				}
			}
			// A plain sum in index order agrees to rounding: the sums
			// add the right values.
			var plain float64
			for j, x := range v {
				if groups[j] == 0 {
					plain += x
				}
			}
			if math.Abs(plain-want[0]) > 1e-12*math.Abs(want[0]) {
				t.Errorf("group 0: %v, plain sum %v", want[0], plain)
			}
		})
	}
}
