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

// fileMetaData reads a FileMetaData struct into m: the key and value of
// each KeyValue of its field 5, key_value_metadata; the other fields are
// skipped.
func (d *compact) fileMetaData(m map[string]string) error {
	return d.fields(0, func(id int16, t byte) error {
		if id != 5 || t != ctList {
			return d.skip(t, 0)
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
		return nil
	})
}

// keyValue reads a KeyValue struct (1: key, 2: value) into m.
func (d *compact) keyValue(m map[string]string) error {
	var key, val []byte
	haveKey := false
	err := d.fields(1, func(id int16, t byte) error {
		var err error
		switch {
		case id == 1 && t == ctBinary:
			key, err = d.readBinary()
			haveKey = err == nil
		case id == 2 && t == ctBinary:
			val, err = d.readBinary()
		default:
			err = d.skip(t, 1)
		}
		return err
	})
	if err != nil {
		return err
	}
	if !haveKey {
		return errors.New("no key")
	}
	m[string(key)] = string(val)
	return nil
}
