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

// lineScratch is the scratch space of lineSearch for n terms: the indices
// cand and br, and the breakpoints bt of the terms that switch inside the
// bracket with their corrections alpha, beta in pairs in bab (2n values).
type lineScratch struct {
	cand, br []int
	bt, bab  []float64
}

func newLineScratch(n int) *lineScratch {
	return &lineScratch{cand: make([]int, n), br: make([]int, n),
		bt: make([]float64, n), bab: make([]float64, 2*n)}
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var x int
	if b {
		x = 1
	}
	return x
}

// maskIf returns x when b holds and 0 otherwise, without a branch.
func maskIf(b bool, x float64) float64 {
	return math.Float64frombits(math.Float64bits(x) & -uint64(b2i(b)))
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
// from that at 0. A term switches at most once, at its breakpoint
// t_i = (z_i - 1) / dz_i, after which its correction is the linear
// alpha_i + t beta_i = -+2C (1 - z_i + t dz_i) dz_i (+ when it turns
// active). One pass over the terms lists those that switch inside the
// first bracket [0, 1], with their breakpoints and corrections in
// contiguous arrays, and those that may switch later, the only ones the
// bracket's doublings (while phi' < 0 at its end) visit again; phi' at
// the end of a bracket, where every listed term has switched, is summed
// while listing them. Each later evaluation of phi' sums the corrections of the listed terms whose
// breakpoint lies below t, without branches, and drops from the list the
// terms whose breakpoint lies outside the narrowed bracket (those below it
// folded into the sums), so that the list shrinks with the bracket. It
// also returns the number of evaluations of phi' and the number of terms
// they visited.
func lineSearch(w, s, z, dz []float64, c2, a0, b0 float64, sc *lineScratch) (t float64, evals, visited int) {
	nb, nc := lineFirst(z, dz, sc)
	return lineSearchFrom(w, s, z, dz, c2, a0, b0, sc, nb, nc)
}

// lineFirst is the first pass of lineSearch over the terms: the terms
// that switch inside [0, 1] go to sc.br (nb of them), those that may
// switch later (active with dz_i < 0, inactive with dz_i > 0) to sc.cand
// (nc of them); without branches, which would be mispredicted.
func lineFirst(z, dz []float64, sc *lineScratch) (nb, nc int) {
	return firstTerms(z, dz, sc.br, sc.cand, 0, 0, 0)
}

// firstTerms is lineFirst's pass over the terms from i0 on, appending to
// the nb terms already in br and the nc already in cand.
func firstTerms(z, dz []float64, br, cand []int, i0, nb, nc int) (int, int) {
	n := len(z)
	dz, br, cand = dz[:n], br[:n], cand[:n]
	for i := i0; i < n; i++ {
		u, d := 1-z[i], dz[i]
		in := u > 0
		sw := in != (u+d > 0)
		br[nb] = i
		nb += b2i(sw)
		cand[nc] = i
		nc += b2i(!sw) & later(in, d)
	}
	return nb, nc
}

// lineSearchFrom is lineSearch after its first pass (lineFirst), which
// left nb terms in sc.br and nc in sc.cand.
func lineSearchFrom(w, s, z, dz []float64, c2, a0, b0 float64, sc *lineScratch, nb, nc int) (t float64, evals, visited int) {
	ss, ws := floats.Dot(s, s), floats.Dot(w, s)
	// phi'(t) = t ss - ws + a + t b + the corrections of the listed terms
	// switched at t (the corrections of those that switched below lo are
	// in a and b).
	a, b := a0, b0
	lo, hi := 0.0, 1.0
	cand, br := sc.cand[:nc], sc.br[:len(z)]
	visited += len(z)
	// list stores the breakpoints and corrections of the terms of idx, all
	// of which switch before t (the end of the bracket), and returns phi'
	// and phi'' at t.
	var bt, bab []float64
	list := func(idx []int, t float64) (d1, d2 float64) {
		evals++
		visited += len(idx)
		bt, bab = sc.bt[:len(idx)], sc.bab[:2*len(idx)]
		e1, e2 := listTerms(idx, z, dz, c2, t, bt, bab)
		return t*ss - ws + a + t*b + e1, ss + b + e2
	}
	d1, d2 := list(br[:nb], hi)
	// eval evaluates phi' and phi'' at t over the listed terms, first
	// folding those whose breakpoint is at or below lo and dropping those
	// at or above hi (lo < t < hi).
	eval := func(t float64) (d1, d2 float64) {
		evals++
		visited += len(bt)
		k, e1, e2, g1, g2 := sumCompact(bt, bab, lo, hi, t)
		bt, bab = bt[:k], bab[:2*k]
		a += g1
		b += g2
		return t*ss - ws + a + t*b + e1, ss + b + e2
	}
	for d1 < 0 && hi < 1e6 {
		// Every listed term switched below hi: fold them, and list the
		// candidates that switch inside the doubled bracket.
		for j := range bt {
			a += bab[2*j]
			b += bab[2*j+1]
		}
		lo, hi = hi, 2*hi
		visited += len(cand)
		nb, k := splitCand(cand, br, z, dz, hi)
		cand = cand[:k]
		d1, d2 = list(br[:nb], hi)
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
		d1, d2 = eval(t)
	}
	return t, evals, visited
}

// splitCand moves the terms i of cand that switch inside [0, hi], those
// with (1 - z_i + hi dz_i > 0) != (1 - z_i > 0), to br (nb of them) and
// the others to the front of cand (k of them), in order, without
// branches (in assembly where the CPU allows). The indices of cand must
// lie in z and dz; br must be as long as cand.
func splitCand(cand, br []int, z, dz []float64, hi float64) (nb, k int) {
	br, dz = br[:len(cand)], dz[:len(z)]
	if hasAVX2 {
		return splitCandAVX2(cand, br, z, dz, hi)
	}
	return splitCandGo(cand, br, z, dz, hi)
}

// splitCandGo is splitCand in Go.
func splitCandGo(cand, br []int, z, dz []float64, hi float64) (nb, k int) {
	br = br[:len(cand)]
	for _, i := range cand {
		u, d := 1-z[i], dz[i]
		sw := (u+hi*d > 0) != (u > 0)
		br[nb] = i
		nb += b2i(sw)
		cand[k] = i
		k += b2i(!sw)
	}
	return nb, k
}

// listTerms stores the breakpoint t_j = -u/d and the correction
// alpha_j = sg u d, beta_j = sg d d (sg = -c2 when the term is active,
// u > 0, else c2) of each term i = idx[j], u = 1 - z_i, d = dz_i, in bt[j]
// and bab[2j], bab[2j+1], and returns the sums e1 of alpha_j + t beta_j
// and e2 of beta_j in increasing j from zero. In assembly where the CPU
// allows, with (e1, e2) in one register: the same operations on each
// value, hence the same bits.
func listTerms(idx []int, z, dz []float64, c2, t float64, bt, bab []float64) (e1, e2 float64) {
	bt, bab, dz = bt[:len(idx)], bab[:2*len(idx)], dz[:len(z)]
	if hasAVX2 {
		return listAVX2(idx, z, dz, c2, t, bt, bab)
	}
	return listGo(idx, z, dz, c2, t, bt, bab)
}

// listGo is listTerms in Go.
func listGo(idx []int, z, dz []float64, c2, t float64, bt, bab []float64) (e1, e2 float64) {
	bt, bab = bt[:len(idx)], bab[:2*len(idx)]
	for j, i := range idx {
		u, d := 1-z[i], dz[i]
		sg := c2
		if u > 0 {
			sg = -c2
		}
		al, be := sg*u*d, sg*d*d
		bt[j], bab[2*j], bab[2*j+1] = -u/d, al, be
		e1 += al + t*be
		e2 += be
	}
	return e1, e2
}

// sumCompact returns the sums e1 of alpha_j + t beta_j and e2 of beta_j
// over the terms with lo < bt_j < t, and the sums g1 of alpha_j and g2 of
// beta_j over those with bt_j <= lo, each in increasing j from zero
// (alpha_j, beta_j = bab[2j], bab[2j+1]); it moves the terms with
// lo < bt_j < hi to the front (k of them), in order. In assembly where the
// CPU allows, with the pairs (g1, g2) and (e1, e2) in one register each:
// the same operations on each value, hence the same bits.
func sumCompact(bt, bab []float64, lo, hi, t float64) (k int, e1, e2, g1, g2 float64) {
	bab = bab[:2*len(bt)]
	if hasAVX2 {
		return sumCompactAVX2(bt, bab, lo, hi, t)
	}
	return sumCompactGo(bt, bab, lo, hi, t)
}

// sumCompactGo is sumCompact in Go.
func sumCompactGo(bt, bab []float64, lo, hi, t float64) (k int, e1, e2, g1, g2 float64) {
	bab = bab[:2*len(bt)]
	for j := range bt {
		x, al, be := bt[j], bab[2*j], bab[2*j+1]
		below := x <= lo
		g1 += maskIf(below, al)
		g2 += maskIf(below, be)
		on := b2i(x < t) &^ b2i(below)
		e1 += maskIf(on == 1, al+t*be)
		e2 += maskIf(on == 1, be)
		bt[k], bab[2*k], bab[2*k+1] = x, al, be
		k += b2i(x < hi) &^ b2i(below)
	}
	return k, e1, e2, g1, g2
}
