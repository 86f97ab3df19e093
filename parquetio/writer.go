package parquetio

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/atomicfile"
)

// DefaultRowGroupRows is the number of rows of a row group the writer
// uses by default.
const DefaultRowGroupRows = 131072

// ColumnKind is the type of a column of a file laid out by
// WriterOptions.Columns.
type ColumnKind int

const (
	// Text is a column of strings (BYTE_ARRAY of logical type STRING,
	// dictionary-encoded), given as codes into a list of names.
	Text ColumnKind = iota + 1
	// Int64 is a column of signed 64-bit integers (INT64 of logical type
	// INTEGER(64, signed)).
	Int64
	// Float64 is a column of finite doubles (DOUBLE).
	Float64
)

// String returns the name of the kind: "text", "int64" or "float64".
func (k ColumnKind) String() string {
	switch k {
	case Text:
		return "text"
	case Int64:
		return "int64"
	case Float64:
		return "float64"
	}
	return "ColumnKind(" + strconv.Itoa(int(k)) + ")"
}

// Column is a column of a file laid out by WriterOptions.Columns.
type Column struct {
	Name string
	Kind ColumnKind
}

// WriterOptions say what a Writer writes.
type WriterOptions struct {
	// Columns, if not nil, lays out the file: exactly these columns, in
	// this order, all required (no nulls), written with Write. Vars and
	// Components must then be empty. When Columns is nil the file has the
	// layout of Vars and Components, written with WriteBlock.
	Columns []Column
	// Vars names the input channels (required without Columns).
	Vars []string
	// Components names the component columns (such as DICA1, DICA2, ...);
	// the z given to WriteBlock has one column per name.
	Components []string
	// Compression is "snappy" (the default), "zstd", "gzip" or "none".
	Compression string
	// RowGroupRows is the number of rows of a row group (default
	// DefaultRowGroupRows; the last one may be shorter); a row group is
	// held in memory until then (about 8 bytes a value, less compression).
	RowGroupRows int
	// Metadata is written as key-value metadata in the file's footer (for
	// example the model's method, sigma and digest); KeyValues reads it.
	Metadata map[string]string
}

// Rows is a batch of rows for Write, column by column in the order of
// WriterOptions.Columns, by kind:
//
//   - Codes and Names hold the Text columns: for the t-th Text column,
//     row i holds Names[t][Codes[t][i]]. A column's names may grow from
//     one batch to the next (as a dataset.Reader's domains do); the names
//     given before must stay as they were.
//   - Ints holds the Int64 columns: Ints[t][i] is row i of the t-th.
//   - Floats holds the Float64 columns, row-major: N x (number of Float64
//     columns), Floats[i*f+j] is row i of the j-th of the f columns.
//
// Every slice holds exactly N values (Floats N*f).
type Rows struct {
	N      int
	Codes  [][]int
	Names  [][]string
	Ints   [][]int64
	Floats []float64
}

// Writer writes rows to a Parquet file as they stream. With
// WriterOptions.Columns, the file has those columns, written with Write.
// Without, it has the columns of dica's CSV output, written with
// WriteBlock: domain (string), label (string, when the blocks have labels),
// the input channels, then the components (float64, all required).
//
// Row groups hold RowGroupRows rows (the last one may hold fewer), however
// the rows are batched. The footer records the writer ("dica" and the
// module version) and WriterOptions.Metadata. The file is written to a
// temporary file beside the destination, renamed over it only by Commit
// (package internal/atomicfile).
type Writer struct {
	path     string
	o        WriterOptions
	codec    compress.Codec
	f        *atomicfile.File
	pw       *parquet.GenericWriter[any]
	labelled bool
	started  bool
	inGroup  int
	rows     int64
	done     bool
	err      error

	cols            []Column   // the layout, fixed by start
	nText, nInt, nF int        // the number of columns of each kind
	text            [][][]byte // the names of each Text column, encoded
	textNames       [][]string // and as given
	vals            []parquet.Value
	src             []floatSource // the Float64 columns of a batch
	codes           [][]int       // WriteBlock's Text columns
	names           [][]string
}

