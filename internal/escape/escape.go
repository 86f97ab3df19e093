// Package escape makes bytes read from users' files safe to print in a
// message: short, valid UTF-8, and free of control characters that would
// move the cursor, ring the bell or change a terminal's state.
package escape

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMax is the number of bytes of input Snippet quotes by default.
const DefaultMax = 80

// Snippet returns b quoted for a message: at most max bytes of it (max <= 0
// means DefaultMax) between double quotes, with control characters, invalid
// UTF-8 bytes, quotes and backslashes escaped as Go escapes them
// (strconv.Quote), and "..." plus the number of bytes left out when b is
// longer.
func Snippet(b []byte, max int) string {
	if max <= 0 {
		max = DefaultMax
	}
	// Cut at a character boundary (an invalid byte counts as one).
	n := 0
	for n < len(b) {
		_, size := utf8.DecodeRune(b[n:])
		if n+size > max {
			break
		}
		n += size
	}
	cut := b[:n]
	s := quote(cut)
	if len(cut) < len(b) {
		s += "... (" + strconv.Itoa(len(b)-len(cut)) + " more bytes)"
	}
	return s
}

// String is Snippet of a string.
func String(s string, max int) string { return Snippet([]byte(s), max) }

// quote is strconv.Quote that keeps printable non-ASCII characters.
func quote(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			sb.WriteString(`\x`)
			sb.WriteString(strconv.FormatUint(uint64(b[0])>>4, 16))
			sb.WriteString(strconv.FormatUint(uint64(b[0])&15, 16))
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case unicode.IsPrint(r) || r == ' ':
			sb.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			sb.WriteString(q[1 : len(q)-1])
		}
		b = b[size:]
	}
	sb.WriteByte('"')
	return sb.String()
}
