package anndata

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// nilCall is one call of an exported function or method with nil, zero or
// negative arguments. It returns an error describing a wrong result (nil
// when the result is an error, or the documented zero result).
type nilCall struct {
	name string // "Func" or "Type.Method", then "/variant"
	call func() error
}

// wantErr turns the error returned by a call that must fail into the
// check's result: want is a part of the message.
func wantErr(err error, want string) error {
	if err == nil {
		return fmt.Errorf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q, want %q", err, want)
	}
	return nil
}

// wantZero checks a documented zero result.
func wantZero(ok bool, got any) error {
	if !ok {
		return fmt.Errorf("got %v, want the zero result", got)
	}
	return nil
}

// TestNilAndZero calls every exported function and method of the package
// with nil pointers, nil slices, zero values and negative counts: each
// returns an error or its documented zero result, and none panics. The
// list of calls is checked against the package's exported names, so a new
// one cannot be left out.
func TestNilAndZero(t *testing.T) {
	ctx := context.Background()
	var (
		nilCtx context.Context
		ns     *Source
		zs     = &Source{}
		nw     *Writer
		zw     = &Writer{}
	)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.zarr")
	writeStore(t, good, 10, 2, 4, "zlib")
	src, err := NewSource(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	block := &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{0}}
	calls := []nilCall{
		{"CheckOutput/empty", func() error { return wantErr(CheckOutput(""), "") }},
		{"Create/empty path", func() error { _, err := Create("", WriterOptions{Vars: []string{"a"}}); return wantErr(err, "") }},
		{"Create/zero options", func() error {
			_, err := Create(filepath.Join(dir, "o.zarr"), WriterOptions{})
			return wantErr(err, "WriterOptions.Vars is empty")
		}},
		{"Create/negative", func() error {
			_, err := Create(filepath.Join(dir, "o.zarr"), WriterOptions{Vars: []string{"a"}, Components: -1})
			return wantErr(err, "Components is -1")
		}},
		{"NewSource/empty", func() error { _, err := NewSource("", Options{}); return wantErr(err, "no such file") }},
		{"NewSource/negative", func() error {
			_, err := NewSource(good, Options{MaxChunkBytes: -1})
			return wantErr(err, "MaxChunkBytes -1 is negative")
		}},
		{"NewSourceFS/nil", func() error {
			_, err := NewSourceFS(nil, "x.zarr", Options{})
			return wantErr(err, "anndata: nil file system")
		}},
		{"NewSourceFS/empty", func() error {
			_, err := NewSourceFS(fstest.MapFS{}, "", Options{})
			return wantErr(err, "not an AnnData Zarr store")
		}},
		{"Source.Open/nil context", func() error { _, err := src.Open(nilCtx); return wantErr(err, "anndata: nil context") }},
		{"Source.Open/reader", func() error {
			r, err := src.Open(ctx)
			if err != nil {
				return err
			}
			defer r.Close()
			if _, err := r.Read(nil, 1); err == nil {
				return fmt.Errorf("Read into a nil block: no error")
			}
			var b dataset.Block
			for _, max := range []int{0, -1} {
				if _, err := r.Read(&b, max); err == nil {
					return fmt.Errorf("Read of %d rows: no error", max)
				}
			}
			return nil
		}},
	}
	for _, v := range []struct {
		name string
		s    *Source
	}{{"nil", ns}, {"zero", zs}} {
		s := v.s
		calls = append(calls,
			nilCall{"Source.Len/" + v.name, func() error { return wantZero(s.Len() == 0, s.Len()) }},
			nilCall{"Source.Open/" + v.name, func() error { _, err := s.Open(ctx); return wantErr(err, "anndata: Source not created by NewSource") }},
			nilCall{"Source.Files/" + v.name, func() error { return wantZero(s.Files() == nil, s.Files()) }},
			nilCall{"Source.PassBytes/" + v.name, func() error { return wantZero(s.PassBytes() == 0, s.PassBytes()) }},
			nilCall{"Source.Schema/" + v.name, func() error { return wantZero(len(s.Schema().Features) == 0, s.Schema()) }},
			nilCall{"Source.Warnings/" + v.name, func() error { return wantZero(s.Warnings() == nil, s.Warnings()) }},
		)
	}
	for _, v := range []struct {
		name string
		w    *Writer
	}{{"nil", nw}, {"zero", zw}} {
		w := v.w
		calls = append(calls,
			nilCall{"Writer.Abort/" + v.name, func() error { w.Abort(); return nil }},
			nilCall{"Writer.Commit/" + v.name, func() error { return wantErr(w.Commit(), "anndata: Writer not created by Create") }},
			nilCall{"Writer.Path/" + v.name, func() error { return wantZero(w.Path() == "", w.Path()) }},
			nilCall{"Writer.Rows/" + v.name, func() error { return wantZero(w.Rows() == 0, w.Rows()) }},
			nilCall{"Writer.WriteCells/" + v.name, func() error { return wantErr(w.WriteCells(nil), "anndata: Writer not created by Create") }},
			nilCall{"Writer.WriteBlock/" + v.name, func() error {
				return wantErr(w.WriteBlock(block, mat.NewDense(1, 1, nil), []string{"a"}, nil), "anndata: Writer not created by Create")
			}},
		)
	}
	calls = append(calls,
		nilCall{"ReadDicaUns/empty path", func() error { _, err := ReadDicaUns(""); return wantErr(err, "no such file") }},
		nilCall{"ReadDicaUns/folder", func() error { _, err := ReadDicaUns(dir); return wantErr(err, "not an AnnData Zarr store") }},
	)
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
	if len(want) < 14 {
		t.Errorf("only %d exported names found", len(want))
	}
}
