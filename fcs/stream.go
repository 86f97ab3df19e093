package fcs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ReadWriterAt is the output of a StreamWriter, such as an *os.File: the
// writer writes at offsets, and reads back the events it wrote when it must
// move them (see StreamWriter.Close).
type ReadWriterAt interface {
	io.ReaderAt
	io.WriterAt
}

// StreamWriter writes an FCS 3.1 file of one data set in one pass over its
// events when their number, the ranges of its parameters or some keywords
// are known only once all events are written: NewStreamWriter reserves room
// for the HEADER and TEXT segments at the start of the output, WriteEvent
// writes the events after it as they come, and Close writes the HEADER and
// a TEXT holding $TOT, $ENDDATA and the final ranges and keywords into the
// room reserved. The room left over lies between the TEXT and DATA segments
// as spaces (segments are located by their offsets). Memory does not grow
// with the number of events. The file is the one Write makes of the same
// events, except for that room and the segment offsets.
type StreamWriter struct {
	out     ReadWriterAt
	s       DataSet // as given to NewStreamWriter
	dt      byte
	ps      []wparam
	evBytes int
	lo, hi  []float64 // the smallest and largest value stored per parameter
	n       int64     // events written
	dataAt  int64     // offset of the DATA segment
	written int64     // bytes of DATA written to out
	buf     []byte    // encoded events not yet written to out
	err     error
	closed  bool
}

// streamBuffer is the size of the StreamWriter's buffer of encoded events,
// and of its copies when Close moves them.
const streamBuffer = 1 << 20

// widestNumber has the most characters that fmtFloat writes for a number
// (24): the width reserved for each $PnR.
const widestNumber = -math.MaxFloat64

// widestDisplay is as long as the longest $PnD "Linear,lo,hi" the writer
// sets (fmtFloat of a number takes at most 25 characters).
const widestDisplay = "Linear,-0.0000012345678901234567,-0.0000012345678901234567"

// errNoStreamWriter is returned by the methods of a StreamWriter that
// NewStreamWriter did not make.
var errNoStreamWriter = errors.New("fcs: the StreamWriter was not made by NewStreamWriter")

// NewStreamWriter starts an FCS 3.1 file of one data set, described by s,
// at offset 0 of out, and returns a StreamWriter for its events. s.Events
// must be nil and s.Analysis empty; the other fields are as for Write. An F
// or D parameter whose Range is 0 gets the range of the values written, as
// Write chooses it ($PnD included). NewStreamWriter writes nothing; the
// events go to out as a 1 MiB buffer fills, the HEADER and TEXT at Close.
//
// The room reserved before the DATA segment holds the TEXT of s with the
// widest $TOT, segment offsets and $PnR there can be and a $PnD for each
// parameter, plus reserve bytes for what the data set given to Close adds
// (keywords, longer names). NewStreamWriter returns an error for a negative
// reserve, or one that would put the end of the TEXT past byte 99,999,999
// (the HEADER must hold it).
func NewStreamWriter(out ReadWriterAt, s *DataSet, reserve int) (*StreamWriter, error) {
	switch {
	case out == nil || s == nil:
		return nil, fmt.Errorf("fcs: NewStreamWriter with a nil output or data set")
	case s.Events != nil:
		return nil, fmt.Errorf("fcs: NewStreamWriter with a data set that has Events (write them with WriteEvent)")
	case len(s.Analysis) > 0:
		return nil, fmt.Errorf("fcs: NewStreamWriter does not write an ANALYSIS segment")
	case reserve < 0:
		return nil, fmt.Errorf("fcs: NewStreamWriter with a reserve of %d bytes", reserve)
	}
	dt, _, ps, err := s.check(-1) // no events: a default F or D range is 1 for now
	if err != nil {
		return nil, err
	}
	wide := make([]wparam, len(ps))
	copy(wide, ps)
	for j := range wide {
		wide[j].rng = widestNumber
	}
	text, err := s.text(dt, math.MaxInt, wide, [6]int64{0, 0, math.MaxInt64, math.MaxInt64, 0, 0})
	if err != nil {
		return nil, err
	}
	room := int64(len(text)) + int64(reserve)
	for j := range ps {
		room += int64(len("/$PD/")+len(strconv.Itoa(j+1))) + int64(len(widestDisplay))
	}
	if HeaderLen+room-1 > maxHeaderOffset {
		return nil, fmt.Errorf("fcs: NewStreamWriter: a TEXT segment of %d bytes (reserve %d) would end past byte %d, which the HEADER cannot hold", room, reserve, maxHeaderOffset)
	}
	w := &StreamWriter{out: out, s: *s, dt: dt, ps: ps, dataAt: HeaderLen + room,
		lo: make([]float64, len(ps)), hi: make([]float64, len(ps))}
	w.s.Params = append([]Param(nil), s.Params...)
	w.s.Keywords = append([]Keyword(nil), s.Keywords...)
	for j, p := range ps {
		w.evBytes += p.bits / 8
		w.lo[j], w.hi[j] = math.Inf(1), math.Inf(-1)
	}
	w.buf = make([]byte, 0, max(streamBuffer, w.evBytes))
	return w, nil
}

