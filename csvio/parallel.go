package csvio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/dicalab/dica/dataset"
)

// The parallel pass. One goroutine (the producer) reads each data file in
// chunks of about chunkSize bytes cut after a '\n' (lines never span
// chunks), checks the headers and takes, for the rows of each chunk, the
// same number of labels from the label file. Workers parse the chunks into
// rows of float64 (with Transform applied and the ignored rows dropped),
// naming the domains and classes of each chunk by small local numbers. Read
// hands the rows out in file order, numbering the domains and classes in
// order of first appearance exactly as the sequential reader does. A chunk
// carries at most one error, found by its worker or by the producer, which
// comes after its rows: Read reports it once all the rows before it are
// handed out, so the rows and the errors are those of the sequential
// reader.
//
// At most 2*workers+1 chunks exist; the producer waits for a free one, so
// memory is bounded. Close (or the end, an error, or the context) stops the
// goroutines, and Close waits for them.

// defaultChunk is the size of the chunks of the parallel pass.
const defaultChunk = 256 << 10

// chunk is a piece of one data file and, once parsed, its rows.
type chunk struct {
	fi        int    // file index
	buf       []byte // storage of data
	data      []byte // whole lines
	firstLine int    // 1-based line number of the first line of data
	limit     int    // number of non-empty lines to parse; -1 for all
	perr      error  // error after the first limit rows, from the producer

	// Labels from the label file, one per non-empty line: the local class
	// labID[i] (in labNames), at line labLine[i] of the label file.
	labID, labLine []int32

	// Rows of a skimming pass (see Source.Skim): for each of the n rows
	// kept, the start and end of its line in data and its line number.
	spans []int

	// Parsed rows.
	n                  int
	x, tg              []float64
	lab, dom           []int32 // local numbers of the rows' class and domain
	ev                 []int32 // 1-based number of each row among the chunk's non-empty lines
	lines              int     // non-empty lines parsed (rows kept and dropped)
	labNames, domNames nameTable
	err                error // error after the n rows
	errLab             int32 // local class of the row of err, -1 if none
	sc                 scratch

	// Rows dropped by LabelsIgnore, and whether each local domain (with a
	// domain column) had one.
	dropped    int
	domDropped []bool

	ready chan struct{} // receives once the chunk is parsed
}

// nameTable numbers the distinct names of a chunk from 0 in order of first
// appearance, with a linear search while there are few of them (on names of
// up to 7 bytes packed in a word).
type nameTable struct {
	arena  []byte
	ends   []int32
	keys   []uint64 // packed names, or noKey
	ignore []bool   // for classes: whether the name is in LabelsIgnore
	m      map[string]int32
}

const (
	linearNames = 16
	noKey       = math.MaxUint64
)

// pack returns the bytes of b and its length in one word if it has at most
// 7 bytes, else noKey.
func pack(b []byte) uint64 {
	if len(b) > 7 {
		return noKey
	}
	k := uint64(len(b)) << 56
	for i, c := range b {
		k |= uint64(c) << (8 * i)
	}
	return k
}

func (t *nameTable) reset() {
	t.arena, t.ends, t.keys, t.ignore = t.arena[:0], t.ends[:0], t.keys[:0], t.ignore[:0]
	clear(t.m)
}

func (t *nameTable) len() int { return len(t.ends) }

func (t *nameTable) name(k int32) []byte {
	var start int32
	if k > 0 {
		start = t.ends[k-1]
	}
	return t.arena[start:t.ends[k]]
}

// id returns the number of b, and whether it is new.
func (t *nameTable) id(b []byte) (int32, bool) {
	n := int32(len(t.ends))
	key := pack(b)
	if n <= linearNames {
		if key != noKey {
			for k, x := range t.keys {
				if x == key {
					return int32(k), false
				}
			}
		} else {
			for k := range n {
				if t.keys[k] == noKey && bytes.Equal(t.name(k), b) {
					return k, false
				}
			}
		}
	} else if k, ok := t.m[string(b)]; ok {
		return k, false
	}
	t.arena = append(t.arena, b...)
	t.ends = append(t.ends, int32(len(t.arena)))
	t.keys = append(t.keys, key)
	if n+1 > linearNames {
		if t.m == nil {
			t.m = make(map[string]int32)
		}
		if n+1 == linearNames+1 {
			for k := range n {
				t.m[string(t.name(k))] = k
			}
		}
		t.m[string(b)] = n
	}
	return n, true
}

