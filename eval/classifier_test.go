package eval

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// TestTrainOnMatchesTrainFinal checks that TrainOn, given the model
// TrainFinal fits (or the identity model of the baseline, or none), trains
// TrainFinal's learner bit for bit, and that both give the same
// classifier.
func TestTrainOnMatchesTrainFinal(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 80, Dim: 4, Classes: 3, Seed: 5})
	train := []int{0, 1, 2, 4}
	o := Options{Methods: []string{"input", "dica", "kpca"}, Rank: 30, Seed: 2, MixingCells: -1, MaxTrainCells: 200,
		Grid: Grid{Sigma: []float64{1}, Components: []int{2}, C: []float64{0.7}}}
	choices, err := Choose(ctx, ds, train, o)
	if err != nil {
		t.Fatal(err)
	}
	input, err := dica.Fit(ctx, ds.Source(), dica.Config{Method: dica.Input})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range choices {
		f, err := TrainFinal(ctx, ds, train, c, o)
		if err != nil {
			t.Fatal(err)
		}
		models := []*dica.Model{f.Model}
		if c.Method == Input {
			models = append(models, input)
		}
		want, err := f.Classifier(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range models {
			g, err := TrainOn(ctx, ds, train, m, c, o)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(g.SVM.W, f.SVM.W) || !slices.Equal(g.SVM.Intercept, f.SVM.Intercept) || !slices.Equal(g.Scaler.SD, f.Scaler.SD) ||
				g.Components != f.Components || g.TrainCells != f.TrainCells || g.TrainCells > 200 || g.TrainCells < 190 {
				t.Errorf("%s: TrainOn's learner differs from TrainFinal's (%d and %d training cells)", c.Method, g.TrainCells, f.TrainCells)
			}
			got, err := g.Classifier(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got.W, want.W) || got.InvTemperature != want.InvTemperature || got.Calibration != want.Calibration || got.Params != want.Params {
				t.Errorf("%s: TrainOn's classifier differs from TrainFinal's", c.Method)
			}
		}
		if len(want.Classes) != 3 || want.Params.Method != c.Method || want.Params.C != 0.7 || want.Score != c.Score || want.Folds != 4 {
			t.Errorf("%s: classifier of %v, params %+v, score %v over %d folds", c.Method, want.Classes, want.Params, want.Score, want.Folds)
		}
	}
}

// TestHeldOutMargins checks where the classifier's calibration comes from:
// Choose keeps the held-out margins of a grid of one point, and they equal
// those of the inner cross-validation run again for the chosen point of a
// larger grid (a grid of one point whose choice forgot them); with one
// training domain, folds of its cells.
func TestHeldOutMargins(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 60, Dim: 3, Classes: 3, Seed: 7})
	train := []int{0, 1, 2, 3}
	o := Options{Methods: []string{"udica"}, Rank: 25, Seed: 4, MixingCells: -1,
		Grid: Grid{Sigma: []float64{2}, Components: []int{2}, C: []float64{1}}}
	choices, err := Choose(ctx, ds, train, o)
	if err != nil {
		t.Fatal(err)
	}
	kept := choices[0].oof
	if kept == nil || kept.folds != 4 || len(kept.truth) == 0 || len(kept.margins) != 3*len(kept.truth) {
		t.Fatalf("the margins kept by Choose: %+v", kept)
	}
	f, err := TrainFinal(ctx, ds, train, choices[0], o)
	if err != nil {
		t.Fatal(err)
	}
	f.c.oof = nil
	again, source, err := f.heldOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if source != "samples" || !slices.Equal(again.margins, kept.margins) || !slices.Equal(again.truth, kept.truth) {
		t.Errorf("the margins computed again (%s) differ from those Choose kept", source)
	}
	// A grid keeps none; Classifier computes them.
	g := o
	g.Grid.C = []float64{0.5, 1}
	gc, err := Choose(ctx, ds, train, g)
	if err != nil {
		t.Fatal(err)
	}
	if gc[0].oof != nil {
		t.Errorf("a grid of 2 points kept margins")
	}
	// One training domain: folds of its cells.
	one := []int{2}
	c1, err := Choose(ctx, ds, one, Options{Methods: []string{"input"}, Seed: 4, MixingCells: -1})
	if err != nil {
		t.Fatal(err)
	}
	f1, err := TrainFinal(ctx, ds, one, c1[0], Options{Methods: []string{"input"}, Seed: 4, MixingCells: -1})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := f1.Classifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := ds.DomainSizes()[2]; cl.Calibration != (classify.Calibration{Source: "cells", Cells: n, Folds: 4}) || cl.Folds != 0 || !(cl.InvTemperature > 0) {
		t.Errorf("one training domain of %d cells: calibration %+v, %d folds, beta %v", n, cl.Calibration, cl.Folds, cl.InvTemperature)
	}
}

