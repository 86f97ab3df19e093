package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/toy"
)

// bruteReference computes the reference choice the plain way: each
// domain's covariance from the sums of products, sum x_j x_k - n m_j m_k
// over n - 1, then every pair's Frobenius distance, the mean over the other
// domains and the first smallest.
func bruteReference(ds *dataset.Dataset) (int, []float64) {
	d := ds.D()
	doms := len(ds.DomainNames)
	covs := make([]*mat.Dense, doms)
	for g := range doms {
		var n float64
		sum := make([]float64, d)
		prod := mat.NewDense(d, d, nil)
		for p := range ds.N() {
			if ds.Domain[p] != g {
				continue
			}
			n++
			for j := range d {
				sum[j] += ds.X.At(p, j)
				for k := range d {
					prod.Set(j, k, prod.At(j, k)+ds.X.At(p, j)*ds.X.At(p, k))
				}
			}
		}
		c := mat.NewDense(d, d, nil)
		for j := range d {
			for k := range d {
				c.Set(j, k, (prod.At(j, k)-sum[j]*sum[k]/n)/(n-1))
			}
		}
		covs[g] = c
	}
	dist := make([]float64, doms)
	best := 0
	for g := range doms {
		for h := range doms {
			if h == g {
				continue
			}
			var diff mat.Dense
			diff.Sub(covs[g], covs[h])
			var ss float64
			for j := range d {
				for k := range d {
					ss += diff.At(j, k) * diff.At(j, k)
				}
			}
			dist[g] += math.Sqrt(ss)
		}
		dist[g] /= float64(doms - 1)
		if dist[g] < dist[best] {
			best = g
		}
	}
	return best, dist
}

