package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/mixing"
	"github.com/dicalab/dica/svm"
	"github.com/dicalab/dica/toy"
)

func TestRandomSplits(t *testing.T) {
	ds := shifted(16, 1)
	// An emptied domain (as --labels-ignore can leave) is never drawn.
	var rows []int
	for p, g := range ds.Domain {
		if g != 5 {
			rows = append(rows, p)
		}
	}
	ds = ds.Subset(rows)
	a, err := RandomSplits(ds, 10, 30, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomSplits(ds, 10, 30, 7)
	c, _ := RandomSplits(ds, 10, 30, 8)
	short, _ := RandomSplits(ds, 10, 5, 7)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gives other splits")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 give the same splits")
	}
	if !reflect.DeepEqual(short, a[:5]) {
		t.Error("the first 5 of 30 repeats differ from 5 repeats")
	}
	tested := map[int]int{}
	distinct := map[string]bool{}
	for r, s := range a {
		if len(s.Train) != 10 || len(s.Test) != 5 {
			t.Fatalf("repeat %d: %d training and %d test domains, want 10 and 5", r, len(s.Train), len(s.Test))
		}
		if !slices.IsSorted(s.Train) || !slices.IsSorted(s.Test) {
			t.Errorf("repeat %d: lists not sorted: %v %v", r, s.Train, s.Test)
		}
		all := append(append([]int(nil), s.Train...), s.Test...)
		slices.Sort(all)
		want := []int{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
		if !slices.Equal(all, want) {
			t.Errorf("repeat %d: training and test domains %v, want each of %v once (no overlap, none missing)", r, all, want)
		}
		for _, g := range s.Test {
			tested[g]++
		}
		distinct[fmt.Sprint(s.Train)] = true
	}
	for _, g := range []int{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} {
		if tested[g] == 0 {
			t.Errorf("domain %d never tested in 30 repeats", g)
		}
	}
	if tested[5] != 0 {
		t.Error("the empty domain was drawn")
	}
	if len(distinct) < 25 {
		t.Errorf("only %d distinct training sets in 30 repeats", len(distinct))
	}
	// The frequency of being tested is 5/15 per repeat: over 3000 repeats
	// each domain is tested 1000 +- 26 (sd) times.
	many, _ := RandomSplits(ds, 10, 3000, 1)
	freq := map[int]int{}
	for _, s := range many {
		for _, g := range s.Test {
			freq[g]++
		}
	}
	for g, f := range freq {
		if f < 1000-5*26 || f > 1000+5*26 {
			t.Errorf("domain %d tested %d times in 3000 repeats, want about 1000", g, f)
		}
	}
	for _, c := range []struct {
		k, r int
		want string
	}{{0, 3, "0 training domains of 15"}, {15, 3, "want 1 to 14"}, {3, 0, "0 repeats"}} {
		if _, err := RandomSplits(ds, c.k, c.r, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RandomSplits(%d, %d): %v, want %q", c.k, c.r, err, c.want)
		}
	}
	if _, err := RandomSplits(nil, 1, 1, 1); err == nil {
		t.Error("nil data set: no error")
	}
}

