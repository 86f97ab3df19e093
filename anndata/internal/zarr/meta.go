// Package zarr reads and writes the parts of the Zarr v2 storage format
// (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html) that AnnData
// stores use: a directory store of groups (.zgroup, .zattrs) and arrays
// (.zarray) of at most two dimensions, numeric little- or big-endian data
// types, fixed-width and variable-length (numcodecs vlen-utf8) strings, and
// the compressors zlib, gzip, bz2, zstd, lz4 and blosc (read) or zlib, gzip
// and none (write).
//
// Arrays are written as a stream of rows: a chunk is compressed and written
// when its rows are complete, so memory is one chunk whatever the length of
// the array. Arrays are read chunk by chunk. Every size read from a store is
// checked against limits before anything is allocated.
package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
)

// MaxMetaBytes bounds the size of a .zarray, .zattrs or .zgroup file.
const MaxMetaBytes = 1 << 20

// DefaultMaxChunkBytes is the default bound of one decoded chunk.
const DefaultMaxChunkBytes = 64 << 20

// Codec is a compressor or filter configuration of a .zarray.
type Codec struct {
	ID string `json:"id"`
	// Level is the zlib, gzip or zstd level.
	Level *int `json:"level,omitempty"`
	// Blosc parameters.
	CName     string `json:"cname,omitempty"`
	CLevel    *int   `json:"clevel,omitempty"`
	Shuffle   *int   `json:"shuffle,omitempty"`
	BlockSize *int   `json:"blocksize,omitempty"`
}

// Meta is the metadata of an array (.zarray).
type Meta struct {
	ZarrFormat         int             `json:"zarr_format"`
	Shape              []int64         `json:"shape"`
	Chunks             []int64         `json:"chunks"`
	DType              json.RawMessage `json:"dtype"`
	Compressor         *Codec          `json:"compressor"`
	FillValue          json.RawMessage `json:"fill_value"`
	Order              string          `json:"order"`
	Filters            []Codec         `json:"filters"`
	DimensionSeparator string          `json:"dimension_separator,omitempty"`
}

// Kind is the kind of values of a data type.
type Kind byte

// Kinds of data types.
const (
	Float  Kind = 'f'
	Int    Kind = 'i'
	Uint   Kind = 'u'
	Bool   Kind = 'b'
	Object Kind = 'O' // variable-length strings (vlen-utf8 filter)
	UTF32  Kind = 'U' // fixed-width unicode (numpy <U)
	Bytes  Kind = 'S' // fixed-width bytes (numpy |S)
)

// DType is a parsed numpy data type string such as "<f4" or "|O".
type DType struct {
	Kind Kind
	Size int  // bytes per element (per character times characters for U)
	Big  bool // big-endian
}

// String returns the numpy form of the data type.
func (d DType) String() string {
	switch d.Kind {
	case Object:
		return "|O"
	case UTF32:
		if d.Big {
			return ">U" + strconv.Itoa(d.Size/4)
		}
		return "<U" + strconv.Itoa(d.Size/4)
	case Bytes, Bool:
		return "|" + string(d.Kind) + strconv.Itoa(d.Size)
	}
	if d.Size == 1 {
		return "|" + string(d.Kind) + "1"
	}
	if d.Big {
		return ">" + string(d.Kind) + strconv.Itoa(d.Size)
	}
	return "<" + string(d.Kind) + strconv.Itoa(d.Size)
}

// Numeric reports whether the data type holds numbers (or booleans).
func (d DType) Numeric() bool {
	switch d.Kind {
	case Float, Int, Uint, Bool:
		return true
	}
	return false
}

