package fcs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dicalab/dica/internal/escape"
)

// HeaderLen is the length in bytes of the fixed part of an FCS HEADER.
const HeaderLen = 58

// ErrNotFCS is returned (wrapped) for input that is not an FCS file.
var ErrNotFCS = errors.New("fcs: not an FCS file")

// ErrNoData is returned (wrapped) when a file's DATA segment is absent, for
// example a file holding only HEADER and TEXT.
var ErrNoData = errors.New("fcs: no DATA segment")

// ErrNoSpillover is returned by File.Spillover when no spillover keyword is
// present.
var ErrNoSpillover = errors.New("fcs: no spillover keyword ($SPILLOVER, $SPILL, SPILL, SPILLOVER or $COMP)")

// Keyword is one keyword/value pair of a TEXT segment.
type Keyword struct {
	Key, Value string
}

// header holds the parsed fixed HEADER.
type header struct {
	version string
	// off holds TEXT begin/end, DATA begin/end, ANALYSIS begin/end; 0 for a
	// blank field.
	off [6]int64
}

var fieldNames = [6]string{"TEXT start", "TEXT end", "DATA start", "DATA end", "ANALYSIS start", "ANALYSIS end"}

// parseHeader parses the 58-byte HEADER in b.
func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) < 3 || string(b[:3]) != "FCS" {
		return h, fmt.Errorf("%w: %s; an FCS file starts with FCS2.0, FCS3.0 or FCS3.1", ErrNotFCS, describeStart(b))
	}
	if len(b) < HeaderLen {
		return h, fmt.Errorf("%w: only %d bytes, shorter than the %d-byte HEADER", ErrNotFCS, len(b), HeaderLen)
	}
	v := string(b[:6])
	if v[3] < '0' || v[3] > '9' || v[4] != '.' || v[5] < '0' || v[5] > '9' {
		return h, fmt.Errorf("%w: bad version %s in HEADER", ErrNotFCS, escape.String(v, 0))
	}
	h.version = v
	for i := range h.off {
		f := b[10+8*i : 18+8*i]
		s := strings.Trim(string(f), " \x00")
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return h, fmt.Errorf("fcs: malformed HEADER: %s field %s is not a byte offset", fieldNames[i], escape.Snippet(f, 0))
		}
		h.off[i] = n
	}
	return h, nil
}

// describeStart says what the first bytes b of a file that is not an FCS
// file are: none, zero bytes (a device such as /dev/zero, a file of holes),
// or the first 16 bytes quoted.
func describeStart(b []byte) string {
	zeros := len(b) - len(bytes.TrimLeft(b, "\x00"))
	switch {
	case len(b) == 0:
		return "it is empty"
	case zeros == len(b):
		return fmt.Sprintf("it starts with %d zero bytes", zeros)
	}
	return "it starts with " + escape.Snippet(b[:min(len(b), 16)], 0)
}

// parseText splits a TEXT segment into keyword/value pairs. The first byte
// is the delimiter; a doubled delimiter stands for one delimiter character.
// Padding after the last delimiter is ignored; a final value missing its
// closing delimiter is kept.
func parseText(b []byte) ([]Keyword, []string, error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("fcs: TEXT segment of %d bytes is too short", len(b))
	}
	d := b[0]
	// Bytes from last on are padding.
	last := len(bytes.TrimRight(b, " \x00\r\n\t"))
	var (
		toks []string
		cur  []byte
		warn []string
	)
	i := 1
	for i < len(b) {
		j := bytes.IndexByte(b[i:], d)
		if j < 0 {
			cur = append(cur, b[i:]...)
			break
		}
		cur = append(cur, b[i:i+j]...)
		i += j + 1
		if i < len(b) && b[i] == d {
			if i+1 >= last {
				// A doubled delimiter ending the segment: read it as the
				// end of a keyword with an empty value, as flowCore does.
				toks = append(toks, string(cur), "")
				cur = cur[:0]
				break
			}
			cur = append(cur, d)
			i++
			continue
		}
		toks = append(toks, string(cur))
		cur = cur[:0]
	}
	if rest := strings.TrimRight(string(cur), " \x00\r\n\t"); rest != "" {
		if len(toks)%2 == 1 {
			toks = append(toks, rest)
		} else {
			warn = append(warn, fmt.Sprintf("ignored %d bytes after the last delimiter of a TEXT segment", len(cur)))
		}
	}
	if len(toks)%2 == 1 {
		warn = append(warn, fmt.Sprintf("keyword %s has no value", escape.String(toks[len(toks)-1], 0)))
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return nil, warn, fmt.Errorf("fcs: TEXT segment holds no keyword (delimiter %q)", d)
	}
	kw := make([]Keyword, len(toks)/2)
	for k := range kw {
		kw[k] = Keyword{Key: toks[2*k], Value: toks[2*k+1]}
	}
	return kw, warn, nil
}

// normKey is the lookup form of a keyword: upper case, spaces trimmed.
func normKey(k string) string { return strings.ToUpper(strings.TrimSpace(k)) }

// parseInt parses a possibly padded decimal integer.
func parseInt(s string) (int64, error) {
	return strconv.ParseInt(strings.Trim(s, " \x00"), 10, 64)
}

// parseFloat parses a possibly padded decimal number.
func parseFloat(s string) (float64, error) {
	return strconv.ParseFloat(strings.Trim(s, " \x00"), 64)
}
