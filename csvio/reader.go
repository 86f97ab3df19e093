package csvio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
)

var errClosed = errors.New("csvio: Read after Close")

// Buffer sizes of a pass.
const (
	dataBuffer  = 1 << 20
	labelBuffer = 64 << 10
)

// Open starts a pass over the rows of the files, in order (it implements
// dataset.Source). Domains and classes are numbered in order of first
// appearance among the rows handed out (rows with ignored labels do not
// count), so every pass numbers them the same way. At the end of the rows,
// Read returns io.EOF, or the error of a LabelsIgnore value that matched no
// row, and the pass records what EmptiedDomains reports.
//
// With GOMAXPROCS > 1 the pass reads ahead on one goroutine and parses
// chunks of about 256 KiB of lines on GOMAXPROCS others; Read hands out
// the rows in order, so the blocks, the names and the errors (with their
// file, line and column) are those of the sequential pass, whatever
// GOMAXPROCS. At most 2*GOMAXPROCS+1 chunks are in memory. Close stops the
// goroutines (as do the end of the pass, an error, and the cancellation of
// ctx).
func (s *Source) Open(ctx context.Context) (dataset.Reader, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	workers := s.workers
	if workers == 0 {
		if workers = runtime.GOMAXPROCS(0); workers == 1 {
			workers = -1
		}
	}
	if workers > 0 {
		return s.openParallel(ctx, workers, false), nil
	}
	r := &reader{s: s, ctx: ctx, fi: -1}
	r.data.buf = make([]byte, dataBuffer)
	return r, nil
}

// reader is one pass over a Source.
type reader struct {
	s   *Source
	ctx context.Context

	fi         int // index of the current file; -1 before the first
	f, lf      io.ReadCloser
	data, labs lineReader
	rows       int // data rows read in the current file
	fileDom    int // domain of the current file's rows, -1 until seen

	doms, classes      dataset.Index
	domIDs, classIDs   map[string]int
	domCache, clsCache smallCache
	scratch2           []byte
	sc                 scratch
	drop               dropped // what LabelsIgnore dropped
	fileDropped        bool    // a row of the current file was dropped
	err                error
	done               bool
}

func (r *reader) Domains() []string { return r.doms.Names() }

func (r *reader) Classes() []string {
	if !r.s.schema.Labelled {
		return nil
	}
	return r.classes.Names()
}

func (r *reader) Close() error {
	r.closeFiles()
	r.done = true
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}

func (r *reader) closeFiles() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if r.lf != nil {
		r.lf.Close()
		r.lf = nil
	}
}

// id returns the number of the name b in ix, adding it when new; the map
// lookup does not allocate.
func id(ix *dataset.Index, m *map[string]int, b []byte) int {
	if k, ok := (*m)[string(b)]; ok {
		return k
	}
	if *m == nil {
		*m = make(map[string]int)
	}
	s := string(b)
	k := ix.ID(s)
	(*m)[s] = k
	return k
}

// smallCache maps a few strings to numbers; for the handful of classes or
// domains of typical data a linear search is faster than a map.
type smallCache struct {
	keys []string
	vals []int
}

const smallCacheSize = 16

func (c *smallCache) get(b []byte) (int, bool) {
	for k, key := range c.keys {
		if key == string(b) {
			return c.vals[k], true
		}
	}
	return 0, false
}

func (c *smallCache) put(b []byte, v int) {
	if len(c.keys) < smallCacheSize {
		c.keys = append(c.keys, string(b))
		c.vals = append(c.vals, v)
	}
}

// classOf returns the class number of a label, or -1 if it is ignored.
func (r *reader) classOf(label []byte) int {
	if c, ok := r.clsCache.get(label); ok {
		return c
	}
	c := -1
	if !r.s.ignore[string(label)] {
		c = id(&r.classes, &r.classIDs, label)
	} else {
		r.drop.value(label)
	}
	r.clsCache.put(label, c)
	return c
}

// domainOf returns the number of a domain.
func (r *reader) domainOf(dom []byte) int {
	if c, ok := r.domCache.get(dom); ok {
		return c
	}
	c := id(&r.doms, &r.domIDs, dom)
	r.domCache.put(dom, c)
	return c
}

