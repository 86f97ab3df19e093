package eval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/krr"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/svm"
)

// learner is a trained classifier or regressor on standardized features.
type learner struct {
	scaler *svm.Scaler
	// desc describes the learner for SplitResult.Learner.
	desc string
	// svm classifies the features (the standardized components, or the
	// distributional features when dist is set).
	svm *svm.Model
	// Regression, one model per target: exact kernel ridge regressions, or
	// ridge regressions on the features of point (plain Nystrom) or of dist.
	exact []*krr.Exact
	lin   []*krr.Linear
	point approx.Map
	// dist builds the distributional features psi(mu_P) (x) phi(x).
	dist *krr.Distributional
}

// affine is the feature map x -> [x, 1] of the linear kernel with a
// constant, k2(x, x') = x'x' + 1: the point kernel of the distributional
// SVM. With a constant domain kernel the distributional SVM is then the
// plain linear SVM with bias feature 1.
type affine struct{ d int }

func (a affine) InputDim() int { return a.d }
func (a affine) Dim() int      { return a.d + 1 }
func (a affine) Map(dst, x *mat.Dense) {
	r, d := x.Dims()
	if d != a.d {
		panic(fmt.Sprintf("eval: input has %d columns, map expects %d", d, a.d))
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, d+1)
	}
	for i := range r {
		row := dst.RawRowView(i)
		copy(row, x.RawRowView(i))
		row[d] = 1
	}
}

// gaussMap returns the Nystrom map of the Gaussian kernel of bandwidth sigma
// on min(m, n) landmarks drawn uniformly from the rows of x.
func gaussMap(x *mat.Dense, sigma float64, m int, seed uint64) (*nystrom.Map, error) {
	n, _ := x.Dims()
	lm, err := nystrom.Uniform(x, min(m, n), seed)
	if err != nil {
		return nil, err
	}
	return nystrom.New(kernel.RBF{Sigma: sigma}, lm, 0)
}

// domainsOf returns the domain of each row.
func (e *evaluator) domainsOf(rows []int) []int {
	d := make([]int, len(rows))
	for i, p := range rows {
		d[i] = e.ds.Domain[p]
	}
	return d
}

// train trains the learner with the parameters C and DistSigma of p on the
// projections z of the rows (subsampled to MaxTrainCells, or
// MaxRegressionCells for the exact regression).
func (e *evaluator) train(ctx context.Context, z *mat.Dense, rows []int, p Params, rng *rand.Rand) (*learner, error) {
	ts, err := e.trainingSet(z, rows, rng)
	if err != nil {
		return nil, err
	}
	return e.learn(ctx, ts, p)
}

// learn trains a new learner with the parameters C and DistSigma of p on
// the training set, which several learners may share.
func (e *evaluator) learn(ctx context.Context, ts *trainSet, p Params) (*learner, error) {
	if !e.regression {
		return e.trainClassifier(ctx, ts, p)
	}
	return e.trainRegression(ctx, ts, p)
}

// trainSet is the training data of a learner: the standardized components
// of at most the allowed number of cells, their rows in the data set, their
// domains (distributional learner) and a seed. The plain linear SVMs of
// several costs share the problem prepared from it.
type trainSet struct {
	scaler  *svm.Scaler
	zs      *mat.Dense
	rows    []int
	domains []int
	seed    uint64
	problem *svm.Problem
	dists   map[float64]*distProblem // by DistSigma
}

// trainingSet standardizes z (a new learner keeps the scaler) and keeps at
// most the allowed number of its rows, drawn with a seed from rng. A
// classifier learns from the cells with a label only: the others are left
// out first (the transformation was fitted on them too).
func (e *evaluator) trainingSet(z *mat.Dense, rows []int, rng *rand.Rand) (*trainSet, error) {
	return e.trainingSetOf(z, e.gather(rows), rng)
}

