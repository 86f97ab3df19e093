package lanczos_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/longtest"
	"github.com/dicalab/dica/lanczos"
	"github.com/dicalab/dica/lanczos/problems"
)

const machEps = 0x1p-52

// checkPairs asserts the whole returned set against the exact top-k
// eigenvalues (with multiplicities), explicit residuals recomputed here with
// extra matvecs, and (B-)orthonormality. bdiag is the diagonal of B (nil for
// B = I) and normB its norm.
func checkPairs(t *testing.T, name string, res *lanczos.Result, apply func(dst, x []float64), bdiag []float64, normA, normB float64, exact []float64, tol float64) {
	t.Helper()
	k := len(exact)
	if len(res.Values) != k {
		t.Fatalf("%s: got %d values, want %d (status %v)", name, len(res.Values), k, res.Status)
	}
	if res.Status != lanczos.Converged || res.Converged != k {
		t.Errorf("%s: status %v, converged %d, want Converged, %d", name, res.Status, res.Converged, k)
	}
	// Residual level asserted: tol, floored at 1e-12 for tol = eps runs
	// (an explicit residual cannot go below rounding).
	rtol := math.Max(tol, 1e-12)
	for i, want := range exact {
		got := res.Values[i]
		if d := math.Abs(got - want); d > rtol*(normA+math.Abs(want)*normB) {
			t.Errorf("%s: value %d = %.17g, want %.17g (diff %.3g)", name, i, got, want, d)
		}
	}
	n, _ := res.Vectors.Dims()
	x := make([]float64, n)
	ax := make([]float64, n)
	bx := make([]float64, n)
	cols := make([][]float64, k)
	bcols := make([][]float64, k)
	for j := 0; j < k; j++ {
		mat.Col(x, j, res.Vectors)
		apply(ax, x)
		for i := range x {
			bx[i] = x[i]
			if bdiag != nil {
				bx[i] *= bdiag[i]
			}
		}
		var r float64
		for i := range x {
			d := ax[i] - res.Values[j]*bx[i]
			r += d * d
		}
		r = math.Sqrt(r)
		if lim := rtol * (normA + math.Abs(res.Values[j])*normB); r > lim {
			t.Errorf("%s: residual %d = %.3g > %.3g", name, j, r, lim)
		}
		if rr := res.Residuals[j]; math.Abs(rr-r) > 1e-10*normA+0.5*r {
			t.Errorf("%s: reported residual %d = %.3g, recomputed %.3g", name, j, rr, r)
		}
		cols[j] = append([]float64(nil), x...)
		bcols[j] = append([]float64(nil), bx...)
	}
	lim := 1e-12 * math.Sqrt(float64(n))
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			var d float64
			for l := range cols[i] {
				d += cols[i][l] * bcols[j][l]
			}
			if i == j {
				d--
			}
			if math.Abs(d) > lim {
				t.Fatalf("%s: (X^T B X - I)[%d,%d] = %.3g > %.3g", name, i, j, d, lim)
			}
		}
	}
}

// suiteCase is one problem of docs/LANCZOS.md with the matvec bound
// asserted at the given tolerance.
type suiteCase struct {
	prob  func() *problems.Problem
	tol   float64
	name  string
	bound int    // matvecs at or below
	why   string // where the bound comes from
	fast  bool   // also in the default suite (else only with -tags long)
}

func suite() []suiteCase {
	gram := func() *problems.Problem { p, _ := problems.GramLowRank(100000, 50, 1); return p }
	geo := func() *problems.Problem { return problems.Geometric(10000, 0.9) }
	top4 := func() *problems.Problem { return problems.TopMultiple(10000) }
	lin := func() *problems.Problem { return problems.Linear(10000) }
	l2 := func() *problems.Problem { return problems.Laplacian2D(100) }
	l1 := func() *problems.Problem { return problems.Laplacian1D(1000) }
	return []suiteCase{
		// At tol = eps (ARPACK's default): every problem but the clustered
		// top (TestClusteredCheckCost).
		{geo, machEps, "diag(0.9^i)", 52, "ARPACK tol=eps", true},
		{top4, machEps, "top eigenvalue x4", 6155, "ARPACK tol=eps", false},
		{gram, machEps, "U U^T", 36, "ARPACK tol=eps", false},
		{lin, machEps, "diag(1..n)", 3851, "ARPACK tol=eps", false},
		{l2, machEps, "2-D Laplacian", 2485, "ARPACK tol=eps", false},
		{l1, machEps, "1-D Laplacian", 6637, "ARPACK tol=eps", false},
		// At tol = 1e-8: the same.
		{geo, 1e-8, "diag(0.9^i)", 37, "ARPACK tol=1e-8", true},
		{gram, 1e-8, "U U^T", 27, "ARPACK tol=1e-8", false},
		{lin, 1e-8, "diag(1..n)", 2206, "ARPACK tol=1e-8", false},
		{l2, 1e-8, "2-D Laplacian", 3231, "ARPACK tol=1e-8", false},
		{l1, 1e-8, "1-D Laplacian", 3600, "ARPACK tol=1e-8", false},
		{top4, 1e-8, "top eigenvalue x4", 1600, "Spectra tol=1e-10 (no ARPACK 1e-8 run)", false},
		// The 2-D Laplacian 300 x 300: TestLaplacian300.
	}
}

