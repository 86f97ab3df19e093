package eval

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// TestChooseMatchesEvaluate checks that Choose chooses, for one set of
// training domains, what Evaluate chooses for a split with them (points,
// inner scores and every grid point's score), without the test domains,
// and that TrainFinal's classifier gives Evaluate's test accuracies cell
// for cell; with all cells and with CellsPerDomain.
func TestChooseMatchesEvaluate(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 90, Dim: 4, Classes: 3, Seed: 11})
	train, test := []int{0, 1, 2, 3}, []int{4, 5}
	for _, o := range []Options{
		{Rank: 25, Seed: 3, MixingCells: -1, Grid: Grid{Sigma: []float64{0, 1.5}, Lambda: []float64{0, 0.2}, Components: []int{1, 3}, C: []float64{0.3, 3}}},
		{Rank: 25, Seed: 4, MixingCells: -1, CellsPerDomain: 60, Grid: Grid{Sigma: []float64{1, 2}, Components: []int{2}}},
	} {
		res, err := Run(context.Background(), ds, train, test, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Choose(context.Background(), ds, train, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(res.Methods) {
			t.Fatalf("%d choices for %d methods", len(got), len(res.Methods))
		}
		for i, c := range got {
			s := res.Methods[i].Splits[0]
			if c.Method != res.Methods[i].Method || c.Params != s.Params || c.Score != s.InnerScore || c.Folds != s.InnerFolds || !reflect.DeepEqual(c.Grid, s.Grid) {
				t.Errorf("%s: Choose %+v (%v, %d folds), Evaluate %+v (%v, %d folds)", c.Method, c.Params, c.Score, c.Folds, s.Params, s.InnerScore, s.InnerFolds)
			}
			if c.Folds != 4 || !(c.Score > 0.3 && c.Score <= 1) {
				t.Errorf("%s: inner score %v over %d folds", c.Method, c.Score, c.Folds)
			}
			f, err := TrainFinal(context.Background(), ds, train, c, o)
			if err != nil {
				t.Fatal(err)
			}
			if f.Components != s.Components || f.FitCells != s.FitCells || (f.Model == nil) != (c.Method == Input) {
				t.Errorf("%s: final with %d components on %d cells, Evaluate %d on %d", c.Method, f.Components, f.FitCells, s.Components, s.FitCells)
			}
			// The final model is dica.Fit's with the choice's configuration
			// on the training cells.
			if cfg, err := c.Config(o); c.Method == Input {
				if err == nil {
					t.Error("the baseline has a configuration")
				}
			} else if o.CellsPerDomain == 0 {
				if err != nil {
					t.Fatal(err)
				}
				var rows []int
				for p, g := range ds.Domain {
					if slices.Contains(train, g) {
						rows = append(rows, p)
					}
				}
				sub := ds.Subset(rows)
				sub.Compact()
				m, err := dica.Fit(context.Background(), sub.Source(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				mb, _ := m.MarshalBinary()
				fb, _ := f.Model.MarshalBinary()
				if !bytes.Equal(mb, fb) {
					t.Errorf("%s: TrainFinal's model differs from dica.Fit's with Choice.Config", c.Method)
				}
			}
			e, err := newEvaluator(ds, []Split{{Train: train, Test: test}}, o)
			if err != nil {
				t.Fatal(err)
			}
			for j, g := range test {
				rows := e.domainRows(0, g)
				pred, err := f.Predict(ds.Subset(rows).X)
				if err != nil {
					t.Fatal(err)
				}
				right := 0
				for r, p := range rows {
					if pred[r] == ds.Label[p] {
						right++
					}
				}
				if acc := float64(right) / float64(len(rows)); acc != s.Scores[j].Score {
					t.Errorf("%s on %s: TrainFinal's accuracy %v, Evaluate's %v", c.Method, ds.DomainNames[g], acc, s.Scores[j].Score)
				}
			}
		}
	}
}

// TestChooseErrors checks the errors of Choose and TrainFinal.
func TestChooseErrors(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 50, Dim: 3, Classes: 2, Seed: 2})
	reg := toy.Regression(toy.Options{Domains: 4, MeanSize: 50, Seed: 2})
	grid := Options{Rank: 20, Grid: Grid{Sigma: []float64{1, 2}}}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"no training domains", func() error { _, err := Choose(ctx, ds, nil, grid); return err }, "no training domains"},
		{"one domain, a grid", func() error { _, err := Choose(ctx, ds, []int{1}, grid); return err }, "needs at least 2 training domains"},
		{"unknown method", func() error { _, err := Choose(ctx, ds, []int{0, 1}, Options{Methods: []string{"pca"}}); return err }, "unknown method"},
		{"bad index", func() error { _, err := Choose(ctx, ds, []int{0, 7}, grid); return err }, "out of range"},
		{"nil data", func() error { _, err := Choose(ctx, nil, []int{0, 1}, grid); return err }, "nil data set"},
		{"final regression grid", func() error { _, err := TrainFinal(ctx, reg, []int{0, 1}, Choice{Method: "dica"}, grid); return err }, "leaves 1 training domain"},
		{"on another method", func() error {
			m, err := dica.Fit(ctx, ds.Source(), dica.Config{Method: dica.KPCA, Rank: 10})
			if err != nil {
				return err
			}
			_, err = TrainOn(ctx, ds, []int{0, 1}, m, Choice{Method: "dica"}, Options{})
			return err
		}, "a model of method kpca for the choice of dica"},
		{"on no model", func() error {
			_, err := TrainOn(ctx, ds, []int{0, 1}, nil, Choice{Method: "udica"}, Options{})
			return err
		}, "method input for the choice of udica"},
		{"empty classifier", func() error { _, err := (&Final{}).Classifier(ctx); return err }, "empty Final"},
		{"final batch", func() error {
			_, err := TrainFinal(ctx, ds, []int{0, 1}, Choice{Method: "input"}, Options{BatchCenter: true})
			return err
		}, "without batch centering"},
		{"final distributional", func() error {
			_, err := TrainFinal(ctx, ds, []int{0, 1}, Choice{Method: "input"}, Options{Learner: Distributional})
			return err
		}, "plain learner"},
		{"final method", func() error { _, err := TrainFinal(ctx, ds, []int{0, 1}, Choice{Method: "pca"}, Options{}); return err }, "unknown method"},
		{"empty final", func() error { _, err := (&Final{}).Predict(ds.X); return err }, "empty Final"},
		{"config of input", func() error { _, err := Choice{Method: "input"}.Config(Options{}); return err }, "fits no transformation"},
		{"config of pca", func() error { _, err := Choice{Method: "pca"}.Config(Options{}); return err }, "unknown method"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.name, c.want, err)
		}
	}
	// One training domain and a grid of one point: nothing to cross-validate.
	got, err := Choose(ctx, ds, []int{2}, Options{Methods: []string{"input", "kpca"}, Rank: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if c.Folds != 0 || c.Score != 0 || c.Grid != nil {
			t.Errorf("%s on one domain: %d folds, score %v, grid %v", c.Method, c.Folds, c.Score, c.Grid)
		}
	}
}
