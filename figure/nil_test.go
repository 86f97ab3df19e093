package figure

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// nilCall is one call of an exported function or method with nil, zero or
// negative arguments. It returns an error describing a wrong result (nil
// when the result is an error, or the documented result).
type nilCall struct {
	name string // "Func" or "Type.Method", then "/variant"
	call func() error
}

func wantErr(err error) error {
	if err == nil {
		return fmt.Errorf("no error")
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
// with nil pointers, zero values and negative indices: each returns an
// error or its documented result, and none panics but NewReservoir with
// fewer than one row, a documented programmer's error. The list of calls
// is checked against the package's exported names.
func TestNilAndZero(t *testing.T) {
	var (
		nc *Cells
		nf *Figure
		nr *Reservoir
	)
	c, views := testCells(40, 3)
	calls := []nilCall{
		{"Cells.N/nil", func() error { return wantZero(nc.N() == 0, nc.N()) }},
		{"Cells.N/zero", func() error { return wantZero((&Cells{}).N() == 0, nil) }},
		{"ClassColor/negative", func() error {
			return wantZero(ClassColor(-1, 3) == ClassColor(7, 3) && ClassColor(-1, 30) == ClassColor(29, 30), ClassColor(-1, 3))
		}},
		{"ClassColor/zero", func() error { return wantZero(ClassColor(0, 0) == classPalette[0], ClassColor(0, 0)) }},
		{"SampleColor/negative", func() error {
			return wantZero(SampleColor(-2, 5) == SampleColor(18, 5) && SampleColor(-1, 40) == SampleColor(39, 40), SampleColor(-2, 5))
		}},
		{"SampleColor/min int", func() error { SampleColor(math.MinInt, 40); ClassColor(math.MinInt, 3); return nil }},
		{"Viridis/NaN", func() error { return wantZero(Viridis(math.NaN()) == viridis[0], Viridis(math.NaN())) }},
		{"EvalScores/zero", func() error { _, err := EvalScores(Scores{}, Options{}); return wantErr(err) }},
		{"Pairs/zero", func() error { _, err := Pairs(Cells{}, View{}, Options{}); return wantErr(err) }},
		{"Pairs/nil Z", func() error { _, err := Pairs(c, View{Name: "x"}, Options{}); return wantErr(err) }},
		{"Projection/zero", func() error { _, err := Projection(Cells{}, nil, Options{}); return wantErr(err) }},
		{"Projection/zero view", func() error { _, err := Projection(c, []View{{}}, Options{}); return wantErr(err) }},
		{"Projection/empty Z", func() error {
			_, err := Projection(c, []View{{Name: "x", Z: &mat.Dense{}}}, Options{})
			return wantErr(err)
		}},
		{"Samples/zero", func() error { _, err := Samples(Cells{}, View{}, Options{}); return wantErr(err) }},
		{"Spectrum/nil", func() error { _, err := Spectrum(nil, 0, 0, Options{}); return wantErr(err) }},
		{"Spectrum/negative", func() error { _, err := Spectrum([]float64{1, 0.5}, -1, 0, Options{}); return wantErr(err) }},
		{"TrainingAndUnseen/zero", func() error { _, err := TrainingAndUnseen(Cells{}, nil, Options{}); return wantErr(err) }},
		{"TrainingAndUnseen/nil Z", func() error { _, err := TrainingAndUnseen(c, []View{{Name: "x"}}, Options{}); return wantErr(err) }},
		{"Figure.Write/nil", func() error { return wantErr(nf.Write(io.Discard, PNG)) }},
		{"Figure.Write/zero", func() error { return wantErr((&Figure{}).Write(io.Discard, PNG)) }},
		{"Figure.Write/nil writer", func() error {
			f, err := Projection(c, views[:1], Options{})
			if err != nil {
				return err
			}
			return wantErr(f.Write(nil, PNG))
		}},
		{"Figure.Write/bad format", func() error {
			f, err := Projection(c, views[:1], Options{})
			if err != nil {
				return err
			}
			return wantErr(f.Write(io.Discard, Format(-1)))
		}},
		{"Format.String/negative", func() error { return wantZero(Format(-1).String() == "Format(-1)", nil) }},
		{"FormatOf/empty", func() error { _, err := FormatOf(""); return wantErr(err) }},
		{"NewReservoir/zero", func() error {
			err := apitest.Call(func() error { NewReservoir(0, 1); return nil })
			return wantZero(err != nil && strings.Contains(err.Error(), "fewer than 1 row"), err)
		}},
		{"Reservoir.Offer/nil", func() error { _, keep := nr.Offer(0); return wantZero(!keep, keep) }},
		{"Reservoir.Offer/zero", func() error { _, keep := (&Reservoir{}).Offer(0); return wantZero(!keep, keep) }},
		{"Reservoir.Offer/negative", func() error { _, keep := NewReservoir(2, 1).Offer(-1); return wantZero(!keep, keep) }},
		{"Reservoir.Seen/nil", func() error { return wantZero(nr.Seen() == nil, nr.Seen()) }},
		{"Reservoir.Seen/zero", func() error { return wantZero(len((&Reservoir{}).Seen()) == 0, nil) }},
		{"Gated/zero", func() error { _, err := Gated(Gating{}, View{}, Options{}); return wantErr(err) }},
		{"Gated/nil Z", func() error { _, err := Gated(Gating{Cells: c}, View{Name: "x"}, Options{}); return wantErr(err) }},
		{"Gated/nil predictions", func() error { _, err := Gated(Gating{Cells: c}, views[0], Options{}); return wantErr(err) }},
		{"Font/zero", func() error { return wantZero(Font().Typeface != "", Font()) }},
		{"ModelTitle/nil", func() error { return wantZero(ModelTitle(nil) == "", ModelTitle(nil)) }},
		{"NewPalette/nil", func() error { p := NewPalette(nil); return wantZero(len(p.Names()) == 0 && !p.Has(""), p.Names()) }},
		{"Palette.Color/nil", func() error { var p *Palette; return wantZero(p.Color("a") == OtherColor, p.Color("a")) }},
		{"Palette.Color/zero", func() error { return wantZero((&Palette{}).Color("a") == OtherColor, nil) }},
		{"Palette.Has/nil", func() error { var p *Palette; return wantZero(!p.Has("a"), true) }},
		{"Palette.Has/zero", func() error { return wantZero(!(&Palette{}).Has("a"), true) }},
		{"Palette.Names/nil", func() error { var p *Palette; return wantZero(p.Names() == nil, p.Names()) }},
		{"Palette.Names/zero", func() error { return wantZero(len((&Palette{}).Names()) == 0, nil) }},
		{"Sample.Cells/nil", func() error { var s *Sample; c := s.Cells(nil); return wantZero(c.N() == 0, nil) }},
		{"Sample.Cells/zero", func() error { c := (&Sample{}).Cells(nil); return wantZero(c.N() == 0, nil) }},
		{"Sample.Note/nil", func() error { var s *Sample; return wantZero(s.Note() == "", s.Note()) }},
		{"Sample.Note/zero", func() error { return wantZero((&Sample{}).Note() == "", nil) }},
		{"PCABaseline/nil", func() error { _, _, err := PCABaseline(nil, nil, 2); return wantErr(err) }},
		{"PCABaseline/zero", func() error { _, _, err := PCABaseline(&Sample{}, nil, 0); return wantErr(err) }},
		{"PCABaseline/negative", func() error {
			s := &Sample{X: mat.NewDense(3, 2, []float64{0, 1, 1, 0, 2, 2})}
			v, _, err := PCABaseline(s, nil, -1) // max(need, 3) components, at most d
			if err != nil {
				return err
			}
			_, k := v.Z.Dims()
			return wantZero(k == 2, k)
		}},
		{"KPCABaseline/nil", func() error { _, _, err := KPCABaseline(context.Background(), nil, nil, nil, 2); return wantErr(err) }},
		{"SampleModel/nil", func() error {
			_, err := SampleModel(context.Background(), nil, nil, SampleOptions{})
			return wantErr(err)
		}},
		{"SampleComponents/nil", func() error {
			_, err := SampleComponents(context.Background(), nil, "", SampleOptions{})
			return wantErr(err)
		}},
		{"TooManyCellsError.Error/nil", func() error { var e *TooManyCellsError; return wantZero(e.Error() != "", nil) }},
	}
	var names []string
	for _, call := range calls {
		names = append(names, call.name)
		if err := apitest.Call(call.call); err != nil {
			t.Errorf("%s: %v", call.name, err)
		}
	}
	want, err := apitest.ExportedFuncs(".")
	if err != nil {
		t.Fatal(err)
	}
	if missing := apitest.Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
	if len(want) < 16 {
		t.Errorf("only %d exported names found", len(want))
	}
}
