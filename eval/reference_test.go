package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// refEvaluate is Evaluate computed the plain way, method by method and
// point by point, sharing nothing: every grid point of every inner fold
// is fitted by dica.Fit and projected by Model.Transform on its own, its
// learner trained on its own. It is the reference of the shared inner
// cross-validation and final stage.
func refEvaluate(t *testing.T, ds *dataset.Dataset, splits []Split, o Options) (*Result, error) {
	t.Helper()
	ctx := context.Background()
	e, err := newEvaluator(ds, splits, o)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	for _, name := range e.methods {
		mr := MethodResult{Method: name}
		for si := range splits {
			sr, err := refSplit(t, ctx, e, name, si)
			if err != nil {
				return nil, err
			}
			mr.Splits = append(mr.Splits, *sr)
			mr.Scores = append(mr.Scores, mr.Splits[si].Scores...)
		}
		mr.Mean, mr.SD = meanSD(mr.Scores)
		mr.summarize(e.regression)
		res.Methods = append(res.Methods, mr)
	}
	return res, nil
}

// refFit fits the transformation of a method with dica.Fit.
func refFit(ctx context.Context, e *evaluator, name string, p Params, k int, ds *dataset.Dataset) (transformer, error) {
	if name == Input {
		return transformer{batch: e.o.BatchCenter}, nil
	}
	m, err := dica.Fit(ctx, ds.Source(), e.config(fitSpec{name: name, p: p, k: k}))
	if err != nil {
		return transformer{}, err
	}
	if m.Components() == 0 {
		return transformer{}, fmt.Errorf("%s returned no components", name)
	}
	return transformer{model: m, batch: e.o.BatchCenter}, nil
}

