package preprocess

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// unchanged applies t to the block {1, -2, 3, 4} of 2 columns and checks
// that it is left as it is.
func unchanged(t Transform) error {
	x := []float64{1, -2, 3, 4}
	t.Apply(x, 2)
	return apitest.WantZero(slices.Equal(x, []float64{1, -2, 3, 4}), x)
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
	calls := []apitest.Case{
		{Name: "Asinh.Eval/zero", Call: func() error { return apitest.WantZero(math.IsInf(Asinh{}.Eval(1), 1), Asinh{}.Eval(1)) }},
		{Name: "Asinh.String/zero", Call: func() error { return apitest.WantZero(Asinh{}.String() == "asinh:0", Asinh{}.String()) }},
		{Name: "Chain.Apply/nil", Call: func() error { return unchanged(Chain(nil)) }},
		{Name: "Chain.Apply/nil element", Call: func() error { return unchanged(Chain{nil, Channels{}}) }},
		{Name: "Channels.Apply/zero", Call: func() error { return unchanged(Channels{}) }},
		{Name: "Compensation.Apply/nil", Call: func() error { return unchanged(nc) }},
		{Name: "Compensation.Apply/zero", Call: func() error { return unchanged(&Compensation{}) }},
		{Name: "Compensation.Columns/nil", Call: func() error { return apitest.WantZero(nc.Columns() == nil, nc.Columns()) }},
		{Name: "Compensation.Columns/zero", Call: func() error { return apitest.WantZero(len((&Compensation{}).Columns()) == 0, nil) }},
		{Name: "Identity.Eval/zero", Call: func() error { return apitest.WantZero(Identity{}.Eval(-3) == -3, nil) }},
		{Name: "Identity.String/zero", Call: func() error { return apitest.WantZero(Identity{}.String() == "none", nil) }},
		{Name: "Log1pAbs.Eval/zero", Call: func() error { return apitest.WantZero(Log1pAbs{}.Eval(0) == 0, nil) }},
		{Name: "Log1pAbs.String/zero", Call: func() error { return apitest.WantZero(Log1pAbs{}.String() == "log1p", nil) }},
		{Name: "NewCompensation/nil", Call: func() error {
			_, err := NewCompensation(nil, nil, nil)
			return apitest.WantErr(err, "preprocess: nil spillover matrix")
		}},
		{Name: "NewCompensation/nil Dense", Call: func() error {
			_, err := NewCompensation(nd, []string{"a"}, []string{"a"})
			return apitest.WantErr(err, "nil spillover matrix")
		}},
		{Name: "NewCompensation/zero Dense", Call: func() error {
			_, err := NewCompensation(&mat.Dense{}, nil, nil)
			return apitest.WantErr(err, "preprocess: empty spillover matrix")
		}},
		{Name: "NewCompensation/no names", Call: func() error {
			_, err := NewCompensation(mat.NewDense(1, 1, []float64{1}), nil, nil)
			return apitest.WantErr(err, "spillover matrix is 1x1 for 0 channel names")
		}},
		{Name: "NewCompensation/no columns", Call: func() error {
			_, err := NewCompensation(mat.NewDense(1, 1, []float64{1}), []string{"A"}, nil)
			return apitest.WantErr(err, `spillover channel "A" not found among the columns`)
		}},
		{Name: "ParseFunc/empty", Call: func() error { _, err := ParseFunc(""); return apitest.WantErr(err, `unknown transform ""`) }},
		{Name: "ParseFunc/zero cofactor", Call: func() error {
			_, err := ParseFunc("asinh:0")
			return apitest.WantErr(err, "cofactor must be a finite number > 0")
		}},
		{Name: "Pipeline.Apply/nil", Call: func() error { return np.Apply([]float64{1}, 1) }},
		{Name: "Pipeline.Apply/zero", Call: func() error { return apitest.WantErr((&Pipeline{}).Apply(nil, 0), "block of 0 values for 0 channels") }},
		{Name: "Pipeline.Apply/zero compensation", Call: func() error {
			p := &Pipeline{Channels: []Channel{{Name: "A"}}, Compensation: &Spill{}}
			return apitest.WantErr(p.Apply([]float64{1}, 1), "spillover matrix of 0 values for 0 channels")
		}},
		{Name: "Pipeline.Apply/short matrix", Call: func() error {
			p := &Pipeline{Channels: []Channel{{Name: "A"}}, Compensation: &Spill{Channels: []string{"A"}, Matrix: []float64{1, 0}}}
			return apitest.WantErr(p.Apply([]float64{1}, 1), "spillover matrix of 2 values for 1 channels")
		}},
		{Name: "Pipeline.Check/nil", Call: func() error { return np.Check() }},
		{Name: "Pipeline.Check/zero", Call: func() error { return (&Pipeline{}).Check() }},
		{Name: "Pipeline.Check/zero compensation", Call: func() error {
			return apitest.WantErr((&Pipeline{Compensation: &Spill{}}).Check(), "spillover matrix of 0 values")
		}},
		{Name: "Pipeline.Func/nil", Call: func() error { f, err := np.Func(); return apitest.WantZero(err == nil && f == Identity{}, f) }},
		{Name: "Pipeline.Func/zero", Call: func() error {
			f, err := (&Pipeline{}).Func()
			return apitest.WantZero(err == nil && f == Identity{}, f)
		}},
		{Name: "Pipeline.Names/nil", Call: func() error { return apitest.WantZero(np.Names() == nil, np.Names()) }},
		{Name: "Pipeline.Names/zero", Call: func() error { return apitest.WantZero(len((&Pipeline{}).Names()) == 0, nil) }},
		{Name: "Pipeline.String/nil", Call: func() error { return apitest.WantZero(np.String() == "not recorded", np.String()) }},
		{Name: "Pipeline.String/zero", Call: func() error {
			s := (&Pipeline{}).String()
			return apitest.WantZero(s == "0 channels ; no transform", s)
		}},
		{Name: "Pipeline.TransformSpec/nil", Call: func() error { return apitest.WantZero(np.TransformSpec() == "none", nil) }},
		{Name: "Pipeline.TransformSpec/zero", Call: func() error { return apitest.WantZero((&Pipeline{}).TransformSpec() == "none", nil) }},
		{Name: "Compiled.Apply/nil", Call: func() error { var c *Compiled; c.Apply([]float64{1}, 1); return nil }},
		{Name: "Compiled.Apply/zero", Call: func() error { (&Compiled{}).Apply([]float64{1}, 1); return nil }},
		{Name: "Compiled.Identity/nil", Call: func() error { var c *Compiled; return apitest.WantZero(c.Identity(), false) }},
		{Name: "Compiled.Row/nil", Call: func() error { var c *Compiled; return apitest.WantZero(c.Row() == nil, "a function") }},
		{Name: "Pipeline.Compile/nil", Call: func() error { c, err := np.Compile(); return apitest.WantZero(err == nil && c.Identity(), err) }},
		{Name: "Pipeline.Compile/zero", Call: func() error {
			c, err := (&Pipeline{}).Compile()
			return apitest.WantZero(err == nil && c.Identity(), err)
		}},
		{Name: "Pipeline.Compile/zero compensation", Call: func() error {
			_, err := (&Pipeline{Compensation: &Spill{}}).Compile()
			return apitest.WantErr(err, "spillover matrix of 0 values")
		}},
		{Name: "Pipeline.Equal/nil", Call: func() error { return apitest.WantZero(np.Equal(nil) && !np.Equal(&Pipeline{}), false) }},
		{Name: "Pipeline.Equal/zero", Call: func() error {
			return apitest.WantZero((&Pipeline{}).Equal(&Pipeline{}) && !(&Pipeline{}).Equal(nil), false)
		}},
		{Name: "Pipeline.Identical/nil", Call: func() error { return apitest.WantZero(np.Identical(nil) && !np.Identical(&Pipeline{}), false) }},
		{Name: "Pipeline.Identical/zero", Call: func() error { return apitest.WantZero((&Pipeline{}).Identical(&Pipeline{}), false) }},
		{Name: "Pipeline.MarshalJSON/nil", Call: func() error {
			b, err := np.MarshalJSON()
			return apitest.WantZero(err == nil && string(b) == "null", string(b))
		}},
		{Name: "Pipeline.MarshalJSON/zero", Call: func() error { _, err := (&Pipeline{}).MarshalJSON(); return err }},
		{Name: "Pipeline.Remaining/nil", Call: func() error { q, err := np.Remaining(nil); return apitest.WantZero(err == nil && q == nil, q) }},
		{Name: "Pipeline.Remaining/zero", Call: func() error { _, err := (&Pipeline{}).Remaining(nil); return err }},
		{Name: "Pipeline.Select/nil", Call: func() error { q, err := np.Select(nil); return apitest.WantZero(err == nil && q == nil, q) }},
		{Name: "Pipeline.Select/zero", Call: func() error { _, err := (&Pipeline{}).Select([]string{"A"}); return apitest.WantErr(err, `"A"`) }},
		{Name: "Pipeline.Steps/nil", Call: func() error { return apitest.WantZero(np.Steps() == nil, np.Steps()) }},
		{Name: "Pipeline.Steps/zero", Call: func() error { return apitest.WantZero(len((&Pipeline{}).Steps()) == 0, (&Pipeline{}).Steps()) }},
		{Name: "Pipeline.UnmarshalJSON/nil", Call: func() error { return apitest.WantErr(np.UnmarshalJSON([]byte("{}")), "nil Pipeline") }},
		{Name: "Pipeline.UnmarshalJSON/empty", Call: func() error { return apitest.WantErr((&Pipeline{}).UnmarshalJSON(nil), "preprocess: pipeline:") }},
	}
	apitest.Check(t, ".", calls, 18)
	// Pipeline.Apply's errors wrap ErrNeedsFile where they should.
	err := (&Pipeline{Channels: []Channel{{Name: "A"}}, Linearize: true}).Apply([]float64{1}, 1)
	if !errors.Is(err, ErrNeedsFile) {
		t.Errorf("linearize: %v", err)
	}
}
