package svm

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// exactStep is the minimizer over t >= 0 of the line search's phi, found
// independently: phi' is increasing and linear between the breakpoints
// (z_i - 1) / dz_i, so a binary search over the sorted breakpoints finds the
// piece holding its root, where one linear solve gives it.
func exactStep(w, s, z, dz []float64, c2 float64) float64 {
	var ss, ws float64
	for j := range w {
		ss += s[j] * s[j]
		ws += w[j] * s[j]
	}
	deriv := func(t float64) float64 {
		d := t*ss - ws
		for i := range z {
			if m := 1 - z[i] + t*dz[i]; m > 0 {
				d += c2 * m * dz[i]
			}
		}
		return d
	}
	pts := []float64{0}
	for i := range z {
		if dz[i] != 0 {
			if b := (z[i] - 1) / dz[i]; b > 0 {
				pts = append(pts, b)
			}
		}
	}
	sort.Float64s(pts)
	if deriv(pts[len(pts)-1]) < 0 {
		// The last piece: phi' = a + b t with the slope at a later point.
		t0 := pts[len(pts)-1]
		f0, f1 := deriv(t0), deriv(t0+1)
		return t0 - f0/(f1-f0)
	}
	k := sort.Search(len(pts), func(k int) bool { return deriv(pts[k]) >= 0 })
	if k == 0 {
		return 0 // phi increases from t = 0
	}
	a, b := pts[k-1], pts[k]
	fa, fb := deriv(a), deriv(b)
	return a - fa*(b-a)/(fb-fa)
}

// activeSums returns the sums of the line search over the terms active at
// t = 0: 2C sum (1 - z_i) dz_i and 2C sum dz_i^2 over z_i < 1.
func activeSums(z, dz []float64, c2 float64) (a0, b0 float64) {
	for i, zi := range z {
		if zi < 1 {
			a0 += c2 * (1 - zi) * dz[i]
			b0 += c2 * dz[i] * dz[i]
		}
	}
	return a0, b0
}

// TestLineSearch checks the step against the exact minimizer, and that it
// takes few passes: a Newton step that left the bracket by a rounding error
// at the root used to start a bisection that walked the whole bracket back
// to it (about 12 passes a search on CyTOF, 6 after the fix).
func TestLineSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, p, c2 = 20000, 10, 20.0
	total, terms, searches := 0, 0, 0
	for range 60 {
		w, s := make([]float64, p), make([]float64, p)
		for j := range w {
			w[j] = rng.NormFloat64()
			s[j] = w[j] + 0.3*rng.NormFloat64() // a descent-like direction
		}
		z, dz := make([]float64, n), make([]float64, n)
		for i := range z {
			z[i] = 0.8 + 0.6*rng.NormFloat64()
			dz[i] = 0.4 * rng.NormFloat64()
		}
		want := exactStep(w, s, z, dz, c2)
		if !(want > 0) {
			continue
		}
		a0, b0 := activeSums(z, dz, c2)
		got, evals, visited := lineSearch(w, s, z, dz, c2, a0, b0, newLineScratch(n))
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Fatalf("step %v, exact %v", got, want)
		}
		total += evals
		terms += visited
		searches++
	}
	if searches < 30 {
		t.Fatalf("only %d usable problems", searches)
	}
	mean := float64(total) / float64(searches)
	if mean > 8 {
		t.Errorf("%.1f passes per line search, want <= 8", mean)
	}
	// Terms that keep their sign on the bracket are summed once and not
	// visited again: about 2 full passes' worth of terms instead of one a
	// pass.
	perSearch := float64(terms) / float64(searches) / n
	if perSearch > 3 {
		t.Errorf("%.2f x n terms visited per line search, want <= 3", perSearch)
	}
	t.Logf("%d searches, %.2f passes and %.2f x n terms each", searches, mean, perSearch)

	// Steps beyond 1 (s a fraction of w, few terms): the terms that
	// switch beyond the first bracket are listed and searched too.
	long := 0
	for range 40 {
		const n, p, c2 = 2000, 6, 0.02
		w, s := make([]float64, p), make([]float64, p)
		for j := range w {
			w[j] = rng.NormFloat64()
			s[j] = (0.2 + 0.2*rng.Float64()) * w[j]
		}
		z, dz := make([]float64, n), make([]float64, n)
		for i := range z {
			z[i] = 1 + 0.5*rng.NormFloat64()
			dz[i] = 0.1 * rng.NormFloat64()
		}
		want := exactStep(w, s, z, dz, c2)
		if !(want > 1) {
			continue
		}
		long++
		a0, b0 := activeSums(z, dz, c2)
		got, _, _ := lineSearch(w, s, z, dz, c2, a0, b0, newLineScratch(n))
		if math.Abs(got-want) > 1e-9*want {
			t.Fatalf("long step %v, exact %v", got, want)
		}
	}
	if long < 20 {
		t.Fatalf("only %d problems with a step beyond 1", long)
	}

	// One linear piece with a steep phi' (every term active on [0, 11)):
	// Newton lands on the root, where its next step is below the rounding
	// of t, so the old code bisected its way back from the far end.
	w, s := []float64{3, 1}, []float64{1, 1}
	z, dz := make([]float64, 1000), make([]float64, 1000)
	for i := range z {
		z[i], dz[i] = -10, -1
	}
	want := exactStep(w, s, z, dz, 20)
	a0, b0 := activeSums(z, dz, 20)
	got, evals, _ := lineSearch(w, s, z, dz, 20, a0, b0, newLineScratch(len(z)))
	if math.Abs(got-want) > 1e-12*want || evals > 8 {
		t.Errorf("one piece: step %v in %d passes, want %v in <= 8", got, evals, want)
	}
}

