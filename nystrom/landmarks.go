package nystrom

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// Uniform returns m landmarks drawn uniformly without replacement from the
// rows of x (n x d), in increasing row order, with a PCG generator seeded by
// seed (kernel.SampleRows). It returns an error if m < 1 or m > n.
func Uniform(x *mat.Dense, m int, seed uint64) (*mat.Dense, error) {
	n, d, err := checkLandmarkArgs(x, m)
	if err != nil {
		return nil, err
	}
	rows := kernel.SampleRows(n, m, seed)
	z := mat.NewDense(m, d, nil)
	for i, p := range rows {
		z.SetRow(i, x.RawRowView(p))
	}
	return z, nil
}

// KMeansPP returns m landmarks that are the centers of a k-means clustering
// of the rows of x (n x d): k-means++ seeding (Arthur and Vassilvitskii,
// 2007: each new center is a point drawn with probability proportional to its
// squared distance to the nearest center chosen so far) followed by
// lloydIters Lloyd iterations (assign each point to its nearest center, move
// each center to the mean of its points; a center left without points stays
// where it is). With lloydIters = 0 the landmarks are the seeded data points.
// k-means landmarks cover the data better than uniform ones, which lowers the
// Nystrom error at the same m (TestErrorDecreasesWithM checks it; go run
// ./bench rank measures both choices on the CyTOF data).
//
// The cost is O(n m d (1 + lloydIters)): pass a sample of the data (a few
// times m up to ~100 m rows, e.g. with kernel.SampleRows), not all of it.
// The result depends only on (x, m, lloydIters, seed).
//
// KMeansPP returns an error if m < 1, m > n, lloydIters < 0, x holds NaN or
// infinite values, or x has fewer than m distinct rows.
func KMeansPP(x *mat.Dense, m, lloydIters int, seed uint64) (*mat.Dense, error) {
	n, d, err := checkLandmarkArgs(x, m)
	if err != nil {
		return nil, err
	}
	if lloydIters < 0 {
		return nil, fmt.Errorf("nystrom: %d Lloyd iterations", lloydIters)
	}
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("nystrom: point %d, coordinate %d is %g", i, j, v)
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b6d65616e732b2b))
	z := mat.NewDense(m, d, nil)
	// Seeding. near[i] is the squared distance of x_i to its nearest center.
	first := rng.IntN(n)
	z.SetRow(0, x.RawRowView(first))
	near := make([]float64, n)
	for i := range n {
		near[i] = kernel.SqDist(x.RawRowView(i), z.RawRowView(0))
	}
	for c := 1; c < m; c++ {
		var total float64
		for _, v := range near {
			total += v
		}
		if !(total > 0) {
			return nil, fmt.Errorf("nystrom: %d landmarks asked but x has only %d distinct rows", m, c)
		}
		u := rng.Float64() * total
		pick := -1
		var acc float64
		for i, v := range near {
			if v == 0 {
				continue
			}
			acc += v
			pick = i
			if acc > u {
				break
			}
		}
		zc := z.RawRowView(c)
		copy(zc, x.RawRowView(pick))
		for i := range n {
			if dd := kernel.SqDist(x.RawRowView(i), zc); dd < near[i] {
				near[i] = dd
			}
		}
	}
	if lloydIters == 0 {
		return z, nil
	}
	assign := make([]int, n)
	sums := mat.NewDense(m, d, nil)
	counts := make([]int, m)
	var dist mat.Dense
	for range lloydIters {
		// Nearest centers, a block of points at a time.
		const block = 512
		for lo := 0; lo < n; lo += block {
			hi := min(n, lo+block)
			dist.Reset()
			kernel.SqDistBlock(&dist, x.Slice(lo, hi, 0, d), z)
			for i := lo; i < hi; i++ {
				row := dist.RawRowView(i - lo)
				best := 0
				for c, v := range row {
					if v < row[best] {
						best = c
					}
				}
				assign[i] = best
			}
		}
		sums.Zero()
		clear(counts)
		for i, c := range assign {
			counts[c]++
			sc := sums.RawRowView(c)
			for j, v := range x.RawRowView(i) {
				sc[j] += v
			}
		}
		for c := range m {
			if counts[c] == 0 {
				continue
			}
			zc, sc := z.RawRowView(c), sums.RawRowView(c)
			for j := range zc {
				zc[j] = sc[j] / float64(counts[c])
			}
		}
	}
	return z, nil
}

func checkLandmarkArgs(x *mat.Dense, m int) (n, d int, err error) {
	if x == nil || x.IsEmpty() {
		return 0, 0, fmt.Errorf("nystrom: no points to choose %d landmarks from", m)
	}
	n, d = x.Dims()
	if m < 1 {
		return 0, 0, fmt.Errorf("nystrom: m = %d landmarks, want at least 1", m)
	}
	if m > n {
		return 0, 0, fmt.Errorf("nystrom: m = %d landmarks but only %d points", m, n)
	}
	return n, d, nil
}
