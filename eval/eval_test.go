package eval

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/krr"
	"github.com/dicalab/dica/svm"
	"github.com/dicalab/dica/toy"
)

// shifted returns toy classification data with strong domain shifts.
func shifted(domains int, seed uint64) *dataset.Dataset {
	return toy.Classification(toy.Options{Domains: domains, MeanSize: 80, Dim: 4, Classes: 2, Seed: seed})
}

// smallOptions keeps the fits small and fast.
func smallOptions() Options {
	return Options{Rank: 30, Seed: 3, Grid: Grid{Sigma: []float64{0, 2}, Components: []int{1, 3}}}
}

// zeroTimes clears the durations, which differ between runs.
func zeroTimes(r *Result) {
	for i := range r.Methods {
		r.Methods[i].Seconds = 0
		for j := range r.Methods[i].Splits {
			r.Methods[i].Splits[j].FitSeconds = 0
		}
	}
}

func TestRunClassification(t *testing.T) {
	ds := shifted(6, 1)
	train, test := []int{0, 1, 2, 3}, []int{4, 5}
	res, err := Run(context.Background(), ds, train, test, smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Task != "classification" || res.Metric != "accuracy" || res.Cells != ds.N() || res.Rank != 30 {
		t.Errorf("result header %+v", res)
	}
	if got := len(res.Methods); got != len(Methods()) {
		t.Fatalf("%d methods, want %d", got, len(Methods()))
	}
	sizes := ds.DomainSizes()
	for i, m := range res.Methods {
		if m.Method != Methods()[i] {
			t.Errorf("method %d = %q, want %q", i, m.Method, Methods()[i])
		}
		if len(m.Splits) != 1 || len(m.Scores) != 2 {
			t.Fatalf("%s: %d splits, %d scores", m.Method, len(m.Splits), len(m.Scores))
		}
		s := m.Splits[0]
		if !reflect.DeepEqual(s.Train, []string{"d1", "d2", "d3", "d4"}) || !reflect.DeepEqual(s.Test, []string{"d5", "d6"}) {
			t.Errorf("%s: train %v test %v", m.Method, s.Train, s.Test)
		}
		var sum float64
		for j, d := range m.Scores {
			if d.Domain != ds.DomainNames[test[j]] || d.Cells != sizes[test[j]] {
				t.Errorf("%s: score %d is %s with %d cells, want %s with %d", m.Method, j, d.Domain, d.Cells, ds.DomainNames[test[j]], sizes[test[j]])
			}
			if d.Score < 0 || d.Score > 1 {
				t.Errorf("%s: accuracy %v outside [0, 1]", m.Method, d.Score)
			}
			// An accuracy is a count over the domain's cells.
			if c := d.Score * float64(d.Cells); math.Abs(c-math.Round(c)) > 1e-9 {
				t.Errorf("%s: accuracy %v is not a fraction of %d cells", m.Method, d.Score, d.Cells)
			}
			sum += d.Score
		}
		a, b := m.Scores[0].Score, m.Scores[1].Score
		wantSD := math.Abs(a-b) / math.Sqrt2
		if math.Abs(m.Mean-sum/2) > 1e-15 || math.Abs(m.SD-wantSD) > 1e-12 {
			t.Errorf("%s: mean %v sd %v, want %v %v", m.Method, m.Mean, m.SD, sum/2, wantSD)
		}
		wantGrid := 4 // sigma x components
		if m.Method == Input {
			wantGrid = 1
		}
		if wantGrid == 1 {
			// A single point is not chosen, but its inner score is
			// reported.
			if s.InnerFolds != 4 || len(s.Grid) != 0 || !(s.InnerScore > 0.5 && s.InnerScore <= 1) {
				t.Errorf("%s: a single grid point: %d inner folds, %d grid points, inner score %v; want 4, 0 and an accuracy", m.Method, s.InnerFolds, len(s.Grid), s.InnerScore)
			}
		} else {
			if s.InnerFolds != 4 || len(s.Grid) != wantGrid {
				t.Errorf("%s: %d inner folds, %d grid points; want 4, %d", m.Method, s.InnerFolds, len(s.Grid), wantGrid)
			}
			// The chosen point is the first best one.
			best := 0
			for i, g := range s.Grid {
				if g.Err != "" {
					t.Errorf("%s: grid point %d failed: %s", m.Method, i, g.Err)
				}
				if g.Score > s.Grid[best].Score {
					best = i
				}
			}
			if s.Params != s.Grid[best].Params || s.InnerScore != s.Grid[best].Score {
				t.Errorf("%s: chose %+v (%v), want %+v (%v)", m.Method, s.Params, s.InnerScore, s.Grid[best].Params, s.Grid[best].Score)
			}
		}
		if m.Method != Input && (s.SigmaUsed <= 0 || s.Components < 1 || s.Components > s.Params.Components) {
			t.Errorf("%s: sigma used %v, %d components for k = %d", m.Method, s.SigmaUsed, s.Components, s.Params.Components)
		}
		if s.FitCells != sizes[0]+sizes[1]+sizes[2]+sizes[3] {
			t.Errorf("%s: final fit on %d cells", m.Method, s.FitCells)
		}
	}
}

// TestInputReference checks the baseline against a direct computation:
// standardize the training inputs, train the SVM, predict each test domain.
func TestInputReference(t *testing.T) {
	ds := shifted(5, 2)
	train, test := []int{0, 1, 2}, []int{3, 4}
	res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input"}, Seed: 9, Grid: Grid{C: []float64{0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for p, g := range ds.Domain {
		if g <= 2 {
			rows = append(rows, p)
		}
	}
	tr := ds.Subset(rows)
	sc, err := svm.Standardize(tr.X)
	if err != nil {
		t.Fatal(err)
	}
	m, err := svm.Train(context.Background(), ok[*mat.Dense](t)(sc.Apply(tr.X)), tr.Label, 2, svm.Options{C: 0.5, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range test {
		var tr []int
		for p, d := range ds.Domain {
			if d == g {
				tr = append(tr, p)
			}
		}
		te := ds.Subset(tr)
		want := svm.Accuracy(ok[[]int](t)(m.Predict(ok[*mat.Dense](t)(sc.Apply(te.X)))), te.Label)
		if got := res.Methods[0].Scores[i].Score; got != want {
			t.Errorf("domain %s: accuracy %v, want %v", ds.DomainNames[g], got, want)
		}
	}
}

// TestRegressionReference checks regression RMSEs against kernel ridge
// regression computed directly (the data is small enough that nothing is
// subsampled).
func TestRegressionReference(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 60, Seed: 4})
	train, test := []int{0, 1, 2, 3}, []int{4}
	res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input", "kpca", "dica"}, Rank: 20, Seed: 1, Grid: Grid{C: []float64{0.3}, Components: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task != "regression" || res.Metric != "rmse" {
		t.Errorf("task %s metric %s", res.Task, res.Metric)
	}
	var rows, trows []int
	for p, g := range ds.Domain {
		if g < 4 {
			rows = append(rows, p)
		} else {
			trows = append(trows, p)
		}
	}
	tr, te := ds.Subset(rows), ds.Subset(trows)
	sc, err := svm.Standardize(tr.X)
	if err != nil {
		t.Fatal(err)
	}
	xs := ok[*mat.Dense](t)(sc.Apply(tr.X))
	k := kernel.RBF{Sigma: kernel.MedianSigma(xs, 0, 1)}
	m, err := krr.FitExact(xs, mat.Col(nil, 0, tr.Target), k, krr.Options{Lambda: 0.3, Center: true})
	if err != nil {
		t.Fatal(err)
	}
	want := krr.RMSE(ok[[]float64](t)(m.Predict(ok[*mat.Dense](t)(sc.Apply(te.X)))), mat.Col(nil, 0, te.Target))
	if got := res.Methods[0].Scores[0].Score; math.Abs(got-want) > 1e-12*want {
		t.Errorf("input RMSE %v, want %v", got, want)
	}
	sd := stdDev(mat.Col(nil, 0, te.Target))
	for _, mr := range res.Methods {
		if s := mr.Scores[0]; s.Cells != te.N() || !(s.Score > 0) || s.Score > 2*sd {
			t.Errorf("%s: RMSE %v on %d cells (target sd %v, %d cells)", mr.Method, s.Score, s.Cells, sd, te.N())
		}
	}
}