// refSplit evaluates one method on one split. Like the evaluation before
// the shared grid, it fits each inner point on the largest k of the grid
// and takes the first columns of the projection.
func refSplit(t *testing.T, ctx context.Context, e *evaluator, name string, si int) (*SplitResult, error) {
	s := e.splits[si]
	sr := &SplitResult{Train: e.names(s.Train), Test: e.names(s.Test)}
	g := e.grid(name)
	points := g.points()
	sr.Params = points[0]
	if g.size() > 1 || e.canCrossValidate(si, name) {
		groups := e.groups(s.Train)
		sr.InnerFolds = len(groups)
		sum := make([]float64, len(points))
		count := make([]int, len(points))
		errs := make([]string, len(points))
		kmax := 0
		for _, k := range g.components {
			kmax = max(kmax, k)
		}
		for f, held := range groups {
			var inner []int
			for j, gr := range groups {
				if j != f {
					inner = append(inner, gr...)
				}
			}
			fitRows := e.sample(si, inner, e.o.MaxFitCells, e.rng(si, f, purposeInnerFit))
			validRows := e.sample(si, held, e.o.MaxFitCells, e.rng(si, f, purposeInnerValid))
			fitDS := e.subset(fitRows)
			for pi, p := range points {
				if errs[pi] != "" {
					continue
				}
				fail := func(err error) { errs[pi] = fmt.Sprintf("inner fold %d: %v", f+1, err) }
				tr, err := refFit(ctx, e, name, p, kmax, fitDS)
				if err != nil {
					fail(err)
					continue
				}
				a, err := tr.apply(e, fitDS.X, fitRows, p.Components)
				if err != nil {
					fail(err)
					continue
				}
				b, err := tr.apply(e, e.ds.Subset(validRows).X, validRows, p.Components)
				if err != nil {
					fail(err)
					continue
				}
				l, err := e.train(ctx, a, fitRows, p, e.rng(si, f, purposeLearner))
				if err != nil {
					fail(err)
					continue
				}
				acc := map[int]*tally{}
				if err := e.score(l, b, validRows, acc, nil); err != nil {
					fail(err)
					continue
				}
				for _, gi := range held {
					sum[pi] += e.value(acc[gi])
					count[pi]++
				}
			}
		}
		// KPCA's ridge only rescales its components, which the learner's
		// standardization undoes: the grid scores KPCA at lambda > 0 as
		// the same point at lambda = 0 when that fit succeeded, so that
		// the choice among them does not hang on rounding.
		if name == "kpca" {
			for pi, p := range points {
				for qi, q := range points[:pi] {
					q.Lambda = p.Lambda
					if q == p && q.Lambda != points[qi].Lambda && errs[qi] == "" {
						sum[pi], count[pi], errs[pi] = sum[qi], count[qi], errs[qi]
						break
					}
				}
			}
		}
		if len(points) == 1 {
			singlePoint(sr, points[0], sum[0], count[0], errs[0])
		} else if err := e.choose(name, points, sum, count, errs, sr); err != nil {
			return nil, err
		}
	}
	for _, gi := range s.Train {
		sr.TrainCells += len(e.domainRows(si, gi))
	}
	for _, gi := range s.Test {
		sr.TestCells += len(e.domainRows(si, gi))
	}
	sr.UnseenClasses = e.unseenClasses(si)
	// A transductive fit is on every cell of the split's domains, in
	// domain order, without labels (the supervised methods' with the test
	// cells' labels hidden, once dica.Fit takes them).
	m, _, _ := parseMethod(name)
	trans := e.o.Transductive && name != Input && (!m.Supervised() || partialLabels && !e.regression)
	fitDoms := s.Train
	if trans {
		fitDoms = append(append([]int(nil), s.Train...), s.Test...)
		slices.Sort(fitDoms)
	}
	fitRows := e.sample(si, fitDoms, e.o.FinalFitCells, e.rng(si, 0, purposeFinalFit))
	trainRows := e.sample(si, s.Train, e.o.MaxTrainCells, e.rng(si, 0, purposeFinalTrain))
	sr.FitCells, sr.Transductive = len(fitRows), trans
	if name == Input {
		sr.FitCells = len(trainRows)
	}
	fitDS := e.subset(fitRows)
	if trans {
		fitDS = e.ds.Subset(fitRows)
		if m.Supervised() {
			for i, p := range fitRows {
				if !slices.Contains(s.Train, e.ds.Domain[p]) {
					fitDS.Label[i] = -1
				}
			}
		} else {
			fitDS.Label, fitDS.ClassNames = nil, nil
		}
		fitDS.Compact()
	}
	tr, err := refFit(ctx, e, name, sr.Params, sr.Params.Components, fitDS)
	if err != nil {
		t.Fatalf("%s: final fit: %v", name, err)
	}
	z, err := tr.apply(e, e.ds.Subset(trainRows).X, trainRows, sr.Params.Components)
	if err != nil {
		t.Fatal(err)
	}
	_, sr.Components = z.Dims()
	if tr.model != nil {
		sr.SigmaUsed = kernel.Bandwidth(tr.model.Config().Kernel)
		if e.regression && tr.model.Config().Method.Supervised() {
			sr.TargetSigmaUsed = kernel.Bandwidth(tr.model.Config().OutputKernel)
		}
	}
	l, err := e.train(ctx, z, trainRows, sr.Params, e.rng(si, 0, purposeLearner))
	if err != nil {
		t.Fatal(err)
	}
	sr.Learner = l.desc
	if !e.regression {
		sr.Confusion = make([][]int, len(e.ds.ClassNames))
		for i := range sr.Confusion {
			sr.Confusion[i] = make([]int, len(e.ds.ClassNames))
		}
	}
	var pooled tally
	mix := e.newMixingSample(si)
	for _, gi := range s.Test {
		rows := e.domainRows(si, gi)
		zt, err := tr.apply(e, e.ds.Subset(rows).X, rows, sr.Params.Components)
		if err != nil {
			t.Fatal(err)
		}
		acc := map[int]*tally{}
		var conf [][]int
		if !e.regression {
			conf = make([][]int, len(e.ds.ClassNames))
			for i := range conf {
				conf[i] = make([]int, len(e.ds.ClassNames))
			}
		}
		if err := e.score(l, zt, rows, acc, conf); err != nil {
			t.Fatal(err)
		}
		tl := acc[gi]
		pooled.sum += tl.sum
		pooled.count += tl.count
		pooled.cells += tl.cells
		d := DomainScore{Domain: e.ds.DomainNames[gi], Cells: tl.cells, Score: e.value(tl)}
		if conf != nil {
			for i, row := range conf {
				for j, v := range row {
					sr.Confusion[i][j] += v
				}
			}
			d.FMeasure = FMeasure(conf, -1)
		}
		sr.Scores = append(sr.Scores, d)
		if err := mix.add(l, zt, rows); err != nil {
			t.Fatal(err)
		}
	}
	sr.Pooled, sr.pooled = e.value(&pooled), pooled
	for _, d := range sr.Scores {
		sr.DomainMean += d.Score
	}
	sr.DomainMean /= float64(len(sr.Scores))
	if sr.Mixing, err = mix.measure(ctx); err != nil {
		t.Fatal(err)
	}
	return sr, nil
}

