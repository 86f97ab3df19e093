package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/krr"
	"github.com/dicalab/dica/toy"
)

// TestRegressionNystrom checks the Nystrom kernel ridge regression against
// the exact one: with every training cell a landmark the two agree to
// rounding (Phi Phi' = K and the same ridge), and RegressionAuto switches
// to Nystrom above MaxRegressionCells.
func TestRegressionNystrom(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 60, Seed: 4})
	train, test := []int{0, 1, 2, 3}, []int{4}
	run := func(o Options) (float64, string) {
		t.Helper()
		o.Methods, o.Seed, o.Grid = []string{"input"}, 1, Grid{C: []float64{0.3}}
		res, err := Run(context.Background(), ds, train, test, o)
		if err != nil {
			t.Fatal(err)
		}
		s := res.Methods[0].Splits[0]
		return s.Scores[0].Score, s.Learner
	}
	ntrain := ds.N() - ds.DomainSizes()[4]
	exact, desc := run(Options{})
	if want := fmt.Sprintf("krr exact (%d cells)", ntrain); desc != want {
		t.Errorf("auto below MaxRegressionCells: learner %q, want %q", desc, want)
	}
	all, desc := run(Options{RegressionSolver: RegressionNystrom, RegressionRank: ntrain})
	if !strings.HasPrefix(desc, "krr nystrom") {
		t.Errorf("RegressionNystrom: learner %q", desc)
	}
	t.Logf("%d training cells: RMSE exact %.10f, Nystrom with all cells as landmarks %.10f (%s)", ntrain, exact, all, desc)
	if math.Abs(all-exact) > 1e-7*exact {
		t.Errorf("Nystrom with every training cell a landmark: RMSE %.12g, exact %.12g", all, exact)
	}
	auto, desc := run(Options{MaxRegressionCells: 50, RegressionRank: 60})
	if want := fmt.Sprintf("krr nystrom m=60 (%d cells)", ntrain); desc != want {
		t.Errorf("auto above MaxRegressionCells: learner %q, want %q", desc, want)
	}
	forced, _ := run(Options{RegressionSolver: RegressionNystrom, RegressionRank: 60})
	if auto != forced {
		t.Errorf("auto above MaxRegressionCells: RMSE %v, RegressionNystrom %v", auto, forced)
	}
	t.Logf("Nystrom m = 60: RMSE %.4f (exact %.4f)", auto, exact)
	if math.Abs(auto-exact) > 0.05*exact {
		t.Errorf("Nystrom m = 60: RMSE %v, more than 5%% from the exact %v", auto, exact)
	}
	sub, desc := run(Options{RegressionSolver: RegressionExact, MaxRegressionCells: 50})
	if desc != "krr exact (50 cells)" || !(sub > 0) {
		t.Errorf("RegressionExact on 50 cells: learner %q, RMSE %v", desc, sub)
	}
}

// flipped returns classification data whose labelling rule depends on the
// domain: in domains of type A (even index) the class is x1 > 0, in type B
// (odd) x1 < 0; the types differ by the mean of x2 (+2 or -2). No linear
// function of a cell predicts its class (the rule is an XOR of the signs of
// x1 and x2), while the domain's distribution reveals its type.
func flipped(domains, per int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 11))
	n := domains * per
	x := mat.NewDense(n, 3, nil)
	names := make([]string, n)
	labels := make([]string, n)
	for p := range n {
		g := p / per
		s := 1.0
		if g%2 == 1 {
			s = -1
		}
		x1 := rng.NormFloat64()
		x.Set(p, 0, x1)
		x.Set(p, 1, 2*s+0.7*rng.NormFloat64())
		x.Set(p, 2, rng.NormFloat64())
		names[p] = fmt.Sprintf("d%d", g+1)
		labels[p] = "neg"
		if s*x1 > 0 {
			labels[p] = "pos"
		}
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

// TestDistributionalClassification: on data where the labelling rule
// depends on the domain, the distributional SVM must beat the plain one on
// unseen domains (whose mean embeddings come from their own cells).
func TestDistributionalClassification(t *testing.T) {
	ds := flipped(10, 150, 1)
	train, test := []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{8, 9}
	score := func(l Learner) *MethodResult {
		res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input"}, Learner: l, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Learner != l.String() {
			t.Errorf("Result.Learner %q, want %q", res.Learner, l)
		}
		return &res.Methods[0]
	}
	plain, dist := score(Plain), score(Distributional)
	t.Logf("accuracy on unseen domains: plain %.3f (%v), distributional %.3f (%v); %s",
		plain.Mean, plain.Scores, dist.Mean, dist.Scores, dist.Splits[0].Learner)
	if plain.Mean > 0.75 {
		t.Errorf("plain SVM accuracy %.3f: the data should defeat a linear rule", plain.Mean)
	}
	for _, s := range dist.Scores {
		if s.Score < 0.9 {
			t.Errorf("distributional SVM on %s: accuracy %.3f, want >= 0.9", s.Domain, s.Score)
		}
	}
}

