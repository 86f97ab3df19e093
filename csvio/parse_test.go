package csvio

import (
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// randomDecimal returns a random number in one of many textual forms.
func randomDecimal(rng *rand.Rand) string {
	var b strings.Builder
	switch rng.IntN(4) {
	case 0:
		b.WriteByte('-')
	case 1:
		if rng.IntN(4) == 0 {
			b.WriteByte('+')
		}
	}
	digits := func(n int) {
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	switch rng.IntN(6) {
	case 0: // integer
		digits(1 + rng.IntN(20))
	case 1: // short decimal like the CyTOF files
		digits(1 + rng.IntN(5))
		b.WriteByte('.')
		digits(1 + rng.IntN(6))
	case 2: // long mantissa
		digits(rng.IntN(12))
		b.WriteByte('.')
		digits(1 + rng.IntN(30))
	case 3: // leading zeros
		b.WriteString("0.000")
		digits(1 + rng.IntN(18))
	case 4: // .5 and 5.
		if rng.IntN(2) == 0 {
			b.WriteByte('.')
			digits(1 + rng.IntN(8))
		} else {
			digits(1 + rng.IntN(8))
			b.WriteByte('.')
		}
	case 5: // 17 significant digits, as %v prints
		b.WriteString(strconv.FormatFloat(math.Abs(rng.NormFloat64())*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64))
		return b.String()
	}
	if rng.IntN(3) == 0 {
		b.WriteByte("eE"[rng.IntN(2)])
		switch rng.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(rng.IntN(40)))
		if rng.IntN(20) == 0 {
			b.WriteString(strconv.Itoa(rng.IntN(400)))
		}
	}
	return b.String()
}

func TestParseNumberMatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	const n = 200000
	for range n {
		s := randomDecimal(rng)
		want, err := strconv.ParseFloat(s, 64)
		finite := err == nil && !math.IsInf(want, 0)
		got, ok := parseNumber([]byte(s))
		if ok != finite {
			t.Fatalf("parseNumber(%q) ok = %v, strconv gives %v, %v", s, ok, want, err)
		}
		if ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseNumber(%q) = %v (%#x), strconv gives %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		if _, m, ok := fastFloat([]byte(s)); ok && m == len(s) {
			fast++
		}
	}
	// The test must exercise the fast path, not only the fallback.
	if fast < n/3 {
		t.Errorf("fast path taken for %d of %d numbers", fast, n)
	}
}

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", math.Copysign(0, -1), true},
		{"17.89", 17.89, true},
		{"0.002912", 0.002912, true},
		{"1e22", 1e22, true},
		{"1e23", 1e23, true},
		{"9007199254740993", 9007199254740992, true}, // 2^53+1 rounds to even
		{"1.7976931348623157e308", math.MaxFloat64, true},
		{"4.9e-324", 5e-324, true},
		{"1e-400", 0, true},
		{"0x1p-2", 0, false}, // Go's syntax, not a decimal number
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"1e1_0", 0, false},
		{"1__0", 0, false},
		{"-.5E+2", -50, true},
		{"00012", 12, true},
		{"1e+", 0, false},
		{"+", 0, false},
		{"1.5e3.2", 0, false},
		{"Infinity", 0, false},
		{"nan", 0, false},
		{" 1", 0, false},
		{".5", 0.5, true},
		{"5.", 5, true},
		{"+3", 3, true},
		{"1e400", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"-inf", 0, false},
		{"", 0, false},
		{"NA", 0, false},
		{"1.2.3", 0, false},
		{"1e", 0, false},
		{"--1", 0, false},
		{".", 0, false},
		{"1,5", 0, false},
	} {
		got, ok := parseNumber([]byte(tc.in))
		if ok != tc.ok || (ok && math.Float64bits(got) != math.Float64bits(tc.want)) {
			t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseNumberNoAlloc(t *testing.T) {
	in := [][]byte{[]byte("17.89"), []byte("1.234567890123456789012e-5"), []byte("0x1p3"), []byte("4.9e-324")}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range in {
			parseNumber(s)
		}
	})
	if allocs != 0 {
		t.Errorf("parseNumber allocates %v times per run", allocs)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300)
	in := "a\r\n\nbb\n" + long + "\nlast"
	want := []string{"a", "", "bb", long, "last"}
	// One byte at a time, with a buffer smaller than a line.
	var l lineReader
	l.reset(iotest.OneByteReader(strings.NewReader(in)), 16, DefaultMaxLineBytes)
	var got []string
	for {
		s, ok := l.next()
		if !ok {
			break
		}
		got = append(got, string(s))
	}
	if !slices.Equal(got, want) || l.line != len(want) || l.err != nil {
		t.Errorf("lines %q (line %d, err %v), want %q", got, l.line, l.err, want)
	}
	l.reset(iotest.TimeoutReader(strings.NewReader("a\nb")), 16, DefaultMaxLineBytes)
	for {
		if _, ok := l.next(); !ok {
			break
		}
	}
	if l.err != iotest.ErrTimeout {
		t.Errorf("read error %v, want %v", l.err, iotest.ErrTimeout)
	}
}

func TestSplitLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		kind int
	}{
		{"a,b,c", []string{"a", "b", "c"}, errNone},
		{"a,,", []string{"a", "", ""}, errNone},
		{` "a,b" , "say ""hi""" ,c `, []string{"a,b", `say "hi"`, "c"}, errNone},
		{`"a`, nil, errQuoteOpen},
		{`"a"b,c`, nil, errQuoteText},
		{"", []string{""}, errNone},
	} {
		got, kind := splitLine([]byte(tc.in), ',')
		if kind != tc.kind || (kind == errNone && !slices.Equal(got, tc.want)) {
			t.Errorf("splitLine(%q) = %q, %d; want %q, %d", tc.in, got, kind, tc.want, tc.kind)
		}
	}
	got, _ := splitLine([]byte("1\t 2\t3"), '\t')
	if !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("tab-separated: %q", got)
	}
}

func TestNaturalCompare(t *testing.T) {
	in := []string{"sample10.csv", "sample2.csv", "sample1.csv", "b", "a10b2", "a10b10", "a9", "sample02.csv", "sample", "x007", "x7"}
	want := []string{"a9", "a10b2", "a10b10", "b", "sample", "sample1.csv", "sample02.csv", "sample2.csv", "sample10.csv", "x007", "x7"}
	slices.SortFunc(in, NaturalCompare)
	if !slices.Equal(in, want) {
		t.Errorf("natural order %q, want %q", in, want)
	}
	for _, a := range want {
		for _, b := range want {
			if NaturalCompare(a, b) != -NaturalCompare(b, a) || (NaturalCompare(a, b) == 0) != (a == b) {
				t.Errorf("NaturalCompare(%q, %q) inconsistent", a, b)
			}
		}
	}
}

// decimalRE is the syntax of the numbers of a CSV file, as a regular
// expression: the reference for parseNumber and isNumber.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// FuzzParseNumber checks parseNumber against its reference: a decimal
// number (decimalRE) parsed by strconv.ParseFloat, finite. isNumber is
// decimalRE or a word strconv reads as Inf or NaN.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"17.89", "-0.5e-3", "1e22", "9007199254740993", ".5", "0x1p3", "NaN", "1e400", "00000000000000000000001.5", "1_000", "1e1_0", "-Infinity", "5.e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseFloat(s, 64)
		decimal := decimalRE.MatchString(s)
		finite := decimal && err == nil && !math.IsInf(want, 0) && !math.IsNaN(want)
		got, ok := parseNumber([]byte(s))
		if ok != finite || (ok && math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("parseNumber(%q) = %v, %v; decimal %v, strconv %v, %v", s, got, ok, decimal, want, err)
		}
		special := !strings.ContainsAny(s, "0123456789") && err == nil
		if isNumber([]byte(s)) != (decimal || special) {
			t.Fatalf("isNumber(%q) = %v; decimal %v, strconv %v, %v", s, !(decimal || special), decimal, want, err)
		}
		if v, n, ok := fastFloat([]byte(s)); ok {
			w, err := strconv.ParseFloat(s[:n], 64)
			if err != nil || math.Float64bits(w) != math.Float64bits(v) || !decimalRE.MatchString(s[:n]) {
				t.Fatalf("fastFloat(%q) = %v over %d bytes; strconv %v, %v", s, v, n, w, err)
			}
		}
	})
}

func BenchmarkParseNumber(b *testing.B) {
	in := [][]byte{[]byte("17.89"), []byte("10.231"), []byte("790.55"), []byte("2.7417"), []byte("0"), []byte("1.0653"), []byte("179.6"), []byte("0.002912")}
	var sum float64
	for b.Loop() {
		for _, s := range in {
			v, _ := parseNumber(s)
			sum += v
		}
	}
	_ = sum
}