// openNext opens the next file (and label file) and reads its header.
func (r *reader) openNext() error {
	r.closeFiles()
	r.fi++
	s := r.s
	name := s.files[r.fi]
	f, err := s.open(name)
	if err != nil {
		return fmt.Errorf("csvio: %w", err)
	}
	r.f = f
	r.data.reset(f, dataBuffer, s.maxLine)
	r.rows = 0
	r.fileDom = -1
	r.fileDropped = false
	if lname := s.labelFile(r.fi); lname != "" {
		lf, err := s.open(lname)
		if err != nil {
			return fmt.Errorf("csvio: %w", err)
		}
		r.lf = lf
		r.labs.reset(lf, labelBuffer, s.maxLine)
	}
	if s.header {
		for {
			line, ok := r.data.next()
			if !ok {
				return r.readErr(name, &r.data, "no header")
			}
			if r.data.line == 1 {
				line = bytes.TrimPrefix(line, bom)
			}
			if len(line) == 0 {
				continue
			}
			return s.checkHeader(name, r.data.line, line)
		}
	}
	return nil
}

// readErr returns the read error of l if any, else a ParseError with msg
// at the line after the last.
func (r *reader) readErr(name string, l *lineReader, msg string) error {
	if l.err != nil {
		return readError(name, l.err)
	}
	return &ParseError{File: name, Line: l.line + 1, Msg: msg}
}

// countRest counts the remaining non-empty lines of l.
func countRest(l *lineReader) int {
	n := 0
	for {
		line, ok := l.next()
		if !ok {
			return n
		}
		if len(line) > 0 {
			n++
		}
	}
}

// endFile checks the end of the current file against its label file.
func (r *reader) endFile() error {
	s := r.s
	name := s.files[r.fi]
	if r.data.err != nil {
		return readError(name, r.data.err)
	}
	lname := s.labelFile(r.fi)
	if lname == "" {
		return nil
	}
	if extra := countRest(&r.labs); extra > 0 {
		if r.labs.err != nil {
			return readError(lname, r.labs.err)
		}
		return fmt.Errorf("%s has %d lines but %s has %d rows", lname, r.rows+extra, name, r.rows)
	}
	if r.labs.err != nil {
		return readError(lname, r.labs.err)
	}
	return nil
}

// Read fills b with up to max rows (it implements dataset.Reader). At the
// end of the rows it returns 0 and io.EOF, or the error of a value of
// LabelsIgnore that matched no row.
func (r *reader) Read(b *dataset.Block, max int) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkRead(b, max); err != nil {
		return 0, err
	}
	n, err := r.read(b, max)
	if err != nil {
		r.err = err
		r.closeFiles()
		return 0, err
	}
	if n == 0 {
		r.err = io.EOF
		if err := r.s.endPass(r.doms.Names(), r.Classes(), &r.drop); err != nil {
			r.err = err
		}
		return 0, r.err
	}
	return n, nil
}

// checkRead checks the arguments of Read.
func checkRead(b *dataset.Block, max int) error {
	if b == nil {
		return errors.New("csvio: Read into a nil Block")
	}
	if max < 1 {
		return fmt.Errorf("csvio: Read of at most %d rows; want at least 1", max)
	}
	return nil
}

// read reads up to max rows into b (see Read).
func (r *reader) read(b *dataset.Block, max int) (int, error) {
	s := r.s
	b.Reset(max, len(s.schema.Features), s.schema.Labelled, len(s.schema.Targets))
	b.ResetOrigins(max)
	k := 0
	for k < max {
		line, ok, err := r.nextLine()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		keep, err := r.row(b, k, line)
		if err != nil {
			return 0, err
		}
		if keep {
			k++
		}
	}
	b.Rows = k
	return k, nil
}

