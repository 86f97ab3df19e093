package parquetio

import (
	"errors"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go/format"

	"github.com/dicalab/dica/internal/escape"
)

// DefaultMaxFooterBytes is the default of Options.MaxFooterBytes, the
// bound of a file's metadata (its footer) in bytes.
const DefaultMaxFooterBytes = 16 << 20

// DefaultMaxColumnChunks is the default of Options.MaxColumnChunks, the
// bound of a file's column chunks (row groups times columns): decoded, a
// column chunk's metadata takes about a kilobyte (metaChunkBytes), so the
// default bounds a file's metadata in memory to about 80 MB.
const DefaultMaxColumnChunks = 1 << 16

// metaChunkBytes is the memory that the metadata of one column chunk
// takes once decoded (measured: about 1.1 kB with statistics), for
// PassBytes.
const metaChunkBytes = 1280

// footerCounts returns the number of row groups and of column chunks that
// the Thrift compact encoding of a FileMetaData declares, without
// decoding it: it walks the encoding, skipping every field but the list of
// row groups and their lists of columns, so that a file's metadata can be
// refused before it is decoded (parquet-go decodes all of it, about a
// kilobyte per column chunk).
func footerCounts(b []byte) (rowGroups, chunks int64, err error) {
	w := thriftWalker{b: b}
	err = w.structFields(0, func(id int16, typ byte) error {
		if id != 4 || typ != tList {
			return w.skip(typ, 1)
		}
		n, elem, err := w.listHeader()
		if err != nil {
			return err
		}
		if elem != tStruct {
			return w.skipN(elem, n, 1)
		}
		rowGroups = n
		for i := int64(0); i < n; i++ {
			err := w.structFields(1, func(id int16, typ byte) error {
				if id != 1 || typ != tList {
					return w.skip(typ, 2)
				}
				k, elem, err := w.listHeader()
				if err != nil {
					return err
				}
				chunks += k
				return w.skipN(elem, k, 2)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return rowGroups, chunks, err
}

// Thrift compact protocol types.
const (
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// maxDepth bounds the nesting of the structures a walker skips.
const maxDepth = 32

var errThrift = errors.New("metadata is not a valid Thrift encoding")

// thriftWalker reads the Thrift compact protocol without decoding it.
type thriftWalker struct {
	b []byte
	p int
}

func (w *thriftWalker) byte() (byte, error) {
	if w.p >= len(w.b) {
		return 0, errThrift
	}
	c := w.b[w.p]
	w.p++
	return c, nil
}

func (w *thriftWalker) varint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errThrift
}

func (w *thriftWalker) advance(n uint64) error {
	if n > uint64(len(w.b)-w.p) {
		return errThrift
	}
	w.p += int(n)
	return nil
}

// structFields calls f with the id and type of each field of a struct, up
// to its end; f must read or skip the field's value.
func (w *thriftWalker) structFields(depth int, f func(id int16, typ byte) error) error {
	if depth > maxDepth {
		return errThrift
	}
	var id int16
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		typ := h & 0x0f
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			v, err := w.varint()
			if err != nil {
				return err
			}
			id = int16(int64(v>>1) ^ -int64(v&1))
		}
		if err := f(id, typ); err != nil {
			return err
		}
	}
}

// listHeader reads the header of a list or set: its size and element type.
// The size is checked against the bytes left (every element takes one).
func (w *thriftWalker) listHeader() (int64, byte, error) {
	h, err := w.byte()
	if err != nil {
		return 0, 0, err
	}
	n, elem := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = w.varint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(len(w.b)-w.p) {
		return 0, 0, errThrift
	}
	return int64(n), elem, nil
}

func (w *thriftWalker) skipN(typ byte, n int64, depth int) error {
	for i := int64(0); i < n; i++ {
		if typ == tTrue || typ == tFalse { // a boolean element is a byte
			if _, err := w.byte(); err != nil {
				return err
			}
			continue
		}
		if err := w.skip(typ, depth); err != nil {
			return err
		}
	}
	return nil
}

// skip skips a value of type typ (a field's: booleans have no bytes).
func (w *thriftWalker) skip(typ byte, depth int) error {
	if depth > maxDepth {
		return errThrift
	}
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		return w.advance(1)
	case tI16, tI32, tI64:
		_, err := w.varint()
		return err
	case tDouble:
		return w.advance(8)
	case tBinary:
		n, err := w.varint()
		if err != nil {
			return err
		}
		return w.advance(n)
	case tList, tSet:
		n, elem, err := w.listHeader()
		if err != nil {
			return err
		}
		return w.skipN(elem, n, depth+1)
	case tMap:
		n, err := w.varint()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n > uint64(len(w.b)-w.p) {
			return errThrift
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			if err := w.skipN(kv>>4, 1, depth+1); err != nil {
				return err
			}
			if err := w.skipN(kv&0x0f, 1, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return w.structFields(depth+1, func(_ int16, t byte) error { return w.skip(t, depth+1) })
	}
	return errThrift
}

// chunkSpan is the bytes of a column chunk in its file.
type chunkSpan struct {
	start, end int64
	rg         int
	col        string
}

// checkChunks checks the column chunks of a file's metadata md: each lies
// in the data part of the file (after the leading "PAR1", before the
// footer that starts at dataEnd), and no two share a byte. Column chunks
// that overlap would let a small file declare many row groups that read
// the same bytes again and again: a file of a few megabytes would give
// billions of rows and take its metadata's worth of memory for each.
func checkChunks(name string, md *format.FileMetaData, dataEnd int64) error {
	var spans []chunkSpan
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows < 0 {
			return fmt.Errorf("%s: row group %d has %d rows", name, g, rg.NumRows)
		}
		for c := range rg.Columns {
			m := &rg.Columns[c].MetaData
			col := fmt.Sprint(m.PathInSchema)
			if len(m.PathInSchema) == 1 {
				col = m.PathInSchema[0]
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			end := start + m.TotalCompressedSize
			if start < 4 || m.TotalCompressedSize < 0 || end < start || end > dataEnd {
				return fmt.Errorf("%s: row group %d, column %s: a column chunk at bytes [%d, %d) outside the data of the file (bytes [4, %d))",
					name, g, escape.String(col, 0), start, end, dataEnd)
			}
			if end > start {
				spans = append(spans, chunkSpan{start, end, g, col})
			}
		}
	}
	slices.SortFunc(spans, func(a, b chunkSpan) int {
		if a.start != b.start {
			return cmpInt64(a.start, b.start)
		}
		if a.end != b.end {
			return cmpInt64(a.end, b.end)
		}
		return a.rg - b.rg
	})
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if b.start < a.end {
			return fmt.Errorf("%s: row group %d, column %s and row group %d, column %s share bytes [%d, %d): column chunks that overlap are refused (a damaged file, or one made to be read many times over); write the file again",
				name, a.rg, escape.String(a.col, 0), b.rg, escape.String(b.col, 0), b.start, min(a.end, b.end))
		}
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
