package svm

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// later returns 1 when a term with activity in at t = 0 and slope d may
// switch at some t > 0 (active with d < 0, or inactive with d > 0), else 0.
func later(in bool, d float64) int {
	var neg, pos, act int
	if d < 0 {
		neg = 1
	}
	if d > 0 {
		pos = 1
	}
	if in {
		act = 1
	}
	return pos ^ (pos^neg)&-act // neg when active, else pos
}

// lineSearch returns the minimizer over t >= 0 of
// phi(t) = 1/2 ||w - t s||^2 + C sum_i max(0, 1 - z_i + t dz_i)^2, whose
// derivative is phi'(t) = t s's - w's + 2C sum_{active} (1 - z_i + t dz_i) dz_i.
// phi' is continuous, increasing and piecewise linear; Newton steps on it
// are safeguarded by bisection on a bracket [lo, hi].
//
// The caller gives the sums over the terms active at t = 0 (z_i < 1),
// a0 = 2C sum (1 - z_i) dz_i and b0 = 2C sum dz_i^2, which the Newton
// solver has at hand (s'(w - grad f) and 2C s'Hs less s's): phi' is then
// a0 + t b0 plus a correction for the terms whose activity at t differs
// from that at 0. A term switches at most once, at t = (z_i - 1) / dz_i,
// so one pass over the terms lists those that switch inside the first
// bracket [0, 1] and those that may switch later, the only ones the
// bracket's doublings (while phi' < 0 at its end) visit again. A term
// whose switch lies below the bracket is folded into the sums (its
// correction is linear there) and dropped, so each evaluation of phi'
// visits only the terms that switch inside the current bracket, a list
// that shrinks with the bracket. It also returns the number of evaluations
// of phi' and the number of terms they visited. cand and br are scratch
// space for n indices each.
func lineSearch(w, s, z, dz []float64, c2, a0, b0 float64, cand, br []int) (t float64, evals, visited int) {
	ss, ws := floats.Dot(s, s), floats.Dot(w, s)
	// phi'(t) = t ss - ws + a + t b + the corrections of the terms of br
	// switched at t (br lists the terms that switch inside [lo, hi]; the
	// corrections of those that switched below lo are in a and b).
	a, b := a0, b0
	lo, hi := 0.0, 1.0
	// fold adds to a and b the correction of term i, switched on all of
	// the bracket: +2C (1 - z_i + t dz_i) dz_i if it turned active, minus
	// that if it turned inactive.
	fold := func(i int) {
		u, d := 1-z[i], dz[i]
		if u > 0 {
			a -= c2 * u * d
			b -= c2 * d * d
		} else {
			a += c2 * u * d
			b += c2 * d * d
		}
	}
	// at evaluates phi' and phi'' at t over the terms of br.
	at := func(t float64) (d1, d2 float64) {
		evals++
		visited += len(br)
		var e1, e2 float64
		for _, i := range br {
			u, d := 1-z[i], dz[i]
			m := u + t*d
			if act := m > 0; act != (u > 0) {
				if act {
					e1 += c2 * m * d
					e2 += c2 * d * d
				} else {
					e1 -= c2 * m * d
					e2 -= c2 * d * d
				}
			}
		}
		return t*ss - ws + a + t*b + e1, ss + b + e2
	}
	// The first pass: the terms that switch inside [0, 1] go to br, those
	// that may switch later (active with dz_i < 0, inactive with
	// dz_i > 0) to cand.
	visited += len(z)
	br, cand = br[:0], cand[:cap(cand)]
	k := 0
	for i, zi := range z {
		u, d := 1-zi, dz[i]
		in := u > 0
		if in != (u+d > 0) {
			br = append(br, i)
			continue
		}
		// Kept when it may switch later; counted without a branch, which
		// would be mispredicted about half the time.
		cand[k] = i
		k += later(in, d)
	}
	cand = cand[:k]
	d1, d2 := at(hi)
	for d1 < 0 && hi < 1e6 {
		for _, i := range br {
			fold(i)
		}
		lo, hi = hi, 2*hi
		br = br[:0]
		k := 0
		visited += len(cand)
		for _, i := range cand {
			u, d := 1-z[i], dz[i]
			if (u+hi*d > 0) != (u > 0) {
				br = append(br, i)
			} else {
				cand[k] = i
				k++
			}
		}
		cand = cand[:k]
		d1, d2 = at(hi)
	}
	// deriv evaluates phi' at t in [lo, hi] over the terms of br, folding
	// those that switch below the (narrowed) bracket and dropping those
	// that switch above it.
	deriv := func(t float64) (d1, d2 float64) {
		k := 0
		for _, i := range br {
			u, d := 1-z[i], dz[i]
			in := u > 0
			s0, s1 := (u+lo*d > 0) != in, (u+hi*d > 0) != in
			switch {
			case s0 && s1:
				fold(i)
				continue
			case !s0 && !s1:
				continue
			}
			br[k] = i
			k++
		}
		br = br[:k]
		return at(t)
	}
	t = hi
	for range 60 {
		if d1 == 0 {
			return t, evals, visited
		}
		if d1 > 0 {
			hi = t
		} else {
			lo = t
		}
		nt := t - d1/d2
		// At the root the Newton step is rounding-sized and may leave the
		// bracket by a hair (t is one of its ends): stop before the
		// bisection walks the whole bracket back to t.
		if math.Abs(nt-t) <= 1e-12*math.Max(1, t) {
			return t, evals, visited
		}
		if !(nt > lo && nt < hi) {
			nt = (lo + hi) / 2
		}
		t = nt
		d1, d2 = deriv(t)
	}
	return t, evals, visited
}