// TestSignedFirst checks signedFirst (the labels' signs applied, then the
// line search's first pass, four rows at a time in assembly where the CPU
// allows) bit for bit against the product by y_i in {-1, +1} followed by
// lineFirst, on values at every edge of its tests: z_i = 1 (u = 0),
// dz_i = +-0, u + dz_i = 0, infinities and NaN, for lengths around
// multiples of 4.
func TestSignedFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 2, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, -1e-300}
	t.Logf("assembly: %v", hasAVX2)
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 13, 1001, 4096} {
		z, dz, y := make([]float64, n), make([]float64, n), make([]int, n)
		for i := range n {
			switch rng.IntN(4) {
			case 0:
				z[i], dz[i] = special[rng.IntN(len(special))], special[rng.IntN(len(special))]
			case 1:
				z[i] = 1 + rng.NormFloat64()
				dz[i] = z[i] - 1 // u + d = 0 for y_i = 1
			default:
				z[i], dz[i] = 1+rng.NormFloat64(), rng.NormFloat64()
			}
			y[i] = rng.IntN(3)
		}
		const k = 1
		want := make([]float64, n)
		for i, v := range dz {
			if y[i] == k {
				want[i] = v
			} else {
				want[i] = v * -1
			}
		}
		ref, got := newLineScratch(n), newLineScratch(n)
		wnb, wnc := lineFirst(z, want, ref)
		nb, nc := signedFirst(z, dz, y, k, got)
		for i := range n {
			if math.Float64bits(dz[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d: dz[%d] = %v, want %v", n, i, dz[i], want[i])
			}
		}
		if nb != wnb || nc != wnc {
			t.Fatalf("n=%d: %d switching and %d later, want %d and %d", n, nb, nc, wnb, wnc)
		}
		for j := range nb {
			if got.br[j] != ref.br[j] {
				t.Fatalf("n=%d: br[%d] = %d, want %d", n, j, got.br[j], ref.br[j])
			}
		}
		for j := range nc {
			if got.cand[j] != ref.cand[j] {
				t.Fatalf("n=%d: cand[%d] = %d, want %d", n, j, got.cand[j], ref.cand[j])
			}
		}
		if n >= 1000 && (nb == 0 || nc == 0 || nb+nc == n) {
			t.Errorf("n=%d: %d switching and %d later: want some of each and some of neither", n, nb, nc)
		}
	}
}