// ParseDType parses a numpy data type string of a kind this package reads.
func ParseDType(s string) (DType, error) {
	if len(s) < 2 {
		return DType{}, fmt.Errorf("data type %q is not a numpy type string", s)
	}
	var d DType
	switch s[0] {
	case '<', '|', '=':
	case '>':
		d.Big = true
	default:
		return DType{}, fmt.Errorf("data type %q is not a numpy type string", s)
	}
	d.Kind = Kind(s[1])
	if d.Kind == Object {
		if len(s) != 2 {
			return DType{}, fmt.Errorf("data type %q is not supported", s)
		}
		return d, nil
	}
	n, err := strconv.Atoi(s[2:])
	if err != nil || n <= 0 || n > 1<<20 {
		return DType{}, fmt.Errorf("data type %q is not supported", s)
	}
	d.Size = n
	switch d.Kind {
	case Float:
		if n != 4 && n != 8 {
			return DType{}, fmt.Errorf("data type %q is not supported (floats of 4 or 8 bytes are)", s)
		}
	case Int, Uint:
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return DType{}, fmt.Errorf("data type %q is not supported", s)
		}
	case Bool:
		if n != 1 {
			return DType{}, fmt.Errorf("data type %q is not supported", s)
		}
	case UTF32:
		d.Size = 4 * n
	case Bytes:
	default:
		return DType{}, fmt.Errorf("data type %q is not supported (numbers, booleans and strings are)", s)
	}
	return d, nil
}

// Array is an array's metadata, checked and parsed.
type Array struct {
	FS     fs.FS  // the store
	Path   string // directory of the array in FS
	Name   string // name of the array within the store, such as "obs/domain"
	Meta   Meta
	DType  DType
	Shape  []int64
	Chunks []int64
	Fill   float64 // numeric fill value (for missing chunks)
	Sep    string  // chunk key separator
	FOrder bool    // column-major chunks
	VLen   bool    // vlen-utf8 filter (Object arrays)
}

// ChunkLen returns the number of elements of a chunk.
func (a *Array) ChunkLen() int64 {
	n := int64(1)
	for _, c := range a.Chunks {
		n *= c
	}
	return n
}

// NumChunks returns the number of chunks along dimension k.
func (a *Array) NumChunks(k int) int64 {
	return (a.Shape[k] + a.Chunks[k] - 1) / a.Chunks[k]
}

// Key returns the file name of the chunk with the given grid coordinates.
func (a *Array) Key(idx ...int64) string {
	if len(idx) == 0 {
		return "0"
	}
	var sb strings.Builder
	for k, i := range idx {
		if k > 0 {
			sb.WriteString(a.Sep)
		}
		sb.WriteString(strconv.FormatInt(i, 10))
	}
	return sb.String()
}

// ReadMetaFile reads a small JSON metadata file of fsys, at most
// MaxMetaBytes.
func ReadMetaFile(fsys fs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxMetaBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMetaBytes {
		return nil, fmt.Errorf("%s: more than %d bytes; not Zarr metadata", path, MaxMetaBytes)
	}
	return b, nil
}