// pipeline is the producer and the workers of one parallel pass.
type pipeline struct {
	s         *Source
	ctx       context.Context
	chunkSize int
	nchunks   int
	skim      bool // workers find the rows' lines instead of parsing them
	made      int  // chunks allocated, by the producer

	work, order, free chan *chunk
	done              chan struct{}
	stopOnce          sync.Once
	wg                sync.WaitGroup
	exitErr           error // why the producer stopped early; set before order is closed

	// Producer state.
	labs    lineReader
	labScr  []byte
	carry   []byte
	scratch []byte
}

// openParallel starts a parallel pass with the given number of workers; a
// skimming pass (skim) finds the rows' lines without parsing them.
func (s *Source) openParallel(ctx context.Context, workers int, skim bool) *preader {
	size := s.chunkSize
	if size <= 0 {
		size = defaultChunk
	}
	n := 2*workers + 1
	p := &pipeline{
		s: s, ctx: ctx, chunkSize: size, nchunks: n, skim: skim,
		work: make(chan *chunk, n), order: make(chan *chunk, n), free: make(chan *chunk, n),
		done: make(chan struct{}),
	}
	p.wg.Add(1 + workers)
	go p.produce()
	for range workers {
		go p.worker()
	}
	r := &preader{s: s, ctx: ctx, p: p, fileDom: -1}
	// A pass dropped without Close still stops its goroutines.
	runtime.AddCleanup(r, func(p *pipeline) { p.cancel() }, p)
	return r
}

// cancel tells the goroutines to stop.
func (p *pipeline) cancel() {
	p.stopOnce.Do(func() { close(p.done) })
}

// stop stops the goroutines, waits for them and keeps the chunks for the
// next pass (with cur, the chunk held by Read, if any).
func (p *pipeline) stop(cur *chunk) {
	p.cancel()
	p.wg.Wait()
	if p.free == nil {
		return
	}
	if cur != nil {
		p.s.chunks.Put(cur)
	}
	// Every chunk queued for Read has been parsed.
	for c := range p.order {
		<-c.ready
		p.s.chunks.Put(c)
	}
	close(p.free)
	for c := range p.free {
		p.s.chunks.Put(c)
	}
	p.free = nil
}

// stopped returns the reason to stop, if any: errClosed after cancel, or the
// context's error.
func (p *pipeline) stopped() error {
	select {
	case <-p.done:
		return errClosed
	default:
	}
	return p.ctx.Err()
}

// get returns a free chunk, or nil when the pass is stopped.
func (p *pipeline) get() *chunk {
	if err := p.stopped(); err != nil {
		p.exitErr = err
		return nil
	}
	select {
	case c := <-p.free:
		return c
	default:
	}
	if p.made < p.nchunks {
		p.made++
		if c, ok := p.s.chunks.Get().(*chunk); ok {
			return c
		}
		return &chunk{ready: make(chan struct{}, 1)}
	}
	select {
	case c := <-p.free:
		return c
	case <-p.done:
		p.exitErr = errClosed
		return nil
	case <-p.ctx.Done():
		p.exitErr = p.ctx.Err()
		return nil
	}
}

// send queues c for parsing and for Read (the channels hold every chunk,
// so it does not block).
func (p *pipeline) send(c *chunk) {
	p.order <- c
	if len(c.data) == 0 {
		c.n, c.err, c.errLab = 0, c.perr, -1
		c.ready <- struct{}{}
		return
	}
	p.work <- c
}

// fail queues an error after the rows sent so far and returns false.
func (p *pipeline) fail(err error) bool {
	c := p.get()
	if c == nil {
		return false
	}
	c.data, c.perr = nil, err
	p.send(c)
	return false
}

func (p *pipeline) produce() {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	for fi := range p.s.files {
		if !p.readFile(fi) {
			return
		}
	}
}

