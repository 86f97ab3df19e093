package eval

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
)

func TestScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := mat.NewDense(30, 4, nil)
	for i := range 30 {
		for j := range 4 {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	factors := []float64{2.5, -0.3, 1e-3, -7}
	times := func(perturb func(a *mat.Dense)) *mat.Dense {
		a := mat.NewDense(30, 4, nil)
		for i := range 30 {
			for j, s := range factors {
				a.Set(i, j, s*b.At(i, j))
			}
		}
		if perturb != nil {
			perturb(a)
		}
		return a
	}
	for _, c := range []struct {
		name string
		a, b *mat.Dense
		want bool
	}{
		{"scaled", times(nil), b, true},
		{"same", b, b, true},
		{"rounding", times(func(a *mat.Dense) { a.Set(3, 1, a.At(3, 1)*(1+1e-13)) }), b, true},
		{"off by 1e-8", times(func(a *mat.Dense) { a.Set(3, 1, a.At(3, 1)*(1+1e-8)) }), b, false},
		{"last column turned", times(func(a *mat.Dense) { a.Set(0, 3, a.At(0, 3)+0.1) }), b, false},
		{"zero column", times(func(a *mat.Dense) {
			for i := range 30 {
				a.Set(i, 2, 0)
			}
		}), b, false},
		{"fewer columns", times(nil).Slice(0, 30, 0, 3).(*mat.Dense), b, false},
		{"nil", nil, b, false},
	} {
		if got := scaled(c.a, c.b, scaledTol); got != c.want {
			t.Errorf("%s: scaled = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestScaledCopies checks on fitted models that KPCA at every lambda is a
// scaled copy of KPCA at the first lambda, and that neither UDICA nor a
// method of another group is.
func TestScaledCopies(t *testing.T) {
	ds := shifted(5, 7)
	var cfgs []dica.Config
	for _, m := range []dica.Method{dica.KPCA, dica.UDICA} {
		for _, l := range []float64{0, 0.1, 1} {
			cfgs = append(cfgs, dica.Config{Method: m, Lambda: l, Components: 3, Rank: 30, Sigma: 2, Seed: 1})
		}
	}
	fam, err := dica.NewFamily(context.Background(), ds.Source(), cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	var ms []*dica.Model
	for _, c := range cfgs {
		m, err := fam.Solve(c)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if got, want := scaledCopies(ms, []int{0, 0, 0, 1, 1, 1}), []int{-1, 0, 0, -1, -1, -1}; !slices.Equal(got, want) {
		t.Errorf("scaledCopies = %v, want %v", got, want)
	}
	// KPCA in two groups: the second is nobody's copy.
	if got, want := scaledCopies(ms[:3], []int{0, 1, 0}), []int{-1, -1, 0}; !slices.Equal(got, want) {
		t.Errorf("scaledCopies in two groups = %v, want %v", got, want)
	}
	if got, want := scaledCopies([]*dica.Model{nil, ms[0], ms[1]}, []int{0, 0, 0}), []int{-1, -1, 1}; !slices.Equal(got, want) {
		t.Errorf("scaledCopies with a nil model = %v, want %v", got, want)
	}
}

// TestScaledCopiesGrid checks that the inner grid gives the same result
// whether the scaled copies are projected (and recognized by their
// standardized features) or not projected at all, and that KPCA's points
// at every lambda have the same scores.
func TestScaledCopiesGrid(t *testing.T) {
	ds := shifted(5, 3)
	o := Options{Methods: []string{"input", "kpca", "udica", "dica"}, Rank: 30, Seed: 3,
		Grid: Grid{Sigma: []float64{0, 2}, Lambda: []float64{0, 0.1, 1}, Components: []int{1, 3}, C: []float64{0.1, 1}}}
	run := func(all bool) *Result {
		projectAll = all
		defer func() { projectAll = false }()
		r, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3, 4}, o)
		if err != nil {
			t.Fatal(err)
		}
		zeroTimes(r)
		return r
	}
	a, b := run(true), run(false)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the results differ when the scaled copies are not projected:\n%+v\n%+v", a, b)
	}
	for _, mr := range b.Methods {
		if mr.Method != "kpca" {
			continue
		}
		g := mr.Splits[0].Grid
		if len(g) != 2*3*2*2 {
			t.Fatalf("kpca grid has %d points", len(g))
		}
		by := map[Params]float64{}
		for _, p := range g {
			by[p.Params] = p.Score
		}
		for _, p := range g {
			q := p.Params
			q.Lambda = 0
			if p.Score != by[q] {
				t.Errorf("kpca %+v scores %v, at lambda 0 %v", p.Params, p.Score, by[q])
			}
		}
	}
}

// TestRidgeCopyOf checks which fits the grid takes as KPCA's ridge copies,
// and that fitBand does not solve them when their lambda-0 fit succeeded
// and solves them when it failed.
func TestRidgeCopyOf(t *testing.T) {
	p := func(sigma, lambda float64) Params { return Params{Sigma: sigma, Lambda: lambda} }
	specs := []fitSpec{
		{name: "kpca", p: p(1, 1)}, {name: "kpca", p: p(1, 0)}, {name: "udica", p: p(1, 0)}, {name: "kpca", p: p(2, 0)},
	}
	for _, c := range []struct {
		name string
		p    Params
		want int
	}{
		{"kpca", p(1, 0.1), 1}, {"kpca", p(2, 3), 3}, {"kpca", p(1, 0), -1}, {"kpca", p(4, 1), -1},
		{"udica", p(1, 0.1), -1}, {"dica", p(1, 0.1), -1}, {"input", p(1, 0.1), -1},
	} {
		if got := ridgeCopyOf(c.name, specs, c.p); got != c.want {
			t.Errorf("ridgeCopyOf(%s, %+v) = %d, want %d", c.name, c.p, got, c.want)
		}
	}
	// The spec lambda = 1 before lambda = 0 has no copy to take.
	if got := ridgeCopyOf("kpca", specs[:1], p(1, 1)); got != -1 {
		t.Errorf("ridgeCopyOf with no lambda-0 fit before = %d, want -1", got)
	}

	ds := shifted(5, 7)
	e, err := newEvaluator(ds, []Split{{Train: []int{0, 1, 2}, Test: []int{3, 4}}}, Options{Rank: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		sigma float64
		want  []int
	}{
		{"copies", 2, []int{-1, 0, 0, -1}},
		// A zero bandwidth fails every fit: the copies are solved (and
		// fail on their own).
		{"failed", -1, []int{-1, -1, -1, -1}},
	} {
		var specs []fitSpec
		for _, sp := range []struct {
			name   string
			lambda float64
		}{{"kpca", 0}, {"kpca", 0.1}, {"kpca", 1}, {"udica", 0.1}} {
			q := Params{Sigma: c.sigma, Lambda: sp.lambda}
			specs = append(specs, fitSpec{name: sp.name, p: q, k: 3, scaledOf: 1 + ridgeCopyOf(sp.name, specs, q)})
		}
		b, err := e.fitBand(context.Background(), e.ds, specs, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.scaledOf, c.want) {
			t.Errorf("%s: scaledOf = %v, want %v", c.name, b.scaledOf, c.want)
		}
		for i, j := range b.scaledOf {
			if solved := b.models[i] != nil || b.errs[i] != nil; solved != (j < 0) {
				t.Errorf("%s: spec %d solved = %v with scaledOf %d", c.name, i, solved, j)
			}
		}
		if c.name == "failed" && b.errs[1] == nil {
			t.Errorf("%s: spec 1 solved without error", c.name)
		}
	}
}
