package mixing

import (
	"fmt"
	"math"
	"runtime"
	"sync"

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

// lisiChunk is the number of points whose weights one worker calibrates
// at a time in lisiWeights.
const lisiChunk = 256

// lisiWeights returns the calibrated weights of LISI (n x K, the weights
// of point i's neighbours at [i*K, (i+1)*K)), which depend on the
// distances only: every labelling of the points shares them. The points
// are calibrated in chunks on all cores; the weights of each point do not
// depend on the others, nor on the number of cores.
func lisiWeights(nb *Neighbors, perplexity float64, squared bool) []float64 {
	n, k := nb.Len(), nb.K
	ws := make([]float64, n*k)
	target := math.Log(perplexity)
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	for range max(1, min(runtime.GOMAXPROCS(0), (n+lisiChunk-1)/lisiChunk)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := make([]float64, k)
			for {
				mu.Lock()
				lo := next
				next += lisiChunk
				mu.Unlock()
				if lo >= n {
					return
				}
				// Each point starts the search from the log beta of
				// the one before it.
				u := 0.0
				for i := lo; i < min(lo+lisiChunk, n); i++ {
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
					calibrate(d, ws[i*k:(i+1)*k], target, &u)
				}
			}
		}()
	}
	wg.Wait()
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
//
// The steps are those of the published bisection, bit for bit, but the
// entropy is computed only at the steps that can stop it: the entropy
// decreases as beta grows, so a step at a beta at most bLo (or at least
// bHi), where the entropy was found at least lisiTol above the target (or
// below it), only moves up (or down). window finds such bLo and bHi close
// to the solution with a few Newton steps from log beta = *u, and leaves
// in *u the log beta it reached (a start for similar distances).
func calibrate(d, w []float64, target float64, u *float64) {
	bLo, bHi := window(d, w, target, u)
	beta, lo, hi := 1.0, math.Inf(-1), math.Inf(1)
	for try := 0; ; try++ {
		var up bool
		switch {
		case try < lisiTries && beta <= bLo:
			up = true
		case try < lisiTries && beta >= bHi:
			up = false
		default:
			h, sum := weights(d, w, beta)
			diff := h - target
			if math.Abs(diff) < lisiTol || try == lisiTries {
				for t := range w {
					w[t] /= sum
				}
				return
			}
			up = diff > 0
		}
		if up {
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

// Settings of window: the margin beyond lisiTol that the entropy at its
// bounds must keep (far above the rounding error of the entropy, about
// 1e-14), and its number of Newton steps.
const (
	windowMargin = 1e-9
	windowSteps  = 8
)

// window returns bLo < bHi such that the entropy of the weights exp(-beta
// d), as weights computes it, is at least target + lisiTol for beta <= bLo
// and at most target - lisiTol for beta >= bHi: the largest and smallest
// of the betas it tries where the entropy is beyond target +- (lisiTol +
// windowMargin), else 0 and +Inf. It takes Newton steps on the entropy
// as a function of log beta from *u, kept within the bracket of the signs
// seen, until the entropy is within lisiTol/16 of target, then tries the
// two betas where the entropy should be target +- 2 lisiTol, and leaves
// the last log beta in *u. w is scratch.
func window(d, w []float64, target float64, start *float64) (bLo, bHi float64) {
	bLo, bHi = 0, math.Inf(1)
	const bound = lisiTol + windowMargin
	try := func(u float64) (g, slope float64) {
		beta := math.Exp(u)
		h, dh := entropySlope(d, w, beta)
		g = h - target
		if g >= bound {
			bLo = max(bLo, beta)
		}
		if g <= -bound {
			bHi = min(bHi, beta)
		}
		return g, beta * dh
	}
	u, uLo, uHi := *start, math.Inf(-1), math.Inf(1)
	if !(math.Abs(u) < 700) {
		// Beyond the range of exp.
		u = 0
	}
	defer func() { *start = u }()
	for range windowSteps {
		g, slope := try(u)
		if g > 0 {
			uLo = u
		} else {
			uHi = u
		}
		if math.Abs(g) < lisiTol/16 {
			if slope < 0 {
				delta := 2 * lisiTol / -slope
				try(u - delta)
				try(u + delta)
			}
			break
		}
		if !(slope < 0) {
			// The entropy is flat here (equal distances, or
			// weights that underflow): no Newton step.
			break
		}
		next := u - g/slope
		next = min(max(next, u-2), u+2)
		if next <= uLo || next >= uHi {
			if math.IsInf(uLo, 0) || math.IsInf(uHi, 0) {
				break
			}
			next = (uLo + uHi) / 2
		}
		u = next
	}
	if !(bLo < bHi) {
		// Rounding at a flat entropy: keep the exact search.
		return 0, math.Inf(1)
	}
	return bLo, bHi
}

// entropySlope returns the entropy of the normalized weights exp(-beta d)
// (computed as weights does) and its derivative with respect to beta,
// -beta Var(d), the variance under the weights; w is scratch.
func entropySlope(d, w []float64, beta float64) (h, dh float64) {
	h, sum := weights(d, w, beta)
	var m1, m2 float64
	for t, e := range w {
		m1 += d[t] * e
		m2 += d[t] * d[t] * e
	}
	m1 /= sum
	m2 /= sum
	return h, -beta * max(m2-m1*m1, 0)
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
