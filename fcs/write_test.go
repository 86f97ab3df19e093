package fcs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomSet makes a data set of n events whose values fit the parameters.
func randomSet(rng *rand.Rand, dt byte, bits []int, n int, big bool) *DataSet {
	ds := &DataSet{DataType: dt, BigEndian: big}
	x := mat.NewDense(max(n, 1), len(bits), nil)
	for j, b := range bits {
		ds.Params = append(ds.Params, Param{Name: fmt.Sprintf("FL%d-A", j+1), Label: fmt.Sprintf("CD%d", 3+j), Bits: b})
		for i := 0; i < n; i++ {
			var v float64
			switch dt {
			case 'F':
				v = float64(float32(rng.NormFloat64() * 1000))
			case 'D':
				v = rng.NormFloat64() * 1e6
			case 'I':
				if b >= 53 {
					v = float64(rng.Uint64N(1 << 52))
					if i == 0 {
						v = math.Exp2(float64(b)) - math.Exp2(float64(b-53)) // largest exact
					}
				} else {
					v = float64(rng.Uint64N(1 << uint(b)))
					if i == 0 {
						v = math.Exp2(float64(b)) - 1
					}
				}
			}
			x.Set(i, j, v)
		}
	}
	if n > 0 {
		ds.Events = x
	}
	return ds
}

func TestWriteRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, tc := range []struct {
		dt   byte
		bits []int
	}{
		{'I', []int{8, 8, 8}},
		{'I', []int{16, 16}},
		{'I', []int{24, 24, 24, 24}},
		{'I', []int{32, 32, 32}},
		{'I', []int{64}},
		{'I', []int{16, 24, 8, 32, 40, 48, 56, 64}},
		{'F', []int{32, 32, 32, 32, 32}},
		{'D', []int{64, 64, 64}},
	} {
		for _, big := range []bool{false, true} {
			for _, n := range []int{0, 1, 1000} {
				name := fmt.Sprintf("%c%v/big=%v/n=%d", tc.dt, tc.bits, big, n)
				ds := randomSet(rng, tc.dt, tc.bits, n, big)
				ds.Keywords = []Keyword{{"$CYT", "test/cytometer"}, {"#Note", "a//b/"}, {"$P1G", "2.5"}}
				var buf bytes.Buffer
				if err := Write(&buf, ds); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				raw := buf.Bytes()
				f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if f.Version() != "FCS3.1" || f.DataType() != tc.dt || f.NumEvents() != n || f.NumParams() != len(tc.bits) {
					t.Fatalf("%s: read %s %c %d events %d params", name, f.Version(), f.DataType(), f.NumEvents(), f.NumParams())
				}
				wantOrd := map[bool]string{false: "1,2,3,4", true: "4,3,2,1"}[big]
				for k, want := range map[string]string{"$cyt": "test/cytometer", "#NOTE": "a//b/", "$BYTEORD": wantOrd, "$MODE": "L", "$NEXTDATA": "0", "$BEGINANALYSIS": "0", "$p1e": "0,0"} {
					if v, ok := f.Keyword(k); !ok || v != want {
						t.Errorf("%s: keyword %s = %q, %v; want %q", name, k, v, ok, want)
					}
				}
				if len(f.Warnings()) != 0 {
					t.Errorf("%s: warnings %q", name, f.Warnings())
				}
				for j, p := range f.Params() {
					q := ds.Params[j]
					if p.Name != q.Name || p.Label != q.Label || p.Bits != tc.bits[j] {
						t.Errorf("%s: param %d = %+v, wrote %+v", name, j, p, q)
					}
					if tc.dt == 'I' && p.Range != math.Exp2(float64(tc.bits[j])) {
						t.Errorf("%s: param %d range %v, want 2^%d", name, j, p.Range, tc.bits[j])
					}
				}
				if g := f.Params()[0].Gain; g != 2.5 {
					t.Errorf("%s: $P1G read as %v", name, g)
				}
				// The escaped delimiter is in the TEXT bytes.
				if !bytes.Contains(raw, []byte("/#Note/a////b///")) {
					t.Errorf("%s: TEXT lacks the escaped value", name)
				}
				x, err := f.ReadAll(EventOptions{BufferBytes: 100}) // many refills
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n == 0 {
					if !x.IsEmpty() {
						t.Errorf("%s: read %v", name, x)
					}
					continue
				}
				if !mat.Equal(x, ds.Events) {
					t.Errorf("%s: events differ", name)
				}
				// Independent check of the layout: the first value read by
				// hand at the HEADER's DATA offset.
				begin, _ := strconv.Atoi(strings.TrimSpace(string(raw[26:34])))
				w := tc.bits[0] / 8
				var v float64
				b := raw[begin : begin+w]
				switch {
				case tc.dt == 'F' && big:
					v = float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
				case tc.dt == 'F':
					v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
				case tc.dt == 'D' && big:
					v = math.Float64frombits(binary.BigEndian.Uint64(b))
				case tc.dt == 'D':
					v = math.Float64frombits(binary.LittleEndian.Uint64(b))
				default:
					var u uint64
					for k := 0; k < w; k++ {
						if big {
							u = u<<8 | uint64(b[k])
						} else {
							u |= uint64(b[k]) << (8 * k)
						}
					}
					v = float64(u)
				}
				if v != ds.Events.At(0, 0) {
					t.Errorf("%s: first value by hand %v, wrote %v", name, v, ds.Events.At(0, 0))
				}
				if end, _ := strconv.Atoi(strings.TrimSpace(string(raw[34:42]))); end != len(raw)-1 {
					t.Errorf("%s: HEADER DATA end %d, file %d bytes", name, end, len(raw))
				}
			}
		}
	}
}

func TestWriteChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randomSet(rng, 'F', []int{32, 32}, 50, false)
	b := randomSet(rng, 'I', []int{16, 24, 8}, 70, true)
	b.Analysis = []byte("gates: none")
	a.Keywords = []Keyword{{"$SRC", "first"}}
	b.Keywords = []Keyword{{"$SRC", "second"}}
	var buf bytes.Buffer
	if err := Write(&buf, a, b); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	sets, err := ParseAll(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 {
		t.Fatalf("%d data sets", len(sets))
	}
	// $NEXTDATA points at the second HEADER.
	nd, _ := sets[0].Keyword("$NEXTDATA")
	off, _ := strconv.Atoi(nd)
	if string(raw[off:off+6]) != "FCS3.1" {
		t.Errorf("$NEXTDATA %d points at %q", off, raw[off:off+6])
	}
	for i, ds := range []*DataSet{a, b} {
		x, err := sets[i].ReadAll(EventOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(x, ds.Events) {
			t.Errorf("data set %d: events differ", i+1)
		}
		if v, _ := sets[i].Keyword("$SRC"); v != ds.Keywords[0].Value {
			t.Errorf("data set %d: $SRC %q", i+1, v)
		}
	}
	an, err := sets[1].Analysis()
	if err != nil || string(an) != "gates: none" {
		t.Errorf("ANALYSIS = %q, %v", an, err)
	}
	if an, err := sets[0].Analysis(); an != nil || err != nil {
		t.Errorf("first ANALYSIS = %q, %v", an, err)
	}
	// Parse reads the first data set only.
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || f.NumEvents() != 50 {
		t.Errorf("Parse: %v", err)
	}
}

// TestWriteLargeOffsets writes an ANALYSIS segment ending past byte
// 99,999,999: both of its HEADER fields are then 0 (readers such as
// FCSFiles.jl look for $BEGIN/$END keywords only when both are) and the
// reader takes the offsets from $BEGINANALYSIS and $ENDANALYSIS.
func TestWriteLargeOffsets(t *testing.T) {
	ds := randomSet(rand.New(rand.NewPCG(5, 6)), 'F', []int{32}, 10, false)
	ds.Analysis = make([]byte, 100_000_000)
	ds.Analysis[len(ds.Analysis)-1] = 'Z'
	var pw prefixWriter
	if err := Write(&pw, ds); err != nil {
		t.Fatal(err)
	}
	h := pw.prefix[:HeaderLen]
	if got := string(h[42:58]); got != "       0       0" {
		t.Errorf("ANALYSIS fields %q, want both 0", got)
	}
	r := &sparseReader{prefix: pw.prefix, size: pw.n, last: 'Z'}
	f, err := Parse(r, pw.n)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := f.Keyword("$ENDANALYSIS")
	if want := strconv.FormatInt(pw.n-1, 10); e != want {
		t.Errorf("$ENDANALYSIS %s, want %s", e, want)
	}
	an, err := f.Analysis()
	if err != nil || len(an) != 100_000_000 || an[len(an)-1] != 'Z' {
		t.Errorf("Analysis: %d bytes, %v", len(an), err)
	}
}

// prefixWriter keeps the first 64 KiB written and counts the rest.
type prefixWriter struct {
	prefix []byte
	n      int64
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if k := min(len(p), 1<<16-len(w.prefix)); k > 0 {
		w.prefix = append(w.prefix, p[:k]...)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// sparseReader serves a prefix, then zeros, then a last byte.
type sparseReader struct {
	prefix []byte
	size   int64
	last   byte
}

func (r *sparseReader) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		o := off + int64(i)
		switch {
		case o >= r.size:
			return i, io.EOF
		case o < int64(len(r.prefix)):
			p[i] = r.prefix[o]
		case o == r.size-1:
			p[i] = r.last
		default:
			p[i] = 0
		}
	}
	return len(p), nil
}

func TestWriteDelimiter(t *testing.T) {
	ds := randomSet(rand.New(rand.NewPCG(1, 1)), 'F', []int{32}, 3, false)
	ds.Keywords = []Keyword{{"PATH", "/data/run1"}, {"RATIO", "a|b"}}
	var buf bytes.Buffer
	if err := Write(&buf, ds); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if raw[58] != '|' {
		t.Errorf("delimiter %q, want '|' (a value starts with '/')", raw[58])
	}
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"path": "/data/run1", "ratio": "a|b"} {
		if v, _ := f.Keyword(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	ds.Delimiter = '/'
	if err := Write(io.Discard, ds); err == nil || !strings.Contains(err.Error(), "starts with the delimiter") {
		t.Errorf("explicit delimiter: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	base := func() *DataSet { return randomSet(rand.New(rand.NewPCG(2, 2)), 'I', []int{16}, 4, false) }
	for _, tc := range []struct {
		mod func(*DataSet)
		err string
	}{
		{func(d *DataSet) { d.Events.Set(1, 0, 65536) }, "not an integer in [0, 65535]"},
		{func(d *DataSet) { d.Events.Set(1, 0, -1) }, "not an integer"},
		{func(d *DataSet) { d.Events.Set(1, 0, 2.5) }, "not an integer"},
		{func(d *DataSet) { d.Params[0].Range = 1000; d.Events.Set(1, 0, 1024) }, "[0, 1023]"},
		{func(d *DataSet) { d.Params[0].Bits = 12 }, "multiple of 8"},
		{func(d *DataSet) { d.DataType = 'F' }, "needs 32 bits"},
		{func(d *DataSet) { d.DataType = 'A' }, "cannot write"},
		{func(d *DataSet) { d.Params[0].Name = "" }, "no name"},
		{func(d *DataSet) { d.Keywords = []Keyword{{"$tot", "3"}} }, "set by the writer"},
		{func(d *DataSet) { d.Keywords = []Keyword{{"$P1N", "x"}} }, "set by the writer"},
		{func(d *DataSet) { d.Keywords = []Keyword{{"X", ""}} }, "empty"},
		{func(d *DataSet) { d.Keywords = []Keyword{{"X", "1"}, {"x", "2"}} }, "twice"},
		{func(d *DataSet) { d.Params = append(d.Params, Param{Name: "b"}) }, "2 parameters"},
		// Float data the file cannot hold: the error names event and
		// parameter (row and column).
		{func(d *DataSet) { toFloat(d, 'F'); d.Events.Set(2, 0, math.NaN()) }, "event 3 parameter 1 (FL1-A): value NaN is not finite"},
		{func(d *DataSet) { toFloat(d, 'D'); d.Events.Set(1, 0, math.Inf(-1)) }, "event 2 parameter 1 (FL1-A): value -Inf is not finite"},
		{func(d *DataSet) { toFloat(d, 'F'); d.Events.Set(3, 0, 1e39) }, "event 4 parameter 1 (FL1-A): value 1e+39 overflows float32"},
		{func(d *DataSet) { toFloat(d, 'F'); d.Events.Set(0, 0, -3.5e38) }, "event 1 parameter 1 (FL1-A): value -3.5e+38 overflows float32"},
		{func(d *DataSet) { d.Params[0].Range = math.Inf(1) }, "parameter 1 (FL1-A): bad range +Inf"},
		{func(d *DataSet) { toFloat(d, 'F'); d.Params[0].Range = math.NaN() }, "bad range NaN"},
		{func(d *DataSet) { d.Params[0].Gain = math.NaN() }, "bad gain NaN"},
		{func(d *DataSet) { d.Params[0].Decades = math.Inf(1) }, "bad $PnE +Inf,0"},
		{func(d *DataSet) { d.Params[0].Offset = math.NaN() }, "bad $PnE 0,NaN"},
	} {
		d := base()
		tc.mod(d)
		if err := Write(io.Discard, d); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("err = %v, want one containing %q", err, tc.err)
		}
	}
}

// toFloat turns the 16-bit integer data set of TestWriteErrors into F or D.
func toFloat(d *DataSet, dt byte) {
	d.DataType = dt
	d.Params[0].Bits = 0
}

// TestWriteLargeValues writes float values near the limits of their type:
// they round-trip, and the default $PnR stays a short number.
func TestWriteLargeValues(t *testing.T) {
	for _, tc := range []struct {
		dt    byte
		v     float64
		rng   string // $P1R written
		value float64
	}{
		{'D', 1e300, "1e+300", 1e300},
		{'D', math.MaxFloat64, "1.7976931348623157e+308", math.MaxFloat64},
		{'F', math.MaxFloat32, "3.4028234663852886e+38", math.MaxFloat32},
		{'F', 3e38, "3.0000000054977558e+38", float64(float32(3e38))},
		{'D', 123456.5, "123457", 123456.5},
	} {
		ds := &DataSet{DataType: tc.dt, Params: []Param{{Name: "X"}}, Events: mat.NewDense(2, 1, []float64{-1, tc.v})}
		raw := mustWrite(t, ds)
		if len(raw) > 600 {
			t.Errorf("%c %v: %d bytes written", tc.dt, tc.v, len(raw))
		}
		f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := f.Keyword("$P1R"); r != tc.rng {
			t.Errorf("%c %v: $P1R %q, want %q", tc.dt, tc.v, r, tc.rng)
		}
		x, err := f.ReadAll(EventOptions{})
		if err != nil || x.At(1, 0) != tc.value || x.At(0, 0) != -1 {
			t.Errorf("%c %v: read %v, %v", tc.dt, tc.v, x, err)
		}
	}
	// 64-bit integers keep an integer $PnR (2^64).
	ds := &DataSet{DataType: 'I', Params: []Param{{Name: "X", Bits: 64}}, Events: mat.NewDense(1, 1, []float64{5})}
	raw := mustWrite(t, ds)
	if !bytes.Contains(raw, []byte("/$P1R/18446744073709551616/")) {
		t.Errorf("64-bit $PnR not written as 2^64")
	}
}

// TestLayoutText checks the TEXT offsets fixed point, and that an
// iteration limit too low for it is an error, not a panic.
func TestLayoutText(t *testing.T) {
	kw := []Keyword{{"$TOT", "3"}, {"$PAR", "1"}}
	text, off, err := layoutText('/', kw, 12345678, 99, false, maxLayoutIter)
	if err != nil {
		t.Fatal(err)
	}
	want := [6]int64{58, 58 + int64(len(text)) - 1, 58 + int64(len(text)), 58 + int64(len(text)) + 12345678 - 1, 58 + int64(len(text)) + 12345678, 58 + int64(len(text)) + 12345678 + 98}
	if off != want {
		t.Errorf("offsets %v, want %v", off, want)
	}
	for _, k := range []string{"/$BEGINDATA/" + strconv.FormatInt(want[2], 10) + "/", "/$ENDANALYSIS/" + strconv.FormatInt(want[5], 10) + "/", "/$NEXTDATA/" + strconv.FormatInt(want[5]+1, 10) + "/"} {
		if !bytes.Contains(text, []byte(k)) {
			t.Errorf("TEXT lacks %s", k)
		}
	}
	if _, _, err := layoutText('/', kw, 12345678, 99, false, 1); err == nil || !strings.Contains(err.Error(), "did not converge") {
		t.Errorf("1 iteration: %v", err)
	}
}

// TestReadVariants covers reader paths the writer does not produce:
// two-byte $BYTEORD, padded numbers, $PnR masks, $PnE/$PnG scaling, blank
// HEADER DATA offsets, a doubled delimiter ending the TEXT.
func TestReadVariants(t *testing.T) {
	mk := func(text string, data []byte, hdrData bool) []byte {
		tb, te := 58, 58+len(text)-1
		db, de := te+1, te+len(data)
		text = strings.ReplaceAll(text, "BEGINPOS", fmt.Sprintf("%08d", db))
		text = strings.ReplaceAll(text, "ENDPOSIT", fmt.Sprintf("%08d", de))
		h := fmt.Sprintf("FCS3.0    %8d%8d", tb, te)
		if hdrData {
			h += fmt.Sprintf("%08d%08d", db, de)
		} else {
			h += strings.Repeat(" ", 16)
		}
		h += "       0       0"
		return append([]byte(h+text), data...)
	}
	// 2 events x (16-bit, 16-bit) little-endian, $BYTEORD 1,2.
	data := []byte{0xff, 0xff, 0x10, 0x00, 0x34, 0x12, 0x02, 0x00}
	text := `\$BEGINDATA\BEGINPOS\$ENDDATA\ENDPOSIT\$BYTEORD\1,2\$DATATYPE\I\$MODE\L\$PAR\  2\$TOT\ 000002\` +
		`$P1B\16\$P1R\ 1000\$P1N\A\$P1E\ 2,1\$P2B\16\$P2R\65536\$P2N\B\$P2G\4\$P2S\lab\\el\#EMPTY\\`
	raw := mk(text, data, false)
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	x, err := f.ReadAll(EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 0xffff & 1023 = 1023; 0x1234 & 1023 = 0x234.
	if want := mat.NewDense(2, 2, []float64{1023, 16, 0x234, 2}); !mat.Equal(x, want) {
		t.Errorf("read %v, want %v", mat.Formatted(x), mat.Formatted(want))
	}
	if p := f.Params()[1]; p.Label != `lab\el` || p.Gain != 4 {
		t.Errorf("param 2 = %+v", p)
	}
	if v, ok := f.Keyword("#empty"); !ok || v != "" {
		t.Errorf("#EMPTY = %q, %v", v, ok)
	}
	y, err := f.ReadAll(EventOptions{Scale: true})
	if err != nil {
		t.Fatal(err)
	}
	// $P1E 2,1 with $P1R 1000: 10^(2 v / 1000); $P2G 4: v / 4.
	want := []float64{math.Pow(10, 2*1023/1000.0), 4, math.Pow(10, 2*float64(0x234)/1000), 0.5}
	for i, w := range want {
		if g := y.RawMatrix().Data[i]; math.Abs(g-w) > 1e-12*w {
			t.Errorf("scaled value %d = %v, want %v", i, g, w)
		}
	}
	// Two-byte big-endian and an unsupported order.
	text2 := strings.Replace(text, `1,2`, `2,1`, 1)
	raw = mk(text2, data, true)
	f, err = Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	x, _ = f.ReadAll(EventOptions{})
	if want := mat.NewDense(2, 2, []float64{1023, 0x1000, 0x3412 & 1023, 0x200}); !mat.Equal(x, want) {
		t.Errorf("read %v, want %v", mat.Formatted(x), mat.Formatted(want))
	}
	for _, bad := range []struct{ from, to, err string }{
		{`1,2`, `3,4,1,2`, "not supported"},
		{`$DATATYPE\I`, `$DATATYPE\A`, "ASCII"},
		{`$MODE\L`, `$MODE\C`, "list mode"},
		{`$P1B\16`, `$P1B\12`, "multiple of 8"},
		{`$PAR\  2`, `$PAR\ 999`, "bad $PAR"},
		{`$P2B\16\`, ``, "missing required keyword $P2B"},
	} {
		raw := mk(strings.Replace(text, bad.from, bad.to, 1), data, true)
		_, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s -> %s: %v, want %q", bad.from, bad.to, err, bad.err)
		}
	}
	// Truncated by one byte.
	raw = mk(text, data, true)
	raw = raw[:len(raw)-1]
	f, err = Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var te *TruncatedError
	if _, err := f.Events(EventOptions{}); !errors.As(err, &te) || te.Expected != 2 || te.Present != 1 {
		t.Errorf("truncated: %v", err)
	}
}

func TestEventReader(t *testing.T) {
	ds := randomSet(rand.New(rand.NewPCG(9, 9)), 'F', []int{32, 32, 32}, 1001, true)
	var buf bytes.Buffer
	if err := Write(&buf, ds); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Events(EventOptions{BufferBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]float64, 2), 10); err == nil {
		t.Errorf("Read into 2 values did not fail")
	}
	dst := make([]float64, 3*64)
	var got []float64
	for step := 1; ; step = step%97 + 7 {
		k, err := r.Read(dst, step)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if k > step || k > 64 {
			t.Fatalf("read %d events for max %d", k, step)
		}
		got = append(got, dst[:3*k]...)
	}
	if !mat.Equal(mat.NewDense(1001, 3, got), ds.Events) {
		t.Errorf("streamed events differ")
	}
	if k, err := r.Read(dst, 5); k != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v", k, err)
	}
}

// TestDataOffsets checks the choice between HEADER and TEXT DATA offsets on
// synthetic files: 2 events of one 32-bit float, TEXT at 58.
func TestDataOffsets(t *testing.T) {
	data := make([]byte, 8)
	binary.BigEndian.PutUint32(data, math.Float32bits(1.5))
	binary.BigEndian.PutUint32(data[4:], math.Float32bits(-2.25))
	build := func(hb, he, tb, te string) []byte {
		text := "/$BYTEORD/4,3,2,1/$DATATYPE/F/$PAR/1/$TOT/2/$P1B/32/$BEGINDATA/" + tb + "/$ENDDATA/" + te + "/"
		// TEXT is 58..58+len-1; DATA follows at d.
		d := 58 + len(text)
		r := strings.NewReplacer("<D>", strconv.Itoa(d), "<E>", strconv.Itoa(d+7), "<F>", strconv.Itoa(d+8), "<X>", strconv.Itoa(d+500), "<T>", "060", "<S>", strconv.Itoa(d+3))
		text = r.Replace(text)
		if 58+len(text) != d {
			t.Fatalf("placeholder changed the TEXT length")
		}
		h := fmt.Sprintf("FCS3.1    %8d%8d%8s%8s       0       0", 58, d-1, r.Replace(hb), r.Replace(he))
		return append([]byte(h+text), data...)
	}
	for _, tc := range []struct {
		name           string
		hb, he, tb, te string
		err            string
	}{
		{"agree", "<D>", "<E>", "<D>", "<E>", ""},
		{"header blank", "", "", "<D>", "<E>", ""},
		{"header zero", "0", "0", "<D>", "<E>", ""},
		{"$ENDDATA one past the end", "<D>", "<F>", "<D>", "<F>", ""},
		{"header start inside TEXT", "<T>", "<E>", "<D>", "<E>", ""},
		{"header end past the file", "<D>", "<X>", "<D>", "<E>", ""},
		{"TEXT wrong, header right", "<D>", "<E>", "<T>", "<X>", ""},
		{"both past the file", "<D>", "<X>", "<D>", "<X>", ""},
		{"no DATA", "0", "0", "0", "0", "no DATA segment"},
		// A segment too short for $TOT events, within the file: the other
		// one wins if it holds them, else only the first event is read.
		{"header end short, TEXT right", "<D>", "<S>", "<D>", "<E>", ""},
		{"TEXT end short, header right", "<D>", "<E>", "<D>", "<S>", ""},
		{"both short", "<D>", "<S>", "<D>", "<S>", "$TOT declares 2 events but only 1"},
	} {
		raw := build(tc.hb, tc.he, tc.tb, tc.te)
		f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		x, err := f.ReadAll(EventOptions{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := x.RawMatrix().Data; len(got) != 2 || got[0] != 1.5 || got[1] != -2.25 {
			t.Errorf("%s: read %v", tc.name, got)
		}
	}
}

func TestSpilloverKeywords(t *testing.T) {
	params := []Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}, {Name: "FL2-A", Label: "CD8"}}
	for _, tc := range []struct {
		key, val string
		params   []int
		m        []float64
		err      string
	}{
		{"$SPILLOVER", "2,FL2-A,FL1-A,1,0.1,0.02,1", []int{2, 1}, []float64{1, 0.1, 0.02, 1}, ""},
		{"SPILL", "2, CD3 , CD8 ,1,0.1,0.02,1", []int{1, 2}, []float64{1, 0.1, 0.02, 1}, ""},
		{"$SPILL", "2,2,3,1,0.5,0,1", []int{1, 2}, []float64{1, 0.5, 0, 1}, ""},
		{"$COMP", "2,1,0.25,0,1", []int{0, 1}, []float64{1, 0.25, 0, 1}, ""},
		{"SPILLOVER", "2,FL1-A,APC-A,1,0,0,1", nil, nil, `channel "APC-A" is neither a $PnN, a $PnS nor a parameter number`},
		{"$SPILLOVER", "2,FL1-A,FL2-A,1,0,0", nil, nil, "6 comma-separated fields for 2 channels, want 7"},
		{"$SPILLOVER", "x,FL1-A", nil, nil, "bad channel count"},
		{"$SPILLOVER", "1,FL1-A,NaN", nil, nil, "bad matrix value"},
		{"$COMP", "4,1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1", nil, nil, "unnamed 4x4 matrix for 3 parameters"},
	} {
		ds := &DataSet{Params: params, Keywords: []Keyword{{tc.key, tc.val}}}
		var buf bytes.Buffer
		if err := Write(&buf, ds); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		sp, err := f.Spillover()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("%s %q: err %v, want %q", tc.key, tc.val, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tc.key, tc.val, err)
			continue
		}
		if sp.Keyword != tc.key || !reflect.DeepEqual(sp.Params, tc.params) || !mat.Equal(sp.Matrix, mat.NewDense(2, 2, tc.m)) {
			t.Errorf("%s %q: %+v", tc.key, tc.val, sp)
		}
	}
	f, err := Parse(bytes.NewReader(mustWrite(t, &DataSet{Params: params})), 0)
	if err == nil {
		t.Errorf("Parse with size 0: %v", f)
	}
	b := mustWrite(t, &DataSet{Params: params})
	f, err = Parse(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Spillover(); !errors.Is(err, ErrNoSpillover) {
		t.Errorf("no spillover: %v", err)
	}
}

func mustWrite(t *testing.T, ds ...*DataSet) []byte {
	var buf bytes.Buffer
	if err := Write(&buf, ds...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriter checks that a file written event by event is byte for byte the
// file Write makes of the same events and ranges, for F, D and I in both
// byte orders, and the Writer's errors.
func TestWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, dt := range []byte{'F', 'D', 'I'} {
		for _, big := range []bool{false, true} {
			params := []Param{{Name: "FSC-A", Range: 65536}, {Name: "FL1-A", Label: "CD3", Range: 1024}, {Name: "DICA1", Range: 5}}
			if dt == 'I' {
				for j := range params {
					params[j].Bits = 16
				}
			}
			n := 37
			ev := mat.NewDense(n, 3, nil)
			for i := 0; i < n; i++ {
				for j, p := range params {
					v := rng.Float64() * (p.Range - 1)
					if dt == 'I' {
						v = math.Floor(v)
					}
					ev.Set(i, j, v)
				}
			}
			kw := []Keyword{{Key: "DICA_MODEL_METHOD", Value: "DICA"}}
			var whole bytes.Buffer
			if err := Write(&whole, &DataSet{Params: params, DataType: dt, BigEndian: big, Keywords: kw, Events: ev}); err != nil {
				t.Fatal(err)
			}
			var streamed bytes.Buffer
			w, err := NewWriter(&streamed, &DataSet{Params: params, DataType: dt, BigEndian: big, Keywords: kw}, n)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if err := w.WriteEvent(ev.RawRowView(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Errorf("%c big-endian %v: streamed file differs from Write's (%d vs %d bytes)", dt, big, streamed.Len(), whole.Len())
			}
			f, err := Parse(bytes.NewReader(streamed.Bytes()), int64(streamed.Len()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.ReadAll(EventOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < 3; j++ {
					want := ev.At(i, j)
					if dt == 'F' {
						want = float64(float32(want))
					}
					if got.At(i, j) != want {
						t.Fatalf("%c: event %d parameter %d: %v, want %v", dt, i, j, got.At(i, j), want)
					}
				}
			}
		}
	}

	params := []Param{{Name: "A", Range: 10}, {Name: "B", Range: 10}}
	if _, err := NewWriter(io.Discard, &DataSet{Params: []Param{{Name: "A"}}}, 3); err == nil || !strings.Contains(err.Error(), "needs the range") {
		t.Errorf("F parameter without a range: %v", err)
	}
	if _, err := NewWriter(io.Discard, &DataSet{Params: params, Events: mat.NewDense(1, 2, nil)}, 1); err == nil {
		t.Error("NewWriter accepted a data set with Events")
	}
	w, err := NewWriter(io.Discard, &DataSet{Params: params}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvent([]float64{1}); err == nil || !strings.Contains(err.Error(), "1 values for 2 parameters") {
		t.Errorf("short event: %v", err)
	}
	w, _ = NewWriter(io.Discard, &DataSet{Params: params}, 2)
	if err := w.WriteEvent([]float64{1, math.NaN()}); err == nil || !strings.Contains(err.Error(), "event 1 parameter 2 (B): value NaN is not finite") {
		t.Errorf("NaN: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed event succeeded")
	}
	w, _ = NewWriter(io.Discard, &DataSet{Params: params}, 1)
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "0 events written of the 1 declared") {
		t.Errorf("too few events: %v", err)
	}
	w, _ = NewWriter(io.Discard, &DataSet{Params: params}, 1)
	w.WriteEvent([]float64{1, 2})
	if err := w.WriteEvent([]float64{1, 2}); err == nil || !strings.Contains(err.Error(), "more events than the 1 declared") {
		t.Errorf("too many events: %v", err)
	}
}

// TestLargeDataHeaderOffsets writes the HEADER of a data set whose DATA
// segment ends past byte 99,999,999: both of its HEADER offsets are 0 and
// $BEGINDATA/$ENDDATA hold them, so readers take them from there without a
// warning.
func TestLargeDataHeaderOffsets(t *testing.T) {
	var buf bytes.Buffer
	const events = 30_000_000 // 120 MB of float32
	w, err := NewWriter(&buf, &DataSet{Params: []Param{{Name: "A", Range: 10}}}, events)
	if err != nil {
		t.Fatal(err)
	}
	// The HEADER and TEXT wait in the writer's 64 KB buffer: write events
	// until it is flushed.
	for i := 0; i < 20000; i++ {
		if err := w.WriteEvent([]float64{1}); err != nil {
			t.Fatal(err)
		}
	}
	hdr := buf.String()[:HeaderLen]
	if got := hdr[26:42]; got != "       0       0" {
		t.Fatalf("HEADER DATA offsets %q, want both 0", got)
	}
	text := buf.String()[HeaderLen:]
	begin, end := keywordInt(t, text, "$BEGINDATA"), keywordInt(t, text, "$ENDDATA")
	textEnd, err := strconv.ParseInt(strings.TrimSpace(hdr[18:26]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if begin != textEnd+1 || end-begin+1 != 4*events {
		t.Fatalf("$BEGINDATA %d, $ENDDATA %d after a TEXT ending at %d", begin, end, textEnd)
	}
	// The TEXT offsets still fit: they stay in the HEADER.
	if got := strings.TrimSpace(hdr[10:18]); got != "58" {
		t.Errorf("HEADER TEXT begin %q", got)
	}
}

// keywordInt returns the integer value of key in the TEXT segment text.
func keywordInt(t *testing.T, text, key string) int64 {
	t.Helper()
	d := text[:1]
	i := strings.Index(text, d+key+d)
	if i < 0 {
		t.Fatalf("no %s", key)
	}
	rest := text[i+len(key)+2:]
	v, err := strconv.ParseInt(rest[:strings.Index(rest, d)], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
