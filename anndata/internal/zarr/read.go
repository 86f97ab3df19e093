package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strings"
	"unicode/utf8"
)

// Chunk is a decoded chunk in C order: Raw holds the elements of numeric
// and fixed-width types, Strings those of string types.
type Chunk struct {
	DType   DType
	Raw     []byte
	Strings []string
	Len     int // elements
}

// ReadChunk reads and decodes the chunk with grid coordinates idx. A chunk
// that is not in the store holds the fill value (numeric types) or is an
// error (strings). Sizes are checked before allocating: the file may not
// exceed the chunk's decoded size bound, and decoding stops at it.
func (a *Array) ReadChunk(lim Limits, idx ...int64) (*Chunk, error) {
	key := a.Key(idx...)
	c := &Chunk{DType: a.DType, Len: int(a.ChunkLen())}
	f, err := a.FS.Open(path.Join(a.Path, key))
	if errors.Is(err, fs.ErrNotExist) {
		if !a.DType.Numeric() {
			return nil, fmt.Errorf("array %s: chunk %s is missing", a.Name, key)
		}
		c.Raw = make([]byte, c.Len*a.DType.Size)
		if a.Fill != 0 {
			fillRaw(c.Raw, a.DType, a.Fill)
		}
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
	maxIn := int64(maxOut) + int64(maxOut)/8 + 4096
	if a.Meta.Compressor == nil && want > 0 {
		maxIn = int64(want)
	}
	src, err := io.ReadAll(io.LimitReader(f, maxIn+1))
	if err != nil {
		return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
	}
	if int64(len(src)) > maxIn {
		return nil, fmt.Errorf("array %s: chunk %s is larger than its %d elements can be", a.Name, key, c.Len)
	}
	raw, err := Decompress(a.Meta.Compressor, src, want, maxOut)
	if err != nil {
		return nil, fmt.Errorf("array %s: chunk %s: %w", a.Name, key, err)
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
	if a.FOrder && len(a.Chunks) == 2 && a.Chunks[1] > 1 {
		c.toC(int(a.Chunks[0]), int(a.Chunks[1]))
	}
	return c, nil
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
