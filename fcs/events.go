package fcs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	mathbits "math/bits"

	"gonum.org/v1/gonum/mat"
)

// TruncatedError reports a data set holding fewer complete events than $TOT
// declares: the file ends before its DATA segment does, or the segment
// ($BEGINDATA-$ENDDATA, or the HEADER offsets) is too short for $TOT events.
type TruncatedError struct {
	Expected, Present int
}

// Error reports both counts and how to read the complete events
// (EventOptions.AllowTruncated).
func (e *TruncatedError) Error() string {
	if e == nil {
		return "fcs: truncated DATA"
	}
	return fmt.Sprintf("fcs: truncated DATA: $TOT declares %d events but only %d complete events are present (the file or its DATA segment ends early); EventOptions.AllowTruncated reads the complete ones", e.Expected, e.Present)
}

// EventOptions controls how events are read.
type EventOptions struct {
	// AllowTruncated reads the complete events present in a truncated file
	// instead of returning a *TruncatedError.
	AllowTruncated bool
	// Scale converts stored values to linear scale as flowCore does: for
	// $PnE = f1,f2 with f1 > 0, v -> f2 * 10^(f1 * v / $PnR) (f2 = 0 read as
	// 1); otherwise v -> v / $PnG.
	Scale bool
	// BufferBytes is the size of the read buffer (default 1 MiB; at least
	// one event).
	BufferBytes int
}

// EventReader streams the events of a data set in blocks. It is not safe for
// concurrent use.
type EventReader struct {
	f     *File
	dec   decoder
	pos   int64 // file offset of the next chunk
	left  int   // events not yet returned
	inBuf int   // events not yet read from the file
	buf   []byte
	off   int // first undecoded byte of buf
	end   int // bytes of buf holding data
	scale bool
}

// Events returns a reader of the data set's events. It returns an error
// wrapping ErrNoData when the data set has no DATA segment, and a
// *TruncatedError when the DATA segment is cut short (unless
// opts.AllowTruncated).
func (f *File) Events(opts EventOptions) (*EventReader, error) {
	if err := f.parsed(); err != nil {
		return nil, err
	}
	n, err := f.present(opts.AllowTruncated)
	if err != nil {
		return nil, err
	}
	bb := opts.BufferBytes
	if bb <= 0 {
		bb = 1 << 20
	}
	chunk := max(int64(bb)/f.evBytes, 1)
	chunk = min(chunk, int64(n))
	return &EventReader{
		f:     f,
		dec:   newDecoder(f),
		pos:   f.begin,
		left:  n,
		inBuf: n,
		buf:   make([]byte, chunk*f.evBytes+slack),
		scale: opts.Scale,
	}, nil
}

// present returns the number of events to read, or the error for a file
// without DATA or a truncated one.
func (f *File) present(allowTrunc bool) (int, error) {
	if f.tot == 0 {
		return 0, nil
	}
	if f.segLen == 0 || f.begin >= f.size {
		if f.segLen == 0 {
			return 0, fmt.Errorf("%w: neither the HEADER nor $BEGINDATA/$ENDDATA locate one (and $TOT is %d)", ErrNoData, f.tot)
		}
		return 0, fmt.Errorf("%w: it would start at byte %d but the file has only %d bytes (HEADER and TEXT only?); $TOT is %d", ErrNoData, f.begin, f.size, f.tot)
	}
	n := f.EventsPresent()
	if n < f.tot && !allowTrunc {
		return n, &TruncatedError{Expected: f.tot, Present: n}
	}
	return n, nil
}

// Len returns the number of events not yet read (0 for a nil or zero
// EventReader).
func (r *EventReader) Len() int {
	if r == nil {
		return 0
	}
	return r.left
}

// NumParams returns the number of values of an event (0 for a nil or zero
// EventReader).
func (r *EventReader) NumParams() int {
	if r == nil || r.f == nil {
		return 0
	}
	return len(r.f.params)
}

