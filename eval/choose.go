package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/svm"
)

// Choice is what the inner cross-validation chose for one method on a set
// of training domains.
type Choice struct {
	Method string `json:"method"`
	// Params is the chosen point (the point of a grid of one).
	Params Params `json:"params"`
	// Score is the chosen point's inner score: the mean over the held-out
	// training domains of their accuracy (RMSE for regression). Folds is
	// the number of inner folds, 0 when no cross-validation ran (one
	// training domain, or a grid of one point whose cross-validation
	// failed: Grid then holds its error); Score is then 0.
	Score float64 `json:"score"`
	Folds int     `json:"folds"`
	// Grid lists every point's inner score or error (nil for a grid of
	// one point that was scored).
	Grid []GridPoint `json:"grid,omitempty"`
}

// Choose runs the inner cross-validation of Evaluate on the training
// domains train of ds (indices into ds.DomainNames) for each method of
// o.Methods, and returns each one's choice in the order of o.Methods:
// the choice Evaluate makes for a split with these training domains when
// it is the first split (whose seeds Choose uses), from the same cells
// and the same grid. No other domain is read. A method whose grid has
// one point is scored when its inner cross-validation can run. Errors are
// those of Evaluate for such a split (an unknown method, a bad grid value,
// too few training domains for a grid of several points).
func Choose(ctx context.Context, ds *dataset.Dataset, train []int, o Options) ([]Choice, error) {
	e, err := buildEvaluator(ds, []Split{{Train: train}}, o, true)
	if err != nil {
		return nil, err
	}
	srs, err := e.chooseSplit(ctx, 0, map[string]time.Duration{})
	if err != nil {
		return nil, err
	}
	out := make([]Choice, len(e.methods))
	for i, name := range e.methods {
		sr := srs[name]
		out[i] = Choice{Method: name, Params: sr.Params, Score: sr.InnerScore, Folds: sr.InnerFolds, Grid: sr.Grid}
	}
	return out, nil
}

// chooseSplit runs the inner cross-validation of every method on split si
// (for a grid of one point, when it can run) and returns each method's
// SplitResult with its choice, adding the time spent to busy.
func (e *evaluator) chooseSplit(ctx context.Context, si int, busy map[string]time.Duration) (map[string]*SplitResult, error) {
	s := e.splits[si]
	srs := map[string]*SplitResult{}
	var cv []string
	for _, name := range e.methods {
		srs[name] = &SplitResult{Train: e.names(s.Train), Test: e.names(s.Test), Params: e.grid(name).points()[0]}
		if e.grid(name).size() > 1 || e.canCrossValidate(si, name) {
			cv = append(cv, name)
		}
	}
	if err := e.crossValidate(ctx, si, cv, srs, busy); err != nil {
		return nil, err
	}
	return srs, nil
}

// Config returns the dica configuration of the final fit of the choice
// (Method, Sigma, Lambda, Epsilon, Components, and Solver, Rank and Seed of
// o; the output bandwidth of a supervised method on real targets), the one
// TrainFinal and Evaluate fit on the training cells. It returns an error
// for the baseline, which fits nothing, and an unknown method.
func (c Choice) Config(o Options) (dica.Config, error) {
	m, isDICA, err := parseMethod(strings.ToLower(strings.TrimSpace(c.Method)))
	if err != nil {
		return dica.Config{}, err
	}
	if !isDICA {
		return dica.Config{}, fmt.Errorf("eval: the %s baseline fits no transformation", Input)
	}
	o = o.withDefaults(false)
	e := &evaluator{o: o}
	cfg := e.config(fitSpec{name: m.String(), p: c.Params, k: c.Params.Components})
	if m.Supervised() {
		cfg.SigmaY = c.Params.TargetSigma
	}
	return cfg, nil
}

// Final is a method's transformation and learner trained on the training
// cells with its chosen point, as Evaluate trains them before it scores
// the test domains: a linear SVM on class labels, a kernel ridge
// regression on real targets.
type Final struct {
	Method string
	Params Params
	// Model is the fitted transformation; nil for the baseline (TrainFinal)
	// unless one was given (TrainOn).
	Model *dica.Model
	// Components is the number of columns the learner takes: the first
	// Params.Components components of the model (all of them when it
	// returned fewer), or the inputs for the baseline.
	Components int
	// Scaler standardizes those columns and SVM classifies them (nil for
	// a regression).
	Scaler *svm.Scaler
	SVM    *svm.Model
	// FitCells is the number of cells of the fit (0 for a model given to
	// TrainOn), TrainCells the number of cells the learner was trained on.
	FitCells, TrainCells int

	// What Classifier needs: the evaluation, the choice, the training
	// domains and the learner.
	e     *evaluator
	c     Choice
	train []int
	l     *learner
	ts    *trainSet // the learner's training set (TrainOn; nil for TrainFinal)
}

