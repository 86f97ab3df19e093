// Package parquetio reads cells from Parquet files as a dataset.Source and
// writes projected cells to a Parquet file, both as streams: a pass reads
// one page of each column at a time, and the writer writes row groups as
// blocks arrive.
//
// The Parquet encoding is github.com/parquet-go/parquet-go's, preferred to
// the parquet packages of github.com/apache/arrow-go/v18 (which the tests
// use as an independent writer and reader) for its typed page readers,
// which read faster, and for the fewer modules and smaller binary it
// brings. BenchmarkStream10M (package anndata) measures the writer and
// the reader.
//
// Reading: the columns are top-level columns of the files' schemas, chosen
// by name. Features are numeric columns (DOUBLE, FLOAT, INT32, INT64 with
// their integer logical types); domains and labels are string, integer or
// boolean columns (numbers compared as their decimal text); targets are
// numeric columns. Columns may be optional, but a null value is an error
// naming the file, the row and the column, as are NaN and infinite values.
// Memory is bounded on any input: a file's metadata is checked against
// Options.MaxFooterBytes and Options.MaxColumnChunks before it is decoded,
// its column chunks must lie in the file without overlapping, and before a
// column chunk is read the headers of its pages are checked against
// Options.MaxPageBytes, so a malformed or hostile file is refused before
// any large allocation. Source.PassBytes bounds the memory a pass holds.
package parquetio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
)

// DefaultMaxPageBytes bounds the size of a page (compressed and
// uncompressed) and, divided by 8, the number of values in it.
const DefaultMaxPageBytes = 64 << 20

// Options say how to read the files. The zero value reads every numeric
// column as a feature, one domain per file, without labels.
type Options struct {
	// Features selects the input columns by name, in this order. Empty
	// means every numeric column of the first file other than the domain,
	// label and target columns and pandas' index column
	// (__index_level_0__).
	Features []string
	// Domain names the column holding each row's domain. Empty means one
	// domain per file, named after the file's base name without extension
	// (the names must then be distinct).
	Domain string
	// Label names the column holding class labels.
	Label string
	// Target names numeric columns read as real targets (regression). A
	// data set has labels or targets, not both.
	Target []string
	// LabelsIgnore lists label values whose rows are left out.
	LabelsIgnore []string
	// Transform, if not nil, is applied to the features of each row in
	// place after reading. Its results must be finite.
	Transform func(row []float64)
	// MaxPageBytes bounds a page (default DefaultMaxPageBytes): a file with
	// larger pages is refused with a message saying how to rewrite it.
	MaxPageBytes int64
	// MaxFooterBytes bounds the size of a file's metadata, its footer
	// (default DefaultMaxFooterBytes).
	MaxFooterBytes int64
	// MaxColumnChunks bounds the column chunks of a file, its row groups
	// times its columns (default DefaultMaxColumnChunks): a file with more
	// is refused before its metadata is decoded, with a message saying how
	// to rewrite it with fewer, larger row groups.
	MaxColumnChunks int64
}

// Source reads Parquet files as a dataset.Source. It implements
// dataset.Sizer. It is safe to Open several passes, even concurrently.
type Source struct {
	fsys    fs.FS // nil: the operating system's files
	files   []string
	o       Options
	schema  dataset.Schema
	cols    []string // columns read: features, then domain, label, targets
	fileDom []string
	ignore  map[string]bool
	rows    int64
	kept    int64
	maxPage int64
	maxFoot int64
	maxCC   int64
	info    []fileInfo // what the metadata of each file says, for PassBytes
}

// fileInfo is what PassBytes needs of a file's metadata: its size, its
// column chunks, and for each column the largest chunk (uncompressed
// bytes and values), which bounds its largest page.
type fileInfo struct {
	footer, chunks int64
	cols           map[string]chunkMax
}

type chunkMax struct{ bytes, values int64 }

// column kinds.
const (
	numCol = iota
	textCol
)

// NewSource returns a Source over the files (globs expanded by the
// caller), after checking that each is a Parquet file holding the columns
// the options name, with types that fit their roles.
func NewSource(files []string, o Options) (*Source, error) {
	return newSource(nil, files, o)
}

// NewSourceFS is like NewSource with the files read from fsys, whose files
// must implement io.ReaderAt (those of os.DirFS and testing/fstest.MapFS
// do).
func NewSourceFS(fsys fs.FS, files []string, o Options) (*Source, error) {
	if fsys == nil {
		return nil, errors.New("parquetio: nil file system")
	}
	return newSource(fsys, files, o)
}

