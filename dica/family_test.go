package dica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// TestFamily checks that one family pass gives, bit for bit, the model
// Fit gives for every method, lambda, epsilon and number of components,
// on class labels and on real targets, with the Nystrom and the RFF maps,
// with several workers and small blocks (so that the per-block partial
// sums are merged), and that Stats(m) are the statistics of m's own pass.
func TestFamily(t *testing.T) {
	ctx := context.Background()
	cls := toy.Classification(toy.Options{Domains: 5, MeanSize: 150, Seed: 8})
	reg := toy.Regression(toy.Options{Domains: 4, MeanSize: 120, Seed: 5})
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		base Config
		ks   []int
	}{
		{"classes nystrom", cls, Config{Rank: 40, Sigma: 1.5, Seed: 3, Workers: 3, BlockRows: 64}, []int{1, 3, 12}},
		{"classes nystrom median", cls, Config{Rank: 40, Seed: 4, Workers: 2, BlockRows: 100}, []int{3}},
		{"classes rff", cls, Config{Solver: RFF, Rank: 30, Sigma: 2, Seed: 3, Workers: 2, BlockRows: 70}, []int{1, 3, 12}},
		{"targets nystrom", reg, Config{Rank: 30, Sigma: 1, Seed: 2, Workers: 3, BlockRows: 50}, []int{2, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cfgs []Config
			for _, m := range []Method{KPCA, UDICA, COIR, DICA} {
				for _, lambda := range []float64{0, 0.5} {
					cfg := c.base
					cfg.Method, cfg.Lambda = m, lambda
					cfgs = append(cfgs, cfg)
				}
			}
			fam, err := NewFamily(ctx, c.ds.Source(), cfgs...)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []Method{KPCA, UDICA, COIR, DICA} {
				// The statistics of m's own pass (the Gram sum forced by
				// lambda > 0 as in the family).
				own := c.base
				own.Method, own.Lambda = m, 1
				p, err := NewPlan(ctx, c.ds.Source(), own)
				if err != nil {
					t.Fatal(err)
				}
				st, err := p.Accumulate(ctx, c.ds.Source())
				if err != nil {
					t.Fatal(err)
				}
				got := fam.Stats(m)
				cfg := got.Plan().Config
				cfg.Method, cfg.Lambda = m, 1
				gm, err1 := got.SolveWith(cfg)
				sm, err2 := st.SolveWith(cfg)
				if err1 != nil || err2 != nil {
					t.Fatalf("%v: %v, %v", m, err1, err2)
				}
				if !sameModel(gm, sm) {
					t.Errorf("%v: the family's statistics solve to another model than those of its own pass", m)
				}
				for _, lambda := range []float64{0, 1e-3, 0.5} {
					for _, eps := range []float64{1e-4, 1e-2} {
						for _, k := range c.ks {
							cfg := c.base
							cfg.Method, cfg.Lambda, cfg.Epsilon, cfg.Components = m, lambda, eps, k
							want, err := Fit(ctx, c.ds.Source(), cfg)
							if err != nil {
								t.Fatal(err)
							}
							// Solve twice: the second uses the cached
							// feature statistics.
							for range 2 {
								got, err := fam.Solve(cfg)
								if err != nil {
									t.Fatal(err)
								}
								if !sameModel(got, want) {
									t.Errorf("%v lambda %v eps %v k %d: the model differs from Fit's (eigenvalues %v, Fit %v)", m, lambda, eps, k, got.Eigenvalues, want.Eigenvalues)
								}
							}
						}
					}
				}
			}
		})
	}
}

func sameModel(a, b *Model) bool {
	ab, err1 := a.MarshalBinary()
	bb, err2 := b.MarshalBinary()
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb) &&
		a.InputVariance == b.InputVariance && a.ProjectedVariance == b.ProjectedVariance
}

