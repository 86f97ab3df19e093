package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/apitest"
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
		{"FormatBytes/negative", func() error { return wantZero(FormatBytes(-5) == "-5 B", FormatBytes(-5)) }},
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