// newSource checks the options, then each file's columns against the
// roles the options give them.
func newSource(fsys fs.FS, files []string, o Options) (*Source, error) {
	if len(files) == 0 {
		return nil, errors.New("parquetio: no files")
	}
	if o.Label != "" && len(o.Target) > 0 {
		return nil, errors.New("parquetio: both a label and targets; a data set has one or the other")
	}
	if o.MaxPageBytes < 0 || o.MaxFooterBytes < 0 || o.MaxColumnChunks < 0 {
		return nil, fmt.Errorf("parquetio: a negative limit (MaxPageBytes %d, MaxFooterBytes %d, MaxColumnChunks %d)", o.MaxPageBytes, o.MaxFooterBytes, o.MaxColumnChunks)
	}
	s := &Source{fsys: fsys, files: slices.Clone(files), o: o, maxPage: o.MaxPageBytes, maxFoot: o.MaxFooterBytes, maxCC: o.MaxColumnChunks}
	if s.maxPage == 0 {
		s.maxPage = DefaultMaxPageBytes
	}
	if s.maxFoot == 0 {
		s.maxFoot = DefaultMaxFooterBytes
	}
	if s.maxCC == 0 {
		s.maxCC = DefaultMaxColumnChunks
	}
	roles, err := columnRoles(o)
	if err != nil {
		return nil, err
	}
	features := slices.Clone(o.Features)
	for i, name := range s.files {
		if features, err = s.checkFile(name, i == 0, roles, features); err != nil {
			return nil, err
		}
	}
	if err := s.setColumns(features); err != nil {
		return nil, err
	}
	if err := s.setIgnore(); err != nil {
		return nil, err
	}
	return s, nil
}

// columnRoles maps the domain, label and target columns the options name
// to their role ("domain", "label", "target"); a column given two roles is
// an error.
func columnRoles(o Options) (map[string]string, error) {
	roles := map[string]string{}
	claim := func(name, role string) error {
		if prev, ok := roles[name]; ok {
			return fmt.Errorf("parquetio: the column %s is both the %s and the %s", escape.String(name, 0), prev, role)
		}
		roles[name] = role
		return nil
	}
	if o.Domain != "" {
		if err := claim(o.Domain, "domain"); err != nil {
			return nil, err
		}
	}
	if o.Label != "" {
		if err := claim(o.Label, "label"); err != nil {
			return nil, err
		}
	}
	for _, t := range o.Target {
		if err := claim(t, "target"); err != nil {
			return nil, err
		}
	}
	return roles, nil
}

// checkFile opens the file name and checks that it holds the feature,
// domain, label and target columns with types that fit their roles, and
// adds its rows to the count. When features is empty and first is set (the
// first file), the features become the file's numeric columns that have no
// other role; it returns the features.
func (s *Source) checkFile(name string, first bool, roles map[string]string, features []string) ([]string, error) {
	of, err := s.openAt(name)
	if err != nil {
		return nil, err
	}
	defer of.close()
	f := of.f
	sc := f.Schema()
	if first && len(features) == 0 {
		for _, fld := range sc.Fields() {
			if !fld.Leaf() || roles[fld.Name()] != "" || fld.Name() == "__index_level_0__" {
				continue
			}
			if kind, _ := kindOf(fld); kind == numCol {
				features = append(features, fld.Name())
			}
		}
		if len(features) == 0 {
			return nil, fmt.Errorf("%s: no numeric column to read as a feature (columns: %s)", name, columnList(sc))
		}
	}
	for _, c := range features {
		if roles[c] != "" {
			return nil, fmt.Errorf("parquetio: the column %s is both a feature and the %s", escape.String(c, 0), roles[c])
		}
		if err := checkColumn(sc, name, c, "feature", numCol); err != nil {
			return nil, err
		}
	}
	o := s.o
	if o.Domain != "" {
		if err := checkColumn(sc, name, o.Domain, "domain", textCol); err != nil {
			return nil, err
		}
	}
	if o.Label != "" {
		if err := checkColumn(sc, name, o.Label, "label", textCol); err != nil {
			return nil, err
		}
	}
	for _, t := range o.Target {
		if err := checkColumn(sc, name, t, "target", numCol); err != nil {
			return nil, err
		}
	}
	s.rows += f.NumRows()
	info := metaInfo(f.Metadata())
	info.footer = of.footer
	s.info = append(s.info, info)
	return features, nil
}

// metaInfo returns what PassBytes needs of a file's metadata.
func metaInfo(md *format.FileMetaData) fileInfo {
	fi := fileInfo{cols: map[string]chunkMax{}}
	for g := range md.RowGroups {
		for c := range md.RowGroups[g].Columns {
			m := &md.RowGroups[g].Columns[c].MetaData
			fi.chunks++
			if len(m.PathInSchema) != 1 {
				continue
			}
			cm := fi.cols[m.PathInSchema[0]]
			cm.bytes = max(cm.bytes, m.TotalUncompressedSize, m.TotalCompressedSize)
			cm.values = max(cm.values, m.NumValues)
			fi.cols[m.PathInSchema[0]] = cm
		}
	}
	return fi
}

