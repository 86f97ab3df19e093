package dica_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/svm"
	"github.com/dicalab/dica/toy"
)

// gated fits a model of the method on the training domains of the toy
// classification data (6 domains, the last 2 held out) and gives it the
// classifier of eval's inner cross-validation and TrainOn, with a grid of
// one point. It returns the model, the data and the training rows.
func gated(t *testing.T, method dica.Method) (*dica.Model, *dataset.Dataset, []int) {
	t.Helper()
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 120, Dim: 4, Classes: 3, Seed: 21})
	train := []int{0, 1, 2, 3}
	var rows []int
	for _, g := range train {
		for i, d := range ds.Domain {
			if d == g {
				rows = append(rows, i)
			}
		}
	}
	sub := ds.Subset(rows)
	sub.Compact()
	o := eval.Options{Methods: []string{method.String()}, Rank: 40, Seed: 3, MixingCells: -1,
		Grid: eval.Grid{Sigma: []float64{1.5}, Components: []int{2}, C: []float64{0.5}}}
	m, err := dica.Fit(ctx, sub.Source(), dica.Config{Method: method, Rank: 40, Sigma: 1.5, Components: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	choice, err := eval.Choose(ctx, ds, train, o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := eval.TrainOn(ctx, ds, train, m, choice[0], o)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := f.Classifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetClassifier(cl); err != nil {
		t.Fatal(err)
	}
	return m, ds, rows
}

// TestPredictMatchesHandSVM checks Model.Predict against a linear SVM
// trained by hand with package svm on Model.Transform of the same
// training cells, standardized with svm.Standardize, and the confidence of
// the formula 1 / sum_c exp(beta (f_c - f_max)) with the model's beta, on
// the held-out domains: the same populations, confidences to 1e-12.
func TestPredictMatchesHandSVM(t *testing.T) {
	for _, method := range []dica.Method{dica.DICA, dica.Input} {
		m, ds, rows := gated(t, method)
		cl := m.Classifier()
		if cl.Kind != classify.SVM || !slices.Equal(cl.Classes, []string{"c1", "c2", "c3"}) || cl.Calibration.Source != eval.CalibrationSamples ||
			cl.Calibration.Folds != 4 || cl.Folds != 4 || !(cl.InvTemperature > 0) || cl.TrainCells != len(rows) {
			t.Errorf("%v: classifier %v of %v, calibration %+v, beta %v, %d folds, %d training cells",
				method, cl.Kind, cl.Classes, cl.Calibration, cl.InvTemperature, cl.Folds, cl.TrainCells)
		}
		// By hand.
		k := cl.Dim()
		proj := func(x *mat.Dense) *mat.Dense {
			z, err := m.Transform(x, dica.TransformOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := z.Dims()
			return mat.DenseCopyOf(z.Slice(0, r, 0, k))
		}
		train := ds.Subset(rows)
		zt := proj(train.X)
		sc, err := svm.Standardize(zt)
		if err != nil {
			t.Fatal(err)
		}
		zs, err := sc.Apply(zt)
		if err != nil {
			t.Fatal(err)
		}
		hand, err := svm.Train(context.Background(), zs, train.Label, len(ds.ClassNames), svm.Options{C: 0.5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var test []int
		for i, g := range ds.Domain {
			if g >= 4 {
				test = append(test, i)
			}
		}
		x := ds.Subset(test).X
		dec, err := func() (*mat.Dense, error) {
			u, err := sc.Apply(proj(x))
			if err != nil {
				return nil, err
			}
			return hand.Decision(u)
		}()
		if err != nil {
			t.Fatal(err)
		}
		labels, conf, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for i := range test {
			f := dec.RawRowView(i)
			best := 0
			for c, v := range f {
				if v > f[best] {
					best = c
				}
			}
			var s float64
			for _, v := range f {
				s += math.Exp(cl.InvTemperature * (v - f[best]))
			}
			if want := ds.ClassNames[best]; labels[i] != want {
				t.Errorf("%v: cell %d: %s, by hand %s", method, i, labels[i], want)
			}
			if math.Abs(conf[i]-1/s) > 1e-12 {
				t.Errorf("%v: cell %d: confidence %v, by hand %v", method, i, conf[i], 1/s)
			}
			if labels[i] == ds.ClassNames[ds.Label[test[i]]] {
				right++
			}
		}
		if acc := float64(right) / float64(len(test)); acc < 0.5 {
			t.Errorf("%v: accuracy %v on the held-out domains", method, acc)
		}
	}
}

// TestPredictFile checks that a model saved and loaded predicts bit for
// bit the same, that PredictStream predicts as PredictWith on every block
// and whatever GOMAXPROCS is, and the minimum confidence.
func TestPredictFile(t *testing.T) {
	ctx := context.Background()
	m, ds, _ := gated(t, dica.UDICA)
	path := filepath.Join(t.TempDir(), "gated.dica")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := dica.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l1, c1, err := m.Predict(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	l2, c2, err := back.Predict(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l1, l2) || !slices.Equal(c1, c2) {
		t.Errorf("the loaded model predicts differently")
	}
	all, err := m.PredictWith(ds.X, dica.PredictOptions{Preprocessed: true, MinConfidence: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	var unassigned int
	for i, c := range all.Class {
		if c1[i] != all.Confidence[i] {
			t.Fatalf("cell %d: confidence %v and %v", i, c1[i], all.Confidence[i])
		}
		if (c == classify.NoClass) != (c1[i] < 0.7) || c != classify.NoClass && m.Classifier().Label(c) != l1[i] {
			t.Errorf("cell %d of confidence %v: class %d (%s)", i, c1[i], c, l1[i])
		}
		if c == classify.NoClass {
			unassigned++
		}
	}
	if unassigned == 0 || unassigned == len(all.Class) {
		t.Errorf("%d of %d cells below 0.7", unassigned, len(all.Class))
	}
	z, err := m.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		row := 0
		err := back.PredictStream(ctx, ds.Source(), dica.PredictOptions{MinConfidence: 0.7, BlockRows: 700},
			func(b *dataset.Block, zb *mat.Dense, p *classify.Prediction, domains, classes []string) error {
				if r, c := zb.Dims(); r != b.Rows || c != m.Components() || p.Rows != b.Rows {
					t.Fatalf("a block of %d rows with %d x %d components and %d predictions", b.Rows, r, c, p.Rows)
				}
				for i := range b.Rows {
					if !slices.Equal(zb.RawRowView(i), z.RawRowView(row)) || p.Class[i] != all.Class[row] || p.Confidence[i] != all.Confidence[row] {
						t.Fatalf("GOMAXPROCS %d: row %d streams differently", procs, row)
					}
					row++
				}
				return nil
			})
		runtime.GOMAXPROCS(old)
		if err != nil || row != ds.N() {
			t.Fatalf("GOMAXPROCS %d: %d rows streamed, %v", procs, row, err)
		}
	}
	for _, tc := range []struct {
		o    dica.PredictOptions
		want string
	}{
		{dica.PredictOptions{MinConfidence: 1.5}, "minimum confidence 1.5"},
		{dica.PredictOptions{MinConfidence: math.NaN()}, "minimum confidence NaN"},
		{dica.PredictOptions{BlockRows: -1}, "-1 rows per block"},
	} {
		if _, err := m.PredictWith(ds.X, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.want)
		}
	}
	if _, err := m.PredictWith(mat.NewDense(2, 3, nil), dica.PredictOptions{}); err == nil || !strings.Contains(err.Error(), "3 columns, the model expects 4") {
		t.Errorf("data of 3 columns: %v", err)
	}
	stop := errors.New("stop")
	if err := m.PredictStream(ctx, ds.Source(), dica.PredictOptions{}, func(*dataset.Block, *mat.Dense, *classify.Prediction, []string, []string) error { return stop }); err != stop {
		t.Errorf("an emit error: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.PredictStream(cctx, ds.Source(), dica.PredictOptions{}, func(*dataset.Block, *mat.Dense, *classify.Prediction, []string, []string) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled stream: %v", err)
	}
}

// TestPredictRegression gives a model the kernel ridge regression of
// TrainFinal on the toy regression data: its predictions are values, its
// Predict an error, and data of the other kind of truth is refused.
func TestPredictRegression(t *testing.T) {
	ctx := context.Background()
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 80, Seed: 9})
	train := []int{0, 1, 2, 3}
	o := eval.Options{Methods: []string{"kpca"}, Rank: 30, Seed: 2, MixingCells: -1,
		Grid: eval.Grid{Sigma: []float64{1}, Components: []int{3}, C: []float64{0.1}}}
	choice, err := eval.Choose(ctx, ds, train, o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := eval.TrainFinal(ctx, ds, train, choice[0], o)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := f.Classifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Model
	if err := m.SetClassifier(cl); err != nil {
		t.Fatal(err)
	}
	if cl.Kind != classify.KRR || !slices.Equal(cl.Targets, []string{"y"}) || !(cl.Score > 0) || cl.Folds != 4 {
		t.Errorf("regressor %v of %v, score %v over %d folds", cl.Kind, cl.Targets, cl.Score, cl.Folds)
	}
	p, err := m.PredictWith(ds.X, dica.PredictOptions{MinConfidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if p.Class != nil || len(p.Values) != ds.N() {
		t.Fatalf("a regression predicts classes %v and %d values", p.Class != nil, len(p.Values))
	}
	var se, v, mean float64
	for i := range ds.N() {
		mean += ds.Target.At(i, 0) / float64(ds.N())
	}
	for i, y := range p.Values {
		se += (y - ds.Target.At(i, 0)) * (y - ds.Target.At(i, 0))
		v += (ds.Target.At(i, 0) - mean) * (ds.Target.At(i, 0) - mean)
	}
	if se >= v {
		t.Errorf("the regression explains nothing: squared error %v, variance %v", se, v)
	}
	if _, _, err := m.Predict(ds.X); err == nil || !strings.Contains(err.Error(), "regression") {
		t.Errorf("Predict of a regression: %v", err)
	}
	labelled := toy.Classification(toy.Options{Domains: 2, MeanSize: 20, Dim: 5, Seed: 1})
	emit := func(*dataset.Block, *mat.Dense, *classify.Prediction, []string, []string) error { return nil }
	if err := m.PredictStream(ctx, labelled.Source(), dica.PredictOptions{}, emit); err == nil || !strings.Contains(err.Error(), "the data has class labels") {
		t.Errorf("class labels for a regression: %v", err)
	}
	if err := m.PredictStream(ctx, ds.Source(), dica.PredictOptions{}, emit); err != nil {
		t.Errorf("targets for a regression: %v", err)
	}
	gm, _, _ := gated(t, dica.DICA)
	if err := gm.PredictStream(ctx, toy.Regression(toy.Options{Domains: 2, MeanSize: 20, Dim: 4, Seed: 1}).Source(), dica.PredictOptions{}, emit); err == nil || !strings.Contains(err.Error(), "the data has real targets") {
		t.Errorf("real targets for a classifier: %v", err)
	}
}
