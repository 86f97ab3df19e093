package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
)

// classifierFlags are fit's flags for the learner a model carries.
type classifierFlags struct {
	kind          string
	c             floatsFlag
	maxTrainCells int
}

func (f *classifierFlags) register(fs *flag.FlagSet) {
	f.c = floatsFlag{1}
	fs.StringVar(&f.kind, "classifier", "none", "train a learner to keep in the model: `kind` svm (populations, from labels), krr (real targets) or none")
	fs.Var(&f.c, "C", "the learner's `cost` (SVM) or ridge (KRR); a list is chosen by cross-validation")
	fs.IntVar(&f.maxTrainCells, "max-train-cells", eval.DefaultMaxTrainCells, "the learner trains on at most this many labelled `cells` (a seeded sample)")
}

// maxLearnerCells is the most labelled cells the fit reads into memory for
// the cross-validation of a grid and the learner (a seeded sample of them
// when there are more; the learner trains on --max-train-cells of them,
// each inner fit on eval.DefaultMaxFitCells).
const maxLearnerCells = 500_000

// classifierKind checks --classifier against the data and the grid.
func (f *classifierFlags) classifierKind(mf *modelFlags, sc dataset.Schema) (classify.Kind, error) {
	k, err := classify.ParseKind(f.kind)
	if err != nil {
		return 0, usageErr("--classifier %q: want svm, krr or none", f.kind)
	}
	switch {
	case k == classify.None && (mf.grid() || len(f.c) > 1):
		return 0, usageErr("--sigma, --lambda, --components and --C take lists only with --classifier, whose inner cross-validation over the samples chooses among them; give one value each, or --classifier svm")
	case k == classify.SVM && !sc.Labelled:
		return 0, usageErr("--classifier svm learns populations: give --labels FILES or --label COLUMN (or --classifier krr with --target)")
	case k == classify.KRR && len(sc.Targets) == 0:
		return 0, usageErr("--classifier krr learns real targets: give --target COLUMNS (or --classifier svm with labels)")
	case k != classify.None && f.maxTrainCells < 1:
		return 0, usageErr("--max-train-cells %d: the learner needs at least 1 cell (default %d)", f.maxTrainCells, eval.DefaultMaxTrainCells)
	}
	return k, nil
}

// learnerOptions returns the options of eval's inner cross-validation and
// learner for the fit's settings.
func (f *classifierFlags) learnerOptions(mf *modelFlags, cfg dica.Config, method string) eval.Options {
	o := eval.Options{Methods: []string{method}, Solver: cfg.Solver, Rank: cfg.Rank, Seed: cfg.Seed, MaxTrainCells: f.maxTrainCells}
	o.Grid.Sigma = mf.sigma
	o.Grid.Lambda = mf.lambda
	o.Grid.Epsilon = []float64{cfg.Epsilon}
	o.Grid.Components = mf.components
	o.Grid.C = f.c
	return o
}

// chooseSettings runs the inner leave-samples-out cross-validation of dica
// eval on a sample of the labelled cells and returns the choice and the
// sample; cfg gets the chosen settings. Without a grid (the flags' single
// values) it returns the choice and no sample: the learner's cells are then
// drawn during the fit's pass (learnerSampler).
func (f *classifierFlags) chooseSettings(ctx context.Context, mf *modelFlags, cfg *dica.Config, src dataset.Source, stderr io.Writer) (*eval.Choice, *dataset.Dataset, error) {
	method := methodName(cfg.Method)
	if !f.grid(mf) {
		c := eval.Choice{Method: method, Params: eval.Params{Sigma: cfg.Sigma, Lambda: cfg.Lambda, Epsilon: cfg.Epsilon, Components: cfg.Components, C: f.c[0]}}
		return &c, nil, nil
	}
	ds, err := dataset.Sample(ctx, src, maxLearnerCells, cfg.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("the learner's cells: %w", err)
	}
	o := f.learnerOptions(mf, *cfg, method)
	train := make([]int, len(ds.DomainNames))
	for g := range train {
		train[g] = g
	}
	if !mf.quiet {
		fmt.Fprintf(stderr, "dica fit: choosing the settings by cross-validation over %d labelled sample(s) (%d cells) ...\n", len(train), ds.N())
	}
	cs, err := eval.Choose(ctx, ds, train, o)
	if err != nil {
		return nil, nil, err
	}
	c := cs[0]
	if method != eval.Input {
		chosen, err := c.Config(o)
		if err != nil {
			return nil, nil, err
		}
		cfg.Sigma, cfg.Lambda, cfg.Epsilon, cfg.Components = chosen.Sigma, chosen.Lambda, chosen.Epsilon, chosen.Components
		cfg.SigmaY = chosen.SigmaY
	}
	return &c, ds, nil
}

// grid reports whether the settings are lists to choose from.
func (f *classifierFlags) grid(mf *modelFlags) bool { return mf.grid() || len(f.c) > 1 }

// learnerSampler returns the sampler that draws the learner's cells (at
// most --max-train-cells labelled cells, seeded as the fit) from the fit's
// own pass over src, so that a learner without a grid costs no pass of its
// own (CSV files, where a pass is mostly parsing). It returns nil for a
// source that knows its length (FCS, Parquet, AnnData, data in memory),
// which the tee would hide from the fit: learnerCells samples it in a pass
// of its own.
func (f *classifierFlags) learnerSampler(cfg dica.Config, src dataset.Source) (*dataset.Sampler, error) {
	if _, ok := src.(dataset.Sizer); ok {
		return nil, nil
	}
	return dataset.NewSampler(src.Schema(), f.maxTrainCells, cfg.Seed)
}

// learnerCells returns the cells the sampler drew during the fit, or,
// without a sampler or when the fit made no whole pass over src, the same
// sample read now.
func (f *classifierFlags) learnerCells(ctx context.Context, s *dataset.Sampler, cfg dica.Config, src dataset.Source) (*dataset.Dataset, error) {
	ds, err := s.Dataset()
	if s == nil || errors.Is(err, dataset.ErrNoPass) {
		ds, err = dataset.Sample(ctx, src, f.maxTrainCells, cfg.Seed)
	}
	if err != nil {
		return nil, fmt.Errorf("the learner's cells: %w", err)
	}
	return ds, nil
}

// trainLearner trains the learner on the model's projections of the
// labelled cells and keeps it in the model.
func (f *classifierFlags) trainLearner(ctx context.Context, mf *modelFlags, m *dica.Model, c *eval.Choice, ds *dataset.Dataset) error {
	o := f.learnerOptions(mf, m.Config(), c.Method)
	train := make([]int, len(ds.DomainNames))
	for g := range train {
		train[g] = g
	}
	fin, err := eval.TrainOn(ctx, ds, train, m, *c, o)
	if err != nil {
		return err
	}
	cl, err := fin.Classifier(ctx)
	if err != nil {
		return err
	}
	return m.SetClassifier(cl)
}

// methodName is a method's name for package eval ("input" for the
// baseline).
func methodName(m dica.Method) string { return strings.ToLower(m.String()) }

// learnerSummary describes the learner a model carries in one line.
func learnerSummary(m *dica.Model) string {
	cl := m.Classifier()
	if cl == nil {
		return ""
	}
	s := fmt.Sprintf("%s on %d input(s)", cl.Kind, cl.Dim())
	if cl.Kind == classify.SVM {
		s += fmt.Sprintf(", %d population(s), C = %g", len(cl.Classes), cl.Params.C)
	}
	if cl.Folds > 0 {
		s += fmt.Sprintf(", inner score %.4f over %d fold(s)", cl.Score, cl.Folds)
	}
	return s
}