// TestSharedGridReference checks the shared inner cross-validation and
// final stage against refEvaluate, bit for bit (every grid point's score
// and error, the chosen points, the test scores, confusion matrices and
// mixing measures): classification and regression, the streaming and
// exact solvers, batch centering, the distributional learner, a k above
// what the supervised methods return (trained once for both k), fits that
// fail (a bandwidth so wide that the landmarks are duplicates), an inner
// fold where every point fails (one class in its fitting cells; the same
// error), and 1 and 3 cores. The inner scores of points that share
// their learners with an earlier point (KPCA's lambdas) agree to rounding.
func TestSharedGridReference(t *testing.T) {
	cls := toy.Classification(toy.Options{Domains: 6, MeanSize: 90, Dim: 4, Classes: 3, Seed: 4})
	reg := toy.Regression(toy.Options{Domains: 5, MeanSize: 70, Seed: 3})
	two := []Split{{Train: []int{0, 1, 2, 3}, Test: []int{4, 5}}, {Train: []int{1, 3, 4, 5}, Test: []int{0, 2}}}
	// Domains 0 and 1 hold one class only: the supervised fits of the
	// inner fold that holds out domains 2 and 3 fail.
	oneClass := toy.Classification(toy.Options{Domains: 5, MeanSize: 90, Dim: 4, Classes: 2, Seed: 4})
	for p, g := range oneClass.Domain {
		if g < 2 {
			oneClass.Label[p] = 0
		}
	}
	for _, c := range []struct {
		name   string
		ds     *dataset.Dataset
		splits []Split
		o      Options
	}{
		{"classes", cls, two, Options{Rank: 25, Seed: 2, MixingCells: 100,
			Grid: Grid{Sigma: []float64{0, 1.5}, Lambda: []float64{0, 0.3}, Components: []int{1, 2, 4}, C: []float64{0.5, 2}}}},
		{"classes single point", cls, two[:1], Options{Rank: 25, Seed: 5, MixingCells: 100, Grid: Grid{Sigma: []float64{1}, Components: []int{2}}}},
		{"classes failing fits", cls, two[:1], Options{Methods: []string{"kpca", "dica"}, Rank: 20, Seed: 2, MixingCells: -1,
			Grid: Grid{Sigma: []float64{1e9, 1.5}, Components: []int{2}}}},
		{"classes every point fails", oneClass, []Split{{Train: []int{0, 1, 2, 3}, Test: []int{4}}}, Options{Methods: []string{"kpca", "dica"}, Rank: 20, Seed: 2, MixingCells: -1, InnerFolds: 2,
			Grid: Grid{Sigma: []float64{1, 1.5}, Components: []int{2}}}},
		{"classes single point fails", oneClass, []Split{{Train: []int{0, 1, 2, 3}, Test: []int{4}}}, Options{Methods: []string{"input", "dica"}, Rank: 20, Seed: 2, MixingCells: -1, InnerFolds: 2,
			Grid: Grid{Sigma: []float64{1.5}, Components: []int{2}}}},
		{"classes batch center", cls, two[:1], Options{Rank: 25, Seed: 6, BatchCenter: true, MixingCells: 100,
			Grid: Grid{Sigma: []float64{1, 2}, Components: []int{2, 3}}}},
		{"classes transductive", cls, []Split{{Train: []int{2}, Test: []int{0, 1, 3, 4, 5}}}, Options{Methods: []string{"input", "kpca", "udica", "coir"},
			Rank: 25, Seed: 7, Transductive: true, MixingCells: 100, Grid: Grid{Sigma: []float64{1.5}, Components: []int{2}}}},
		{"classes transductive batch center", cls, two, Options{Rank: 25, Seed: 8, Transductive: true, BatchCenter: true, MixingCells: 100,
			Grid: Grid{Sigma: []float64{1, 2}, Components: []int{2, 3}}}},
		{"classes transductive exact", cls, []Split{{Train: []int{0}, Test: []int{1, 2, 3, 4, 5}}}, Options{Methods: []string{"kpca", "udica"},
			Solver: dica.Exact, Seed: 2, MaxFitCells: 150, Transductive: true, MixingCells: -1, Grid: Grid{Sigma: []float64{1}, Components: []int{2}}}},
		{"classes exact", cls, two[:1], Options{Solver: dica.Exact, Seed: 2, MaxFitCells: 150, MixingCells: -1,
			Grid: Grid{Sigma: []float64{1, 2}, Lambda: []float64{0, 0.2}, Components: []int{2}}}},
		{"classes distributional", cls, two[:1], Options{Methods: []string{"input", "dica"}, Rank: 25, Seed: 2, Learner: Distributional, MixingCells: -1,
			Grid: Grid{Sigma: []float64{1}, Components: []int{2}, DistSigma: []float64{0, 0.5}, C: []float64{1, 3}}}},
		{"regression", reg, []Split{{Train: []int{0, 1, 2}, Test: []int{3, 4}}}, Options{Rank: 20, Seed: 2, MixingCells: 100,
			Grid: Grid{Sigma: []float64{0, 2}, TargetSigma: []float64{0, 1}, Lambda: []float64{0, 0.1}, Components: []int{1, 2}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, werr := refEvaluate(t, c.ds, c.splits, c.o)
			for _, procs := range []int{1, 3} {
				old := runtime.GOMAXPROCS(procs)
				got, err := Evaluate(context.Background(), c.ds, c.splits, c.o)
				runtime.GOMAXPROCS(old)
				if werr != nil || err != nil {
					if werr == nil || err == nil || werr.Error() != err.Error() {
						t.Fatalf("%d cores: error %v, reference %v", procs, err, werr)
					}
					continue
				}
				zeroTimes(got)
				for i := range want.Methods {
					w, g := want.Methods[i], got.Methods[i]
					w.Seconds, g.Seconds = 0, 0
					noNaN(&w)
					noNaN(&g)
					// Points whose learner inputs agree to rounding (KPCA
					// at every lambda) share the learners of the first:
					// their scores agree to rounding with the
					// reference's.
					for si := range w.Splits {
						ws, gs := &w.Splits[si], &g.Splits[si]
						if len(ws.Grid) != len(gs.Grid) {
							continue
						}
						ws.Grid, gs.Grid = slices.Clone(ws.Grid), slices.Clone(gs.Grid)
						for pi := range ws.Grid {
							a, b := ws.Grid[pi].Score, gs.Grid[pi].Score
							if math.Abs(a-b) > 1e-12*math.Abs(a) {
								t.Errorf("%d cores: %s split %d point %d: inner score %v, reference %v", procs, w.Method, si+1, pi, b, a)
							}
							gs.Grid[pi].Score = a
						}
					}
					if !reflect.DeepEqual(w, g) {
						t.Errorf("%d cores: %s differs from the reference: %s", procs, w.Method, diff(g, w))
					}
				}
			}
		})
	}
}

// noNaN replaces the NaN cLISI of splits without classes by -1 (NaN is
// not equal to itself for reflect.DeepEqual, nor valid JSON).
func noNaN(m *MethodResult) {
	for i := range m.Splits {
		if mx := m.Splits[i].Mixing; mx != nil && math.IsNaN(mx.CLISI) {
			c := *mx
			c.CLISI = -1
			m.Splits[i].Mixing = &c
		}
	}
}

// diff lists the lines of the indented JSON of got that differ from
// want's.
func diff(got, want MethodResult) string {
	gb, _ := json.MarshalIndent(got, "", " ")
	wb, _ := json.MarshalIndent(want, "", " ")
	gl, wl := strings.Split(string(gb), "\n"), strings.Split(string(wb), "\n")
	var b strings.Builder
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			fmt.Fprintf(&b, "\n  line %d: got %s, want %s", i+1, strings.TrimSpace(g), strings.TrimSpace(w))
			if b.Len() > 2000 {
				break
			}
		}
	}
	return b.String()
}