// spread returns regression data whose target depends on the domain through
// its spread, which no single cell reveals: domain p has x ~ N(0, s_p^2 I)
// with s_p uniform in [0.5, 1.5] and y = sin(2 x1) + 2 (s_p - 1) + noise.
func spread(domains, per int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 12))
	n := domains * per
	x := mat.NewDense(n, 2, nil)
	y := mat.NewDense(n, 1, nil)
	names := make([]string, n)
	for g := range domains {
		s := 0.5 + rng.Float64()
		for i := range per {
			p := g*per + i
			x.Set(p, 0, s*rng.NormFloat64())
			x.Set(p, 1, s*rng.NormFloat64())
			y.Set(p, 0, math.Sin(2*x.At(p, 0))+2*(s-1)+0.05*rng.NormFloat64())
			names[p] = fmt.Sprintf("d%d", g+1)
		}
	}
	ds, err := dataset.New(x, names)
	if err != nil {
		panic(err)
	}
	if err := ds.SetTargets(y, []string{"y"}); err != nil {
		panic(err)
	}
	return ds
}

// TestDistributionalRegression: the domain's spread shifts the target; the
// distributional ridge regression must beat the plain one on unseen
// domains.
func TestDistributionalRegression(t *testing.T) {
	ds := spread(14, 80, 2)
	train, test := seq(10), []int{10, 11, 12, 13}
	score := func(l Learner) *MethodResult {
		res, err := Run(context.Background(), ds, train, test, Options{Methods: []string{"input"}, Learner: l, Seed: 1,
			RegressionSolver: RegressionNystrom, RegressionRank: 60, Dist: DistOptions{PointRank: 60}})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Methods[0]
	}
	plain, dist := score(Plain), score(Distributional)
	t.Logf("RMSE on unseen domains: plain %.4f, distributional %.4f (%s)", plain.Mean, dist.Mean, dist.Splits[0].Learner)
	if dist.Mean > 0.8*plain.Mean {
		t.Errorf("distributional RMSE %.4f not clearly below the plain %.4f", dist.Mean, plain.Mean)
	}
}

// replicate returns the cells of ds's first domain copied into k domains:
// every domain has the same distribution, so k1 is constant.
func replicate(ds *dataset.Dataset, k int) *dataset.Dataset {
	var rows []int
	for p, g := range ds.Domain {
		if g == 0 {
			rows = append(rows, p)
		}
	}
	base := ds.Subset(rows)
	n, d := base.N(), base.D()
	x := mat.NewDense(k*n, d, nil)
	names := make([]string, k*n)
	for g := range k {
		for i := range n {
			x.SetRow(g*n+i, base.X.RawRowView(i))
			names[g*n+i] = fmt.Sprintf("copy%d", g+1)
		}
	}
	out, err := dataset.New(x, names)
	if err != nil {
		panic(err)
	}
	if base.Label != nil {
		labels := make([]string, k*n)
		for i := range k * n {
			labels[i] = base.ClassNames[base.Label[i%n]]
		}
		if err := out.SetLabels(labels); err != nil {
			panic(err)
		}
	} else {
		y := mat.NewDense(k*n, 1, nil)
		for i := range k * n {
			y.Set(i, 0, base.Target.At(i%n, 0))
		}
		if err := out.SetTargets(y, []string{"y"}); err != nil {
			panic(err)
		}
	}
	return out
}

