package fcs

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/preprocess"
	"gonum.org/v1/gonum/mat"
)

// columns makes an n x p matrix whose value in row i, column j is
// 100*(j+1) + i: every column holds values no other column holds, so a
// value read tells which parameter it came from.
func columns(n, p int) *mat.Dense {
	x := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			x.Set(i, j, float64(100*(j+1)+i))
		}
	}
	return x
}

// writeAt writes the data sets to dir/name and returns the path.
func writeAt(t *testing.T, dir, name string, ds ...*DataSet) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := WriteFile(p, ds...); err != nil {
		t.Fatal(err)
	}
	return p
}

// collect reads the whole source.
func collect(t *testing.T, src *Source) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// wantCols checks that the columns of got are the columns cols (0-based)
// of x.
func wantCols(t *testing.T, what string, got, x *mat.Dense, cols []int) {
	t.Helper()
	n, d := got.Dims()
	if r, _ := x.Dims(); n != r || d != len(cols) {
		t.Fatalf("%s: %d x %d values, want %d x %d", what, n, d, r, len(cols))
	}
	for i := 0; i < n; i++ {
		for c, j := range cols {
			if got.At(i, c) != x.At(i, j) {
				t.Fatalf("%s: row %d column %d = %v, want %v (parameter %d)", what, i, c, got.At(i, c), x.At(i, j), j+1)
			}
		}
	}
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestDuplicateNames reads files in which two parameters share a $PnN:
// they are listed as NAME#k, a bare NAME is an error naming both, and
// every way of reading them gives the intended parameter's values.
func TestDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	params := []Param{{Name: "FSC-A"}, {Name: "CD3", Label: "first"}, {Name: "SSC-A"}, {Name: "CD3", Label: "second"}, {Name: "Time"}}
	x := columns(7, 5)
	path := writeAt(t, dir, "dup.fcs", &DataSet{Params: params, Events: x})

	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.Names(), []string{"FSC-A", "CD3#2", "SSC-A", "CD3#4", "Time"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names %q, want %q", got, want)
	}
	if ps := f.Params(); ps[1].Name != "CD3" || ps[3].Name != "CD3" {
		t.Errorf("Params keep $PnN: %q, %q", ps[1].Name, ps[3].Name)
	}
	const warn = `parameters 2 and 4 have the same $PnN "CD3": they are named "CD3#2" and "CD3#4"`
	if !reflect.DeepEqual(f.Warnings(), []string{warn}) {
		t.Errorf("Warnings %q, want %q", f.Warnings(), warn)
	}
	for _, tc := range []struct {
		ref  string
		want int
		err  string
	}{
		{"CD3", -1, `fcs: channel "CD3" names parameters 2 and 4 of ` + path + `: use "CD3#2" or "CD3#4"`},
		{"cd3", -1, `fcs: channel "cd3" names parameters 2 and 4 of ` + path + `: use "cd3#2" or "cd3#4"`},
		{"CD3#2", 1, ""},
		{"CD3#4", 3, ""},
		{" cd3#4 ", 3, ""},
		{"second", 3, ""},
		{"first#2", 1, ""},
		{"CD3#3", -1, `fcs: channel "CD3#3" not found in ` + path},
		{"CD3#9", -1, "not found"},
		{"CD3#-4", -1, "not found"},
		{"CD3#", -1, "not found"},
		{"#4", -1, "not found"},
		{"SSC-A", 2, ""},
	} {
		j, err := f.LookupParam(tc.ref)
		if j != tc.want || f.FindParam(tc.ref) != tc.want {
			t.Errorf("LookupParam(%q) = %d (FindParam %d), want %d", tc.ref, j, f.FindParam(tc.ref), tc.want)
		}
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("LookupParam(%q): error %v, want %q", tc.ref, err, tc.err)
		}
	}

	// The duplicate selected, by NAME#k.
	src, err := NewSource([]string{path}, SourceOptions{Channels: []string{"CD3#4", "FSC-A", "cd3#2"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCols(t, "CD3#4, FSC-A, cd3#2", collect(t, src).X, x, []int{3, 0, 1})
	if got := src.Channels(); !reflect.DeepEqual(got, []ChannelInfo{{"CD3#4", 4, "CD3", "second"}, {"FSC-A", 1, "FSC-A", ""}, {"cd3#2", 2, "CD3", "first"}}) {
		t.Errorf("Channels %+v", got)
	}
	if w := src.Warnings(); !reflect.DeepEqual(w, []string{path + ": " + warn}) {
		t.Errorf("Source warnings %q", w)
	}
	// The duplicate present but not selected.
	src, err = NewSource([]string{path}, SourceOptions{Channels: []string{"Time", "SSC-A"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCols(t, "Time, SSC-A", collect(t, src).X, x, []int{4, 2})
	// Every channel, named by Names; two files with the same duplicates.
	path2 := writeAt(t, dir, "dup2.fcs", &DataSet{Params: params, Events: x})
	src, err = NewSource([]string{path, path2}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Schema().Features; !reflect.DeepEqual(got, f.Names()) {
		t.Errorf("features %q", got)
	}
	all := collect(t, src)
	var both mat.Dense
	both.Stack(x, x)
	wantCols(t, "all channels", all.X, &both, []int{0, 1, 2, 3, 4})
	checkSkim(t, src, all)
	if got := src.Channels()[3]; got != (ChannelInfo{"CD3#4", 4, "CD3", "second"}) {
		t.Errorf("Channels()[3] = %+v", got)
	}
	// A transform on one of the duplicates.
	src, err = NewSource([]string{path}, SourceOptions{Transform: preprocess.Log1pAbs{}, TransformChannels: []string{"CD3#4"}})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, src).X
	for i := 0; i < 7; i++ {
		for j := 0; j < 5; j++ {
			want := x.At(i, j)
			if j == 3 {
				want = math.Log1p(want)
			}
			if got.At(i, j) != want {
				t.Fatalf("transform CD3#4: row %d column %d = %v, want %v", i, j, got.At(i, j), want)
			}
		}
	}
	// A bare duplicated name is refused wherever it selects a channel.
	for _, o := range []SourceOptions{
		{Channels: []string{"FSC-A", "CD3"}},
		{Transform: preprocess.Log1pAbs{}, TransformChannels: []string{"CD3"}},
		{Spillover: &Spillover{Channels: []string{"CD3", "SSC-A"}, Matrix: mat.NewDense(2, 2, []float64{1, 0, 0, 1})}},
	} {
		if _, err := NewSource([]string{path}, o); err == nil || !strings.Contains(err.Error(), `"CD3" names parameters 2 and 4 of `+path+`: use "CD3#2" or "CD3#4"`) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// A spillover keyword naming a shared $PnN cannot be applied.
	sp := writeAt(t, dir, "dupspill.fcs", &DataSet{Params: params, Events: x, Keywords: []Keyword{{"$SPILLOVER", "2,CD3,SSC-A,1,0.1,0,1"}}})
	if _, err := NewSource([]string{sp}, SourceOptions{Compensate: true}); err == nil || !strings.Contains(err.Error(), `keyword $SPILLOVER: channel "CD3" names parameters 2 and 4`) {
		t.Errorf("spillover on a duplicate: %v", err)
	}
}

// TestDuplicateLabels looks up a marker ($PnS) given to two channels, as
// cytometers do for the -A and -H channels of one detector.
func TestDuplicateLabels(t *testing.T) {
	dir := t.TempDir()
	params := []Param{{Name: "FITC-A", Label: "CD3"}, {Name: "FITC-H", Label: "CD3"}, {Name: "PE-A", Label: "CD8"}}
	path := writeAt(t, dir, "labels.fcs", &DataSet{Params: params, Events: columns(3, 3)})
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Warnings()) != 0 {
		t.Errorf("warnings %q", f.Warnings())
	}
	_, err = f.LookupParam("CD3")
	if want := `fcs: channel "CD3" is the $PnS of parameters 1 and 2 of ` + path + `: use "CD3#1" ("FITC-A") or "CD3#2" ("FITC-H")`; err == nil || err.Error() != want {
		t.Errorf("LookupParam(CD3): %v, want %s", err, want)
	}
	for ref, want := range map[string]int{"CD3#2": 1, "cd3#1": 0, "FITC-H": 1, "cd8": 2, "PE-A#3": 2} {
		if j, err := f.LookupParam(ref); j != want || err != nil {
			t.Errorf("LookupParam(%q) = %d, %v; want %d", ref, j, err, want)
		}
	}
}

// TestNameCollision: a name NAME#k that another parameter already has as
// its $PnN renames that parameter too, so that names stay unique.
func TestNameCollision(t *testing.T) {
	raw := mustWrite(t, &DataSet{Params: []Param{{Name: "A"}, {Name: "A"}, {Name: "A#2"}}, Events: columns(2, 3)})
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Names(), []string{"A#1", "A#2", "A#2#3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names %q, want %q", got, want)
	}
	if w := f.Warnings(); len(w) != 2 || !strings.Contains(w[1], `the $PnN "A#2" of parameter 3 is the name of another parameter: it is named "A#2#3"`) {
		t.Errorf("warnings %q", w)
	}
	for ref, want := range map[string]int{"A#2": 1, "A#2#3": 2, "A#1": 0} {
		if j := f.FindParam(ref); j != want {
			t.Errorf("FindParam(%q) = %d, want %d", ref, j, want)
		}
	}
}

// setTot rewrites "$TOT/<from>/" of a written file as "$TOT/<to>/" (same
// length).
func setTot(t *testing.T, raw []byte, from, to string) []byte { return raiseTot(t, raw, from, to) }

// TestTotAgainstData checks $TOT against what the DATA segment holds: more
// events than declared are a warning with both counts (and $TOT events
// are read); fewer are an error, or with AllowTruncated a warning saying
// how many were read.
func TestTotAgainstData(t *testing.T) {
	dir := t.TempDir()
	x := columns(5, 2)
	raw := mustWrite(t, &DataSet{Params: []Param{{Name: "A"}, {Name: "B"}}, Events: x})

	// Five events in the segment, $TOT 3.
	more := filepath.Join(dir, "more.fcs")
	if err := os.WriteFile(more, setTot(t, raw, "5", "3"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(more)
	if err != nil {
		t.Fatal(err)
	}
	const warn = "the DATA segment holds 5 events but $TOT declares 3: reading 3"
	if f.NumEvents() != 3 || f.EventsPresent() != 3 || !reflect.DeepEqual(f.Warnings(), []string{warn}) {
		t.Errorf("$TOT 3 of 5: NumEvents %d, EventsPresent %d, warnings %q", f.NumEvents(), f.EventsPresent(), f.Warnings())
	}
	got, err := f.ReadAll(EventOptions{})
	f.Close()
	if err != nil || !mat.Equal(got, x.Slice(0, 3, 0, 2)) {
		t.Errorf("ReadAll: %v, %v", got, err)
	}
	src, err := NewSource([]string{more}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := src.Warnings(); !reflect.DeepEqual(w, []string{more + ": " + warn}) || src.Len() != 3 {
		t.Errorf("Source: %d rows, warnings %q", src.Len(), w)
	}

	// Three events in the segment, $TOT 5 (the file cut short).
	fewer := filepath.Join(dir, "fewer.fcs")
	if err := os.WriteFile(fewer, raw[:len(raw)-16], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewSource([]string{fewer}, SourceOptions{})
	var te *TruncatedError
	if !errors.As(err, &te) || te.Expected != 5 || te.Present != 3 {
		t.Errorf("truncated without AllowTruncated: %v", err)
	}
	src, err = NewSource([]string{fewer}, SourceOptions{AllowTruncated: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := src.Warnings(); !reflect.DeepEqual(w, []string{fewer + ": read 3 of 5 events declared by $TOT (the file or its DATA segment ends early)"}) {
		t.Errorf("AllowTruncated warnings %q", w)
	}
	wantCols(t, "truncated", collect(t, src).X, x.Slice(0, 3, 0, 2).(*mat.Dense), []int{0, 1})

	// An $ENDDATA one byte too far, with $TOT right: no warning.
	f, err = Parse(bytes.NewReader(append(bytes.Clone(raw), 0)), int64(len(raw)+1))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings()) != 0 {
		t.Errorf("exact $TOT: warnings %q", f.Warnings())
	}
}

// TestVersions reads a file under other HEADER versions: the known ones
// silently, the others with a warning, as FCS 3.1, with the same values.
func TestVersions(t *testing.T) {
	x := columns(4, 3)
	raw := mustWrite(t, &DataSet{Params: []Param{{Name: "A"}, {Name: "B"}, {Name: "C"}}, Events: x})
	for _, v := range []string{"FCS2.0", "FCS3.0", "FCS3.1", "FCS3.2", "FCS4.0", "FCS9.9", "FCS1.0"} {
		b := bytes.Clone(raw)
		copy(b, v)
		f, err := Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		var want []string
		if v != "FCS2.0" && v != "FCS3.0" && v != "FCS3.1" {
			want = []string{"unknown FCS version " + v + ": read as FCS 3.1"}
		}
		if f.Version() != v || !reflect.DeepEqual(f.Warnings(), want) {
			t.Errorf("%s: version %q, warnings %q, want %q", v, f.Version(), f.Warnings(), want)
		}
		got, err := f.ReadAll(EventOptions{})
		if err != nil || !mat.Equal(got, x) {
			t.Errorf("%s: read %v, %v", v, got, err)
		}
	}
	b := bytes.Clone(raw)
	copy(b, "FCSx.y")
	if _, err := Parse(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrNotFCS) || !strings.Contains(err.Error(), `bad version "FCSx.y"`) {
		t.Errorf("FCSx.y: %v", err)
	}
}

// textSegment returns the TEXT segment of the written file raw.
func textSegment(t *testing.T, raw []byte) []byte {
	t.Helper()
	h, err := parseHeader(raw[:HeaderLen])
	if err != nil {
		t.Fatal(err)
	}
	return raw[h.off[0] : h.off[1]+1]
}

// TestWriteUTF8 writes names, labels and keyword values that are not valid
// UTF-8: the TEXT written is valid UTF-8, with each invalid byte read as
// its Latin-1 character, and valid UTF-8 is kept as it is.
func TestWriteUTF8(t *testing.T) {
	ds := &DataSet{
		Params: []Param{
			{Name: "CD3 \xb5m", Label: "caf\xe9", Keywords: []Keyword{{"$PnV", "\xff5"}}},
			{Name: "µ-ok", Label: "日本"},
		},
		Events:   columns(2, 2),
		Keywords: []Keyword{{"$COM", "half \xbd\xe2\x82"}, {"OWNER", "Zoë"}, {"K\xe4Y", "v"}},
	}
	raw := mustWrite(t, ds)
	if text := textSegment(t, raw); !utf8.Valid(text) {
		t.Errorf("TEXT is not valid UTF-8: %q", text)
	}
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"$P1N": "CD3 µm", "$P1S": "café", "$P1V": "ÿ5", "$P2N": "µ-ok", "$P2S": "日本",
		"$COM": "half ½â\u0082", "OWNER": "Zoë", "KÄY": "v",
	} {
		if v, ok := f.Keyword(k); !ok || v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if got := f.Names(); !reflect.DeepEqual(got, []string{"CD3 µm", "µ-ok"}) {
		t.Errorf("Names %q", got)
	}
}

// TestWriteDelimiterEscapes writes keys and values holding the TEXT
// delimiter (inside, doubled, at the end, alone): FCS 3.1 doubles each one,
// and the reader gives back the exact strings, for the default delimiter
// and for chosen ones.
func TestWriteDelimiterEscapes(t *testing.T) {
	for _, d := range []byte{0, '/', '|', '\\', '*'} {
		dl := "/"
		if d != 0 {
			dl = string(d)
		}
		kws := []Keyword{
			{"MID", "a" + dl + "b"},
			{"TWICE", "a" + dl + dl + "b"},
			{"END", "end" + dl},
			{"ENDS", "end" + dl + dl},
			{"K" + dl + "EY", "v"},
			{"LAST", "x" + dl + dl + dl},
		}
		ds := &DataSet{Delimiter: d, Params: []Param{{Name: "FL" + dl + "1", Label: "CD3" + dl}}, Events: columns(2, 1), Keywords: kws}
		raw := mustWrite(t, ds)
		text := textSegment(t, raw)
		if text[0] != dl[0] || !bytes.Contains(text, []byte("a"+dl+dl+"b")) || !bytes.Contains(text, []byte("FL"+dl+dl+"1")) {
			t.Errorf("delimiter %q: TEXT %q", dl, text)
		}
		f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("delimiter %q: %v", dl, err)
		}
		for _, k := range kws {
			if v, ok := f.Keyword(k.Key); !ok || v != k.Value {
				t.Errorf("delimiter %q: %q = %q, want %q", dl, k.Key, v, k.Value)
			}
		}
		if p := f.Params()[0]; p.Name != "FL"+dl+"1" || p.Label != "CD3"+dl {
			t.Errorf("delimiter %q: parameter %q / %q", dl, p.Name, p.Label)
		}
		if got, err := f.ReadAll(EventOptions{}); err != nil || !mat.Equal(got, ds.Events) {
			t.Errorf("delimiter %q: events %v, %v", dl, got, err)
		}
	}
	// A value that starts with every candidate delimiter cannot be written.
	var kws []Keyword
	for i, c := range []byte("/|\\\f!*~^") {
		kws = append(kws, Keyword{string(rune('A' + i)), string(c) + "x"})
	}
	if err := Write(&bytes.Buffer{}, &DataSet{Params: []Param{{Name: "A"}}, Keywords: kws}); err == nil || !strings.Contains(err.Error(), "no TEXT delimiter") {
		t.Errorf("no delimiter: %v", err)
	}
}
