package parquetio

import (
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
	d := compact{b: b}
	err = d.fields(0, func(id int16, typ byte) error {
		if id != 4 || typ != ctList {
			return d.skip(typ, 1)
		}
		elem, n, err := d.list()
		if err != nil {
			return err
		}
		if elem != ctStruct {
			return d.skipElems(elem, n, 1)
		}
		rowGroups = int64(n)
		for range n {
			err := d.fields(2, func(id int16, typ byte) error {
				if id != 1 || typ != ctList {
					return d.skip(typ, 2)
				}
				elem, k, err := d.list()
				if err != nil {
					return err
				}
				chunks += int64(k)
				return d.skipElems(elem, k, 2)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("metadata at byte %d of %d: %w", d.p, len(b), err)
	}
	return rowGroups, chunks, nil
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