// Read decodes up to maxEvents events (and no more than fit in dst) into dst,
// row-major, one row of NumParams values per event, and returns the number
// of events read. At the end of the data it returns 0, io.EOF. It returns an
// error if dst cannot hold one event, and io.EOF for a zero EventReader
// (one that File.Events did not make), which has no events.
func (r *EventReader) Read(dst []float64, maxEvents int) (int, error) {
	if r == nil {
		return 0, errors.New("fcs: Read of a nil EventReader")
	}
	if r.left == 0 || r.f == nil {
		return 0, io.EOF
	}
	p := len(r.f.params)
	n := min(maxEvents, len(dst)/p, r.left)
	if n <= 0 {
		return 0, fmt.Errorf("fcs: Read into %d values for at most %d events of %d parameters: room for no event", len(dst), maxEvents, p)
	}
	eb := int(r.f.evBytes)
	done := 0
	for done < n {
		if r.off == r.end {
			if err := r.fill(); err != nil {
				return done, err
			}
		}
		k := min((r.end-r.off)/eb, n-done)
		out := dst[done*p : (done+k)*p]
		r.dec.decode(out, r.buf[r.off:r.off+k*eb+slack], k)
		if r.scale {
			r.f.scale(out)
		}
		r.off += k * eb
		done += k
	}
	r.left -= n
	return n, nil
}

func (r *EventReader) fill() error {
	eb := r.f.evBytes
	k := min(int64(len(r.buf)-slack)/eb, int64(r.inBuf))
	nb := int(k * eb)
	m, err := r.f.r.ReadAt(r.buf[:nb], r.pos)
	if m < nb {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("fcs: reading DATA at byte %d: %w", r.pos, err)
	}
	r.pos += int64(nb)
	r.inBuf -= int(k)
	r.off, r.end = 0, nb
	return nil
}

// eventWindow reads single events by their index through a window of about
// one page of the DATA segment, so that events close to each other share a
// read and the events between distant ones are not read at all.
type eventWindow struct {
	f            *File
	dec          decoder
	n            int // events present
	scale        bool
	buf          []byte
	first, count int // events held in buf
}

// windowBytes is the size of an eventWindow read.
const windowBytes = 4096

// window returns an eventWindow over the events of f (the same events, and
// errors, as Events).
func (f *File) window(opts EventOptions) (*eventWindow, error) {
	if err := f.parsed(); err != nil {
		return nil, err
	}
	n, err := f.present(opts.AllowTruncated)
	if err != nil {
		return nil, err
	}
	k := max(windowBytes/f.evBytes, 1)
	return &eventWindow{f: f, dec: newDecoder(f), n: n, scale: opts.Scale,
		buf: make([]byte, k*f.evBytes+slack)}, nil
}

// event decodes event i (0 <= i < n) into dst (NumParams values).
func (w *eventWindow) event(i int, dst []float64) error {
	eb := int(w.f.evBytes)
	if i < w.first || i >= w.first+w.count {
		k := min((len(w.buf)-slack)/eb, w.n-i)
		nb := k * eb
		pos := w.f.begin + int64(i)*int64(eb)
		m, err := w.f.r.ReadAt(w.buf[:nb], pos)
		if m < nb {
			w.count = 0
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("fcs: reading DATA at byte %d: %w", pos, err)
		}
		w.first, w.count = i, k
	}
	off := (i - w.first) * eb
	w.dec.decode(dst, w.buf[off:off+eb+slack], 1)
	if w.scale {
		w.f.scale(dst[:len(w.f.params)])
	}
	return nil
}

// ReadAll reads every event into an events x parameters matrix. Its memory
// is the matrix plus one read buffer.
func (f *File) ReadAll(opts EventOptions) (*mat.Dense, error) {
	r, err := f.Events(opts)
	if err != nil {
		return nil, err
	}
	n, p := r.Len(), f.NumParams()
	if n == 0 {
		return &mat.Dense{}, nil
	}
	data := make([]float64, n*p)
	for done := 0; done < n; {
		k, err := r.Read(data[done*p:], n-done)
		if err != nil {
			return nil, err
		}
		done += k
	}
	return mat.NewDense(n, p, data), nil
}

