package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// badSource is a Source whose blocks disagree with its schema.
type badSource struct {
	schema Schema
	fill   func(b *Block) (int, error)
	open   func() (Reader, error)
}

func (s badSource) Schema() Schema { return s.schema }
func (s badSource) Open(ctx context.Context) (Reader, error) {
	if s.open != nil {
		return s.open()
	}
	return &badReader{fill: s.fill}, nil
}

type badReader struct {
	fill func(b *Block) (int, error)
	n    int
}

func (r *badReader) Read(b *Block, max int) (int, error) {
	if r.n++; r.n > 3 {
		return 0, io.EOF
	}
	return r.fill(b)
}
func (r *badReader) Domains() []string { return []string{"a"} }
func (r *badReader) Classes() []string { return []string{"x"} }
func (r *badReader) Close() error      { return nil }

// TestNilAndZero calls every exported function and method of the package
// with nil and zero values and inconsistent data: each returns an error or
// a documented zero result, and none panics.
func TestNilAndZero(t *testing.T) {
	ctx := context.Background()
	var nilCtx context.Context
	var nilDS *Dataset
	var nilIx *Index
	good := func() *Dataset {
		ds, err := New(mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7}), []string{"a", "a", "b", "b"})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	// Lengths that disagree with the number of points.
	short := good()
	short.Domain = short.Domain[:3]
	badLabels := good()
	badLabels.Label, badLabels.ClassNames = []int{0, 0, 5}, []string{"x"}
	outOfRange := good()
	outOfRange.Domain[1] = 7
	wrongTargets := good()
	wrongTargets.Target = mat.NewDense(3, 1, nil)
	wrongNames := good()
	wrongNames.Features = []string{"only one"}
	labelled := good()
	if err := labelled.SetLabels([]string{"x", "y", "x", "y"}); err != nil {
		t.Fatal(err)
	}
	block := func(b *Block, rows, d int, labels bool, t int) {
		b.Reset(rows, d, labels, t)
		b.Rows = rows
	}
	for _, tc := range []struct {
		name string
		call func() (any, error)
		want string // the error, or "" for none
	}{
		{"New(nil, nil)", func() (any, error) { return New(nil, nil) }, "dataset: no points"},
		{"New(empty)", func() (any, error) { return New(&mat.Dense{}, nil) }, "dataset: no points"},
		{"New(short domains)", func() (any, error) { return New(mat.NewDense(2, 1, nil), []string{"a"}) }, "dataset: 2 points but 1 domain entries"},
		{"nil.N", func() (any, error) { return nilDS.N(), nil }, ""},
		{"nil.D", func() (any, error) { return nilDS.D(), nil }, ""},
		{"nil.NumDomains", func() (any, error) { return nilDS.NumDomains(), nil }, ""},
		{"nil.NumClasses", func() (any, error) { return nilDS.NumClasses(), nil }, ""},
		{"nil.DomainSizes", func() (any, error) { return nilDS.DomainSizes(), nil }, ""},
		{"nil.ClassSizes", func() (any, error) { return nilDS.ClassSizes(), nil }, ""},
		{"nil.LabelledRows", func() (any, error) { return nilDS.LabelledRows(), nil }, ""},
		{"Dataset{}.LabelledRows", func() (any, error) { return new(Dataset).LabelledRows(), nil }, ""},
		{"nil.Validate", func() (any, error) { return nil, nilDS.Validate() }, "dataset: nil Dataset"},
		{"nil.RequireDomains", func() (any, error) { return nil, nilDS.RequireDomains(2) }, "dataset: nil Dataset"},
		{"nil.RequireSupervision", func() (any, error) { return nil, nilDS.RequireSupervision() }, "dataset: nil Dataset"},
		{"nil.SetLabels", func() (any, error) { return nil, nilDS.SetLabels(nil) }, "dataset: nil Dataset"},
		{"nil.SetTargets", func() (any, error) { return nil, nilDS.SetTargets(mat.NewDense(1, 1, nil), nil) }, "dataset: nil Dataset"},
		{"nil.Subset", func() (any, error) { return nil, nilDS.Subset([]int{0}).Validate() }, "dataset: Subset: dataset: nil Dataset"},
		{"nil.Compact", func() (any, error) { nilDS.Compact(); return nil, nil }, ""},
		{"nil.Source.Schema", func() (any, error) { return nilDS.Source().Schema(), nil }, ""},
		{"nil.Source.Len", func() (any, error) { return nilDS.Source().(Sizer).Len(), nil }, ""},
		{"nil.Source.Open", func() (any, error) { return nilDS.Source().Open(ctx) }, "dataset: nil Dataset"},
		{"Dataset{}.Validate", func() (any, error) { return nil, new(Dataset).Validate() }, "dataset: no points"},
		{"Dataset{}.DomainSizes", func() (any, error) { return new(Dataset).DomainSizes(), nil }, ""},
		{"Dataset{}.Subset(nil)", func() (any, error) { return nil, new(Dataset).Subset(nil).Validate() }, "dataset: no points"},
		{"Dataset{}.Subset([0])", func() (any, error) { return nil, new(Dataset).Subset([]int{0}).Validate() }, "dataset: Subset: row index 0 (at 0) out of range [0, 0)"},
		{"Dataset{}.Compact", func() (any, error) { new(Dataset).Compact(); return nil, nil }, ""},
		{"Dataset{}.SetLabels(nil)", func() (any, error) { return nil, new(Dataset).SetLabels(nil) }, ""},
		{"Dataset{}.SetTargets(nil)", func() (any, error) { return nil, new(Dataset).SetTargets(nil, nil) }, "dataset: empty targets"},
		{"Dataset{}.RequireSupervision", func() (any, error) { return nil, new(Dataset).RequireSupervision() }, "dataset: supervised method needs class labels or real targets"},
		{"Dataset{}.Source.Open", func() (any, error) { return new(Dataset).Source().Open(ctx) }, ""},
		{"Collect(Dataset{})", func() (any, error) { return Collect(ctx, new(Dataset).Source()) }, "dataset: no points"},
		{"SetLabels short", func() (any, error) { return nil, good().SetLabels([]string{"x"}) }, "dataset: 4 points but 1 labels"},
		{"SetTargets short", func() (any, error) { return nil, good().SetTargets(mat.NewDense(3, 1, nil), nil) }, "dataset: 4 points but 3 target rows"},
		{"Subset(-1)", func() (any, error) { return nil, good().Subset([]int{0, -1}).Validate() }, "dataset: Subset: row index -1 (at 1) out of range [0, 4)"},
		{"Subset(4)", func() (any, error) { return nil, good().Subset([]int{4}).Validate() }, "dataset: Subset: row index 4 (at 0) out of range [0, 4)"},
		{"Subset(ok)", func() (any, error) { return nil, good().Subset([]int{3, 2, 1, 0}).Validate() }, ""},
		{"short.Subset", func() (any, error) { return nil, short.Subset([]int{0}).Validate() }, "dataset: Subset: dataset: 4 points but 3 domain entries"},
		{"short.Validate", func() (any, error) { return nil, short.Validate() }, "dataset: 4 points but 3 domain entries"},
		{"short.Source.Open", func() (any, error) { return short.Source().Open(ctx) }, "dataset: 4 points but 3 domain entries"},
		{"short.Compact", func() (any, error) { short.Compact(); return nil, nil }, ""},
		{"badLabels.Subset", func() (any, error) { return nil, badLabels.Subset([]int{0}).Validate() }, "dataset: Subset: dataset: 4 points but 3 labels"},
		{"badLabels.ClassSizes", func() (any, error) { return badLabels.ClassSizes(), nil }, ""},
		{"outOfRange.Compact", func() (any, error) { outOfRange.Compact(); return nil, outOfRange.Validate() }, "dataset: row 1: domain index 7 out of range [0, 2)"},
		{"outOfRange.DomainSizes", func() (any, error) { return outOfRange.DomainSizes(), nil }, ""},
		{"wrongTargets.Source.Open", func() (any, error) { return wrongTargets.Source().Open(ctx) }, "dataset: 4 points but 3 target rows"},
		{"wrongNames.Collect", func() (any, error) { return Collect(ctx, wrongNames.Source()) }, "dataset: 2 columns but 1 feature names"},
		{"RequireDomains(3)", func() (any, error) { return nil, good().RequireDomains(3) }, "dataset: 2 domain(s); this method needs at least 3"},
		{"Collect(nil)", func() (any, error) { return Collect(ctx, nil) }, "dataset: nil Source"},
		{"Collect(nil ctx)", func() (any, error) { return Collect(nilCtx, good().Source()) }, "dataset: nil context"},
		{"Source.Open(nil ctx)", func() (any, error) { return good().Source().Open(nilCtx) }, "dataset: nil context"},
		{"Collect(no Reader)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{Features: []string{"a"}}, open: func() (Reader, error) { return nil, nil }})
		}, "dataset: the source opened no Reader"},
		{"Collect(wider blocks)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{Features: []string{"a"}}, fill: func(b *Block) (int, error) { block(b, 2, 3, false, 0); return 2, nil }})
		}, "dataset: the source's Read gave 2 rows of 3 inputs and 0 targets (asked for 4096 rows of 1 and 0)"},
		{"Collect(no labels)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{Features: []string{"a"}, Labelled: true}, fill: func(b *Block) (int, error) { block(b, 2, 1, false, 0); return 2, nil }})
		}, "dataset: the source's Read gave 2 rows of 1 inputs and 0 targets (asked for 4096 rows of 1 and 0)"},
		{"Collect(more rows than the block)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{Features: []string{"a"}}, fill: func(b *Block) (int, error) { block(b, 2, 1, false, 0); return 3, nil }})
		}, "dataset: the source's Read gave 3 rows of 1 inputs and 0 targets (asked for 4096 rows of 1 and 0)"},
		{"Collect(zero rows, no error)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{Features: []string{"a"}}, fill: func(b *Block) (int, error) { return 0, nil }})
		}, "dataset: the source's Read gave 0 rows without an error"},
		{"Collect(no columns)", func() (any, error) {
			return Collect(ctx, badSource{schema: Schema{}, fill: func(b *Block) (int, error) { block(b, 2, 0, false, 0); return 2, nil }})
		}, "dataset: the source has no input columns"},
		{"Collect(rows with io.EOF)", func() (any, error) {
			ds, err := Collect(ctx, badSource{schema: Schema{Features: []string{"a"}}, fill: func(b *Block) (int, error) {
				block(b, 2, 1, false, 0)
				return 2, io.EOF
			}})
			if err == nil && ds.N() != 2 {
				err = fmt.Errorf("%d rows, want 2", ds.N())
			}
			return ds, err
		}, ""},
		{"Schema{}.D", func() (any, error) { return Schema{}.D(), nil }, ""},
		{"nil Index.Lookup", func() (any, error) { _, ok := nilIx.Lookup("a"); return ok, nil }, ""},
		{"nil Index.Names", func() (any, error) { return nilIx.Names(), nil }, ""},
		{"nil Index.Len", func() (any, error) { return nilIx.Len(), nil }, ""},
		{"Index{}.Lookup", func() (any, error) { _, ok := new(Index).Lookup("a"); return ok, nil }, ""},
		{"Block{}.Reset(-1)", func() (any, error) {
			var b Block
			b.Reset(-1, -2, true, -3)
			if b.D != 0 || b.T != 0 || len(b.X) != 0 || len(b.Label) != 0 {
				return nil, fmt.Errorf("block %+v", b)
			}
			return nil, nil
		}, ""},
		{"nil Block.Reset", func() (any, error) { var b *Block; b.Reset(4, 2, true, 1); return b, nil }, ""},
		{"CopyRows(none)", func() (any, error) { good().Source().(RowAccess).CopyRows(nil, nil, nil); return nil, nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			_, err := tc.call()
			if fmt.Sprint(err) != tc.want && !(tc.want == "" && err == nil) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The in-memory reader: nil blocks and max < 1.
	r, err := labelled.Source().Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(nil, 1); err == nil || err.Error() != "dataset: Read into a nil Block" {
		t.Errorf("Read(nil): %v", err)
	}
	var b Block
	if _, err := r.Read(&b, 0); err == nil || err.Error() != "dataset: Read of at most 0 rows; want at least 1" {
		t.Errorf("Read(max 0): %v", err)
	}
	if n, err := r.Read(&b, 10); n != 4 || err != nil || b.Label[3] != 1 {
		t.Errorf("Read: %d, %v", n, err)
	}
	if _, err := r.Read(&b, 10); err != io.EOF {
		t.Errorf("end: %v", err)
	}
	// The documented panics of programmer errors.
	for name, f := range map[string]func(){
		"Index.ID on nil": func() { nilIx.ID("a") },
		"Block.Row(5)":    func() { b.Row(5) },
		"CopyRows(9)":     func() { good().Source().(RowAccess).CopyRows([]int{9}, mat.NewDense(1, 2, nil), nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	// Domain names are quoted safely.
	ds, err := New(mat.NewDense(3, 1, []float64{1, 2, 3}), []string{"a", "a", "\x1b[2J" + strings.Repeat("x", 500)})
	if err == nil || ds != nil || !strings.HasPrefix(err.Error(), `dataset: domain "\x1b[2Jxxx`) || len(err.Error()) > 200 || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("New: %v", err)
	}
	if !errors.Is(nilDS.Validate(), errNil) {
		t.Error("nil Validate is not errNil")
	}
}