// nextLine returns the next non-empty line of the data files (without a
// byte order mark), opening and closing the files in turn, or false after
// the last line of the last file.
func (r *reader) nextLine() ([]byte, bool, error) {
	for {
		if r.f == nil {
			if r.fi+1 == len(r.s.files) {
				return nil, false, nil
			}
			if err := r.openNext(); err != nil {
				return nil, false, err
			}
		}
		line, ok := r.data.next()
		if !ok {
			if err := r.endFile(); err != nil {
				return nil, false, err
			}
			r.closeFiles()
			continue
		}
		if r.data.line == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			continue
		}
		r.rows++
		return line, true, nil
	}
}

// row parses the data line into row k of b: its features, targets, label
// and domain. It reports false, leaving row k to the next line, when the
// row's label is ignored.
func (r *reader) row(b *dataset.Block, k int, line []byte) (bool, error) {
	s := r.s
	d, t := len(s.schema.Features), len(s.schema.Targets)
	name := s.files[r.fi]
	var label []byte
	lname := s.labelFile(r.fi)
	if lname != "" {
		l, err := r.fileLabel()
		if err != nil {
			return false, err
		}
		label = l
	}
	x := b.X[k*d : (k+1)*d]
	var tg []float64
	if t > 0 {
		tg = b.Target[k*t : (k+1)*t]
	}
	dom, lab, col, msg := s.parseRow(line, x, tg, &r.sc)
	if msg != "" {
		return false, s.rowError(name, r.data.line, col, msg)
	}
	if s.labelCol >= 0 {
		label = lab
	}
	switch {
	case s.labelCol >= 0 || lname != "":
		c, err := r.labelClass(label, dom)
		if err != nil || c < 0 {
			return false, err
		}
		b.Label[k] = c
	case s.schema.Labelled:
		b.Label[k] = dataset.NoLabel // a data file without a label file
	}
	if err := s.applyTransform(x, name, r.data.line); err != nil {
		return false, err
	}
	if s.domainCol >= 0 {
		b.Domain[k] = r.domainOf(dom)
	} else {
		if r.fileDom < 0 {
			r.fileDom = r.doms.ID(s.fileDoms[r.fi])
		}
		b.Domain[k] = r.fileDom
	}
	b.File[k], b.Event[k] = r.fi, int64(r.rows)
	return true, nil
}

// applyTransform applies Options.Transform, if any, to the features x of
// line ln of file name, and returns an error if it gives a value that is
// not finite.
func (s *Source) applyTransform(x []float64, name string, ln int) error {
	if s.transform == nil {
		return nil
	}
	s.transform(x)
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &ParseError{File: name, Line: ln, Column: s.featureColumn(j) + 1, Msg: fmt.Sprintf("transform gives %v", v)}
		}
	}
	return nil
}

// fileLabel returns the next label of the current label file, or an error
// when it has fewer labels than the data file has rows.
func (r *reader) fileLabel() ([]byte, error) {
	s := r.s
	l, ok := nextLabel(&r.labs, &r.scratch2)
	if ok {
		return l, nil
	}
	if r.labs.err != nil {
		return nil, readError(s.labelFiles[r.fi], r.labs.err)
	}
	name := s.files[r.fi]
	rows := r.rows + countRest(&r.data)
	if r.data.err != nil {
		return nil, readError(name, r.data.err)
	}
	return nil, fmt.Errorf("%s has %d lines but %s has %d rows", s.labelFiles[r.fi], r.rows-1, name, rows)
}

// labelClass returns the class of the row's label, or -1 for an ignored
// label (noting the domain dom, or the file's, as losing a row), or an
// error for an empty label.
func (r *reader) labelClass(label, dom []byte) (int, error) {
	s := r.s
	if len(label) == 0 {
		if lname := s.labelFile(r.fi); lname != "" {
			return 0, &ParseError{File: lname, Line: r.labs.line, Msg: "empty label"}
		}
		return 0, &ParseError{File: s.files[r.fi], Line: r.data.line, Column: s.labelCol + 1, Msg: "empty label"}
	}
	c := r.classOf(label)
	if c < 0 {
		switch {
		case s.domainCol >= 0:
			r.drop.domain(dom)
		case !r.fileDropped:
			r.fileDropped = true
			r.drop.domain([]byte(s.fileDoms[r.fi]))
		}
	}
	return c, nil
}

