package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// nilCall is one call of an exported function or method with nil, zero or
// negative arguments. It returns an error describing a wrong result (nil
// when the result is an error, or the documented result).
type nilCall struct {
	name string // "Func" or "Type.Method", then "/variant"
	call func() error
}

func wantErr(err error, want string) error {
	if err == nil {
		return fmt.Errorf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q, want %q", err, want)
	}
	return nil
}

func wantZero(ok bool, got any) error {
	if !ok {
		return fmt.Errorf("got %v, want the documented result", got)
	}
	return nil
}

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
	calls := []nilCall{
		{"DomainIndices/nil", func() error { _, err := DomainIndices(nds, []string{"a"}); return wantErr(err, "eval: nil data set") }},
		{"DomainIndices/nil names", func() error { g, err := DomainIndices(ds, nil); return wantZero(err == nil && len(g) == 0, g) }},
		{"DomainIndices/zero", func() error {
			_, err := DomainIndices(&dataset.Dataset{}, []string{"a"})
			return wantErr(err, `eval: unknown domain "a"`)
		}},
		{"EstimateMemory/nil", func() error {
			n, step := EstimateMemory(nil, Options{})
			return wantZero(n == 0 && step == "nothing", n)
		}},
		{"EstimateMemory/zero", func() error { EstimateMemory(&dataset.Dataset{}, Options{}); return nil }},
		{"Evaluate/nil", func() error { _, err := Evaluate(ctx, nil, nil, Options{}); return wantErr(err, "eval: nil data set") }},
		{"Evaluate/zero", func() error {
			_, err := Evaluate(ctx, &dataset.Dataset{}, nil, Options{})
			return wantErr(err, "eval:")
		}},
		{"Evaluate/no splits", func() error { _, err := Evaluate(ctx, ds, nil, smallOptions()); return wantErr(err, "eval:") }},
		{"Evaluate/nil context", func() error {
			_, err := Evaluate(nilCtx, ds, []Split{{Train: []int{0, 1}, Test: []int{2}}}, smallOptions())
			return wantErr(err, "eval:")
		}},
		{"LeaveOneDomainOutSplits/nil", func() error { _, err := LeaveOneDomainOutSplits(nil); return wantErr(err, "eval: nil data set") }},
		{"LeaveOneDomainOutSplits/zero", func() error {
			_, err := LeaveOneDomainOutSplits(&dataset.Dataset{})
			return wantErr(err, "needs at least 2")
		}},
		{"LeaveOneDomainOut/nil", func() error {
			_, err := LeaveOneDomainOut(ctx, nil, Options{})
			return wantErr(err, "eval: nil data set")
		}},
		{"LeaveOneDomainOut/zero", func() error {
			_, err := LeaveOneDomainOut(ctx, &dataset.Dataset{}, Options{})
			return wantErr(err, "eval:")
		}},
		{"Learner.Setting/negative", func() error { return wantZero(Learner(-1).Setting() == "Learner(-1)", nil) }},
		{"Learner.String/negative", func() error { return wantZero(Learner(-1).String() == "Learner(-1)", nil) }},
		{"MemoryError.Error/nil", func() error { return wantZero(nme.Error() != "", nil) }},
		{"MemoryError.Error/zero", func() error { return wantZero((&MemoryError{}).Error() != "", nil) }},
		{"Methods", func() error { return wantZero(len(Methods()) == 5, Methods()) }},
		{"ParamString/zero", func() error { ParamString("", Params{}, false); return nil }},
		{"ParseLearner/empty", func() error { _, err := ParseLearner(""); return wantErr(err, "eval: unknown learner") }},
		{"ParseRegressionSolver/empty", func() error {
			_, err := ParseRegressionSolver("")
			return wantErr(err, "eval: unknown regression solver")
		}},
		{"RandomSplits/nil", func() error { _, err := RandomSplits(nil, 1, 1, 0); return wantErr(err, "eval: nil data set") }},
		{"RandomSplits/negative", func() error { _, err := RandomSplits(ds, -1, -1, 0); return wantErr(err, "eval:") }},
		{"RegressionSolver.String/negative", func() error { return wantZero(RegressionSolver(-1).String() == "RegressionSolver(-1)", nil) }},
		{"Run/nil", func() error { _, err := Run(ctx, nil, nil, nil, Options{}); return wantErr(err, "eval: nil data set") }},
		{"Run/no domains", func() error { _, err := Run(ctx, ds, nil, nil, smallOptions()); return wantErr(err, "eval:") }},
		{"Run/negative domain", func() error {
			_, err := Run(ctx, ds, []int{-1}, []int{1}, smallOptions())
			return wantErr(err, "eval:")
		}},
		{"Choice.Config/zero", func() error { _, err := (Choice{}).Config(Options{}); return wantErr(err, "eval:") }},
		{"Choose/nil", func() error { _, err := Choose(ctx, nil, nil, Options{}); return wantErr(err, "eval: nil data set") }},
		{"Choose/nil context", func() error { _, err := Choose(nilCtx, ds, []int{0, 1}, smallOptions()); return wantErr(err, "eval:") }},
		{"Choose/no training", func() error { _, err := Choose(ctx, ds, nil, smallOptions()); return wantErr(err, "eval:") }},
		{"ChooseReference/nil", func() error { _, _, err := ChooseReference(ctx, nil); return wantErr(err, "eval: nil data set") }},
		{"ChooseReference/zero", func() error { _, _, err := ChooseReference(ctx, &dataset.Dataset{}); return wantErr(err, "eval:") }},
		{"FMeasure/nil", func() error { f := FMeasure(nil, -1); return wantZero(f == 0 || math.IsNaN(f), f) }},
		{"FMeasure/bad column", func() error {
			err := apitest.Call(func() error { FMeasure(nil, 3); return nil })
			return wantZero(err != nil && strings.Contains(err.Error(), "unassigned column 3"), err)
		}},
		{"Final.Classifier/nil", func() error { var f *Final; _, err := f.Classifier(ctx); return wantErr(err, "eval: empty Final") }},
		{"Final.Classifier/zero", func() error { _, err := (&Final{}).Classifier(ctx); return wantErr(err, "eval: empty Final") }},
		{"Final.Predict/nil", func() error { var f *Final; _, err := f.Predict(nil); return wantErr(err, "eval: empty Final") }},
		{"Final.Predict/zero", func() error { _, err := (&Final{}).Predict(nil); return wantErr(err, "eval: empty Final") }},
		{"FitsTransductively/empty", func() error { return wantZero(!FitsTransductively("", false), true) }},
		{"ReferenceDistances/nil", func() error { _, err := ReferenceDistances(ctx, nil); return wantErr(err, "eval: nil data set") }},
		{"ReferenceDistances/zero", func() error { _, err := ReferenceDistances(ctx, &dataset.Dataset{}); return wantErr(err, "eval:") }},
		{"ReferenceDistances/nil context", func() error { _, err := ReferenceDistances(nilCtx, ds); return wantErr(err, "eval:") }},
		{"ReferenceSplit/nil", func() error { _, err := ReferenceSplit(nil, 0); return wantErr(err, "eval: nil data set") }},
		{"ReferenceSplit/negative", func() error { _, err := ReferenceSplit(ds, -1); return wantErr(err, "out of range") }},
		{"TrainFinal/nil", func() error { _, err := TrainFinal(ctx, nil, nil, Choice{}, Options{}); return wantErr(err, "eval:") }},
		{"TrainFinal/zero choice", func() error {
			_, err := TrainFinal(ctx, ds, []int{0, 1}, Choice{}, smallOptions())
			return wantErr(err, "eval:")
		}},
		{"TrainFinal/nil context", func() error {
			_, err := TrainFinal(nilCtx, ds, []int{0, 1}, Choice{Method: "dica"}, smallOptions())
			return wantErr(err, "eval:")
		}},
		{"TrainOn/nil", func() error { _, err := TrainOn(ctx, nil, nil, nil, Choice{}, Options{}); return wantErr(err, "eval:") }},
		{"TrainOn/zero choice", func() error {
			_, err := TrainOn(ctx, ds, []int{0}, nil, Choice{}, smallOptions())
			return wantErr(err, "eval:")
		}},
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.name)
		if err := apitest.Call(c.call); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	want, err := apitest.ExportedFuncs(".")
	if err != nil {
		t.Fatal(err)
	}
	if missing := apitest.Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
	if len(want) < 15 {
		t.Errorf("only %d exported names found", len(want))
	}
}
