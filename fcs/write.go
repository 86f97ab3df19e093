package fcs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/internal/escape"
	"gonum.org/v1/gonum/mat"
)

// DataSet is one data set to write with Write.
type DataSet struct {
	// Params describes the parameters; Name ($PnN) is required, Label
	// ($PnS) is written when not empty. Bits defaults to 32 for F, 64 for D
	// and 32 for I (I allows 8, 16, 24, 32, 40, 48, 56, 64). Range ($PnR)
	// defaults to 2^Bits for I and to the smallest integer above the largest
	// value (at least 1) for F and D; a default F or D range comes with the
	// display hint $PnD "Linear,MIN,MAX" when the smallest value MIN is
	// negative and Keywords has no $PnD (see Param.ForFloat). Gain is
	// written as $PnG (when not 0 or 1). Decades and Offset are written as
	// $PnE for I; F and D data take $PnE 0,0 (FCS 3.1: float values are
	// linear), so Decades > 0 is an error for them. Keywords are written
	// after the parameter's standard keywords, with the n of their key
	// replaced by the parameter's number.
	Params []Param
	// DataType is 'F' (the default when 0), 'D' or 'I'.
	DataType byte
	// BigEndian selects $BYTEORD 4,3,2,1 instead of 1,2,3,4.
	BigEndian bool
	// Keywords are written after the standard keywords. They must not be
	// keywords the writer sets ($BEGINDATA, $TOT, $PnB, ...) nor be empty.
	// Source.Keywords gives those of an input worth carrying over.
	Keywords []Keyword
	// Events holds the $TOT x $PAR events (nil for none).
	Events *mat.Dense
	// Analysis is written as the ANALYSIS segment when not empty.
	Analysis []byte
	// Delimiter is the TEXT delimiter (default '/', or another character if
	// some keyword or value starts with '/'). Delimiters inside keywords or
	// values are escaped by doubling them, as FCS 3.1 requires.
	Delimiter byte
}

// validUTF8 returns s as valid UTF-8, as FCS 3.1 requires of TEXT: s
// itself when it is valid, otherwise with each byte that does not belong
// to a valid UTF-8 sequence taken as the ISO-8859-1 (Latin-1) character of
// that code, the usual encoding of non-ASCII text in FCS 2.0 and 3.0
// files.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = rune(s[i])
		}
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// WriteFile writes the data sets to an FCS 3.1 file at path (see Write),
// atomically: the file at path, if any, is replaced only once the new one
// is complete and on disk, and is left as it was after an error.
func WriteFile(path string, sets ...*DataSet) error {
	if err := checkSets(sets); err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("fcs: %w", err)
	}
	defer f.Abort()
	if err := Write(f, sets...); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("fcs: %w", err)
	}
	return nil
}

// checkSets checks that there are data sets and none is nil.
func checkSets(sets []*DataSet) error {
	if len(sets) == 0 {
		return fmt.Errorf("fcs: Write with no data set")
	}
	for i, s := range sets {
		if s == nil {
			return fmt.Errorf("fcs: data set %d is nil", i+1)
		}
	}
	return nil
}

