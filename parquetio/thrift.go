package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// compact reads the Thrift compact protocol, the encoding of a Parquet
// footer (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md),
// without decoding what it skips: every length and count is checked
// against the bytes left and the nesting is bounded (maxDepth), so a
// hostile footer costs at most one walk over its bytes.
type compact struct {
	b []byte
	p int
}

// Thrift compact types.
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
	ctUUID   = 13
)

// maxDepth bounds the nesting of structs and containers.
const maxDepth = 64

var errTruncated = errors.New("truncated")

func (d *compact) readByte() (byte, error) {
	if d.p >= len(d.b) {
		return 0, errTruncated
	}
	d.p++
	return d.b[d.p-1], nil
}

func (d *compact) uvarint() (uint64, error) {
	v, k := binary.Uvarint(d.b[d.p:])
	if k <= 0 {
		return 0, errors.New("bad varint")
	}
	d.p += k
	return v, nil
}

// advance skips n bytes.
func (d *compact) advance(n uint64) error {
	if n > uint64(len(d.b)-d.p) {
		return errTruncated
	}
	d.p += int(n)
	return nil
}

// field reads a field header of a struct: its type (ctStop at the end) and
// id; last is the id of the field before.
func (d *compact) field(last int16) (typ byte, id int16, err error) {
	h, err := d.readByte()
	if err != nil || h == ctStop {
		return ctStop, 0, err
	}
	typ = h & 0x0f
	if delta := h >> 4; delta != 0 {
		return typ, last + int16(delta), nil
	}
	u, err := d.uvarint()
	if err != nil {
		return 0, 0, err
	}
	return typ, int16(int64(u>>1) ^ -int64(u&1)), nil
}

// fields calls f with the id and type of each field of a struct at nesting
// depth, up to the struct's end; f must read or skip the field's value.
func (d *compact) fields(depth int, f func(id int16, typ byte) error) error {
	if depth > maxDepth {
		return fmt.Errorf("values nested over %d deep", maxDepth)
	}
	var last int16
	for {
		t, id, err := d.field(last)
		if err != nil {
			return err
		}
		if t == ctStop {
			return nil
		}
		if err := f(id, t); err != nil {
			return err
		}
		last = id
	}
}

// readBinary reads a string or binary value: a length and its bytes.
func (d *compact) readBinary() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.p) {
		return nil, fmt.Errorf("a string of %d bytes with %d left", n, len(d.b)-d.p)
	}
	s := d.b[d.p : d.p+int(n)]
	d.p += int(n)
	return s, nil
}

// list reads a list or set header: the element type and count, the count
// checked against the bytes left (every element takes at least one).
func (d *compact) list() (typ byte, n int, err error) {
	h, err := d.readByte()
	if err != nil {
		return 0, 0, err
	}
	typ = h & 0x0f
	u := uint64(h >> 4)
	if u == 15 {
		if u, err = d.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if u > uint64(len(d.b)-d.p) {
		return 0, 0, fmt.Errorf("a list of %d elements with %d bytes left", u, len(d.b)-d.p)
	}
	return typ, int(u), nil
}

// skip skips a value of type typ at nesting depth (a field's value: a
// boolean field's value is in its type and takes no byte).
func (d *compact) skip(typ byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("values nested over %d deep", maxDepth)
	}
	switch typ {
	case ctTrue, ctFalse:
		return nil
	case ctByte:
		return d.advance(1)
	case ctI16, ctI32, ctI64:
		_, err := d.uvarint()
		return err
	case ctDouble:
		return d.advance(8)
	case ctUUID:
		return d.advance(16)
	case ctBinary:
		_, err := d.readBinary()
		return err
	case ctList, ctSet:
		et, n, err := d.list()
		if err != nil {
			return err
		}
		return d.skipElems(et, n, depth)
	case ctMap:
		n, err := d.uvarint()
		if err != nil || n == 0 {
			return err
		}
		if n > uint64(len(d.b)-d.p) {
			return fmt.Errorf("a map of %d entries with %d bytes left", n, len(d.b)-d.p)
		}
		kv, err := d.readByte()
		if err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			if err := d.skipElems(kv>>4, 1, depth); err != nil {
				return err
			}
			if err := d.skipElems(kv&0x0f, 1, depth); err != nil {
				return err
			}
		}
		return nil
	case ctStruct:
		return d.fields(depth+1, func(_ int16, t byte) error { return d.skip(t, depth+1) })
	}
	return fmt.Errorf("unknown type %d", typ)
}

// skipElems skips n elements of type typ of a container at nesting depth
// (a boolean element takes a byte).
func (d *compact) skipElems(typ byte, n, depth int) error {
	if typ == ctTrue || typ == ctFalse {
		typ = ctByte
	}
	for i := 0; i < n; i++ {
		if err := d.skip(typ, depth+1); err != nil {
			return err
		}
	}
	return nil
}