// floatSource is a Float64 column of a batch: row i is data[i*stride+off].
type floatSource struct {
	data        []float64
	stride, off int
}

// Create starts a Parquet file at path.
func Create(path string, o WriterOptions) (*Writer, error) {
	if o.Columns != nil {
		if len(o.Vars) != 0 || len(o.Components) != 0 {
			return nil, errors.New("parquetio: WriterOptions.Columns with Vars or Components; name every column in Columns")
		}
		if len(o.Columns) == 0 {
			return nil, errors.New("parquetio: WriterOptions.Columns is empty; name the columns")
		}
	} else if len(o.Vars) == 0 {
		return nil, errors.New("parquetio: WriterOptions.Vars is empty; name the input channels")
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupRows < 1 || o.RowGroupRows > 1<<24 {
		return nil, fmt.Errorf("parquetio: row group rows %d out of range [1, %d]", o.RowGroupRows, 1<<24)
	}
	w := &Writer{path: path, o: o}
	switch o.Compression {
	case "", "snappy":
		w.codec = &snappy.Codec{}
	case "zstd":
		w.codec = &zstd.Codec{Level: zstd.SpeedDefault}
	case "gzip":
		w.codec = &gzip.Codec{Level: gzip.DefaultCompression}
	case "none":
		w.codec = &parquet.Uncompressed
	default:
		return nil, fmt.Errorf("parquetio: compression %q: want snappy, zstd, gzip or none", o.Compression)
	}
	if o.Columns != nil {
		seen := map[string]bool{}
		for j, c := range o.Columns {
			if c.Name == "" {
				return nil, fmt.Errorf("parquetio: column %d of WriterOptions.Columns has no name", j+1)
			}
			if c.Kind != Text && c.Kind != Int64 && c.Kind != Float64 {
				return nil, fmt.Errorf("parquetio: column %q: kind %v; want Text, Int64 or Float64", c.Name, c.Kind)
			}
			if seen[c.Name] {
				return nil, fmt.Errorf("parquetio: the column name %q appears twice", c.Name)
			}
			seen[c.Name] = true
		}
		o.Columns = slices.Clone(o.Columns)
		w.o.Columns = o.Columns
	} else {
		seen := map[string]bool{"domain": true, "label": true}
		for _, c := range slices.Concat(o.Vars, o.Components) {
			if seen[c] {
				return nil, fmt.Errorf("parquetio: the column name %q appears twice (domain and label are taken)", c)
			}
			seen[c] = true
		}
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w.f = f
	return w, nil
}

// orderedGroup is a parquet group whose fields keep the order given
// (parquet.Group sorts them by name).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g orderedGroup) Fields() []parquet.Field { return g.fields }

type namedField struct {
	parquet.Node
	name string
}

func (f namedField) Name() string { return f.name }

func (f namedField) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Map {
		return base.MapIndex(reflect.ValueOf(f.name))
	}
	return reflect.Value{}
}

// start fixes the layout: Columns, or for WriteBlock the domain, the label
// when the blocks are labelled, the channels and the components.
func (w *Writer) start(labelled bool) {
	w.started, w.labelled = true, labelled
	w.cols = w.o.Columns
	if w.cols == nil {
		w.cols = append(w.cols, Column{"domain", Text})
		if labelled {
			w.cols = append(w.cols, Column{"label", Text})
		}
		for _, c := range slices.Concat(w.o.Vars, w.o.Components) {
			w.cols = append(w.cols, Column{c, Float64})
		}
	}
	g := orderedGroup{Group: parquet.Group{}}
	for _, c := range w.cols {
		var n parquet.Node
		switch c.Kind {
		case Text:
			n = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
			w.nText++
		case Int64:
			n = parquet.Int(64)
			w.nInt++
		default:
			n = parquet.Leaf(parquet.DoubleType)
			w.nF++
		}
		g.Group[c.Name] = n
		g.fields = append(g.fields, namedField{n, c.Name})
	}
	w.text = make([][][]byte, w.nText)
	w.textNames = make([][]string, w.nText)
	opts := []parquet.WriterOption{parquet.NewSchema("dica", g), parquet.Compression(w.codec),
		createdBy("dica " + moduleVersion()), parquet.MaxRowsPerRowGroup(int64(w.o.RowGroupRows) + 4096)}
	keys := make([]string, 0, len(w.o.Metadata))
	for k := range w.o.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		opts = append(opts, parquet.KeyValueMetadata(k, w.o.Metadata[k]))
	}
	w.pw = parquet.NewGenericWriter[any](w.f, opts...)
}

