package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chunk is a decoded chunk: Raw holds the elements of numeric and
// fixed-width types, Strings those of string types, in C order (ReadChunk)
// or in the array's order (ReadChunkTo: column-major when Array.FOrder).
type Chunk struct {
	DType   DType
	Raw     []byte
	Strings []string
	Len     int  // elements
	Missing bool // the chunk is not in the store: its elements are the fill value
}

// Buffers is the memory of the chunks that ReadChunkTo reads, reused from
// one chunk to the next: a compressed chunk as stored and the decoded one.
type Buffers struct {
	src, raw []byte
}

// Bytes returns the memory the buffers hold.
func (b *Buffers) Bytes() int64 { return int64(cap(b.src) + cap(b.raw)) }

// ReadChunk reads and decodes the chunk with grid coordinates idx, in C
// order. A chunk that is not in the store holds the fill value (numeric
// types; Chunk.Missing is set) or is an error (strings). Sizes are checked
// before allocating: the file may not exceed the chunk's decoded size
// bound, and decoding stops at it.
func (a *Array) ReadChunk(lim Limits, idx ...int64) (*Chunk, error) {
	c, err := a.ReadChunkTo(lim, nil, idx...)
	if err != nil {
		return nil, err
	}
	if a.FOrder && len(a.Chunks) == 2 && a.Chunks[1] > 1 {
		c.toC(int(a.Chunks[0]), int(a.Chunks[1]))
	}
	return c, nil
}

// ReadChunkTo is ReadChunk in the memory of buf (nil: new memory), without
// reordering a column-major chunk: element (i, j) of a chunk of r x k
// elements is element i*k + j, or j*r + i when a.FOrder. The chunk's Raw
// is valid until the next read with buf.
func (a *Array) ReadChunkTo(lim Limits, buf *Buffers, idx ...int64) (*Chunk, error) {
	if buf == nil {
		buf = new(Buffers)
	}
	key := a.Key(idx...)
	c := &Chunk{DType: a.DType, Len: int(a.ChunkLen())}
	f, err := a.FS.Open(path.Join(a.Path, key))
	if errors.Is(err, fs.ErrNotExist) {
		if !a.DType.Numeric() {
			return nil, fmt.Errorf("array %s: chunk %s is missing", a.Name, key)
		}
		buf.raw = grow(buf.raw, c.Len*a.DType.Size)
		c.Raw, c.Missing = buf.raw, true
		fillRaw(c.Raw, a.DType, a.Fill)
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	maxOut := int(lim.Max())
	want := 0
	if a.DType.Kind != Object {
		want = c.Len * a.DType.Size
	}
	maxIn := maxStored(a.Meta.Compressor, want, maxOut)
	var src []byte
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxIn {
		// The size is known: read it into the reused buffer, then make
		// sure the file ends there.
		buf.src = grow(buf.src, int(fi.Size()))
		n, err := io.ReadFull(f, buf.src)
		if err != nil && err != io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
		}
		src = buf.src[:n]
		var one [1]byte
		if k, _ := f.Read(one[:]); k > 0 {
			return nil, fmt.Errorf("array %s: chunk %s is larger than its %d elements can be", a.Name, key, c.Len)
		}
	} else {
		b, err := io.ReadAll(io.LimitReader(f, maxIn+1))
		if err != nil {
			return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
		}
		src = b
	}
	if int64(len(src)) > maxIn {
		return nil, fmt.Errorf("array %s: chunk %s is larger than its %d elements can be", a.Name, key, c.Len)
	}
	raw, err := DecompressTo(a.Meta.Compressor, src, buf.raw, want, maxOut)
	if err != nil {
		return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
	}
	if a.Meta.Compressor != nil && cap(raw) > cap(buf.raw) {
		buf.raw = raw
	}
	switch a.DType.Kind {
	case Object:
		if c.Strings, err = decodeVLen(raw, c.Len); err != nil {
			return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
		}
	case UTF32, Bytes:
		c.Strings = decodeFixed(raw, a.DType, c.Len)
	default:
		c.Raw = raw
	}
	return c, nil
}

// maxStored bounds the stored (compressed) size of a chunk that decodes to
// want bytes (0: unknown, at most maxOut): the decoded size, plus what the
// codecs add to data that does not compress (zlib and gzip a few bytes per
// 16 KiB block, lz4 and zstd a little more, blosc 16 bytes and 4 per block).
func maxStored(comp *Codec, want, maxOut int) int64 {
	if comp == nil && want > 0 {
		return int64(want)
	}
	n := int64(want)
	if want == 0 {
		n = int64(maxOut)
	}
	return n + n/8 + 4096
}