// TestSuite holds the solver to the anchors' matvec counts on the problems
// of docs/LANCZOS.md (k = 10 largest) and asserts the whole returned set. The
// default suite runs the cheap problems; TestSuiteSmall covers the others
// at small sizes.
func TestSuite(t *testing.T) {
	for _, c := range suite() {
		name := c.name + "/tol=" + fmtTol(c.tol)
		t.Run(name, func(t *testing.T) {
			if !c.fast {
				longtest.Skip(t)
			}
			p := c.prob()
			if p.Name != c.name {
				t.Fatalf("problem %q, case %q", p.Name, c.name)
			}
			res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 10, Tol: c.tol, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, name, res, p.Apply, nil, p.NormA, 1, p.Top(10), c.tol)
			if res.Matvecs > c.bound {
				t.Errorf("%s: %d matvecs > %d (%s)", name, res.Matvecs, c.bound, c.why)
			}
			t.Logf("%s: %d matvecs (bound %d, %s), %d restarts", name, res.Matvecs, c.bound, c.why, res.Restarts)
		})
	}
}

// TestSuiteSmall: every problem class of the suite at a size that solves in
// milliseconds, the whole returned set asserted (multiplicities included)
// at both tolerances, so that the default suite fails on a broken solver.
// The matvec counts are not asserted: the anchors measured the full sizes.
func TestSuiteSmall(t *testing.T) {
	gram := func() *problems.Problem { p, _ := problems.GramLowRank(3000, 30, 2); return p }
	for _, prob := range []func() *problems.Problem{
		func() *problems.Problem { return problems.Clustered(2000, 2) },
		func() *problems.Problem { return problems.TopMultiple(800) },
		func() *problems.Problem { return problems.Linear(800) },
		func() *problems.Problem { return problems.Laplacian2D(24) },
		func() *problems.Problem { return problems.Laplacian1D(300) },
		func() *problems.Problem { return problems.Cycle(400) },
		func() *problems.Problem { return problems.GOE(300, 2) },
		gram,
	} {
		p := prob()
		for _, tol := range []float64{1e-8, machEps} {
			name := p.Name + "/tol=" + fmtTol(tol)
			res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 10, Tol: tol, Seed: 3})
			if err != nil {
				t.Fatal(name, err)
			}
			checkPairs(t, name, res, p.Apply, nil, p.NormA, 1, p.Top(10), tol)
			t.Logf("%s (n = %d): %d matvecs", name, p.N, res.Matvecs)
		}
	}
}

// The 2-D Laplacian 300 x 300 (n = 90,000), whose top eigenvalues are exact
// doubles: ARPACK (ncv 21, tol 1e-8) reports success with three copies
// missing and Spectra (ncv 40, tol 1e-8) also misses copies
// (docs/LANCZOS.md). The whole returned set, multiplicities included, is asserted with truly
// default settings (Tol 1e-10, seed 0), at tol 1e-8 (the anchors'
// configuration) and at tol eps (ARPACK's default). Matvec bounds: the
// cheapest correct anchor run, ARPACK ncv 40 at tol 1e-8 (3339, also
// applied to the default tolerance 1e-10: Spectra's correct ncv-40 run there
// takes 3599), and ARPACK's correct run at tol eps (15,840). A long test:
// its four solves take the better part of a minute on 2 cores.
// TestMultiplicityDefault asserts the same property on the 100 x 100 grid.
func TestLaplacian300(t *testing.T) {
	longtest.Skip(t)
	p := problems.Laplacian2D(300)
	exact := p.Top(11)
	// The top ten hold exact doubles, and the value comparison of checkPairs
	// (tol (||A|| + |lambda|)) is far finer than the distinct spacing, so it
	// asserts the multiset.
	doubles, gap := 0, math.Inf(1)
	for i := 1; i < len(exact); i++ {
		if exact[i] == exact[i-1] {
			if i < 10 {
				doubles++
			}
		} else {
			gap = math.Min(gap, exact[i-1]-exact[i])
		}
	}
	if doubles < 4 || 2*1e-8*2*p.NormA >= gap {
		t.Fatalf("test problem: %d doubles in the top ten, distinct gap %.3g", doubles, gap)
	}
	for _, c := range []struct {
		name  string
		s     lanczos.Settings
		tol   float64
		bound int
		why   string
	}{
		{"default", lanczos.Settings{K: 10}, lanczos.DefaultTol, 3339, "ARPACK cheapest correct (ncv 40, tol 1e-8)"},
		{"tol=1e-8", lanczos.Settings{K: 10, Tol: 1e-8, Seed: 1}, 1e-8, 3339, "ARPACK cheapest correct (ncv 40, tol 1e-8)"},
		{"tol=eps", lanczos.Settings{K: 10, Tol: machEps}, machEps, 15840, "ARPACK tol=eps (correct)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The solves are partly serial (the stencil, the projected
			// problem): running them side by side uses both cores.
			t.Parallel()
			res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), c.s)
			if err != nil {
				t.Fatal(err)
			}
			name := "2-D Laplacian 300/" + c.name
			checkPairs(t, name, res, p.Apply, nil, p.NormA, 1, exact[:10], c.tol)
			if res.Matvecs > c.bound {
				t.Errorf("%s: %d matvecs > %d (%s)", name, res.Matvecs, c.bound, c.why)
			}
			t.Logf("%s: %d matvecs (bound %d, %s), %d restarts", name, res.Matvecs, c.bound, c.why, res.Restarts)
		})
	}
	// Guard pairs and the default NCV alone are not enough: without the
	// deflated check, seed 1 at tol 1e-8 misses copies (eigenvalue error
	// 1.2e-4 in 1652 matvecs; seed 3 too, seed 2 not). This is why the
	// check is on by default although it puts the clustered top above
	// ARPACK's count (TestClusteredCheckCost). Should this run ever find
	// every copy, that trade-off is worth revisiting.
	t.Run("no check", func(t *testing.T) {
		t.Parallel()
		res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 10, Tol: 1e-8, Seed: 1, NoDeflatedCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i, v := range res.Values {
			worst = math.Max(worst, math.Abs(v-exact[i])/exact[i])
		}
		if worst < 1e-6 {
			t.Errorf("NoDeflatedCheck found every copy (largest relative error %.2g in %d matvecs)", worst, res.Matvecs)
		}
		t.Logf("NoDeflatedCheck: largest relative eigenvalue error %.2g in %d matvecs", worst, res.Matvecs)
	})
}