// chunkReader cuts a file into chunks of whole lines.
type chunkReader struct {
	r     io.Reader
	max   int    // the longest line
	carry []byte // the start of a line not yet returned
	eof   bool
	err   error
}

// fill sets c.data to the next lines of the file, at least one unless the
// file is done, reading about size bytes; the last line of the file need not
// end with '\n'. As lineReader, it drops a partial line before a read error,
// and ends the reading with a *longLineError (of line 0: the caller knows
// the number) once max+2 bytes of a line without its end are read, so that
// a buffer never exceeds the larger of size and 2*max+2 bytes. It returns
// false at the end.
func (f *chunkReader) fill(c *chunk, size int) bool {
	buf := c.buf[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	if cap(buf) < len(f.carry) {
		buf = make([]byte, 0, 2*len(f.carry))
	}
	buf = append(buf, f.carry...)
	f.carry = f.carry[:0]
	for {
		for len(buf) < cap(buf) && !f.eof && f.err == nil {
			n, err := f.r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				f.eof = true
			} else if err != nil {
				f.err = err
			}
		}
		c.buf = buf
		if f.eof && f.err == nil {
			c.data = buf
			return len(buf) > 0
		}
		i := bytes.LastIndexByte(buf, '\n')
		if len(buf)-(i+1) > f.max+1 {
			// As lineReader: a long line, whatever comes next.
			f.err = newLongLine(0, f.max, buf[i+1:])
			c.data = buf[:i+1]
			return i >= 0
		}
		if i >= 0 {
			c.data = buf[:i+1]
			if f.err == nil {
				f.carry = append(f.carry, buf[i+1:]...)
			}
			return true
		}
		if f.err != nil {
			c.data = buf[:0]
			return false
		}
		buf = slices.Grow(buf, len(buf)) // a line longer than the buffer
	}
}

// newlinePair reports whether data holds "\n\n" or "\n\r", eight bytes at a
// time (a byte equals c where (w^c*0x01..01) has a zero byte, found exactly
// by the carry-free test of Hacker's Delight, 6-1).
func newlinePair(data []byte) bool {
	const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	eq := func(w uint64, c byte) uint64 {
		t := w ^ (uint64(c) * ones)
		return ^((t&low7 + low7) | t | low7) // 0x80 in the bytes equal to c
	}
	var prevNL uint64 // 0x80 if the last byte of the previous word is '\n'
	i := 0
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		nl, cr := eq(w, '\n'), eq(w, '\r')
		if (nl<<8|prevNL)&(nl|cr) != 0 {
			return true
		}
		prevNL = nl >> 56
	}
	for ; i < len(data); i++ {
		if (data[i] == '\n' || data[i] == '\r') && i > 0 && data[i-1] == '\n' {
			return true
		}
	}
	return false
}