// ChunkBytes returns the decoded size of one chunk, as ReadChunk bounds it:
// its elements times their size, or lim's bound for variable-length
// strings, whose size the metadata does not give.
func (a *Array) ChunkBytes(lim Limits) int64 {
	if a.DType.Kind == Object {
		return lim.Max()
	}
	return a.ChunkLen() * int64(a.DType.Size)
}

// ReadBytes returns the memory that reading the chunks of a, one at a
// time with one Buffers, holds at most: the stored chunk (maxStored), the
// decoded one, and working memory (64 KiB for the decoders' state and the
// files; blosc's unshuffle stage, up to a decoded chunk), plus the decoded
// strings of string arrays (their headers and text).
func (a *Array) ReadBytes(lim Limits) int64 {
	want := a.ChunkBytes(lim)
	var w int
	if a.DType.Kind != Object {
		w = int(want)
	}
	n := maxStored(a.Meta.Compressor, w, int(lim.Max())) + 64<<10
	if c := a.Meta.Compressor; c != nil {
		n += want
		if c.ID == "blosc" {
			n += want
		}
	}
	switch a.DType.Kind {
	case Object, UTF32, Bytes:
		n += want + 16*a.ChunkLen()
	}
	return n
}

// MissingChunks counts the chunks of the array's grid that are not in the
// store, and returns the key of the first in grid order ("" when none).
// It lists the array's folder (and, with the "/" separator, its row
// folders) once: its cost is that of the store's files, whatever the
// grid's size.
func (a *Array) MissingChunks() (missing int64, first string, err error) {
	grid := int64(1)
	for k := range a.Shape {
		nk := a.NumChunks(k)
		if nk == 0 {
			return 0, "", nil
		}
		if grid > math.MaxInt64/nk {
			grid = math.MaxInt64
		} else {
			grid *= nk
		}
	}
	present := map[string]bool{}
	entries, err := fs.ReadDir(a.FS, a.Path)
	if err != nil {
		return 0, "", fmt.Errorf("array %s: %w", a.Name, err)
	}
	nested := a.Sep == "/" && len(a.Shape) == 2
	for _, e := range entries {
		name := e.Name()
		if !nested {
			if !e.IsDir() && a.validKey(name) {
				present[name] = true
			}
			continue
		}
		if !e.IsDir() || !a.validIndex(name, 0) {
			continue
		}
		sub, err := fs.ReadDir(a.FS, path.Join(a.Path, name))
		if err != nil {
			return 0, "", fmt.Errorf("array %s: %w", a.Name, err)
		}
		for _, f := range sub {
			if !f.IsDir() && a.validIndex(f.Name(), 1) {
				present[name+"/"+f.Name()] = true
			}
		}
	}
	missing = grid - int64(len(present))
	if missing == 0 {
		return 0, "", nil
	}
	// The first missing key is among the first len(present)+1 of the grid.
	idx := make([]int64, len(a.Shape))
	for {
		key := a.Key(idx...)
		if len(idx) == 0 {
			key = "0"
		}
		if !present[key] {
			return missing, key, nil
		}
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < a.NumChunks(k) {
				break
			}
			idx[k] = 0
		}
	}
}

// validKey reports whether name is the key of a chunk of the grid.
func (a *Array) validKey(name string) bool {
	if len(a.Shape) == 0 {
		return name == "0"
	}
	parts := strings.Split(name, a.Sep)
	if len(parts) != len(a.Shape) {
		return false
	}
	for k, p := range parts {
		if !a.validIndex(p, k) {
			return false
		}
	}
	return true
}

// validIndex reports whether s is the decimal index of a chunk along
// dimension k (no sign, no leading zero).
func (a *Array) validIndex(s string, k int) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return err == nil && i >= 0 && i < a.NumChunks(k)
}

// toC reorders a column-major r x k chunk into row-major order.
func (c *Chunk) toC(r, k int) {
	if c.Strings != nil {
		s := make([]string, len(c.Strings))
		for i := 0; i < r; i++ {
			for j := 0; j < k; j++ {
				s[i*k+j] = c.Strings[j*r+i]
			}
		}
		c.Strings = s
		return
	}
	sz := c.DType.Size
	out := make([]byte, len(c.Raw))
	for i := 0; i < r; i++ {
		for j := 0; j < k; j++ {
			copy(out[(i*k+j)*sz:(i*k+j+1)*sz], c.Raw[(j*r+i)*sz:(j*r+i+1)*sz])
		}
	}
	c.Raw = out
}

func fillRaw(b []byte, d DType, v float64) {
	e := make([]byte, d.Size)
	putNumber(e, d, v)
	for i := 0; i < len(b); i += d.Size {
		copy(b[i:], e)
	}
}

