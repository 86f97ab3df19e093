package preprocess

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// nilCall is one call of an exported function or method with nil, zero or
// empty arguments. It returns an error describing a wrong result (nil when
// the result is an error, or the documented zero result).
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

// unchanged applies t to the block {1, -2, 3, 4} of 2 columns and checks
// that it is left as it is.
func unchanged(t Transform) error {
	x := []float64{1, -2, 3, 4}
	t.Apply(x, 2)
	return wantZero(slices.Equal(x, []float64{1, -2, 3, 4}), x)
}

// TestNilAndZero calls every exported function and method of the package
// with nil pointers, nil slices and zero values: each returns an error or
// its documented result, and none panics (the Transform's Apply methods
// panic only on a block that is not a whole number of rows, as gonum does
// for shapes, which TestChannelsPanics checks). The list of calls is
// checked against the package's exported names.
func TestNilAndZero(t *testing.T) {
	var (
		nc *Compensation
		np *Pipeline
		nd *mat.Dense
	)
	calls := []nilCall{
		{"Asinh.Eval/zero", func() error { return wantZero(math.IsInf(Asinh{}.Eval(1), 1), Asinh{}.Eval(1)) }},
		{"Asinh.String/zero", func() error { return wantZero(Asinh{}.String() == "asinh:0", Asinh{}.String()) }},
		{"Chain.Apply/nil", func() error { return unchanged(Chain(nil)) }},
		{"Chain.Apply/nil element", func() error { return unchanged(Chain{nil, Channels{}}) }},
		{"Channels.Apply/zero", func() error { return unchanged(Channels{}) }},
		{"Compensation.Apply/nil", func() error { return unchanged(nc) }},
		{"Compensation.Apply/zero", func() error { return unchanged(&Compensation{}) }},
		{"Compensation.Columns/nil", func() error { return wantZero(nc.Columns() == nil, nc.Columns()) }},
		{"Compensation.Columns/zero", func() error { return wantZero(len((&Compensation{}).Columns()) == 0, nil) }},
		{"Identity.Eval/zero", func() error { return wantZero(Identity{}.Eval(-3) == -3, nil) }},
		{"Identity.String/zero", func() error { return wantZero(Identity{}.String() == "none", nil) }},
		{"Log1pAbs.Eval/zero", func() error { return wantZero(Log1pAbs{}.Eval(0) == 0, nil) }},
		{"Log1pAbs.String/zero", func() error { return wantZero(Log1pAbs{}.String() == "log1p", nil) }},
		{"NewCompensation/nil", func() error {
			_, err := NewCompensation(nil, nil, nil)
			return wantErr(err, "preprocess: nil spillover matrix")
		}},
		{"NewCompensation/nil Dense", func() error {
			_, err := NewCompensation(nd, []string{"a"}, []string{"a"})
			return wantErr(err, "nil spillover matrix")
		}},
		{"NewCompensation/zero Dense", func() error {
			_, err := NewCompensation(&mat.Dense{}, nil, nil)
			return wantErr(err, "preprocess: empty spillover matrix")
		}},
		{"NewCompensation/no names", func() error {
			_, err := NewCompensation(mat.NewDense(1, 1, []float64{1}), nil, nil)
			return wantErr(err, "spillover matrix is 1x1 for 0 channel names")
		}},
		{"NewCompensation/no columns", func() error {
			_, err := NewCompensation(mat.NewDense(1, 1, []float64{1}), []string{"A"}, nil)
			return wantErr(err, `spillover channel "A" not found among the columns`)
		}},
		{"ParseFunc/empty", func() error { _, err := ParseFunc(""); return wantErr(err, `unknown transform ""`) }},
		{"ParseFunc/zero cofactor", func() error {
			_, err := ParseFunc("asinh:0")
			return wantErr(err, "cofactor must be a finite number > 0")
		}},
		{"Pipeline.Apply/nil", func() error { return np.Apply([]float64{1}, 1) }},
		{"Pipeline.Apply/zero", func() error { return wantErr((&Pipeline{}).Apply(nil, 0), "block of 0 values for 0 channels") }},
		{"Pipeline.Apply/zero compensation", func() error {
			p := &Pipeline{Channels: []Channel{{Name: "A"}}, Compensation: &Spill{}}
			return wantErr(p.Apply([]float64{1}, 1), "spillover matrix of 0 values for 0 channels")
		}},
		{"Pipeline.Apply/short matrix", func() error {
			p := &Pipeline{Channels: []Channel{{Name: "A"}}, Compensation: &Spill{Channels: []string{"A"}, Matrix: []float64{1, 0}}}
			return wantErr(p.Apply([]float64{1}, 1), "spillover matrix of 2 values for 1 channels")
		}},
		{"Pipeline.Check/nil", func() error { return np.Check() }},
		{"Pipeline.Check/zero", func() error { return (&Pipeline{}).Check() }},
		{"Pipeline.Check/zero compensation", func() error {
			return wantErr((&Pipeline{Compensation: &Spill{}}).Check(), "spillover matrix of 0 values")
		}},
		{"Pipeline.Func/nil", func() error { f, err := np.Func(); return wantZero(err == nil && f == Identity{}, f) }},
		{"Pipeline.Func/zero", func() error { f, err := (&Pipeline{}).Func(); return wantZero(err == nil && f == Identity{}, f) }},
		{"Pipeline.Names/nil", func() error { return wantZero(np.Names() == nil, np.Names()) }},
		{"Pipeline.Names/zero", func() error { return wantZero(len((&Pipeline{}).Names()) == 0, nil) }},
		{"Pipeline.String/nil", func() error { return wantZero(np.String() == "not recorded", np.String()) }},
		{"Pipeline.String/zero", func() error {
			s := (&Pipeline{}).String()
			return wantZero(s == "0 channels ; no transform", s)
		}},
		{"Pipeline.TransformSpec/nil", func() error { return wantZero(np.TransformSpec() == "none", nil) }},
		{"Pipeline.TransformSpec/zero", func() error { return wantZero((&Pipeline{}).TransformSpec() == "none", nil) }},
		{"Compiled.Apply/nil", func() error { var c *Compiled; c.Apply([]float64{1}, 1); return nil }},
		{"Compiled.Apply/zero", func() error { (&Compiled{}).Apply([]float64{1}, 1); return nil }},
		{"Compiled.Identity/nil", func() error { var c *Compiled; return wantZero(c.Identity(), false) }},
		{"Compiled.Row/nil", func() error { var c *Compiled; return wantZero(c.Row() == nil, "a function") }},
		{"Pipeline.Compile/nil", func() error { c, err := np.Compile(); return wantZero(err == nil && c.Identity(), err) }},
		{"Pipeline.Compile/zero", func() error { c, err := (&Pipeline{}).Compile(); return wantZero(err == nil && c.Identity(), err) }},
		{"Pipeline.Compile/zero compensation", func() error {
			_, err := (&Pipeline{Compensation: &Spill{}}).Compile()
			return wantErr(err, "spillover matrix of 0 values")
		}},
		{"Pipeline.Equal/nil", func() error { return wantZero(np.Equal(nil) && !np.Equal(&Pipeline{}), false) }},
		{"Pipeline.Equal/zero", func() error { return wantZero((&Pipeline{}).Equal(&Pipeline{}) && !(&Pipeline{}).Equal(nil), false) }},
		{"Pipeline.Identical/nil", func() error { return wantZero(np.Identical(nil) && !np.Identical(&Pipeline{}), false) }},
		{"Pipeline.Identical/zero", func() error { return wantZero((&Pipeline{}).Identical(&Pipeline{}), false) }},
		{"Pipeline.MarshalJSON/nil", func() error {
			b, err := np.MarshalJSON()
			return wantZero(err == nil && string(b) == "null", string(b))
		}},
		{"Pipeline.MarshalJSON/zero", func() error { _, err := (&Pipeline{}).MarshalJSON(); return err }},
		{"Pipeline.Remaining/nil", func() error { q, err := np.Remaining(nil); return wantZero(err == nil && q == nil, q) }},
		{"Pipeline.Remaining/zero", func() error { _, err := (&Pipeline{}).Remaining(nil); return err }},
		{"Pipeline.Select/nil", func() error { q, err := np.Select(nil); return wantZero(err == nil && q == nil, q) }},
		{"Pipeline.Select/zero", func() error { _, err := (&Pipeline{}).Select([]string{"A"}); return wantErr(err, `"A"`) }},
		{"Pipeline.Steps/nil", func() error { return wantZero(np.Steps() == nil, np.Steps()) }},
		{"Pipeline.Steps/zero", func() error { return wantZero(len((&Pipeline{}).Steps()) == 0, (&Pipeline{}).Steps()) }},
		{"Pipeline.UnmarshalJSON/nil", func() error { return wantErr(np.UnmarshalJSON([]byte("{}")), "nil Pipeline") }},
		{"Pipeline.UnmarshalJSON/empty", func() error { return wantErr((&Pipeline{}).UnmarshalJSON(nil), "preprocess: pipeline:") }},
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
	if len(want) < 18 {
		t.Errorf("only %d exported names found", len(want))
	}
	// Pipeline.Apply's errors wrap ErrNeedsFile where they should.
	err = (&Pipeline{Channels: []Channel{{Name: "A"}}, Linearize: true}).Apply([]float64{1}, 1)
	if !errors.Is(err, ErrNeedsFile) {
		t.Errorf("linearize: %v", err)
	}
}