func fmtTol(tol float64) string {
	if tol == machEps {
		return "eps"
	}
	return "1e-8"
}

// The clustered top is the one problem of the suite above ARPACK's count,
// by the cost of the certified deflated check (docs/LANCZOS.md, "The cost of
// the check", gives the reasons no cheaper check keeps the certificate):
// the main iteration alone (NoDeflatedCheck) is held to ARPACK's count,
// the check to its 14 steps, and the default to ARPACK's count plus 12
// (tol 1e-8) and 7 (tol eps). Turning the check off by default instead
// would miss copies on the 2-D Laplacian (TestLaplacian300, "no check").
func TestClusteredCheckCost(t *testing.T) {
	p := problems.Clustered(10000, 1)
	cases := []struct {
		tol          float64
		arpack, over int
	}{
		{1e-8, 207, 12},
		{machEps, 239, 7},
	}
	const checkSteps = 14
	for _, c := range cases {
		name := p.Name + "/tol=" + fmtTol(c.tol)
		main := 0
		for _, nocheck := range []bool{true, false} {
			res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 10, Tol: c.tol, Seed: 1, NoDeflatedCheck: nocheck})
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, name, res, p.Apply, nil, p.NormA, 1, p.Top(10), c.tol)
			bound := c.arpack
			if nocheck {
				main = res.Matvecs
			} else {
				bound += c.over
				if res.Matvecs > main+checkSteps {
					t.Errorf("%s: the deflated check took %d matvecs > %d", name, res.Matvecs-main, checkSteps)
				}
			}
			if res.Matvecs > bound {
				t.Errorf("%s (NoDeflatedCheck %v): %d matvecs > %d", name, nocheck, res.Matvecs, bound)
			}
			t.Logf("%s (NoDeflatedCheck %v): %d matvecs, ARPACK %d", name, nocheck, res.Matvecs, c.arpack)
		}
	}
}

// The clustered top with its top value doubled (the copy replaces one value
// of the rest): the certified check must find the second copy. With
// CheckMiss = 1e-3 it does on every seed (two seeds in the default suite,
// ten in the long one); docs/LANCZOS.md records how often a check without
// the certificate misses it.
func TestClusteredDouble(t *testing.T) {
	const n = 10000
	rng := rand.New(rand.NewPCG(1, 1))
	d := make([]float64, n)
	for i := range d {
		if i < 10 {
			d[i] = 1 + 1e-6*float64(i+1)
		} else {
			d[i] = 0.9 * rng.Float64()
		}
	}
	d[10] = d[9]
	want := append([]float64(nil), d...)
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))
	want = want[:10]
	if want[0] != want[1] {
		t.Fatal("no double")
	}
	apply := func(dst, x []float64) {
		for i, v := range d {
			dst[i] = v * x[i]
		}
	}
	seeds := uint64(2)
	if longtest.Enabled {
		seeds = 10
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		res, err := lanczos.Sym(context.Background(), lanczos.Func(n, apply), lanczos.Settings{K: 10, Tol: 1e-8, Seed: seed, CheckMiss: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		checkPairs(t, "clustered double", res, apply, nil, want[0], 1, want, 1e-8)
		// The values are 1e-6 apart: resolve them, not just the residuals.
		for i, v := range res.Values {
			if math.Abs(v-want[i]) > 1e-9 {
				t.Errorf("seed %d: value %d = %.10f, want %.10f", seed, i, v, want[i])
			}
		}
	}
}

// With ARPACK's own basis size, NCV = 2 K + 1 = 21 (guards and deflated
// check on), the restart cap (keepMax) keeps the solver at or below ARPACK's
// count where the deflated check is cheap relative to the main iteration
// (the 2-D Laplacian in the long suite only).
func TestSmallNCV(t *testing.T) {
	for _, c := range []struct {
		p     *problems.Problem
		bound int
		long  bool
	}{
		{problems.Linear(10000), 2206, false},
		{problems.Laplacian2D(100), 3231, true},
	} {
		if c.long && !longtest.Enabled {
			continue
		}
		res, err := lanczos.Sym(context.Background(), lanczos.Func(c.p.N, c.p.Apply), lanczos.Settings{K: 10, Tol: 1e-8, Seed: 1, NCV: 21})
		if err != nil {
			t.Fatal(err)
		}
		name := c.p.Name + "/NCV=21"
		checkPairs(t, name, res, c.p.Apply, nil, c.p.NormA, 1, c.p.Top(10), 1e-8)
		if res.Matvecs > c.bound {
			t.Errorf("%s: %d matvecs > ARPACK %d", name, res.Matvecs, c.bound)
		}
		t.Logf("%s: %d matvecs (ARPACK, NCV 21: %d)", name, res.Matvecs, c.bound)
	}
}

// GOE n = 2000 as in docs/LANCZOS.md: the whole returned set against dense
// mat.EigenSym (values only, about 4 s), residuals and orthonormality, at
// ARPACK's two tolerances with its counts as bounds. A long test
// (TestSuiteSmall solves GOE 300).
func TestGOE(t *testing.T) {
	longtest.Skip(t)
	p := problems.GOE(2000, 1)
	exact := p.Top(10)
	for _, c := range []struct {
		tol   float64
		bound int
	}{
		{machEps, p.ArpackEps},
		{1e-8, p.Arpack1e8},
	} {
		res, err := lanczos.Sym(context.Background(), lanczos.Dense(p.Sym), lanczos.Settings{K: 10, Tol: c.tol, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		name := "GOE 2000/tol=" + fmtTol(c.tol)
		checkPairs(t, name, res, p.Apply, nil, p.NormA, 1, exact, c.tol)
		if res.Matvecs > c.bound {
			t.Errorf("%s: %d matvecs > ARPACK %d", name, res.Matvecs, c.bound)
		}
		t.Logf("%s: %d matvecs (ARPACK %d)", name, res.Matvecs, c.bound)
	}
}

// TestMikota: the generalized pair in Cholesky and B-inner-product modes,
// at ARPACK's two tolerances with its counts as bounds (tol eps in the long
// suite only).
func TestMikota(t *testing.T) {
	p := problems.Mikota(1000)
	n := p.N
	bsym := mat.NewSymDense(n, nil)
	binv := make([]float64, n)
	for i, x := range p.BDiag {
		bsym.SetSym(i, i, x)
		binv[i] = 1 / x
	}
	diagOp := func(d []float64) lanczos.Operator {
		return lanczos.Func(n, func(dst, x []float64) {
			for i := range x {
				dst[i] = d[i] * x[i]
			}
		})
	}
	a := lanczos.Func(n, p.Apply)
	normB := 1.0
	for _, mc := range []struct {
		mode  string
		tol   float64
		bound int
	}{
		{"Cholesky", 1e-8, p.Arpack1e8}, {"B-inner", 1e-8, p.Arpack1e8},
		{"Cholesky", machEps, p.ArpackEps}, {"B-inner", machEps, p.ArpackEps},
	} {
		if mc.tol == machEps && !longtest.Enabled {
			continue
		}
		mode := mc.mode
		s := lanczos.Settings{K: 10, Tol: mc.tol, Seed: 1}
		var res *lanczos.Result
		var err error
		if mode == "Cholesky" {
			res, err = lanczos.GenSymChol(context.Background(), a, bsym, s)
		} else {
			res, err = lanczos.GenSymBInv(context.Background(), a, diagOp(p.BDiag), diagOp(binv), s)
		}
		if err != nil {
			t.Fatal(err)
		}
		// ||A|| of K is at most 4n.
		checkPairs(t, "Mikota/"+mode, res, p.Apply, p.BDiag, 4*float64(n), normB, p.Top(10), mc.tol)
		if res.Matvecs > mc.bound {
			t.Errorf("Mikota/%s tol %g: %d matvecs > ARPACK %d", mode, mc.tol, res.Matvecs, mc.bound)
		}
		t.Logf("Mikota/%s tol %g: %d matvecs (ARPACK: %d)", mode, mc.tol, res.Matvecs, mc.bound)
	}
}

func randSym(n int, seed uint64) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, 9))
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, rng.NormFloat64())
		}
	}
	return s
}