// Write writes the data sets as an FCS 3.1 file in list mode, chained by
// $NEXTDATA. Each data set is a HEADER, a TEXT segment (standard keywords,
// then the extra ones), the DATA segment and the optional ANALYSIS segment.
// A segment whose HEADER offsets do not both fit in 8 digits (an offset
// above 99,999,999) has both written as 0, as the standard asks; readers
// then take them from $BEGINDATA/$ENDDATA. Numbers of 1e21 and more
// (or below 1e-6) in $PnR, $PnG and $PnE are written in exponent form
// ("3.4e+38"). It returns an error, naming the event (row) and parameter
// (column), for values that the data type cannot hold: non-integer or
// out-of-range values for I, NaN or ±Inf for F and D, magnitudes above
// math.MaxFloat32 for F (they would become ±Inf). It also returns an error
// for a non-finite or negative range, gain or $PnE, a $PnE other than 0,0
// for float data, empty names or values, keywords the writer owns, and a
// nil writer or data set.
//
// Keywords and values (names and labels included) are written as valid
// UTF-8, as FCS 3.1 requires: a byte that is not part of a valid UTF-8
// sequence is taken as the Latin-1 character of that code (so the "µ" of an
// FCS 2.0 file, byte 0xB5, is written as "µ", bytes C2 B5).
func Write(w io.Writer, sets ...*DataSet) error {
	if err := checkSets(sets); err != nil {
		return err
	}
	if w == nil {
		return fmt.Errorf("fcs: Write to a nil writer")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	for i, s := range sets {
		if err := s.write(bw, i == len(sets)-1); err != nil {
			if len(sets) > 1 {
				return fmt.Errorf("%w (data set %d)", err, i+1)
			}
			return err
		}
	}
	return bw.Flush()
}

// reserved lists the keywords set by the writer (upper case); $Pn* ones are
// matched separately.
var reserved = map[string]bool{
	"$BEGINANALYSIS": true, "$ENDANALYSIS": true, "$BEGINSTEXT": true, "$ENDSTEXT": true,
	"$BEGINDATA": true, "$ENDDATA": true, "$BYTEORD": true, "$DATATYPE": true, "$MODE": true,
	"$NEXTDATA": true, "$PAR": true, "$TOT": true,
}

func isParamKey(k string) bool {
	if !strings.HasPrefix(k, "$P") || len(k) < 4 {
		return false
	}
	i := 2
	for i < len(k) && k[i] >= '0' && k[i] <= '9' {
		i++
	}
	if i == 2 || i != len(k)-1 {
		return false
	}
	switch k[i] {
	case 'B', 'E', 'N', 'S', 'R', 'G':
		return true
	}
	return false
}

type wparam struct {
	bits    int
	rng     float64
	limit   uint64 // largest integer value
	display string // $PnD chosen by the writer, or ""
}

// check validates the data set and resolves the parameters' bits and
// ranges. stream >= 0 declares the number of events of a data set whose
// events are written later by a Writer (s.Events must then be nil and every
// F or D range given).
func (s *DataSet) check(stream int) (dt byte, n int, ps []wparam, err error) {
	dt = s.DataType
	if dt == 0 {
		dt = 'F'
	}
	if dt != 'F' && dt != 'D' && dt != 'I' {
		return 0, 0, nil, fmt.Errorf("fcs: cannot write $DATATYPE %q (want F, D or I)", dt)
	}
	p := len(s.Params)
	if p == 0 {
		return 0, 0, nil, fmt.Errorf("fcs: data set has no parameters")
	}
	if s.Events != nil {
		if stream >= 0 {
			return 0, 0, nil, fmt.Errorf("fcs: NewWriter with a data set that has Events (write them with WriteEvent)")
		}
		var c int
		n, c = s.Events.Dims()
		if c != p {
			return 0, 0, nil, fmt.Errorf("fcs: events have %d columns for %d parameters", c, p)
		}
	}
	if stream >= 0 {
		n = stream
	}
	var bounds func(j int) (lo, hi float64) // nil for a Writer: no default F or D range
	if stream < 0 {
		bounds = s.eventBounds(dt, n)
	}
	ps = make([]wparam, p)
	for j := range s.Params {
		if ps[j], err = s.param(dt, j, bounds); err != nil {
			return 0, 0, nil, err
		}
	}
	if s.Events != nil {
		for i := 0; i < n; i++ {
			for j := range ps {
				if err := s.checkValue(dt, ps, i, j, s.Events.At(i, j)); err != nil {
					return 0, 0, nil, err
				}
			}
		}
	}
	return dt, n, ps, nil
}

// eventBounds returns the function giving the smallest and largest value
// of parameter j among the n events of s as stored for data type dt
// (+Inf and -Inf when n is 0).
func (s *DataSet) eventBounds(dt byte, n int) func(j int) (lo, hi float64) {
	return func(j int) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			v := s.Events.At(i, j) // finite: checked by check before anything is written
			if dt == 'F' {
				v = float64(float32(v)) // as stored
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		return lo, hi
	}
}

// param checks parameter j (0-based) of a data set of data type dt and
// resolves its bits, range, largest integer value and display hint. A
// default F or D range follows from bounds(j), the smallest and largest
// value stored; bounds is nil when the values are not known yet (Writer),
// and a default F or D range is then an error.
func (s *DataSet) param(dt byte, j int, bounds func(j int) (lo, hi float64)) (wparam, error) {
	q := s.Params[j]
	if strings.TrimSpace(q.Name) == "" {
		return wparam{}, fmt.Errorf("fcs: parameter %d has no name", j+1)
	}
	b, err := paramBits(dt, j, q.Bits)
	if err != nil {
		return wparam{}, err
	}
	r := q.Range
	if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return wparam{}, fmt.Errorf("fcs: parameter %d (%s): bad range %v (want a finite number >= 0)", j+1, q.Name, r)
	}
	if q.Gain < 0 || math.IsNaN(q.Gain) || math.IsInf(q.Gain, 0) {
		return wparam{}, fmt.Errorf("fcs: parameter %d (%s): bad gain %v (want a finite number > 0, or 0 for none)", j+1, q.Name, q.Gain)
	}
	if q.Decades < 0 || math.IsNaN(q.Decades) || math.IsInf(q.Decades, 0) || math.IsNaN(q.Offset) || math.IsInf(q.Offset, 0) {
		return wparam{}, fmt.Errorf("fcs: parameter %d (%s): bad $PnE %v,%v (want finite numbers, decades >= 0)", j+1, q.Name, q.Decades, q.Offset)
	}
	if q.Decades > 0 && dt != 'I' {
		return wparam{}, fmt.Errorf("fcs: parameter %d (%s): $PnE %v,%v (log-amplified integer values) does not apply to $DATATYPE %c, which FCS 3.1 gives $PnE 0,0: write the linear values with Decades 0 (see Param.Linear and Param.ForFloat)", j+1, q.Name, q.Decades, q.Offset, dt)
	}
	lim := uint64(0)
	display := ""
	if dt == 'I' {
		if r == 0 {
			r = math.Exp2(float64(b))
		}
		lim = intMask(b, r)
	} else if r == 0 && bounds == nil {
		return wparam{}, fmt.Errorf("fcs: parameter %d (%s): NewWriter needs the range ($PnR) of F and D parameters: the events are not known yet", j+1, q.Name)
	} else if r == 0 {
		lo, hi := bounds(j)
		r = math.Max(1, math.Floor(math.Max(hi, 0))+1)
		if lo < 0 && !s.hasKey(j, "D") {
			display = linearDisplay(lo, hi)
		}
	}
	return wparam{bits: b, rng: r, limit: lim, display: display}, nil
}

