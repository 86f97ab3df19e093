package dica

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/preprocess"
	"github.com/dicalab/dica/toy"
)

// TestPipelineRecorded fits with a recorded preprocessing and checks that
// the model file keeps it, that Transform applies it to raw cells exactly
// as a source applying it would, and that a changed preprocessing changes
// the plan.
func TestPipelineRecorded(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 60, Seed: 2})
	d := ds.D()
	// Raw "intensities" and their log1p, the rows a source would deliver.
	raw := mat.NewDense(ds.N(), d, nil)
	pre := mat.NewDense(ds.N(), d, nil)
	for i := 0; i < ds.N(); i++ {
		for j := 0; j < d; j++ {
			v := 100 * math.Exp(ds.X.At(i, j))
			raw.Set(i, j, v)
			if j%2 == 0 {
				pre.Set(i, j, math.Log1p(v))
			} else {
				pre.Set(i, j, v/100)
			}
		}
	}
	// Compensation by a diagonal matrix: divide the odd channels by 100.
	names := []string{"x1", "x2", "x3", "x4", "x5"}[:d]
	var odd []string
	for j := 1; j < d; j += 2 {
		odd = append(odd, names[j])
	}
	spill := make([]float64, len(odd)*len(odd))
	for i := range odd {
		spill[i*len(odd)+i] = 100
	}
	var even []string
	for j := 0; j < d; j += 2 {
		even = append(even, names[j])
	}
	pipe := &preprocess.Pipeline{Format: "fcs", Transform: "log1p", TransformChannels: even,
		Compensation: &preprocess.Spill{Keyword: "$SPILLOVER", Source: "a.fcs", Channels: odd, Matrix: spill}}
	for j, n := range names {
		pipe.Channels = append(pipe.Channels, preprocess.Channel{Name: n, Index: j + 1, PnN: n, PnS: "CD" + n})
	}
	train := *ds
	train.X = pre
	train.Features = names
	m, err := Fit(ctx, train.Source(), Config{Method: DICA, Rank: 40, Sigma: 1, Preprocessing: pipe})
	if err != nil {
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
	if !reflect.DeepEqual(back.Preprocessing(), pipe) {
		t.Fatalf("preprocessing after a round trip:\n%+v\nwant\n%+v", back.Preprocessing(), pipe)
	}
	want, err := back.Transform(pre, TransformOptions{Preprocessed: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Transform(raw, TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Compensation by x S^{-1} with S = 100 I divides by 100 exactly as the
	// rows above; log1p is the same function: the projections agree to
	// rounding of the inverse (1/100 is not exact).
	if !mat.EqualApprox(got, want, 1e-12) {
		t.Errorf("Transform of raw cells differs from the projection of preprocessed cells")
	}
	// The caller's matrix is not modified.
	if raw.At(0, 0) != 100*math.Exp(ds.X.At(0, 0)) {
		t.Errorf("Transform modified its input")
	}
	// Per-file compensation needs the file.
	pf := *pipe
	sp := *pipe.Compensation
	sp.PerFile = true
	pf.Compensation = &sp
	m2, err := Fit(ctx, train.Source(), Config{Method: DICA, Rank: 40, Sigma: 1, Preprocessing: &pf})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Transform(raw, TransformOptions{}); !errors.Is(err, preprocess.ErrNeedsFile) {
		t.Errorf("per-file compensation on raw cells: %v, want ErrNeedsFile", err)
	}
	// Another preprocessing is another plan.
	if m2.plan.Fingerprint() == m.plan.Fingerprint() {
		t.Errorf("plans of different preprocessing share a fingerprint")
	}
}

// TestModelVersion1Loads decodes a model in the first file format, which
// has no preprocessing: it loads with none recorded and projects as before.
func TestModelVersion1Loads(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	m, err := Fit(context.Background(), ds.Source(), Config{Method: DICA, Rank: 30, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The version 1 layout: the plan without the preprocessing flag (the
	// 8 bytes a nil pipeline adds) and the precision (8 bytes at its end),
	// then the model's fields.
	var e encoder
	m.plan.encode(&e)
	e.b = e.b[:len(e.b)-16]
	m.encodeFields(&e, m.W)
	var old Model
	if err := old.UnmarshalBinary(seal(ModelMagic, 1, e.b)); err != nil {
		t.Fatal(err)
	}
	if old.Preprocessing() != nil {
		t.Errorf("a version 1 model has preprocessing %v", old.Preprocessing())
	}
	z1, err := m.Transform(ds.X, TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z2, err := old.Transform(ds.X, TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z1, z2) {
		t.Errorf("the version 1 model projects differently")
	}
}
