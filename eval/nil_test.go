package eval

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// TestNilAndZero calls every exported function and method of the package
// with nil data sets, zero values and negative counts: each returns an
// error or its documented result, and none panics. The list of calls is
// checked against the package's exported names.
func TestNilAndZero(t *testing.T) {
	ctx := context.Background()
	var (
		nilCtx context.Context
		nds    *dataset.Dataset
		nme    *MemoryError
	)
	ds := shifted(3, 1)
	calls := []apitest.Case{
		{Name: "DomainIndices/nil", Call: func() error {
			_, err := DomainIndices(nds, []string{"a"})
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "DomainIndices/nil names", Call: func() error { g, err := DomainIndices(ds, nil); return apitest.WantZero(err == nil && len(g) == 0, g) }},
		{Name: "DomainIndices/zero", Call: func() error {
			_, err := DomainIndices(&dataset.Dataset{}, []string{"a"})
			return apitest.WantErr(err, `eval: unknown domain "a"`)
		}},
		{Name: "EstimateMemory/nil", Call: func() error {
			n, step := EstimateMemory(nil, Options{})
			return apitest.WantZero(n == 0 && step == "nothing", n)
		}},
		{Name: "EstimateMemory/zero", Call: func() error { EstimateMemory(&dataset.Dataset{}, Options{}); return nil }},
		{Name: "Evaluate/nil", Call: func() error {
			_, err := Evaluate(ctx, nil, nil, Options{})
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "Evaluate/zero", Call: func() error {
			_, err := Evaluate(ctx, &dataset.Dataset{}, nil, Options{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "Evaluate/no splits", Call: func() error { _, err := Evaluate(ctx, ds, nil, smallOptions()); return apitest.WantErr(err, "eval:") }},
		{Name: "Evaluate/nil context", Call: func() error {
			_, err := Evaluate(nilCtx, ds, []Split{{Train: []int{0, 1}, Test: []int{2}}}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "LeaveOneDomainOutSplits/nil", Call: func() error {
			_, err := LeaveOneDomainOutSplits(nil)
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "LeaveOneDomainOutSplits/zero", Call: func() error {
			_, err := LeaveOneDomainOutSplits(&dataset.Dataset{})
			return apitest.WantErr(err, "needs at least 2")
		}},
		{Name: "LeaveOneDomainOut/nil", Call: func() error {
			_, err := LeaveOneDomainOut(ctx, nil, Options{})
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "LeaveOneDomainOut/zero", Call: func() error {
			_, err := LeaveOneDomainOut(ctx, &dataset.Dataset{}, Options{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "Learner.Setting/negative", Call: func() error { return apitest.WantZero(Learner(-1).Setting() == "Learner(-1)", nil) }},
		{Name: "Learner.String/negative", Call: func() error { return apitest.WantZero(Learner(-1).String() == "Learner(-1)", nil) }},
		{Name: "MemoryError.Error/nil", Call: func() error { return apitest.WantZero(nme.Error() != "", nil) }},
		{Name: "MemoryError.Error/zero", Call: func() error { return apitest.WantZero((&MemoryError{}).Error() != "", nil) }},
		{Name: "Methods", Call: func() error { return apitest.WantZero(len(Methods()) == 5, Methods()) }},
		{Name: "ParamString/zero", Call: func() error { ParamString("", Params{}, false); return nil }},
		{Name: "ParseLearner/empty", Call: func() error { _, err := ParseLearner(""); return apitest.WantErr(err, "eval: unknown learner") }},
		{Name: "ParseRegressionSolver/empty", Call: func() error {
			_, err := ParseRegressionSolver("")
			return apitest.WantErr(err, "eval: unknown regression solver")
		}},
		{Name: "RandomSplits/nil", Call: func() error { _, err := RandomSplits(nil, 1, 1, 0); return apitest.WantErr(err, "eval: nil data set") }},
		{Name: "RandomSplits/negative", Call: func() error { _, err := RandomSplits(ds, -1, -1, 0); return apitest.WantErr(err, "eval:") }},
		{Name: "RegressionSolver.String/negative", Call: func() error { return apitest.WantZero(RegressionSolver(-1).String() == "RegressionSolver(-1)", nil) }},
		{Name: "Run/nil", Call: func() error {
			_, err := Run(ctx, nil, nil, nil, Options{})
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "Run/no domains", Call: func() error { _, err := Run(ctx, ds, nil, nil, smallOptions()); return apitest.WantErr(err, "eval:") }},
		{Name: "Run/negative domain", Call: func() error {
			_, err := Run(ctx, ds, []int{-1}, []int{1}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "Choice.Config/zero", Call: func() error { _, err := (Choice{}).Config(Options{}); return apitest.WantErr(err, "eval:") }},
		{Name: "Choose/nil", Call: func() error {
			_, err := Choose(ctx, nil, nil, Options{})
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "Choose/nil context", Call: func() error {
			_, err := Choose(nilCtx, ds, []int{0, 1}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "Choose/no training", Call: func() error { _, err := Choose(ctx, ds, nil, smallOptions()); return apitest.WantErr(err, "eval:") }},
		{Name: "ChooseReference/nil", Call: func() error {
			_, _, err := ChooseReference(ctx, nil)
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "ChooseReference/zero", Call: func() error {
			_, _, err := ChooseReference(ctx, &dataset.Dataset{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "FMeasure/nil", Call: func() error { f := FMeasure(nil, -1); return apitest.WantZero(f == 0 || math.IsNaN(f), f) }},
		{Name: "FMeasure/bad column", Call: func() error {
			err := apitest.Call(func() error { FMeasure(nil, 3); return nil })
			return apitest.WantZero(err != nil && strings.Contains(err.Error(), "unassigned column 3"), err)
		}},
		{Name: "Final.Classifier/nil", Call: func() error {
			var f *Final
			_, err := f.Classifier(ctx)
			return apitest.WantErr(err, "eval: empty Final")
		}},
		{Name: "Final.Classifier/zero", Call: func() error { _, err := (&Final{}).Classifier(ctx); return apitest.WantErr(err, "eval: empty Final") }},
		{Name: "Final.Predict/nil", Call: func() error { var f *Final; _, err := f.Predict(nil); return apitest.WantErr(err, "eval: empty Final") }},
		{Name: "Final.Predict/zero", Call: func() error { _, err := (&Final{}).Predict(nil); return apitest.WantErr(err, "eval: empty Final") }},
		{Name: "FitsTransductively/empty", Call: func() error { return apitest.WantZero(!FitsTransductively("", false), true) }},
		{Name: "ReferenceDistances/nil", Call: func() error {
			_, err := ReferenceDistances(ctx, nil)
			return apitest.WantErr(err, "eval: nil data set")
		}},
		{Name: "ReferenceDistances/zero", Call: func() error {
			_, err := ReferenceDistances(ctx, &dataset.Dataset{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "ReferenceDistances/nil context", Call: func() error { _, err := ReferenceDistances(nilCtx, ds); return apitest.WantErr(err, "eval:") }},
		{Name: "ReferenceSplit/nil", Call: func() error { _, err := ReferenceSplit(nil, 0); return apitest.WantErr(err, "eval: nil data set") }},
		{Name: "ReferenceSplit/negative", Call: func() error { _, err := ReferenceSplit(ds, -1); return apitest.WantErr(err, "out of range") }},
		{Name: "TrainFinal/nil", Call: func() error {
			_, err := TrainFinal(ctx, nil, nil, Choice{}, Options{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "TrainFinal/zero choice", Call: func() error {
			_, err := TrainFinal(ctx, ds, []int{0, 1}, Choice{}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "TrainFinal/nil context", Call: func() error {
			_, err := TrainFinal(nilCtx, ds, []int{0, 1}, Choice{Method: "dica"}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "TrainOn/nil", Call: func() error {
			_, err := TrainOn(ctx, nil, nil, nil, Choice{}, Options{})
			return apitest.WantErr(err, "eval:")
		}},
		{Name: "TrainOn/zero choice", Call: func() error {
			_, err := TrainOn(ctx, ds, []int{0}, nil, Choice{}, smallOptions())
			return apitest.WantErr(err, "eval:")
		}},
	}
	apitest.Check(t, ".", calls, 15)
}