// paramBits returns the $PnB of parameter j (0-based) for data type dt:
// bits, or the type's default when bits is 0. F takes 32 bits, D 64, and I
// a multiple of 8 from 8 to 64.
func paramBits(dt byte, j, bits int) (int, error) {
	b := bits
	switch dt {
	case 'F':
		if b == 0 {
			b = 32
		}
		if b != 32 {
			return 0, fmt.Errorf("fcs: parameter %d: $DATATYPE F needs 32 bits, not %d", j+1, b)
		}
	case 'D':
		if b == 0 {
			b = 64
		}
		if b != 64 {
			return 0, fmt.Errorf("fcs: parameter %d: $DATATYPE D needs 64 bits, not %d", j+1, b)
		}
	case 'I':
		if b == 0 {
			b = 32
		}
		if b < 8 || b > 64 || b%8 != 0 {
			return 0, fmt.Errorf("fcs: parameter %d: %d bits is not a multiple of 8 from 8 to 64", j+1, b)
		}
	}
	return b, nil
}

// checkValue returns an error, naming event i and parameter j (0-based; the
// message counts from 1), when the data type cannot hold v.
func (s *DataSet) checkValue(dt byte, ps []wparam, i, j int, v float64) error {
	switch dt {
	case 'F', 'D':
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("fcs: event %d parameter %d (%s): value %v is not finite", i+1, j+1, s.Params[j].Name, v)
		}
		if dt == 'F' && math.IsInf(float64(float32(v)), 0) {
			return fmt.Errorf("fcs: event %d parameter %d (%s): value %v overflows float32 ($DATATYPE F holds magnitudes up to %g; use D)", i+1, j+1, s.Params[j].Name, v, math.MaxFloat32)
		}
	case 'I':
		if !(v >= 0) || v != math.Trunc(v) || v > float64(ps[j].limit) || v >= math.Exp2(float64(ps[j].bits)) {
			return fmt.Errorf("fcs: event %d parameter %d: value %v is not an integer in [0, %d] ($PnB %d, $PnR %g)", i+1, j+1, v, ps[j].limit, ps[j].bits, ps[j].rng)
		}
	}
	return nil
}

