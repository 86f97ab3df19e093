package dica

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/preprocess"
	"github.com/dicalab/dica/toy"
)

// TestInputModel fits the identity model of Method Input with a recorded
// preprocessing and checks that Transform returns the preprocessed inputs
// bit for bit, from preprocessed and from raw cells; the summary in
// natural order against counts by hand; the variance against its formula;
// the file round trip; and that the streaming solves refuse the method.
func TestInputModel(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 12, MeanSize: 30, Dim: 3, Classes: 3, Seed: 8})
	// Domain and class names out of natural order: d10 is met before d2.
	for i, n := range ds.DomainNames {
		ds.DomainNames[i] = strings.Replace(n, "d", "s", 1)
	}
	n, d := ds.X.Dims()
	raw := mat.NewDense(n, d, nil)
	pre := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			v := 50 * math.Exp(ds.X.At(i, j))
			raw.Set(i, j, v)
			pre.Set(i, j, math.Log1p(v))
		}
	}
	names := []string{"a", "b", "c"}
	pipe := &preprocess.Pipeline{Format: "csv", Transform: "log1p"}
	for j, nm := range names {
		pipe.Channels = append(pipe.Channels, preprocess.Channel{Name: nm, Index: j + 1})
	}
	train := *ds
	train.X, train.Features = pre, names
	m, err := Fit(ctx, train.Source(), Config{Method: Input, Preprocessing: pipe, Sigma: 3, Rank: 7, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Config()
	if cfg.Method != Input || cfg.Method.String() != "input" || cfg.Solver != Exact || cfg.Kernel != (kernel.Linear{}) || cfg.Rank != d || m.Components() != d || m.Null() != 0 {
		t.Errorf("input model: method %v, solver %v, kernel %v, rank %d, %d components, %d null", cfg.Method, cfg.Solver, cfg.Kernel, cfg.Rank, m.Components(), m.Null())
	}
	z, err := m.Transform(pre, TransformOptions{Preprocessed: true, Scale: true})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z, pre) {
		t.Errorf("Transform of preprocessed cells is not the identity")
	}
	zr, err := m.Transform(raw, TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.DenseCopyOf(raw)
	if err := pipe.Apply(want.RawMatrix().Data, d); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(zr, want) {
		t.Errorf("Transform of raw cells is not their preprocessing")
	}

	// The summary, by hand.
	counts := map[string]int64{}
	classes := map[string]int64{}
	sums := map[string][]float64{}
	for i := range n {
		g := ds.DomainNames[ds.Domain[i]]
		counts[g]++
		classes[ds.ClassNames[ds.Label[i]]]++
		if sums[g] == nil {
			sums[g] = make([]float64, d)
		}
		for j := range d {
			sums[g][j] += pre.At(i, j)
		}
	}
	s := m.Summary
	if s.N != int64(n) || len(s.Domains) != 12 || s.Domains[1] != "s2" || s.Domains[9] != "s10" {
		t.Errorf("summary of %d cells, domains %v", s.N, s.Domains)
	}
	for i, g := range s.Domains {
		if s.DomainCounts[i] != counts[g] {
			t.Errorf("domain %s: %d cells, want %d", g, s.DomainCounts[i], counts[g])
		}
	}
	for i, c := range s.Classes {
		if s.ClassCounts[i] != classes[c] {
			t.Errorf("class %s: %d cells, want %d", c, s.ClassCounts[i], classes[c])
		}
	}
	bar := make([]float64, d)
	for _, g := range s.Domains {
		for j := range d {
			bar[j] += sums[g][j] / float64(counts[g]) / 12
		}
	}
	var v float64
	for _, g := range s.Domains {
		for j := range d {
			dv := sums[g][j]/float64(counts[g]) - bar[j]
			v += dv * dv
		}
	}
	v /= 12
	if math.Abs(m.InputVariance-v) > 1e-12*v || m.ProjectedVariance != m.InputVariance {
		t.Errorf("variances %v and %v, want %v", m.InputVariance, m.ProjectedVariance, v)
	}

	// The file.
	path := filepath.Join(t.TempDir(), "input.dica")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := m.MarshalBinary()
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Errorf("the input model changes in a round trip")
	}
	if z2, err := back.Transform(raw, TransformOptions{}); err != nil || !mat.Equal(z2, want) {
		t.Errorf("the loaded input model projects differently (%v)", err)
	}

	// A model file whose method is input with another kernel is corrupt.
	var e encoder
	p := *m.plan
	p.in.landmarks = mat.NewDense(d, d, nil)
	p.in.landmarks.Scale(2, eye(d))
	p.encode(&e)
	m.encodeFields(&e, m.W)
	encodeLearner(&e, nil)
	var bad Model
	if err := bad.UnmarshalBinary(seal(ModelMagic, modelVersion, e.b)); err == nil || !strings.Contains(err.Error(), "unit vectors") {
		t.Errorf("an input model on other points: %v", err)
	}

	// Only Fit takes the method.
	if _, err := NewPlan(ctx, train.Source(), Config{Method: Input}); err == nil || !strings.Contains(err.Error(), "unknown method input") {
		t.Errorf("NewPlan of input: %v", err)
	}
	if _, err := Fit(ctx, train.Source(), Config{Method: Input, Preprocessing: &preprocess.Pipeline{Channels: []preprocess.Channel{}}}); err == nil {
		t.Errorf("Fit of input with a preprocessing of no channel: no error")
	}
	nan := *ds
	nan.X = mat.DenseCopyOf(pre)
	nan.X.Set(5, 1, math.NaN())
	if _, err := Fit(ctx, nan.Source(), Config{Method: Input}); err == nil || !strings.Contains(err.Error(), "row 6, column 2") {
		t.Errorf("Fit of input on a NaN: %v", err)
	}
}