// createdBy sets the created_by field of a file's footer.
type createdBy string

func (c createdBy) ConfigureWriter(cfg *parquet.WriterConfig) { cfg.CreatedBy = string(c) }

// modulePath is the path of the module this package belongs to.
const modulePath = "github.com/dicalab/dica"

// moduleVersion is the version of this module in the running program's
// build information (such as "v0.3.0", or a pseudo-version), or "devel"
// when it is not known (a build from a work tree without version control
// information).
var moduleVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
})

func versionOf(bi *debug.BuildInfo) string {
	v := ""
	if bi.Main.Path == modulePath {
		v = bi.Main.Version
	} else {
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				v = d.Version
				if d.Replace != nil {
					v = d.Replace.Version
				}
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

// errNoWriter is the error of the methods of a Writer not made by Create.
var errNoWriter = errors.New("parquetio: Writer not created by Create")

// Path returns the destination ("" for a nil Writer).
func (w *Writer) Path() string {
	if w == nil {
		return ""
	}
	return w.path
}

// Rows returns the number of rows written (0 for a nil Writer).
func (w *Writer) Rows() int64 {
	if w == nil {
		return 0
	}
	return w.rows
}

// WriteBlock appends the rows of b with their components z (b.Rows x
// len(Components)); domains and classes name b.Domain and b.Label (the
// lists may grow from block to block; the names given before must stay as
// they were). Values must be finite. It writes files laid out by Vars and
// Components; with WriterOptions.Columns, use Write.
func (w *Writer) WriteBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	if w == nil || w.f == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("parquetio: %s: write after Commit or Abort", w.path)
	}
	w.err = w.writeBlock(b, z, domains, classes)
	return w.err
}

func (w *Writer) writeBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	if w.o.Columns != nil {
		return errors.New("parquetio: WriteBlock on a file laid out by WriterOptions.Columns; use Write")
	}
	if b == nil {
		return errors.New("parquetio: nil block")
	}
	if b.Rows == 0 {
		return nil
	}
	n, d, k := b.Rows, len(w.o.Vars), len(w.o.Components)
	if b.Rows < 0 || b.D != d || len(b.X) < n*d || len(b.Domain) < n {
		return fmt.Errorf("parquetio: block of %d rows of %d inputs (%d values, %d domains); the file has %d channels", b.Rows, b.D, len(b.X), len(b.Domain), d)
	}
	var zd []float64
	zs := 0
	if k > 0 {
		if z == nil {
			return fmt.Errorf("parquetio: no components for a block of %d rows", n)
		}
		if r, c := z.Dims(); r != n || c != k {
			return fmt.Errorf("parquetio: components %d x %d for a block of %d rows; want %d columns", r, c, n, k)
		}
		raw := z.RawMatrix()
		zd, zs = raw.Data, raw.Stride
	}
	if !w.started {
		w.start(b.Label != nil)
	}
	if (b.Label != nil) != w.labelled {
		return errors.New("parquetio: blocks with and without labels")
	}
	if w.labelled && len(b.Label) < n {
		return fmt.Errorf("parquetio: block of %d rows with %d labels", n, len(b.Label))
	}
	w.codes = append(w.codes[:0], b.Domain[:n])
	w.names = append(w.names[:0], domains)
	if w.labelled {
		w.codes = append(w.codes, b.Label[:n])
		w.names = append(w.names, classes)
	}
	w.src = w.src[:0]
	for j := 0; j < d; j++ {
		w.src = append(w.src, floatSource{b.X, d, j})
	}
	for j := 0; j < k; j++ {
		w.src = append(w.src, floatSource{zd, zs, j})
	}
	return w.write(n, w.codes, w.names, nil)
}