// PassBytes returns an upper bound of the memory a pass holds beyond the
// blocks it fills, for a memory budget. A pass reads one file at a time;
// for the file that needs most it holds the file's metadata decoded
// (about 1.3 kB per column chunk and twice the footer's bytes) and, for
// each column read, a read buffer of 1 MiB and one page as stored,
// decompressed and decoded (a page is bounded by the column's largest
// column chunk and by Options.MaxPageBytes: 2 bytes and 32 bytes per
// value), and three batches of 4096 decoded rows.
func (s *Source) PassBytes() int64 {
	if s == nil {
		return 0
	}
	batch := int64(3 * 4096 * (len(s.schema.Features) + len(s.schema.Targets) + 2) * 8)
	var most int64
	for _, fi := range s.info {
		n := fi.chunks*metaChunkBytes + 2*fi.footer + batch
		for _, c := range s.cols {
			cm := fi.cols[c]
			page := min(cm.bytes, s.maxPage)
			values := min(cm.values, s.maxPage/8)
			n += 1<<20 + 2*page + 32*values
		}
		most = max(most, n)
	}
	return most
}

// checkColumn checks that the schema sc of the file name has the column
// col, of a type this package reads, numeric when want is numCol (role
// names the column's use in messages).
func checkColumn(sc *parquet.Schema, name, col, role string, want int) error {
	fld := field(sc, col)
	if fld == nil {
		return fmt.Errorf("%s: no column %s (columns: %s)", name, escape.String(col, 0), columnList(sc))
	}
	kind, err := kindOf(fld)
	if err != nil {
		return fmt.Errorf("%s: column %s: %v", name, escape.String(col, 0), err)
	}
	if want == numCol && kind != numCol {
		return fmt.Errorf("%s: column %s holds %s; a %s must be numeric", name, escape.String(col, 0), fld.Type(), role)
	}
	return nil
}

// setColumns sets the schema and the columns a pass reads: the features
// (each named once), then the domain column or, without one, a domain per
// file named after it (the names must differ), the label and the targets.
func (s *Source) setColumns(features []string) error {
	o := s.o
	if len(features) != len(slices.Compact(slices.Sorted(slices.Values(features)))) {
		return fmt.Errorf("parquetio: a feature column is named twice in %s", strings.Join(features, ","))
	}
	s.schema = dataset.Schema{Features: features, Labelled: o.Label != "", Targets: slices.Clone(o.Target)}
	s.cols = slices.Clone(features)
	if o.Domain != "" {
		s.cols = append(s.cols, o.Domain)
	} else {
		seen := map[string]string{}
		for _, f := range s.files {
			d := dataset.DomainName(f)
			if prev, dup := seen[d]; dup {
				return fmt.Errorf("parquetio: %s and %s would both be the domain %q; name a domain column, or rename the files", prev, f, d)
			}
			seen[d] = f
			s.fileDom = append(s.fileDom, d)
		}
	}
	if o.Label != "" {
		s.cols = append(s.cols, o.Label)
	}
	s.cols = append(s.cols, o.Target...)
	return nil
}

// setIgnore takes the label values whose rows are left out, and counts the
// rows a pass keeps.
func (s *Source) setIgnore() error {
	if len(s.o.LabelsIgnore) > 0 {
		if s.o.Label == "" {
			return errors.New("parquetio: labels to ignore but no label column")
		}
		s.ignore = map[string]bool{}
		for _, v := range s.o.LabelsIgnore {
			s.ignore[v] = true
		}
	}
	s.kept = s.rows
	if s.ignore != nil {
		n, err := s.countKept()
		if err != nil {
			return err
		}
		s.kept = n
	}
	return nil
}