// TestStepMemberships checks stepMemberships (four rows at a time in
// assembly where the CPU allows) bit for bit against its plain loop: the
// step z_i + mt dz_i, the count of z_i < 1 and the rows whose membership
// differs from in, with steps landing exactly on 1, infinities and NaN,
// for lengths around multiples of 4.
func TestStepMemberships(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN()}
	pb := &Problem{}
	for _, n := range []int{0, 1, 3, 4, 6, 9, 1001, 4096} {
		for _, mt := range []float64{-0.75, 0, 1} {
			z, dz, in := make([]float64, n), make([]float64, n), make([]bool, n)
			for i := range n {
				switch rng.IntN(4) {
				case 0:
					z[i], dz[i] = special[rng.IntN(len(special))], special[rng.IntN(len(special))]
				case 1:
					z[i], dz[i] = 0.25, 1 // 0.25 - 0.75 = -0.5, 0.25 + 1 = 1.25
				default:
					z[i], dz[i] = 1+rng.NormFloat64(), rng.NormFloat64()
				}
				in[i] = rng.IntN(2) == 0
			}
			want := append([]float64(nil), z...)
			var wantCh []int
			wantActive := 0
			for i := range want {
				want[i] += mt * dz[i]
				act := want[i] < 1
				if act {
					wantActive++
				}
				if act != in[i] {
					wantCh = append(wantCh, i)
				}
			}
			ch := make([]int, 0, n)
			active := pb.stepMemberships(z, dz, mt, in, &ch)
			for i := range n {
				if math.Float64bits(z[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d mt=%g: z[%d] = %v, want %v", n, mt, i, z[i], want[i])
				}
			}
			if active != wantActive || !slices.Equal(ch, wantCh) {
				t.Fatalf("n=%d mt=%g: %d active, changed %v; want %d, %v", n, mt, active, ch, wantActive, wantCh)
			}
			if n >= 1000 && (len(ch) == 0 || active == 0 || active == n) {
				t.Errorf("n=%d mt=%g: %d changed, %d active: want some of each", n, mt, len(ch), active)
			}
		}
	}
}

// TestSumCompact checks sumCompact (in assembly where the CPU allows) and
// sumCompactGo bit for bit against a plain loop with branches, on
// breakpoints equal to lo, t and hi, infinities and NaN, corrections of
// very different sizes (so that the order of the sums shows), signed
// zeros, for lengths around the edges.
func TestSumCompact(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	const lo, tt, hi = 0.25, 0.5, 1.0
	xs := []float64{lo, tt, hi, math.Nextafter(lo, 0), math.Nextafter(tt, 1), math.Inf(1), math.Inf(-1), math.NaN(), 0, math.Copysign(0, -1)}
	vs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	t.Logf("assembly: %v", hasAVX2)
	for _, n := range []int{0, 1, 2, 5, 1001, 4096} {
		bt, bab := make([]float64, n), make([]float64, 2*n)
		for j := range n {
			if rng.IntN(5) == 0 {
				bt[j] = xs[rng.IntN(len(xs))]
			} else {
				bt[j] = 1.25 * rng.Float64()
			}
			for h := range 2 {
				// Infinities and NaN only in short lists, whose sums
				// they make NaN (compared as NaN).
				if n < 100 && rng.IntN(3) == 0 || rng.IntN(20) == 0 {
					bab[2*j+h] = vs[rng.IntN(len(vs))]
					if n >= 100 {
						bab[2*j+h] = vs[rng.IntN(2)]
					}
				} else {
					bab[2*j+h] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
				}
			}
		}
		// The plain loop.
		var wk int
		var we1, we2, wg1, wg2 float64
		wbt, wbab := slices.Clone(bt), slices.Clone(bab)
		for j := range n {
			x, al, be := bt[j], bab[2*j], bab[2*j+1]
			if x <= lo {
				wg1 += al
				wg2 += be
				continue
			}
			if x < tt {
				we1 += al + tt*be
				we2 += be
			}
			if x < hi {
				wbt[wk], wbab[2*wk], wbab[2*wk+1] = x, al, be
				wk++
			}
		}
		same := func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
		}
		for _, f := range []struct {
			name string
			f    func(bt, bab []float64, lo, hi, t float64) (int, float64, float64, float64, float64)
		}{{"sumCompact", sumCompact}, {"sumCompactGo", sumCompactGo}} {
			gbt, gbab := slices.Clone(bt), slices.Clone(bab)
			k, e1, e2, g1, g2 := f.f(gbt, gbab, lo, hi, tt)
			if k != wk || !same(e1, we1) || !same(e2, we2) || !same(g1, wg1) || !same(g2, wg2) {
				t.Fatalf("%s n=%d: k=%d e=(%v, %v) g=(%v, %v), want k=%d e=(%v, %v) g=(%v, %v)",
					f.name, n, k, e1, e2, g1, g2, wk, we1, we2, wg1, wg2)
			}
			for j := range k {
				if !same(gbt[j], wbt[j]) || !same(gbab[2*j], wbab[2*j]) || !same(gbab[2*j+1], wbab[2*j+1]) {
					t.Fatalf("%s n=%d: term %d = (%v, %v, %v), want (%v, %v, %v)", f.name, n, j,
						gbt[j], gbab[2*j], gbab[2*j+1], wbt[j], wbab[2*j], wbab[2*j+1])
				}
			}
		}
		if n >= 1000 && (wk == 0 || math.IsNaN(we1) || math.IsNaN(wg1)) {
			t.Errorf("n=%d: %d kept, e1 %v, g1 %v: want some kept and finite sums", n, wk, we1, wg1)
		}
	}
}