// Write appends a batch of rows to a file laid out by WriterOptions.Columns
// (see Rows). It checks the whole batch before writing any of it: the
// shape of each column, codes within their names, finite floats. After an
// error the writer writes nothing more, and Commit returns the error.
func (w *Writer) Write(r *Rows) error {
	if w == nil || w.f == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("parquetio: %s: write after Commit or Abort", w.path)
	}
	w.err = w.writeRows(r)
	return w.err
}

func (w *Writer) writeRows(r *Rows) error {
	if w.o.Columns == nil {
		return errors.New("parquetio: Write on a file laid out by Vars and Components; use WriteBlock, or lay the file out with WriterOptions.Columns")
	}
	if r == nil {
		return errors.New("parquetio: nil rows")
	}
	if !w.started {
		w.start(false)
	}
	n := r.N
	if n < 0 {
		return fmt.Errorf("parquetio: Rows.N is %d", n)
	}
	if len(r.Codes) != w.nText || len(r.Names) != w.nText || len(r.Ints) != w.nInt {
		return fmt.Errorf("parquetio: rows with %d code and %d name lists and %d integer columns; the file has %d text and %d int64 columns", len(r.Codes), len(r.Names), len(r.Ints), w.nText, w.nInt)
	}
	if len(r.Floats) != n*w.nF {
		return fmt.Errorf("parquetio: %d float values for %d rows; the file has %d float64 columns, want %d values", len(r.Floats), n, w.nF, n*w.nF)
	}
	t, u := 0, 0
	for _, c := range w.cols {
		switch c.Kind {
		case Text:
			if len(r.Codes[t]) != n {
				return fmt.Errorf("parquetio: column %q: %d codes for %d rows", c.Name, len(r.Codes[t]), n)
			}
			t++
		case Int64:
			if len(r.Ints[u]) != n {
				return fmt.Errorf("parquetio: column %q: %d values for %d rows", c.Name, len(r.Ints[u]), n)
			}
			u++
		}
	}
	if n == 0 {
		return nil
	}
	w.src = w.src[:0]
	for j := 0; j < w.nF; j++ {
		w.src = append(w.src, floatSource{r.Floats, w.nF, j})
	}
	return w.write(n, r.Codes, r.Names, r.Ints)
}

// write checks n rows of the columns of the layout and appends them, in
// row groups of RowGroupRows rows. The shapes are checked by the caller.
func (w *Writer) write(n int, codes [][]int, names [][]string, ints [][]int64) error {
	if err := w.check(n, codes, names); err != nil {
		return err
	}
	for t, v := range names {
		w.takeNames(t, v)
	}
	cols := w.pw.ColumnWriters()
	for lo := 0; lo < n; {
		hi := min(n, lo+w.o.RowGroupRows-w.inGroup)
		m := hi - lo
		if cap(w.vals) < m {
			w.vals = make([]parquet.Value, m)
		}
		// The values are given without levels (Value.Level): the columns
		// are required leaves, whose levels are 0, and each column
		// writer takes its own values.
		vals := w.vals[:m]
		t, u, f := 0, 0, 0
		for c, col := range w.cols {
			switch col.Kind {
			case Text:
				enc := w.text[t]
				for i, g := range codes[t][lo:hi] {
					vals[i] = parquet.ByteArrayValue(enc[g])
				}
				t++
			case Int64:
				for i, v := range ints[u][lo:hi] {
					vals[i] = parquet.Int64Value(v)
				}
				u++
			default:
				s := w.src[f]
				p := lo*s.stride + s.off
				for i := range vals {
					vals[i] = parquet.DoubleValue(s.data[p])
					p += s.stride
				}
				f++
			}
			if _, err := cols[c].WriteRowValues(vals); err != nil {
				return fmt.Errorf("parquetio: %s: column %q: %w", w.path, col.Name, err)
			}
		}
		w.rows += int64(m)
		w.inGroup += m
		lo = hi
		if w.inGroup == w.o.RowGroupRows {
			w.inGroup = 0
			if err := w.pw.Flush(); err != nil {
				return fmt.Errorf("parquetio: %s: %w", w.path, err)
			}
		}
	}
	return nil
}