func field(sc *parquet.Schema, name string) parquet.Field {
	for _, f := range sc.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

func columnList(sc *parquet.Schema) string {
	var names []string
	for i, f := range sc.Fields() {
		if i == 20 {
			names = append(names, fmt.Sprintf("... (%d more)", len(sc.Fields())-20))
			break
		}
		names = append(names, escape.String(f.Name(), 40))
	}
	return strings.Join(names, ", ")
}

// kindOf says how a column can be used: numeric (features, targets, and
// labels as text) or text only.
func kindOf(f parquet.Field) (int, error) {
	if !f.Leaf() {
		return 0, errors.New("a nested column (group) is not read")
	}
	if f.Repeated() {
		return 0, errors.New("a repeated (list) column is not read")
	}
	t := f.Type()
	lt := t.LogicalType()
	switch t.Kind() {
	case parquet.Double, parquet.Float:
		return numCol, nil
	case parquet.Int32, parquet.Int64:
		if lt == nil || lt.Value == nil {
			return numCol, nil
		}
		if _, ok := lt.Value.(*format.IntType); ok {
			return numCol, nil
		}
		return textCol, nil // dates, times, decimals: as text labels only
	case parquet.Boolean, parquet.ByteArray, parquet.FixedLenByteArray:
		return textCol, nil
	}
	return 0, fmt.Errorf("type %s is not read", t)
}

// openFile is an open Parquet file.
type openFile struct {
	f            *parquet.File
	ra           io.ReaderAt
	size, footer int64 // bytes of the file and of its metadata
	close        func()
}

// openAt opens a Parquet file after checking its metadata: its size and
// its number of column chunks before it is decoded, then its column
// chunks (checkChunks).
func (s *Source) openAt(name string) (*openFile, error) {
	var fh fs.File
	var err error
	if s.fsys != nil {
		fh, err = s.fsys.Open(name)
	} else {
		fh, err = os.Open(name)
	}
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*openFile, error) {
		fh.Close()
		return nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		return fail(err)
	}
	ra, ok := fh.(io.ReaderAt)
	if !fi.Mode().IsRegular() || !ok {
		return fail(fmt.Errorf("%s: not a regular file", name))
	}
	size := fi.Size()
	var tail [8]byte
	if size < 12 {
		return fail(fmt.Errorf("%s: %d bytes; not a Parquet file", name, size))
	}
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return fail(err)
	}
	if string(tail[4:]) != "PAR1" {
		if string(tail[4:]) == "PARE" {
			return fail(fmt.Errorf("%s: an encrypted Parquet file; decrypt it first", name))
		}
		return fail(fmt.Errorf("%s: not a Parquet file (no PAR1 at its end)", name))
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return fail(fmt.Errorf("%s: metadata of %d bytes in a file of %d bytes; the file is damaged", name, n, size))
	}
	if n > s.maxFoot {
		return fail(fmt.Errorf("%s: metadata of %d bytes, over the limit of %d bytes (MaxFooterBytes); write the file with fewer, larger row groups (pyarrow: pq.write_table(t, path, row_group_size=1000000)) or raise the limit", name, n, s.maxFoot))
	}
	foot := make([]byte, n)
	if _, err := ra.ReadAt(foot, size-8-n); err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	groups, chunks, err := footerCounts(foot)
	if err != nil {
		return fail(fmt.Errorf("%s: not a readable Parquet file: %w", name, err))
	}
	if chunks > s.maxCC {
		return fail(fmt.Errorf("%s: %d row groups of %d column chunks in all, over the limit of %d column chunks (MaxColumnChunks), whose metadata would take about %d MB; write the file with fewer, larger row groups (pyarrow: pq.write_table(t, path, row_group_size=1000000)) or raise the limit",
			name, groups, chunks, s.maxCC, chunks*metaChunkBytes/1e6))
	}
	var f *parquet.File
	err = catch(func() error {
		var err error
		f, err = parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20))
		return err
	})
	if err != nil {
		return fail(fmt.Errorf("%s: not a readable Parquet file: %w", name, err))
	}
	if err := checkChunks(name, f.Metadata(), size-8-n); err != nil {
		return fail(err)
	}
	return &openFile{f: f, ra: ra, size: size, footer: n, close: func() { fh.Close() }}, nil
}

// catch runs f, turning a panic of the Parquet library on a malformed file
// into an error.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed file (%v)", r)
		}
	}()
	return f()
}