// TestFamilyKinds checks families of one kind of method (no second set
// of domain sums, the Gram sum only when a configuration needs it) and
// the errors of configurations a family cannot serve.
func TestFamilyKinds(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 120, Seed: 2})
	base := Config{Rank: 30, Sigma: 1, Seed: 7}
	with := func(m Method, lambda float64) Config {
		c := base
		c.Method, c.Lambda = m, lambda
		return c
	}
	sup, err := NewFamily(ctx, ds.Source(), with(DICA, 0), with(COIR, 0))
	if err != nil {
		t.Fatal(err)
	}
	if sup.Stats(KPCA) != nil || sup.Stats(DICA) == nil || sup.Stats(DICA).acc.gram {
		t.Errorf("supervised family at lambda 0: unsupervised statistics %v, Gram sum %v", sup.Stats(KPCA) != nil, sup.Stats(DICA).acc.gram)
	}
	for _, cfg := range []Config{with(DICA, 0), with(COIR, 0)} {
		want, err := Fit(ctx, ds.Source(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sup.Solve(cfg)
		if err != nil || !sameModel(got, want) {
			t.Errorf("%v: %v, or the model differs from Fit's", cfg.Method, err)
		}
	}
	uns, err := NewFamily(ctx, ds.Source(), with(KPCA, 0))
	if err != nil {
		t.Fatal(err)
	}
	if uns.Stats(DICA) != nil || !uns.Stats(UDICA).acc.gram || uns.Stats(UDICA).Classes != nil {
		t.Errorf("unsupervised family: supervised statistics %v, Gram sum %v, classes %v", uns.Stats(DICA) != nil, uns.Stats(UDICA).acc.gram, uns.Stats(UDICA).Classes)
	}
	want, err := Fit(ctx, ds.Source(), with(UDICA, 0.2))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := uns.Solve(with(UDICA, 0.2)); err != nil || !sameModel(got, want) {
		t.Errorf("UDICA from a KPCA family: %v, or the model differs from Fit's", err)
	}

	for _, c := range []struct {
		fam  *Family
		cfg  Config
		want string
	}{
		{sup, with(KPCA, 0), "no such configuration"},
		{uns, with(DICA, 0), "no such configuration"},
		{sup, with(DICA, 0.1), "needs the Gram sum"},
		{sup, func() Config { c := with(DICA, 0); c.Sigma = 2; return c }(), "differs from the family's"},
		{sup, func() Config { c := with(DICA, 0); c.Rank = 20; return c }(), "differs from the family's"},
		{sup, func() Config { c := with(DICA, 0); c.Kernel = kernel.Laplacian{Sigma: 1}; return c }(), "differs from the family's"},
		{sup, with(DICA, -1), "lambda = -1"},
		{&Family{}, with(DICA, 0), "empty statistics"},
	} {
		if _, err := c.fam.Solve(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Solve(%v lambda %v sigma %v): want an error with %q, got %v", c.cfg.Method, c.cfg.Lambda, c.cfg.Sigma, c.want, err)
		}
	}
	for _, c := range []struct {
		cfgs []Config
		want string
	}{
		{nil, "at least one configuration"},
		{[]Config{with(DICA, 0), func() Config { c := with(COIR, 0); c.Seed = 8; return c }()}, "configuration 2 differs"},
		{[]Config{with(DICA, 0), func() Config { c := with(KPCA, 0); c.Rank = 20; return c }()}, "differ in more than"},
		{[]Config{func() Config { c := with(DICA, 0); c.Solver = Exact; return c }()}, "exact solver"},
		{[]Config{with(Method(9), 0)}, "unknown method"},
	} {
		if _, err := NewFamily(ctx, ds.Source(), c.cfgs...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewFamily(%d configurations): want an error with %q, got %v", len(c.cfgs), c.want, err)
		}
	}
	// A configuration error of one method only (one domain for UDICA)
	// is that method's, as from SolveWith.
	one := &dataset.Dataset{X: ds.X, Domain: make([]int, ds.N()), DomainNames: []string{"d"}, Label: ds.Label, ClassNames: ds.ClassNames}
	f1, err := NewFamily(ctx, one.Source(), with(KPCA, 0), with(UDICA, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f1.Solve(with(KPCA, 0)); err != nil {
		t.Errorf("KPCA on one domain: %v", err)
	}
	if _, err := f1.Solve(with(UDICA, 0)); err == nil || !strings.Contains(err.Error(), "needs at least 2") {
		t.Errorf("UDICA on one domain: want an error with %q, got %v", "needs at least 2", err)
	}
}

// TestProjectRaw checks that Plan.MapRaw and Model.ProjectRaw give
// Transform's projection bit for bit, for the whole matrix and for rows
// taken in chunks of a multiple of 512, and their errors.
func TestProjectRaw(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 700, Seed: 6})
	for _, solver := range []Solver{Nystrom, RFF} {
		fam, err := NewFamily(ctx, ds.Source(), Config{Method: KPCA, Rank: 50, Sigma: 1.2, Seed: 1, Solver: solver, Components: 6},
			Config{Method: DICA, Rank: 50, Sigma: 1.2, Seed: 1, Solver: solver})
		if err != nil {
			t.Fatal(err)
		}
		var raw mat.Dense
		if err := fam.Plan().MapRaw(&raw, ds.X); err != nil {
			t.Fatal(err)
		}
		n, _ := ds.X.Dims()
		var models []*Model
		var wants []*mat.Dense
		for _, m := range []Method{KPCA, DICA} {
			model, err := fam.Solve(Config{Method: m, Rank: 50, Sigma: 1.2, Seed: 1, Solver: solver, Components: 6})
			if err != nil {
				t.Fatal(err)
			}
			want, err := model.Transform(ds.X, TransformOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got mat.Dense
			if err := model.ProjectRaw(&got, &raw); err != nil {
				t.Fatal(err)
			}
			if !sameBitsDense(&got, want) {
				t.Errorf("%v %v: ProjectRaw differs from Transform", solver, m)
			}
			models, wants = append(models, model), append(wants, want)
			chunked := mat.NewDense(n, model.Components(), nil)
			for lo := 0; lo < n; lo += 1024 {
				hi := min(lo+1024, n)
				var f mat.Dense
				if err := fam.Plan().MapRaw(&f, ds.X.Slice(lo, hi, 0, ds.D()).(*mat.Dense)); err != nil {
					t.Fatal(err)
				}
				if err := model.ProjectRaw(chunked.Slice(lo, hi, 0, model.Components()).(*mat.Dense), &f); err != nil {
					t.Fatal(err)
				}
			}
			if !mat.Equal(chunked, want) {
				t.Errorf("%v %v: ProjectRaw in chunks differs from Transform", solver, m)
			}
			for i, c := range []struct {
				dst, f *mat.Dense
				want   string
			}{
				{&mat.Dense{}, mat.NewDense(3, 7, nil), "features have 7 columns"},
				{mat.NewDense(2, 9, nil), mat.NewDense(3, fam.Plan().RawDim(), nil), "destination is 2 x 9"},
				{&mat.Dense{}, nil, "no features"},
				{nil, mat.NewDense(3, fam.Plan().RawDim(), nil), "nil matrix"},
			} {
				if err := model.ProjectRaw(c.dst, c.f); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("ProjectRaw case %d: want an error with %q, got %v", i, c.want, err)
				}
			}
		}
		// Both models at once, in chunks of rows.
		pr, err := NewProjector(models...)
		if err != nil {
			t.Fatal(err)
		}
		both := []*mat.Dense{mat.NewDense(n, models[0].Components(), nil), mat.NewDense(n, models[1].Components(), nil)}
		for lo := 0; lo < n; lo += 700 {
			hi := min(lo+700, n)
			var f mat.Dense
			if err := fam.Plan().MapRaw(&f, ds.X.Slice(lo, hi, 0, ds.D()).(*mat.Dense)); err != nil {
				t.Fatal(err)
			}
			dst := []*mat.Dense{both[0].Slice(lo, hi, 0, models[0].Components()).(*mat.Dense), both[1].Slice(lo, hi, 0, models[1].Components()).(*mat.Dense)}
			if err := pr.Project(dst, &f); err != nil {
				t.Fatal(err)
			}
		}
		for i := range models {
			if !sameBitsDense(both[i], wants[i]) {
				t.Errorf("%v: Projector differs from Transform for model %d", solver, i+1)
			}
		}
		if err := pr.Project(both[:1], &raw); err == nil || !strings.Contains(err.Error(), "1 destinations for 2 models") {
			t.Errorf("Project with one destination for two models: %v", err)
		}
		for i, c := range []struct {
			p      *Plan
			dst, x *mat.Dense
			want   string
		}{
			{fam.Plan(), &mat.Dense{}, mat.NewDense(2, ds.D()+1, nil), fmt.Sprintf("the plan expects %d", ds.D())},
			{fam.Plan(), mat.NewDense(2, 3, nil), mat.NewDense(2, ds.D(), nil), "destination is 2 x 3"},
			{fam.Plan(), &mat.Dense{}, nil, "no data"},
			{nil, &mat.Dense{}, mat.NewDense(2, ds.D(), nil), "empty statistics"},
		} {
			if err := c.p.MapRaw(c.dst, c.x); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("MapRaw case %d: want an error with %q, got %v", i, c.want, err)
			}
		}
	}
	if err := (&Model{}).ProjectRaw(&mat.Dense{}, mat.NewDense(1, 1, nil)); err == nil {
		t.Error("ProjectRaw of an empty model: no error")
	}
	// Models of two input maps cannot share a projector.
	a, err := Fit(ctx, ds.Source(), Config{Method: KPCA, Rank: 20, Sigma: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(ctx, ds.Source(), Config{Method: KPCA, Rank: 20, Sigma: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewProjector(a, b); err == nil || !strings.Contains(err.Error(), "another input map") {
		t.Errorf("NewProjector of two maps: %v", err)
	}
}

// TestFamilyPassChecks: a family's pass makes the checks of Accumulate's
// (it is the same pass): the number of classes against the memory budget
// while reading, and a kernel that relates no two cells.
func TestFamilyPassChecks(t *testing.T) {
	ctx := context.Background()
	_, err := NewFamily(ctx, distinct(12000, 4, 12000).Source(),
		Config{Method: DICA, Sigma: 1, MaxMemory: 500e6}, Config{Method: UDICA, Sigma: 1, MaxMemory: 500e6})
	var me *MemoryError
	if !errors.As(err, &me) || me.Limit != "classes" || !me.More {
		t.Errorf("12000 classes: err = %v, want a *MemoryError on classes during the pass", err)
	}
	cls := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 11})
	_, err = NewFamily(ctx, cls.Source(), Config{Method: DICA, Solver: RFF, Rank: 30, Sigma: 1e-300}, Config{Method: UDICA, Solver: RFF, Rank: 30, Sigma: 1e-300})
	if !errors.Is(err, ErrNoSignal) || !strings.Contains(err.Error(), "no two distinct cells of the first") {
		t.Errorf("sigma 1e-300: err = %v, want ErrNoSignal from the pass", err)
	}
}

// sameBitsDense reports whether a and b have the same shape and every
// element the same bits (signed zeros and NaNs included).
func sameBitsDense(a, b *mat.Dense) bool {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		return false
	}
	for i := range ar {
		for j := range ac {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}
