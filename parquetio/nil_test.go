package parquetio

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/apitest"
	"github.com/dicalab/dica/internal/testsupport/sourcetest"
)

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
	good := filepath.Join(dir, "good.parquet")
	if err := os.WriteFile(good, writeSmall(t, 10, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource([]string{good}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	block := &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{0}}
	calls := []apitest.Case{
		{Name: "Create/empty path", Call: func() error {
			_, err := Create("", WriterOptions{Vars: []string{"a"}})
			return apitest.WantErr(err, "")
		}},
		{Name: "Create/zero options", Call: func() error {
			_, err := Create(filepath.Join(dir, "o.parquet"), WriterOptions{})
			return apitest.WantErr(err, "WriterOptions.Vars is empty")
		}},
		{Name: "Create/negative", Call: func() error {
			_, err := Create(filepath.Join(dir, "o.parquet"), WriterOptions{Vars: []string{"a"}, RowGroupRows: -1})
			return apitest.WantErr(err, "row group rows -1 out of range")
		}},
		{Name: "NewSource/nil", Call: func() error { _, err := NewSource(nil, Options{}); return apitest.WantErr(err, "parquetio: no files") }},
		{Name: "NewSource/empty", Call: func() error {
			_, err := NewSource([]string{""}, Options{})
			return apitest.WantErr(err, "no such file")
		}},
		{Name: "NewSource/negative", Call: func() error {
			_, err := NewSource([]string{good}, Options{MaxPageBytes: -1})
			return apitest.WantErr(err, "parquetio: a negative limit (MaxPageBytes -1")
		}},
		{Name: "NewSourceFS/nil", Call: func() error {
			_, err := NewSourceFS(nil, []string{"x"}, Options{})
			return apitest.WantErr(err, "parquetio: nil file system")
		}},
		{Name: "NewSourceFS/empty", Call: func() error {
			_, err := NewSourceFS(fstest.MapFS{}, nil, Options{})
			return apitest.WantErr(err, "parquetio: no files")
		}},
		{Name: "Source.Open/nil context", Call: func() error { _, err := src.Open(nilCtx); return apitest.WantErr(err, "parquetio: nil context") }},
		{Name: "Source.Open/reader", Call: func() error { return sourcetest.RefusesBadReads(ctx, src) }},
	}
	for _, v := range []struct {
		name string
		s    *Source
	}{{"nil", ns}, {"zero", zs}} {
		s := v.s
		calls = append(calls,
			apitest.Case{Name: "Source.Files/" + v.name, Call: func() error { return apitest.WantZero(len(s.Files()) == 0, s.Files()) }},
			apitest.Case{Name: "Source.Len/" + v.name, Call: func() error { return apitest.WantZero(s.Len() == 0, s.Len()) }},
			apitest.Case{Name: "Source.Open/" + v.name, Call: func() error {
				_, err := s.Open(ctx)
				return apitest.WantErr(err, "parquetio: Source not created by NewSource")
			}},
			apitest.Case{Name: "Source.PassBytes/" + v.name, Call: func() error { return apitest.WantZero(s.PassBytes() == 0, s.PassBytes()) }},
			apitest.Case{Name: "Source.Schema/" + v.name, Call: func() error { return apitest.WantZero(len(s.Schema().Features) == 0, s.Schema()) }},
		)
	}
	for _, v := range []struct {
		name string
		w    *Writer
	}{{"nil", nw}, {"zero", zw}} {
		w := v.w
		calls = append(calls,
			apitest.Case{Name: "Writer.Abort/" + v.name, Call: func() error { w.Abort(); return nil }},
			apitest.Case{Name: "Writer.Commit/" + v.name, Call: func() error { return apitest.WantErr(w.Commit(), "parquetio: Writer not created by Create") }},
			apitest.Case{Name: "Writer.Path/" + v.name, Call: func() error { return apitest.WantZero(w.Path() == "", w.Path()) }},
			apitest.Case{Name: "Writer.Rows/" + v.name, Call: func() error { return apitest.WantZero(w.Rows() == 0, w.Rows()) }},
			apitest.Case{Name: "Writer.Write/" + v.name, Call: func() error { return apitest.WantErr(w.Write(nil), "parquetio: Writer not created by Create") }},
			apitest.Case{Name: "Writer.WriteBlock/" + v.name, Call: func() error {
				return apitest.WantErr(w.WriteBlock(block, mat.NewDense(1, 1, nil), []string{"a"}, nil), "parquetio: Writer not created by Create")
			}},
		)
	}
	calls = append(calls,
		apitest.Case{Name: "ColumnKind.String/zero", Call: func() error {
			return apitest.WantZero(ColumnKind(0).String() == "ColumnKind(0)", ColumnKind(0).String())
		}},
		apitest.Case{Name: "ColumnKind.String/negative", Call: func() error {
			return apitest.WantZero(ColumnKind(-1).String() == "ColumnKind(-1)", ColumnKind(-1).String())
		}},
		apitest.Case{Name: "KeyValues/empty path", Call: func() error { _, err := KeyValues(""); return apitest.WantErr(err, "open") }},
		apitest.Case{Name: "KeyValues/folder", Call: func() error { _, err := KeyValues(dir); return apitest.WantErr(err, "not a regular file") }},
	)
	apitest.Check(t, ".", calls, 13)
}