// TrainFinal fits the transformation of c.Method with the point c.Params
// on the training domains train of ds (all their cells, or
// Options.FinalFitCells of them) and trains the learner on the
// standardized projections of at most Options.MaxTrainCells of them, as
// Evaluate does for a split with these training domains when it is the
// first split: with Choose's choice, it gives the model and learner that
// Evaluate scores on the test domains, bit for bit. It supports the plain
// learner without BatchCenter (which centers each domain with its own
// cells); other settings are an error, as are those of Choose.
func TrainFinal(ctx context.Context, ds *dataset.Dataset, train []int, c Choice, o Options) (*Final, error) {
	e, name, err := finalEvaluator(ds, train, c, o)
	if err != nil {
		return nil, err
	}
	srs := map[string]*SplitResult{name: {Params: c.Params}}
	fms, _, err := e.finalFit(ctx, 0, []string{name}, srs)
	if err != nil {
		return nil, err
	}
	fm, sr := fms[0], srs[name]
	f := &Final{Method: name, Params: c.Params, Components: sr.Components, Scaler: fm.l.scaler, SVM: fm.l.svm,
		FitCells: sr.FitCells, TrainCells: len(e.sample(0, train, e.o.MaxTrainCells, e.rng(0, 0, purposeFinalTrain))),
		e: e, c: c, train: train, l: fm.l}
	if fm.group != nil {
		f.Model = fm.group.band.models[fm.index]
	}
	return f, nil
}

// TrainOn trains the learner of TrainFinal on the projections by m, a
// model fitted elsewhere (such as by dica.Fit with the options of a
// command) with c.Method and c.Params, of the same training cells: with
// the model TrainFinal fits, it gives TrainFinal's learner. The rows of ds
// must be preprocessed as m's Preprocessing describes (m projects them as
// they are). For the baseline, m is nil or a model of method
// dica.Input. It returns an error for a model of another method or
// inputs, and those of TrainFinal.
func TrainOn(ctx context.Context, ds *dataset.Dataset, train []int, m *dica.Model, c Choice, o Options) (*Final, error) {
	// The model is fitted already: the learner alone is trained here, so
	// the training domains need not be what fitting the method needs (one
	// hand-gated sample, its model fitted on every sample).
	learner := c
	learner.Method = Input
	e, _, err := finalEvaluator(ds, train, learner, o)
	if err != nil {
		return nil, err
	}
	name, _, err := methodOf(c.Method)
	if err != nil {
		return nil, err
	}
	method := Input
	if m != nil {
		method = m.Config().Method.String()
		if got, want := len(m.Inputs()), e.ds.D(); got != want {
			return nil, fmt.Errorf("eval: the model takes %d inputs, the data has %d", got, want)
		}
	}
	if method != name {
		return nil, fmt.Errorf("eval: a model of method %s for the choice of %s", method, name)
	}
	rows := e.sample(0, train, e.o.MaxTrainCells, e.rng(0, 0, purposeFinalTrain))
	z, err := projectRows(e, m, rows, c.Params.Components)
	if err != nil {
		return nil, err
	}
	ts, err := e.trainingSet(z, rows, e.rng(0, 0, purposeLearner))
	if err != nil {
		return nil, err
	}
	l, err := e.learn(ctx, ts, c.Params)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: training the learner: %w", name, err)
	}
	_, k := z.Dims()
	return &Final{Method: name, Params: c.Params, Model: m, Components: k, Scaler: l.scaler, SVM: l.svm,
		TrainCells: len(rows), e: e, c: c, train: train, l: l, ts: ts}, nil
}