// trainingSetOf is trainingSet for rows gathered beforehand (gather).
func (e *evaluator) trainingSetOf(z *mat.Dense, rc *rowCells, rng *rand.Rand) (*trainSet, error) {
	z, rows := e.labelledOnly(z, rc)
	if len(rows) == 0 {
		return nil, errors.New("eval: no training cell has a label")
	}
	sc, err := svm.Standardize(z)
	if err != nil {
		return nil, err
	}
	zs, err := sc.Apply(z)
	if err != nil {
		return nil, err
	}
	limit := e.o.MaxTrainCells
	if e.regression && e.o.RegressionSolver == RegressionExact {
		limit = e.o.MaxRegressionCells
	}
	seed := rng.Uint64()
	if len(rows) > limit {
		pick := kernel.SampleRows(len(rows), limit, seed)
		_, d := zs.Dims()
		sub := mat.NewDense(len(pick), d, nil)
		subRows := make([]int, len(pick))
		for i, p := range pick {
			sub.SetRow(i, zs.RawRowView(p))
			subRows[i] = rows[p]
		}
		zs, rows = sub, subRows
	}
	ts := &trainSet{scaler: sc, zs: zs, rows: rows, seed: seed}
	if e.o.Learner == Distributional {
		ts.domains = e.domainsOf(rows)
	}
	return ts, nil
}

// rowCells holds rows of the data set with their domains and (for
// classification) class labels gathered side by side: the learners of the inner grid are trained on
// (and scored on) the same rows many times, and reading the labels and
// domains of scattered rows is slower than the loops over them.
type rowCells struct {
	rows          []int
	label, domain []int
	// labelled holds the positions in rows of the cells with a class
	// label, or is nil when every cell has one (and for regression).
	labelled []int
}

// gather returns the labels and domains of the rows.
func (e *evaluator) gather(rows []int) *rowCells {
	rc := &rowCells{rows: rows, domain: make([]int, len(rows))}
	for i, p := range rows {
		rc.domain[i] = e.ds.Domain[p]
	}
	if e.regression {
		return rc // the labels are not read
	}
	all := true
	rc.label = make([]int, len(rows))
	for i, p := range rows {
		rc.label[i] = e.ds.Label[p]
		all = all && rc.label[i] != dataset.NoLabel
	}
	if !all {
		rc.labelled = make([]int, 0, len(rows))
		for i, c := range rc.label {
			if c != dataset.NoLabel {
				rc.labelled = append(rc.labelled, i)
			}
		}
	}
	return rc
}

// labelledOnly returns the rows of z and rc.rows whose cells have a class
// label: z and rc.rows themselves for regression, and when every cell is
// labelled.
func (e *evaluator) labelledOnly(z *mat.Dense, rc *rowCells) (*mat.Dense, []int) {
	if rc.labelled == nil {
		return z, rc.rows
	}
	keep := rc.labelled
	_, d := z.Dims()
	sub := mat.NewDense(max(len(keep), 1), d, nil)
	out := make([]int, len(keep))
	for j, i := range keep {
		sub.SetRow(j, z.RawRowView(i))
		out[j] = rc.rows[i]
	}
	return sub, out
}

// newDist fits the learner's distributional domain features on the
// training set, with the point map point.
func (e *evaluator) newDist(l *learner, ts *trainSet, point approx.Map, p Params) error {
	embed, err := gaussMap(ts.zs, kernel.MedianSigma(ts.zs, 0, ts.seed), e.o.Dist.EmbedRank, ts.seed)
	if err != nil {
		return err
	}
	l.dist, err = krr.NewDistributional(embed, point, ts.zs, ts.domains, krr.DistOptions{Sigma: p.DistSigma, RFF: e.o.Dist.RFF, Seed: ts.seed})
	return err
}