// TestDistributionalConstantK1: when all domains are identical, k1 is
// constant (one domain feature, equal to 1) and the distributional learner
// is the plain one: the same decision values and predictions to rounding,
// and the same scores.
func TestDistributionalConstantK1(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   *dataset.Dataset
		o    Options
	}{
		{"classification", replicate(flipped(1, 200, 3), 4), Options{Grid: Grid{C: []float64{0.7}}}},
		{"regression", replicate(toy.Regression(toy.Options{Domains: 1, MeanSize: 150, Seed: 5}), 4),
			Options{RegressionSolver: RegressionNystrom, RegressionRank: 40, Dist: DistOptions{PointRank: 40}, Grid: Grid{C: []float64{0.2}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.ds
			o := tc.o
			o.Methods, o.Seed = []string{"input"}, 4
			train, test := []int{0, 1, 2}, []int{3}
			var rows, trows []int
			for p, g := range ds.Domain {
				if g < 3 {
					rows = append(rows, p)
				} else {
					trows = append(trows, p)
				}
			}
			outputs := func(l Learner) ([]float64, *learner) {
				o := o
				o.Learner = l
				e, err := newEvaluator(ds, []Split{{Train: train, Test: test}}, o)
				if err != nil {
					t.Fatal(err)
				}
				lr, err := e.train(context.Background(), ds.Subset(rows).X, rows, Params{C: e.o.Grid.C[0]}, e.rng(0, 0, purposeLearner))
				if err != nil {
					t.Fatal(err)
				}
				zs := ok[*mat.Dense](t)(lr.scaler.Apply(ds.Subset(trows).X))
				if lr.svm == nil {
					return ok[[][]float64](t)(e.regress(lr, zs, trows))[0], lr
				}
				x := zs
				if lr.dist != nil {
					x = krr.Materialize(ok[krr.Features](t)(lr.dist.Features(zs, e.domainsOf(trows))))
				}
				dec := ok[*mat.Dense](t)(lr.svm.Decision(x))
				return mat.Col(nil, 1, dec), lr
			}
			plain, _ := outputs(Plain)
			dist, dl := outputs(Distributional)
			if m := dl.dist.DomainDim(); m != 1 {
				t.Fatalf("%d domain features for identical domains, want 1", m)
			}
			var worst, scale float64
			for i := range plain {
				worst = math.Max(worst, math.Abs(plain[i]-dist[i]))
				scale = math.Max(scale, math.Abs(plain[i]))
			}
			t.Logf("max |distributional - plain| = %.3g (values up to %.3g)", worst, scale)
			if worst > 1e-9*scale {
				t.Errorf("max |distributional - plain| = %g, values up to %g", worst, scale)
			}
			means := make([]float64, 2)
			for i, l := range []Learner{Plain, Distributional} {
				o := o
				o.Learner = l
				res, err := Run(context.Background(), ds, train, test, o)
				if err != nil {
					t.Fatal(err)
				}
				means[i] = res.Methods[0].Mean
			}
			if math.Abs(means[0]-means[1]) > 1e-9*math.Abs(means[0]) {
				t.Errorf("test score plain %v, distributional %v", means[0], means[1])
			}
		})
	}
}

func TestParseLearnerSolver(t *testing.T) {
	for _, l := range []Learner{Plain, Distributional} {
		if got, err := ParseLearner(strings.ToUpper(l.String())); err != nil || got != l {
			t.Errorf("ParseLearner(%q) = %v, %v", l, got, err)
		}
	}
	for _, r := range []RegressionSolver{RegressionAuto, RegressionExact, RegressionNystrom} {
		if got, err := ParseRegressionSolver(r.String()); err != nil || got != r {
			t.Errorf("ParseRegressionSolver(%q) = %v, %v", r, got, err)
		}
	}
	if _, err := ParseLearner("svm"); err == nil || !strings.Contains(err.Error(), `unknown learner "svm"`) {
		t.Errorf("ParseLearner(svm): %v", err)
	}
	if _, err := ParseRegressionSolver("rff"); err == nil || !strings.Contains(err.Error(), `unknown regression solver "rff"`) {
		t.Errorf("ParseRegressionSolver(rff): %v", err)
	}
}
