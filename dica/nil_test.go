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
	// two checks the error of a call that returns a value and an error.
	two := func(_ any, err error) error { return apitest.WantErr(err, "") }
	calls := []apitest.Case{
		{Name: "Bytes", Call: func() error { return apitest.WantZero(Bytes(0) == "0 kB", nil) }},
		{Name: "EstimateMemory", Call: func() error { return apitest.WantZero(EstimateMemory(Config{}, Shape{}) > 0, nil) }},
		{Name: "Fit/nil ctx", Call: func() error { return two(Fit(nil, ds.Source(), Config{})) }},
		{Name: "Fit/nil src", Call: func() error { return two(Fit(ctx, nil, Config{})) }},
		{Name: "Fit/zero config", Call: func() error { return two(Fit(ctx, ds.Source(), Config{Method: -1})) }},
		{Name: "Family.Plan", Call: func() error { return apitest.WantZero((*Family)(nil).Plan() == nil && (&Family{}).Plan() == nil, nil) }},
		{Name: "Family.Solve", Call: func() error { return two((*Family)(nil).Solve(Config{})) }},
		{Name: "Family.Solve/zero", Call: func() error { return two((&Family{}).Solve(Config{Method: DICA})) }},
		{Name: "Family.Stats", Call: func() error {
			return apitest.WantZero((*Family)(nil).Stats(DICA) == nil && (&Family{}).Stats(KPCA) == nil, nil)
		}},
		{Name: "Family.Features", Call: func() error {
			return apitest.WantZero((*Family)(nil).Features() == nil && (&Family{}).Features() == nil, nil)
		}},
		{Name: "NewFamilyFeatures/nil ctx", Call: func() error { return two(NewFamilyFeatures(nil, ds.Source(), Config{Method: DICA})) }},
		{Name: "NewFamilyFeatures/nil src", Call: func() error { return two(NewFamilyFeatures(ctx, nil, Config{Method: DICA})) }},
		{Name: "NewFamilyFeatures/no config", Call: func() error { return two(NewFamilyFeatures(ctx, ds.Source())) }},
		{Name: "NewFamily/nil ctx", Call: func() error { return two(NewFamily(nil, ds.Source(), Config{Method: DICA})) }},
		{Name: "NewFamily/nil src", Call: func() error { return two(NewFamily(ctx, nil, Config{Method: DICA})) }},
		{Name: "NewFamily/no config", Call: func() error { return two(NewFamily(ctx, ds.Source())) }},
		{Name: "Model.ProjectRaw/nil", Call: func() error { return apitest.WantErr(nm.ProjectRaw(&mat.Dense{}, mat.NewDense(1, 1, nil)), "") }},
		{Name: "Model.ProjectRaw/zero", Call: func() error { return apitest.WantErr(zm.ProjectRaw(&mat.Dense{}, mat.NewDense(1, 1, nil)), "") }},
		{Name: "Model.ProjectRaw/nil f", Call: func() error { return apitest.WantErr(good.ProjectRaw(&mat.Dense{}, nil), "") }},
		{Name: "Plan.MapRaw/nil", Call: func() error { return apitest.WantErr(np.MapRaw(&mat.Dense{}, mat.NewDense(1, 2, nil)), "") }},
		{Name: "Plan.MapRaw/zero", Call: func() error { return apitest.WantErr(zp.MapRaw(&mat.Dense{}, mat.NewDense(1, 2, nil)), "") }},
		{Name: "Plan.MapRaw/nil dst", Call: func() error { return apitest.WantErr(plan.MapRaw(nil, ds.X), "") }},
		{Name: "NewProjector/none", Call: func() error { return two(NewProjector()) }},
		{Name: "NewProjector/zero", Call: func() error { return two(NewProjector(zm)) }},
		{Name: "Projector.Project/nil", Call: func() error { return apitest.WantErr((*Projector)(nil).Project(nil, mat.NewDense(1, 1, nil)), "") }},
		{Name: "Projector.Project/zero", Call: func() error { return apitest.WantErr((&Projector{}).Project(nil, mat.NewDense(1, 1, nil)), "") }},
		{Name: "Plan.RawDim", Call: func() error { return apitest.WantZero(np.RawDim() == 0 && zp.RawDim() == 0, nil) }},
		{Name: "FromExact/nil", Call: func() error { return two(FromExact(nil, nil, Config{})) }},
		{Name: "FromExact/zero", Call: func() error { return two(FromExact(&exact.Model{}, &dataset.Dataset{}, Config{})) }},
		{Name: "GramRows", Call: func() error { return apitest.WantZero(len(GramRows(0, 0)) == 2, nil) }},
		{Name: "Load", Call: func() error { return two(Load(filepath.Join(dir, "absent"))) }},
		{Name: "Load/dir", Call: func() error { return two(Load(dir)) }},
		{Name: "LoadStats", Call: func() error { return two(LoadStats("")) }},
		{Name: "LoadContext", Call: func() error { return two(LoadContext(nil, dir, LoadOptions{})) }},
		{Name: "LoadStatsContext", Call: func() error { return two(LoadStatsContext(ctx, "", LoadOptions{MaxMemory: -1})) }},
		{Name: "NewPlan/nil", Call: func() error { return two(NewPlan(ctx, nil, Config{})) }},
		{Name: "ParseLandmarks", Call: func() error { return two(ParseLandmarks("")) }},
		{Name: "ParseSolver", Call: func() error { return two(ParseSolver("")) }},
		{Name: "ParseMethod", Call: func() error { return two(ParseMethod("")) }},
		{Name: "ParseForm", Call: func() error { return two(ParseForm("")) }},
		{Name: "Config.MemoryBudget", Call: func() error { return apitest.WantZero(Config{MaxMemory: -1}.MemoryBudget() == 0, nil) }},
		{Name: "Config.NeedsSample", Call: func() error { Config{}.NeedsSample(dataset.Schema{}); return nil }},
		{Name: "Config.WithDefaults", Call: func() error { return apitest.WantZero(Config{}.WithDefaults().Seed == DefaultSeed, nil) }},
		{Name: "Config.Bandwidths", Call: func() error { s, sy := Config{}.Bandwidths(); return apitest.WantZero(s == 0 && sy == 0, nil) }},
		{Name: "DomainPart.String", Call: func() error {
			return apitest.WantZero(strings.HasPrefix(DomainPart{}.String(), `domain "" (0 cells`), nil)
		}},
		{Name: "LegacyError.Error", Call: func() error {
			return apitest.WantZero((*LegacyError)(nil).Error() != "" && (&LegacyError{}).Error() != "", nil)
		}},
		{Name: "OverlapError.Error", Call: func() error {
			return apitest.WantZero((*OverlapError)(nil).Error() != "" && (&OverlapError{}).Error() != "", nil)
		}},
		{Name: "DuplicateError.Error", Call: func() error {
			return apitest.WantZero((&DuplicateError{}).Error() != "" && (*DuplicateError)(nil).Error() != "", nil)
		}},
		{Name: "MemoryError.Error", Call: func() error {
			return apitest.WantZero((&MemoryError{}).Error() != "" && (*MemoryError)(nil).Error() != "", nil)
		}},
		{Name: "GramPart.Add/nil", Call: func() error { return apitest.WantErr(zg.Add(nil), "") }},
		{Name: "GramPart.Add/nil recv", Call: func() error { return apitest.WantErr(ng.Add(zg), "") }},
		{Name: "GramPart.MarshalBinary", Call: func() error { return two(ng.MarshalBinary()) }},
		{Name: "GramPart.UnmarshalBinary", Call: func() error { return apitest.WantErr(zg.UnmarshalBinary(nil), "") }},
		{Name: "Landmarks.String", Call: func() error { return apitest.WantZero(Landmarks(-1).String() == "Landmarks(-1)", nil) }},
		{Name: "Model.Components", Call: func() error { return apitest.WantZero(nm.Components() == 0 && zm.Components() == 0, nil) }},
		{Name: "Model.Config", Call: func() error { return apitest.WantZero(nm.Config().Rank == 0 && zm.Config().Rank == 0, nil) }},
		{Name: "Model.Inputs", Call: func() error { return apitest.WantZero(nm.Inputs() == nil && zm.Inputs() == nil, nil) }},
		{Name: "Model.Map", Call: func() error { return apitest.WantZero(nm.Map() == nil && zm.Map() == nil, nil) }},
		{Name: "Model.MarshalBinary/nil", Call: func() error { return two(nm.MarshalBinary()) }},
		{Name: "Model.MarshalBinary/zero", Call: func() error { return two(zm.MarshalBinary()) }},
		{Name: "Model.Null", Call: func() error { return apitest.WantZero(nm.Null() == 0 && zm.Null() == 0, nil) }},
		{Name: "Model.Preprocessing", Call: func() error { return apitest.WantZero(nm.Preprocessing() == nil && zm.Preprocessing() == nil, nil) }},
		{Name: "Model.Save/zero", Call: func() error { return apitest.WantErr(zm.Save(filepath.Join(dir, "m.dica")), "") }},
		{Name: "Model.Transform/nil model", Call: func() error { return two(nm.Transform(mat.NewDense(1, 2, nil), TransformOptions{})) }},
		{Name: "Model.Transform/zero", Call: func() error { return two(zm.Transform(mat.NewDense(1, 2, nil), TransformOptions{})) }},
		{Name: "Model.Transform/nil x", Call: func() error { return two(good.Transform(nil, TransformOptions{})) }},
		{Name: "Model.Transform/empty x", Call: func() error { return two(good.Transform(&mat.Dense{}, TransformOptions{})) }},
		{Name: "Model.Transform/Positive raised", Call: func() error {
			m := *good
			m.Positive = 50
			return two(m.Transform(ds.X, TransformOptions{}))
		}},
		{Name: "Model.Transform/Eigenvalues cut", Call: func() error {
			m := *good
			m.Eigenvalues = nil
			return two(m.Transform(ds.X, TransformOptions{}))
		}},
		{Name: "Model.TransformStream/nil src", Call: func() error { return apitest.WantErr(good.TransformStream(ctx, nil, 0, nil), "") }},
		{Name: "Model.TransformStream/zero", Call: func() error { return apitest.WantErr(zm.TransformStream(ctx, ds.Source(), 0, nil), "") }},
		{Name: "Model.UnmarshalBinary", Call: func() error { return apitest.WantErr(zm.UnmarshalBinary(nil), "") }},
		{Name: "Model.Classifier", Call: func() error {
			return apitest.WantZero(nm.Classifier() == nil && zm.Classifier() == nil && good.Classifier() == nil, nil)
		}},
		{Name: "Model.SetClassifier/nil", Call: func() error { return apitest.WantErr(nm.SetClassifier(nil), "") }},
		{Name: "Model.SetClassifier/zero", Call: func() error { return apitest.WantErr(zm.SetClassifier(nil), "") }},
		{Name: "Model.SetClassifier/zero c", Call: func() error { return apitest.WantErr(good.SetClassifier(&classify.Model{}), "") }},
		{Name: "Model.Predict/nil", Call: func() error {
			_, _, err := nm.Predict(mat.NewDense(1, 2, nil))
			return apitest.WantErr(err, "")
		}},
		{Name: "Model.Predict/no classifier", Call: func() error {
			_, _, err := good.Predict(ds.X)
			return apitest.WantZero(errors.Is(err, ErrNoClassifier), nil)
		}},
		{Name: "Model.PredictWith/zero", Call: func() error { return two(zm.PredictWith(mat.NewDense(1, 2, nil), PredictOptions{})) }},
		{Name: "Model.PredictStream/nil", Call: func() error { return apitest.WantErr(nm.PredictStream(ctx, ds.Source(), PredictOptions{}, nil), "") }},
		{Name: "Model.PredictStream/zero", Call: func() error { return apitest.WantErr(zm.PredictStream(ctx, nil, PredictOptions{}, nil), "") }},
		{Name: "Part.String", Call: func() error { return apitest.WantZero(strings.HasPrefix(Part{}.String(), "0 cells"), nil) }},
		{Name: "Plan.Save", Call: func() error { return apitest.WantErr(zp.Save(filepath.Join(dir, "p.plan")), "") }},
		{Name: "LoadPlanContext", Call: func() error { return two(LoadPlanContext(nil, filepath.Join(dir, "absent"), LoadOptions{})) }},
		{Name: "LoadPlan", Call: func() error { return two(LoadPlan(filepath.Join(dir, "absent"))) }},
		{Name: "Plan.Accumulate/nil", Call: func() error { return two(np.Accumulate(ctx, ds.Source())) }},
		{Name: "Plan.Accumulate/zero", Call: func() error { return two(zp.Accumulate(ctx, ds.Source())) }},
		{Name: "Plan.Accumulate/nil src", Call: func() error { return two(plan.Accumulate(ctx, nil)) }},
		{Name: "Plan.Fingerprint", Call: func() error { return apitest.WantZero(np.Fingerprint() == [32]byte{}, nil) }},
		{Name: "Plan.InputMap", Call: func() error { return apitest.WantZero(np.InputMap() == nil && zp.InputMap() == nil, nil) }},
		{Name: "Plan.SinglePrecision", Call: func() error { return apitest.WantZero(!np.SinglePrecision() && !zp.SinglePrecision(), nil) }},
		{Name: "Plan.MarshalBinary", Call: func() error { return two(zp.MarshalBinary()) }},
		{Name: "Plan.NewStats/nil", Call: func() error { return apitest.WantErr(np.NewStats().AddBlock(&dataset.Block{Rows: 1}, nil, nil), "") }},
		{Name: "Plan.NewStats/zero", Call: func() error { return apitest.WantErr(zp.NewStats().AddBlock(&dataset.Block{Rows: 1}, nil, nil), "") }},
		{Name: "Plan.OutputMap", Call: func() error { return apitest.WantZero(np.OutputMap() == nil, nil) }},
		{Name: "Plan.UnmarshalBinary", Call: func() error { return apitest.WantErr(zp.UnmarshalBinary([]byte("DICAPLAN")), "") }},
		{Name: "Solver.String", Call: func() error { return apitest.WantZero(Solver(9).String() == "Solver(9)", nil) }},
		{Name: "Stats.AddBlock/nil block", Call: func() error { return apitest.WantErr(plan.NewStats().AddBlock(nil, nil, nil), "") }},
		{Name: "Stats.AddBlock/short block", Call: func() error {
			return apitest.WantErr(plan.NewStats().AddBlock(&dataset.Block{Rows: 10, D: 2, X: make([]float64, 4), Domain: []int{0}}, []string{"a"}, []string{"x"}), "")
		}},
		{Name: "Stats.AddBlock/nil recv", Call: func() error { return apitest.WantErr(ns.AddBlock(&dataset.Block{}, nil, nil), "") }},
		{Name: "Stats.ClassCounts", Call: func() error { return apitest.WantZero(len(ns.ClassCounts()) == 0 && len(zs.ClassCounts()) == 0, nil) }},
		{Name: "Stats.DomainCounts", Call: func() error { return apitest.WantZero(len(ns.DomainCounts()) == 0, nil) }},
		{Name: "Stats.HasGram", Call: func() error { return apitest.WantZero(!ns.HasGram() && !zs.HasGram(), nil) }},
		{Name: "Stats.JoinGram", Call: func() error { return apitest.WantErr(zs.JoinGram(nil), "") }},
		{Name: "Stats.MarshalBinary", Call: func() error { return errors.Join(two(zs.MarshalBinary()), two(ns.MarshalBinary())) }},
		{Name: "Stats.Merge/nil", Call: func() error { return apitest.WantErr(zs.Merge(nil), "") }},
		{Name: "Stats.Merge/nil recv", Call: func() error { return apitest.WantErr(ns.Merge(st), "") }},
		{Name: "Stats.Merge/self", Call: func() error { return apitest.WantErr(st.Merge(st), "") }},
		{Name: "Stats.N", Call: func() error { return apitest.WantZero(ns.N() == 0 && zs.N() == 0, nil) }},
		{Name: "Stats.DomainParts", Call: func() error { return apitest.WantZero(ns.DomainParts() == nil && zs.DomainParts() == nil, nil) }},
		{Name: "Stats.Parts", Call: func() error { return apitest.WantZero(ns.Parts() == nil, nil) }},
		{Name: "Stats.Plan", Call: func() error { return apitest.WantZero(ns.Plan() == nil, nil) }},
		{Name: "Stats.Save", Call: func() error {
			return errors.Join(apitest.WantErr(zs.Save(filepath.Join(dir, "s")), ""), apitest.WantErr(ns.Save(filepath.Join(dir, "s")), ""))
		}},
		{Name: "Stats.Solve", Call: func() error { return two(zs.Solve()) }},
		{Name: "Stats.SolveWith", Call: func() error { return two(ns.SolveWith(Config{})) }},
		{Name: "Stats.SplitGram", Call: func() error { return apitest.WantZero(ns.SplitGram(3) == nil && zs.SplitGram(-1) == nil, nil) }},
		{Name: "Stats.UnmarshalBinary", Call: func() error { return apitest.WantErr(zs.UnmarshalBinary([]byte{1}), "") }},
	}
	apitest.Check(t, ".", calls, 70)
}

// toyData returns a small labelled data set of 4 domains.
func toyData(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 40, Seed: 1})
	return ds
}