// Attrs reads the attributes (.zattrs) of the group or array in dir; a
// missing file gives an empty map.
func Attrs(fsys fs.FS, dir string) (map[string]json.RawMessage, error) {
	b, err := ReadMetaFile(fsys, path.Join(dir, ".zattrs"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %v", path.Join(dir, ".zattrs"), err)
	}
	return m, nil
}

// AttrString returns the string attribute key, or "".
func AttrString(attrs map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := attrs[key]; ok {
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
	}
	return s
}

// IsGroup reports whether dir holds a Zarr group (.zgroup).
func IsGroup(fsys fs.FS, dir string) bool {
	fi, err := fs.Stat(fsys, path.Join(dir, ".zgroup"))
	return err == nil && fi.Mode().IsRegular()
}

// IsArray reports whether dir holds a Zarr array (.zarray).
func IsArray(fsys fs.FS, dir string) bool {
	fi, err := fs.Stat(fsys, path.Join(dir, ".zarray"))
	return err == nil && fi.Mode().IsRegular()
}

// Limits bound what OpenArray accepts.
type Limits struct {
	// MaxChunkBytes bounds one decoded chunk (default DefaultMaxChunkBytes).
	MaxChunkBytes int64
}

// Max returns the bound of one decoded chunk.
func (l Limits) Max() int64 {
	if l.MaxChunkBytes <= 0 {
		return DefaultMaxChunkBytes
	}
	return l.MaxChunkBytes
}

// OpenArray reads and checks the metadata of the array in the directory
// dir of fsys (named name
// in messages): Zarr format 2, at most 2 dimensions, a supported data type,
// compressor and filters, and chunks of at most lim.MaxChunkBytes.
func OpenArray(fsys fs.FS, dir, name string, lim Limits) (*Array, error) {
	b, err := ReadMetaFile(fsys, path.Join(dir, ".zarray"))
	if err != nil {
		return nil, err
	}
	a := &Array{FS: fsys, Path: dir, Name: name}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: array %s: %s", path.Join(dir, ".zarray"), name, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&a.Meta); err != nil {
		return nil, bad("not valid array metadata: %v", err)
	}
	m := &a.Meta
	if m.ZarrFormat != 2 {
		return nil, bad("zarr_format %d; only Zarr v2 stores are read", m.ZarrFormat)
	}
	if len(m.Shape) > 2 {
		return nil, bad("%d dimensions; at most 2 are read", len(m.Shape))
	}
	if len(m.Chunks) != len(m.Shape) {
		return nil, bad("shape has %d dimensions but chunks %d", len(m.Shape), len(m.Chunks))
	}
	for k := range m.Shape {
		if m.Shape[k] < 0 || m.Shape[k] > 1<<48 {
			return nil, bad("shape %v out of range", m.Shape)
		}
		if m.Chunks[k] <= 0 || m.Chunks[k] > 1<<40 {
			return nil, bad("chunks %v out of range", m.Chunks)
		}
	}
	a.Shape, a.Chunks = m.Shape, m.Chunks
	var ds string
	if err := json.Unmarshal(m.DType, &ds); err != nil {
		return nil, bad("dtype %s is not supported (structured types are not)", clip(m.DType))
	}
	if a.DType, err = ParseDType(ds); err != nil {
		return nil, bad("%v", err)
	}
	switch m.Order {
	case "C", "":
	case "F":
		a.FOrder = true
	default:
		return nil, bad("order %q; want C or F", m.Order)
	}
	switch m.DimensionSeparator {
	case "", ".":
		a.Sep = "."
	case "/":
		a.Sep = "/"
	default:
		return nil, bad("dimension_separator %q; want . or /", m.DimensionSeparator)
	}
	for _, f := range m.Filters {
		if f.ID == "vlen-utf8" && a.DType.Kind == Object && !a.VLen {
			a.VLen = true
			continue
		}
		return nil, bad("filter %q is not supported (only vlen-utf8 on strings is)", f.ID)
	}
	if a.DType.Kind == Object && !a.VLen {
		return nil, bad("object array without the vlen-utf8 filter (only strings are read)")
	}
	if m.Compressor != nil {
		if err := checkCodec(m.Compressor); err != nil {
			return nil, bad("%v", err)
		}
	}
	// Chunk size: elements times bytes (a string counts at least 4 bytes of
	// length prefix in its vlen encoding).
	item := int64(a.DType.Size)
	if a.DType.Kind == Object {
		item = 4
	}
	n := a.ChunkLen()
	if n > lim.Max()/item {
		return nil, bad("chunks %v of %s take %s each, over the limit of %s; rechunk the array (for example with zarr.copy_store, or anndata: a.write_zarr(path, chunks=(10000, None)))",
			m.Chunks, a.DType, sizeStr(float64(n)*float64(item)), sizeStr(float64(lim.Max())))
	}
	if a.Fill, err = parseFill(m.FillValue, a.DType); err != nil {
		return nil, bad("%v", err)
	}
	return a, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}

func sizeStr(b float64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(b/(1<<10), 'f', 1, 64) + " KiB"
}

// parseFill returns the numeric fill value (0 for strings and null).
func parseFill(raw json.RawMessage, d DType) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" || !d.Numeric() {
		return 0, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, fmt.Errorf("fill_value %s is not a number", clip(raw))
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("fill_value %s is not a number", clip(raw))
	}
	return f, nil
}