// scale applies $PnE / $PnG to a row-major block.
func (f *File) scale(x []float64) {
	p := len(f.params)
	for j, q := range f.params {
		switch {
		case q.Decades > 0 && q.Range > 0:
			off := q.Offset
			if off == 0 {
				off = 1
			}
			c := q.Decades / q.Range
			for i := j; i < len(x); i += p {
				x[i] = off * math.Pow(10, c*x[i])
			}
		case q.Gain != 1 && q.Gain > 0:
			g := 1 / q.Gain
			for i := j; i < len(x); i += p {
				x[i] *= g
			}
		}
	}
}

// decoder turns DATA bytes into float64s.
type decoder struct {
	kind  byte // 'F', 'D', 'I'
	big   bool
	width []int    // bytes per parameter
	mask  []uint64 // per parameter, integer data
	uni   int      // common width in bytes, 0 if mixed
	off   []int    // byte offset of each parameter in an event
	shift []uint8  // big-endian: right shift of an 8-byte load
	eb    int      // bytes per event
	wide  bool     // some mask has bit 63 set
}

// slack is the number of bytes after the data that the integer decoder may
// load (and mask away): it reads each value with one 8-byte load.
const slack = 8

func newDecoder(f *File) decoder {
	p := len(f.params)
	d := decoder{kind: f.dataType, big: f.bigEnd, width: make([]int, p), mask: make([]uint64, p),
		off: make([]int, p), shift: make([]uint8, p)}
	for j, p := range f.params {
		d.width[j] = p.Bits / 8
		d.mask[j] = intMask(p.Bits, p.Range)
		d.off[j] = d.eb
		d.eb += d.width[j]
		d.shift[j] = uint8(64 - p.Bits)
		d.wide = d.wide || d.mask[j]>>63 != 0
		if j == 0 {
			d.uni = d.width[j]
		} else if d.width[j] != d.uni {
			d.uni = 0
		}
	}
	return d
}

// intMask returns the bit mask of integer values with $PnB bits and $PnR
// rng: the smallest power of two >= rng, minus one, or all bits when rng is
// absent or needs more bits.
func intMask(bits int, rng float64) uint64 {
	all := uint64(math.MaxUint64)
	if bits < 64 {
		all = 1<<uint(bits) - 1
	}
	if !(rng > 0) || rng >= math.Exp2(float64(bits)) {
		return all
	}
	// 1 <= r < 2^bits; the smallest power of two >= r is 2^n. For r above
	// 2^63 (64-bit data) n is 64 and the mask is all bits.
	r := uint64(math.Ceil(rng))
	n := mathbits.Len64(r - 1)
	if n >= 64 {
		return all
	}
	return (1<<uint(n) - 1) & all
}

// decode decodes n events from src into dst (n * len(width) values). For
// integer data, src must extend slack bytes past the n events (the values
// of those bytes do not matter).
func (d *decoder) decode(dst []float64, src []byte, n int) {
	switch {
	case d.kind == 'F':
		decodeF32(dst[:n*len(d.width)], src, d.big)
	case d.kind == 'D':
		decodeF64(dst[:n*len(d.width)], src, d.big)
	case d.uni == 2 || d.uni == 4:
		decodeUniform(dst, src, n, d.uni, d.mask, d.big)
	case d.wide:
		d.decodeInt(dst, src, n)
	case d.big:
		d.decodeBE(dst, src, n)
	default:
		d.decodeLE(dst, src, n)
	}
}