// checkPages reads the page headers of a column chunk and returns an error
// for a page over the size bound, or headers that do not fit the chunk.
func (s *Source) checkPages(r io.ReaderAt, name, col string, md *format.ColumnMetaData, fileSize int64) error {
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end > fileSize || end < start {
		return fmt.Errorf("%s: column %s: a column chunk at bytes [%d, %d) outside the file of %d bytes", name, escape.String(col, 0), start, end, fileSize)
	}
	var proto thrift.CompactProtocol
	buf := make([]byte, 64<<10)
	for off := start; off < end; {
		// A header is most often a few dozen bytes; a larger window is read
		// only when the small one does not hold it (statistics of long
		// strings).
		var h format.PageHeader
		var hl int64
		for _, window := range []int64{512, int64(len(buf))} {
			n := min(window, end-off)
			k, err := r.ReadAt(buf[:n], off)
			if err != nil && !(errors.Is(err, io.EOF) && int64(k) == n) {
				return fmt.Errorf("%s: column %s: %w", name, escape.String(col, 0), err)
			}
			h = format.PageHeader{}
			pr := proto.NewReaderFromBytes(buf[:n])
			err = catch(func() error { return thrift.NewDecoder(pr).Decode(&h) })
			if err != nil && n == window && window < int64(len(buf)) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: column %s: a page header at byte %d cannot be read: %v", name, escape.String(col, 0), off, err)
			}
			hl = int64(pr.BytesRead())
			break
		}
		var nv int64
		switch {
		case h.DataPageHeader.Valid:
			nv = int64(h.DataPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			nv = int64(h.DataPageHeaderV2.V.NumValues)
		case h.DictionaryPageHeader.Valid:
			nv = int64(h.DictionaryPageHeader.V.NumValues)
		}
		if int64(h.CompressedPageSize) > s.maxPage || int64(h.UncompressedPageSize) > s.maxPage || nv > s.maxPage/8 ||
			h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || nv < 0 {
			return fmt.Errorf("%s: column %s: a page of %d bytes (%d compressed, %d values) over the limit of %d bytes; rewrite the file with smaller pages (pyarrow: pq.write_table(t, path, data_page_size=1<<20, row_group_size=100000); Spark: parquet.page.size) or raise the limit",
				name, escape.String(col, 0), h.UncompressedPageSize, h.CompressedPageSize, nv, s.maxPage)
		}
		next := off + hl + int64(h.CompressedPageSize)
		if next > end {
			return fmt.Errorf("%s: column %s: a page at byte %d runs past its column chunk", name, escape.String(col, 0), off)
		}
		off = next
	}
	return nil
}