// check checks n rows: codes within their names, finite floats; and that
// the names extend those given before. Of several bad values it reports the
// first in row-major order: each column is scanned up to the first bad row
// found so far.
func (w *Writer) check(n int, codes [][]int, names [][]string) error {
	for t, v := range names {
		old := w.textNames[t]
		if len(v) < len(old) || !slices.Equal(v[:len(old)], old) {
			return fmt.Errorf("parquetio: column %q: the names changed between batches (they may only grow)", w.textColumn(t))
		}
	}
	bad, badCol, badText, badF := n, -1, 0, 0
	t, f := 0, 0
	for c, col := range w.cols {
		switch col.Kind {
		case Text:
			m := len(names[t])
			for i, g := range codes[t][:bad] {
				if g < 0 || g >= m {
					bad, badCol, badText = i, c, t
					break
				}
			}
			t++
		case Float64:
			s := w.src[f]
			for i, p := 0, s.off; i < bad; i, p = i+1, p+s.stride {
				// Finite exactly when |v| <= MaxFloat64 (false for NaN).
				if !(math.Abs(s.data[p]) <= math.MaxFloat64) {
					bad, badCol, badF = i, c, f
					break
				}
			}
			f++
		}
	}
	if badCol < 0 {
		return nil
	}
	row, name := w.rows+int64(bad), w.cols[badCol].Name
	if w.cols[badCol].Kind == Text {
		return fmt.Errorf("parquetio: row %d (0-based), column %q: code %d out of range of %d names", row, name, codes[badText][bad], len(names[badText]))
	}
	s := w.src[badF]
	return fmt.Errorf("parquetio: row %d (0-based), column %q: value %v is not finite", row, name, s.data[bad*s.stride+s.off])
}

// textColumn returns the name of the t-th Text column.
func (w *Writer) textColumn(t int) string {
	for _, c := range w.cols {
		if c.Kind == Text {
			if t == 0 {
				return c.Name
			}
			t--
		}
	}
	return ""
}

// takeNames extends the names of the t-th Text column, checked by check.
func (w *Writer) takeNames(t int, v []string) {
	for _, s := range v[len(w.textNames[t]):] {
		w.text[t] = append(w.text[t], []byte(s))
		w.textNames[t] = append(w.textNames[t], s)
	}
}

// Commit writes the last row group and the footer, and renames the file
// over the destination. After an error the destination is unchanged.
func (w *Writer) Commit() error {
	if w == nil || w.f == nil {
		return errNoWriter
	}
	if w.done {
		return fmt.Errorf("parquetio: %s: already committed or aborted", w.path)
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	if !w.started {
		w.start(false)
	}
	if err := w.pw.Close(); err != nil {
		w.Abort()
		return fmt.Errorf("parquetio: %s: %w", w.path, err)
	}
	w.done = true
	return w.f.Commit()
}

// Abort discards the file being written; the destination is unchanged. It
// does nothing after Commit or a previous Abort, so it can be deferred.
func (w *Writer) Abort() {
	if w == nil || w.f == nil || w.done {
		return
	}
	w.done = true
	w.f.Abort()
}