// checkSplitSummaries checks each split's pooled score against the
// cell-weighted combination of its domain scores, its domain mean, its
// confusion matrix, and the spreads over splits of each method.
func checkSplitSummaries(t *testing.T, res *Result) {
	t.Helper()
	regression := res.Task == "regression"
	for _, m := range res.Methods {
		var pooled, dmean []float64
		var conf [][]int
		for si, s := range m.Splits {
			var num, cells, mean float64
			for _, d := range s.Scores {
				v := d.Score
				if regression {
					v *= v
				}
				num += v * float64(d.Cells)
				cells += float64(d.Cells)
				mean += d.Score
			}
			want := num / cells
			if regression {
				want = math.Sqrt(want)
			}
			if math.Abs(s.Pooled-want) > 1e-12 {
				t.Errorf("%s split %d: pooled %v, cell-weighted combination of the domains %v", m.Method, si, s.Pooled, want)
			}
			if d := mean / float64(len(s.Scores)); math.Abs(s.DomainMean-d) > 1e-15 {
				t.Errorf("%s split %d: domain mean %v, want %v", m.Method, si, s.DomainMean, d)
			}
			if int(cells) != s.TestCells {
				t.Errorf("%s split %d: %v cells scored, %d test cells", m.Method, si, cells, s.TestCells)
			}
			pooled = append(pooled, s.Pooled)
			dmean = append(dmean, s.DomainMean)
			if regression {
				if s.Confusion != nil {
					t.Errorf("%s: confusion matrix for regression", m.Method)
				}
				continue
			}
			// The confusion matrix counts every test cell once, and its
			// diagonal the correct ones.
			var total, diag int
			for i, row := range s.Confusion {
				for j, v := range row {
					total += v
					if i == j {
						diag += v
					}
				}
			}
			if total != s.TestCells || math.Abs(float64(diag)/float64(total)-s.Pooled) > 1e-12 {
				t.Errorf("%s split %d: confusion matrix of %d cells with %d on the diagonal; %d test cells, pooled %v", m.Method, si, total, diag, s.TestCells, s.Pooled)
			}
			if conf == nil {
				conf = make([][]int, len(s.Confusion))
				for i := range conf {
					conf[i] = make([]int, len(s.Confusion))
				}
			}
			for i, row := range s.Confusion {
				for j, v := range row {
					conf[i][j] += v
				}
			}
		}
		for _, c := range []struct {
			name string
			got  Spread
			v    []float64
		}{{"pooled", m.Pooled, pooled}, {"domain mean", m.DomainMean, dmean}} {
			var mean, ss float64
			for _, x := range c.v {
				mean += x
			}
			mean /= float64(len(c.v))
			for _, x := range c.v {
				ss += (x - mean) * (x - mean)
			}
			sd := 0.0
			if len(c.v) > 1 {
				sd = math.Sqrt(ss / float64(len(c.v)-1))
			}
			if c.got.N != len(c.v) || math.Abs(c.got.Mean-mean) > 1e-14 || math.Abs(c.got.SD-sd) > 1e-14 {
				t.Errorf("%s: %s spread %+v, want mean %v sd %v over %d splits", m.Method, c.name, c.got, mean, sd, len(c.v))
			}
		}
		if !reflect.DeepEqual(m.Confusion, conf) {
			t.Errorf("%s: summed confusion %v, want %v", m.Method, m.Confusion, conf)
		}
		// The score of all test cells: the summed confusion matrix's
		// accuracy, or the RMSE over the cells of all domains of all
		// splits.
		var want float64
		if regression {
			var num, cells float64
			for _, s := range m.Splits {
				for _, d := range s.Scores {
					num += d.Score * d.Score * float64(d.Cells)
					cells += float64(d.Cells)
				}
			}
			want = math.Sqrt(num / cells)
		} else {
			var diag, total int
			for i, row := range m.Confusion {
				for j, v := range row {
					total += v
					if i == j {
						diag += v
					}
				}
			}
			want = float64(diag) / float64(total)
		}
		if math.Abs(m.AllCells-want) > 1e-12 || len(m.Splits) == 1 && m.AllCells != m.Splits[0].Pooled {
			t.Errorf("%s: score of all test cells %v, want %v (pooled of split 1 %v)", m.Method, m.AllCells, want, m.Splits[0].Pooled)
		}
	}
}

