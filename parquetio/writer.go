package parquetio

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

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

// WriterOptions say what a Writer writes.
type WriterOptions struct {
	// Vars names the input channels (required).
	Vars []string
	// Components names the component columns (such as DICA1, DICA2, ...);
	// the z given to WriteBlock has one column per name.
	Components []string
	// Compression is "snappy" (the default), "zstd", "gzip" or "none".
	Compression string
	// RowGroupRows is the number of rows after which a row group is
	// written (default DefaultRowGroupRows); a row group is held in memory
	// until then (about 8 bytes a value, less compression).
	RowGroupRows int
	// Metadata is written as key-value metadata in the file's footer (for
	// example the model's method, sigma and digest).
	Metadata map[string]string
}

// Writer writes cells to a Parquet file as they stream, with the columns
// of dica's CSV output: domain (string), label (string, when the blocks
// have labels), the input channels, then the components (float64, all
// required). A row group is written every RowGroupRows rows. The file is
// written to a temporary file beside the destination, renamed over it only
// by Commit (package internal/atomicfile).
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
	domBytes [][]byte
	clsBytes [][]byte
	vals     []parquet.Value
	done     bool
	err      error
}

// Create starts a Parquet file at path.
func Create(path string, o WriterOptions) (*Writer, error) {
	if len(o.Vars) == 0 {
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
	seen := map[string]bool{"domain": true, "label": true}
	for _, c := range slices.Concat(o.Vars, o.Components) {
		if seen[c] {
			return nil, fmt.Errorf("parquetio: the column name %q appears twice (domain and label are taken)", c)
		}
		seen[c] = true
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

func (w *Writer) start(labelled bool) {
	w.started, w.labelled = true, labelled
	g := orderedGroup{Group: parquet.Group{}}
	add := func(name string, n parquet.Node) {
		g.Group[name] = n
		g.fields = append(g.fields, namedField{n, name})
	}
	str := parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	add("domain", str)
	if labelled {
		add("label", str)
	}
	for _, c := range slices.Concat(w.o.Vars, w.o.Components) {
		add(c, parquet.Leaf(parquet.DoubleType))
	}
	opts := []parquet.WriterOption{parquet.NewSchema("dica", g), parquet.Compression(w.codec),
		parquet.CreatedBy("dica", "", ""), parquet.MaxRowsPerRowGroup(int64(w.o.RowGroupRows) + 4096)}
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
// lists may grow from block to block). Values must be finite.
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
	if b == nil {
		return errors.New("parquetio: nil block")
	}
	if b.Rows == 0 {
		return nil
	}
	d, k := len(w.o.Vars), len(w.o.Components)
	if b.D != d || len(b.X) < b.Rows*d || len(b.Domain) < b.Rows {
		return fmt.Errorf("parquetio: block of %d rows of %d inputs (%d values, %d domains); the file has %d channels", b.Rows, b.D, len(b.X), len(b.Domain), d)
	}
	if k > 0 {
		if z == nil {
			return fmt.Errorf("parquetio: no components for a block of %d rows", b.Rows)
		}
		if r, c := z.Dims(); r != b.Rows || c != k {
			return fmt.Errorf("parquetio: components %d x %d for a block of %d rows; want %d columns", r, c, b.Rows, k)
		}
	}
	if !w.started {
		w.start(b.Label != nil)
	}
	if (b.Label != nil) != w.labelled {
		return errors.New("parquetio: blocks with and without labels")
	}
	if w.labelled && len(b.Label) < b.Rows {
		return fmt.Errorf("parquetio: block of %d rows with %d labels", b.Rows, len(b.Label))
	}
	for i := 0; i < b.Rows; i++ {
		row := w.rows + int64(i)
		for j, v := range b.X[i*d : (i+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("parquetio: row %d (0-based), column %q: value %v is not finite", row, w.o.Vars[j], v)
			}
		}
		if k > 0 {
			for j, v := range z.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("parquetio: row %d (0-based), column %q: value %v is not finite", row, w.o.Components[j], v)
				}
			}
		}
		if g := b.Domain[i]; g < 0 || g >= len(domains) {
			return fmt.Errorf("parquetio: row %d (0-based): domain index %d out of range of %d domain names", row, g, len(domains))
		}
		if w.labelled {
			if c := b.Label[i]; c < 0 || c >= len(classes) {
				return fmt.Errorf("parquetio: row %d (0-based): class index %d out of range of %d class names", row, c, len(classes))
			}
		}
	}
	w.domBytes = names(w.domBytes, domains)
	if w.labelled {
		w.clsBytes = names(w.clsBytes, classes)
	}
	cols := w.pw.ColumnWriters()
	c := 0
	put := func(v func(i int) parquet.Value) error {
		w.vals = w.vals[:0]
		for i := 0; i < b.Rows; i++ {
			w.vals = append(w.vals, v(i).Level(0, 0, c))
		}
		_, err := cols[c].WriteRowValues(w.vals)
		c++
		return err
	}
	if err := put(func(i int) parquet.Value { return parquet.ByteArrayValue(w.domBytes[b.Domain[i]]) }); err != nil {
		return err
	}
	if w.labelled {
		if err := put(func(i int) parquet.Value { return parquet.ByteArrayValue(w.clsBytes[b.Label[i]]) }); err != nil {
			return err
		}
	}
	for j := 0; j < d; j++ {
		if err := put(func(i int) parquet.Value { return parquet.DoubleValue(b.X[i*d+j]) }); err != nil {
			return err
		}
	}
	for j := 0; j < k; j++ {
		if err := put(func(i int) parquet.Value { return parquet.DoubleValue(z.At(i, j)) }); err != nil {
			return err
		}
	}
	w.rows += int64(b.Rows)
	w.inGroup += b.Rows
	if w.inGroup >= w.o.RowGroupRows {
		w.inGroup = 0
		return w.pw.Flush()
	}
	return nil
}

// names extends the cached byte slices of the names.
func names(cache [][]byte, v []string) [][]byte {
	for i := len(cache); i < len(v); i++ {
		cache = append(cache, []byte(v[i]))
	}
	return cache[:len(v)]
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