func stdDev(x []float64) float64 {
	var m, ss float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)))
}

// TestInnerCVIgnoresTestDomains replaces the test domains' inputs and labels
// by noise: the inner cross-validation scores and the chosen parameters must
// not change, bit for bit, while the test scores do.
func TestInnerCVIgnoresTestDomains(t *testing.T) {
	ds := shifted(6, 5)
	train, test := []int{0, 1, 2, 3}, []int{4, 5}
	o := smallOptions()
	o.Methods = []string{"input", "udica", "dica"}
	o.Grid.C = []float64{0.1, 1}
	a, err := Run(context.Background(), ds, train, test, o)
	if err != nil {
		t.Fatal(err)
	}
	noisy := ds.Subset(seq(ds.N()))
	rng := rand.New(rand.NewPCG(1, 2))
	for p, g := range noisy.Domain {
		if g >= 4 {
			for j := range noisy.D() {
				noisy.X.Set(p, j, 100*rng.NormFloat64())
			}
			noisy.Label[p] = rng.IntN(2)
		}
	}
	b, err := Run(context.Background(), noisy, train, test, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Methods {
		sa, sb := a.Methods[i].Splits[0], b.Methods[i].Splits[0]
		if !reflect.DeepEqual(sa.Grid, sb.Grid) || sa.Params != sb.Params || sa.InnerScore != sb.InnerScore {
			t.Errorf("%s: the inner CV changed with the test domains: %+v vs %+v", a.Methods[i].Method, sa.Grid, sb.Grid)
		}
		if reflect.DeepEqual(sa.Scores, sb.Scores) {
			t.Errorf("%s: the test scores did not change with the test domains", a.Methods[i].Method)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// separable returns two classes far apart along the first input, with
// domain shifts smaller than the margin.
func separable(domains, per int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := domains * per
	x := mat.NewDense(n, 3, nil)
	names := make([]string, n)
	labels := make([]string, n)
	for p := range n {
		g := p / per
		c := p % 2
		x.Set(p, 0, float64(4*c-2)+0.3*rng.NormFloat64()+0.2*float64(g%3))
		x.Set(p, 1, rng.NormFloat64()+float64(g))
		x.Set(p, 2, rng.NormFloat64()*float64(1+g))
		names[p] = "s" + string(rune('a'+g))
		labels[p] = []string{"neg", "pos"}[c]
	}
	ds, err := dataset.New(x, names)
	if err != nil {
		panic(err)
	}
	if err := ds.SetLabels(labels); err != nil {
		panic(err)
	}
	return ds
}

func TestSeparable(t *testing.T) {
	ds := separable(5, 60, 1)
	res, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3, 4}, Options{Methods: []string{"input", "dica"}, Rank: 30, Seed: 1, Grid: Grid{Components: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Methods {
		for _, s := range m.Scores {
			if s.Score < 0.99 {
				t.Errorf("%s on %s: accuracy %v on separable data", m.Method, s.Domain, s.Score)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	ds := shifted(5, 8)
	o := smallOptions()
	o.Methods = []string{"kpca", "dica"}
	o.MaxFitCells = 150 // subsampled inner fits
	o.MaxTrainCells = 100
	run := func(seed uint64) *Result {
		o.Seed = seed
		r, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3, 4}, o)
		if err != nil {
			t.Fatal(err)
		}
		zeroTimes(r)
		return r
	}
	a, b, c := run(1), run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("runs with seeds 1 and 2 agree")
	}
	for _, m := range a.Methods {
		if s := m.Splits[0]; s.FitCells != ds.N()-ds.DomainSizes()[3]-ds.DomainSizes()[4] {
			t.Errorf("%s: final fit on %d cells", m.Method, s.FitCells)
		}
	}
}

func TestLeaveOneDomainOut(t *testing.T) {
	ds := shifted(4, 3)
	res, err := LeaveOneDomainOut(context.Background(), ds, Options{Methods: []string{"input", "kpca"}, Rank: 20, Seed: 1, Grid: Grid{C: []float64{0.1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sizes := ds.DomainSizes()
	for _, m := range res.Methods {
		if len(m.Splits) != 4 || len(m.Scores) != 4 {
			t.Fatalf("%s: %d splits, %d scores", m.Method, len(m.Splits), len(m.Scores))
		}
		for i, s := range m.Splits {
			if len(s.Test) != 1 || s.Test[0] != ds.DomainNames[i] || len(s.Train) != 3 || s.InnerFolds != 3 {
				t.Errorf("%s split %d: train %v test %v, %d inner folds", m.Method, i, s.Train, s.Test, s.InnerFolds)
			}
			for _, tr := range s.Train {
				if tr == s.Test[0] {
					t.Errorf("%s split %d: test domain %s in training", m.Method, i, tr)
				}
			}
			if m.Scores[i].Domain != ds.DomainNames[i] || m.Scores[i].Cells != sizes[i] {
				t.Errorf("%s: score %d = %+v", m.Method, i, m.Scores[i])
			}
		}
		// Leave-one-domain-out: the mean over splits of their pooled
		// accuracies is the mean over domains, and the accuracy of all
		// test cells weighs the domains by their cells.
		var right, cells float64
		for _, d := range m.Scores {
			right += d.Score * float64(d.Cells)
			cells += float64(d.Cells)
		}
		if math.Abs(m.Pooled.Mean-m.Mean) > 1e-15 || math.Abs(m.AllCells-right/cells) > 1e-12 || m.AllCells == m.Pooled.Mean {
			t.Errorf("%s: pooled mean over splits %v (domain mean %v), all cells %v (want %v, another value)", m.Method, m.Pooled.Mean, m.Mean, m.AllCells, right/cells)
		}
	}
	checkSplitSummaries(t, res)
}

func TestGroups(t *testing.T) {
	e := &evaluator{o: Options{InnerFolds: 4}}
	for _, c := range []struct {
		train []int
		want  [][]int
	}{
		{[]int{7, 8}, [][]int{{7}, {8}}},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{[]int{0, 1, 2, 3, 4, 5}, [][]int{{0}, {1, 2}, {3}, {4, 5}}},
	} {
		if got := e.groups(c.train); !reflect.DeepEqual(got, c.want) {
			t.Errorf("groups(%v) = %v, want %v", c.train, got, c.want)
		}
	}
}

func TestSample(t *testing.T) {
	ds := shifted(3, 6)
	e := &evaluator{ds: ds, o: Options{Seed: 1}}
	e.byDomain = make([][]int, 3)
	for p, g := range ds.Domain {
		e.byDomain[g] = append(e.byDomain[g], p)
	}
	sizes := ds.DomainSizes()
	total := sizes[0] + sizes[2]
	rows := e.sample(0, []int{0, 2}, 60, rand.New(rand.NewPCG(1, 1)))
	count := map[int]int{}
	for i, p := range rows {
		count[ds.Domain[p]]++
		if i > 0 && ds.Domain[p] == ds.Domain[rows[i-1]] && p <= rows[i-1] {
			t.Fatal("rows not increasing within a domain")
		}
	}
	for _, g := range []int{0, 2} {
		if want := sizes[g] * 60 / total; count[g] != want {
			t.Errorf("domain %d: %d rows, want %d", g, count[g], want)
		}
	}
	if count[1] != 0 {
		t.Error("rows of an unrequested domain")
	}
	if all := e.sample(0, []int{1}, 0, nil); len(all) != sizes[1] {
		t.Errorf("no limit: %d rows, want %d", len(all), sizes[1])
	}
}

func TestErrors(t *testing.T) {
	ds := shifted(4, 1)
	unlabelled, _ := dataset.New(ds.X, ds.DomainNames[:0:0])
	_ = unlabelled
	noLabels := ds.Subset(seq(ds.N()))
	noLabels.Label, noLabels.ClassNames = nil, nil
	grid := Grid{Sigma: []float64{1, 2}}
	for _, c := range []struct {
		name        string
		ds          *dataset.Dataset
		train, test []int
		o           Options
		want        string
	}{
		{"overlap", ds, []int{0, 1, 2}, []int{2, 3}, Options{}, `domain "d3" is both a training and a test domain`},
		{"twice", ds, []int{0, 0, 1}, []int{3}, Options{}, `given twice`},
		{"no test", ds, []int{0, 1}, nil, Options{}, "need at least one of each"},
		{"range", ds, []int{0, 1}, []int{9}, Options{}, "out of range"},
		{"one training domain", ds, []int{0}, []int{1}, Options{Methods: []string{"input"}, Grid: Grid{C: []float64{1, 2}}}, "needs at least 2 training domains"},
		{"dica one domain", ds, []int{0}, []int{1}, Options{Methods: []string{"dica"}}, "dica needs at least 2 training domains"},
		{"dica inner fold", ds, []int{0, 1}, []int{2}, Options{Methods: []string{"dica"}, Grid: grid}, "leaves 1 training domain(s) in a fold"},
		{"method", ds, []int{0, 1}, []int{2}, Options{Methods: []string{"pca"}}, `unknown method "pca"`},
		{"method twice", ds, []int{0, 1}, []int{2}, Options{Methods: []string{"dica", "DICA"}}, "given twice"},
		{"sigma", ds, []int{0, 1}, []int{2}, Options{Grid: Grid{Sigma: []float64{-1}}}, "sigma -1"},
		{"C", ds, []int{0, 1}, []int{2}, Options{Grid: Grid{C: []float64{0}}}, "C (SVM cost or ridge) 0"},
		{"components", ds, []int{0, 1}, []int{2}, Options{Grid: Grid{Components: []int{0}}}, "components 0"},
		{"epsilon", ds, []int{0, 1}, []int{2}, Options{Grid: Grid{Epsilon: []float64{math.NaN()}}}, "epsilon NaN"},
		{"folds", ds, []int{0, 1}, []int{2}, Options{InnerFolds: 1}, "inner folds 1"},
		{"learner", ds, []int{0, 1}, []int{2}, Options{Learner: 7}, "unknown learner Learner(7)"},
		{"regression solver", ds, []int{0, 1}, []int{2}, Options{RegressionSolver: 9}, "unknown regression solver RegressionSolver(9)"},
		{"regression rank", ds, []int{0, 1}, []int{2}, Options{RegressionRank: -1}, "regression rank -1"},
		{"dist rff", ds, []int{0, 1}, []int{2}, Options{Dist: DistOptions{RFF: -2}}, "RFF -2 >= 0"},
		{"dist sigma", ds, []int{0, 1}, []int{2}, Options{Grid: Grid{DistSigma: []float64{math.Inf(1)}}}, "domain kernel sigma +Inf"},
		{"no labels", noLabels, []int{0, 1}, []int{2}, Options{}, "no class labels or real targets"},
		{"nil", nil, []int{0, 1}, []int{2}, Options{}, "nil data set"},
	} {
		_, err := Run(context.Background(), c.ds, c.train, c.test, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := DomainIndices(ds, []string{"d2", "sample9"}); err == nil || !strings.Contains(err.Error(), `unknown domain "sample9"`) {
		t.Errorf("unknown domain name: %v", err)
	}
	if g, err := DomainIndices(ds, []string{"d3", "d1"}); err != nil || !reflect.DeepEqual(g, []int{2, 0}) {
		t.Errorf("DomainIndices = %v, %v", g, err)
	}
	one := ds.Subset(seq(ds.DomainSizes()[0]))
	one.Compact()
	if _, err := LeaveOneDomainOut(context.Background(), one, Options{}); err == nil {
		t.Error("leave-one-domain-out on one domain: no error")
	}
}

// TestLeaveOneDomainOutSplits: one split per domain with cells, in order;
// a domain without cells is in no split.
func TestLeaveOneDomainOutSplits(t *testing.T) {
	for _, c := range []struct {
		domain []int
		names  []string
		want   []Split
	}{
		{[]int{0, 1}, []string{"a", "b"}, []Split{{Train: []int{1}, Test: []int{0}}, {Train: []int{0}, Test: []int{1}}}},
		{[]int{0, 2, 2, 0, 3}, []string{"a", "empty", "c", "d"}, []Split{
			{Train: []int{2, 3}, Test: []int{0}}, {Train: []int{0, 3}, Test: []int{2}}, {Train: []int{0, 2}, Test: []int{3}}}},
		{[]int{1, 1}, []string{"empty", "b"}, nil},
	} {
		ds := &dataset.Dataset{X: mat.NewDense(len(c.domain), 1, nil), Domain: c.domain, DomainNames: c.names}
		got, err := LeaveOneDomainOutSplits(ds)
		if c.want == nil {
			if err == nil || !strings.Contains(err.Error(), "1 domain(s) with cells") {
				t.Errorf("%v: %v, %v; want an error", c.names, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %v, %v; want %v", c.names, got, err, c.want)
		}
	}
}

func TestCancel(t *testing.T) {
	ds := shifted(4, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, ds, []int{0, 1, 2}, []int{3}, Options{Methods: []string{"kpca"}, Rank: 20, Grid: Grid{Sigma: []float64{1, 2}}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestExactSolver runs the exact n x n path with subsampled inner fits.
func TestExactSolver(t *testing.T) {
	ds := shifted(4, 2)
	res, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, Options{Methods: []string{"dica"}, Solver: dica.Exact, MaxFitCells: 100, Seed: 1, Grid: Grid{Lambda: []float64{1e-3, 1e-1}, Components: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Methods[0].Splits[0]
	if res.Rank != 0 || res.Solver != "exact" || s.FitCells > 100 || s.FitCells < 90 || len(s.Grid) != 2 {
		t.Errorf("exact: rank %d solver %s, %d fit cells, %d grid points", res.Rank, res.Solver, s.FitCells, len(s.Grid))
	}
}

// TestBatchCenterReference checks the baseline with per-domain centering
// against a direct computation.
func TestBatchCenterReference(t *testing.T) {
	ds := shifted(5, 6)
	train, test := []int{0, 1, 2}, []int{3, 4}
	res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input", "dica"}, Rank: 20, BatchCenter: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.BatchCenter {
		t.Error("BatchCenter not reported")
	}
	// centered returns the rows of domain g minus their mean.
	centered := func(g int) *dataset.Dataset {
		var rows []int
		for p, d := range ds.Domain {
			if d == g {
				rows = append(rows, p)
			}
		}
		s := ds.Subset(rows)
		for j := range s.D() {
			col := mat.Col(nil, j, s.X)
			var m float64
			for _, v := range col {
				m += v
			}
			m /= float64(len(col))
			for i := range col {
				s.X.Set(i, j, col[i]-m)
			}
		}
		return s
	}
	var x mat.Dense
	var y []int
	for _, g := range train {
		c := centered(g)
		if x.IsEmpty() {
			x.CloneFrom(c.X)
		} else {
			var st mat.Dense
			st.Stack(&x, c.X)
			x = st
		}
		y = append(y, c.Label...)
	}
	sc, err := svm.Standardize(&x)
	if err != nil {
		t.Fatal(err)
	}
	m, err := svm.Train(context.Background(), ok[*mat.Dense](t)(sc.Apply(&x)), y, 2, svm.Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range test {
		c := centered(g)
		want := svm.Accuracy(ok[[]int](t)(m.Predict(ok[*mat.Dense](t)(sc.Apply(c.X)))), c.Label)
		if got := res.Methods[0].Scores[i].Score; math.Abs(got-want) > 1e-12 {
			t.Errorf("domain %s: accuracy %v, want %v", ds.DomainNames[g], got, want)
		}
	}
	plain, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"dica"}, Rank: 20, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(plain.Methods[0].Scores, res.Methods[1].Scores) {
		t.Error("dica: batch centering changed no score")
	}
}

// ok returns a function that fails the test on a non-nil error and otherwise
// returns the value: ok[T](t)(f()) for a function f returning (T, error).
func ok[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// TestNaturalOrder checks that a result lists its classes in natural order
// with the rows and columns of every confusion matrix permuted alike.
func TestNaturalOrder(t *testing.T) {
	c := [][]int{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}}
	res := &Result{Classes: []string{"2", "10", "1", "3"}, Methods: []MethodResult{{Confusion: c, Splits: []SplitResult{{Confusion: c}, {}}}}}
	res.naturalOrder()
	want := [][]int{{11, 9, 12, 10}, {3, 1, 4, 2}, {15, 13, 16, 14}, {7, 5, 8, 6}}
	if !slices.Equal(res.Classes, []string{"1", "2", "3", "10"}) {
		t.Fatalf("classes %v", res.Classes)
	}
	for _, got := range [][][]int{res.Methods[0].Confusion, res.Methods[0].Splits[0].Confusion} {
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("confusion %v, want %v", got, want)
			}
		}
	}
	if res.Methods[0].Splits[1].Confusion != nil {
		t.Error("a split without a confusion matrix got one")
	}
}