// TestRandomProtocol runs the paper's protocol (repeated random splits,
// cells subsampled per domain) and checks every summary.
func TestRandomProtocol(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 8, MeanSize: 120, Dim: 3, Classes: 3, Seed: 4})
	splits, err := RandomSplits(ds, 5, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Methods: []string{"input", "kpca", "dica"}, Rank: 30, Seed: 1, CellsPerDomain: 50,
		Grid: Grid{Sigma: []float64{1, 2}, Components: []int{2}}}
	res, err := Evaluate(context.Background(), ds, splits, o)
	if err != nil {
		t.Fatal(err)
	}
	checkSplitSummaries(t, res)
	sizes := ds.DomainSizes()
	used := map[int]bool{}
	for _, s := range splits {
		for _, g := range append(append([]int(nil), s.Train...), s.Test...) {
			used[g] = true
		}
	}
	if res.Splits != 4 || res.CellsPerDomain != 50 || res.CellsRead != ds.N() || res.Setting != "pooling" {
		t.Errorf("header: %d splits, %d cells per domain, %d read, setting %q", res.Splits, res.CellsPerDomain, res.CellsRead, res.Setting)
	}
	// Each split draws its own 50 cells per domain, so the union of the
	// cells used is at least those of one split and at most min(size,
	// 50 x splits using the domain) per domain.
	lo, hi := 0, 0
	for g := range used {
		lo += min(sizes[g], 50)
		n := 0
		for _, s := range splits {
			if slices.Contains(s.Train, g) || slices.Contains(s.Test, g) {
				n++
			}
		}
		hi += min(sizes[g], 50*n)
	}
	if res.Cells < lo || res.Cells > hi {
		t.Errorf("%d cells used; want between %d and %d", res.Cells, lo, hi)
	}
	for _, m := range res.Methods {
		for si, s := range m.Splits {
			if s.TrainCells != 50*len(s.Train) || s.TestCells != 50*len(s.Test) {
				t.Errorf("%s split %d: %d training and %d test cells; want 50 per domain", m.Method, si, s.TrainCells, s.TestCells)
			}
			for _, d := range s.Scores {
				if d.Cells != 50 {
					t.Errorf("%s split %d: domain %s scored on %d cells", m.Method, si, d.Domain, d.Cells)
				}
			}
			if !reflect.DeepEqual(s.Test, res.Methods[0].Splits[si].Test) {
				t.Errorf("%s split %d: other test domains than the baseline", m.Method, si)
			}
			if s.Mixing == nil || s.Mixing.Cells != 150 || s.Mixing.Domains != 3 {
				t.Fatalf("%s split %d: mixing %+v; want 150 cells of 3 domains", m.Method, si, s.Mixing)
			}
		}
		if m.Mixing == nil || m.Mixing.ILISI.N != 4 || m.Mixing.CLISI == nil {
			t.Errorf("%s: mixing summary %+v", m.Method, m.Mixing)
		}
	}
	// Same seed, same result; the subsample depends on the seed.
	again, _ := Evaluate(context.Background(), ds, splits, o)
	zeroTimes(res)
	zeroTimes(again)
	if !reflect.DeepEqual(res, again) {
		t.Error("two runs with the same seed differ")
	}
	o.Seed = 2
	other, _ := Evaluate(context.Background(), ds, splits, o)
	zeroTimes(other)
	if reflect.DeepEqual(res.Methods[0].Scores, other.Methods[0].Scores) {
		t.Error("the cells per domain do not depend on the seed")
	}
}

// TestPooledReference checks the pooled accuracy and confusion matrix of
// the baseline against a direct computation on all test cells.
func TestPooledReference(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 80, Dim: 3, Classes: 3, Seed: 9})
	train, test := []int{0, 1, 2}, []int{3, 4}
	res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input"}, Seed: 3, Grid: Grid{C: []float64{0.7}}})
	if err != nil {
		t.Fatal(err)
	}
	rowsOf := func(doms []int) []int {
		var r []int
		for p, g := range ds.Domain {
			if slices.Contains(doms, g) {
				r = append(r, p)
			}
		}
		return r
	}
	tr, te := ds.Subset(rowsOf(train)), ds.Subset(rowsOf(test))
	sc := ok[*svm.Scaler](t)(svm.Standardize(tr.X))
	m := ok[*svm.Model](t)(svm.Train(context.Background(), ok[*mat.Dense](t)(sc.Apply(tr.X)), tr.Label, 3, svm.Options{C: 0.7, Seed: 3}))
	zte := ok[*mat.Dense](t)(sc.Apply(te.X))
	pred := ok[[]int](t)(m.Predict(zte))
	conf := [][]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
	for i, p := range pred {
		conf[te.Label[i]][p]++
	}
	s := res.Methods[0].Splits[0]
	if want := svm.Accuracy(pred, te.Label); s.Pooled != want {
		t.Errorf("pooled accuracy %v, direct %v", s.Pooled, want)
	}
	if !reflect.DeepEqual(s.Confusion, conf) {
		t.Errorf("confusion %v, direct %v", s.Confusion, conf)
	}
	checkSplitSummaries(t, res)

	// The mixing measures of the baseline with every test cell in the
	// subsample: those of the standardized test inputs.
	res, err = Run(context.Background(), ds, train, test, Options{Methods: []string{"input"}, Seed: 3, Grid: Grid{C: []float64{0.7}}, MixingCells: 2 * ds.N()})
	if err != nil {
		t.Fatal(err)
	}
	doms := make([]int, te.N())
	for i, g := range te.Domain {
		doms[i] = slices.Index(test, g)
	}
	want, err := mixing.Measure(context.Background(), zte, doms, te.Label, mixing.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Methods[0].Splits[0].Mixing; !reflect.DeepEqual(got, want) {
		t.Errorf("mixing of the baseline %+v, direct %+v", got, want)
	}
}