// TestRegressorMatchesLearner checks that the kernel expansion Classifier
// makes of a regression predicts what the learner predicts, for the exact
// and the Nystrom kernel ridge regression.
func TestRegressorMatchesLearner(t *testing.T) {
	ctx := context.Background()
	ds := toy.Regression(toy.Options{Domains: 4, MeanSize: 150, Seed: 3})
	train := []int{0, 1, 2}
	for _, solver := range []RegressionSolver{RegressionExact, RegressionNystrom} {
		o := Options{Methods: []string{"dica"}, Rank: 30, Seed: 1, MixingCells: -1, RegressionSolver: solver, RegressionRank: 60,
			Grid: Grid{Sigma: []float64{1}, Components: []int{3}, C: []float64{0.2}}}
		choices, err := Choose(ctx, ds, train, o)
		if err != nil {
			t.Fatal(err)
		}
		f, err := TrainFinal(ctx, ds, train, choices[0], o)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := f.Classifier(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if np, _ := cl.Points.Dims(); cl.Kind != classify.KRR || solver == RegressionNystrom && np != 60 || solver == RegressionExact && np != f.TrainCells {
			t.Errorf("%v: a regressor of kind %v on %d points", solver, cl.Kind, np)
		}
		rows := f.e.byDomain[3]
		z, err := projectRows(f.e, f.Model, rows, f.Components)
		if err != nil {
			t.Fatal(err)
		}
		zs, err := f.l.scaler.Apply(z)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.e.regress(f.l, zs, rows)
		if err != nil {
			t.Fatal(err)
		}
		var p classify.Prediction
		p.Reset(cl, len(rows))
		cl.PredictTo(&p, z, 0)
		for i, v := range p.Values {
			if math.Abs(v-want[0][i]) > 1e-9*(1+math.Abs(want[0][i])) {
				t.Errorf("%v: cell %d: %v, the learner %v", solver, i, v, want[0][i])
			}
		}
	}
}

// TestCalibrationReliability checks the confidence on cells of domains
// the classifier never saw (40 new domains of the toy data, about 12,000
// cells, fixed seeds): cells with a confidence in [0.8, 0.9) are right
// 80-90% of the time, within 0.05, and the expected calibration error
// over ten bins of confidence, sum_b |right_b - sum of confidences_b| / n,
// is at most 0.05. The same criteria fail for a temperature three times
// smaller than the fitted one.
func TestCalibrationReliability(t *testing.T) {
	ctx := context.Background()
	tr, te := toy.ClassificationSplit(toy.Options{Domains: 16, MeanSize: 300, Dim: 4, Classes: 3, Seed: 2}, 40)
	train := make([]int, 16)
	for i := range train {
		train[i] = i
	}
	for _, method := range []string{"input", "dica"} {
		o := Options{Methods: []string{method}, Rank: 100, Seed: 1, MixingCells: -1,
			Grid: Grid{Sigma: []float64{2}, Components: []int{2}, C: []float64{1}}}
		choices, err := Choose(ctx, tr, train, o)
		if err != nil {
			t.Fatal(err)
		}
		f, err := TrainFinal(ctx, tr, train, choices[0], o)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := f.Classifier(ctx)
		if err != nil {
			t.Fatal(err)
		}
		z, err := projectRows(&evaluator{ds: te}, f.Model, seq(te.N()), f.Components)
		if err != nil {
			t.Fatal(err)
		}
		for _, wrong := range []bool{false, true} {
			c := *cl
			if wrong {
				c.InvTemperature *= 3
			}
			var p classify.Prediction
			p.Reset(&c, te.N())
			c.PredictTo(&p, z, 0)
			var n, right [10]int
			var conf [10]float64
			for i, k := range p.Class {
				b := min(int(p.Confidence[i]*10), 9)
				n[b]++
				conf[b] += p.Confidence[i]
				if c.Classes[k] == te.ClassNames[te.Label[i]] {
					right[b]++
				}
			}
			var ece float64
			for b := range n {
				ece += math.Abs(float64(right[b])-conf[b]) / float64(te.N())
			}
			acc8 := float64(right[8]) / float64(n[8])
			ok := n[8] >= 500 && acc8 >= 0.75 && acc8 <= 0.95 && ece <= 0.05
			if ok == wrong {
				t.Errorf("%s (beta %.3g, wrong %v): %d cells of confidence in [0.8, 0.9), %.3f right; expected calibration error %.3f", method, c.InvTemperature, wrong, n[8], acc8, ece)
			}
			if !wrong {
				t.Logf("%s: beta %.3f on %d held-out cells; %d cells in [0.8, 0.9), %.3f right; expected calibration error %.3f", method, c.InvTemperature, c.Calibration.Cells, n[8], acc8, ece)
			}
		}
	}
}