// fmtFloat formats a finite number as plain decimal digits (every $PnR of
// integer data, up to 2^64, stays an integer), or in exponent form when
// its magnitude is at least 1e21 or below 1e-6 (a $PnR of 1e300 would
// otherwise take 301 digits).
func fmtFloat(x float64) string {
	switch a := math.Abs(x); {
	case a >= 1e21 || a != 0 && a < 1e-6:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == math.Trunc(x):
		return strconv.FormatFloat(x, 'f', 0, 64) // exact: 2^64 is 18446744073709551616
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func (s *DataSet) keywords(dt byte, n int, ps []wparam) ([]Keyword, error) {
	bo := "1,2,3,4"
	if s.BigEndian {
		bo = "4,3,2,1"
	}
	var kw []Keyword
	seen := map[string]bool{}
	add := func(k, v string) error {
		nk := normKey(k)
		if seen[nk] {
			return fmt.Errorf("fcs: keyword %s given twice", escape.String(k, 0))
		}
		if nk == "" || v == "" {
			return fmt.Errorf("fcs: keyword %s has an empty key or value (not allowed by FCS)", escape.String(k, 0))
		}
		seen[nk] = true
		kw = append(kw, Keyword{validUTF8(k), validUTF8(v)})
		return nil
	}
	add("$BYTEORD", bo)
	add("$DATATYPE", string(dt))
	add("$MODE", "L")
	add("$PAR", strconv.Itoa(len(ps)))
	add("$TOT", strconv.Itoa(n))
	for j, q := range s.Params {
		pn := "$P" + strconv.Itoa(j+1)
		e := "0,0" // FCS 3.1: float data are linear
		if dt == 'I' {
			e = fmtFloat(q.Decades) + "," + fmtFloat(q.Offset)
		}
		add(pn+"N", q.Name)
		add(pn+"B", strconv.Itoa(ps[j].bits))
		add(pn+"E", e)
		add(pn+"R", fmtFloat(ps[j].rng))
		if q.Label != "" {
			add(pn+"S", q.Label)
		}
		if q.Gain != 0 && q.Gain != 1 {
			add(pn+"G", fmtFloat(q.Gain))
		}
		if ps[j].display != "" {
			add(pn+"D", ps[j].display)
		}
		for _, k := range q.Keywords {
			key, err := numberKey(k.Key, j+1)
			if err == nil {
				err = add(key, k.Value)
			}
			if err != nil {
				return nil, fmt.Errorf("fcs: parameter %d (%s): %w", j+1, escape.String(q.Name, 0), err)
			}
		}
	}
	for _, k := range s.Keywords {
		nk := normKey(k.Key)
		if reserved[nk] || isParamKey(nk) && seen[nk] || isParamKey(nk) && !strings.HasSuffix(nk, "G") {
			return nil, fmt.Errorf("fcs: keyword %s is set by the writer", escape.String(k.Key, 0))
		}
		if err := add(k.Key, k.Value); err != nil {
			return nil, err
		}
	}
	return kw, nil
}

// numberKey turns the key of a Param.Keywords entry, "$Pn<X>" or "Pn<X>"
// with <X> starting with a letter, into the key of parameter number n.
func numberKey(generic string, n int) (string, error) {
	prefix, rest := "", ""
	switch {
	case strings.HasPrefix(generic, "$Pn"):
		prefix, rest = "$P", generic[3:]
	case strings.HasPrefix(generic, "Pn"):
		prefix, rest = "P", generic[2:]
	default:
		return "", fmt.Errorf("keyword %s of a parameter does not start with $Pn or Pn", escape.String(generic, 0))
	}
	if rest == "" || !('A' <= rest[0] && rest[0] <= 'Z' || 'a' <= rest[0] && rest[0] <= 'z') {
		return "", fmt.Errorf("keyword %s of a parameter: the letters after $Pn or Pn name it", escape.String(generic, 0))
	}
	if prefix == "$P" && fieldKeys[normKey(rest)] {
		return "", fmt.Errorf("keyword %s is set from the fields of Param", escape.String(generic, 0))
	}
	return prefix + strconv.Itoa(n) + rest, nil
}

// hasKey reports whether parameter j (0-based) has the keyword $Pn<x> in
// its Keywords, or the data set as $P<j+1><x> in its Keywords.
func (s *DataSet) hasKey(j int, x string) bool {
	for _, k := range s.Params[j].Keywords {
		if normKey(k.Key) == "$PN"+x {
			return true
		}
	}
	key := "$P" + strconv.Itoa(j+1) + x
	for _, k := range s.Keywords {
		if normKey(k.Key) == key {
			return true
		}
	}
	return false
}

// linearDisplay is the $PnD value "Linear,lo,hi" of values from lo to hi.
func linearDisplay(lo, hi float64) string {
	return "Linear," + fmtFloat(lo) + "," + fmtFloat(hi)
}

// ForFloat returns p made fit for a float channel ($DATATYPE F or D) whose
// values run from lo to hi, as FCS 3.1 describes float parameters: Bits 0
// (the data type's width); $PnE 0,0 (Decades and Offset 0), since float
// values are linear; Range ($PnR) the smallest integer above hi, at least 1
// (as Write chooses it; float32 rounding included); and, when lo < 0, the
// display hint $PnD "Linear,lo,hi" in Keywords (replacing any $PnD), as
// viewers otherwise show a float channel from 0 or on a log scale and
// would hide its negative values. The values written must then be linear:
// for a log-amplified parameter (Decades > 0) write p.Linear(v) of the
// stored v (or read it with SourceOptions.Scale). Gain is kept; if the
// values were divided by it (Scale does that for linear channels), set
// Gain to 1. ForFloat returns an error when lo or hi is not finite or
// lo > hi.
func (p Param) ForFloat(lo, hi float64) (Param, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
		return p, fmt.Errorf("fcs: parameter %s: bad value range [%v, %v] (want finite numbers, the first not above the second)", escape.String(p.Name, 0), lo, hi)
	}
	p.Bits, p.Decades, p.Offset = 0, 0, 0
	top := math.Max(hi, float64(float32(hi)))
	p.Range = math.Max(1, math.Floor(top)+1)
	kw := make([]Keyword, 0, len(p.Keywords)+1)
	for _, k := range p.Keywords {
		if lo < 0 && normKey(k.Key) == "$PND" {
			continue
		}
		kw = append(kw, k)
	}
	if lo < 0 {
		kw = append(kw, Keyword{Key: "$PnD", Value: linearDisplay(lo, hi)})
	}
	p.Keywords = kw
	return p, nil
}

// Linear returns the linear value of a value v stored for the parameter:
// Offset * 10^(Decades * v / Range) for a log-amplified parameter
// (Decades > 0 and Range > 0; an Offset of 0 is read as 1, as flowCore
// does), v otherwise. Unlike EventOptions.Scale it does not divide by the
// gain.
func (p Param) Linear(v float64) float64 {
	if !(p.Decades > 0 && p.Range > 0) {
		return v
	}
	off := p.Offset
	if off == 0 {
		off = 1
	}
	return off * math.Pow(10, p.Decades*v/p.Range)
}

// delimiter picks the TEXT delimiter: one that no key or value starts with.
func (s *DataSet) delimiter(kw []Keyword) (byte, error) {
	starts := func(d byte) bool {
		for _, k := range kw {
			if k.Key[0] == d || k.Value[0] == d {
				return true
			}
		}
		return false
	}
	if s.Delimiter != 0 {
		if starts(s.Delimiter) {
			return 0, fmt.Errorf("fcs: a keyword or value starts with the delimiter %q", s.Delimiter)
		}
		return s.Delimiter, nil
	}
	for _, d := range []byte("/|\\\f!*~^") {
		if !starts(d) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("fcs: no TEXT delimiter fits the keywords")
}

func (s *DataSet) write(w *bufio.Writer, last bool) error {
	dt, n, ps, err := s.check(-1)
	if err != nil {
		return err
	}
	if err := s.writeHead(w, dt, n, ps, last); err != nil {
		return err
	}
	if err := s.writeData(w, dt, n, ps); err != nil {
		return err
	}
	_, err = w.Write(s.Analysis)
	return err
}

// writeHead writes the HEADER and TEXT segments of a data set of n events.
func (s *DataSet) writeHead(w *bufio.Writer, dt byte, n int, ps []wparam, last bool) error {
	kw, err := s.keywords(dt, n, ps)
	if err != nil {
		return err
	}
	delim, err := s.delimiter(append(kw, Keyword{"$BEGINDATA", "0"}))
	if err != nil {
		return err
	}
	evBytes := 0
	for _, p := range ps {
		evBytes += p.bits / 8
	}
	dataLen := int64(n) * int64(evBytes)
	anLen := int64(len(s.Analysis))

	text, off, err := layoutText(delim, kw, dataLen, anLen, last, maxLayoutIter)
	if err != nil {
		return err
	}
	w.Write(appendHeader(nil, off))
	_, err = w.Write(text)
	return err
}

// maxHeaderOffset is the largest offset the 8 digits of a HEADER field
// hold.
const maxHeaderOffset = 99_999_999

// appendHeader appends to b the HEADER of an FCS 3.1 data set whose TEXT,
// DATA and ANALYSIS segments begin and end at off. A segment whose offsets
// do not both fit in 8 digits has both written as 0, as the standard asks:
// its $BEGIN/$END keywords hold them.
func appendHeader(b []byte, off [6]int64) []byte {
	b = append(b, "FCS3.1    "...)
	for i := 0; i < len(off); i += 2 {
		o := off[i : i+2]
		if o[0] > maxHeaderOffset || o[1] > maxHeaderOffset {
			o = []int64{0, 0}
		}
		for _, x := range o {
			b = fmt.Appendf(b, "%8d", x)
		}
	}
	return b
}

// maxLayoutIter bounds the fixed-point iteration of layoutText. Each
// iteration that does not converge lengthens some offset by a digit, so a
// few iterations suffice.
const maxLayoutIter = 20

// layoutText builds the TEXT segment and the segment offsets (TEXT, DATA,
// ANALYSIS begin/end) it holds. The offsets are written in the TEXT whose
// length depends on them: layoutText iterates to the fixed point (offset
// lengths only grow, so this ends) and returns an error if it is not
// reached in maxIter iterations.
func layoutText(delim byte, kw []Keyword, dataLen, anLen int64, last bool, maxIter int) ([]byte, [6]int64, error) {
	var off [6]int64
	next := int64(0)
	for iter := 0; ; iter++ {
		text := buildText(delim, off, next, kw)
		var o [6]int64
		o[0], o[1] = HeaderLen, HeaderLen+int64(len(text))-1
		end := o[1]
		if dataLen > 0 {
			o[2], o[3] = end+1, end+dataLen
			end = o[3]
		}
		if anLen > 0 {
			o[4], o[5] = end+1, end+anLen
			end = o[5]
		}
		nx := int64(0)
		if !last {
			nx = end + 1
		}
		if o == off && nx == next {
			return text, off, nil
		}
		if iter >= maxIter {
			return nil, off, fmt.Errorf("fcs: the TEXT segment offsets did not converge in %d iterations (TEXT %d bytes)", maxIter, len(text))
		}
		off, next = o, nx
	}
}

func buildText(d byte, off [6]int64, next int64, kw []Keyword) []byte {
	var b bytes.Buffer
	ds := string(d)
	esc := strings.NewReplacer(ds, ds+ds)
	put := func(k, v string) {
		b.WriteByte(d)
		b.WriteString(esc.Replace(k))
		b.WriteByte(d)
		b.WriteString(esc.Replace(v))
	}
	f := func(x int64) string { return strconv.FormatInt(x, 10) }
	put("$BEGINANALYSIS", f(off[4]))
	put("$ENDANALYSIS", f(off[5]))
	put("$BEGINSTEXT", "0")
	put("$ENDSTEXT", "0")
	put("$BEGINDATA", f(off[2]))
	put("$ENDDATA", f(off[3]))
	put("$NEXTDATA", f(next))
	for _, k := range kw {
		put(k.Key, k.Value)
	}
	b.WriteByte(d)
	return b.Bytes()
}

func (s *DataSet) writeData(w *bufio.Writer, dt byte, n int, ps []wparam) error {
	for i := 0; i < n; i++ {
		if err := s.writeEvent(w, dt, ps, s.Events.RawRowView(i)); err != nil {
			return err
		}
	}
	return nil
}

// writeEvent writes the values of one event (checked by checkValue).
func (s *DataSet) writeEvent(w *bufio.Writer, dt byte, ps []wparam, ev []float64) error {
	var ord binary.ByteOrder = binary.LittleEndian
	if s.BigEndian {
		ord = binary.BigEndian
	}
	var buf [8]byte
	{
		for j, p := range ps {
			v := ev[j]
			var b []byte
			switch dt {
			case 'F':
				ord.PutUint32(buf[:], math.Float32bits(float32(v)))
				b = buf[:4]
			case 'D':
				ord.PutUint64(buf[:], math.Float64bits(v))
				b = buf[:8]
			case 'I':
				b = buf[:p.bits/8]
				putInt(b, v, s.BigEndian)
			}
			if _, err := w.Write(b); err != nil {
				return fmt.Errorf("fcs: writing DATA: %w", err)
			}
		}
	}
	return nil
}

// Writer writes an FCS 3.1 file of one data set event by event, so that
// events need not be held in memory: the number of events and the range of
// every F and D parameter are declared up front ($TOT and $PnR are in the
// TEXT segment, which comes before the data).
type Writer struct {
	bw      *bufio.Writer
	s       DataSet
	dt      byte
	ps      []wparam
	n, done int
	err     error
}

// errNoWriter is returned by the methods of a Writer that NewWriter did
// not make.
var errNoWriter = errors.New("fcs: the Writer was not made by NewWriter")

// NewWriter writes the HEADER and TEXT segments of s, which declare events
// events, and returns a Writer for them. s.Events must be nil and
// s.Analysis empty; every F and D parameter needs its Range, since the
// writer cannot take it from events it has not seen. Other fields are as
// for Write.
func NewWriter(w io.Writer, s *DataSet, events int) (*Writer, error) {
	if w == nil || s == nil {
		return nil, fmt.Errorf("fcs: NewWriter with a nil writer or data set")
	}
	if events < 0 {
		return nil, fmt.Errorf("fcs: NewWriter with %d events", events)
	}
	if len(s.Analysis) > 0 {
		return nil, fmt.Errorf("fcs: NewWriter does not write an ANALYSIS segment")
	}
	dt, n, ps, err := s.check(events)
	if err != nil {
		return nil, err
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, 1<<16), s: *s, dt: dt, ps: ps, n: n}
	if err := wr.s.writeHead(wr.bw, dt, n, ps, true); err != nil {
		return nil, err
	}
	return wr, nil
}

// WriteEvent writes the next event: one value per parameter. A value the
// data type cannot hold, or an event beyond the declared count, is an
// error, and the Writer then refuses further events.
func (w *Writer) WriteEvent(values []float64) error {
	if w == nil || w.bw == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	switch {
	case len(values) != len(w.ps):
		w.err = fmt.Errorf("fcs: event %d has %d values for %d parameters", w.done+1, len(values), len(w.ps))
	case w.done >= w.n:
		w.err = fmt.Errorf("fcs: more events than the %d declared", w.n)
	}
	for j, v := range values {
		if w.err != nil {
			break
		}
		w.err = w.s.checkValue(w.dt, w.ps, w.done, j, v)
	}
	if w.err == nil {
		w.err = w.s.writeEvent(w.bw, w.dt, w.ps, values)
	}
	if w.err != nil {
		return w.err
	}
	w.done++
	return nil
}

// Close flushes the data. It returns an error if fewer events than declared
// were written (the file would be truncated) or a write failed; it does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w == nil || w.bw == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.done != w.n {
		w.err = fmt.Errorf("fcs: %d events written of the %d declared", w.done, w.n)
		return w.err
	}
	return w.bw.Flush()
}