// TestChooseReference checks the reference choice against bruteReference
// on toy data whose domains differ in scale and shift, and on domains
// whose covariances are multiples s_g C of one matrix, where the
// distances are known: mean_h |s_g - s_h| ||C||_F.
func TestChooseReference(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 7, MeanSize: 60, Dim: 5, Classes: 3, Seed: 11})
	// Scale the domains differently so that the covariances differ.
	rng := rand.New(rand.NewPCG(1, 1))
	scale := make([]float64, 7)
	for g := range scale {
		scale[g] = 0.5 + rng.Float64()
	}
	for p := range ds.N() {
		row := ds.X.RawRowView(p)
		for j := range row {
			row[j] *= scale[ds.Domain[p]]
		}
	}
	wantRef, wantDist := bruteReference(ds)
	ref, dist, err := ChooseReference(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if ref != wantRef {
		t.Errorf("reference %d, brute force %d (distances %v, %v)", ref, wantRef, dist, wantDist)
	}
	for g := range dist {
		if math.Abs(dist[g]-wantDist[g]) > 1e-12*wantDist[g] {
			t.Errorf("domain %d: distance %.17g, brute force %.17g", g, dist[g], wantDist[g])
		}
	}
	// The choice must not be trivial here: the distances differ.
	if slices.Min(dist) == slices.Max(dist) {
		t.Fatalf("all distances equal %v", dist)
	}

	// Multiples of one covariance: domain g is sqrt(s_g) times a base
	// sample, so C_g = s_g C. With s = 1, 2, 3, 4, 10 the mean distances
	// are 15/4, 12/4, 11/4, 12/4 and 30/4 times ||C||_F: the third domain
	// (index 2) is the reference.
	base := toy.Classification(toy.Options{Domains: 1, MeanSize: 50, Dim: 3, Classes: 2, Seed: 5})
	s := []float64{1, 2, 3, 4, 10}
	n, d := base.N(), base.D()
	x := mat.NewDense(n*len(s), d, nil)
	var names []string
	for g, sg := range s {
		for p := range n {
			for j := range d {
				x.Set(g*n+p, j, math.Sqrt(sg)*base.X.At(p, j))
			}
			names = append(names, []string{"a", "b", "c", "d", "e"}[g])
		}
	}
	multi, err := dataset.New(x, names)
	if err != nil {
		t.Fatal(err)
	}
	ref, dist, err = ChooseReference(ctx, multi)
	if err != nil {
		t.Fatal(err)
	}
	bc := covariance(base, seq(n), d)
	var norm float64
	for _, v := range bc {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	for g, w := range []float64{15, 12, 11, 12, 30} {
		if want := w / 4 * norm; math.Abs(dist[g]-want) > 1e-12*want {
			t.Errorf("multiples: domain %d: distance %v, want %v", g, dist[g], want)
		}
	}
	if ref != 2 {
		t.Errorf("multiples: reference %d, want 2", ref)
	}
	// Ties go to the first domain: two equal domains beside a third.
	tie, err := dataset.New(mat.NewDense(6, 1, []float64{0, 1, 0, 1, 0, 3}), []string{"a", "a", "b", "b", "c", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if ref, _, err := ChooseReference(ctx, tie); err != nil || ref != 0 {
		t.Errorf("tie: reference %d (%v), want 0", ref, err)
	}

	one, _ := dataset.New(mat.NewDense(3, 1, []float64{0, 1, 2}), []string{"a", "a", "a"})
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		want string
	}{
		{"nil", nil, "nil data set"},
		{"one domain", one, "1 domain(s) with at least 2 labelled cells"},
	} {
		if _, _, err := ChooseReference(ctx, c.ds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ChooseReference(cancelled, ds); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// TestReferenceSplit checks the protocol's split (one training domain,
// every other tested) and an evaluation of it: the learner is trained on
// the reference's cells alone, every other domain is scored, the
// transductive fits use every cell and the others the reference's.
func TestReferenceSplit(t *testing.T) {
	ds := shifted(5, 3)
	s, err := ReferenceSplit(ds, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Split{Train: []int{2}, Test: []int{0, 1, 3, 4}}); !reflect.DeepEqual(s, want) {
		t.Errorf("split %+v, want %+v", s, want)
	}
	alone := ds.Subset(seq(ds.DomainSizes()[0]))
	alone.Compact()
	for _, c := range []struct {
		ds   *dataset.Dataset
		ref  int
		want string
	}{
		{ds, 5, "index 5 out of range [0, 5)"},
		{ds, -1, "index -1 out of range"},
		{nil, 0, "nil data set"},
		{alone, 0, "no domain besides the reference"},
	} {
		if _, err := ReferenceSplit(c.ds, c.ref); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReferenceSplit(%d): %v, want %q", c.ref, err, c.want)
		}
	}

	sizes := ds.DomainSizes()
	o := Options{Methods: []string{"input", "kpca", "udica", "coir"}, Rank: 20, Seed: 4, Transductive: true,
		Grid: Grid{Sigma: []float64{1.5}, Components: []int{1}}}
	res, err := Evaluate(context.Background(), ds, []Split{s}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Transductive || len(res.Methods) != 4 {
		t.Fatalf("transductive %v, %d methods", res.Transductive, len(res.Methods))
	}
	for _, m := range res.Methods {
		sr := m.Splits[0]
		if !reflect.DeepEqual(sr.Train, []string{"d3"}) || !reflect.DeepEqual(sr.Test, []string{"d1", "d2", "d4", "d5"}) {
			t.Errorf("%s: train %v test %v", m.Method, sr.Train, sr.Test)
		}
		if sr.TrainCells != sizes[2] || sr.TestCells != ds.N()-sizes[2] || sr.InnerFolds != 0 {
			t.Errorf("%s: %d training cells, %d test cells, %d inner folds; want %d, %d, 0", m.Method, sr.TrainCells, sr.TestCells, sr.InnerFolds, sizes[2], ds.N()-sizes[2])
		}
		trans := m.Method != "input"
		fit := sizes[2]
		if trans {
			fit = ds.N()
		}
		if sr.Transductive != trans || sr.FitCells != fit {
			t.Errorf("%s: transductive %v on %d cells; want %v on %d", m.Method, sr.Transductive, sr.FitCells, trans, fit)
		}
		if len(m.Scores) != 4 || m.FMeasure == nil || m.FMeasure.N != 4 {
			t.Fatalf("%s: %d scores, F-measure %+v", m.Method, len(m.Scores), m.FMeasure)
		}
		var fs []float64
		for _, d := range m.Scores {
			if !(d.FMeasure > 0 && d.FMeasure <= 1) {
				t.Errorf("%s: %s: F-measure %v", m.Method, d.Domain, d.FMeasure)
			}
			fs = append(fs, d.FMeasure)
		}
		if want := spreadOf(fs); *m.FMeasure != want {
			t.Errorf("%s: F-measure %+v, want %+v", m.Method, *m.FMeasure, want)
		}
	}
	// Without the transductive fits, UDICA has a single domain to fit.
	o.Transductive = false
	if _, err := Evaluate(context.Background(), ds, []Split{s}, o); err == nil || !strings.Contains(err.Error(), "udica needs at least 2 training domains, have 1 (a transductive fit") {
		t.Errorf("inductive UDICA on one domain: %v", err)
	}
	// DICA fitted transductively: the label term on the training domain,
	// the domain term on every domain.
	o.Transductive, o.Methods = true, []string{"dica"}
	res2, err := Evaluate(context.Background(), ds, []Split{s}, o)
	if err != nil || !res2.Methods[0].Splits[0].Transductive || res2.Methods[0].Splits[0].FitCells != ds.N() {
		t.Errorf("DICA on one training domain, transductive: %v", err)
	}
}

// TestTransductiveIgnoresTestLabels: the transductive fits never read the
// test domains' labels (those of the supervised methods too, once they
// are transductive). Shuffling the labels of the test cells changes
// the scores but not one prediction: the column sums of every test
// domain's confusion matrix (the cells predicted in each class) stay.
func TestTransductiveIgnoresTestLabels(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 70, Dim: 4, Classes: 3, Seed: 6})
	s := Split{Train: []int{1}, Test: []int{0, 2, 3, 4}}
	o := Options{Methods: []string{"kpca", "udica"}, Rank: 20, Seed: 4, Transductive: true, MixingCells: -1,
		Grid: Grid{Sigma: []float64{1.5}, Components: []int{2}}}
	for _, m := range []string{"coir", "dica"} {
		if FitsTransductively(m, false) {
			o.Methods = append(o.Methods, m)
		}
	}
	predicted := func(ds *dataset.Dataset) [][]int {
		res, err := Evaluate(context.Background(), ds, []Split{s}, o)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for _, m := range res.Methods {
			cols := make([]int, len(ds.ClassNames))
			for _, row := range m.Confusion {
				for j, v := range row {
					cols[j] += v
				}
			}
			out = append(out, cols)
		}
		return out
	}
	want := predicted(ds)
	shuffled := ds.Subset(seq(ds.N()))
	rng := rand.New(rand.NewPCG(9, 9))
	changed := 0
	for p := range shuffled.N() {
		if shuffled.Domain[p] != 1 {
			old := shuffled.Label[p]
			shuffled.Label[p] = rng.IntN(len(ds.ClassNames))
			if shuffled.Label[p] != old {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no label changed")
	}
	if got := predicted(shuffled); !reflect.DeepEqual(got, want) {
		t.Errorf("predicted counts per class %v with the test labels shuffled, %v before", got, want)
	}
}

func TestFitsTransductively(t *testing.T) {
	for _, c := range []struct {
		method     string
		regression bool
		want       bool
	}{
		{"input", false, false},
		{"kpca", false, true},
		{" UDICA", true, true},
		{"coir", false, partialLabels},
		{"dica", false, partialLabels},
		{"dica", true, false},
		{"pca", false, false},
	} {
		if got := FitsTransductively(c.method, c.regression); got != c.want {
			t.Errorf("FitsTransductively(%q, %v) = %v, want %v", c.method, c.regression, got, c.want)
		}
	}
}
