package fcs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// memFile is an in-memory ReadWriterAt. Pages that were only ever written
// with zeros are not stored (sparse), so that files of hundreds of MB of
// zeros cost no memory.
type memFile struct {
	pages  map[int64][]byte
	size   int64
	writes int   // calls of WriteAt
	failAt int64 // WriteAt at or past this offset fails (0: never)
}

const memPage = 1 << 16

func newMemFile() *memFile { return &memFile{pages: map[int64][]byte{}} }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	m.writes++
	if m.failAt > 0 && off+int64(len(p)) > m.failAt {
		return 0, errors.New("no space left on device")
	}
	for i := 0; i < len(p); {
		o := off + int64(i)
		pg, at := o/memPage, int(o%memPage)
		k := min(len(p)-i, memPage-at)
		chunk := p[i : i+k]
		if page, ok := m.pages[pg]; ok {
			copy(page[at:], chunk)
		} else if !allZero(chunk) {
			page = make([]byte, memPage)
			copy(page[at:], chunk)
			m.pages[pg] = page
		}
		i += k
	}
	m.size = max(m.size, off+int64(len(p)))
	return len(p), nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		o := off + int64(i)
		if o >= m.size {
			return i, io.EOF
		}
		p[i] = 0
		if page, ok := m.pages[o/memPage]; ok {
			p[i] = page[o%memPage]
		}
	}
	return len(p), nil
}