// finalEvaluator returns the evaluation of TrainFinal and TrainOn and the
// method's name.
func finalEvaluator(ds *dataset.Dataset, train []int, c Choice, o Options) (*evaluator, string, error) {
	if o.Learner != Plain || o.BatchCenter {
		return nil, "", errors.New("eval: TrainFinal trains the plain learner (linear SVM or kernel ridge regression) without batch centering")
	}
	o.Methods = []string{c.Method}
	e, err := buildEvaluator(ds, []Split{{Train: train}}, o, true)
	if err != nil {
		return nil, "", err
	}
	return e, e.methods[0], nil
}

// projectRows returns the projection by m (the inputs when m is nil) of
// the data set's rows, on its first k components (all when k is 0).
func projectRows(e *evaluator, m *dica.Model, rows []int, k int) (*mat.Dense, error) {
	x := e.ds.Subset(rows).X
	if m == nil {
		return x, nil
	}
	z, err := m.Transform(x, dica.TransformOptions{Preprocessed: true})
	if err != nil {
		return nil, err
	}
	return firstCols(z, k), nil
}

// Predict returns the class the classifier predicts for each row of x
// (the inputs, preprocessed as the data set's were): the first Components
// columns of the model's projection (or the inputs), standardized by
// Scaler. It returns an error for an empty Final, a regression, and x of
// the wrong shape.
func (f *Final) Predict(x *mat.Dense) ([]int, error) {
	if f == nil || f.Scaler == nil || f.l == nil && f.SVM == nil {
		return nil, errors.New("eval: empty Final (use TrainFinal)")
	}
	if f.SVM == nil {
		return nil, errors.New("eval: Final.Predict classifies, and this Final is a regression (Classifier gives its model)")
	}
	z := x
	if f.Model != nil {
		var err error
		if z, err = f.Model.Transform(x, dica.TransformOptions{Preprocessed: true}); err != nil {
			return nil, err
		}
		z = firstCols(z, f.Components)
	}
	if _, c := z.Dims(); c != f.Components {
		return nil, fmt.Errorf("eval: %d columns for a classifier of %d", c, f.Components)
	}
	zs, err := f.Scaler.Apply(z)
	if err != nil {
		return nil, err
	}
	return f.SVM.Predict(zs)
}

// purposeCalibration is the random stream of the folds of cells that
// calibrate a classifier trained on one domain.
const purposeCalibration = purposeMixing + 1

// Classifier returns the learner as a dica model carries it
// (dica.Model.SetClassifier): for class labels the SVM, with its
// populations in natural order (those of the training cells) and the
// inverse temperature of its confidence fitted on held-out margins (see
// package classify); for real targets the kernel ridge regression as a
// kernel expansion.
//
// The held-out margins are those of leave-samples-out folds of the
// learner (CalibrationSamples): the training domains in the groups of the
// inner cross-validation, each group's cells (of the learner's training
// cells) scored by an SVM of the same cost trained on the other groups'
// cells, on the final projection and standardization: a new sample as
// the classifier sees it, at the cost of InnerFolds trainings of the SVM
// and no fit. With a single training domain they are those of InnerFolds
// seeded folds of its cells (CalibrationCells: a cell of a known sample,
// so the confidence is optimistic for new samples), as when the SVM of a
// group's folds cannot be trained (the other groups' cells hold fewer
// than two populations).
func (f *Final) Classifier(ctx context.Context) (*classify.Model, error) {
	if f == nil || f.l == nil || f.e == nil {
		return nil, errors.New("eval: empty Final (use TrainFinal or TrainOn)")
	}
	e, l := f.e, f.l
	out := &classify.Model{Mean: slices.Clone(l.scaler.Mean), Scale: slices.Clone(l.scaler.SD),
		Score: f.c.Score, Folds: f.c.Folds, TrainCells: f.TrainCells,
		Params: classify.Params{Method: f.Method, Sigma: f.Params.Sigma, TargetSigma: f.Params.TargetSigma,
			Lambda: f.Params.Lambda, Epsilon: f.Params.Epsilon, Components: f.Params.Components, C: f.Params.C}}
	if e.regression {
		if err := f.regressor(out); err != nil {
			return nil, err
		}
		return out, out.Check()
	}
	sv := l.svm
	var present []int
	for c := range sv.NClass {
		if sv.Present[c] {
			present = append(present, c)
		}
	}
	slices.SortStableFunc(present, func(a, b int) int { return dataset.NaturalCompare(e.ds.ClassNames[a], e.ds.ClassNames[b]) })
	out.Kind = classify.SVM
	out.W = mat.NewDense(len(present), sv.Dim, nil)
	for i, c := range present {
		out.Classes = append(out.Classes, e.ds.ClassNames[c])
		out.W.SetRow(i, sv.W.RawRowView(c))
		out.Intercept = append(out.Intercept, sv.Intercept[c])
	}
	source := CalibrationSamples
	if len(f.train) < 2 {
		source = CalibrationCells
	}
	oof, err := f.learnerFolds(ctx, source == CalibrationSamples)
	if err != nil && source == CalibrationSamples && ctx.Err() == nil {
		// A fold without two populations: folds of the cells.
		source = CalibrationCells
		oof, err = f.learnerFolds(ctx, false)
	}
	if err != nil {
		return nil, err
	}
	beta, used, err := classify.FitInvTemperature(mat.NewDense(len(oof.truth), oof.classes, oof.margins), oof.truth)
	if err != nil {
		return nil, fmt.Errorf("eval: calibrating the confidence: %w", err)
	}
	out.InvTemperature = beta
	out.Calibration = classify.Calibration{Source: source, Cells: used, Folds: oof.folds}
	return out, out.Check()
}

