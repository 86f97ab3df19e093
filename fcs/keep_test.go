package fcs

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestKeepKeywords reads two files that share some keywords and differ in
// others, and writes their events to a new file with what Source keeps:
// the shared file keywords, and each channel's own keywords at its new
// parameter number.
func TestKeepKeywords(t *testing.T) {
	dir := t.TempDir()
	params := func(v3 string) []Param {
		return []Param{
			{Name: "FSC-A", Keywords: []Keyword{{"$PnV", "300"}}},
			{Name: "FL1-A", Label: "CD3", Gain: 2, Keywords: []Keyword{{"$PnV", "450"}, {"PnDISPLAY", "LOG"}, {"$PnL", "488"}}},
			{Name: "FL2-A", Label: "CD8", Keywords: []Keyword{{"$PnV", v3}, {"PnDISPLAY", "LOG"}}},
		}
	}
	shared := []Keyword{{"$DATE", "24-NOV-2026"}, {"$CYT", "LSRFortessa"}, {"$SPILLOVER", "2,FL1-A,FL2-A,1,0.1,0.02,1"}, {"$SRC", "blood"}, {"CUSTOM", "a/b"}}
	layout := []Keyword{{"$UNICODE", "65001,$COM"}, {"$CSMODE", "0"}, {"$CSVBITS", "0"}, {"$CSV1FLAG", "1"}, {"$P9V", "7"}}
	kw := func(file string) []Keyword {
		return append(append(append([]Keyword(nil), shared...), layout...), Keyword{"$FIL", file}, Keyword{"$BTIM", file[:1]})
	}
	x := columns(4, 3)
	a := writeAt(t, dir, "a.fcs", &DataSet{Params: params("500"), Events: x, Keywords: kw("a.fcs")})
	b := writeAt(t, dir, "b.fcs", &DataSet{Params: params("510"), Events: x, Keywords: kw("b.fcs")})

	src, err := NewSource([]string{a, b}, SourceOptions{Channels: []string{"CD8", "FL1-A"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Keywords(); !reflect.DeepEqual(got, shared) {
		t.Errorf("Keywords\n%q\nwant\n%q", got, shared)
	}
	one, err := NewSource([]string{a}, SourceOptions{Channels: []string{"CD8", "FL1-A"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := one.Keywords(), append(append([]Keyword(nil), shared...), Keyword{"$FIL", "a.fcs"}, Keyword{"$BTIM", "a"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Keywords of one file\n%q\nwant\n%q", got, want)
	}
	ps := src.Params()
	if want := []Keyword{{"PnDISPLAY", "LOG"}}; ps[0].Name != "FL2-A" || !reflect.DeepEqual(ps[0].Keywords, want) {
		t.Errorf("FL2-A keywords %q, want %q (its $PnV differs between the files)", ps[0].Keywords, want)
	}
	if want := []Keyword{{"$PnV", "450"}, {"PnDISPLAY", "LOG"}, {"$PnL", "488"}}; ps[1].Name != "FL1-A" || ps[1].Gain != 2 || !reflect.DeepEqual(ps[1].Keywords, want) {
		t.Errorf("FL1-A %+v, want keywords %q", ps[1], want)
	}
	ps[1].Keywords[0].Value = "changed"
	if src.Params()[1].Keywords[0].Value != "450" {
		t.Error("Params shares its Keywords with the Source")
	}

	// The output: the two channels as float, a component, the keywords.
	out := &DataSet{Params: append(src.Params(), Param{Name: "DICA1"}), Keywords: src.Keywords(), Events: columns(4, 3)}
	raw := mustWrite(t, out)
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"$P1N": "FL2-A", "$P1S": "CD8", "P1DISPLAY": "LOG",
		"$P2N": "FL1-A", "$P2V": "450", "P2DISPLAY": "LOG", "$P2L": "488", "$P2G": "2",
		"$P3N": "DICA1", "$DATE": "24-NOV-2026", "$SPILLOVER": "2,FL1-A,FL2-A,1,0.1,0.02,1", "CUSTOM": "a/b",
	} {
		if v, _ := f.Keyword(k); v != want {
			t.Errorf("output %s = %q, want %q", k, v, want)
		}
	}
	for _, k := range []string{"$P1V", "$P3V", "$FIL", "$UNICODE", "$CSMODE", "$P9V"} {
		if v, ok := f.Keyword(k); ok {
			t.Errorf("output has %s = %q", k, v)
		}
	}
	if got := f.Params()[1].Keywords; !reflect.DeepEqual(got, []Keyword{{"$PnV", "450"}, {"PnDISPLAY", "LOG"}, {"$PnL", "488"}}) {
		t.Errorf("output FL1-A keywords %q", got)
	}
}

// TestParamKeywordErrors: keys of Param.Keywords must have the $Pn or Pn
// form and not be a keyword the writer sets from Param's fields.
func TestParamKeywordErrors(t *testing.T) {
	for _, tc := range []struct {
		kw  []Keyword
		err string
	}{
		{[]Keyword{{"$P1V", "1"}}, `parameter 1 ("A"): keyword "$P1V" of a parameter does not start with $Pn or Pn`},
		{[]Keyword{{"$Pn1", "1"}}, `parameter 1 ("A"): keyword "$Pn1" of a parameter: the letters after $Pn or Pn name it`},
		{[]Keyword{{"Pn", "1"}}, `the letters after $Pn or Pn name it`},
		{[]Keyword{{"VOLTS", "1"}}, `keyword "VOLTS" of a parameter does not start with $Pn or Pn`},
		{[]Keyword{{"$PnN", "B"}}, `keyword "$PnN" is set from the fields of Param`},
		{[]Keyword{{"$Pnr", "1"}}, `keyword "$Pnr" is set from the fields of Param`},
		{[]Keyword{{"$PnV", "1"}, {"$pnv", "2"}}, "parameter 1"},
		{[]Keyword{{"$PnV", ""}}, "empty key or value"},
	} {
		err := Write(&bytes.Buffer{}, &DataSet{Params: []Param{{Name: "A", Keywords: tc.kw}}})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want %q", tc.kw, err, tc.err)
		}
	}
	// A per-parameter keyword and the same one in DataSet.Keywords.
	err := Write(&bytes.Buffer{}, &DataSet{Params: []Param{{Name: "A", Keywords: []Keyword{{"$PnV", "1"}}}}, Keywords: []Keyword{{"$P1V", "2"}}})
	if err == nil || !strings.Contains(err.Error(), `"$P1V" given twice`) {
		t.Errorf("twice: %v", err)
	}
}

// TestForFloat checks the keywords of a float channel: $PnE 0,0, $PnR from
// the largest value, and the display hint $PnD for negative values.
func TestForFloat(t *testing.T) {
	log := Param{Name: "FL1-H", Label: "CD3", Bits: 16, Range: 1024, Decades: 4, Offset: 1, Gain: 1,
		Keywords: []Keyword{{"$PnD", "Logarithmic,4,1"}, {"$PnV", "300"}}}
	for _, tc := range []struct {
		lo, hi float64
		rng    float64
		kw     []Keyword
	}{
		{-12.5, 3000.2, 3001, []Keyword{{"$PnV", "300"}, {"$PnD", "Linear,-12.5,3000.2"}}},
		{0, 5, 6, log.Keywords},
		{-7, -2, 1, []Keyword{{"$PnV", "300"}, {"$PnD", "Linear,-7,-2"}}},
		{1, 0.25, 1, log.Keywords},
		// float32 rounds 2^25 + 2.5 up to 2^25 + 4: the range covers the
		// value stored.
		{0, 1<<25 + 2.5, 1<<25 + 5, log.Keywords},
	} {
		if tc.lo > tc.hi {
			if _, err := log.ForFloat(tc.lo, tc.hi); err == nil {
				t.Errorf("ForFloat(%v, %v) did not fail", tc.lo, tc.hi)
			}
			continue
		}
		p, err := log.ForFloat(tc.lo, tc.hi)
		if err != nil {
			t.Fatal(err)
		}
		want := log
		want.Bits, want.Decades, want.Offset, want.Range, want.Keywords = 0, 0, 0, tc.rng, tc.kw
		if !reflect.DeepEqual(p, want) {
			t.Errorf("ForFloat(%v, %v) = %+v, want %+v", tc.lo, tc.hi, p, want)
		}
	}
	for _, r := range [][2]float64{{math.NaN(), 1}, {0, math.Inf(1)}, {math.Inf(-1), 0}} {
		if _, err := log.ForFloat(r[0], r[1]); err == nil {
			t.Errorf("ForFloat(%v, %v) did not fail", r[0], r[1])
		}
	}
	if log.Keywords[0].Value != "Logarithmic,4,1" {
		t.Error("ForFloat changed the Keywords of its receiver")
	}

	// Written by a Writer, which needs the range: read back as given.
	lin := Param{Name: "FL1-H", Range: 1024, Decades: 4}.Linear(512)
	p, err := log.ForFloat(-12.5, 3000.2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, &DataSet{Params: []Param{p}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{-12.5, lin} {
		if err := w.WriteEvent([]float64{v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"$P1E": "0,0", "$P1R": "3001", "$P1D": "Linear,-12.5,3000.2", "$P1V": "300", "$P1B": "32"} {
		if v, _ := f.Keyword(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if x, err := f.ReadAll(EventOptions{}); err != nil || x.At(0, 0) != -12.5 || x.At(1, 0) != 100 {
		t.Errorf("events %v, %v; want -12.5, 100", x, err)
	}
	// A log-amplified parameter cannot be written as float.
	for _, dt := range []byte{'F', 'D'} {
		q := log
		q.Bits = 0
		err := Write(&bytes.Buffer{}, &DataSet{DataType: dt, Params: []Param{q}, Events: mat.NewDense(1, 1, []float64{1})})
		if err == nil || !strings.Contains(err.Error(), "$PnE 4,1 (log-amplified integer values) does not apply to $DATATYPE "+string(dt)) {
			t.Errorf("%c with $PnE 4,1: %v", dt, err)
		}
	}
}

// TestWriteFloatDisplay: Write, choosing the range of float data, adds
// $PnD Linear,MIN,MAX for a channel that takes negative values, unless
// the caller gave a $PnD; $PnE of float data is 0,0.
func TestWriteFloatDisplay(t *testing.T) {
	x := mat.NewDense(3, 3, []float64{-3, 1, -1, 7.5, 2, 1, 0.25, 3, 2})
	ds := &DataSet{Params: []Param{{Name: "A", Offset: 5}, {Name: "B"}, {Name: "C", Keywords: []Keyword{{"$PnD", "Logicle,1,2"}}}}, Events: x}
	raw := mustWrite(t, ds)
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"$P1D": "Linear,-3,7.5", "$P1R": "8", "$P1E": "0,0", "$P2R": "4", "$P3D": "Logicle,1,2", "$P3R": "3"} {
		if v, _ := f.Keyword(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if v, ok := f.Keyword("$P2D"); ok {
		t.Errorf("$P2D = %q for a channel without negative values", v)
	}
	if got := (Param{Decades: 4, Offset: 2, Range: 1024}).Linear(256); got != 20 {
		t.Errorf("Linear 4,2 of 256 = %v, want 20", got)
	}
	if got := (Param{Range: 1024}).Linear(256); got != 256 {
		t.Errorf("Linear 0,0 of 256 = %v", got)
	}
}

// TestChannelsAndCompensations: Source records which parameters its
// channels matched and the spillover applied to each data set.
func TestChannelsAndCompensations(t *testing.T) {
	paths, _ := writeDomains(t, 2)
	opts := SourceOptions{Channels: []string{"cd19", "FSC-A", "FL1-A"}, Compensate: true}
	src, err := NewSource(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []ChannelInfo{{"cd19", 3, "FL2-A", "CD19"}, {"FSC-A", 1, "FSC-A", ""}, {"FL1-A", 2, "FL1-A", "CD3"}}
	if got := src.Channels(); !reflect.DeepEqual(got, want) {
		t.Errorf("Channels %+v, want %+v", got, want)
	}
	comps := src.Compensations()
	if len(comps) != 2 {
		t.Fatalf("%d compensations", len(comps))
	}
	for _, c := range comps {
		if c.Keyword != "$SPILLOVER" || !reflect.DeepEqual(c.Channels, []string{"FL2-A", "FL1-A"}) || !reflect.DeepEqual(c.Params, []int{2, 1}) ||
			!mat.Equal(c.Matrix, mat.NewDense(2, 2, []float64{1, 0.05, 0.2, 1})) {
			t.Errorf("compensation %+v", c)
		}
	}
	comps[0].Matrix.Set(0, 0, 9)
	if src.Compensations()[0].Matrix.At(0, 0) != 1 {
		t.Error("Compensations shares its matrix with the Source")
	}
	opts.Compensate = false
	if src, err = NewSource(paths, opts); err != nil || src.Compensations() != nil {
		t.Errorf("no compensation: %v, %v", src.Compensations(), err)
	}
	opts.Spillover = &Spillover{Channels: []string{"CD3", "time"}, Matrix: mat.NewDense(2, 2, []float64{1, 0, 0.5, 1})}
	if src, err = NewSource(paths, opts); err != nil {
		t.Fatal(err)
	}
	for _, c := range src.Compensations() {
		if c.Keyword != "" || !reflect.DeepEqual(c.Channels, []string{"CD3", "time"}) || !reflect.DeepEqual(c.Params, []int{1, 3}) || c.Matrix.At(1, 0) != 0.5 {
			t.Errorf("given spillover %+v", c)
		}
	}
}