// bytes returns the file's contents.
func (m *memFile) bytes() []byte {
	b := make([]byte, m.size)
	m.ReadAt(b, 0)
	return b
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// stream writes the events of ds (Events set) with a StreamWriter that is
// given ds without its events, then final (nil: none).
func stream(t *testing.T, ds *DataSet, reserve int, final *DataSet) (*memFile, *StreamWriter) {
	t.Helper()
	desc := *ds
	desc.Events = nil
	m := newMemFile()
	w, err := NewStreamWriter(m, &desc, reserve)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Events != nil {
		for i := range ds.Events.RawMatrix().Rows {
			if err := w.WriteEvent(ds.Events.RawRowView(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(final); err != nil {
		t.Fatal(err)
	}
	return m, w
}

// sameFile checks that the streamed file, read by Parse, has the keywords,
// parameters, DATA bytes and events of the file Write made, apart from the
// DATA offsets, and that its TEXT ends at the HEADER's offset with spaces
// up to the DATA.
func sameFile(t *testing.T, what string, streamed, whole []byte) {
	t.Helper()
	fs, err := Parse(bytes.NewReader(streamed), int64(len(streamed)))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	fw, err := Parse(bytes.NewReader(whole), int64(len(whole)))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Warnings()) > 0 {
		t.Errorf("%s: warnings %q", what, fs.Warnings())
	}
	drop := func(kw []Keyword) []Keyword {
		var out []Keyword
		for _, k := range kw {
			if k.Key != "$BEGINDATA" && k.Key != "$ENDDATA" {
				out = append(out, k)
			}
		}
		return out
	}
	if got, want := drop(fs.Keywords()), drop(fw.Keywords()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: keywords\n%v\nwant\n%v", what, got, want)
	}
	if fmt.Sprint(fs.Params()) != fmt.Sprint(fw.Params()) {
		t.Errorf("%s: parameters %v, want %v", what, fs.Params(), fw.Params())
	}
	n := int64(fw.NumEvents()) * int64(fw.EventBytes())
	if fs.NumEvents() != fw.NumEvents() || !bytes.Equal(streamed[fs.DataOffset():fs.DataOffset()+n], whole[fw.DataOffset():fw.DataOffset()+n]) {
		t.Errorf("%s: %d events, want %d, or DATA bytes differ", what, fs.NumEvents(), fw.NumEvents())
	}
	if end := fs.DataOffset() + n; n > 0 && end != int64(len(streamed)) {
		t.Errorf("%s: DATA ends at %d of %d bytes", what, end, len(streamed))
	}
	textEnd, _ := strconv.ParseInt(strings.TrimSpace(string(streamed[18:26])), 10, 64)
	if streamed[HeaderLen] != streamed[textEnd] {
		t.Errorf("%s: TEXT does not end with its delimiter", what)
	}
	if gap := streamed[textEnd+1 : max(textEnd+1, fs.DataOffset())]; strings.Trim(string(gap), " ") != "" {
		t.Errorf("%s: %d bytes between TEXT and DATA are not spaces", what, len(gap))
	}
	if n > 0 {
		want, err := fw.ReadAll(EventOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadAll(EventOptions{})
		if err != nil || !mat.Equal(got, want) {
			t.Errorf("%s: events differ (%v)", what, err)
		}
	}
}

// TestStreamWriter writes data sets of every data type and byte order with
// a StreamWriter and checks each against the file Write makes of the same
// events: default F and D ranges and $PnD taken from the values, a final
// data set given to Close with other keywords and ranges, no events, and
// TEXT segments that do not fit the room reserved (the events are moved).
func TestStreamWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type tc struct {
		name    string
		ds      *DataSet
		reserve int
		final   func(ds *DataSet) *DataSet // nil: Close(nil)
		moved   bool
	}
	var cases []tc
	for _, dt := range []byte{'F', 'D', 'I'} {
		for _, big := range []bool{false, true} {
			bits := []int{0, 0, 0}
			if dt == 'I' {
				bits = []int{8, 16, 64}
			}
			ds := randomSet(rng, dt, bits, 301, big)
			ds.Keywords = []Keyword{{"$CYT", "toy"}, {"PATH", "/a/b"}}
			if dt != 'I' {
				ds.Params[1].Range = 5000 // the others from the values
				ds.Params[2].Keywords = []Keyword{{"$PnD", "Log,4,1"}}
			}
			name := fmt.Sprintf("%c big=%v", dt, big)
			cases = append(cases,
				tc{name: name, ds: ds},
				tc{name: name + " final", ds: ds, final: func(ds *DataSet) *DataSet {
					f := *ds
					f.Params = append([]Param(nil), ds.Params...)
					f.Params[0].Label = "a longer label given at the end"
					if dt != 'I' {
						f.Params[1].Range = 0
					}
					f.Keywords = append(ds.Keywords, Keyword{"DICA_DOMAIN1", "sample1.csv"}, Keyword{"DICA_DOMAIN2", "sample2.csv"})
					return &f
				}, reserve: 100},
			)
		}
	}
	big := randomSet(rng, 'F', []int{32, 32, 32}, 200_000, false) // 2.4 MB: moved in 3 chunks
	cases = append(cases,
		tc{name: "no events", ds: &DataSet{Params: []Param{{Name: "A"}, {Name: "B", Bits: 64}}, DataType: 'D'}},
		tc{name: "moved", ds: big, final: func(ds *DataSet) *DataSet {
			f := *ds
			f.Keywords = []Keyword{{"NOTE", strings.Repeat("n", 5000)}}
			return &f
		}, moved: true},
		tc{name: "moved a little", ds: big, final: func(ds *DataSet) *DataSet {
			f := *ds
			f.Keywords = []Keyword{{"NOTE", strings.Repeat("n", 800)}}
			return &f
		}, reserve: 500, moved: true},
	)
	for _, c := range cases {
		final := c.ds
		if c.final != nil {
			final = c.final(c.ds)
		}
		var finalArg *DataSet
		if c.final != nil {
			finalArg = &DataSet{}
			*finalArg = *final
			finalArg.Events = nil
		}
		m, w := stream(t, c.ds, c.reserve, finalArg)
		whole := *final
		whole.Events = c.ds.Events
		sameFile(t, c.name, m.bytes(), mustWrite(t, &whole))
		textEnd, _ := strconv.ParseInt(strings.TrimSpace(string(m.bytes()[18:26])), 10, 64)
		if moved := w.dataAt == textEnd+1 && c.ds.Events != nil; moved != c.moved {
			t.Errorf("%s: moved %v, want %v (TEXT ends at %d, DATA at %d)", c.name, moved, c.moved, textEnd, w.dataAt)
		}
	}
}

// TestStreamWriterRoom fills the room reserved for the TEXT exactly (the
// events stay), then by one byte more (they move): both files read as the
// one Write makes.
func TestStreamWriterRoom(t *testing.T) {
	ds := randomSet(rand.New(rand.NewPCG(5, 5)), 'F', []int{32, 32}, 1000, false)
	desc := *ds
	desc.Events = nil
	for _, extra := range []int64{0, 1} {
		m := newMemFile()
		w, err := NewStreamWriter(m, &desc, 0)
		if err != nil {
			t.Fatal(err)
		}
		room := w.dataAt - HeaderLen
		for i := range 1000 {
			if err := w.WriteEvent(ds.Events.RawRowView(i)); err != nil {
				t.Fatal(err)
			}
		}
		// The final TEXT with a NOTE of k bytes.
		final := func(k int) *DataSet {
			f := desc
			f.Keywords = []Keyword{{"NOTE", strings.Repeat("x", k)}}
			return &f
		}
		ps, err := w.resolve(final(1))
		if err != nil {
			t.Fatal(err)
		}
		text, err := final(1).text('F', 1000, ps, [6]int64{0, 0, w.dataAt, w.dataAt + 8000 - 1, 0, 0})
		if err != nil {
			t.Fatal(err)
		}
		f := final(int(1 + room + extra - int64(len(text))))
		if err := w.Close(f); err != nil {
			t.Fatal(err)
		}
		b := m.bytes()
		textEnd, _ := strconv.ParseInt(strings.TrimSpace(string(b[18:26])), 10, 64)
		whole := *f
		whole.Events = ds.Events
		sameFile(t, fmt.Sprintf("room+%d", extra), b, mustWrite(t, &whole))
		if extra == 0 && (textEnd+1 != HeaderLen+room || w.dataAt != HeaderLen+room) {
			t.Errorf("TEXT of the room's size: ends at %d, DATA at %d, want both at %d", textEnd, w.dataAt, HeaderLen+room)
		}
		if extra == 1 && w.dataAt != textEnd+1 {
			t.Errorf("TEXT one byte over: DATA at %d after a TEXT ending at %d", w.dataAt, textEnd)
		}
		if extra == 1 && w.dataAt <= HeaderLen+room {
			t.Errorf("TEXT one byte over: DATA still at %d", w.dataAt)
		}
	}
}

// TestStreamWriterLargeOffsets writes DATA segments ending at byte
// 99,999,999, whose offsets the HEADER holds, and one event later, whose
// HEADER offsets are then both 0 with $BEGINDATA/$ENDDATA holding them:
// the reader finds the first and last events in both without a warning.
func TestStreamWriterLargeOffsets(t *testing.T) {
	const par = 250 // 1000 bytes per event
	ds := &DataSet{}
	for j := range par {
		ds.Params = append(ds.Params, Param{Name: "P" + strconv.Itoa(j+1)})
	}
	w0, err := NewStreamWriter(newMemFile(), ds, 0)
	if err != nil {
		t.Fatal(err)
	}
	reserve := int((1000 - w0.dataAt%1000) % 1000) // DATA at a multiple of 1000
	first, last, zero := make([]float64, par), make([]float64, par), make([]float64, par)
	for j := range par {
		first[j], last[j] = float64(j+1), -float64(j+1)/4
	}
	for _, tc := range []struct {
		extra  int64
		header string // HEADER DATA fields
	}{{0, fmt.Sprintf("%8d%8d", w0.dataAt+int64(reserve), maxHeaderOffset)}, {1, "       0       0"}} {
		m := newMemFile()
		w, err := NewStreamWriter(m, ds, reserve)
		if err != nil {
			t.Fatal(err)
		}
		n := (maxHeaderOffset+1-w.dataAt)/1000 + tc.extra
		for i := range n {
			ev := zero
			switch i {
			case 0:
				ev = first
			case n - 1:
				ev = last
			}
			if err := w.WriteEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		head := make([]byte, HeaderLen)
		m.ReadAt(head, 0)
		if got := string(head[26:42]); got != tc.header {
			t.Errorf("%d events: HEADER DATA fields %q, want %q", n, got, tc.header)
		}
		f, err := Parse(m, m.size)
		if err != nil {
			t.Fatal(err)
		}
		end, _ := f.Keyword("$ENDDATA")
		if f.NumEvents() != int(n) || len(f.Warnings()) > 0 || end != strconv.FormatInt(w.dataAt+1000*n-1, 10) || m.size != w.dataAt+1000*n {
			t.Errorf("%d events: read %d, $ENDDATA %s, file %d bytes, warnings %q", n, f.NumEvents(), end, m.size, f.Warnings())
		}
		ew, err := f.window(EventOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, par)
		for _, e := range []struct {
			i    int
			want []float64
		}{{0, first}, {1, zero}, {int(n) - 1, last}} {
			if err := ew.event(e.i, got); err != nil || fmt.Sprint(got) != fmt.Sprint(e.want) {
				t.Errorf("%d events: event %d is %v (%v)", n, e.i, got[:3], err)
			}
		}
	}
}

// TestStreamWriterErrors checks the errors of NewStreamWriter, WriteEvent
// and Close: each names what is wrong, a failed event stops the writer, and
// a final data set that does not fit the events can be replaced by one that
// does.
func TestStreamWriterErrors(t *testing.T) {
	ab := []Param{{Name: "A"}, {Name: "B"}}
	newW := func(ds *DataSet) (*StreamWriter, *memFile) {
		m := newMemFile()
		w, err := NewStreamWriter(m, ds, 0)
		if err != nil {
			t.Fatal(err)
		}
		return w, m
	}
	for _, c := range []struct {
		name    string
		ds      *DataSet
		reserve int
		want    string
	}{
		{"events", &DataSet{Params: ab, Events: mat.NewDense(1, 2, nil)}, 0, "has Events"},
		{"analysis", &DataSet{Params: ab, Analysis: []byte("x")}, 0, "ANALYSIS"},
		{"negative reserve", &DataSet{Params: ab}, -1, "reserve of -1 bytes"},
		{"huge reserve", &DataSet{Params: ab}, 100_000_000, "past byte 99999999"},
		{"no name", &DataSet{Params: []Param{{}}}, 0, "parameter 1 has no name"},
		{"reserved keyword", &DataSet{Params: ab, Keywords: []Keyword{{"$TOT", "5"}}}, 0, "$TOT\" is set by the writer"},
	} {
		if _, err := NewStreamWriter(newMemFile(), c.ds, c.reserve); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}

	for _, c := range []struct {
		dt   byte
		ev   []float64
		want string
	}{
		{'F', []float64{1}, "event 2 has 1 values for 2 parameters"},
		{'F', []float64{1, math.NaN()}, "event 2 parameter 2 (B): value NaN is not finite"},
		{'F', []float64{1e39, 1}, "event 2 parameter 1 (A): value 1e+39 overflows float32"},
		{'D', []float64{math.Inf(-1), 1}, "event 2 parameter 1 (A): value -Inf is not finite"},
		{'I', []float64{1.5, 1}, "event 2 parameter 1: value 1.5 is not an integer in [0, 4294967295]"},
		{'I', []float64{1, -1}, "event 2 parameter 2: value -1 is not an integer"},
	} {
		w, _ := newW(&DataSet{Params: ab, DataType: c.dt})
		if err := w.WriteEvent([]float64{1, 2}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvent(c.ev); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%c %v: %v, want %q", c.dt, c.ev, err, c.want)
		}
		if err := w.WriteEvent([]float64{1, 2}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%c %v: the event after the error: %v", c.dt, c.ev, err)
		}
		if err := w.Close(nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%c %v: Close after the error: %v", c.dt, c.ev, err)
		}
	}

	ints := []Param{{Name: "A", Bits: 16}, {Name: "B", Bits: 16}}
	for _, c := range []struct {
		name  string
		final *DataSet
		want  string
	}{
		{"data type", &DataSet{Params: ints, DataType: 'D'}, "another data type or byte order"},
		{"byte order", &DataSet{Params: ints, DataType: 'I', BigEndian: true}, "another data type or byte order"},
		{"parameters", &DataSet{Params: ints[:1], DataType: 'I'}, "1 parameters for events of 2"},
		{"bits", &DataSet{Params: []Param{{Name: "A", Bits: 16}, {Name: "B", Bits: 32}}, DataType: 'I'}, "parameter 2 (B): Close with $PnB 32 for events written with 16"},
		{"range", &DataSet{Params: []Param{{Name: "A", Bits: 16, Range: 100}, {Name: "B", Bits: 16}}, DataType: 'I'}, "parameter 1 (A): $PnR 100 does not hold the value 1000 written"},
		{"events", &DataSet{Params: ints, DataType: 'I', Events: mat.NewDense(1, 2, nil)}, "has Events"},
		{"keyword", &DataSet{Params: ints, DataType: 'I', Keywords: []Keyword{{"$PAR", "3"}}}, "$PAR\" is set by the writer"},
	} {
		w, m := newW(&DataSet{Params: ints, DataType: 'I'})
		if err := w.WriteEvent([]float64{1000, 7}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(c.final); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Close with another %s: %v, want %q", c.name, err, c.want)
		}
		// A data set that fits, then.
		if err := w.Close(&DataSet{Params: []Param{{Name: "A", Bits: 16, Range: 1024}, ints[1]}, DataType: 'I'}); err != nil {
			t.Errorf("Close after %s: %v", c.name, err)
		}
		f, err := Parse(m, m.size)
		if err != nil || f.Params()[0].Range != 1024 {
			t.Fatalf("after %s: %v", c.name, err)
		}
		if x, err := f.ReadAll(EventOptions{}); err != nil || x.At(0, 0) != 1000 || x.At(0, 1) != 7 {
			t.Errorf("after %s: events %v (%v)", c.name, x, err)
		}
		if err := w.Close(nil); err == nil || !strings.Contains(err.Error(), "closed twice") {
			t.Errorf("second Close: %v", err)
		}
		if err := w.WriteEvent([]float64{1, 2}); err == nil || !strings.Contains(err.Error(), "after Close") {
			t.Errorf("WriteEvent after Close: %v", err)
		}
	}

	// A full disk: the events fail when the buffer is written, Close when
	// the rest is.
	w, m := newW(&DataSet{Params: ab, DataType: 'D'})
	m.failAt = 2 << 20
	var err error
	for i := 0; i < 1_000_000 && err == nil; i++ {
		err = w.WriteEvent([]float64{1, 2})
	}
	if err == nil || !strings.Contains(err.Error(), "fcs: writing DATA: no space left on device") {
		t.Errorf("full disk: %v", err)
	}
	w, m = newW(&DataSet{Params: ab, DataType: 'D'})
	m.failAt = 1
	w.WriteEvent([]float64{1, 2})
	if err := w.Close(nil); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("full disk at Close: %v", err)
	}
}
