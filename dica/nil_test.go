package dica

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/internal/testsupport/apitest"
	"github.com/dicalab/dica/toy"
)

// TestNilAndZero calls every exported function and method of the package
// with nil arguments, zero values and short blocks: each gives an error (or
// a documented zero result), never a panic.
func TestNilAndZero(t *testing.T) {
	var (
		nm  *Model
		zm  = &Model{}
		ns  *Stats
		zs  = &Stats{}
		np  *Plan
		zp  = &Plan{}
		ng  *GramPart
		zg  = &GramPart{}
		ctx = context.Background()
	)
	ds := toyData(t)
	good, err := Fit(ctx, ds.Source(), Config{Method: DICA, Rank: 20, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 20, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := plan.Accumulate(ctx, ds.Source())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errs := func(err error) error {
		if err == nil {
			return errors.New("no error")
		}
		return nil
	}
	zero := func(ok bool) error {
		if !ok {
			return errors.New("not the zero result")
		}
		return nil
	}
	two := func(_ any, err error) error { return errs(err) }
	calls := map[string]func() error{
		"Bytes":                     func() error { return zero(Bytes(0) == "0 kB") },
		"EstimateMemory":            func() error { return zero(EstimateMemory(Config{}, Shape{}) > 0) },
		"Fit/nil ctx":               func() error { return two(Fit(nil, ds.Source(), Config{})) },
		"Fit/nil src":               func() error { return two(Fit(ctx, nil, Config{})) },
		"Fit/zero config":           func() error { return two(Fit(ctx, ds.Source(), Config{Method: -1})) },
		"Family.Plan":               func() error { return zero((*Family)(nil).Plan() == nil && (&Family{}).Plan() == nil) },
		"Family.Solve":              func() error { return two((*Family)(nil).Solve(Config{})) },
		"Family.Solve/zero":         func() error { return two((&Family{}).Solve(Config{Method: DICA})) },
		"Family.Stats":              func() error { return zero((*Family)(nil).Stats(DICA) == nil && (&Family{}).Stats(KPCA) == nil) },
		"NewFamily/nil ctx":         func() error { return two(NewFamily(nil, ds.Source(), Config{Method: DICA})) },
		"NewFamily/nil src":         func() error { return two(NewFamily(ctx, nil, Config{Method: DICA})) },
		"NewFamily/no config":       func() error { return two(NewFamily(ctx, ds.Source())) },
		"Model.ProjectRaw/nil":      func() error { return errs(nm.ProjectRaw(&mat.Dense{}, mat.NewDense(1, 1, nil))) },
		"Model.ProjectRaw/zero":     func() error { return errs(zm.ProjectRaw(&mat.Dense{}, mat.NewDense(1, 1, nil))) },
		"Model.ProjectRaw/nil f":    func() error { return errs(good.ProjectRaw(&mat.Dense{}, nil)) },
		"Plan.MapRaw/nil":           func() error { return errs(np.MapRaw(&mat.Dense{}, mat.NewDense(1, 2, nil))) },
		"Plan.MapRaw/zero":          func() error { return errs(zp.MapRaw(&mat.Dense{}, mat.NewDense(1, 2, nil))) },
		"Plan.MapRaw/nil dst":       func() error { return errs(plan.MapRaw(nil, ds.X)) },
		"NewProjector/none":         func() error { return two(NewProjector()) },
		"NewProjector/zero":         func() error { return two(NewProjector(zm)) },
		"Projector.Project/nil":     func() error { return errs((*Projector)(nil).Project(nil, mat.NewDense(1, 1, nil))) },
		"Projector.Project/zero":    func() error { return errs((&Projector{}).Project(nil, mat.NewDense(1, 1, nil))) },
		"Plan.RawDim":               func() error { return zero(np.RawDim() == 0 && zp.RawDim() == 0) },
		"FromExact/nil":             func() error { return two(FromExact(nil, nil, Config{})) },
		"FromExact/zero":            func() error { return two(FromExact(&exact.Model{}, &dataset.Dataset{}, Config{})) },
		"GramRows":                  func() error { return zero(len(GramRows(0, 0)) == 2) },
		"Load":                      func() error { return two(Load(filepath.Join(dir, "absent"))) },
		"Load/dir":                  func() error { return two(Load(dir)) },
		"LoadStats":                 func() error { return two(LoadStats("")) },
		"LoadContext":               func() error { return two(LoadContext(nil, dir, LoadOptions{})) },
		"LoadStatsContext":          func() error { return two(LoadStatsContext(ctx, "", LoadOptions{MaxMemory: -1})) },
		"NewPlan/nil":               func() error { return two(NewPlan(ctx, nil, Config{})) },
		"ParseLandmarks":            func() error { return two(ParseLandmarks("")) },
		"ParseSolver":               func() error { return two(ParseSolver("")) },
		"ParseMethod":               func() error { return two(ParseMethod("")) },
		"ParseForm":                 func() error { return two(ParseForm("")) },
		"Config.MemoryBudget":       func() error { return zero(Config{MaxMemory: -1}.MemoryBudget() == 0) },
		"Config.NeedsSample":        func() error { Config{}.NeedsSample(dataset.Schema{}); return nil },
		"Config.WithDefaults":       func() error { return zero(Config{}.WithDefaults().Seed == DefaultSeed) },
		"Config.Bandwidths":         func() error { s, sy := Config{}.Bandwidths(); return zero(s == 0 && sy == 0) },
		"DomainPart.String":         func() error { return zero(strings.HasPrefix(DomainPart{}.String(), `domain "" (0 cells`)) },
		"LegacyError.Error":         func() error { return zero((*LegacyError)(nil).Error() != "" && (&LegacyError{}).Error() != "") },
		"OverlapError.Error":        func() error { return zero((*OverlapError)(nil).Error() != "" && (&OverlapError{}).Error() != "") },
		"DuplicateError.Error":      func() error { return zero((&DuplicateError{}).Error() != "" && (*DuplicateError)(nil).Error() != "") },
		"MemoryError.Error":         func() error { return zero((&MemoryError{}).Error() != "" && (*MemoryError)(nil).Error() != "") },
		"GramPart.Add/nil":          func() error { return errs(zg.Add(nil)) },
		"GramPart.Add/nil recv":     func() error { return errs(ng.Add(zg)) },
		"GramPart.MarshalBinary":    func() error { return two(ng.MarshalBinary()) },
		"GramPart.UnmarshalBinary":  func() error { return errs(zg.UnmarshalBinary(nil)) },
		"Landmarks.String":          func() error { return zero(Landmarks(-1).String() == "Landmarks(-1)") },
		"Model.Components":          func() error { return zero(nm.Components() == 0 && zm.Components() == 0) },
		"Model.Config":              func() error { return zero(nm.Config().Rank == 0 && zm.Config().Rank == 0) },
		"Model.Inputs":              func() error { return zero(nm.Inputs() == nil && zm.Inputs() == nil) },
		"Model.Map":                 func() error { return zero(nm.Map() == nil && zm.Map() == nil) },
		"Model.MarshalBinary/nil":   func() error { return two(nm.MarshalBinary()) },
		"Model.MarshalBinary/zero":  func() error { return two(zm.MarshalBinary()) },
		"Model.Null":                func() error { return zero(nm.Null() == 0 && zm.Null() == 0) },
		"Model.Preprocessing":       func() error { return zero(nm.Preprocessing() == nil && zm.Preprocessing() == nil) },
		"Model.Save/zero":           func() error { return errs(zm.Save(filepath.Join(dir, "m.dica"))) },
		"Model.Transform/nil model": func() error { return two(nm.Transform(mat.NewDense(1, 2, nil), TransformOptions{})) },
		"Model.Transform/zero":      func() error { return two(zm.Transform(mat.NewDense(1, 2, nil), TransformOptions{})) },
		"Model.Transform/nil x":     func() error { return two(good.Transform(nil, TransformOptions{})) },
		"Model.Transform/empty x":   func() error { return two(good.Transform(&mat.Dense{}, TransformOptions{})) },
		"Model.Transform/Positive raised": func() error {
			m := *good
			m.Positive = 50
			return two(m.Transform(ds.X, TransformOptions{}))
		},
		"Model.Transform/Eigenvalues cut": func() error {
			m := *good
			m.Eigenvalues = nil
			return two(m.Transform(ds.X, TransformOptions{}))
		},
		"Model.TransformStream/nil src": func() error { return errs(good.TransformStream(ctx, nil, 0, nil)) },
		"Model.TransformStream/zero":    func() error { return errs(zm.TransformStream(ctx, ds.Source(), 0, nil)) },
		"Model.UnmarshalBinary":         func() error { return errs(zm.UnmarshalBinary(nil)) },
		"Model.Classifier": func() error {
			return zero(nm.Classifier() == nil && zm.Classifier() == nil && good.Classifier() == nil)
		},
		"Model.SetClassifier/nil":    func() error { return errs(nm.SetClassifier(nil)) },
		"Model.SetClassifier/zero":   func() error { return errs(zm.SetClassifier(nil)) },
		"Model.SetClassifier/zero c": func() error { return errs(good.SetClassifier(&classify.Model{})) },
		"Model.Predict/nil": func() error {
			_, _, err := nm.Predict(mat.NewDense(1, 2, nil))
			return errs(err)
		},
		"Model.Predict/no classifier": func() error {
			_, _, err := good.Predict(ds.X)
			return zero(errors.Is(err, ErrNoClassifier))
		},
		"Model.PredictWith/zero":   func() error { return two(zm.PredictWith(mat.NewDense(1, 2, nil), PredictOptions{})) },
		"Model.PredictStream/nil":  func() error { return errs(nm.PredictStream(ctx, ds.Source(), PredictOptions{}, nil)) },
		"Model.PredictStream/zero": func() error { return errs(zm.PredictStream(ctx, nil, PredictOptions{}, nil)) },
		"Part.String":              func() error { return zero(strings.HasPrefix(Part{}.String(), "0 cells")) },
		"Plan.Save":                func() error { return errs(zp.Save(filepath.Join(dir, "p.plan"))) },
		"LoadPlanContext":          func() error { return two(LoadPlanContext(nil, filepath.Join(dir, "absent"), LoadOptions{})) },
		"LoadPlan":                 func() error { return two(LoadPlan(filepath.Join(dir, "absent"))) },
		"Plan.Accumulate/nil":      func() error { return two(np.Accumulate(ctx, ds.Source())) },
		"Plan.Accumulate/zero":     func() error { return two(zp.Accumulate(ctx, ds.Source())) },
		"Plan.Accumulate/nil src":  func() error { return two(plan.Accumulate(ctx, nil)) },
		"Plan.Fingerprint":         func() error { return zero(np.Fingerprint() == [32]byte{}) },
		"Plan.InputMap":            func() error { return zero(np.InputMap() == nil && zp.InputMap() == nil) },
		"Plan.SinglePrecision":     func() error { return zero(!np.SinglePrecision() && !zp.SinglePrecision()) },
		"Plan.MarshalBinary":       func() error { return two(zp.MarshalBinary()) },
		"Plan.NewStats/nil":        func() error { return errs(np.NewStats().AddBlock(&dataset.Block{Rows: 1}, nil, nil)) },
		"Plan.NewStats/zero":       func() error { return errs(zp.NewStats().AddBlock(&dataset.Block{Rows: 1}, nil, nil)) },
		"Plan.OutputMap":           func() error { return zero(np.OutputMap() == nil) },
		"Plan.UnmarshalBinary":     func() error { return errs(zp.UnmarshalBinary([]byte("DICAPLAN"))) },
		"Solver.String":            func() error { return zero(Solver(9).String() == "Solver(9)") },
		"Stats.AddBlock/nil block": func() error { return errs(plan.NewStats().AddBlock(nil, nil, nil)) },
		"Stats.AddBlock/short block": func() error {
			return errs(plan.NewStats().AddBlock(&dataset.Block{Rows: 10, D: 2, X: make([]float64, 4), Domain: []int{0}}, []string{"a"}, []string{"x"}))
		},
		"Stats.AddBlock/nil recv": func() error { return errs(ns.AddBlock(&dataset.Block{}, nil, nil)) },
		"Stats.ClassCounts":       func() error { return zero(len(ns.ClassCounts()) == 0 && len(zs.ClassCounts()) == 0) },
		"Stats.DomainCounts":      func() error { return zero(len(ns.DomainCounts()) == 0) },
		"Stats.HasGram":           func() error { return zero(!ns.HasGram() && !zs.HasGram()) },
		"Stats.JoinGram":          func() error { return errs(zs.JoinGram(nil)) },
		"Stats.MarshalBinary":     func() error { return errors.Join(two(zs.MarshalBinary()), two(ns.MarshalBinary())) },
		"Stats.Merge/nil":         func() error { return errs(zs.Merge(nil)) },
		"Stats.Merge/nil recv":    func() error { return errs(ns.Merge(st)) },
		"Stats.Merge/self":        func() error { return errs(st.Merge(st)) },
		"Stats.N":                 func() error { return zero(ns.N() == 0 && zs.N() == 0) },
		"Stats.DomainParts":       func() error { return zero(ns.DomainParts() == nil && zs.DomainParts() == nil) },
		"Stats.Parts":             func() error { return zero(ns.Parts() == nil) },
		"Stats.Plan":              func() error { return zero(ns.Plan() == nil) },
		"Stats.Save": func() error {
			return errors.Join(errs(zs.Save(filepath.Join(dir, "s"))), errs(ns.Save(filepath.Join(dir, "s"))))
		},
		"Stats.Solve":           func() error { return two(zs.Solve()) },
		"Stats.SolveWith":       func() error { return two(ns.SolveWith(Config{})) },
		"Stats.SplitGram":       func() error { return zero(ns.SplitGram(3) == nil && zs.SplitGram(-1) == nil) },
		"Stats.UnmarshalBinary": func() error { return errs(zs.UnmarshalBinary([]byte{1})) },
	}
	var names []string
	for name, call := range calls {
		names = append(names, name)
		if err := apitest.Call(call); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	want, err := apitest.ExportedFuncs(".")
	if err != nil {
		t.Fatal(err)
	}
	if missing := apitest.Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
}

// toyData returns a small labelled data set of 4 domains.
func toyData(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 40, Seed: 1})
	return ds
}
