package fcs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// raiseTot rewrites the first "$TOT/<from>/" of a written file as
// "$TOT/<to>/" (same length, so no offset moves).
func raiseTot(t *testing.T, raw []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) {
		t.Fatalf("raiseTot %q -> %q changes the length", from, to)
	}
	old := []byte("/$TOT/" + from + "/")
	i := bytes.Index(raw, old)
	if i < 0 {
		t.Fatalf("no %s in the file", old)
	}
	out := append([]byte(nil), raw...)
	copy(out[i:], "/$TOT/"+to+"/")
	return out
}

// TestEventsWithinSegment raises $TOT above the events a DATA segment holds:
// the reader must report the truncation and never decode the bytes after
// the segment (an ANALYSIS segment, the next data set's HEADER) as events.
func TestEventsWithinSegment(t *testing.T) {
	three := mat.NewDense(3, 1, []float64{1, 2, 3})
	one := &DataSet{Params: []Param{{Name: "FL1-A"}}, Events: three}
	withAnalysis := &DataSet{Params: []Param{{Name: "FL1-A"}}, Events: three, Analysis: []byte("gates: lymphocytes, CD3+ T cells")}
	second := &DataSet{Params: []Param{{Name: "FL1-A"}}, Events: mat.NewDense(2, 1, []float64{7, 8})}
	for _, tc := range []struct {
		name string
		sets []*DataSet
	}{
		{"single", []*DataSet{one}},
		{"with ANALYSIS", []*DataSet{withAnalysis}},
		{"chain", []*DataSet{one, second}},
	} {
		raw := raiseTot(t, mustWrite(t, tc.sets...), "3", "5")
		sets, err := ParseAll(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := sets[0]
		if f.NumEvents() != 5 || f.EventsPresent() != 3 {
			t.Errorf("%s: $TOT %d, %d events present; want 5, 3", tc.name, f.NumEvents(), f.EventsPresent())
		}
		_, err = f.ReadAll(EventOptions{})
		var te *TruncatedError
		if !errors.As(err, &te) || te.Expected != 5 || te.Present != 3 {
			t.Errorf("%s: ReadAll: %v, want a truncation 5 / 3", tc.name, err)
		}
		x, err := f.ReadAll(EventOptions{AllowTruncated: true, BufferBytes: 4})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !mat.Equal(x, three) {
			t.Errorf("%s: AllowTruncated read %v, want [1 2 3]", tc.name, x.RawMatrix().Data)
		}
		in, err := f.Info()
		if !errors.As(err, &te) || in.Events != 5 || len(in.LastEvent) != 1 || in.LastEvent[0] != 3 {
			t.Errorf("%s: Info %+v, %v; want last event 3 and the truncation", tc.name, in, err)
		}
		if len(sets) > 1 {
			y, err := sets[1].ReadAll(EventOptions{})
			if err != nil || !mat.Equal(y, second.Events) {
				t.Errorf("%s: second data set %v, %v", tc.name, y, err)
			}
		}
		// What follows the segment is what a read past it would return as
		// events 4 and 5: the ANALYSIS text (the float32 7.2e22 for
		// "gate") or the next data set's HEADER.
		switch rest := string(raw[f.DataOffset()+12:]); tc.name {
		case "with ANALYSIS":
			if !strings.HasPrefix(rest, "gates") {
				t.Errorf("%s: DATA followed by %.10q", tc.name, rest)
			}
		case "chain":
			if !strings.HasPrefix(rest, "FCS3.1") {
				t.Errorf("%s: DATA followed by %.10q", tc.name, rest)
			}
		}
	}
}

// TestTruncatedMessage checks that the truncation error tells how to read
// the complete events (the command says it with its flag).
func TestTruncatedMessage(t *testing.T) {
	msg := (&TruncatedError{Expected: 10000, Present: 6052}).Error()
	for _, want := range []string{"10000", "6052", "EventOptions.AllowTruncated reads the complete ones"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestChainOverlappingText builds a chain whose data sets all point at one
// TEXT segment: ParseAll must refuse it instead of parsing the TEXT once per
// data set.
func TestChainOverlappingText(t *testing.T) {
	const sets = 40
	text := "/$BYTEORD/1,2,3,4/$DATATYPE/F/$MODE/L/$PAR/1/$TOT/0/$P1B/32/$NEXTDATA/58/#PAD/" + strings.Repeat("x", 4000) + "/"
	textAt := int64(sets * HeaderLen)
	var raw []byte
	for k := 0; k < sets; k++ {
		base := int64(k * HeaderLen)
		rel := textAt - base
		h := "FCS3.0    " + padLeft(int(rel)) + padLeft(int(rel)+len(text)-1) + "       0       0       0       0"
		raw = append(raw, h...)
	}
	raw = append(raw, text...)
	_, err := ParseAll(bytes.NewReader(raw), int64(len(raw)))
	if err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("ParseAll of %d data sets sharing one TEXT: %v", sets, err)
	}
	// The first data set alone is fine.
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || f.NumParams() != 1 {
		t.Fatalf("Parse: %v", err)
	}
}

// TestChainOverlappingData builds a chain whose data sets all read one DATA
// segment, the rest of the file: reading every data set's events would cost
// (data sets) x (file bytes), so ParseAll must refuse it. The first data set
// alone is fine.
func TestChainOverlappingData(t *testing.T) {
	const sets, setLen = 40, HeaderLen + 100
	size := sets * setLen
	var raw []byte
	for k := 0; k < sets; k++ {
		next := setLen
		if k == sets-1 {
			next = 0
		}
		text := fmt.Sprintf("/$BYTEORD/1,2/$DATATYPE/I/$MODE/L/$PAR/1/$TOT/%d/$P1B/16/$NEXTDATA/%d/", (size-k*setLen-setLen)/2, next)
		text += strings.Repeat(" ", 100-len(text))
		h := "FCS3.0    " + padLeft(HeaderLen) + padLeft(HeaderLen+len(text)-1) + padLeft(setLen) + padLeft(size-k*setLen-1) + "       0       0"
		raw = append(raw, h...)
		raw = append(raw, text...)
	}
	_, err := ParseAll(bytes.NewReader(raw), int64(len(raw)))
	if err == nil || !strings.Contains(err.Error(), "DATA segments overlap") {
		t.Fatalf("ParseAll of %d data sets reading one DATA segment: %v", sets, err)
	}
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || f.EventsPresent() != (size-setLen)/2 {
		t.Fatalf("Parse: %v", err)
	}
}
