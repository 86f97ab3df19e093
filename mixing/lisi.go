package mixing

import (
	"fmt"
	"math"

	"github.com/dicalab/dica/kernel"
)

// lisiTol and lisiTries are the tolerance on the neighbourhood entropy and
// the number of bisection steps of the bandwidth search, as in Harmony's
// published code.
const (
	lisiTol   = 1e-5
	lisiTries = 50
)

// LISI returns the local inverse Simpson index of each point's
// neighbourhood for the given labels (one per point, indices from 0;
// Korsunsky et al. 2019):
//
//	LISI_i = 1 / sum_c p_c^2,  p_c = sum of w_j over neighbours j with label c,
//
// with weights w_j = exp(-beta_i d_j) / sum_j' exp(-beta_i d_j') on the
// Euclidean distances d_j to point i's neighbours (d_j^2 when squared is
// set: a Gaussian kernel), beta_i chosen by bisection so that the entropy
// of the weights is log(perplexity) within 1e-5 (at most 50 steps, starting
// from beta = 1 and doubling or halving until the target is bracketed).
// The neighbours are those of nb, normally the 3 * perplexity - 1 nearest
// other points, as in Harmony's code, which takes 3 * perplexity nearest
// points and drops the point itself. With many points per neighbourhood
// the index lies between 1 (one label around the point) and the number of
// labels, and is at most about the perplexity.
//
// The weights follow the published implementations (the R package lisi,
// harmonypy, scib), which apply the kernel to the distances, not to their
// squares, although the Harmony paper calls it Gaussian; Squared gives the
// Gaussian kernel in the strict sense. The weights are computed relative to
// the nearest neighbour, exp(-beta (d_j - d_1)), which gives the same
// weights without the underflow that makes the published code return a
// negative index when beta d_1 exceeds about 745.
func LISI(nb *Neighbors, labels []int, perplexity float64, squared bool) ([]float64, error) {
	if math.IsNaN(perplexity) || math.IsInf(perplexity, 0) || perplexity < 1 {
		return nil, fmt.Errorf("mixing: perplexity %v; want a finite value >= 1", perplexity)
	}
	if err := nb.check(len(labels)); err != nil {
		return nil, err
	}
	c, err := checkLabels(labels, nb.Len(), "category")
	if err != nil {
		return nil, err
	}
	return lisiIndex(nb, lisiWeights(nb, perplexity, squared), labels, c), nil
}

// lisiWeights returns the calibrated weights of LISI (n x K, the weights
// of point i's neighbours at [i*K, (i+1)*K)), which depend on the
// distances only: every labelling of the points shares them.
func lisiWeights(nb *Neighbors, perplexity float64, squared bool) []float64 {
	n, k := nb.Len(), nb.K
	ws := make([]float64, n*k)
	d := make([]float64, k)
	target := math.Log(perplexity)
	for i := range n {
		copy(d, nb.Dist[i*k:(i+1)*k])
		if squared {
			for t := range d {
				d[t] *= d[t]
			}
		}
		d0 := d[0]
		for t := range d {
			d[t] -= d0
		}
		calibrate(d, ws[i*k:(i+1)*k], target)
	}
	return ws
}

// lisiIndex returns LISI of every point from its weights ws (lisiWeights)
// and the labels (c categories).
func lisiIndex(nb *Neighbors, ws []float64, labels []int, c int) []float64 {
	n, k := nb.Len(), nb.K
	out := make([]float64, n)
	p := make([]float64, c)
	for i := range n {
		w := ws[i*k : (i+1)*k]
		clear(p)
		for t, j := range nb.Index[i*k : (i+1)*k] {
			p[labels[j]] += w[t]
		}
		var s float64
		for _, v := range p {
			s += v * v
		}
		out[i] = 1 / s
	}
	return out
}

// calibrate sets w to the normalized weights exp(-beta d) whose entropy is
// target (within lisiTol, or the closest of lisiTries bisection steps). The
// distances d are >= 0 with d[0] = 0, so the weights never all vanish.
func calibrate(d, w []float64, target float64) {
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

// weights sets w to the unnormalized weights exp(-beta d) and returns their
// sum and entropy as normalized weights, log(sum) + beta sum(d w) / sum.
func weights(d, w []float64, beta float64) (h, sum float64) {
	for t, v := range d {
		w[t] = -beta * v
	}
	kernel.ExpSlice(w, w)
	var dot float64
	for t, e := range w {
		sum += e
		dot += d[t] * e
	}
	return math.Log(sum) + beta*dot/sum, sum
}