func denseValues(t *testing.T, a mat.Symmetric) ([]float64, *mat.Dense) {
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		t.Fatal("EigenSym failed")
	}
	var v mat.Dense
	es.VectorsTo(&v)
	return es.Values(nil), &v
}

func TestRandomSymVsEigenSym(t *testing.T) {
	for _, c := range []struct {
		n, k  int
		which lanczos.Which
		seed  uint64
	}{
		{300, 10, lanczos.Largest, 1},
		{300, 10, lanczos.Smallest, 2},
		{120, 30, lanczos.Largest, 3},
		{25, 20, lanczos.Smallest, 4}, // basis covers the whole space
	} {
		a := randSym(c.n, c.seed)
		vals, vecs := denseValues(t, a)
		want := make([]float64, c.k)
		for i := range want {
			if c.which == lanczos.Largest {
				want[i] = vals[c.n-1-i]
			} else {
				want[i] = vals[i]
			}
		}
		normA := math.Max(math.Abs(vals[0]), math.Abs(vals[c.n-1]))
		res, err := lanczos.Sym(context.Background(), lanczos.Dense(a), lanczos.Settings{K: c.k, Which: c.which, Tol: 1e-10, Seed: c.seed})
		if err != nil {
			t.Fatal(err)
		}
		apply := func(dst, x []float64) { lanczos.Dense(a).Apply(dst, x) }
		checkPairs(t, "random sym", res, apply, nil, normA, 1, want, 1e-10)
		// Vectors agree with EigenSym's up to sign (simple eigenvalues).
		for j := 0; j < c.k; j++ {
			col := c.n - 1 - j
			if c.which == lanczos.Smallest {
				col = j
			}
			d := mat.Dot(res.Vectors.ColView(j), vecs.ColView(col))
			if math.Abs(math.Abs(d)-1) > 1e-8 {
				t.Errorf("n=%d k=%d: |<x_%d, u>| = %v, want 1", c.n, c.k, j, math.Abs(d))
			}
		}
	}
}

// denseGen returns the k largest eigenvalues of A x = lambda B x by dense
// Cholesky reduction.
func denseGen(t *testing.T, a, b *mat.SymDense, k int) []float64 {
	n := a.SymmetricDim()
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		t.Fatal("B not SPD")
	}
	var l mat.TriDense
	ch.LTo(&l)
	var li mat.TriDense
	if err := li.InverseTri(&l); err != nil {
		t.Fatal(err)
	}
	var c1, c2 mat.Dense
	c1.Mul(&li, a)
	c2.Mul(&c1, li.T())
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, 0.5*(c2.At(i, j)+c2.At(j, i)))
		}
	}
	vals, _ := denseValues(t, c)
	out := make([]float64, k)
	for i := range out {
		out[i] = vals[n-1-i]
	}
	return out
}