// TestModelVersion3Loads writes a model in the encoding of version 3,
// which has no classifier, and the legacy version 2 file: both load as
// models without a classifier, and their predictions say why.
func TestModelVersion3Loads(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	m, err := Fit(context.Background(), ds.Source(), Config{Method: DICA, Rank: 30, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	var e encoder
	m.plan.encode(&e)
	m.encodeFields(&e, m.W)
	var v3 Model
	if err := v3.UnmarshalBinary(seal(ModelMagic, 3, e.b)); err != nil {
		t.Fatal(err)
	}
	v2, err := Load(filepath.Join("..", "testdata", "legacy", "model-v2.dica"))
	if err != nil {
		t.Fatal(err)
	}
	for name, old := range map[string]*Model{"version 3": &v3, "version 2": v2} {
		if old.Classifier() != nil {
			t.Errorf("%s: a classifier", name)
		}
		x := mat.NewDense(2, len(old.Inputs()), nil)
		_, _, err := old.Predict(x)
		if !errors.Is(err, ErrNoClassifier) || !strings.Contains(err.Error(), "this model has no classifier: fit it with --classifier svm") {
			t.Errorf("%s: Predict says %v", name, err)
		}
		if err := old.PredictStream(context.Background(), ds.Source(), PredictOptions{}, nil); !errors.Is(err, ErrNoClassifier) {
			t.Errorf("%s: PredictStream says %v", name, err)
		}
	}
	// A version 3 file with a classifier's bytes after its end is refused.
	encodeLearner(&e, nil)
	if err := v3.UnmarshalBinary(seal(ModelMagic, 3, e.b)); err == nil || !strings.Contains(err.Error(), "unexpected bytes") {
		t.Errorf("a version 3 file with a learner flag: %v", err)
	}
}

// TestLearnerFile checks that a model's classifier survives the file, that
// SetClassifier refuses a learner of more components than the model has,
// and that a corrupted learner is refused at load.
func TestLearnerFile(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	m, err := Fit(context.Background(), ds.Source(), Config{Method: DICA, Rank: 30, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	k := m.Components()
	cl := &classify.Model{Kind: classify.SVM, Mean: make([]float64, k), Scale: make([]float64, k),
		Classes: []string{"1", "2", "3"}, W: mat.NewDense(3, k, nil), Intercept: []float64{0, 1, -1},
		InvTemperature: 2, Calibration: classify.Calibration{Source: "samples", Cells: 10, Folds: 2},
		Params: classify.Params{Method: "dica", Sigma: 1, Components: k, C: 1}, Score: 0.9, Folds: 2, TrainCells: 150}
	for j := range k {
		cl.Scale[j] = float64(j + 1)
		cl.W.Set(j%3, j, 1)
	}
	if err := m.SetClassifier(cl); err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	got := back.Classifier()
	if got == nil || got.Kind != cl.Kind || !mat.Equal(got.W, cl.W) || got.InvTemperature != 2 || got.Calibration != cl.Calibration || got.Params != cl.Params || got.Score != 0.9 || got.TrainCells != 150 {
		t.Errorf("the classifier after a round trip: %+v", got)
	}
	wide := *cl
	wide.Mean, wide.Scale = make([]float64, k+1), make([]float64, k+1)
	wide.W = mat.NewDense(3, k+1, nil)
	for j := range wide.Scale {
		wide.Scale[j] = 1
	}
	if err := m.SetClassifier(&wide); err == nil || !strings.Contains(err.Error(), "takes 3 components, the model has 2") {
		t.Errorf("a classifier of %d components on a model of %d: %v", k+1, k, err)
	}
	if err := m.SetClassifier(nil); err != nil || m.Classifier() != nil {
		t.Errorf("removing the classifier: %v", err)
	}
	// A scale of 0 in the file.
	bad := *cl
	bad.Scale = append([]float64{0}, cl.Scale[1:]...)
	m.learner = &bad
	b, err = m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := back.UnmarshalBinary(b); err == nil || !strings.Contains(err.Error(), "scale 1 is 0") {
		t.Errorf("a corrupted classifier: %v", err)
	}

}