func putNumber(e []byte, d DType, v float64) {
	var u uint64
	switch d.Kind {
	case Float:
		if d.Size == 4 {
			u = uint64(math.Float32bits(float32(v)))
		} else {
			u = math.Float64bits(v)
		}
	default:
		u = uint64(int64(v))
	}
	for k := 0; k < d.Size; k++ {
		if d.Big {
			e[d.Size-1-k] = byte(u >> (8 * k))
		} else {
			e[k] = byte(u >> (8 * k))
		}
	}
}

// decodeVLen decodes numcodecs' vlen-utf8 encoding: a little-endian uint32
// count, then for each item a uint32 length and its UTF-8 bytes.
func decodeVLen(b []byte, n int) ([]string, error) {
	if len(b) < 4 {
		return nil, errors.New("truncated vlen-utf8 chunk")
	}
	cnt := binary.LittleEndian.Uint32(b)
	if int64(cnt) != int64(n) {
		return nil, fmt.Errorf("vlen-utf8 chunk holds %d items; want %d", cnt, n)
	}
	out := make([]string, n)
	p := 4
	for i := range out {
		if p+4 > len(b) {
			return nil, errors.New("truncated vlen-utf8 chunk")
		}
		l := int64(binary.LittleEndian.Uint32(b[p:]))
		p += 4
		if int64(p)+l > int64(len(b)) {
			return nil, errors.New("truncated vlen-utf8 chunk")
		}
		out[i] = string(b[p : p+int(l)])
		p += int(l)
	}
	return out, nil
}

// decodeFixed decodes numpy fixed-width strings (<U: UTF-32, |S: bytes),
// trailing NULs removed.
func decodeFixed(b []byte, d DType, n int) []string {
	out := make([]string, n)
	for i := range out {
		e := b[i*d.Size : (i+1)*d.Size]
		if d.Kind == Bytes {
			out[i] = strings.TrimRight(string(e), "\x00")
			continue
		}
		var sb strings.Builder
		for k := 0; k+4 <= len(e); k += 4 {
			var r uint32
			if d.Big {
				r = binary.BigEndian.Uint32(e[k:])
			} else {
				r = binary.LittleEndian.Uint32(e[k:])
			}
			if r == 0 {
				break
			}
			if r > utf8.MaxRune {
				r = utf8.RuneError
			}
			sb.WriteRune(rune(r))
		}
		out[i] = sb.String()
	}
	return out
}

// Float returns element i as a float64.
func (c *Chunk) Float(i int) float64 {
	d := c.DType
	e := c.Raw[i*d.Size : (i+1)*d.Size]
	switch d.Kind {
	case Float:
		if d.Size == 4 {
			return float64(math.Float32frombits(u32(e, d.Big)))
		}
		return math.Float64frombits(u64(e, d.Big))
	case Uint:
		return float64(c.uint(e))
	}
	return float64(c.Int(i))
}

// Int returns element i of an integer or boolean chunk.
func (c *Chunk) Int(i int) int64 {
	d := c.DType
	e := c.Raw[i*d.Size : (i+1)*d.Size]
	if d.Kind == Uint || d.Kind == Bool {
		return int64(c.uint(e))
	}
	switch d.Size {
	case 1:
		return int64(int8(e[0]))
	case 2:
		return int64(int16(u16(e, d.Big)))
	case 4:
		return int64(int32(u32(e, d.Big)))
	}
	return int64(u64(e, d.Big))
}

func (c *Chunk) uint(e []byte) uint64 {
	switch len(e) {
	case 1:
		return uint64(e[0])
	case 2:
		return uint64(u16(e, c.DType.Big))
	case 4:
		return uint64(u32(e, c.DType.Big))
	}
	return u64(e, c.DType.Big)
}

func u16(e []byte, big bool) uint16 {
	if big {
		return binary.BigEndian.Uint16(e)
	}
	return binary.LittleEndian.Uint16(e)
}

func u32(e []byte, big bool) uint32 {
	if big {
		return binary.BigEndian.Uint32(e)
	}
	return binary.LittleEndian.Uint32(e)
}

func u64(e []byte, big bool) uint64 {
	if big {
		return binary.BigEndian.Uint64(e)
	}
	return binary.LittleEndian.Uint64(e)
}

// Floats decodes n elements from element i into dst.
func (c *Chunk) Floats(dst []float64, i int) {
	d := c.DType
	if d.Kind == Float && !d.Big {
		b := c.Raw[i*d.Size:]
		if d.Size == 8 {
			for k := range dst {
				dst[k] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:]))
			}
		} else {
			for k := range dst {
				dst[k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:])))
			}
		}
		return
	}
	for k := range dst {
		dst[k] = c.Float(i + k)
	}
}
