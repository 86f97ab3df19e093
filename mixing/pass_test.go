package mixing

import (
	"math"
	"math/rand/v2"
	"slices"
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

// TestSums checks the sums by group, through runSums and groupSums, from
// every offset, against a plain sum in index order, for runs that start
// and end at every lane, a group that comes back after others, and a tail
// shorter than sumLanes.
func TestSums(t *testing.T) {
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
		if runs != nil && len(runs) != len(c.runs) {
			t.Fatalf("%v: %d runs, want %d", c.runs, len(runs), len(c.runs))
		}
		n := len(groups)
		v := make([]float64, n)
		for j := range v {
			// Values of many magnitudes, so that a wrong value or a
			// missed one shows.
			v[j] = math.Exp(8 * rng.NormFloat64())
		}
		acc := make([]float64, sumLanes*3)
		for _, useRuns := range []bool{false, true} {
			if useRuns && runs == nil {
				continue
			}
			p := &pass{groups: groups, ngroups: 3}
			if useRuns {
				p.runs = runs
			}
			for off := 0; off <= n; off++ {
				want := make([]float64, 3)
				for j := off; j < n; j++ {
					want[groups[j]] += v[j]
				}
				got := []float64{-1, -1, -1}
				p.sums(got, v[off:], off, acc)
				for g := range want {
					if math.Abs(got[g]-want[g]) > 1e-14*math.Abs(want[g]) || (want[g] == 0) != (got[g] == 0) {
						t.Fatalf("%v, runs %v, from %d: group %d: %v, plain sum %v", c.runs, useRuns, off, g, got[g], want[g])
					}
				}
			}
		}
	}
}

// TestSortFirst checks the k smallest entries of sortFirst, in order,
// against a full sort, on random, sorted, reversed and equal distances
// (ties by index) of every length up to 300, for several k.
func TestSortFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, kind := range []string{"random", "sorted", "reversed", "equal", "few values"} {
		for m := 1; m <= 300; m += 1 + m/8 {
			s := make([]nb, m)
			for t := range s {
				var d float64
				switch kind {
				case "random":
					d = rng.Float64()
				case "sorted":
					d = float64(t)
				case "reversed":
					d = float64(m - t)
				case "equal":
					d = 1
				case "few values":
					d = float64(rng.IntN(3))
				}
				s[t] = nb{d2: d, j: rng.IntN(1000)*1000 + t}
			}
			want := slices.Clone(s)
			slices.SortFunc(want, cmpNb)
			for _, k := range []int{1, m / 3, m / 2, m - 1, m} {
				if k < 1 {
					continue
				}
				got := slices.Clone(s)
				sortFirst(got, k)
				if !slices.Equal(got[:k], want[:k]) {
					t.Fatalf("%s, %d entries, k = %d: %v, want %v", kind, m, k, got[:k], want[:k])
				}
				slices.SortFunc(got, cmpNb)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, %d entries, k = %d: the entries changed", kind, m, k)
				}
			}
		}
	}
}

// TestSampleNth checks the threshold of the strided sample against a sort
// of the sample, for distances with ties and every q up to the sample's
// size.
func TestSampleNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for _, n := range []int{1, 7, 8, 50, 701} {
		d2 := make([]float64, n)
		for j := range d2 {
			d2[j] = float64(rng.IntN(40))
		}
		var sample []float64
		for j := 0; j < n; j += thresholdStride {
			sample = append(sample, d2[j])
		}
		slices.Sort(sample)
		top := make([]float64, n)
		for q := 1; q <= len(sample); q++ {
			if got := sampleNth(d2, q, top); got != sample[q-1] {
				t.Fatalf("n = %d, q = %d: %v, want %v", n, q, got, sample[q-1])
			}
		}
	}
}

// TestCandidates checks the candidates below a threshold, through the
// vector scan and the Go one, against a plain scan, for every length up
// to 13 and a long one, with thresholds equal to some distances.
func TestCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for n := range 15 {
		if n == 14 {
			n = 101
		}
		d2 := make([]float64, n)
		for j := range d2 {
			d2[j] = float64(rng.IntN(10)) / 8
		}
		if n > 3 {
			d2[2] = math.Inf(1)
		}
		for _, th := range []float64{-1, 0, 0.25, 0.5, 1, 2} {
			var want []nb
			for j, v := range d2 {
				if v <= th {
					want = append(want, nb{v, j})
				}
			}
			cand := make([]nb, n)
			m := (&pass{}).candidates(d2, th, cand, make([]int32, n))
			if !slices.Equal(cand[:m], want) {
				t.Fatalf("n = %d, threshold %v: %v, want %v", n, th, cand[:m], want)
			}
			idx := make([]int32, n)
			m = candidateIndicesGo(idx, d2, th)
			if m != len(want) {
				t.Fatalf("n = %d, threshold %v: Go scan %d candidates, want %d", n, th, m, len(want))
			}
			for c, e := range want {
				if int(idx[c]) != e.j {
					t.Fatalf("n = %d, threshold %v: Go scan %v, want %v", n, th, idx[:m], want)
				}
			}
		}
	}
}

// TestVectorSums checks laneSum against laneSumGo, and scale and addTo
// against plain loops, bit for bit, on every length up to 13.
func TestVectorSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for n := range 14 {
		v := make([]float64, n)
		dst := make([]float64, n+1)
		want := make([]float64, n+1)
		for j := range v {
			v[j] = math.Exp(8 * rng.NormFloat64())
			dst[j] = rng.NormFloat64()
			want[j] = dst[j] + v[j]
		}
		dst[n], want[n] = 42, 42
		if got, w := laneSum(v), laneSumGo(v); math.Float64bits(got) != math.Float64bits(w) {
			t.Errorf("n = %d: laneSum %v, laneSumGo %v", n, got, w)
		}
		// The lanes: a plain sum differs in the last bits.
		var plain float64
		for _, x := range v {
			plain += x
		}
		if got := laneSum(v); math.Abs(got-plain) > 1e-14*plain {
			t.Errorf("n = %d: laneSum %v, plain sum %v", n, got, plain)
		}
		sc := make([]float64, n+1)
		sc[n] = 42
		scale(sc, v, -0.3)
		for j := range v {
			if w := -0.3 * v[j]; math.Float64bits(sc[j]) != math.Float64bits(w) {
				t.Errorf("n = %d: scale[%d] = %v, want %v", n, j, sc[j], w)
			}
		}
		if sc[n] != 42 {
			t.Errorf("n = %d: scale wrote past len(src)", n)
		}
		addTo(dst, v)
		for j := range dst {
			if math.Float64bits(dst[j]) != math.Float64bits(want[j]) {
				t.Errorf("n = %d: addTo[%d] = %v, want %v", n, j, dst[j], want[j])
			}
		}
	}
}
