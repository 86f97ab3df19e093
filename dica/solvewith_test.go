package dica

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/toy"
)

// TestSolveWith checks that re-solving one pass's statistics with other
// solve settings gives, bit for bit, the model Fit gives with them (the
// statistics are not changed by it), and the errors for settings the
// statistics cannot serve.
func TestSolveWith(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 150, Seed: 8})
	ctx := context.Background()
	for _, base := range []Config{
		{Method: DICA, Lambda: 0.5, Rank: 60, Sigma: 1.5, Seed: 3},
		{Method: UDICA, Rank: 60, Sigma: 1.5, Seed: 3},
	} {
		p, err := NewPlan(ctx, ds.Source(), base)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Accumulate(ctx, ds.Source())
		if err != nil {
			t.Fatal(err)
		}
		before, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		methods := []Method{DICA, COIR}
		if base.Method == UDICA {
			methods = []Method{UDICA, KPCA}
		}
		for _, method := range methods {
			for _, lambda := range []float64{0, 1e-3, 0.5, 2} {
				for _, eps := range []float64{1e-4, 1e-2} {
					for _, k := range []int{1, 4} {
						cfg := st.Plan().Config
						cfg.Method, cfg.Lambda, cfg.Epsilon, cfg.Components = method, lambda, eps, k
						got, err := st.SolveWith(cfg)
						if err != nil {
							t.Fatal(err)
						}
						fit := base
						fit.Method, fit.Lambda, fit.Epsilon, fit.Components = method, lambda, eps, k
						want, err := Fit(ctx, ds.Source(), fit)
						if err != nil {
							t.Fatal(err)
						}
						name := method.String()
						if !slices.Equal(got.Eigenvalues, want.Eigenvalues) || !mat.Equal(got.W, want.W) {
							t.Errorf("%s lambda %v eps %v k %d: eigenvalues %v, Fit %v", name, lambda, eps, k, got.Eigenvalues, want.Eigenvalues)
						}
						gb, _ := got.MarshalBinary()
						wb, _ := want.MarshalBinary()
						if !bytes.Equal(gb, wb) {
							t.Errorf("%s lambda %v eps %v k %d: the model file differs from Fit's", name, lambda, eps, k)
						}
						if c := got.Config(); c.Lambda != lambda || c.Epsilon != eps || c.Components != k || c.Method != method {
							t.Errorf("%s: model config %v %v %v %v", name, c.Method, c.Lambda, c.Epsilon, c.Components)
						}
					}
				}
			}
		}
		after, _ := st.MarshalBinary()
		if !bytes.Equal(before, after) {
			t.Errorf("%v: SolveWith changed the statistics", base.Method)
		}
	}

	// Settings the statistics cannot serve.
	p, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 60, Sigma: 1.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Accumulate(ctx, ds.Source())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Method = UDICA }, "uses the data unlike the plan's"},
		{func(c *Config) { c.Lambda = 0.1 }, "lack the Gram sum"},
		{func(c *Config) { c.Rank = 30 }, "differs from the plan's"},
		{func(c *Config) { c.Seed = 4 }, "differs from the plan's"},
		{func(c *Config) { c.Kernel = nil; c.Sigma = 2 }, "differs from the plan's"},
		{func(c *Config) { c.Lambda = -1 }, "lambda = -1"},
	} {
		cfg := st.Plan().Config
		c.edit(&cfg)
		if _, err := st.SolveWith(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
	var empty Stats
	if _, err := empty.SolveWith(Config{}); err == nil {
		t.Error("SolveWith on empty statistics: no error")
	}
}