func TestGeneralizedVsDense(t *testing.T) {
	const n, r, k = 200, 5, 8
	rng := rand.New(rand.NewPCG(7, 7))
	a := randSym(n, 11)
	v := mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			v.Set(i, j, rng.NormFloat64())
		}
	}
	const alpha = 0.5
	b := mat.NewSymDense(n, nil)
	b.SymOuterK(1, v)
	for i := 0; i < n; i++ {
		b.SetSym(i, i, b.At(i, i)+alpha)
	}
	want := denseGen(t, a, b, k)
	vals, _ := denseValues(t, a)
	normA := math.Max(-vals[0], vals[n-1])
	bv, _ := denseValues(t, b)
	normB := bv[n-1]
	var binv mat.SymDense
	var ch mat.Cholesky
	ch.Factorize(b)
	if err := ch.InverseTo(&binv); err != nil {
		t.Fatal(err)
	}
	s := lanczos.Settings{K: k, Tol: 1e-10, Seed: 3}
	ctx := context.Background()
	type run struct {
		name string
		f    func() (*lanczos.Result, error)
	}
	for _, rn := range []run{
		{"Cholesky", func() (*lanczos.Result, error) { return lanczos.GenSymChol(ctx, lanczos.Dense(a), b, s) }},
		{"B-inner", func() (*lanczos.Result, error) {
			return lanczos.GenSymBInv(ctx, lanczos.Dense(a), lanczos.Dense(b), lanczos.Dense(&binv), s)
		}},
		{"LowRank", func() (*lanczos.Result, error) { return lanczos.GenSymLowRank(ctx, lanczos.Dense(a), alpha, v, s) }},
	} {
		res, err := rn.f()
		if err != nil {
			t.Fatal(rn.name, err)
		}
		checkGen(t, rn.name, res, a, b, normA, normB, want, 1e-10)
	}
	// Smallest, Cholesky mode, against the dense reduction of (-A, B).
	var neg mat.SymDense
	neg.ScaleSym(-1, a)
	wantNeg := denseGen(t, &neg, b, k)
	sm := s
	sm.Which = lanczos.Smallest
	res, err := lanczos.GenSymChol(ctx, lanczos.Dense(a), b, sm)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wantNeg {
		wantNeg[i] = -wantNeg[i]
	}
	checkGen(t, "Cholesky smallest", res, a, b, normA, normB, wantNeg, 1e-10)

	// B = alpha I (V nil) against the scaled standard problem.
	res, err = lanczos.GenSymLowRank(ctx, lanczos.Dense(a), 2, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < k; i++ {
		if w := vals[n-1-i] / 2; math.Abs(res.Values[i]-w) > 1e-9*normA {
			t.Errorf("B = 2 I: value %d = %v, want %v", i, res.Values[i], w)
		}
	}
}

func checkGen(t *testing.T, name string, res *lanczos.Result, a, b *mat.SymDense, normA, normB float64, want []float64, tol float64) {
	t.Helper()
	k := len(want)
	if len(res.Values) != k || res.Status != lanczos.Converged {
		t.Fatalf("%s: %d values, status %v", name, len(res.Values), res.Status)
	}
	for i := range want {
		if d := math.Abs(res.Values[i] - want[i]); d > tol*(normA+math.Abs(want[i])*normB) {
			t.Errorf("%s: value %d = %v, want %v", name, i, res.Values[i], want[i])
		}
	}
	n := a.SymmetricDim()
	var ax, bx, r mat.Dense
	ax.Mul(a, res.Vectors)
	bx.Mul(b, res.Vectors)
	for j := 0; j < k; j++ {
		var s float64
		for i := 0; i < n; i++ {
			d := ax.At(i, j) - res.Values[j]*bx.At(i, j)
			s += d * d
		}
		if s = math.Sqrt(s); s > tol*(normA+math.Abs(res.Values[j])*normB) {
			t.Errorf("%s: residual %d = %.3g", name, j, s)
		}
		if math.Abs(s-res.Residuals[j]) > 1e-9*normA+0.5*s {
			t.Errorf("%s: reported residual %d = %.3g, recomputed %.3g", name, j, res.Residuals[j], s)
		}
	}
	r.Mul(res.Vectors.T(), &bx)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			d := r.At(i, j)
			if i == j {
				d--
			}
			if math.Abs(d) > 1e-12*math.Sqrt(float64(n)) {
				t.Errorf("%s: (X^T B X - I)[%d,%d] = %.3g", name, i, j, d)
			}
		}
	}
}