// trainClassifier trains the linear SVM, on the components or on the
// distributional features.
func (e *evaluator) trainClassifier(ctx context.Context, ts *trainSet, p Params) (*learner, error) {
	_, d := ts.zs.Dims()
	l := &learner{scaler: ts.scaler, desc: "svm"}
	o := svm.Options{C: p.C, Seed: e.o.Seed}
	if e.o.Learner != Distributional {
		if ts.problem == nil {
			y := make([]int, len(ts.rows))
			for i, r := range ts.rows {
				y[i] = e.ds.Label[r]
			}
			var err error
			if ts.problem, err = svm.NewProblem(ts.zs, y, len(e.ds.ClassNames), o.Bias); err != nil {
				return nil, err
			}
		}
		var err error
		l.svm, err = ts.problem.Train(ctx, o)
		return l, err
	}
	// The distributional features and their problem depend on DistSigma
	// alone: the costs share them.
	// The constant of [x, 1] is the bias feature.
	o.Bias = -1
	dp := ts.dists[p.DistSigma]
	if dp == nil {
		dl := &learner{}
		if err := e.newDist(dl, ts, affine{d}, p); err != nil {
			return nil, err
		}
		f, err := dl.dist.Features(ts.zs, ts.domains)
		if err != nil {
			return nil, err
		}
		y := make([]int, len(ts.rows))
		for i, r := range ts.rows {
			y[i] = e.ds.Label[r]
		}
		dp = &distProblem{dist: dl.dist}
		if dp.problem, err = svm.NewProblem(krr.Materialize(f), y, len(e.ds.ClassNames), o.Bias); err != nil {
			return nil, err
		}
		if ts.dists == nil {
			ts.dists = map[float64]*distProblem{}
		}
		ts.dists[p.DistSigma] = dp
	}
	l.dist = dp.dist
	l.desc = fmt.Sprintf("distributional svm (k1 sigma %.4g, %d domain features x %d point features)", l.dist.Sigma, l.dist.DomainDim(), d+1)
	var err error
	l.svm, err = dp.problem.Train(ctx, o)
	return l, err
}

// distProblem is the distributional learner's domain features and SVM
// problem on a training set, for one bandwidth of the domain kernel.
type distProblem struct {
	dist    *krr.Distributional
	problem *svm.Problem
}

// trainRegression trains one kernel ridge regression per target: exact,
// on Nystrom features, or distributional.
func (e *evaluator) trainRegression(ctx context.Context, ts *trainSet, p Params) (*learner, error) {
	zs, l := ts.zs, &learner{scaler: ts.scaler}
	n, _ := zs.Dims()
	sigma := kernel.MedianSigma(zs, 0, ts.seed)
	k := kernel.RBF{Sigma: sigma}
	_, t := e.ds.Target.Dims()
	y := make([]float64, n)
	target := func(j int) []float64 {
		for i, r := range ts.rows {
			y[i] = e.ds.Target.At(r, j)
		}
		return y
	}
	ro := krr.Options{Lambda: p.C, Center: true}
	var f krr.Features
	switch {
	case e.o.Learner == Distributional:
		point, err := gaussMap(zs, sigma, e.o.Dist.PointRank, ts.seed)
		if err != nil {
			return nil, err
		}
		if err := e.newDist(l, ts, point, p); err != nil {
			return nil, err
		}
		if f, err = l.dist.Features(zs, ts.domains); err != nil {
			return nil, err
		}
		l.desc = fmt.Sprintf("distributional krr (k1 sigma %.4g, %d domain features x nystrom m=%d)", l.dist.Sigma, l.dist.DomainDim(), point.Dim())
	case e.o.RegressionSolver == RegressionExact || e.o.RegressionSolver == RegressionAuto && n <= e.o.MaxRegressionCells:
		for j := range t {
			m, err := krr.FitExact(zs, target(j), k, ro)
			if err != nil {
				return nil, err
			}
			l.exact = append(l.exact, m)
		}
		l.desc = fmt.Sprintf("krr exact (%d cells)", n)
		return l, nil
	default:
		point, err := gaussMap(zs, sigma, e.o.RegressionRank, ts.seed)
		if err != nil {
			return nil, err
		}
		l.point = point
		if f, err = krr.MapFeatures(point, zs); err != nil {
			return nil, err
		}
		l.desc = fmt.Sprintf("krr nystrom m=%d (%d cells)", point.Dim(), n)
	}
	for j := range t {
		m, err := krr.FitLinear(ctx, f, target(j), ro)
		if err != nil {
			return nil, err
		}
		l.lin = append(l.lin, m)
	}
	return l, nil
}