// TestPooledRegression checks the pooled RMSE of regression splits.
func TestPooledRegression(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 6, MeanSize: 50, Seed: 2})
	splits, err := RandomSplits(ds, 4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), ds, splits, Options{Methods: []string{"input", "dica"}, Rank: 20, Seed: 1, Grid: Grid{Components: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	checkSplitSummaries(t, res)
	for _, m := range res.Methods {
		if m.Mixing == nil || m.Mixing.CLISI != nil {
			t.Errorf("%s: regression mixing summary %+v; want one without cLISI", m.Method, m.Mixing)
		}
	}
}

// TestUnseenClasses gives one class only to a test domain.
func TestUnseenClasses(t *testing.T) {
	ds := separable(4, 60, 3)
	ds.ClassNames = append(ds.ClassNames, "rare")
	for p, g := range ds.Domain {
		if g == 3 && p%10 == 0 {
			ds.Label[p] = 2
		}
	}
	res, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, Options{Methods: []string{"input"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Methods[0].Splits[0]
	if !reflect.DeepEqual(s.UnseenClasses, []string{"rare"}) {
		t.Errorf("unseen classes %v, want [rare]", s.UnseenClasses)
	}
	if !reflect.DeepEqual(res.Classes, []string{"neg", "pos", "rare"}) || s.Confusion[2][2] != 0 || s.Confusion[2][0]+s.Confusion[2][1] != 6 {
		t.Errorf("classes %v, confusion %v: the 6 rare cells must be predicted as another class", res.Classes, s.Confusion)
	}
	res, err = Run(context.Background(), ds, []int{1, 2, 3}, []int{0}, Options{Methods: []string{"input"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Methods[0].Splits[0].UnseenClasses; u != nil {
		t.Errorf("unseen classes %v when every test class is trained", u)
	}
}

// TestTargetSigma checks that the output kernel's bandwidth is a grid
// dimension of the supervised methods on regression data only.
func TestTargetSigma(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 50, Seed: 3})
	res, err := Run(context.Background(), ds, []int{0, 1, 2, 3}, []int{4}, Options{Methods: []string{"kpca", "dica"}, Rank: 20, Seed: 1,
		Grid: Grid{TargetSigma: []float64{0.5, 2}, Components: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	kp, di := res.Methods[0].Splits[0], res.Methods[1].Splits[0]
	if len(kp.Grid) != 0 || kp.Params.TargetSigma != 0 || kp.TargetSigmaUsed != 0 {
		t.Errorf("kpca varies the target sigma: grid %v, params %+v, used %v", kp.Grid, kp.Params, kp.TargetSigmaUsed)
	}
	if len(di.Grid) != 2 || di.Grid[0].Params.TargetSigma != 0.5 || di.Grid[1].Params.TargetSigma != 2 {
		t.Fatalf("dica grid %+v; want target sigma 0.5 and 2", di.Grid)
	}
	if di.TargetSigmaUsed != di.Params.TargetSigma {
		t.Errorf("dica chose target sigma %v, used %v", di.Params.TargetSigma, di.TargetSigmaUsed)
	}
	if di.Grid[0].Score == di.Grid[1].Score {
		t.Error("the target sigma changed no inner score")
	}
	res, err = Run(context.Background(), ds, []int{0, 1, 2, 3}, []int{4}, Options{Methods: []string{"dica"}, Rank: 20, Seed: 1, Grid: Grid{Components: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Methods[0].Splits[0]; !(s.TargetSigmaUsed > 0) {
		t.Errorf("median heuristic target sigma %v", s.TargetSigmaUsed)
	}
	if _, err := Run(context.Background(), ds, []int{0, 1, 2, 3}, []int{4}, Options{Grid: Grid{TargetSigma: []float64{-1}}}); err == nil || !strings.Contains(err.Error(), "target sigma -1") {
		t.Errorf("negative target sigma: %v", err)
	}
}

// TestMemoryRefusal asks for fits that cannot fit in memory: the
// evaluation is refused at once, with the estimate.
func TestMemoryRefusal(t *testing.T) {
	ds := shifted(4, 1)
	start := time.Now()
	_, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, Options{Methods: []string{"dica"}, Rank: 100000, MaxMemory: 16e9})
	var me *MemoryError
	if !errors.As(err, &me) || me.Need < 5e11 || me.Limit != 16e9 || !strings.Contains(me.Step, "rank 100000") {
		t.Fatalf("rank 100000: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusal took %v", d)
	}
	if !strings.Contains(err.Error(), "TB (the inner fits of rank 100000, 1 at once), more than the memory budget of 16 GB") {
		t.Errorf("message %q", err)
	}
	// The exact path: 4 n^2 values.
	big := toy.Classification(toy.Options{Domains: 3, MeanSize: 3000, Dim: 2, Classes: 2, Seed: 1})
	need, step := EstimateMemory(big, Options{Methods: []string{"dica"}, Solver: dica.Exact, MaxFitCells: 100000})
	n := int64(big.N())
	if need < 32*n*n || need > 40*n*n || !strings.Contains(step, "exact fits") {
		t.Errorf("exact on %d cells: %d bytes (%s); want about %d", n, need, step, 32*n*n)
	}
	// The default evaluation of this small set fits in 1 GB.
	if _, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, Options{Methods: []string{"input", "dica"}, Rank: 20, MaxMemory: 1e9}); err != nil {
		t.Errorf("small evaluation: %v", err)
	}
}

// TestMemoryTasks checks that a memory budget lowers the number of inner
// tasks that run at once before it refuses an evaluation, and that the
// result does not depend on it.
func TestMemoryTasks(t *testing.T) {
	p := memPlan{top: 10, task: 100, tasks: 4, copies: 5}
	for _, c := range []struct {
		budget, want int64
	}{{1000, 4}, {405, 4}, {404, 3}, {250, 2}, {105, 1}, {104, 0}} {
		if got := p.maxTasks(c.budget); got != c.want {
			t.Errorf("budget %d: %d tasks at once, want %d", c.budget, got, c.want)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 3000, Dim: 3, Classes: 2, Seed: 3})
	o := Options{Methods: []string{"kpca", "dica"}, Rank: 100, Seed: 2, MixingCells: -1,
		Grid: Grid{Sigma: []float64{1, 2}, Lambda: []float64{0, 0.1, 1}, Components: []int{10}}}
	e, err := newEvaluator(ds, []Split{{Train: []int{0, 1, 2}, Test: []int{3}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	mp := memoryPlan(ds, e.o)
	if e.maxTasks != 4 || mp.tasks != 4 || mp.total(4) <= mp.total(2) {
		t.Fatalf("no budget: %d tasks at once, plan %+v", e.maxTasks, mp)
	}
	o.MaxMemory = mp.total(2)
	e, err = newEvaluator(ds, []Split{{Train: []int{0, 1, 2}, Test: []int{3}}}, o)
	if err != nil || e.maxTasks != int(mp.maxTasks(o.MaxMemory)) || e.maxTasks >= 4 {
		t.Fatalf("a budget for two tasks: %v, %d tasks at once (plan %+v)", err, e.maxTasks, mp)
	}
	one, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MaxMemory = 0
	all, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, o)
	if err != nil {
		t.Fatal(err)
	}
	zeroTimes(one)
	zeroTimes(all)
	if !reflect.DeepEqual(one, all) {
		t.Error("the result depends on the inner tasks at once")
	}
	o.MaxMemory = mp.total(1) - 1
	var me *MemoryError
	if _, err := Run(context.Background(), ds, []int{0, 1, 2}, []int{3}, o); !errors.As(err, &me) || me.Need != mp.total(1) {
		t.Errorf("below one task: %v", err)
	}
}

func TestParsePooling(t *testing.T) {
	if l, err := ParseLearner("Pooling"); err != nil || l != Plain || l.Setting() != "pooling" || Distributional.Setting() != "distributional" {
		t.Errorf("ParseLearner(Pooling) = %v, %v", l, err)
	}
}

// TestOptionErrors checks the new options' validation.
func TestOptionErrors(t *testing.T) {
	ds := shifted(4, 1)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{CellsPerDomain: -1}, "cells per domain -1"},
		{Options{MixingCells: mixing.MaxCells + 1}, "at most 50000"},
		{Options{Perplexity: 0.5}, "perplexity 0.5"},
		{Options{MaxMemory: -1}, "memory budget -1"},
	} {
		if _, err := Run(context.Background(), ds, []int{0, 1}, []int{2}, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	var d *dataset.Dataset
	if n, _ := EstimateMemory(d, Options{}); n != 0 {
		t.Errorf("EstimateMemory(nil) = %d", n)
	}
}
