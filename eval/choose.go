package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
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

// Final is a method's transformation and linear SVM trained on the
// training cells with its chosen point, as Evaluate trains them before it
// scores the test domains.
type Final struct {
	Method string
	Params Params
	// Model is the fitted transformation; nil for the baseline.
	Model *dica.Model
	// Components is the number of columns the classifier takes: the first
	// Params.Components components of the model (all of them when it
	// returned fewer), or the inputs for the baseline.
	Components int
	// Scaler standardizes those columns and SVM classifies them.
	Scaler *svm.Scaler
	SVM    *svm.Model
	// FitCells is the number of cells of the fit, TrainCells the number
	// of cells the SVM was trained on.
	FitCells, TrainCells int
}

// TrainFinal fits the transformation of c.Method with the point c.Params
// on the training domains train of ds (all their cells, or
// Options.FinalFitCells of them) and trains the linear SVM on the
// standardized projections of at most Options.MaxTrainCells of them, as
// Evaluate does for a split with these training domains when it is the
// first split: with Choose's choice, it gives the model and classifier
// that Evaluate scores on the test domains, bit for bit. It supports the
// plain learner on class labels without BatchCenter (which centers each
// domain with its own cells); other settings are an error, as are those
// of Choose.
func TrainFinal(ctx context.Context, ds *dataset.Dataset, train []int, c Choice, o Options) (*Final, error) {
	if o.Learner != Plain || o.BatchCenter {
		return nil, errors.New("eval: TrainFinal trains the plain linear SVM without batch centering")
	}
	if ds != nil && ds.Label == nil {
		return nil, errors.New("eval: TrainFinal needs class labels (it trains a classifier)")
	}
	o.Methods = []string{c.Method}
	e, err := buildEvaluator(ds, []Split{{Train: train}}, o, true)
	if err != nil {
		return nil, err
	}
	name := e.methods[0]
	srs := map[string]*SplitResult{name: {Params: c.Params}}
	fms, _, err := e.finalFit(ctx, 0, []string{name}, srs)
	if err != nil {
		return nil, err
	}
	fm, sr := fms[0], srs[name]
	f := &Final{Method: name, Params: c.Params, Components: sr.Components, Scaler: fm.l.scaler, SVM: fm.l.svm,
		FitCells: sr.FitCells, TrainCells: len(e.sample(0, train, e.o.MaxTrainCells, e.rng(0, 0, purposeFinalTrain)))}
	if fm.group != nil {
		f.Model = fm.group.band.models[fm.index]
	}
	return f, nil
}

// Predict returns the class the classifier predicts for each row of x
// (the inputs, preprocessed as the data set's were): the first Components
// columns of the model's projection (or the inputs), standardized by
// Scaler. It returns an error for an empty Final and for x of the wrong
// shape.
func (f *Final) Predict(x *mat.Dense) ([]int, error) {
	if f == nil || f.Scaler == nil || f.SVM == nil {
		return nil, errors.New("eval: empty Final (use TrainFinal)")
	}
	z := x
	if f.Model != nil {
		var err error
		if z, err = f.Model.Transform(x, dica.TransformOptions{}); err != nil {
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