// countLines returns the number of lines of data (the last one need not end
// with '\n').
func countLines(data []byte) int {
	n := bytes.Count(data, nl)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

var nl = []byte{'\n'}

// cutLine returns the first line of data without its line ending, and the
// rest.
func cutLine(data []byte) (line, rest []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		line, rest = data, data[len(data):]
	} else {
		line, rest = data[:i], data[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// readFile sends the chunks of file fi and reports whether to go on.
func (p *pipeline) readFile(fi int) bool {
	s := p.s
	name := s.files[fi]
	f, err := s.open(name)
	if err != nil {
		return p.fail(fmt.Errorf("csvio: %w", err))
	}
	defer f.Close()
	maxLine := s.maxLine
	var (
		lname string
		labs  *lineReader
	)
	if lname = s.labelFile(fi); lname != "" {
		lf, err := s.open(lname)
		if err != nil {
			return p.fail(fmt.Errorf("csvio: %w", err))
		}
		defer lf.Close()
		labs = &p.labs
		labs.reset(lf, labelBuffer, maxLine)
	}
	cr := chunkReader{r: f, max: maxLine, carry: p.carry[:0]}
	defer func() { p.carry = cr.carry[:0] }()
	lines, rows := 0, 0 // lines read, non-empty data lines
	header := s.header
	for {
		c := p.get()
		if c == nil {
			return false
		}
		if !cr.fill(c, p.chunkSize) {
			p.free <- c
			break
		}
		c.fi, c.limit, c.perr = fi, -1, nil
		if header {
			var ok bool
			if header, ok = p.skipHeader(c, &lines, name); !ok {
				return false
			}
		}
		c.firstLine = lines + 1
		c.labID, c.labLine = c.labID[:0], c.labLine[:0]
		c.labNames.reset()
		if labs != nil {
			if !p.takeLabels(c, labs, &cr, &rows, name, lname) {
				p.send(c)
				return false
			}
		}
		lines += countLines(c.data)
		p.send(c)
	}
	if cr.err != nil {
		return p.fail(dataError(name, cr.err, lines+1))
	}
	if header {
		return p.fail(&ParseError{File: name, Line: lines + 1, Msg: "no header"})
	}
	if labs != nil {
		if extra := countRest(labs); extra > 0 {
			if labs.err != nil {
				return p.fail(readError(lname, labs.err))
			}
			return p.fail(fmt.Errorf("%s has %d lines but %s has %d rows", lname, rows+extra, name, rows))
		}
		if labs.err != nil {
			return p.fail(readError(lname, labs.err))
		}
	}
	return true
}

// skipHeader moves the data of c, the first chunk or chunks of file name,
// past the header line and checks that line, counting the lines read in
// *lines. It reports whether the header is still to come (c held empty
// lines only), and ok false after sending c with the error of a long line
// or a wrong header.
func (p *pipeline) skipHeader(c *chunk, lines *int, name string) (header, ok bool) {
	s := p.s
	data := c.data
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		*lines++
		if len(line) > s.maxLine {
			c.data, c.perr = nil, readError(name, newLongLine(*lines, s.maxLine, line))
			p.send(c)
			return false, false
		}
		if *lines == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			continue
		}
		if err := s.checkHeader(name, *lines, line); err != nil {
			c.data, c.perr = nil, err
			p.send(c)
			return false, false
		}
		c.data = data
		return false, true
	}
	c.data = data
	return true, true
}

// dataError is readError for an error of a chunkReader, whose long line, if
// that is the error, is line number line.
func dataError(name string, err error, line int) error {
	var e *longLineError
	if errors.As(err, &e) && e.line == 0 {
		at := *e
		at.line = line
		err = &at
	}
	return readError(name, err)
}

// takeLabels reads a label for each non-empty line of c. When the label file
// ends first, it sets the error and the number of rows to parse and returns
// false.
func (p *pipeline) takeLabels(c *chunk, labs *lineReader, cr *chunkReader, rows *int, name, lname string) bool {
	n := countNonEmpty(c.data, c.firstLine)
	c.labID = slices.Grow(c.labID, n)
	c.labLine = slices.Grow(c.labLine, n)
	for k := range n {
		*rows++
		l, ok := nextLabel(labs, &p.labScr)
		if !ok {
			c.limit = k
			if labs.err != nil {
				c.perr = readError(lname, labs.err)
				return false
			}
			// The rows left, as the sequential reader counts them (and
			// with the errors it meets): the lines of c after this row's,
			// then the rest of the file.
			ln, after := rowLine(c.data, c.firstLine, k)
			var in io.Reader = bytes.NewReader(after)
			if cr.err == nil && !cr.eof {
				in = io.MultiReader(in, bytes.NewReader(cr.carry), cr.r)
			}
			var rest lineReader
			rest.reset(in, labelBuffer, p.s.maxLine)
			rest.line = ln
			total := *rows + countRest(&rest)
			if rest.err != nil {
				c.perr = readError(name, rest.err)
				return false
			}
			if cr.err != nil {
				c.perr = dataError(name, cr.err, c.firstLine+countLines(c.data))
				return false
			}
			c.perr = fmt.Errorf("%s has %d lines but %s has %d rows", lname, *rows-1, name, total)
			return false
		}
		lab, isNew := c.labNames.id(l)
		if isNew {
			c.labNames.ignore = append(c.labNames.ignore, p.s.ignore[string(l)])
		}
		c.labID = append(c.labID, lab)
		c.labLine = append(c.labLine, int32(labs.line))
	}
	return true
}

// rowLine returns the line number of the non-empty line k (from 0) of data,
// whose first line is line firstLine of its file, and the data after it.
func rowLine(data []byte, firstLine, k int) (int, []byte) {
	for ln := firstLine; len(data) > 0; ln++ {
		var line []byte
		line, data = cutLine(data)
		if ln == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) > 0 {
			if k == 0 {
				return ln, data
			}
			k--
		}
	}
	return firstLine, nil // not reached: data has more than k such lines
}

