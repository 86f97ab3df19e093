package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Store writes a Zarr v2 directory store. Chunks are compressed and written
// by a few goroutines while the caller fills the next ones; Close waits for
// them and returns the first error.
type Store struct {
	Root string
	Comp *Codec // compressor of the arrays written (nil: none)

	jobs chan func() error
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

// NewStore starts writing a store into the existing directory root.
func NewStore(root string, comp *Codec) *Store {
	s := &Store{Root: root, Comp: comp}
	workers := max(1, runtime.GOMAXPROCS(0))
	s.jobs = make(chan func() error, workers)
	for range workers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for job := range s.jobs {
				if err := job(); err != nil {
					s.fail(err)
				}
			}
		}()
	}
	return s
}

func (s *Store) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// Err returns the first error of a background write.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close waits for the chunks being written and returns the first error.
// It may be called more than once.
func (s *Store) Close() error {
	if s.jobs != nil {
		close(s.jobs)
		s.wg.Wait()
		s.jobs = nil
	}
	return s.Err()
}

func (s *Store) path(name string) string { return filepath.Join(s.Root, filepath.FromSlash(name)) }

// writeJSON writes v as indented JSON (keys sorted, as zarr-python does).
func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeFile(path, buf.Bytes())
}

// writeFile writes a file of the store and syncs it to disk, so that a
// store is durable once its folders are synced too.
func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Group creates the group name ("" for the root) with the given attributes.
func (s *Store) Group(name string, attrs map[string]any) error {
	dir := s.path(name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, ".zgroup"), map[string]any{"zarr_format": 2}); err != nil {
		return err
	}
	if attrs != nil {
		return writeJSON(filepath.Join(dir, ".zattrs"), attrs)
	}
	return nil
}

// EncodingAttrs returns AnnData's element attributes.
func EncodingAttrs(typ, version string) map[string]any {
	return map[string]any{"encoding-type": typ, "encoding-version": version}
}

func (s *Store) writeMeta(name string, dt DType, shape, chunks []int64, comp *Codec, attrs map[string]any) error {
	dir := s.path(name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	var fill any = 0
	var filters any
	switch dt.Kind {
	case Object:
		fill = nil
		filters = []map[string]string{{"id": "vlen-utf8"}}
	case UTF32:
		fill = ""
	}
	if len(chunks) == 0 {
		chunks = []int64{}
		shape = []int64{}
	}
	var c any
	if comp != nil {
		c = comp
	}
	meta := map[string]any{
		"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dt.String(),
		"compressor": c, "fill_value": fill, "order": "C", "filters": filters,
	}
	if err := writeJSON(filepath.Join(dir, ".zarray"), meta); err != nil {
		return err
	}
	if attrs != nil {
		return writeJSON(filepath.Join(dir, ".zattrs"), attrs)
	}
	return nil
}

// Float64s writes a small 1-d float64 array in one chunk.
func (s *Store) Float64s(name string, v []float64, attrs map[string]any) error {
	w := s.NewRowWriter(name, DType{Kind: Float, Size: 8}, 0, max(1, len(v)), attrs)
	w.Floats(v)
	return w.Close()
}

// Strings writes a small 1-d string array (vlen-utf8) in one chunk.
func (s *Store) Strings(name string, v []string, attrs map[string]any) error {
	w := s.NewRowWriter(name, DType{Kind: Object}, 0, max(1, len(v)), attrs)
	for _, x := range v {
		w.String(x)
	}
	return w.Close()
}

// Scalar writes a 0-d array holding a number (float64 or int64) or a
// string (numpy <U, as anndata writes strings in uns), uncompressed.
func (s *Store) Scalar(name string, v any, attrs map[string]any) error {
	var dt DType
	var b []byte
	switch x := v.(type) {
	case float64:
		dt = DType{Kind: Float, Size: 8}
		b = binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
	case int64:
		dt = DType{Kind: Int, Size: 8}
		b = binary.LittleEndian.AppendUint64(nil, uint64(x))
	case string:
		n := max(1, utf8.RuneCountInString(x))
		dt = DType{Kind: UTF32, Size: 4 * n}
		for _, r := range x {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
		}
		for len(b) < dt.Size {
			b = append(b, 0, 0, 0, 0)
		}
	default:
		return fmt.Errorf("zarr: scalar of type %T", v)
	}
	if err := s.writeMeta(name, dt, nil, nil, nil, attrs); err != nil {
		return err
	}
	return writeFile(filepath.Join(s.path(name), "0"), b)
}

// RowWriter writes an array of one or two dimensions as a stream of rows
// along the first: each chunk of ChunkRows rows is compressed and written
// as soon as it is full; Close pads the last one and writes the metadata.
type RowWriter struct {
	s         *Store
	name      string
	dt        DType
	cols      int64 // 0: one-dimensional
	chunkRows int64
	attrs     map[string]any

	buf   []byte // current chunk
	rows  int64  // rows in the current chunk
	total int64  // rows written
	chunk int64  // index of the current chunk
	free  chan []byte
	nbuf  int
	err   error
}

// NewRowWriter starts the array name of data type dt with cols columns
// (0 for a one-dimensional array) in chunks of chunkRows rows.
func (s *Store) NewRowWriter(name string, dt DType, cols, chunkRows int, attrs map[string]any) *RowWriter {
	w := &RowWriter{s: s, name: name, dt: dt, cols: int64(cols), chunkRows: int64(chunkRows), attrs: attrs,
		free: make(chan []byte, 3)}
	if err := os.MkdirAll(s.path(name), 0o777); err != nil {
		w.err = err
	}
	w.buf = w.newBuf()
	return w
}

func (w *RowWriter) width() int64 { return max(w.cols, 1) }

func (w *RowWriter) newBuf() []byte {
	select {
	case b := <-w.free:
		return b[:0]
	default:
	}
	if w.nbuf < cap(w.free) {
		w.nbuf++
		n := w.chunkRows * w.width() * int64(w.dt.Size)
		if w.dt.Kind == Object {
			n = 4 + w.chunkRows*16
		}
		return make([]byte, 0, n)
	}
	return (<-w.free)[:0]
}

// Rows returns the number of rows written.
func (w *RowWriter) Rows() int64 { return w.total }

func (w *RowWriter) startRow() {
	if w.rows == 0 && w.dt.Kind == Object {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(w.chunkRows))
	}
}