// BenchmarkSumCompact sums and compacts 3,000 terms, about 30% of them
// below lo, 45% between lo and t, 20% between t and hi and 5% above hi, as
// the line searches of the primal solver on the CyTOF data do; each
// iteration copies the terms back first.
func BenchmarkSumCompact(b *testing.B) {
	const n, lo, tt, hi = 3000, 0.3, 0.75, 0.95
	rng := rand.New(rand.NewPCG(47, 48))
	bt, bab := make([]float64, n), make([]float64, 2*n)
	for j := range n {
		bt[j] = rng.Float64()
		bab[2*j], bab[2*j+1] = rng.NormFloat64(), rng.Float64()
	}
	wbt, wbab := make([]float64, n), make([]float64, 2*n)
	for _, f := range []struct {
		name string
		f    func(bt, bab []float64, lo, hi, t float64) (int, float64, float64, float64, float64)
	}{{"native", sumCompact}, {"go", sumCompactGo}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				copy(wbt, bt)
				copy(wbab, bab)
				f.f(wbt, wbab, lo, hi, tt)
			}
		})
	}
}

// TestListTerms checks listTerms (in assembly where the CPU allows) bit
// for bit against listGo, its plain loop, on margins z_i = 1 (u = 0),
// slopes dz_i = +-0, infinities and NaN, values of very different sizes,
// with repeated and unordered indices.
func TestListTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, 1e300}
	t.Logf("assembly: %v", hasAVX2)
	for _, n := range []int{0, 1, 3, 40, 2000} {
		z, dz := make([]float64, n+5), make([]float64, n+5)
		for i := range z {
			if n < 100 && rng.IntN(3) == 0 {
				z[i], dz[i] = special[rng.IntN(len(special))], special[rng.IntN(len(special))]
			} else {
				z[i] = 1 + rng.NormFloat64()*math.Exp(3*rng.NormFloat64())
				dz[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
		}
		idx := make([]int, n)
		for j := range idx {
			idx[j] = rng.IntN(len(z))
		}
		// Terms with u = 0 exactly, listed first.
		z[0], dz[0], z[1], dz[1], z[2], dz[2] = 1, 0.5, 1, -2, 1, 0
		copy(idx, []int{0, 1, 2})
		for _, c2 := range []float64{0.2, 20} {
			const tt = 0.75
			wbt, wbab := make([]float64, n), make([]float64, 2*n)
			we1, we2 := listGo(idx, z, dz, c2, tt, wbt, wbab)
			bt, bab := make([]float64, n), make([]float64, 2*n)
			e1, e2 := listTerms(idx, z, dz, c2, tt, bt, bab)
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
			}
			if !same(e1, we1) || !same(e2, we2) {
				t.Fatalf("n=%d c2=%v: e = (%v, %v), want (%v, %v)", n, c2, e1, e2, we1, we2)
			}
			for j := range n {
				if !same(bt[j], wbt[j]) || !same(bab[2*j], wbab[2*j]) || !same(bab[2*j+1], wbab[2*j+1]) {
					t.Fatalf("n=%d c2=%v: term %d (row %d) = (%v, %v, %v), want (%v, %v, %v)", n, c2, j, idx[j],
						bt[j], bab[2*j], bab[2*j+1], wbt[j], wbab[2*j], wbab[2*j+1])
				}
			}
			if n >= 1000 && (math.IsNaN(we1) || we2 == 0) {
				t.Errorf("n=%d: sums (%v, %v), want finite and nonzero", n, we1, we2)
			}
		}
	}
}

