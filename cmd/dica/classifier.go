package main

import (
	"context"
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
// the learner and its cross-validation (a seeded sample of them when there
// are more; the learner trains on --max-train-cells of them, each inner
// fit on eval.DefaultMaxFitCells).
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
// eval on a sample of the labelled cells and returns the choice (nil
// without a grid: the flags' single values). cfg gets the chosen settings.
func (f *classifierFlags) chooseSettings(ctx context.Context, mf *modelFlags, cfg *dica.Config, src dataset.Source, stderr io.Writer) (*eval.Choice, *dataset.Dataset, error) {
	method := methodName(cfg.Method)
	ds, err := dataset.Sample(ctx, src, maxLearnerCells, cfg.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("the learner's cells: %w", err)
	}
	o := f.learnerOptions(mf, *cfg, method)
	train := make([]int, len(ds.DomainNames))
	for g := range train {
		train[g] = g
	}
	if !mf.grid() && len(f.c) == 1 {
		c := eval.Choice{Method: method, Params: eval.Params{Sigma: cfg.Sigma, Lambda: cfg.Lambda, Epsilon: cfg.Epsilon, Components: cfg.Components, C: f.c[0]}}
		return &c, ds, nil
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