func (w *RowWriter) endRow() {
	w.rows++
	w.total++
	if w.rows == w.chunkRows {
		w.flush()
	}
}

// Floats appends len(v)/cols rows of numbers (converted to the data type).
func (w *RowWriter) Floats(v []float64) {
	width := int(w.width())
	for len(v) > 0 {
		w.startRow()
		for _, x := range v[:width] {
			switch {
			case w.dt.Kind == Float && w.dt.Size == 4:
				w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(float32(x)))
			case w.dt.Kind == Float:
				w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(x))
			default:
				w.appendInt(int64(x))
			}
		}
		v = v[width:]
		w.endRow()
	}
}

// Ints appends one row per value (one-dimensional integer arrays).
func (w *RowWriter) Ints(v []int) {
	for _, x := range v {
		w.startRow()
		w.appendInt(int64(x))
		w.endRow()
	}
}

func (w *RowWriter) appendInt(x int64) {
	switch w.dt.Size {
	case 1:
		w.buf = append(w.buf, byte(x))
	case 2:
		w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(x))
	case 4:
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(x))
	default:
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(x))
	}
}

// String appends one row holding s (vlen-utf8 arrays).
func (w *RowWriter) String(s string) {
	w.startRow()
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(s)))
	w.buf = append(w.buf, s...)
	w.endRow()
}

// flush hands the current chunk to the store's goroutines.
func (w *RowWriter) flush() {
	if w.err == nil {
		w.err = w.s.Err()
	}
	if w.err != nil {
		w.buf, w.rows = w.buf[:0], 0
		return
	}
	key := strconv.FormatInt(w.chunk, 10)
	if w.cols > 0 {
		key += ".0"
	}
	path := filepath.Join(w.s.path(w.name), key)
	data, comp := w.buf, w.s.Comp
	free := w.free
	w.s.jobs <- func() error {
		var cb bytes.Buffer
		out, err := Compress(comp, data, &cb)
		if err == nil {
			err = writeFile(path, out)
		}
		free <- data
		return err
	}
	w.chunk++
	w.rows = 0
	w.buf = w.newBuf()
}

// Close pads the last chunk (zeros, or empty strings), writes it and the
// array's metadata.
func (w *RowWriter) Close() error {
	if w.rows > 0 {
		for w.rows < w.chunkRows {
			w.startRow()
			if w.dt.Kind == Object {
				w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
			} else {
				w.buf = append(w.buf, make([]byte, w.width()*int64(w.dt.Size))...)
			}
			w.rows++
		}
		w.flush()
	}
	if w.err != nil {
		return w.err
	}
	shape, chunks := []int64{w.total}, []int64{w.chunkRows}
	if w.cols > 0 {
		shape, chunks = append(shape, w.cols), append(chunks, w.cols)
	}
	return w.s.writeMeta(w.name, w.dt, shape, chunks, w.s.Comp, w.attrs)
}
