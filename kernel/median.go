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
	slices.Sort(d)
	var med float64
	if k := len(d); k%2 == 1 {
		med = d[k/2]
	} else {
		med = (math.Sqrt(d[k/2-1]) + math.Sqrt(d[k/2])) / 2
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
