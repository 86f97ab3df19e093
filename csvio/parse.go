package csvio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"

	"github.com/dicalab/dica/internal/escape"
)

// lineReader returns the lines of r one at a time from a large reusable
// buffer, without allocating per line. A line may be longer than the buffer
// (the buffer then grows) but not longer than max bytes: such a line ends
// the reading with a *longLineError, found once max+2 bytes of it are read,
// so that the buffer never exceeds the larger of its first size and max+2
// bytes.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	max        int
	eof        bool
	err        error
	line       int // 1-based number of the line last returned
}

// reset starts reading r with a buffer of at least size bytes and lines of
// at most max bytes (max > 0).
func (l *lineReader) reset(r io.Reader, size, max int) {
	if cap(l.buf) < size {
		l.buf = make([]byte, size)
	}
	l.buf = l.buf[:cap(l.buf)]
	l.r, l.start, l.end, l.max, l.eof, l.err, l.line = r, 0, 0, max, false, nil, 0
}

// next returns the next line without its line ending ("\n" or "\r\n"). The
// slice is valid until the following call. At the end of the input, or at a
// line longer than max, it returns nil, false and the error, if any.
func (l *lineReader) next() ([]byte, bool) {
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			s := l.buf[l.start : l.start+i]
			if n := len(s); n > 0 && s[n-1] == '\r' {
				s = s[:n-1]
			}
			if len(s) > l.max {
				l.fail(s)
				return nil, false
			}
			l.start += i + 1
			l.line++
			return s, true
		}
		// Without a line end, max+2 bytes ("\r" aside) prove a long line,
		// whatever comes next (even a read error).
		if l.end-l.start > l.max+1 {
			l.fail(l.buf[l.start:l.end])
			return nil, false
		}
		if l.eof || l.err != nil {
			if l.start < l.end && l.err == nil {
				s := l.buf[l.start:l.end]
				if n := len(s); n > 0 && s[n-1] == '\r' {
					s = s[:n-1]
				}
				if len(s) > l.max {
					l.fail(s)
					return nil, false
				}
				l.start = l.end
				l.line++
				return s, true
			}
			return nil, false
		}
		if l.start > 0 {
			l.end = copy(l.buf, l.buf[l.start:l.end])
			l.start = 0
		}
		if l.end == len(l.buf) {
			// Here len(l.buf) <= max+1: grow, to at most max+2 bytes.
			nb := make([]byte, min(2*len(l.buf), l.max+2))
			copy(nb, l.buf[:l.end])
			l.buf = nb
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err == io.EOF {
			l.eof = true
		} else if err != nil {
			l.err = err
		}
	}
}

// fail ends the reading at the next line, which starts with b and is longer
// than l.max.
func (l *lineReader) fail(b []byte) {
	l.err = newLongLine(l.line+1, l.max, b)
	l.start, l.end = 0, 0
}

// longLineError is a line longer than the limit.
type longLineError struct {
	line  int    // 1-based line number; 0 when the reader does not know it
	max   int    // the limit
	start []byte // the first bytes of the line
}

// longLineQuote is the number of bytes of a long line that its error
// quotes.
const longLineQuote = 24

func newLongLine(line, max int, b []byte) *longLineError {
	// The first max bytes of a long line are its text on every path that
	// finds it (a line end or "\r" may follow them).
	return &longLineError{line: line, max: max, start: bytes.Clone(b[:min(len(b), longLineQuote, max)])}
}

func (e *longLineError) Error() string {
	return fmt.Sprintf("line %d: %s", e.line, e.msg())
}

func (e *longLineError) msg() string {
	return fmt.Sprintf("line longer than %d bytes, the limit (MaxLineBytes); it starts %s...: is this a CSV file?",
		e.max, escape.Snippet(e.start, longLineQuote))
}

// readError describes an error met while reading the lines of the file
// name: a line too long is a *ParseError at that line.
func readError(name string, err error) error {
	var e *longLineError
	if errors.As(err, &e) {
		return &ParseError{File: name, Line: e.line, Msg: e.msg(), Option: "MaxLineBytes"}
	}
	return fmt.Errorf("csvio: %s: %w", name, err)
}

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses a simple decimal ([+-]digits[.digits][(e|E)[+-]digits])
// at the start of s and returns its value and length. It reports ok = false,
// leaving the number to strconv.ParseFloat, unless the value can be computed
// exactly-rounded by Clinger's fast path: a mantissa of at most 2^53 and a
// decimal exponent of magnitude at most 22, so that m*10^e or m/10^-e is one
// correctly rounded IEEE operation on exact operands (W. D. Clinger, How to
// read floating point numbers accurately, PLDI 1990).
func fastFloat(s []byte) (v float64, n int, ok bool) {
	i := 0
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	start := i
	var mant uint64
	for i < len(s) && s[i]-'0' < 10 {
		mant = mant*10 + uint64(s[i]-'0')
		i++
	}
	digits := i - start
	frac := 0
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i]-'0' < 10 {
			mant = mant*10 + uint64(s[i]-'0')
			i++
		}
		frac = i - fs
		digits += frac
	}
	// More than 19 digits (leading zeros included) may overflow mant.
	if digits == 0 || digits > 19 {
		return 0, 0, false
	}
	e := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		ed := 0
		for ; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			ed++
			if e < 10000 {
				e = e*10 + int(c)
			}
		}
		if ed == 0 {
			return 0, 0, false
		}
		if eneg {
			e = -e
		}
	}
	if mant == 0 {
		if neg {
			return math.Copysign(0, -1), i, true
		}
		return 0, i, true
	}
	if mant > 1<<53 {
		return 0, 0, false
	}
	e -= frac
	f := float64(mant)
	switch {
	case e == 0:
	case e > 0 && e <= 22:
		f *= pow10[e]
	case e < 0 && e >= -22:
		f /= pow10[-e]
	default:
		return 0, 0, false
	}
	if neg {
		f = -f
	}
	return f, i, true
}