func TestLowRankExhausted(t *testing.T) {
	const n, r = 500, 3
	rng := rand.New(rand.NewPCG(5, 5))
	u := mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			u.Set(i, j, rng.NormFloat64())
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, u.T())
	vals, _ := denseValues(t, &g)
	op := lanczos.UUT(u)
	for _, which := range []lanczos.Which{lanczos.Largest, lanczos.Smallest} {
		res, err := lanczos.Sym(context.Background(), op, lanczos.Settings{K: 10, Which: which, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != lanczos.ReachableSpaceExhausted || len(res.Values) != r {
			t.Fatalf("which %v: status %v with %d values, want ReachableSpaceExhausted with %d", which, res.Status, len(res.Values), r)
		}
		got := append([]float64(nil), res.Values...)
		sort.Float64s(got)
		for i := range got {
			if math.Abs(got[i]-vals[i]) > 1e-10*vals[r-1] {
				t.Errorf("value %d = %v, want %v", i, got[i], vals[i])
			}
		}
		if res.Matvecs > 10 {
			t.Errorf("rank-3 operator took %d matvecs", res.Matvecs)
		}
	}
	// K > n: all n pairs, and the status says fewer than K exist.
	small := randSym(6, 3)
	sv, _ := denseValues(t, small)
	res, err := lanczos.Sym(context.Background(), lanczos.Dense(small), lanczos.Settings{K: 9, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lanczos.ReachableSpaceExhausted || len(res.Values) != 6 {
		t.Fatalf("K > n: status %v, %d values", res.Status, len(res.Values))
	}
	for i, v := range res.Values {
		if math.Abs(v-sv[5-i]) > 1e-12*math.Abs(sv[0]+sv[5]+10) {
			t.Errorf("K > n: value %d = %v, want %v", i, v, sv[5-i])
		}
	}
	// Asked for exactly the rank: converged normally.
	res, err = lanczos.Sym(context.Background(), op, lanczos.Settings{K: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lanczos.Converged || len(res.Values) != 3 {
		t.Errorf("k = rank: status %v, %d values", res.Status, len(res.Values))
	}
}

func TestDeterminismAndConcurrency(t *testing.T) {
	p := problems.Laplacian2D(40)
	a := lanczos.Func(p.N, p.Apply)
	s := lanczos.Settings{K: 6, Tol: 1e-9, Seed: 42}
	ref, err := lanczos.Sym(context.Background(), a, s)
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "2-D 40", ref, p.Apply, nil, p.NormA, 1, p.Top(6), 1e-9)
	const g = 4
	out := make([]*lanczos.Result, g)
	var wg sync.WaitGroup
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i], _ = lanczos.Sym(context.Background(), a, s)
		}(i)
	}
	wg.Wait()
	for i, r := range out {
		if r == nil || r.Matvecs != ref.Matvecs || !mat.Equal(r.Vectors, ref.Vectors) {
			t.Fatalf("run %d differs from the serial run", i)
		}
		for j := range r.Values {
			if math.Float64bits(r.Values[j]) != math.Float64bits(ref.Values[j]) {
				t.Fatalf("run %d value %d not bit-identical", i, j)
			}
		}
	}
	// The parallel dense adapter shared by concurrent solves.
	d := lanczos.Dense(randSym(300, 5))
	ds := lanczos.Settings{K: 5, Seed: 1}
	dref, err := lanczos.Sym(context.Background(), d, ds)
	if err != nil {
		t.Fatal(err)
	}
	dout := make([]*lanczos.Result, g)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			dout[i], _ = lanczos.Sym(context.Background(), d, ds)
		}(i)
	}
	wg.Wait()
	for i, r := range dout {
		if r == nil || r.Matvecs != dref.Matvecs || !mat.Equal(r.Vectors, dref.Vectors) || !equalBits(r.Values, dref.Values) {
			t.Fatalf("dense run %d differs from the serial run", i)
		}
	}
	// Large n: the parallel Gram-Schmidt path, concurrent solves.
	big := problems.Geometric(40000, 0.8)
	bs := lanczos.Settings{K: 4, Tol: 1e-10, Seed: 3}
	bref, err := lanczos.Sym(context.Background(), lanczos.Func(big.N, big.Apply), bs)
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "geometric 40000", bref, big.Apply, nil, big.NormA, 1, big.Top(4), 1e-10)
	bout := make([]*lanczos.Result, 2)
	for i := range bout {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			bout[i], _ = lanczos.Sym(context.Background(), lanczos.Func(big.N, big.Apply), bs)
		}(i)
	}
	wg.Wait()
	for i, r := range bout {
		if r == nil || r.Matvecs != bref.Matvecs || !mat.Equal(r.Vectors, bref.Vectors) || !equalBits(r.Values, bref.Values) {
			t.Fatalf("large-n run %d differs from the serial run", i)
		}
	}
	// A different seed still gives the same answer.
	s.Seed = 43
	other, err := lanczos.Sym(context.Background(), a, s)
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "2-D 40 seed 43", other, p.Apply, nil, p.NormA, 1, p.Top(6), 1e-9)
}

