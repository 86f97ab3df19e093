package fcs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/apitest"
	"gonum.org/v1/gonum/mat"
)

// nilCall is one call of an exported function or method with nil, zero or
// negative arguments. It returns an error describing a wrong result (nil
// when the result is an error, or the documented zero result).
type nilCall struct {
	name string // "Func" or "Type.Method", then "/variant"
	call func() error
}

// wantErr turns the error returned by a call that must fail into the
// check's result.
func wantErr(err error) error {
	if err == nil {
		return fmt.Errorf("no error")
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

func nilCalls(t *testing.T) []nilCall {
	var (
		nf  *File
		zf  = &File{}
		ns  *Source
		zs  = &Source{}
		nr  *EventReader
		zr  = &EventReader{}
		nw  *Writer
		zw  = &Writer{}
		nsw *StreamWriter
		zsw = &StreamWriter{}
		nt  *TruncatedError
		nv  *Values
	)
	ctx := context.Background()
	good := mustWrite(t, &DataSet{Params: []Param{{Name: "A"}}, Events: mat.NewDense(2, 1, []float64{1, 2})})
	path := filepath.Join(t.TempDir(), "good.fcs")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource([]string{path}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	er, err := f.Events(EventOptions{BufferBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	calls := []nilCall{
		{"Detect/empty", func() error { return wantZero(!Detect(""), true) }},
		{"Open/empty", func() error { _, err := Open(""); return wantErr(err) }},
		{"OpenAll/empty", func() error { _, err := OpenAll(""); return wantErr(err) }},
		{"Parse/nil", func() error { _, err := Parse(nil, 100); return wantErr(err) }},
		{"Parse/negative", func() error { _, err := Parse(bytes.NewReader(good), -5); return wantErr(err) }},
		{"Parse/empty", func() error { _, err := Parse(bytes.NewReader(nil), 0); return wantErr(err) }},
		{"ParseAll/nil", func() error { _, err := ParseAll(nil, 0); return wantErr(err) }},
		{"ParseAll/negative", func() error { _, err := ParseAll(bytes.NewReader(good), -1); return wantErr(err) }},
		{"Write/nil writer", func() error { return wantErr(Write(nil, &DataSet{Params: []Param{{Name: "A"}}})) }},
		{"Write/nil set", func() error { return wantErr(Write(io.Discard, nil)) }},
		{"Write/no set", func() error { return wantErr(Write(io.Discard)) }},
		{"Write/zero set", func() error { return wantErr(Write(io.Discard, &DataSet{})) }},
		{"Write/zero events", func() error {
			return wantErr(Write(io.Discard, &DataSet{Params: []Param{{Name: "A"}}, Events: &mat.Dense{}}))
		}},
		{"Write/nil params", func() error { return wantErr(Write(io.Discard, &DataSet{Events: mat.NewDense(1, 1, nil)})) }},
		{"WriteFile/nil set", func() error { return wantErr(WriteFile(filepath.Join(t.TempDir(), "x.fcs"), nil)) }},
		{"WriteFile/empty path", func() error { return wantErr(WriteFile("", &DataSet{Params: []Param{{Name: "A"}}})) }},
		{"NewWriter/nil writer", func() error {
			_, err := NewWriter(nil, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, 1)
			return wantErr(err)
		}},
		{"NewWriter/nil set", func() error { _, err := NewWriter(io.Discard, nil, 1); return wantErr(err) }},
		{"NewWriter/zero set", func() error { _, err := NewWriter(io.Discard, &DataSet{}, 0); return wantErr(err) }},
		{"NewWriter/negative", func() error {
			_, err := NewWriter(io.Discard, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, -1)
			return wantErr(err)
		}},
		{"Writer.WriteEvent/nil", func() error { return wantErr(nw.WriteEvent([]float64{1})) }},
		{"Writer.WriteEvent/zero", func() error { return wantErr(zw.WriteEvent(nil)) }},
		{"Writer.WriteEvent/nil values", func() error {
			w, err := NewWriter(io.Discard, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, 1)
			if err != nil {
				return err
			}
			return wantErr(w.WriteEvent(nil))
		}},
		{"Writer.Close/nil", func() error { return wantErr(nw.Close()) }},
		{"Writer.Close/zero", func() error { return wantErr(zw.Close()) }},
		{"NewStreamWriter/nil output", func() error {
			_, err := NewStreamWriter(nil, &DataSet{Params: []Param{{Name: "A"}}}, 0)
			return wantErr(err)
		}},
		{"NewStreamWriter/nil set", func() error { _, err := NewStreamWriter(newMemFile(), nil, 0); return wantErr(err) }},
		{"NewStreamWriter/zero set", func() error { _, err := NewStreamWriter(newMemFile(), &DataSet{}, 0); return wantErr(err) }},
		{"NewStreamWriter/negative", func() error {
			_, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, -1)
			return wantErr(err)
		}},
		{"StreamWriter.WriteEvent/nil", func() error { return wantErr(nsw.WriteEvent([]float64{1})) }},
		{"StreamWriter.WriteEvent/zero", func() error { return wantErr(zsw.WriteEvent(nil)) }},
		{"StreamWriter.WriteEvent/nil values", func() error {
			w, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, 0)
			if err != nil {
				return err
			}
			return wantErr(w.WriteEvent(nil))
		}},
		{"StreamWriter.Close/nil", func() error { return wantErr(nsw.Close(nil)) }},
		{"StreamWriter.Close/zero", func() error { return wantErr(zsw.Close(nil)) }},
		{"StreamWriter.Close/zero set", func() error {
			w, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, 0)
			if err != nil {
				return err
			}
			return wantErr(w.Close(&DataSet{}))
		}},
		{"NewSourceContext/nil context", func() error {
			_, err := NewSourceContext(nil, []string{path}, SourceOptions{}) //nolint:staticcheck
			return wantErr(err)
		}},
		{"NewSourceContext/nil", func() error { _, err := NewSourceContext(ctx, nil, SourceOptions{}); return wantErr(err) }},
		{"NewSourceContext/negative", func() error {
			_, err := NewSourceContext(ctx, []string{path}, SourceOptions{MaxDataSets: -1})
			return wantErr(err)
		}},
		{"NewSource/nil", func() error { _, err := NewSource(nil, SourceOptions{}); return wantErr(err) }},
		{"NewSource/empty path", func() error { _, err := NewSource([]string{""}, SourceOptions{}); return wantErr(err) }},
		{"NewSource/zero spillover", func() error {
			_, err := NewSource([]string{path}, SourceOptions{Spillover: &Spillover{}})
			return wantErr(err)
		}},
		{"NewSource/empty matrix", func() error {
			_, err := NewSource([]string{path}, SourceOptions{Spillover: &Spillover{Channels: []string{"A"}, Matrix: &mat.Dense{}}})
			return wantErr(err)
		}},
		{"NewSource/empty channels", func() error {
			_, err := NewSource([]string{path}, SourceOptions{Channels: []string{}})
			return wantErr(err)
		}},
		{"Param.ForFloat/zero", func() error { _, err := (Param{}).ForFloat(0, 0); return err }},
		{"Param.Linear/zero", func() error { return wantZero((Param{}).Linear(3) == 3, nil) }},
		{"Info.WriteText/nil writer", func() error { return wantErr(Info{}.WriteText(nil)) }},
		{"Info.WriteText/zero", func() error { return Info{}.WriteText(io.Discard) }},
		{"TruncatedError.Error/nil", func() error { return wantZero(nt.Error() != "", nil) }},
		{"Values.MarshalJSON/nil", func() error {
			b, err := Values(nil).MarshalJSON()
			return wantZero(err == nil && string(b) == "null", b)
		}},
		{"Values.UnmarshalJSON/nil", func() error { return wantErr(nv.UnmarshalJSON([]byte("[1]"))) }},
		{"Values.UnmarshalJSON/empty", func() error { var v Values; return wantErr(v.UnmarshalJSON(nil)) }},
		{"EventReader.Len/nil", func() error { return wantZero(nr.Len() == 0, nr.Len()) }},
		{"EventReader.Len/zero", func() error { return wantZero(zr.Len() == 0, zr.Len()) }},
		{"EventReader.NumParams/nil", func() error { return wantZero(nr.NumParams() == 0, nil) }},
		{"EventReader.NumParams/zero", func() error { return wantZero(zr.NumParams() == 0, nil) }},
		{"EventReader.Read/nil", func() error { _, err := nr.Read(make([]float64, 4), 1); return wantErr(err) }},
		{"EventReader.Read/zero", func() error { _, err := zr.Read(nil, 1); return wantZero(err == io.EOF, err) }},
		{"EventReader.Read/negative", func() error { _, err := er.Read(make([]float64, 4), -1); return wantErr(err) }},
		{"EventReader.Read/nil dst", func() error { _, err := er.Read(nil, 1); return wantErr(err) }},
		{"Source.Open/nil context", func() error { _, err := src.Open(nil); return wantErr(err) }}, //nolint:staticcheck
		{"Source.Skim/nil functions", func() error { _, err := src.Skim(ctx, nil, nil); return wantErr(err) }},
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
	// Every method of File, Source on a nil pointer and a zero value.
	for _, v := range []struct {
		name string
		f    *File
	}{{"nil", nf}, {"zero", zf}} {
		f := v.f
		calls = append(calls,
			nilCall{"File.Analysis/" + v.name, func() error { _, err := f.Analysis(); return wantErr(err) }},
			nilCall{"File.ByteOrder/" + v.name, func() error { return wantZero(f.ByteOrder() == "", nil) }},
			nilCall{"File.Close/" + v.name, func() error { return f.Close() }},
			nilCall{"File.DataOffset/" + v.name, func() error { return wantZero(f.DataOffset() == 0, nil) }},
			nilCall{"File.DataType/" + v.name, func() error { return wantZero(f.DataType() == 0, nil) }},
			nilCall{"File.EventBytes/" + v.name, func() error { return wantZero(f.EventBytes() == 0, nil) }},
			nilCall{"File.Events/" + v.name, func() error { _, err := f.Events(EventOptions{}); return wantErr(err) }},
			nilCall{"File.EventsPresent/" + v.name, func() error { return wantZero(f.EventsPresent() == 0, nil) }},
			nilCall{"File.FindParam/" + v.name, func() error { return wantZero(f.FindParam("A") == -1, nil) }},
			nilCall{"File.Info/" + v.name, func() error { _, err := f.Info(); return wantErr(err) }},
			nilCall{"File.Keyword/" + v.name, func() error { _, ok := f.Keyword("$TOT"); return wantZero(!ok, nil) }},
			nilCall{"File.Keywords/" + v.name, func() error { return wantZero(len(f.Keywords()) == 0, nil) }},
			nilCall{"File.Labels/" + v.name, func() error { return wantZero(len(f.Labels()) == 0, nil) }},
			nilCall{"File.LookupParam/" + v.name, func() error { _, err := f.LookupParam("A"); return wantErr(err) }},
			nilCall{"File.Names/" + v.name, func() error { return wantZero(len(f.Names()) == 0, nil) }},
			nilCall{"File.NextData/" + v.name, func() error { return wantZero(f.NextData() == 0, nil) }},
			nilCall{"File.NumEvents/" + v.name, func() error { return wantZero(f.NumEvents() == 0, nil) }},
			nilCall{"File.NumParams/" + v.name, func() error { return wantZero(f.NumParams() == 0, nil) }},
			nilCall{"File.Params/" + v.name, func() error { return wantZero(len(f.Params()) == 0, nil) }},
			nilCall{"File.ReadAll/" + v.name, func() error { _, err := f.ReadAll(EventOptions{}); return wantErr(err) }},
			nilCall{"File.Spillover/" + v.name, func() error { _, err := f.Spillover(); return wantErr(err) }},
			nilCall{"File.Version/" + v.name, func() error { return wantZero(f.Version() == "", nil) }},
			nilCall{"File.Warnings/" + v.name, func() error { return wantZero(len(f.Warnings()) == 0, nil) }},
		)
	}
	for _, v := range []struct {
		name string
		s    *Source
	}{{"nil", ns}, {"zero", zs}} {
		s := v.s
		calls = append(calls,
			nilCall{"Source.Channels/" + v.name, func() error { return wantZero(s.Channels() == nil, nil) }},
			nilCall{"Source.Compensations/" + v.name, func() error { return wantZero(s.Compensations() == nil, nil) }},
			nilCall{"Source.Domains/" + v.name, func() error { return wantZero(len(s.Domains()) == 0, nil) }},
			nilCall{"Source.Files/" + v.name, func() error { return wantZero(len(s.Files()) == 0, nil) }},
			nilCall{"Source.Keywords/" + v.name, func() error { return wantZero(s.Keywords() == nil, nil) }},
			nilCall{"Source.Len/" + v.name, func() error { return wantZero(s.Len() == 0, nil) }},
			nilCall{"Source.Open/" + v.name, func() error { _, err := s.Open(ctx); return wantErr(err) }},
			nilCall{"Source.Params/" + v.name, func() error { return wantZero(len(s.Params()) == 0, nil) }},
			nilCall{"Source.Schema/" + v.name, func() error { return wantZero(len(s.Schema().Features) == 0, nil) }},
			nilCall{"Source.Skim/" + v.name, func() error {
				_, err := s.Skim(ctx, func(int64) bool { return true }, func(x, y []float64) error { return nil })
				return wantErr(err)
			}},
			nilCall{"Source.Warnings/" + v.name, func() error { return wantZero(s.Warnings() == nil, nil) }},
		)
	}
	return calls
}

// TestNilAndZero calls every exported function and method of the package
// with nil pointers, nil slices, zero values and negative counts: each
// returns an error or its documented zero result, and none panics. The
// list of calls is checked against the package's exported names, so a new
// one cannot be left out.
func TestNilAndZero(t *testing.T) {
	calls := nilCalls(t)
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
	if len(want)-len(apitest.Missing(want, names)) < 50 {
		t.Errorf("only %d names covered", len(want))
	}
}