// text returns the TEXT segment of s for n events, the parameters ps and
// the DATA and ANALYSIS offsets off[2:6].
func (s *DataSet) text(dt byte, n int, ps []wparam, off [6]int64) ([]byte, error) {
	kw, err := s.keywords(dt, n, ps)
	if err != nil {
		return nil, err
	}
	delim, err := s.delimiter(append(kw, Keyword{"$BEGINDATA", "0"}))
	if err != nil {
		return nil, err
	}
	return buildText(delim, off, 0, kw), nil
}

// WriteEvent writes the next event: one value per parameter. A value the
// data type cannot hold (see Write) is an error, naming the event and the
// parameter, and the StreamWriter then refuses further events and Close.
func (w *StreamWriter) WriteEvent(values []float64) error {
	if w == nil || w.out == nil {
		return errNoStreamWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("fcs: WriteEvent after Close")
	}
	if len(values) != len(w.ps) {
		w.err = fmt.Errorf("fcs: event %d has %d values for %d parameters", w.n+1, len(values), len(w.ps))
		return w.err
	}
	if len(w.buf)+w.evBytes > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	at := len(w.buf)
	b := w.buf[at : at+w.evBytes]
	big := w.s.BigEndian
	switch w.dt {
	case 'F':
		for j, v := range values {
			f := float32(v)
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return w.fail(j, v)
			}
			w.bound(j, float64(f))
			if big {
				binary.BigEndian.PutUint32(b[4*j:], math.Float32bits(f))
			} else {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
		}
	case 'D':
		for j, v := range values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return w.fail(j, v)
			}
			w.bound(j, v)
			if big {
				binary.BigEndian.PutUint64(b[8*j:], math.Float64bits(v))
			} else {
				binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(v))
			}
		}
	case 'I':
		k := 0
		for j, v := range values {
			if err := w.s.checkValue(w.dt, w.ps, int(w.n), j, v); err != nil {
				w.err = err
				return err
			}
			w.bound(j, v)
			wb := w.ps[j].bits / 8
			putInt(b[k:k+wb], v, big)
			k += wb
		}
	}
	w.buf = w.buf[:at+w.evBytes]
	w.n++
	return nil
}

// fail records the error of value v of parameter j of the current event.
func (w *StreamWriter) fail(j int, v float64) error {
	w.err = w.s.checkValue(w.dt, w.ps, int(w.n), j, v)
	if w.err == nil {
		w.err = fmt.Errorf("fcs: event %d parameter %d: value %v cannot be written", w.n+1, j+1, v)
	}
	return w.err
}

// bound widens the bounds of parameter j to hold v.
func (w *StreamWriter) bound(j int, v float64) {
	if v < w.lo[j] {
		w.lo[j] = v
	}
	if v > w.hi[j] {
		w.hi[j] = v
	}
}

// putInt writes the integer v (checked by checkValue) in len(b) bytes.
func putInt(b []byte, v float64, big bool) {
	u := uint64(v)
	if v >= 1<<63 {
		u = uint64(v-(1<<63)) | 1<<63
	}
	wb := len(b)
	for k := range b {
		sh := 8 * k
		if big {
			sh = 8 * (wb - 1 - k)
		}
		b[k] = byte(u >> uint(sh))
	}
}

