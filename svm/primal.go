package svm

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// lineSearch returns the minimizer over t >= 0 of
// phi(t) = 1/2 ||w - t s||^2 + C sum_i max(0, 1 - z_i + t dz_i)^2, whose
// derivative is phi'(t) = t s's - w's + 2C sum_{active} (1 - z_i + t dz_i) dz_i.
// phi' is continuous, increasing and piecewise linear; Newton steps on it
// are safeguarded by bisection on a bracket [lo, hi].
//
// The bracket starts at [0, 1] and doubles while phi' < 0 at its end. A
// term whose activity can no longer change beyond the end (active with
// dz_i >= 0, or inactive with dz_i <= 0) is folded into two sums (its
// constant and its slope) or dropped, so each doubling visits only the
// terms that may still switch. Inside the final bracket, a term whose sign
// does not change is folded likewise: each evaluation of phi' visits only
// the terms that switch inside the current bracket, a list that shrinks
// with the bracket. It also returns the number of evaluations of phi' and
// the number of terms they visited. idx and br are scratch space for n
// indices each.
func lineSearch(w, s, z, dz []float64, c2 float64, idx, br []int) (t float64, evals, visited int) {
	ss, ws := floats.Dot(s, s), floats.Dot(w, s)
	// pa and pb sum c2 (1 - z_i) dz_i and c2 dz_i^2 over the terms active
	// on all of [lo, inf); idx lists the terms that may switch beyond lo
	// (all of them at first).
	var pa, pb float64
	// a and b sum the same over the terms active on all of [lo, hi]; br
	// lists the terms that switch inside it.
	var a, b float64
	lo, hi := 0.0, 1.0
	all := true
	// sweep evaluates phi' at hi over the terms of idx (all terms the
	// first time), sorts them for the bracket [lo, hi], and keeps in idx
	// those that may switch beyond hi, with the sums of those that become
	// permanently active in da, db.
	sweep := func() (d1, d2, da, db float64) {
		evals++
		n := len(idx)
		if all {
			n = len(z)
		}
		visited += n
		br = br[:0]
		var e1, e2, ba, bb float64
		k := 0
		for j := 0; j < n; j++ {
			i := j
			if !all {
				i = idx[j]
			}
			d := dz[i]
			u := 1 - z[i]
			m0, m1 := u+lo*d, u+hi*d
			if m1 > 0 {
				e1 += c2 * m1 * d
				e2 += c2 * d * d
			}
			switch {
			case m0 > 0 && m1 > 0:
				ba += c2 * u * d
				bb += c2 * d * d
			case m0 > 0 || m1 > 0:
				br = append(br, i)
			}
			switch {
			case m1 > 0 && d >= 0:
				da += c2 * u * d
				db += c2 * d * d
			case m1 <= 0 && d <= 0:
			default:
				if all {
					idx = append(idx[:k], i)
				} else {
					idx[k] = i
				}
				k++
			}
		}
		idx = idx[:k]
		all = false
		a, b = pa+ba, pb+bb
		return hi*ss - ws + pa + hi*pb + e1, ss + pb + e2, da, db
	}
	idx = idx[:0]
	// deriv evaluates phi' at t in [lo, hi] over the terms of br, folding
	// those that no longer switch inside the (narrowed) bracket.
	deriv := func(t float64) (d1, d2 float64) {
		evals++
		visited += len(br)
		var e1, e2 float64
		k := 0
		for _, i := range br {
			m0, m1 := 1-z[i]+lo*dz[i], 1-z[i]+hi*dz[i]
			switch {
			case m0 > 0 && m1 > 0:
				a += c2 * (1 - z[i]) * dz[i]
				b += c2 * dz[i] * dz[i]
				continue
			case m0 <= 0 && m1 <= 0:
				continue
			}
			br[k] = i
			k++
			if m := 1 - z[i] + t*dz[i]; m > 0 {
				e1 += c2 * m * dz[i]
				e2 += c2 * dz[i] * dz[i]
			}
		}
		br = br[:k]
		return t*ss - ws + a + t*b + e1, ss + b + e2
	}
	d1, d2, da, db := sweep()
	for d1 < 0 && hi < 1e6 {
		pa, pb = pa+da, pb+db
		lo, hi = hi, 2*hi
		d1, d2, da, db = sweep()
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
