package figure

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

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
	calls := []apitest.Case{
		{Name: "Cells.N/nil", Call: func() error { return apitest.WantZero(nc.N() == 0, nc.N()) }},
		{Name: "Cells.N/zero", Call: func() error { return apitest.WantZero((&Cells{}).N() == 0, nil) }},
		{Name: "ClassColor/negative", Call: func() error {
			return apitest.WantZero(ClassColor(-1, 3) == ClassColor(7, 3) && ClassColor(-1, 30) == ClassColor(29, 30), ClassColor(-1, 3))
		}},
		{Name: "ClassColor/zero", Call: func() error { return apitest.WantZero(ClassColor(0, 0) == classPalette[0], ClassColor(0, 0)) }},
		{Name: "SampleColor/negative", Call: func() error {
			return apitest.WantZero(SampleColor(-2, 5) == SampleColor(18, 5) && SampleColor(-1, 40) == SampleColor(39, 40), SampleColor(-2, 5))
		}},
		{Name: "SampleColor/min int", Call: func() error { SampleColor(math.MinInt, 40); ClassColor(math.MinInt, 3); return nil }},
		{Name: "Viridis/NaN", Call: func() error { return apitest.WantZero(Viridis(math.NaN()) == viridis[0], Viridis(math.NaN())) }},
		{Name: "EvalScores/zero", Call: func() error { _, err := EvalScores(Scores{}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Pairs/zero", Call: func() error { _, err := Pairs(Cells{}, View{}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Pairs/nil Z", Call: func() error { _, err := Pairs(c, View{Name: "x"}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Projection/zero", Call: func() error { _, err := Projection(Cells{}, nil, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Projection/zero view", Call: func() error { _, err := Projection(c, []View{{}}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Projection/empty Z", Call: func() error {
			_, err := Projection(c, []View{{Name: "x", Z: &mat.Dense{}}}, Options{})
			return apitest.WantErr(err, "")
		}},
		{Name: "Samples/zero", Call: func() error { _, err := Samples(Cells{}, View{}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Spectrum/nil", Call: func() error { _, err := Spectrum(nil, 0, 0, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Spectrum/negative", Call: func() error { _, err := Spectrum([]float64{1, 0.5}, -1, 0, Options{}); return apitest.WantErr(err, "") }},
		{Name: "TrainingAndUnseen/zero", Call: func() error { _, err := TrainingAndUnseen(Cells{}, nil, Options{}); return apitest.WantErr(err, "") }},
		{Name: "TrainingAndUnseen/nil Z", Call: func() error {
			_, err := TrainingAndUnseen(c, []View{{Name: "x"}}, Options{})
			return apitest.WantErr(err, "")
		}},
		{Name: "Figure.Write/nil", Call: func() error { return apitest.WantErr(nf.Write(io.Discard, PNG), "") }},
		{Name: "Figure.Write/zero", Call: func() error { return apitest.WantErr((&Figure{}).Write(io.Discard, PNG), "") }},
		{Name: "Figure.Write/nil writer", Call: func() error {
			f, err := Projection(c, views[:1], Options{})
			if err != nil {
				return err
			}
			return apitest.WantErr(f.Write(nil, PNG), "")
		}},
		{Name: "Figure.Write/bad format", Call: func() error {
			f, err := Projection(c, views[:1], Options{})
			if err != nil {
				return err
			}
			return apitest.WantErr(f.Write(io.Discard, Format(-1)), "")
		}},
		{Name: "Format.String/negative", Call: func() error { return apitest.WantZero(Format(-1).String() == "Format(-1)", nil) }},
		{Name: "FormatOf/empty", Call: func() error { _, err := FormatOf(""); return apitest.WantErr(err, "") }},
		{Name: "NewReservoir/zero", Call: func() error {
			err := apitest.Call(func() error { NewReservoir(0, 1); return nil })
			return apitest.WantZero(err != nil && strings.Contains(err.Error(), "fewer than 1 row"), err)
		}},
		{Name: "Reservoir.Offer/nil", Call: func() error { _, keep := nr.Offer(0); return apitest.WantZero(!keep, keep) }},
		{Name: "Reservoir.Offer/zero", Call: func() error { _, keep := (&Reservoir{}).Offer(0); return apitest.WantZero(!keep, keep) }},
		{Name: "Reservoir.Offer/negative", Call: func() error { _, keep := NewReservoir(2, 1).Offer(-1); return apitest.WantZero(!keep, keep) }},
		{Name: "Reservoir.Seen/nil", Call: func() error { return apitest.WantZero(nr.Seen() == nil, nr.Seen()) }},
		{Name: "Reservoir.Seen/zero", Call: func() error { return apitest.WantZero(len((&Reservoir{}).Seen()) == 0, nil) }},
		{Name: "Gated/zero", Call: func() error { _, err := Gated(Gating{}, View{}, Options{}); return apitest.WantErr(err, "") }},
		{Name: "Gated/nil Z", Call: func() error {
			_, err := Gated(Gating{Cells: c}, View{Name: "x"}, Options{})
			return apitest.WantErr(err, "")
		}},
		{Name: "Gated/nil predictions", Call: func() error { _, err := Gated(Gating{Cells: c}, views[0], Options{}); return apitest.WantErr(err, "") }},
		{Name: "Font/zero", Call: func() error { return apitest.WantZero(Font().Typeface != "", Font()) }},
		{Name: "ModelTitle/nil", Call: func() error { return apitest.WantZero(ModelTitle(nil) == "", ModelTitle(nil)) }},
		{Name: "NewPalette/nil", Call: func() error {
			p := NewPalette(nil)
			return apitest.WantZero(len(p.Names()) == 0 && !p.Has(""), p.Names())
		}},
		{Name: "Palette.Color/nil", Call: func() error { var p *Palette; return apitest.WantZero(p.Color("a") == OtherColor, p.Color("a")) }},
		{Name: "Palette.Color/zero", Call: func() error { return apitest.WantZero((&Palette{}).Color("a") == OtherColor, nil) }},
		{Name: "Palette.Has/nil", Call: func() error { var p *Palette; return apitest.WantZero(!p.Has("a"), true) }},
		{Name: "Palette.Has/zero", Call: func() error { return apitest.WantZero(!(&Palette{}).Has("a"), true) }},
		{Name: "Palette.Names/nil", Call: func() error { var p *Palette; return apitest.WantZero(p.Names() == nil, p.Names()) }},
		{Name: "Palette.Names/zero", Call: func() error { return apitest.WantZero(len((&Palette{}).Names()) == 0, nil) }},
		{Name: "Sample.Cells/nil", Call: func() error { var s *Sample; c := s.Cells(nil); return apitest.WantZero(c.N() == 0, nil) }},
		{Name: "Sample.Cells/zero", Call: func() error { c := (&Sample{}).Cells(nil); return apitest.WantZero(c.N() == 0, nil) }},
		{Name: "Sample.Note/nil", Call: func() error { var s *Sample; return apitest.WantZero(s.Note() == "", s.Note()) }},
		{Name: "Sample.Note/zero", Call: func() error { return apitest.WantZero((&Sample{}).Note() == "", nil) }},
		{Name: "PCABaseline/nil", Call: func() error { _, _, err := PCABaseline(nil, nil, 2); return apitest.WantErr(err, "") }},
		{Name: "PCABaseline/zero", Call: func() error { _, _, err := PCABaseline(&Sample{}, nil, 0); return apitest.WantErr(err, "") }},
		{Name: "PCABaseline/negative", Call: func() error {
			s := &Sample{X: mat.NewDense(3, 2, []float64{0, 1, 1, 0, 2, 2})}
			v, _, err := PCABaseline(s, nil, -1) // max(need, 3) components, at most d
			if err != nil {
				return err
			}
			_, k := v.Z.Dims()
			return apitest.WantZero(k == 2, k)
		}},
		{Name: "KPCABaseline/nil", Call: func() error {
			_, _, err := KPCABaseline(context.Background(), nil, nil, nil, 2)
			return apitest.WantErr(err, "")
		}},
		{Name: "SampleModel/nil", Call: func() error {
			_, err := SampleModel(context.Background(), nil, nil, SampleOptions{})
			return apitest.WantErr(err, "")
		}},
		{Name: "SampleComponents/nil", Call: func() error {
			_, err := SampleComponents(context.Background(), nil, "", SampleOptions{})
			return apitest.WantErr(err, "")
		}},
		{Name: "TooManyCellsError.Error/nil", Call: func() error { var e *TooManyCellsError; return apitest.WantZero(e.Error() != "", nil) }},
	}
	apitest.Check(t, ".", calls, 16)
}