// The sources of the held-out margins of the calibration
// (classify.Calibration.Source).
const (
	// CalibrationSamples: leave-samples-out folds of the learner on the
	// final projection.
	CalibrationSamples = "samples"
	// CalibrationCells: folds of the cells of a single training domain,
	// on the final projection.
	CalibrationCells = "cells"
)

// learnerFolds returns the held-out margins of folds of the learner's
// training cells, with the final projection and standardization: each
// fold's cells scored by an SVM of the same cost trained on the other
// folds' cells (warm-started from the final SVM). The folds are the groups of training domains of the inner
// cross-validation when bySample is set (at least two domains), else
// InnerFolds seeded folds of the cells.
func (f *Final) learnerFolds(ctx context.Context, bySample bool) (*outOfFold, error) {
	e := f.e
	ts := f.ts
	if ts == nil {
		rows := e.sample(0, f.train, e.o.MaxTrainCells, e.rng(0, 0, purposeFinalTrain))
		z, err := projectRows(e, f.Model, rows, f.Params.Components)
		if err != nil {
			return nil, err
		}
		if ts, err = e.trainingSet(z, rows, e.rng(0, 0, purposeLearner)); err != nil {
			return nil, err
		}
	}
	n := len(ts.rows)
	var folds [][]int
	if bySample {
		for _, g := range e.groups(f.train) {
			var held []int
			for i, p := range ts.rows {
				if slices.Contains(g, e.ds.Domain[p]) {
					held = append(held, i)
				}
			}
			folds = append(folds, held)
		}
	} else {
		k := min(e.o.InnerFolds, n)
		perm := e.rng(0, 0, purposeCalibration).Perm(n)
		for fo := range k {
			folds = append(folds, perm[fo*n/k:(fo+1)*n/k])
		}
	}
	_, d := ts.zs.Dims()
	var parts []*outOfFold
	for _, held := range folds {
		inFold := make([]bool, n)
		for _, i := range held {
			inFold[i] = true
		}
		sub := &trainSet{scaler: ts.scaler, seed: ts.seed}
		var keep []int
		for i := range n {
			if !inFold[i] {
				keep = append(keep, i)
			}
		}
		sub.zs = mat.NewDense(len(keep), d, nil)
		y := make([]int, len(keep))
		for j, i := range keep {
			sub.zs.SetRow(j, ts.zs.RawRowView(i))
			sub.rows = append(sub.rows, ts.rows[i])
			y[j] = e.ds.Label[ts.rows[i]]
		}
		// The SVM of the fold starts from the final one's weights (a warm
		// start of the primal solver, as along a path of costs).
		l := &learner{scaler: ts.scaler}
		pb, err := svm.NewProblem(sub.zs, y, len(e.ds.ClassNames), 0)
		if err == nil {
			o := svm.Options{C: f.Params.C, Seed: e.o.Seed}
			if d <= svm.AutoPrimalMaxDim {
				o.Init = f.l.svm
			}
			l.svm, err = pb.Train(ctx, o)
		}
		if err != nil {
			return nil, fmt.Errorf("eval: calibrating the confidence on folds of the training cells: %w", err)
		}
		hz := mat.NewDense(len(held), d, nil)
		hrows := make([]int, len(held))
		for j, i := range held {
			hz.SetRow(j, ts.zs.RawRowView(i))
			hrows[j] = ts.rows[i]
		}
		part, err := e.margins(l, hz, hrows)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return joinFolds(parts), nil
}

// regressor fills in the kernel ridge regression of the learner as a
// kernel expansion (classify.KRR): on the training cells with the
// coefficients alpha (exact), or on the Nystrom landmarks with the
// coefficients T w (T the map's transform, w the ridge weights).
func (f *Final) regressor(out *classify.Model) error {
	e, l := f.e, f.l
	out.Kind = classify.KRR
	_, t := e.ds.Target.Dims()
	for j := range t {
		name := fmt.Sprintf("y%d", j+1)
		if j < len(e.ds.TargetNames) && e.ds.TargetNames[j] != "" {
			name = e.ds.TargetNames[j]
		}
		out.Targets = append(out.Targets, name)
	}
	switch {
	case len(l.exact) == t:
		k, ok := l.exact[0].Kernel.(kernel.RBF)
		if !ok {
			return fmt.Errorf("eval: a regression with kernel %v", l.exact[0].Kernel)
		}
		out.Sigma, out.Points = k.Sigma, mat.DenseCopyOf(l.exact[0].X)
		n, _ := out.Points.Dims()
		out.Coef = mat.NewDense(n, t, nil)
		for j, m := range l.exact {
			out.Coef.SetCol(j, m.Alpha)
			out.Offset = append(out.Offset, m.Mean)
		}
	case len(l.lin) == t && l.point != nil:
		nm, ok := l.point.(*nystrom.Map)
		if !ok {
			return fmt.Errorf("eval: a regression on features %T", l.point)
		}
		k, ok := nm.Kernel().(kernel.RBF)
		if !ok {
			return fmt.Errorf("eval: a regression with kernel %v", nm.Kernel())
		}
		out.Sigma, out.Points = k.Sigma, mat.DenseCopyOf(nm.Landmarks())
		tr := nm.Transform()
		n, _ := out.Points.Dims()
		out.Coef = mat.NewDense(n, t, nil)
		for j, m := range l.lin {
			var a mat.VecDense
			a.MulVec(tr, mat.NewVecDense(len(m.W), m.W))
			out.Coef.SetCol(j, a.RawVector().Data)
			out.Offset = append(out.Offset, m.Mean)
		}
	default:
		return errors.New("eval: the regression is not a plain kernel ridge regression")
	}
	return nil
}

// outOfFold holds held-out margins: one row of one-vs-rest margins per
// cell (columns: the data set's classes, -Inf for a class the cell's
// learner lacked) and the cell's true class, over folds.
type outOfFold struct {
	margins []float64
	truth   []int
	classes int
	folds   int
}

// margins returns the one-vs-rest margins of the learner's SVM on the
// standardized features zs of the rows, with their true classes.
func (e *evaluator) margins(l *learner, zs *mat.Dense, rows []int) (*outOfFold, error) {
	dec, err := l.svm.Decision(zs)
	if err != nil {
		return nil, err
	}
	n, c := dec.Dims()
	o := &outOfFold{margins: make([]float64, 0, n*c), truth: make([]int, n), classes: c, folds: 1}
	for i, p := range rows {
		o.margins = append(o.margins, dec.RawRowView(i)...)
		o.truth[i] = e.ds.Label[p]
	}
	return o, nil
}

// joinFolds concatenates the folds' margins in fold order (nil when a fold
// has none).
func joinFolds(folds []*outOfFold) *outOfFold {
	if len(folds) == 0 {
		return nil
	}
	out := &outOfFold{classes: folds[0].classes}
	for _, f := range folds {
		if f == nil {
			return nil
		}
		out.margins = append(out.margins, f.margins...)
		out.truth = append(out.truth, f.truth...)
		out.folds += f.folds
	}
	return out
}

// methodOf returns the lower-case name of a method of package eval, and
// whether it is a method of the DICA family.
func methodOf(method string) (string, bool, error) {
	name := strings.ToLower(strings.TrimSpace(method))
	if name == Input {
		return name, false, nil
	}
	m, isDICA, err := parseMethod(name)
	if err != nil {
		return "", false, err
	}
	return m.String(), isDICA, nil
}