// decodeBE decodes big-endian integers of any widths up to 63 bits with an
// 8-byte load, a shift and the mask per value.
func (d *decoder) decodeBE(dst []float64, src []byte, n int) {
	p := len(d.off)
	off, shift, mask := d.off, d.shift[:len(d.off)], d.mask[:len(d.off)]
	for e := 0; e < n; e++ {
		s := src[e*d.eb : e*d.eb+d.eb+slack]
		o := dst[e*p : (e+1)*p]
		for j, k := range off {
			v := binary.BigEndian.Uint64(s[k:]) >> shift[j]
			o[j] = float64(int64(v & mask[j]))
		}
	}
}

// decodeLE is decodeBE for little-endian data: the mask alone drops the
// bytes of the next values.
func (d *decoder) decodeLE(dst []float64, src []byte, n int) {
	p := len(d.off)
	off, mask := d.off, d.mask[:len(d.off)]
	for e := 0; e < n; e++ {
		s := src[e*d.eb : e*d.eb+d.eb+slack]
		o := dst[e*p : (e+1)*p]
		for j, k := range off {
			o[j] = float64(int64(binary.LittleEndian.Uint64(s[k:]) & mask[j]))
		}
	}
}

func decodeF32(dst []float64, src []byte, big bool) {
	src = src[:4*len(dst)]
	if big {
		for i := range dst {
			dst[i] = float64(math.Float32frombits(binary.BigEndian.Uint32(src[4*i:])))
		}
		return
	}
	for i := range dst {
		dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:])))
	}
}

func decodeF64(dst []float64, src []byte, big bool) {
	src = src[:8*len(dst)]
	if big {
		for i := range dst {
			dst[i] = math.Float64frombits(binary.BigEndian.Uint64(src[8*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
}

// decodeUniform decodes n events of p = len(mask) integers that all have
// the width w, 2 or 4 bytes, with one load of that width per value.
func decodeUniform(dst []float64, src []byte, n, w int, mask []uint64, big bool) {
	p := len(mask)
	src = src[:w*n*p]
	dst = dst[:n*p]
	for e := 0; e < n; e++ {
		s := src[w*e*p : w*(e+1)*p]
		o := dst[e*p : (e+1)*p]
		switch {
		case w == 2 && big:
			for j := range o {
				o[j] = float64(binary.BigEndian.Uint16(s[2*j:]) & uint16(mask[j]))
			}
		case w == 2:
			for j := range o {
				o[j] = float64(binary.LittleEndian.Uint16(s[2*j:]) & uint16(mask[j]))
			}
		case big:
			for j := range o {
				o[j] = float64(binary.BigEndian.Uint32(s[4*j:]) & uint32(mask[j]))
			}
		default:
			for j := range o {
				o[j] = float64(binary.LittleEndian.Uint32(s[4*j:]) & uint32(mask[j]))
			}
		}
	}
}

// decodeInt handles any mix of integer widths from 1 to 8 bytes.
func (d *decoder) decodeInt(dst []float64, src []byte, n int) {
	p := len(d.width)
	k := 0
	for e := 0; e < n; e++ {
		for j, w := range d.width {
			b := src[k : k+w]
			var v uint64
			switch {
			case w == 1:
				v = uint64(b[0])
			case w == 2 && d.big:
				v = uint64(binary.BigEndian.Uint16(b))
			case w == 2:
				v = uint64(binary.LittleEndian.Uint16(b))
			case w == 4 && d.big:
				v = uint64(binary.BigEndian.Uint32(b))
			case w == 4:
				v = uint64(binary.LittleEndian.Uint32(b))
			case w == 8 && d.big:
				v = binary.BigEndian.Uint64(b)
			case w == 8:
				v = binary.LittleEndian.Uint64(b)
			case d.big:
				for _, c := range b {
					v = v<<8 | uint64(c)
				}
			default:
				for i := w - 1; i >= 0; i-- {
					v = v<<8 | uint64(b[i])
				}
			}
			dst[e*p+j] = float64(v & d.mask[j])
			k += w
		}
	}
}
