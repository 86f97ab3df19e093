package eval

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/svm"
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

// TestHeldOutMargins checks the held-out margins of the calibration: for
// several training domains, each group of the inner cross-validation is
// scored by an SVM trained by hand (package svm, warm-started from the
// final SVM as Classifier does; from zero, the same within the solver's
// tolerance) on the other groups' standardized cells; with one training
// domain, or a population in one domain only, folds of the cells.
func TestHeldOutMargins(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 7, MeanSize: 60, Dim: 3, Classes: 3, Seed: 7})
	train := []int{0, 1, 2, 3, 5, 6}
	o := Options{Rank: 25, Seed: 4, MixingCells: -1}
	c := Choice{Method: "udica", Params: Params{Sigma: 2, Components: 2, C: 1}}
	f, err := TrainFinal(ctx, ds, train, c, o)
	if err != nil {
		t.Fatal(err)
	}
	oof, err := f.learnerFolds(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: the standardized projections of the training cells, group
	// by group.
	rows := f.e.sample(0, train, f.e.o.MaxTrainCells, f.e.rng(0, 0, purposeFinalTrain))
	z, err := projectRows(f.e, f.Model, rows, 2)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := f.Scaler.Apply(z)
	if err != nil {
		t.Fatal(err)
	}
	groups := f.e.groups(train)
	if len(groups) != 4 || oof.folds != 4 || len(oof.truth) != len(rows) {
		t.Fatalf("%d groups, %d folds, %d held-out cells of %d", len(groups), oof.folds, len(oof.truth), len(rows))
	}
	var worst float64
	at := 0
	for _, g := range groups {
		var in, out []int
		for i, p := range rows {
			if slices.Contains(g, ds.Domain[p]) {
				out = append(out, i)
			} else {
				in = append(in, i)
			}
		}
		x := mat.NewDense(len(in), 2, nil)
		y := make([]int, len(in))
		for j, i := range in {
			x.SetRow(j, zs.RawRowView(i))
			y[j] = ds.Label[rows[i]]
		}
		warm, err := svm.Train(ctx, x, y, 3, svm.Options{C: 1, Seed: 4, Init: f.SVM})
		if err != nil {
			t.Fatal(err)
		}
		cold, err := svm.Train(ctx, x, y, 3, svm.Options{C: 1, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		h := mat.NewDense(len(out), 2, nil)
		for j, i := range out {
			h.SetRow(j, zs.RawRowView(i))
		}
		dw, err := warm.Decision(h)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := cold.Decision(h)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range out {
			if oof.truth[at] != ds.Label[rows[i]] {
				t.Fatalf("held-out cell %d is not row %d", at, rows[i])
			}
			for k, v := range dw.RawRowView(j) {
				if math.Abs(v-oof.margins[at*3+k]) > 1e-12 {
					t.Fatalf("held-out cell %d, class %d: margin %v, by hand %v", at, k, oof.margins[at*3+k], v)
				}
				worst = math.Max(worst, math.Abs(dc.At(j, k)-v))
			}
			at++
		}
	}
	// The warm start changes the solution within the solver's tolerance.
	if worst > 0.05 {
		t.Errorf("the warm-started SVMs' margins differ from those of SVMs started from zero by up to %.3g", worst)
	}

	// A population in one training domain only: its group's fold cannot
	// be trained, so the folds are of cells.
	two := toy.Classification(toy.Options{Domains: 4, MeanSize: 60, Dim: 3, Classes: 2, Seed: 7})
	for i, g := range two.Domain {
		if g != 0 {
			two.Label[i] = 0
		}
	}
	f2, err := TrainFinal(ctx, two, []int{0, 1, 2, 3}, Choice{Method: "input", Params: Params{C: 1}}, o)
	if err != nil {
		t.Fatal(err)
	}
	cl2, err := f2.Classifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cl2.Calibration.Source != CalibrationCells || len(cl2.Classes) != 2 {
		t.Errorf("a population in one domain: calibration %+v, populations %v", cl2.Calibration, cl2.Classes)
	}

	// One training domain: folds of its cells.
	one := []int{2}
	f1, err := TrainFinal(ctx, ds, one, Choice{Method: "input", Params: Params{C: 1}}, o)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := f1.Classifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := ds.DomainSizes()[2]; cl.Calibration != (classify.Calibration{Source: CalibrationCells, Cells: n, Folds: 4}) || cl.Folds != 0 || !(cl.InvTemperature > 0) {
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
// cells, fixed seeds), calibrated on leave-samples-out folds of the
// learner: cells with a confidence in
// [0.8, 0.9) are right 80-90% of the time, within 0.05, and the expected
// calibration error over ten bins of confidence,
// sum_b |right_b - sum of confidences_b| / n, is at most 0.05. The same
// criteria fail for a temperature three times smaller than the fitted one.
func TestCalibrationReliability(t *testing.T) {
	ctx := context.Background()
	tr, te := toy.ClassificationSplit(toy.Options{Domains: 16, MeanSize: 300, Dim: 4, Classes: 3, Seed: 2}, 40)
	train := seq(16)
	for _, method := range []string{"input", "dica"} {
		o := Options{Methods: []string{method}, Rank: 100, Seed: 1, MixingCells: -1,
			Grid: Grid{Sigma: []float64{2}, Components: []int{2}, C: []float64{1}}}
		choices, err := Choose(ctx, tr, train, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, choice := range choices {
			f, err := TrainFinal(ctx, tr, train, choice, o)
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
					t.Errorf("%s, %s (beta %.3g, wrong %v): %d cells of confidence in [0.8, 0.9), %.3f right; expected calibration error %.3f",
						method, c.Calibration.Source, c.InvTemperature, wrong, n[8], acc8, ece)
				}
				if !wrong {
					t.Logf("%s, %s: beta %.3f on %d held-out cells; %d cells in [0.8, 0.9), %.3f right; expected calibration error %.3f",
						method, c.Calibration.Source, c.InvTemperature, c.Calibration.Cells, n[8], acc8, ece)
				}
			}
		}
	}
}