// countNonEmpty returns the number of non-empty lines of data, whose first
// line is line firstLine of its file: without their line ending, and
// without a byte order mark on line 1.
func countNonEmpty(data []byte, firstLine int) int {
	if len(data) == 0 {
		return 0
	}
	// Fast path: no line can be empty.
	if data[0] != '\n' && data[0] != '\r' && !(firstLine == 1 && bytes.HasPrefix(data, bom)) && !newlinePair(data) {
		return countLines(data)
	}
	n := 0
	for ln := firstLine; len(data) > 0; ln++ {
		var line []byte
		line, data = cutLine(data)
		if ln == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) > 0 {
			n++
		}
	}
	return n
}

func (p *pipeline) worker() {
	defer p.wg.Done()
	for c := range p.work {
		if err := p.stopped(); err != nil {
			c.n, c.err, c.errLab = 0, err, -1
		} else if p.skim {
			p.s.skimChunk(c)
		} else {
			p.s.parseChunk(c)
		}
		c.ready <- struct{}{}
	}
}

// parseChunk parses the lines of c into its rows, stopping at the first
// error.
func (s *Source) parseChunk(c *chunk) {
	d := len(s.schema.Features)
	t := len(s.schema.Targets)
	name := s.files[c.fi]
	s.resetChunk(c)
	data := c.data
	ln := c.firstLine - 1
	k := 0 // non-empty lines
	for len(data) > 0 && k != c.limit {
		var line []byte
		line, data = cutLine(data)
		ln++
		if len(line) > s.maxLine {
			c.err = readError(name, newLongLine(ln, s.maxLine, line))
			return
		}
		if ln == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			continue
		}
		k++
		c.lines = k
		c.x = slices.Grow(c.x, d)
		x := c.x[len(c.x) : len(c.x)+d]
		var tg []float64
		if t > 0 {
			c.tg = slices.Grow(c.tg, t)
			tg = c.tg[len(c.tg) : len(c.tg)+t]
		}
		dom, label, col, msg := s.parseRow(line, x, tg, &c.sc)
		if msg != "" {
			c.err = s.rowError(name, ln, col, msg)
			return
		}
		lab, err := s.chunkLabel(c, k, label, ln)
		if err != nil {
			c.err = err
			return
		}
		if lab >= 0 && c.labNames.ignore[lab] {
			c.dropped++
			if s.domainCol >= 0 {
				c.domDropped[c.domID(dom)] = true
			}
			continue
		}
		if err := s.applyTransform(x, name, ln); err != nil {
			c.err, c.errLab = err, lab
			return
		}
		c.x = c.x[:len(c.x)+d]
		c.tg = c.tg[:len(c.tg)+t]
		if s.schema.Labelled {
			c.lab = append(c.lab, lab)
		}
		if s.domainCol >= 0 {
			c.dom = append(c.dom, c.domID(dom))
		}
		c.ev = append(c.ev, int32(k))
		c.n++
	}
	c.err = s.endChunk(c, data, ln)
}