// TestSameInput checks the test of equal learner inputs: equal up to the
// signs of columns and to sameInputTol, on the training and the held-out
// features both.
func TestSameInput(t *testing.T) {
	a := mat.NewDense(3, 2, []float64{1, -2, 0.5, 0, -1.5, 2})
	v := mat.NewDense(2, 2, []float64{0.3, 1, -0.7, -1})
	in := learnInput{train: a, valid: v}
	flip := func(m *mat.Dense, col int, eps float64) *mat.Dense {
		c := mat.DenseCopyOf(m)
		r, _ := c.Dims()
		for i := range r {
			c.Set(i, col, -c.At(i, col))
		}
		c.Set(r-1, col, c.At(r-1, col)+eps)
		return c
	}
	for _, c := range []struct {
		name         string
		train, valid *mat.Dense
		want         bool
	}{
		{"equal", mat.DenseCopyOf(a), mat.DenseCopyOf(v), true},
		{"a column negated", flip(a, 1, 0), flip(v, 1, 0), true},
		{"negated and rounded", flip(a, 0, 1e-12), flip(v, 0, -1e-12), true},
		{"negated in training only", flip(a, 1, 0), mat.DenseCopyOf(v), false},
		{"beyond the tolerance", flip(a, 0, 1e-7), flip(v, 0, 0), false},
		{"another shape", mat.NewDense(3, 1, []float64{1, 0.5, -1.5}), mat.NewDense(2, 1, []float64{0.3, -0.7}), false},
	} {
		if got := in.same(c.train, c.valid); got != c.want {
			t.Errorf("%s: same = %v, want %v", c.name, got, c.want)
		}
	}
}