// rowError is the error of parseRow's message msg about column col of
// line ln of the file name. A field of line 1 that is not a number, in
// files read without a header, may be a header's: the message says how
// the line was read.
func (s *Source) rowError(name string, ln, col int, msg string) error {
	if ln == 1 && col > 0 && !s.header && strings.HasPrefix(msg, "cannot parse") && !strings.HasPrefix(msg, `cannot parse ""`) {
		msg += " (line 1 is read as data: the files have no header)"
	}
	return &ParseError{File: name, Line: ln, Column: col, Msg: msg}
}

// scratch holds the buffers of unquoted fields of parseRow.
type scratch struct{ num, dom, lab []byte }

// parseRow reads the fields of a data line: the features into x, the
// targets into tg. It returns the domain and label fields (valid until the
// next call with the same scratch), or, when the line is wrong, the 1-based
// column (0 for the whole line) and a message.
func (s *Source) parseRow(line []byte, x, tg []float64, sc *scratch) (dom, label []byte, col int, msg string) {
	ncol := len(s.roles)
	comma := s.comma
	pos := 0
	for j := 0; j < ncol; j++ {
		if pos > len(line) {
			return nil, nil, 0, fieldCount(countFields(line, comma), ncol)
		}
		ro := s.roles[j]
		if ro.kind == featureCol || ro.kind == targetCol {
			if v, n, ok := fastFloat(line[pos:]); ok && (pos+n == len(line) || line[pos+n] == comma) {
				if ro.kind == featureCol {
					x[ro.idx] = v
				} else {
					tg[ro.idx] = v
				}
				pos += n + 1
				continue
			}
		}
		buf := &sc.num
		switch ro.kind {
		case domainCol:
			buf = &sc.dom
		case labelCol:
			buf = &sc.lab
		}
		f, next, kind := nextField(line, pos, comma, buf)
		if kind != errNone {
			return nil, nil, j + 1, quoteMsg(kind)
		}
		pos = next
		switch ro.kind {
		case featureCol, targetCol:
			v, ok := parseNumber(f)
			if !ok {
				return nil, nil, j + 1, numberMsg(f)
			}
			if ro.kind == featureCol {
				x[ro.idx] = v
			} else {
				tg[ro.idx] = v
			}
		case domainCol:
			if len(f) == 0 {
				return nil, nil, j + 1, "empty domain"
			}
			dom = f
		case labelCol:
			label = f
		}
	}
	if pos <= len(line) {
		// One more field, empty, ends a line that ends with the separator.
		f, next, kind := nextField(line, pos, comma, &sc.num)
		if kind != errNone || next <= len(line) {
			return nil, nil, 0, fieldCount(countFields(line, comma), ncol)
		}
		if len(f) > 0 {
			if s.trailing {
				return nil, nil, ncol + 1, fmt.Sprintf("value %s after the last column (the first row of %s ends with a separator, so the files have %d columns and a last field that must be empty)",
					escape.Snippet(f, 0), s.files[0], ncol)
			}
			return nil, nil, 0, fieldCount(ncol+1, ncol)
		}
	}
	return dom, label, 0, ""
}

// featureColumn returns the file column of feature j.
func (s *Source) featureColumn(j int) int {
	for c, ro := range s.roles {
		if ro.kind == featureCol && ro.idx == j {
			return c
		}
	}
	return -1
}

func fieldCount(got, want int) string {
	return fmt.Sprintf("%d fields, want %d", got, want)
}

func numberMsg(f []byte) string {
	if isNumber(f) {
		return fmt.Sprintf("%s is not a finite number", escape.Snippet(f, 0))
	}
	if _, err := strconv.ParseFloat(string(f), 64); err == nil || err.(*strconv.NumError).Err == strconv.ErrRange {
		// Go's syntax (0x1p3, 1_000), not a CSV number.
		return fmt.Sprintf("cannot parse %s as a number: numbers are decimal (digits, a point, an exponent such as e-3)", escape.Snippet(f, 0))
	}
	return fmt.Sprintf("cannot parse %s as a number", escape.Snippet(f, 0))
}