// resetChunk empties the rows of c and makes room for those of its lines.
func (s *Source) resetChunk(c *chunk) {
	c.n, c.err, c.errLab, c.lines = 0, nil, -1, 0
	rows := min(countLines(c.data), len(c.data)/len(s.roles)+1)
	if c.limit >= 0 {
		rows = min(rows, c.limit)
	}
	c.x, c.tg = slices.Grow(c.x[:0], rows*len(s.schema.Features)), slices.Grow(c.tg[:0], rows*len(s.schema.Targets))
	c.lab, c.dom = c.lab[:0], c.dom[:0]
	c.ev = slices.Grow(c.ev[:0], rows)
	if s.schema.Labelled {
		c.lab = slices.Grow(c.lab, rows)
	}
	if s.domainCol >= 0 {
		c.dom = slices.Grow(c.dom, rows)
	}
	if s.labelFiles == nil {
		c.labNames.reset() // else the producer filled it
	}
	c.domNames.reset()
	c.dropped, c.domDropped = 0, c.domDropped[:0]
}

// chunkLabel returns the chunk's id of the label of its k-th row (line ln,
// label the field of the label column), -1 without labels (or for a data
// file without a label file), or the error of an empty label.
func (s *Source) chunkLabel(c *chunk, k int, label []byte, ln int) (int32, error) {
	switch {
	case s.labelFiles != nil:
		lname := s.labelFiles[c.fi]
		if lname == "" {
			return -1, nil // a data file without a label file
		}
		lab := c.labID[k-1]
		if len(c.labNames.name(lab)) == 0 {
			return 0, &ParseError{File: lname, Line: int(c.labLine[k-1]), Msg: "empty label"}
		}
		return lab, nil
	case s.schema.Labelled:
		if len(label) == 0 {
			return 0, &ParseError{File: s.files[c.fi], Line: ln, Column: s.labelCol + 1, Msg: "empty label"}
		}
		lab, isNew := c.labNames.id(label)
		if isNew {
			c.labNames.ignore = append(c.labNames.ignore, s.ignore[string(label)])
		}
		return lab, nil
	}
	return -1, nil
}

// endChunk returns the error that ends the chunk c after its rows, given the
// lines of c not read and the number of the last line read: c.perr, unless
// c stops at the error of a label (c.limit >= 0) and the line of the next row
// is too long, an error the sequential reader meets first.
func (s *Source) endChunk(c *chunk, data []byte, ln int) error {
	if c.limit < 0 {
		return c.perr
	}
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		ln++
		if len(line) > s.maxLine {
			return readError(s.files[c.fi], newLongLine(ln, s.maxLine, line))
		}
		if ln == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) > 0 {
			break
		}
	}
	return c.perr
}

// domID returns the local number of the domain b.
func (c *chunk) domID(b []byte) int32 {
	dm, isNew := c.domNames.id(b)
	if isNew {
		c.domDropped = append(c.domDropped, false)
	}
	return dm
}

// nextLabel returns the label of the next non-empty line of l.
func nextLabel(l *lineReader, scratch *[]byte) ([]byte, bool) {
	for {
		line, ok := l.next()
		if !ok {
			return nil, false
		}
		if len(line) == 0 {
			continue
		}
		if plainLabel(line) {
			return line, true
		}
		f, _, kind := nextField(line, 0, 0xff, scratch)
		if kind != errNone {
			f = trimSpace(line, 0)
		}
		return f, true
	}
}

// plainLabel reports whether nextField reads the short line s as it is (no
// spaces, tabs or quotes; 0xff stands for a separator that never occurs).
func plainLabel(s []byte) bool {
	if len(s) > 16 {
		return false
	}
	for _, c := range s {
		if c == ' ' || c == '\t' || c == '"' || c == 0xff {
			return false
		}
	}
	return true
}

// preader is a parallel pass (see pipeline).
type preader struct {
	s   *Source
	ctx context.Context
	p   *pipeline

	cur            *chunk
	pos            int
	labMap, domMap []int // global numbers of cur's local names, -1 until used
	fileDom        int   // domain of cur's file; -1 until used
	fileDomFi      int
	rowsFi         int   // the file of the chunks whose rows rowsBefore counts
	rowsBefore     int64 // non-empty lines of file rowsFi before cur

	doms, classes    dataset.Index
	domIDs, classIDs map[string]int
	drop             dropped // what LabelsIgnore dropped
	err              error
}

func (r *preader) Domains() []string { return r.doms.Names() }

