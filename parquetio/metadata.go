package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// KeyValues returns the key-value metadata of the footer of the Parquet
// file at path (such as the Metadata a Writer recorded); a file without
// any gives an empty map. Of a key given twice, the last value is
// returned; a key without a value maps to "".
//
// Memory is bounded by the footer's size: a footer over DefaultMaxFooterBytes is
// refused before it is read, and only the key-value pairs are decoded from
// it (the schema and row groups are skipped, every length checked against
// the bytes that remain).
func KeyValues(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	m, err := keyValues(f, fi.Size(), DefaultMaxFooterBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// keyValues reads the key-value metadata of the Parquet file r of size
// bytes, whose footer may hold at most limit bytes.
func keyValues(r io.ReaderAt, size, limit int64) (map[string]string, error) {
	var tail [8]byte
	if size < 12 {
		return nil, fmt.Errorf("%d bytes; not a Parquet file", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	switch string(tail[4:]) {
	case "PAR1":
	case "PARE":
		return nil, errors.New("an encrypted Parquet file; decrypt it first")
	default:
		return nil, errors.New("not a Parquet file (no PAR1 at its end)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > limit {
		return nil, fmt.Errorf("metadata of %d bytes, over the limit of %d MiB; the file is damaged or not one dica wrote", n, limit>>20)
	}
	if n > size-12 {
		return nil, fmt.Errorf("metadata of %d bytes in a file of %d bytes; the file is damaged", n, size)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return nil, err
	}
	d := compact{b: b}
	m := map[string]string{}
	if err := d.fileMetaData(m); err != nil {
		return nil, fmt.Errorf("metadata at byte %d of %d: %w", d.p, n, err)
	}
	return m, nil
}

// compact decodes the Thrift compact protocol, the encoding of a Parquet
// footer (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).
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

// kvMaxDepth bounds the nesting of structs and containers skipped.
const kvMaxDepth = 64

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

// skip skips a value of type typ.
func (d *compact) skip(typ byte, depth int) error {
	if depth > kvMaxDepth {
		return fmt.Errorf("values nested over %d deep", kvMaxDepth)
	}
	switch typ {
	case ctTrue, ctFalse:
		// A boolean field's value is in its type; an element of a list
		// takes a byte (the caller skips it as ctByte).
		return nil
	case ctByte:
		_, err := d.readByte()
		return err
	case ctI16, ctI32, ctI64:
		_, err := d.uvarint()
		return err
	case ctDouble:
		if len(d.b)-d.p < 8 {
			return errTruncated
		}
		d.p += 8
		return nil
	case ctUUID:
		if len(d.b)-d.p < 16 {
			return errTruncated
		}
		d.p += 16
		return nil
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
		var last int16
		for {
			t, id, err := d.field(last)
			if err != nil {
				return err
			}
			if t == ctStop {
				return nil
			}
			if err := d.skip(t, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return fmt.Errorf("unknown type %d", typ)
}

// skipElems skips n elements of type typ of a container.
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

// fileMetaData reads a FileMetaData struct into m: the key and value of
// each KeyValue of its field 5, key_value_metadata; the other fields are
// skipped.
func (d *compact) fileMetaData(m map[string]string) error {
	var last int16
	for {
		t, id, err := d.field(last)
		if err != nil {
			return err
		}
		if t == ctStop {
			return nil
		}
		last = id
		if id != 5 || t != ctList {
			if err := d.skip(t, 0); err != nil {
				return err
			}
			continue
		}
		et, n, err := d.list()
		if err != nil {
			return err
		}
		if et != ctStruct {
			return fmt.Errorf("key_value_metadata is a list of type %d; want structs", et)
		}
		for i := 0; i < n; i++ {
			if err := d.keyValue(m); err != nil {
				return fmt.Errorf("key-value pair %d: %w", i, err)
			}
		}
	}
}

// keyValue reads a KeyValue struct (1: key, 2: value) into m.
func (d *compact) keyValue(m map[string]string) error {
	var key, val []byte
	haveKey := false
	var last int16
	for {
		t, id, err := d.field(last)
		if err != nil {
			return err
		}
		if t == ctStop {
			break
		}
		last = id
		switch {
		case id == 1 && t == ctBinary:
			if key, err = d.readBinary(); err != nil {
				return err
			}
			haveKey = true
		case id == 2 && t == ctBinary:
			if val, err = d.readBinary(); err != nil {
				return err
			}
		default:
			if err := d.skip(t, 1); err != nil {
				return err
			}
		}
	}
	if !haveKey {
		return errors.New("no key")
	}
	m[string(key)] = string(val)
	return nil
}