// flush writes the buffered events to out.
func (w *StreamWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.out.WriteAt(w.buf, w.dataAt+w.written); err != nil {
		w.err = fmt.Errorf("fcs: writing DATA: %w", err)
		return w.err
	}
	w.written += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// Close writes the remaining events, then the HEADER and the TEXT segment
// of final, which describes the data set as it is now known (nil: the data
// set given to NewStreamWriter): $TOT is the number of events written, and
// each F or D parameter whose Range is 0 gets the range of its values (and
// $PnD, as Write chooses them). final may differ from that data set in its
// Keywords and in the names, labels, ranges, gains and keywords of its
// parameters, not in anything that decides how the events were encoded:
// DataType, BigEndian, the number of parameters, their Bits (0 and the
// data type's width are the same). An I parameter's range must hold the
// values written. final.Events must be nil and final.Analysis empty.
//
// When the TEXT of final does not fit in the room reserved, Close moves the
// events to make room: it reads and writes the whole DATA segment again.
// Close returns the first error of WriteEvent, and an error for a final
// data set that does not fit the events; it does not close out.
func (w *StreamWriter) Close(final *DataSet) error {
	if w == nil || w.out == nil {
		return errNoStreamWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("fcs: StreamWriter closed twice")
	}
	if final == nil {
		final = &w.s
	}
	ps, err := w.resolve(final)
	if err != nil {
		return err
	}
	kw, err := final.keywords(w.dt, int(w.n), ps)
	if err != nil {
		return err
	}
	delim, err := final.delimiter(append(kw, Keyword{"$BEGINDATA", "0"}))
	if err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.closed = true
	if err := w.finish(delim, kw); err != nil {
		w.err = err
		return err
	}
	return nil
}

// finish writes the HEADER and the TEXT of the keywords kw with the
// delimiter delim, moving the events first when the TEXT does not fit
// before them.
func (w *StreamWriter) finish(delim byte, kw []Keyword) error {
	dataLen := w.n * int64(w.evBytes)
	var off [6]int64
	if dataLen > 0 {
		off[2], off[3] = w.dataAt, w.dataAt+dataLen-1
	}
	text := buildText(delim, off, 0, kw)
	if HeaderLen+int64(len(text)) > w.dataAt && dataLen > 0 {
		// Make room: the offsets grow with the TEXT, which holds them.
		var err error
		if text, off, err = layoutText(delim, kw, dataLen, 0, true, maxLayoutIter); err != nil {
			return err
		}
		if err := w.move(off[2]); err != nil {
			return err
		}
	}
	off[0], off[1] = HeaderLen, HeaderLen+int64(len(text))-1
	if off[1] > maxHeaderOffset {
		return fmt.Errorf("fcs: the TEXT segment (%d bytes) ends past byte %d, which the HEADER cannot hold", len(text), maxHeaderOffset)
	}
	head := appendHeader(make([]byte, 0, HeaderLen+len(text)), off)
	head = append(head, text...)
	if dataLen > 0 {
		for int64(len(head)) < w.dataAt {
			head = append(head, ' ')
		}
	}
	if _, err := w.out.WriteAt(head, 0); err != nil {
		return fmt.Errorf("fcs: writing HEADER and TEXT: %w", err)
	}
	return nil
}

// resolve checks that the data set s fits the events written and resolves
// its parameters.
func (w *StreamWriter) resolve(s *DataSet) ([]wparam, error) {
	dt := s.DataType
	if dt == 0 {
		dt = 'F'
	}
	switch {
	case s.Events != nil || len(s.Analysis) > 0:
		return nil, fmt.Errorf("fcs: Close with a data set that has Events or an ANALYSIS segment")
	case dt != w.dt || s.BigEndian != w.s.BigEndian:
		return nil, fmt.Errorf("fcs: Close with a data set of another data type or byte order than the events written")
	case len(s.Params) != len(w.ps):
		return nil, fmt.Errorf("fcs: Close with a data set of %d parameters for events of %d", len(s.Params), len(w.ps))
	}
	ps := make([]wparam, len(w.ps))
	for j := range ps {
		p, err := s.param(dt, j, func(j int) (float64, float64) { return w.lo[j], w.hi[j] })
		if err != nil {
			return nil, err
		}
		if p.bits != w.ps[j].bits {
			return nil, fmt.Errorf("fcs: parameter %d (%s): Close with $PnB %d for events written with %d", j+1, s.Params[j].Name, p.bits, w.ps[j].bits)
		}
		if dt == 'I' && w.n > 0 && w.hi[j] > float64(p.limit) {
			return nil, fmt.Errorf("fcs: parameter %d (%s): $PnR %g does not hold the value %v written", j+1, s.Params[j].Name, p.rng, w.hi[j])
		}
		ps[j] = p
	}
	return ps, nil
}

// move moves the events written from w.dataAt to the later offset at,
// from the last bytes to the first, so that no byte is overwritten before
// it is read.
func (w *StreamWriter) move(at int64) error {
	buf := make([]byte, streamBuffer)
	for end := w.written; end > 0; {
		k := min(end, int64(len(buf)))
		b := buf[:k]
		if _, err := w.out.ReadAt(b, w.dataAt+end-k); err != nil {
			return fmt.Errorf("fcs: reading back DATA to make room for the TEXT: %w", err)
		}
		if _, err := w.out.WriteAt(b, at+end-k); err != nil {
			return fmt.Errorf("fcs: moving DATA to make room for the TEXT: %w", err)
		}
		end -= k
	}
	w.dataAt = at
	return nil
}