// predictBlock is the number of rows whose distributional features are
// materialized at a time for the SVM.
const predictBlock = 4096

// classify returns the predicted class of each row of the standardized
// features zs of the rows.
func (e *evaluator) classify(l *learner, zs *mat.Dense, rows []int) ([]int, error) {
	if l.dist == nil {
		return l.svm.Predict(zs)
	}
	f, err := l.dist.Features(zs, e.domainsOf(rows))
	if err != nil {
		return nil, err
	}
	n := f.Len()
	pred := make([]int, 0, n)
	var buf mat.Dense
	for lo := 0; lo < n; lo += predictBlock {
		hi := min(lo+predictBlock, n)
		buf.Reset()
		f.Block(&buf, lo, hi)
		p, err := l.svm.Predict(&buf)
		if err != nil {
			return nil, err
		}
		pred = append(pred, p...)
	}
	return pred, nil
}

// regress returns the predictions of every target (one slice per target)
// for the standardized features zs of the rows.
func (e *evaluator) regress(l *learner, zs *mat.Dense, rows []int) ([][]float64, error) {
	var out [][]float64
	if l.exact != nil {
		for _, m := range l.exact {
			p, err := m.Predict(zs)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	var f krr.Features
	var err error
	if l.dist != nil {
		f, err = l.dist.Features(zs, e.domainsOf(rows))
	} else {
		f, err = krr.MapFeatures(l.point, zs)
	}
	if err != nil {
		return nil, err
	}
	for _, m := range l.lin {
		p, err := m.Predict(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// tally accumulates a per-domain score: correct predictions or squared
// errors, and the number of values.
type tally struct {
	sum   float64
	count int
	cells int
}

// score adds the errors of the learner on the projections z of the rows to
// the per-domain tallies and, when conf is not nil, counts the predictions
// in conf[true class][predicted class]. With the distributional learner
// each domain's mean embedding is computed from its rows in z (its own
// unlabelled cells). Cells without a class label are not scored: a domain
// without a labelled cell gets no tally.
func (e *evaluator) score(l *learner, z *mat.Dense, rows []int, acc map[int]*tally, conf [][]int) error {
	zs, err := l.scaler.Apply(z)
	if err != nil {
		return err
	}
	return e.scoreStd(l, zs, rows, acc, conf)
}

// scoreStd is score for projections zs already standardized with the
// learner's scaler.
func (e *evaluator) scoreStd(l *learner, zs *mat.Dense, rows []int, acc map[int]*tally, conf [][]int) error {
	return e.scoreStdOf(l, zs, e.gather(rows), acc, conf)
}

// scoreStdOf is scoreStd for rows gathered beforehand (gather).
func (e *evaluator) scoreStdOf(l *learner, zs *mat.Dense, rc *rowCells, acc map[int]*tally, conf [][]int) error {
	rows := rc.rows
	// The tallies by domain, looked up in acc once per domain.
	byDomain := make([]*tally, len(e.ds.DomainNames))
	get := func(g int) *tally {
		if t := byDomain[g]; t != nil {
			return t
		}
		t := acc[g]
		if t == nil {
			t = &tally{}
			acc[g] = t
		}
		byDomain[g] = t
		return t
	}
	if l.svm != nil {
		pred, err := e.classify(l, zs, rows)
		if err != nil {
			return err
		}
		for i, c := range rc.label {
			if c == dataset.NoLabel {
				continue // not scored
			}
			t := get(rc.domain[i])
			if pred[i] == c {
				t.sum++
			}
			t.count++
			t.cells++
			if conf != nil {
				conf[c][pred[i]]++
			}
		}
		return nil
	}
	preds, err := e.regress(l, zs, rows)
	if err != nil {
		return err
	}
	for _, p := range rows {
		get(e.ds.Domain[p]).cells++
	}
	for j, pred := range preds {
		for i, p := range rows {
			t := get(e.ds.Domain[p])
			d := pred[i] - e.ds.Target.At(p, j)
			t.sum += d * d
			t.count++
		}
	}
	return nil
}