// TestSplitCand checks splitCand (in assembly where the CPU allows) bit
// for bit against splitCandGo, its plain loop, with terms at the bracket's
// end (u + hi dz_i = 0), u = 0, slopes +-0, infinities and NaN.
func TestSplitCand(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 2, math.Inf(1), math.Inf(-1), math.NaN()}
	t.Logf("assembly: %v", hasAVX2)
	const hi = 2.0
	for _, n := range []int{0, 1, 3, 40, 3000} {
		z, dz := make([]float64, n), make([]float64, n)
		for i := range n {
			switch rng.IntN(4) {
			case 0:
				z[i], dz[i] = special[rng.IntN(len(special))], special[rng.IntN(len(special))]
			case 1:
				z[i] = 1 + rng.NormFloat64()
				dz[i] = (z[i] - 1) / hi // u + hi d = 0 when exact
			default:
				z[i], dz[i] = 1+rng.NormFloat64(), rng.NormFloat64()
			}
		}
		var cand []int
		for i := range n {
			if rng.IntN(3) > 0 {
				cand = append(cand, i)
			}
		}
		wcand, wbr := slices.Clone(cand), make([]int, len(cand))
		wnb, wk := splitCandGo(wcand, wbr, z, dz, hi)
		gcand, gbr := slices.Clone(cand), make([]int, len(cand))
		nb, k := splitCand(gcand, gbr, z, dz, hi)
		if nb != wnb || k != wk || !slices.Equal(gbr[:nb], wbr[:wnb]) || !slices.Equal(gcand[:k], wcand[:wk]) {
			t.Fatalf("n=%d: br %v, cand %v; want %v, %v", n, gbr[:nb], gcand[:k], wbr[:wnb], wcand[:wk])
		}
		if n >= 1000 && (wnb == 0 || wk == 0) {
			t.Errorf("n=%d: %d switching, %d kept: want some of each", n, wnb, wk)
		}
	}
}

// BenchmarkSplitCand splits 10,000 candidates of 20,000 rows, about a
// third of them switching.
func BenchmarkSplitCand(b *testing.B) {
	const n = 20000
	rng := rand.New(rand.NewPCG(53, 54))
	z, dz := make([]float64, n), make([]float64, n)
	var cand []int
	for i := range n {
		z[i], dz[i] = 1+rng.NormFloat64(), rng.NormFloat64()
		if i%2 == 0 {
			cand = append(cand, i)
		}
	}
	wcand, br := make([]int, len(cand)), make([]int, len(cand))
	for _, f := range []struct {
		name string
		f    func(cand, br []int, z, dz []float64, hi float64) (int, int)
	}{{"native", splitCand}, {"go", splitCandGo}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				copy(wcand, cand)
				f.f(wcand, br, z, dz, 2)
			}
		})
	}
}