func TestSmallest(t *testing.T) {
	p := problems.Laplacian1D(400)
	res, err := lanczos.Sym(context.Background(), lanczos.Func(p.N, p.Apply), lanczos.Settings{K: 5, Which: lanczos.Smallest, Tol: 1e-8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 5)
	for j := range want {
		s := math.Sin(float64(j+1) * math.Pi / float64(2*(p.N+1)))
		want[j] = 4 * s * s
	}
	checkPairs(t, "1-D smallest", res, p.Apply, nil, p.NormA, 1, want, 1e-8)

	// Smallest with exact doubles and a zero eigenvalue: the cycle graph
	// Laplacian, 0 then pairs 2 - 2 cos(2 pi j / n).
	nc := 300
	if longtest.Enabled {
		nc = 1000
	}
	c := problems.Cycle(nc)
	want = []float64{0}
	for j := 1; len(want) < 7; j++ {
		d := 2 - 2*math.Cos(2*math.Pi*float64(j)/float64(nc))
		want = append(want, d, d)
	}
	want = want[:7]
	res, err = lanczos.Sym(context.Background(), lanczos.Func(c.N, c.Apply), lanczos.Settings{K: 7, Which: lanczos.Smallest, Tol: 1e-8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "cycle smallest", res, c.Apply, nil, c.NormA, 1, want, 1e-8)
}

func TestStartBudgetAndErrors(t *testing.T) {
	p := problems.Linear(2000)
	a := lanczos.Func(p.N, p.Apply)
	ctx := context.Background()
	res, err := lanczos.Sym(ctx, a, lanczos.Settings{K: 5, MaxMatvecs: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lanczos.BudgetExceeded || res.Matvecs != 40 || res.Converged >= 5 {
		t.Errorf("budget: status %v, %d matvecs, %d converged", res.Status, res.Matvecs, res.Converged)
	}
	start := make([]float64, p.N)
	for i := range start {
		start[i] = 1
	}
	res, err = lanczos.Sym(ctx, a, lanczos.Settings{K: 3, Start: start, Tol: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "start", res, p.Apply, nil, p.NormA, 1, p.Top(3), 1e-8)

	// A start vector in an invariant subspace (an eigenvector): breakdown
	// at once, orthogonal reseeding, and the right answer.
	e1 := make([]float64, p.N)
	e1[0] = 1
	res, err = lanczos.Sym(ctx, a, lanczos.Settings{K: 3, Start: e1, Tol: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "start e1", res, p.Apply, nil, p.NormA, 1, p.Top(3), 1e-8)
	// K = 1, Smallest.
	res, err = lanczos.Sym(ctx, a, lanczos.Settings{K: 1, Which: lanczos.Smallest, Tol: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "K = 1 smallest", res, p.Apply, nil, p.NormA, 1, []float64{1}, 1e-8)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := lanczos.Sym(cancelled, a, lanczos.Settings{K: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	nan := lanczos.Func(10, func(dst, x []float64) {
		for i := range dst {
			dst[i] = math.NaN()
		}
	})
	for _, c := range []struct {
		name string
		a    lanczos.Operator
		s    lanczos.Settings
	}{
		{"K = 0", a, lanczos.Settings{}},
		{"NCV too small", a, lanczos.Settings{K: 5, NCV: 6}},
		{"bad Start", a, lanczos.Settings{K: 5, Start: []float64{1}}},
		{"zero Start", a, lanczos.Settings{K: 5, Start: make([]float64, p.N)}},
		{"negative Tol", a, lanczos.Settings{K: 5, Tol: -1}},
		{"CheckMiss = 1", a, lanczos.Settings{K: 5, CheckMiss: 1}},
		{"negative CheckMiss", a, lanczos.Settings{K: 5, CheckMiss: -0.1}},
		{"NaN CheckMiss", a, lanczos.Settings{K: 5, CheckMiss: math.NaN()}},
		{"NaN operator", nan, lanczos.Settings{K: 2}},
		{"nil operator", nil, lanczos.Settings{K: 2}},
		{"Func dimension 0", lanczos.Func(0, p.Apply), lanczos.Settings{K: 1}},
		{"Func dimension -3", lanczos.Func(-3, p.Apply), lanczos.Settings{K: 1}},
		{"Func nil function", lanczos.Func(p.N, nil), lanczos.Settings{K: 2}},
	} {
		if _, err := lanczos.Sym(ctx, c.a, c.s); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := lanczos.GenSymLowRank(ctx, a, 0, nil, lanczos.Settings{K: 2}); err == nil {
		t.Error("alpha = 0: no error")
	}
	if _, err := lanczos.GenSymLowRank(ctx, lanczos.Func(0, p.Apply), 1, nil, lanczos.Settings{K: 1}); err == nil {
		t.Error("GenSymLowRank, Func dimension 0: no error")
	}
	if _, err := lanczos.GenSymBInv(ctx, a, lanczos.Func(p.N, nil), a, lanczos.Settings{K: 2}); err == nil {
		t.Error("GenSymBInv, Func nil B: no error")
	}
	if _, err := lanczos.GenSymChol(ctx, lanczos.Func(-1, p.Apply), mat.NewSymDense(1, nil), lanczos.Settings{K: 1}); err == nil {
		t.Error("GenSymChol, Func dimension -1: no error")
	}
	notSPD := mat.NewSymDense(p.N, nil)
	if _, err := lanczos.GenSymChol(ctx, a, notSPD, lanczos.Settings{K: 2}); err == nil {
		t.Error("singular B: no error")
	}
}

// Without guards and the deflated check (ARPACK-like settings), the 2-D
// Laplacian's exact doubles can be missed; the default settings must get
// the whole set. The ARPACK-like run is reported, not asserted. A long test
// (TestSuiteSmall asserts the same on a 24 x 24 grid and a cycle of 400).
func TestMultiplicityDefault(t *testing.T) {
	longtest.Skip(t)
	p := problems.Laplacian2D(100)
	a := lanczos.Func(p.N, p.Apply)
	res, err := lanczos.Sym(context.Background(), a, lanczos.Settings{K: 10, Tol: 1e-8, Seed: 7, NCV: 21, Guard: -1, NoDeflatedCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	exact := p.Top(10)
	var maxErr float64
	for i, v := range res.Values {
		maxErr = math.Max(maxErr, math.Abs(v-exact[i]))
	}
	t.Logf("ARPACK-like settings: %d matvecs, max eigenvalue error %.2g", res.Matvecs, maxErr)
	for _, seed := range []uint64{1, 2, 7} {
		res, err := lanczos.Sym(context.Background(), a, lanczos.Settings{K: 10, Tol: 1e-8, Seed: seed})
		res, err = lanczos.Sym(context.Background(), a, lanczos.Settings{K: 10, Tol: 1e-8, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		checkPairs(t, "2-D 100 default", res, p.Apply, nil, p.NormA, 1, exact, 1e-8)
	}
	// The cycle graph Laplacian: every eigenvalue but the top one is an
	// exact double, and without the deflated check copies are missed.
	c := problems.Cycle(1000)
	for _, seed := range []uint64{1, 2} {
		res, err = lanczos.Sym(context.Background(), lanczos.Func(c.N, c.Apply), lanczos.Settings{K: 10, Tol: 1e-8, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		checkPairs(t, "cycle 1000 default", res, c.Apply, nil, c.NormA, 1, c.Top(10), 1e-8)
		t.Logf("cycle 1000 seed %d: %d matvecs", seed, res.Matvecs)
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// The DICA shape: A = U diag(s) U^T of rank r, B = alpha I + V V^T, against
// the dense Cholesky reduction; asked for more than r pairs, the solvers
// return the r nonzero ones and say so.
func TestLowRankPencil(t *testing.T) {
	const n, r, rv, alpha = 400, 6, 4, 0.3
	rng := rand.New(rand.NewPCG(21, 21))
	u := mat.NewDense(n, r, nil)
	v := mat.NewDense(n, rv, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			u.Set(i, j, rng.NormFloat64())
		}
		for j := 0; j < rv; j++ {
			v.Set(i, j, rng.NormFloat64())
		}
	}
	s := []float64{5, 4, 3, 2, 1, 0.5}
	aop := lanczos.LowRank{U: u, S: s}
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var x float64
			for l := 0; l < r; l++ {
				x += u.At(i, l) * s[l] * u.At(j, l)
			}
			a.SetSym(i, j, x)
		}
	}
	b := mat.NewSymDense(n, nil)
	b.SymOuterK(1, v)
	for i := 0; i < n; i++ {
		b.SetSym(i, i, b.At(i, i)+alpha)
	}
	var binv mat.SymDense
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		t.Fatal("B not SPD")
	}
	if err := ch.InverseTo(&binv); err != nil {
		t.Fatal(err)
	}
	want := denseGen(t, a, b, r)
	av, _ := denseValues(t, a)
	normA := av[n-1]
	bv, _ := denseValues(t, b)
	normB := bv[n-1]
	ctx := context.Background()
	for _, k := range []int{4, 10} {
		st := lanczos.Settings{K: k, Tol: 1e-10, Seed: 1}
		for _, mode := range []string{"LowRank", "B-inner"} {
			var res *lanczos.Result
			var err error
			if mode == "LowRank" {
				res, err = lanczos.GenSymLowRank(ctx, aop, alpha, v, st)
			} else {
				res, err = lanczos.GenSymBInv(ctx, aop, lanczos.LowRankPlusDiag(alpha, v), lanczos.Dense(&binv), st)
			}
			if err != nil {
				t.Fatal(err)
			}
			if k > r {
				if res.Status != lanczos.ReachableSpaceExhausted || len(res.Values) != r {
					t.Fatalf("%s k=%d: status %v with %d values, want ReachableSpaceExhausted with %d", mode, k, res.Status, len(res.Values), r)
				}
				res.Status = lanczos.Converged // checked; compare the r pairs
				checkGen(t, mode, res, a, b, normA, normB, want, 1e-10)
			} else {
				checkGen(t, mode, res, a, b, normA, normB, want[:k], 1e-10)
			}
			t.Logf("%s k=%d: %d matvecs, status %v", mode, k, res.Matvecs, res.Status)
		}
	}
}

// A top value far above the rest: the check's polynomial values at it grow
// by about 1e6 per step and are rescaled (they would overflow otherwise)
// while the check certifies the two values next to the rest.
func TestFarTopValue(t *testing.T) {
	const n = 3000
	d := make([]float64, n)
	for i := range d {
		d[i] = 2 - float64(i)/n
	}
	d[0] = 1e6
	apply := func(dst, x []float64) {
		for i, v := range d {
			dst[i] = v * x[i]
		}
	}
	res, err := lanczos.Sym(context.Background(), lanczos.Func(n, apply), lanczos.Settings{K: 3, Tol: 1e-10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, "far top", res, apply, nil, 1e6, 1, d[:3], 1e-10)
	for i, v := range res.Values[1:] {
		if math.Abs(v-d[i+1]) > 1e-8 {
			t.Errorf("value %d = %.12f, want %.12f", i+1, v, d[i+1])
		}
	}
	t.Logf("far top: %d matvecs", res.Matvecs)
}

// The generalized solvers run concurrently on shared operators (A dense and
// parallel, B as a matrix and as a low-rank operator, B^{-1} dense) give
// bit-identical results to serial runs, and those results are right
// (against the dense Cholesky reduction). Run with -race.
func TestGeneralizedConcurrency(t *testing.T) {
	const n, r, alpha, k = 300, 5, 0.5, 6
	a := randSym(n, 11)
	rng := rand.New(rand.NewPCG(12, 12))
	v := mat.NewDense(n, r, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = rng.NormFloat64()
	}
	b := mat.NewSymDense(n, nil)
	b.SymOuterK(1, v)
	for i := 0; i < n; i++ {
		b.SetSym(i, i, b.At(i, i)+alpha)
	}
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		t.Fatal("B not SPD")
	}
	var binv mat.SymDense
	if err := ch.InverseTo(&binv); err != nil {
		t.Fatal(err)
	}
	want := denseGen(t, a, b, k)
	av, _ := denseValues(t, a)
	normA := math.Max(-av[0], av[n-1])
	bv, _ := denseValues(t, b)
	normB := bv[n-1]
	ctx := context.Background()
	aop, bop, binvop := lanczos.Dense(a), lanczos.LowRankPlusDiag(alpha, v), lanczos.Dense(&binv)
	s := lanczos.Settings{K: k, Tol: 1e-10, Seed: 5}
	solvers := []struct {
		name string
		f    func() (*lanczos.Result, error)
	}{
		{"Cholesky", func() (*lanczos.Result, error) { return lanczos.GenSymChol(ctx, aop, b, s) }},
		{"B-inner", func() (*lanczos.Result, error) { return lanczos.GenSymBInv(ctx, aop, bop, binvop, s) }},
		{"LowRank", func() (*lanczos.Result, error) { return lanczos.GenSymLowRank(ctx, aop, alpha, v, s) }},
	}
	ref := make([]*lanczos.Result, len(solvers))
	for i, sv := range solvers {
		res, err := sv.f()
		if err != nil {
			t.Fatal(sv.name, err)
		}
		checkGen(t, sv.name, res, a, b, normA, normB, want, 1e-10)
		ref[i] = res
	}
	const copies = 3
	out := make([]*lanczos.Result, copies*len(solvers))
	errs := make([]error, len(out))
	var wg sync.WaitGroup
	for c := range out {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			out[c], errs[c] = solvers[c%len(solvers)].f()
		}(c)
	}
	wg.Wait()
	for c, res := range out {
		i := c % len(solvers)
		if errs[c] != nil {
			t.Fatalf("%s, concurrent run %d: %v", solvers[i].name, c, errs[c])
		}
		r0 := ref[i]
		if res.Matvecs != r0.Matvecs || res.Status != r0.Status || !equalBits(res.Values, r0.Values) ||
			!equalBits(res.Residuals, r0.Residuals) || !mat.Equal(res.Vectors, r0.Vectors) {
			t.Errorf("%s, concurrent run %d differs from the serial run", solvers[i].name, c)
		}
	}
}
