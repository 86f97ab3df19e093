package fcs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// DataSet is one data set to write with Write.
type DataSet struct {
	// Params describes the parameters; Name ($PnN) is required, Label
	// ($PnS) is written when not empty. Bits defaults to 32 for F, 64 for D
	// and 32 for I (I allows 8, 16, 24, 32, 40, 48, 56, 64). Range ($PnR)
	// defaults to 2^Bits for I and to the smallest integer above the largest
	// value (at least 1) for F and D. Gain, Decades and Offset are written
	// as $PnG (when not 0 or 1) and $PnE.
	Params []Param
	// DataType is 'F' (the default when 0), 'D' or 'I'.
	DataType byte
	// BigEndian selects $BYTEORD 4,3,2,1 instead of 1,2,3,4.
	BigEndian bool
	// Keywords are written after the standard keywords. They must not be
	// keywords the writer sets ($BEGINDATA, $TOT, $PnB, ...) nor be empty.
	Keywords []Keyword
	// Events holds the $TOT x $PAR events (nil for none).
	Events *mat.Dense
	// Analysis is written as the ANALYSIS segment when not empty.
	Analysis []byte
	// Delimiter is the TEXT delimiter (default '/', or another character if
	// some keyword or value starts with '/'). Delimiters inside keywords or
	// values are escaped by doubling them.
	Delimiter byte
}

// WriteFile writes the data sets to a new FCS 3.1 file at path (see Write).
func WriteFile(path string, sets ...*DataSet) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fcs: %w", err)
	}
	if err := Write(f, sets...); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write writes the data sets as an FCS 3.1 file in list mode, chained by