// parseNumber parses the whole of s as a float64, with fastFloat's fast path
// and strconv.ParseFloat (read through an unsafe string view, so without
// allocating) for the other decimal numbers. It reports ok = false if s is
// not a decimal number (isDecimal) or not finite (out of the float64
// range).
func parseNumber(s []byte) (float64, bool) {
	if v, n, ok := fastFloat(s); ok && n == len(s) {
		return v, true
	}
	if !isDecimal(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(unsafe.String(&s[0], len(s)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// isDecimal reports whether s is a decimal number: an optional sign,
// digits with an optional decimal point (at least one digit), and an
// optional exponent (e or E, an optional sign, digits). Go's other
// syntax (hexadecimal floats such as 0x1p3, underscores between digits as
// in 1_000) and the words Inf and NaN are not.
func isDecimal(s []byte) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i]-'0' < 10 {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i]-'0' < 10 {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i]-'0' < 10 {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// isSpecial reports whether s is one of the words strconv.ParseFloat reads
// as a value that is not finite: Inf, Infinity and NaN, in any case, with
// an optional sign.
func isSpecial(s []byte) bool {
	if bytes.ContainsAny(s, "0123456789") {
		return false // every other form strconv accepts has a digit
	}
	_, err := strconv.ParseFloat(string(s), 64)
	return err == nil
}

// isNumber reports whether s is a number, finite or not: a decimal number
// or one of the words Inf, Infinity and NaN.
func isNumber(s []byte) bool {
	if _, n, ok := fastFloat(s); ok && n == len(s) {
		return true
	}
	return isDecimal(s) || isSpecial(s)
}

// trimSpace removes spaces and tabs around s, but not the separator.
func trimSpace(s []byte, comma byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') && s[0] != comma {
		s = s[1:]
	}
	for n := len(s); n > 0 && (s[n-1] == ' ' || s[n-1] == '\t') && s[n-1] != comma; n = len(s) {
		s = s[:n-1]
	}
	return s
}

// fieldError kinds returned by nextField.
const (
	errNone = iota
	errQuoteOpen
	errQuoteText
)

// nextField returns the field of line starting at pos, without surrounding
// spaces and, for a field in double quotes, without the quotes and with ""
// read as " (the unquoted text is written to *scratch when it must be
// copied). It returns the position after the separator that ends the field,
// len(line)+1 for the last field.
func nextField(line []byte, pos int, comma byte, scratch *[]byte) (field []byte, next int, kind int) {
	rest := line[pos:]
	// Leading spaces before a quote.
	q := 0
	for q < len(rest) && (rest[q] == ' ' || rest[q] == '\t') && rest[q] != comma {
		q++
	}
	if q < len(rest) && rest[q] == '"' {
		buf := (*scratch)[:0]
		i := q + 1
		for {
			j := bytes.IndexByte(rest[i:], '"')
			if j < 0 {
				return nil, len(line) + 1, errQuoteOpen
			}
			buf = append(buf, rest[i:i+j]...)
			i += j + 1
			if i < len(rest) && rest[i] == '"' {
				buf = append(buf, '"')
				i++
				continue
			}
			break
		}
		*scratch = buf
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') && rest[i] != comma {
			i++
		}
		if i == len(rest) {
			return buf, len(line) + 1, errNone
		}
		if rest[i] != comma {
			return nil, len(line) + 1, errQuoteText
		}
		return buf, pos + i + 1, errNone
	}
	if j := bytes.IndexByte(rest, comma); j >= 0 {
		return trimSpace(rest[:j], comma), pos + j + 1, errNone
	}
	return trimSpace(rest, comma), len(line) + 1, errNone
}

// splitLine splits line into its fields (copies), for headers and messages.
func splitLine(line []byte, comma byte) ([]string, int) {
	var (
		out     []string
		scratch []byte
	)
	for pos := 0; pos <= len(line); {
		f, next, kind := nextField(line, pos, comma, &scratch)
		if kind != errNone {
			return out, kind
		}
		out = append(out, string(f))
		pos = next
	}
	return out, errNone
}

// countFields returns the number of fields of line.
func countFields(line []byte, comma byte) int {
	f, _ := splitLine(line, comma)
	return len(f)
}
