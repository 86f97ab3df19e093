package csvio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"

	"github.com/dicalab/dica/dataset"
)

// Skim passes over the rows without parsing them and parses only those keep
// selects (it implements dataset.Skimmer): a fit's landmark sample then costs
// a scan for line ends instead of a parse of every number. The workers of
// the pass find the rows' lines, drop empty lines and the rows of ignored
// labels from label files, and the rows kept are parsed, transformed and
// checked as Read does, with the same errors (file, line, column). Rows not
// kept are not checked. Row indices, and so the rows kept, are those of
// Read, whatever GOMAXPROCS.
//
// With a label column in the files and LabelsIgnore, telling which rows
// are dropped needs each row's label field, so Skim parses every row. As
// Read, Skim returns at its end the error of a LabelsIgnore value that
// matched no row; unlike Read, it does not record EmptiedDomains.
func (s *Source) Skim(ctx context.Context, keep func(i int64) bool, put func(x, y []float64) error) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	if keep == nil || put == nil {
		return 0, errors.New("csvio: Skim with a nil keep or put function")
	}
	if s.labelCol >= 0 && len(s.ignore) > 0 {
		return s.skimByReading(ctx, keep, put)
	}
	workers := s.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := s.openParallel(ctx, workers, true)
	defer r.Close()
	d, t := len(s.schema.Features), len(s.schema.Targets)
	x, tg := make([]float64, d), make([]float64, t)
	var (
		sc     scratch
		n      int64
		drop   dropped
		others = map[string]bool{} // labels not ignored
	)
	for {
		ok, err := r.next()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, s.unmatched(slices.Collect(maps.Keys(others)), &drop)
		}
		c := r.cur
		for i := 0; i < c.n; i++ {
			if keep(n) {
				span := c.spans[3*i : 3*i+3]
				if err := s.parseKept(c.data[span[0]:span[1]], span[2], c.fi, x, tg, &sc); err != nil {
					return n, err
				}
				if err := put(x, tg); err != nil {
					return n, err
				}
			}
			n++
		}
		if c.err != nil {
			return n, c.err
		}
		if len(s.ignore) > 0 {
			drop.fold(s, c)
			for k, ign := range c.labNames.ignore {
				if name := c.labNames.name(int32(k)); !ign && !others[string(name)] {
					others[string(name)] = true
				}
			}
		}
		r.cur = nil
		r.p.free <- c
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// parseKept parses, transforms and checks the row on line ln of file fi as
// parseChunk does.
func (s *Source) parseKept(line []byte, ln, fi int, x, tg []float64, sc *scratch) error {
	name := s.files[fi]
	_, label, col, msg := s.parseRow(line, x, tg, sc)
	if msg != "" {
		return s.rowError(name, ln, col, msg)
	}
	if s.labelCol >= 0 && len(label) == 0 {
		return &ParseError{File: name, Line: ln, Column: s.labelCol + 1, Msg: "empty label"}
	}
	if s.transform != nil {
		s.transform(x)
		for j, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &ParseError{File: name, Line: ln, Column: s.featureColumn(j) + 1,
					Msg: fmt.Sprintf("transform gives %v", v)}
			}
		}
	}
	return nil
}

// skimChunk finds the lines of the rows of c: non-empty lines (without a
// byte order mark on line 1) whose label, from a label file, is not
// ignored. It stops at an empty label, as parseChunk does.
func (s *Source) skimChunk(c *chunk) {
	c.n, c.err, c.errLab = 0, nil, -1
	c.spans = c.spans[:0]
	c.dropped = 0
	data := c.data
	ln := c.firstLine - 1
	k := 0 // non-empty lines
	off := 0
	for off < len(data) && k != c.limit {
		start := off
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end, off = len(data), len(data)
		} else {
			end, off = off+end, off+end+1
		}
		if end > start && data[end-1] == '\r' {
			end--
		}
		ln++
		if end-start > s.maxLine {
			c.err = readError(s.files[c.fi], newLongLine(ln, s.maxLine, data[start:end]))
			return
		}
		if ln == 1 && bytes.HasPrefix(data[start:end], bom) {
			start += len(bom)
		}
		if end == start {
			continue
		}
		k++
		if lname := s.labelFile(c.fi); lname != "" {
			lab := c.labID[k-1]
			if len(c.labNames.name(lab)) == 0 {
				c.err = &ParseError{File: lname, Line: int(c.labLine[k-1]), Msg: "empty label"}
				return
			}
			if c.labNames.ignore[lab] {
				c.dropped++
				continue
			}
		}
		c.spans = append(c.spans, start, end, ln)
		c.n++
	}
	c.err = s.endChunk(c, data[off:], ln)
}

// skimByReading is Skim by a full pass.
func (s *Source) skimByReading(ctx context.Context, keep func(i int64) bool, put func(x, y []float64) error) (int64, error) {
	r, err := s.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	t := len(s.schema.Targets)
	var b dataset.Block
	var n int64
	for {
		k, err := r.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		for i := range k {
			if keep(n) {
				if err := put(b.Row(i), b.Target[i*t:(i+1)*t]); err != nil {
					return n, err
				}
			}
			n++
		}
	}
}
