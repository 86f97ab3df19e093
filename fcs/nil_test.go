package fcs

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dicalab/dica/internal/testsupport/apitest"
	"github.com/dicalab/dica/internal/testsupport/sourcetest"
	"gonum.org/v1/gonum/mat"
)

func nilCalls(t *testing.T) []apitest.Case {
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
	calls := []apitest.Case{
		{Name: "Detect/empty", Call: func() error { return apitest.WantZero(!Detect(""), true) }},
		{Name: "Open/empty", Call: func() error { _, err := Open(""); return apitest.WantErr(err, "") }},
		{Name: "OpenAll/empty", Call: func() error { _, err := OpenAll(""); return apitest.WantErr(err, "") }},
		{Name: "Parse/nil", Call: func() error { _, err := Parse(nil, 100); return apitest.WantErr(err, "") }},
		{Name: "Parse/negative", Call: func() error { _, err := Parse(bytes.NewReader(good), -5); return apitest.WantErr(err, "") }},
		{Name: "Parse/empty", Call: func() error { _, err := Parse(bytes.NewReader(nil), 0); return apitest.WantErr(err, "") }},
		{Name: "ParseAll/nil", Call: func() error { _, err := ParseAll(nil, 0); return apitest.WantErr(err, "") }},
		{Name: "ParseAll/negative", Call: func() error { _, err := ParseAll(bytes.NewReader(good), -1); return apitest.WantErr(err, "") }},
		{Name: "Write/nil writer", Call: func() error { return apitest.WantErr(Write(nil, &DataSet{Params: []Param{{Name: "A"}}}), "") }},
		{Name: "Write/nil set", Call: func() error { return apitest.WantErr(Write(io.Discard, nil), "") }},
		{Name: "Write/no set", Call: func() error { return apitest.WantErr(Write(io.Discard), "") }},
		{Name: "Write/zero set", Call: func() error { return apitest.WantErr(Write(io.Discard, &DataSet{}), "") }},
		{Name: "Write/zero events", Call: func() error {
			return apitest.WantErr(Write(io.Discard, &DataSet{Params: []Param{{Name: "A"}}, Events: &mat.Dense{}}), "")
		}},
		{Name: "Write/nil params", Call: func() error { return apitest.WantErr(Write(io.Discard, &DataSet{Events: mat.NewDense(1, 1, nil)}), "") }},
		{Name: "WriteFile/nil set", Call: func() error { return apitest.WantErr(WriteFile(filepath.Join(t.TempDir(), "x.fcs"), nil), "") }},
		{Name: "WriteFile/empty path", Call: func() error { return apitest.WantErr(WriteFile("", &DataSet{Params: []Param{{Name: "A"}}}), "") }},
		{Name: "NewWriter/nil writer", Call: func() error {
			_, err := NewWriter(nil, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, 1)
			return apitest.WantErr(err, "")
		}},
		{Name: "NewWriter/nil set", Call: func() error { _, err := NewWriter(io.Discard, nil, 1); return apitest.WantErr(err, "") }},
		{Name: "NewWriter/zero set", Call: func() error { _, err := NewWriter(io.Discard, &DataSet{}, 0); return apitest.WantErr(err, "") }},
		{Name: "NewWriter/negative", Call: func() error {
			_, err := NewWriter(io.Discard, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, -1)
			return apitest.WantErr(err, "")
		}},
		{Name: "Writer.WriteEvent/nil", Call: func() error { return apitest.WantErr(nw.WriteEvent([]float64{1}), "") }},
		{Name: "Writer.WriteEvent/zero", Call: func() error { return apitest.WantErr(zw.WriteEvent(nil), "") }},
		{Name: "Writer.WriteEvent/nil values", Call: func() error {
			w, err := NewWriter(io.Discard, &DataSet{Params: []Param{{Name: "A", Range: 1}}}, 1)
			if err != nil {
				return err
			}
			return apitest.WantErr(w.WriteEvent(nil), "")
		}},
		{Name: "Writer.Close/nil", Call: func() error { return apitest.WantErr(nw.Close(), "") }},
		{Name: "Writer.Close/zero", Call: func() error { return apitest.WantErr(zw.Close(), "") }},
		{Name: "NewStreamWriter/nil output", Call: func() error {
			_, err := NewStreamWriter(nil, &DataSet{Params: []Param{{Name: "A"}}}, 0)
			return apitest.WantErr(err, "")
		}},
		{Name: "NewStreamWriter/nil set", Call: func() error { _, err := NewStreamWriter(newMemFile(), nil, 0); return apitest.WantErr(err, "") }},
		{Name: "NewStreamWriter/zero set", Call: func() error { _, err := NewStreamWriter(newMemFile(), &DataSet{}, 0); return apitest.WantErr(err, "") }},
		{Name: "NewStreamWriter/negative", Call: func() error {
			_, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, -1)
			return apitest.WantErr(err, "")
		}},
		{Name: "StreamWriter.WriteEvent/nil", Call: func() error { return apitest.WantErr(nsw.WriteEvent([]float64{1}), "") }},
		{Name: "StreamWriter.WriteEvent/zero", Call: func() error { return apitest.WantErr(zsw.WriteEvent(nil), "") }},
		{Name: "StreamWriter.WriteEvent/nil values", Call: func() error {
			w, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, 0)
			if err != nil {
				return err
			}
			return apitest.WantErr(w.WriteEvent(nil), "")
		}},
		{Name: "StreamWriter.Close/nil", Call: func() error { return apitest.WantErr(nsw.Close(nil), "") }},
		{Name: "StreamWriter.Close/zero", Call: func() error { return apitest.WantErr(zsw.Close(nil), "") }},
		{Name: "StreamWriter.Close/zero set", Call: func() error {
			w, err := NewStreamWriter(newMemFile(), &DataSet{Params: []Param{{Name: "A"}}}, 0)
			if err != nil {
				return err
			}
			return apitest.WantErr(w.Close(&DataSet{}), "")
		}},
		{Name: "NewSourceContext/nil context", Call: func() error {
			_, err := NewSourceContext(nil, []string{path}, SourceOptions{}) //nolint:staticcheck
			return apitest.WantErr(err, "")
		}},
		{Name: "NewSourceContext/nil", Call: func() error { _, err := NewSourceContext(ctx, nil, SourceOptions{}); return apitest.WantErr(err, "") }},
		{Name: "NewSourceContext/negative", Call: func() error {
			_, err := NewSourceContext(ctx, []string{path}, SourceOptions{MaxDataSets: -1})
			return apitest.WantErr(err, "")
		}},
		{Name: "NewSource/nil", Call: func() error { _, err := NewSource(nil, SourceOptions{}); return apitest.WantErr(err, "") }},
		{Name: "NewSource/empty path", Call: func() error { _, err := NewSource([]string{""}, SourceOptions{}); return apitest.WantErr(err, "") }},
		{Name: "NewSource/zero spillover", Call: func() error {
			_, err := NewSource([]string{path}, SourceOptions{Spillover: &Spillover{}})
			return apitest.WantErr(err, "")
		}},
		{Name: "NewSource/empty matrix", Call: func() error {
			_, err := NewSource([]string{path}, SourceOptions{Spillover: &Spillover{Channels: []string{"A"}, Matrix: &mat.Dense{}}})
			return apitest.WantErr(err, "")
		}},
		{Name: "NewSource/empty channels", Call: func() error {
			_, err := NewSource([]string{path}, SourceOptions{Channels: []string{}})
			return apitest.WantErr(err, "")
		}},
		{Name: "Param.ForFloat/zero", Call: func() error { _, err := (Param{}).ForFloat(0, 0); return err }},
		{Name: "Param.Linear/zero", Call: func() error { return apitest.WantZero((Param{}).Linear(3) == 3, nil) }},
		{Name: "Info.WriteText/nil writer", Call: func() error { return apitest.WantErr(Info{}.WriteText(nil), "") }},
		{Name: "Info.WriteText/zero", Call: func() error { return Info{}.WriteText(io.Discard) }},
		{Name: "TruncatedError.Error/nil", Call: func() error { return apitest.WantZero(nt.Error() != "", nil) }},
		{Name: "Values.MarshalJSON/nil", Call: func() error {
			b, err := Values(nil).MarshalJSON()
			return apitest.WantZero(err == nil && string(b) == "null", b)
		}},
		{Name: "Values.UnmarshalJSON/nil", Call: func() error { return apitest.WantErr(nv.UnmarshalJSON([]byte("[1]")), "") }},
		{Name: "Values.UnmarshalJSON/empty", Call: func() error { var v Values; return apitest.WantErr(v.UnmarshalJSON(nil), "") }},
		{Name: "EventReader.Len/nil", Call: func() error { return apitest.WantZero(nr.Len() == 0, nr.Len()) }},
		{Name: "EventReader.Len/zero", Call: func() error { return apitest.WantZero(zr.Len() == 0, zr.Len()) }},
		{Name: "EventReader.NumParams/nil", Call: func() error { return apitest.WantZero(nr.NumParams() == 0, nil) }},
		{Name: "EventReader.NumParams/zero", Call: func() error { return apitest.WantZero(zr.NumParams() == 0, nil) }},
		{Name: "EventReader.Read/nil", Call: func() error { _, err := nr.Read(make([]float64, 4), 1); return apitest.WantErr(err, "") }},
		{Name: "EventReader.Read/zero", Call: func() error { _, err := zr.Read(nil, 1); return apitest.WantZero(err == io.EOF, err) }},
		{Name: "EventReader.Read/negative", Call: func() error { _, err := er.Read(make([]float64, 4), -1); return apitest.WantErr(err, "") }},
		{Name: "EventReader.Read/nil dst", Call: func() error { _, err := er.Read(nil, 1); return apitest.WantErr(err, "") }},
		{Name: "Source.Open/nil context", Call: func() error { _, err := src.Open(nil); return apitest.WantErr(err, "") }}, //nolint:staticcheck
		{Name: "Source.Skim/nil functions", Call: func() error { _, err := src.Skim(ctx, nil, nil); return apitest.WantErr(err, "") }},
		{Name: "Source.Open/reader", Call: func() error { return sourcetest.RefusesBadReads(ctx, src) }},
	}
	// Every method of File, Source on a nil pointer and a zero value.
	for _, v := range []struct {
		name string
		f    *File
	}{{"nil", nf}, {"zero", zf}} {
		f := v.f
		calls = append(calls,
			apitest.Case{Name: "File.Analysis/" + v.name, Call: func() error { _, err := f.Analysis(); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.ByteOrder/" + v.name, Call: func() error { return apitest.WantZero(f.ByteOrder() == "", nil) }},
			apitest.Case{Name: "File.Close/" + v.name, Call: func() error { return f.Close() }},
			apitest.Case{Name: "File.DataOffset/" + v.name, Call: func() error { return apitest.WantZero(f.DataOffset() == 0, nil) }},
			apitest.Case{Name: "File.DataType/" + v.name, Call: func() error { return apitest.WantZero(f.DataType() == 0, nil) }},
			apitest.Case{Name: "File.EventBytes/" + v.name, Call: func() error { return apitest.WantZero(f.EventBytes() == 0, nil) }},
			apitest.Case{Name: "File.Events/" + v.name, Call: func() error { _, err := f.Events(EventOptions{}); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.EventsPresent/" + v.name, Call: func() error { return apitest.WantZero(f.EventsPresent() == 0, nil) }},
			apitest.Case{Name: "File.FindParam/" + v.name, Call: func() error { return apitest.WantZero(f.FindParam("A") == -1, nil) }},
			apitest.Case{Name: "File.Info/" + v.name, Call: func() error { _, err := f.Info(); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.Keyword/" + v.name, Call: func() error { _, ok := f.Keyword("$TOT"); return apitest.WantZero(!ok, nil) }},
			apitest.Case{Name: "File.Keywords/" + v.name, Call: func() error { return apitest.WantZero(len(f.Keywords()) == 0, nil) }},
			apitest.Case{Name: "File.Labels/" + v.name, Call: func() error { return apitest.WantZero(len(f.Labels()) == 0, nil) }},
			apitest.Case{Name: "File.LookupParam/" + v.name, Call: func() error { _, err := f.LookupParam("A"); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.Names/" + v.name, Call: func() error { return apitest.WantZero(len(f.Names()) == 0, nil) }},
			apitest.Case{Name: "File.NextData/" + v.name, Call: func() error { return apitest.WantZero(f.NextData() == 0, nil) }},
			apitest.Case{Name: "File.NumEvents/" + v.name, Call: func() error { return apitest.WantZero(f.NumEvents() == 0, nil) }},
			apitest.Case{Name: "File.NumParams/" + v.name, Call: func() error { return apitest.WantZero(f.NumParams() == 0, nil) }},
			apitest.Case{Name: "File.Params/" + v.name, Call: func() error { return apitest.WantZero(len(f.Params()) == 0, nil) }},
			apitest.Case{Name: "File.ReadAll/" + v.name, Call: func() error { _, err := f.ReadAll(EventOptions{}); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.Spillover/" + v.name, Call: func() error { _, err := f.Spillover(); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "File.Version/" + v.name, Call: func() error { return apitest.WantZero(f.Version() == "", nil) }},
			apitest.Case{Name: "File.Warnings/" + v.name, Call: func() error { return apitest.WantZero(len(f.Warnings()) == 0, nil) }},
		)
	}
	for _, v := range []struct {
		name string
		s    *Source
	}{{"nil", ns}, {"zero", zs}} {
		s := v.s
		calls = append(calls,
			apitest.Case{Name: "Source.Channels/" + v.name, Call: func() error { return apitest.WantZero(s.Channels() == nil, nil) }},
			apitest.Case{Name: "Source.Compensations/" + v.name, Call: func() error { return apitest.WantZero(s.Compensations() == nil, nil) }},
			apitest.Case{Name: "Source.Domains/" + v.name, Call: func() error { return apitest.WantZero(len(s.Domains()) == 0, nil) }},
			apitest.Case{Name: "Source.Files/" + v.name, Call: func() error { return apitest.WantZero(len(s.Files()) == 0, nil) }},
			apitest.Case{Name: "Source.Keywords/" + v.name, Call: func() error { return apitest.WantZero(s.Keywords() == nil, nil) }},
			apitest.Case{Name: "Source.Len/" + v.name, Call: func() error { return apitest.WantZero(s.Len() == 0, nil) }},
			apitest.Case{Name: "Source.Open/" + v.name, Call: func() error { _, err := s.Open(ctx); return apitest.WantErr(err, "") }},
			apitest.Case{Name: "Source.Params/" + v.name, Call: func() error { return apitest.WantZero(len(s.Params()) == 0, nil) }},
			apitest.Case{Name: "Source.Schema/" + v.name, Call: func() error { return apitest.WantZero(len(s.Schema().Features) == 0, nil) }},
			apitest.Case{Name: "Source.Skim/" + v.name, Call: func() error {
				_, err := s.Skim(ctx, func(int64) bool { return true }, func(x, y []float64) error { return nil })
				return apitest.WantErr(err, "")
			}},
			apitest.Case{Name: "Source.Warnings/" + v.name, Call: func() error { return apitest.WantZero(s.Warnings() == nil, nil) }},
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
	apitest.Check(t, ".", nilCalls(t), 50)
}
