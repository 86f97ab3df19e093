package kernel

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// DefaultMedianSample is the subsample size MedianSigma uses by default.
const DefaultMedianSample = 1000

// MedianSigma returns the median heuristic bandwidth: the median Euclidean
// distance between distinct pairs of points of a seeded uniform subsample
// (without replacement) of at most sample rows of x (DefaultMedianSample when
// sample <= 0). It returns 1 when all sampled points coincide.
func MedianSigma(x mat.Matrix, sample int, seed uint64) float64 {
	r, _ := x.Dims()
	if sample <= 0 {
		sample = DefaultMedianSample
	}
	rows := SampleRows(r, sample, seed)
	xd := dense(x)
	sub := mat.NewDense(len(rows), xd.RawMatrix().Cols, nil)
	for i, p := range rows {
		sub.SetRow(i, xd.RawRowView(p))
	}
	return MedianDistance(sub)
}

// MedianDistance returns the median Euclidean distance between distinct pairs
// of rows of x, or 1 when it is 0 or there are fewer than 2 rows.
func MedianDistance(x *mat.Dense) float64 {
	n, _ := x.Dims()
	if n < 2 {
		return 1
	}
	d := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		xi := x.RawRowView(i)
		for j := i + 1; j < n; j++ {
			d = append(d, SqDist(xi, x.RawRowView(j)))
		}
	}
	// The middle order statistics, by selection rather than a sort.
	k := len(d)
	lower, upper := middle(d)
	var med float64
	if k%2 == 1 {
		med = upper
	} else {
		med = (math.Sqrt(lower) + math.Sqrt(upper)) / 2
		if med == 0 {
			return 1
		}
		return med
	}
	if med == 0 {
		return 1
	}
	return math.Sqrt(med)
}

// middle returns the values at positions k/2 - 1 and k/2 of d in sorted
// order (slices.Sort's order, NaNs first; both d[0] when k = len(d) = 1),
// reordering d. It
// selects them in linear expected time (quickselect with a median-of-3
// pivot), falling back to a sort for NaNs or after too many rounds.
func middle(d []float64) (lower, upper float64) {
	k := len(d)
	if k == 1 {
		return d[0], d[0]
	}
	m := k / 2
	sorted := func() (float64, float64) {
		slices.Sort(d)
		return d[m-1], d[m]
	}
	for _, v := range d {
		if v != v {
			return sorted()
		}
	}
	lo, hi := 0, k-1
	for round := 0; lo < hi; round++ {
		if round == 64 {
			return sorted()
		}
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		a, b, c := d[lo], d[mid], d[hi]
		p := max(min(a, b), min(max(a, b), c))
		// Hoare partition of d[lo:hi+1] around p.
		i, j := lo, hi
		for i <= j {
			for d[i] < p {
				i++
			}
			for d[j] > p {
				j--
			}
			if i <= j {
				d[i], d[j] = d[j], d[i]
				i++
				j--
			}
		}
		// d[lo:j+1] <= p <= d[i:hi+1], and d[j+1:i] == p.
		switch {
		case m <= j:
			hi = j
		case m >= i:
			lo = i
		default:
			lo, hi = m, m
		}
	}
	// d[:m] <= d[m] <= d[m+1:].
	return slices.Max(d[:m]), d[m]
}

// SampleRows returns min(k, n) distinct indices in [0, n), in increasing
// order, drawn uniformly with a PCG generator seeded by seed.
func SampleRows(n, k int, seed uint64) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	perm := rng.Perm(n)[:k]
	slices.Sort(perm)
	return perm
}