func (r *preader) Classes() []string {
	if !r.s.schema.Labelled {
		return nil
	}
	return r.classes.Names()
}

// Close stops the goroutines of the pass and waits for them.
func (r *preader) Close() error {
	r.p.stop(r.cur)
	r.cur = nil
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}

// Read fills b with up to max rows (it implements dataset.Reader).
func (r *preader) Read(b *dataset.Block, max int) (int, error) {
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
		// The producer may be blocked in a read: Close waits for it.
		r.err = err
		r.p.cancel()
		return 0, err
	}
	if n == 0 {
		r.err = io.EOF
		r.p.stop(r.cur)
		r.cur = nil
		if err := r.s.endPass(r.doms.Names(), r.Classes(), &r.drop); err != nil {
			r.err = err
		}
		return 0, r.err
	}
	return n, nil
}

// next makes the next parsed chunk current; it returns false at the end.
func (r *preader) next() (bool, error) {
	var (
		c  *chunk
		ok bool
	)
	select {
	case c, ok = <-r.p.order:
	case <-r.ctx.Done():
		return false, r.ctx.Err()
	}
	if !ok {
		return false, r.p.exitErr
	}
	<-c.ready // the workers stop soon on cancellation
	r.cur, r.pos = c, 0
	r.labMap = fill(r.labMap, c.labNames.len())
	r.domMap = fill(r.domMap, c.domNames.len())
	return true, nil
}

// fill returns s with n values -1.
func fill(s []int, n int) []int {
	s = slices.Grow(s[:0], n)[:n]
	for i := range s {
		s[i] = -1
	}
	return s
}

func (r *preader) read(b *dataset.Block, max int) (int, error) {
	s := r.s
	d := len(s.schema.Features)
	t := len(s.schema.Targets)
	labelled := s.schema.Labelled
	b.Reset(max, d, labelled, t)
	b.ResetOrigins(max)
	k := 0
	for k < max {
		if r.cur == nil {
			ok, err := r.next()
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
		}
		c := r.cur
		if c.fi != r.rowsFi {
			r.rowsFi, r.rowsBefore = c.fi, 0
		}
		m := min(c.n-r.pos, max-k)
		if m == 0 {
			if c.err != nil {
				if c.errLab >= 0 {
					r.classOf(c, c.errLab)
				}
				return 0, c.err
			}
			r.drop.fold(s, c)
			r.rowsBefore += int64(c.lines)
			r.cur = nil
			r.p.free <- c
			continue
		}
		i0 := r.pos
		for i, e := range c.ev[i0 : i0+m] {
			b.File[k+i], b.Event[k+i] = c.fi, r.rowsBefore+int64(e)
		}
		copy(b.X[k*d:(k+m)*d], c.x[i0*d:(i0+m)*d])
		if t > 0 {
			copy(b.Target[k*t:(k+m)*t], c.tg[i0*t:(i0+m)*t])
		}
		if labelled {
			for i, l := range c.lab[i0 : i0+m] {
				if l < 0 {
					b.Label[k+i] = dataset.NoLabel // a data file without a label file
					continue
				}
				g := r.labMap[l]
				if g < 0 {
					g = r.classOf(c, l)
				}
				b.Label[k+i] = g
			}
		}
		if s.domainCol >= 0 {
			for i, l := range c.dom[i0 : i0+m] {
				g := r.domMap[l]
				if g < 0 {
					g = id(&r.doms, &r.domIDs, c.domNames.name(l))
					r.domMap[l] = g
				}
				b.Domain[k+i] = g
			}
		} else {
			if r.fileDom < 0 || r.fileDomFi != c.fi {
				r.fileDom, r.fileDomFi = r.doms.ID(s.fileDoms[c.fi]), c.fi
			}
			dom := b.Domain[k : k+m]
			for i := range dom {
				dom[i] = r.fileDom
			}
		}
		k += m
		r.pos += m
	}
	b.Rows = k
	return k, nil
}

// classOf returns the global number of the local class l of c.
func (r *preader) classOf(c *chunk, l int32) int {
	g := id(&r.classes, &r.classIDs, c.labNames.name(l))
	r.labMap[l] = g
	return g
}