// $NEXTDATA. Each data set is a HEADER, a TEXT segment (standard keywords,
// then the extra ones), the DATA segment and the optional ANALYSIS segment.
// HEADER offsets above 99,999,999 are written as 0, as the standard asks,
// readers then take them from $BEGINDATA/$ENDDATA. Numbers of 1e21 and more
// (or below 1e-6) in $PnR, $PnG and $PnE are written in exponent form
// ("3.4e+38"). It
// returns an error, naming the event (row) and parameter (column), for
// values that the data type cannot hold: non-integer or out-of-range values
// for I, NaN or ±Inf for F and D, magnitudes above math.MaxFloat32 for F
// (they would become ±Inf). It also returns an error for a non-finite or
// negative range, gain or $PnE, empty names or values, and keywords the
// writer owns.
func Write(w io.Writer, sets ...*DataSet) error {
	if len(sets) == 0 {
		return fmt.Errorf("fcs: Write with no data set")
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
	bits  int
	rng   float64
	limit uint64 // largest integer value
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
	ps = make([]wparam, p)
	for j, q := range s.Params {
		if q.Name == "" {
			return 0, 0, nil, fmt.Errorf("fcs: parameter %d has no name", j+1)
		}
		b := q.Bits
		switch dt {
		case 'F':
			if b == 0 {
				b = 32
			}
			if b != 32 {
				return 0, 0, nil, fmt.Errorf("fcs: parameter %d: $DATATYPE F needs 32 bits, not %d", j+1, b)
			}
		case 'D':
			if b == 0 {
				b = 64
			}
			if b != 64 {
				return 0, 0, nil, fmt.Errorf("fcs: parameter %d: $DATATYPE D needs 64 bits, not %d", j+1, b)
			}
		case 'I':
			if b == 0 {
				b = 32
			}
			if b < 8 || b > 64 || b%8 != 0 {
				return 0, 0, nil, fmt.Errorf("fcs: parameter %d: %d bits is not a multiple of 8 from 8 to 64", j+1, b)
			}
		}
		r := q.Range
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			return 0, 0, nil, fmt.Errorf("fcs: parameter %d (%s): bad range %v (want a finite number >= 0)", j+1, q.Name, r)
		}
		if q.Gain < 0 || math.IsNaN(q.Gain) || math.IsInf(q.Gain, 0) {
			return 0, 0, nil, fmt.Errorf("fcs: parameter %d (%s): bad gain %v (want a finite number > 0, or 0 for none)", j+1, q.Name, q.Gain)
		}
		if q.Decades < 0 || math.IsNaN(q.Decades) || math.IsInf(q.Decades, 0) || math.IsNaN(q.Offset) || math.IsInf(q.Offset, 0) {
			return 0, 0, nil, fmt.Errorf("fcs: parameter %d (%s): bad $PnE %v,%v (want finite numbers, decades >= 0)", j+1, q.Name, q.Decades, q.Offset)
		}
		lim := uint64(0)
		if dt == 'I' {
			if r == 0 {
				r = math.Exp2(float64(b))
			}
			lim = intMask(b, r)
		} else if r == 0 && stream >= 0 {
			return 0, 0, nil, fmt.Errorf("fcs: parameter %d (%s): NewWriter needs the range ($PnR) of F and D parameters: the events are not known yet", j+1, q.Name)
		} else if r == 0 {
			mx := 0.0
			for i := 0; i < n; i++ {
				v := s.Events.At(i, j) // finite: checked below before anything is written
				if dt == 'F' {
					v = float64(float32(v)) // as stored
				}
				if v > mx {
					mx = v
				}
			}
			r = math.Max(1, math.Floor(mx)+1)
		}
		ps[j] = wparam{bits: b, rng: r, limit: lim}
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
	kw := []Keyword{
		{"$BYTEORD", bo}, {"$DATATYPE", string(dt)}, {"$MODE", "L"},
		{"$PAR", strconv.Itoa(len(ps))}, {"$TOT", strconv.Itoa(n)},
	}
	for j, q := range s.Params {
		pn := "$P" + strconv.Itoa(j+1)
		kw = append(kw, Keyword{pn + "N", q.Name}, Keyword{pn + "B", strconv.Itoa(ps[j].bits)},
			Keyword{pn + "E", fmtFloat(q.Decades) + "," + fmtFloat(q.Offset)},
			Keyword{pn + "R", fmtFloat(ps[j].rng)})
		if q.Label != "" {
			kw = append(kw, Keyword{pn + "S", q.Label})
		}
		if q.Gain != 0 && q.Gain != 1 {
			kw = append(kw, Keyword{pn + "G", fmtFloat(q.Gain)})
		}
	}
	seen := map[string]bool{}
	for _, k := range kw {
		seen[k.Key] = true
	}
	for _, k := range s.Keywords {
		nk := normKey(k.Key)
		if reserved[nk] || isParamKey(nk) && seen[nk] || isParamKey(nk) && !strings.HasSuffix(nk, "G") {
			return nil, fmt.Errorf("fcs: keyword %s is set by the writer", k.Key)
		}
		if seen[nk] {
			return nil, fmt.Errorf("fcs: keyword %s given twice", k.Key)
		}
		if strings.TrimSpace(k.Key) == "" || k.Value == "" {
			return nil, fmt.Errorf("fcs: keyword %q has an empty key or value (not allowed by FCS)", k.Key)
		}
		seen[nk] = true
		kw = append(kw, k)
	}
	return kw, nil
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
	var hdr bytes.Buffer
	hdr.WriteString("FCS3.1    ")
	for _, v := range off {
		if v > 99999999 {
			v = 0
		}
		fmt.Fprintf(&hdr, "%8d", v)
	}
	w.Write(hdr.Bytes())
	_, err = w.Write(text)
	return err
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
				u := uint64(v)
				if v >= 1<<63 {
					u = uint64(v-(1<<63)) | 1<<63
				}
				wb := p.bits / 8
				for k := 0; k < wb; k++ {
					sh := 8 * k
					if s.BigEndian {
						sh = 8 * (wb - 1 - k)
					}
					buf[k] = byte(u >> uint(sh))
				}
				b = buf[:wb]
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

// NewWriter writes the HEADER and TEXT segments of s, which declare events
// events, and returns a Writer for them. s.Events must be nil and
// s.Analysis empty; every F and D parameter needs its Range, since the
// writer cannot take it from events it has not seen. Other fields are as
// for Write.
func NewWriter(w io.Writer, s *DataSet, events int) (*Writer, error) {
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
	if w.err != nil {
		return w.err
	}
	if w.done != w.n {
		w.err = fmt.Errorf("fcs: %d events written of the %d declared", w.done, w.n)
		return w.err
	}
	return w.bw.Flush()
}