// countKept counts the rows whose label is not ignored.
func (s *Source) countKept() (int64, error) {
	var n int64
	for fi := range s.files {
		err := s.scanFile(context.Background(), fi, []string{s.o.Label}, func(rg *rowGroup, rows int, base int64) error {
			for i := 0; i < rows; i++ {
				v, err := rg.cur[0].text(base + int64(i))
				if err != nil {
					return err
				}
				if !s.ignore[v] {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Schema describes the columns (it implements dataset.Source); it is the
// zero Schema for a nil Source.
func (s *Source) Schema() dataset.Schema {
	if s == nil {
		return dataset.Schema{}
	}
	return s.schema
}

// Len returns the number of rows a pass gives (it implements
// dataset.Sizer): the files' rows, less those whose label is ignored; 0
// for a nil Source.
func (s *Source) Len() int {
	if s == nil {
		return 0
	}
	return int(s.kept)
}

// Files returns the files, in reading order.
func (s *Source) Files() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.files)
}

// errNotMade is the error of the methods of a Source not made by
// NewSource or NewSourceFS.
var errNotMade = errors.New("parquetio: Source not created by NewSource or NewSourceFS")

// rowGroup is the cursors of the columns read from one row group.
type rowGroup struct {
	cur []*cursor
}

// runRows is the number of rows of a run of scanFile, at most.
const runRows = 4096

// scanFile calls fn for each run of rows of each row group of file fi,
// with cursors on the columns cols; base is the file row of the run's first
// row. A run is at most runRows rows.
func (s *Source) scanFile(ctx context.Context, fi int, cols []string, fn func(rg *rowGroup, rows int, base int64) error) error {
	name := s.files[fi]
	of, err := s.openAt(name)
	if err != nil {
		return err
	}
	defer of.close()
	f, fh, fsize := of.f, of.ra, of.size
	sc := f.Schema()
	idx := make([]int, len(cols))
	for j, c := range cols {
		leaf, ok := sc.Lookup(c)
		if !ok {
			return fmt.Errorf("%s: no column %s", name, escape.String(c, 0))
		}
		idx[j] = leaf.ColumnIndex
	}
	md := f.Metadata()
	var base int64
	vals := make([][]parquet.Value, len(cols)) // each column's page values, reused
	for g, rg := range f.RowGroups() {
		if g >= len(md.RowGroups) {
			return fmt.Errorf("%s: damaged metadata", name)
		}
		n := rg.NumRows()
		if n < 0 {
			return fmt.Errorf("%s: row group %d has %d rows", name, g, n)
		}
		chunks := rg.ColumnChunks()
		var r rowGroup
		for j, ci := range idx {
			if ci < 0 || ci >= len(chunks) || ci >= len(md.RowGroups[g].Columns) {
				return fmt.Errorf("%s: row group %d lacks the column %s", name, g, escape.String(cols[j], 0))
			}
			if err := s.checkPages(fh, name, cols[j], &md.RowGroups[g].Columns[ci].MetaData, fsize); err != nil {
				return err
			}
			fld := field(sc, cols[j])
			kind, _ := kindOf(fld)
			r.cur = append(r.cur, &cursor{file: name, col: cols[j], kind: fld.Type().Kind(), isText: kind == textCol,
				unsigned: isUnsigned(fld), pages: chunks[ci].Pages(), rgBase: base, left: n, vals: vals[j][:0]})
		}
		err := func() error {
			defer func() {
				for j, c := range r.cur {
					c.close()
					vals[j] = c.vals
				}
			}()
			for done := int64(0); done < n; {
				if err := ctx.Err(); err != nil {
					return err
				}
				k := int(min(runRows, n-done))
				if err := fn(&r, k, base+done); err != nil {
					return err
				}
				done += int64(k)
			}
			for _, c := range r.cur {
				if err := c.finish(); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
		base += n
	}
	if base != f.NumRows() {
		return fmt.Errorf("%s: its row groups hold %d rows but its metadata says %d", name, base, f.NumRows())
	}
	return nil
}

func isUnsigned(f parquet.Field) bool {
	lt := f.Type().LogicalType()
	if lt == nil {
		return false
	}
	it, ok := lt.Value.(*format.IntType)
	return ok && !it.IsSigned
}

// cursor reads a column chunk page by page: the values of the current
// page, decoded, and the position in it.
type cursor struct {
	file, col string
	kind      parquet.Kind
	isText    bool
	unsigned  bool
	pages     parquet.Pages
	page      parquet.Page
	vals      []parquet.Value
	pos       int
	rgBase    int64 // file row of the row group's first row
	read      int64 // rows of the chunk decoded so far
	left      int64 // rows of the row group not yet decoded
	strs      map[string]string
}

func (c *cursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// next makes sure a value is available, reading the next page if needed.
func (c *cursor) next() error {
	for c.pos >= len(c.vals) {
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		var p parquet.Page
		err := catch(func() error {
			var err error
			p, err = c.pages.ReadPage()
			return err
		})
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: column %s: the column chunk ends at row %d (0-based) before its row group", c.file, escape.String(c.col, 0), c.rgBase+c.read)
		}
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", c.file, escape.String(c.col, 0), err)
		}
		c.page = p
		n := p.NumValues()
		if n < 0 || n > c.left {
			return fmt.Errorf("%s: column %s: a page of %d values where %d rows remain in the row group", c.file, escape.String(c.col, 0), n, c.left)
		}
		c.vals = slices.Grow(c.vals[:0], int(n))[:n]
		k := 0
		err = catch(func() error {
			vr := p.Values()
			for k < int(n) {
				m, err := vr.ReadValues(c.vals[k:])
				k += m
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if m == 0 {
					return errors.New("no progress decoding a page")
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: column %s: page at row %d (0-based): %w", c.file, escape.String(c.col, 0), c.rgBase+c.read, err)
		}
		if k != int(n) {
			return fmt.Errorf("%s: column %s: a page at row %d (0-based) holds %d values; its header says %d", c.file, escape.String(c.col, 0), c.rgBase+c.read, k, n)
		}
		c.vals = c.vals[:k]
		c.pos = 0
		c.left -= n
		c.read += n
	}
	return nil
}

// finish checks that the column chunk holds no more pages.
func (c *cursor) finish() error {
	if c.pos < len(c.vals) || c.left != 0 {
		return fmt.Errorf("%s: column %s: the column chunk holds more values than its row group's rows", c.file, escape.String(c.col, 0))
	}
	return nil
}

// value returns the value of file row row (the cursor's next value).
func (c *cursor) value(row int64) (parquet.Value, error) {
	if err := c.next(); err != nil {
		return parquet.Value{}, err
	}
	v := c.vals[c.pos]
	c.pos++
	if v.IsNull() {
		return v, fmt.Errorf("%s: row %d (0-based), column %s: no value (null)", c.file, row, escape.String(c.col, 0))
	}
	return v, nil
}

// number returns the next value as a float64.
func (c *cursor) number(row int64) (float64, error) {
	v, err := c.value(row)
	if err != nil {
		return 0, err
	}
	return c.float(v, row)
}

func (c *cursor) float(v parquet.Value, row int64) (float64, error) {
	var x float64
	switch c.kind {
	case parquet.Double:
		x = v.Double()
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Int32:
		if c.unsigned {
			x = float64(v.Uint32())
		} else {
			x = float64(v.Int32())
		}
	case parquet.Int64:
		if c.unsigned {
			x = float64(v.Uint64())
		} else {
			x = float64(v.Int64())
		}
	default:
		return 0, fmt.Errorf("%s: column %s is not numeric", c.file, escape.String(c.col, 0))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s: row %d (0-based), column %s: value %v is not finite", c.file, row, escape.String(c.col, 0), x)
	}
	return x, nil
}

// text returns the next value as text: strings as they are, integers in
// decimal, floats in the shortest form that reads back, booleans as True
// and False (as pandas prints them).
func (c *cursor) text(row int64) (string, error) {
	v, err := c.value(row)
	if err != nil {
		return "", err
	}
	switch c.kind {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		if s, ok := c.strs[string(b)]; ok {
			return s, nil
		}
		if c.strs == nil {
			c.strs = map[string]string{}
		}
		if len(c.strs) > 1<<16 {
			clear(c.strs)
		}
		s := string(b)
		c.strs[s] = s
		return s, nil
	case parquet.Boolean:
		if v.Boolean() {
			return "True", nil
		}
		return "False", nil
	case parquet.Int32:
		if c.unsigned {
			return strconv.FormatUint(uint64(v.Uint32()), 10), nil
		}
		return strconv.FormatInt(int64(v.Int32()), 10), nil
	case parquet.Int64:
		if c.unsigned {
			return strconv.FormatUint(v.Uint64(), 10), nil
		}
		return strconv.FormatInt(v.Int64(), 10), nil
	}
	x, err := c.float(v, row)
	if err != nil {
		return "", err
	}
	return strconv.FormatFloat(x, 'g', -1, 64), nil
}

// Open starts a pass over the rows.
func (s *Source) Open(ctx context.Context) (dataset.Reader, error) {
	if s == nil || len(s.files) == 0 {
		return nil, errNotMade
	}
	if ctx == nil {
		return nil, errors.New("parquetio: nil context")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &reader{s: s, ctx: ctx, rows: make(chan batch, 1), free: make(chan batch, 1), stop: make(chan struct{}), errc: make(chan error, 1)}
	go r.produce()
	return r, nil
}

// batch is a run of decoded rows handed from the producer to Read.
type batch struct {
	rows  int
	x     []float64 // rows x features
	dom   []int
	lab   []int
	tgt   []float64
	fi    int     // the file of the rows
	ev    []int64 // 1-based row number in the file of each row
	doms  []string
	class []string
}

// reader is one pass: a goroutine decodes the files into batches of rows;
// Read hands them out.
type reader struct {
	s    *Source
	ctx  context.Context
	rows chan batch
	free chan batch // batches handed out and read, for reuse
	stop chan struct{}
	errc chan error
	cur  batch
	pos  int
	doms []string
	cls  []string
	err  error
	done bool
}

// produce decodes the files of the pass, in order, into batches that it
// sends to Read; it ends at the end of the files, on an error (sent on
// errc) or when the pass is closed or its context done.
func (r *reader) produce() {
	defer close(r.rows)
	s := r.s
	p := &producer{r: r, nf: len(s.schema.Features), nt: len(s.schema.Targets), clsID: map[string]int{}}
	for fi := range s.files {
		p.fi, p.fileDom = fi, -1
		if s.fileDom != nil {
			p.fileDom = p.doms.ID(s.fileDom[fi])
		}
		if err := s.scanFile(r.ctx, fi, s.cols, p.run); err != nil {
			if !errors.Is(err, errStopped) {
				r.errc <- err
			}
			return
		}
	}
}

// producer is the state of produce: the numbering of the domains and
// classes met so far, and the file being read.
type producer struct {
	r         *reader
	nf, nt    int // features and targets
	doms, cls dataset.Index
	clsID     map[string]int
	fi        int       // the file
	fileDom   int       // the file's domain when there is one per file, else -1
	x         []float64 // room for a row's features
	domNames  []string  // copies of the names, handed to Read
	clsNames  []string
}

// run decodes a run of rows of a row group (rows from the file row base)
// into a batch and hands it to Read.
func (p *producer) run(rg *rowGroup, rows int, base int64) error {
	r := p.r
	var b batch
	select {
	case b = <-r.free: // a batch Read is done with
		b.rows, b.x, b.dom, b.lab, b.tgt, b.ev = 0, b.x[:0], b.dom[:0], b.lab[:0], b.tgt[:0], b.ev[:0]
	default:
		b = batch{x: make([]float64, 0, runRows*p.nf), dom: make([]int, 0, runRows), ev: make([]int64, 0, runRows)}
		if p.nt > 0 {
			b.tgt = make([]float64, 0, runRows*p.nt)
		}
		if r.s.o.Label != "" {
			b.lab = make([]int, 0, runRows)
		}
	}
	b.fi = p.fi
	if cap(p.x) < p.nf {
		p.x = make([]float64, 0, p.nf)
	}
	for i := 0; i < rows; i++ {
		if err := p.row(rg, base+int64(i), p.x[:0], &b); err != nil {
			return err
		}
	}
	if b.rows == 0 {
		return nil
	}
	// The names only grow: a copy is made when there are new ones.
	if p.doms.Len() != len(p.domNames) {
		p.domNames = p.doms.Names()
	}
	if p.cls.Len() != len(p.clsNames) {
		p.clsNames = p.cls.Names()
	}
	b.doms, b.class = p.domNames, p.clsNames
	select {
	case r.rows <- b:
		return nil
	case <-r.stop:
		return errStopped
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// row decodes the file row row from the cursors of rg and appends it to b,
// unless its label is ignored; x is room for its features.
func (p *producer) row(rg *rowGroup, row int64, x []float64, b *batch) error {
	s := p.r.s
	nf, nt := p.nf, p.nt
	for f := 0; f < nf; f++ {
		v, err := rg.cur[f].number(row)
		if err != nil {
			return err
		}
		x = append(x, v)
	}
	c := nf
	g := p.fileDom
	if p.fileDom < 0 {
		d, err := rg.cur[c].text(row)
		if err != nil {
			return err
		}
		g = p.doms.ID(d)
		c++
	}
	lab := -1
	if s.o.Label != "" {
		l, err := rg.cur[c].text(row)
		if err != nil {
			return err
		}
		c++
		if s.ignore[l] {
			for t := 0; t < nt; t++ { // keep the cursors aligned
				if _, err := rg.cur[c+t].number(row); err != nil {
					return err
				}
			}
			return nil
		}
		id, ok := p.clsID[l]
		if !ok {
			id = p.cls.ID(l)
			p.clsID[l] = id
		}
		lab = id
	}
	for t := 0; t < nt; t++ {
		v, err := rg.cur[c+t].number(row)
		if err != nil {
			return err
		}
		b.tgt = append(b.tgt, v)
	}
	if s.o.Transform != nil {
		s.o.Transform(x)
		for f, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: row %d (0-based), column %s: value %v after the transform is not finite", s.files[p.fi], row, escape.String(s.schema.Features[f], 0), v)
			}
		}
	}
	b.x = append(b.x, x...)
	b.dom = append(b.dom, g)
	b.ev = append(b.ev, row+1)
	if lab >= 0 {
		b.lab = append(b.lab, lab)
	}
	b.rows++
	return nil
}

var errStopped = errors.New("parquetio: pass closed")

func (r *reader) Domains() []string {
	if r.doms == nil && r.s.fileDom != nil {
		return r.s.fileDom[:0:0]
	}
	return r.doms
}

func (r *reader) Classes() []string {
	if r.s.o.Label == "" {
		return nil
	}
	return r.cls
}

func (r *reader) Close() error {
	if !r.done {
		r.done = true
		close(r.stop)
		for range r.rows { // let the producer end
		}
	}
	return nil
}

// Read fills b with the next rows, at most max.
func (r *reader) Read(b *dataset.Block, max int) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.done {
		return 0, errors.New("parquetio: Read after Close")
	}
	if b == nil {
		return 0, errors.New("parquetio: Read into a nil Block")
	}
	if max <= 0 {
		return 0, fmt.Errorf("parquetio: Read of %d rows", max)
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, err
	}
	s := r.s
	nf, nt := len(s.schema.Features), len(s.schema.Targets)
	b.Reset(max, nf, s.o.Label != "", nt)
	b.ResetOrigins(max)
	k := 0
	for k < max {
		if r.pos == r.cur.rows {
			if k > 0 {
				break // hand out what is there rather than wait
			}
			nb, ok := <-r.rows
			if !ok {
				select {
				case err := <-r.errc:
					r.err = err
					return 0, err
				default:
				}
				if err := r.ctx.Err(); err != nil {
					r.err = err
					return 0, err
				}
				r.err = io.EOF
				return 0, io.EOF
			}
			if r.cur.x != nil {
				select {
				case r.free <- r.cur: // for the producer to reuse
				default:
				}
			}
			r.cur, r.pos = nb, 0
			r.doms, r.cls = nb.doms, nb.class
			continue
		}
		m := min(max-k, r.cur.rows-r.pos)
		copy(b.X[k*nf:(k+m)*nf], r.cur.x[r.pos*nf:(r.pos+m)*nf])
		copy(b.Domain[k:k+m], r.cur.dom[r.pos:r.pos+m])
		copy(b.Event[k:k+m], r.cur.ev[r.pos:r.pos+m])
		for i := range m {
			b.File[k+i] = r.cur.fi
		}
		if b.Label != nil {
			copy(b.Label[k:k+m], r.cur.lab[r.pos:r.pos+m])
		}
		if nt > 0 {
			copy(b.Target[k*nt:(k+m)*nt], r.cur.tgt[r.pos*nt:(r.pos+m)*nt])
		}
		k += m
		r.pos += m
	}
	b.Rows = k
	return k, nil
}

var (
	_ dataset.Source = (*Source)(nil)
	_ dataset.Sizer  = (*Source)(nil)
)
