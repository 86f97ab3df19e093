package dica

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"gonum.org/v1/gonum/mat"
)

// File layout shared by models and statistics:
//
//	magic   [8]byte  "DICAMODL" or "DICASTAT"
//	version uint32   little endian
//	length  uint64   payload length in bytes
//	payload [length]byte
//	crc     uint32   CRC-32C (Castagnoli) of everything before it
//
// The payload is a sequence of little-endian fixed-width numbers, and of
// length-prefixed strings and float64 slices.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const headerLen = 8 + 4 + 8

// errTruncated is wrapped by decoding errors of files that end too early.
var errTruncated = errors.New("file is truncated")

func seal(magic string, version uint32, payload []byte) []byte {
	out := make([]byte, 0, headerLen+len(payload)+4)
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, version)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = append(out, payload...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
}

// checkHeader checks the magic number and the version of the header at the
// start of data and returns the payload length it declares and the version.
func checkHeader(data []byte, magic, what string, version uint32) (n uint64, v uint32, err error) {
	if len(data) < 8 || string(data[:8]) != magic {
		if len(data) >= 8 && string(data[:4]) == "DICA" {
			return 0, 0, fmt.Errorf("dica: not a %s file (it is a %q file)", what, data[:8])
		}
		return 0, 0, fmt.Errorf("dica: not a %s file (bad magic number)", what)
	}
	if len(data) < headerLen {
		return 0, 0, fmt.Errorf("dica: %s %w: %d bytes, header needs %d", what, errTruncated, len(data), headerLen)
	}
	v = binary.LittleEndian.Uint32(data[8:])
	if v > version {
		return 0, 0, fmt.Errorf("dica: %s format version %d is newer than this program's %d: upgrade dica", what, v, version)
	}
	if v < 1 {
		return 0, 0, fmt.Errorf("dica: %s format version %d is invalid", what, v)
	}
	return binary.LittleEndian.Uint64(data[12:]), v, nil
}

// unseal checks magic, version (at most version) and checksum and returns
// the payload and the file's version.
func unseal(data []byte, magic, what string, version uint32) ([]byte, uint32, error) {
	n, v, err := checkHeader(data, magic, what, version)
	if err != nil {
		return nil, 0, err
	}
	if want := uint64(headerLen) + n + 4; n > uint64(len(data)) || uint64(len(data)) < want {
		return nil, 0, fmt.Errorf("dica: %s %w: %d bytes, expected %d", what, errTruncated, len(data), uint64(headerLen)+n+4)
	} else if uint64(len(data)) > want {
		return nil, 0, fmt.Errorf("dica: %s has %d unexpected bytes after its end", what, uint64(len(data))-want)
	}
	body := data[:headerLen+int(n)]
	sum := binary.LittleEndian.Uint32(data[headerLen+int(n):])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, 0, fmt.Errorf("dica: %s is corrupted (checksum mismatch)", what)
	}
	return data[headerLen : headerLen+int(n)], v, nil
}

type encoder struct{ b []byte }

func (e *encoder) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) int(v int)     { e.u64(uint64(int64(v))) }
func (e *encoder) f64(v float64) { e.u64(math.Float64bits(v)) }
func (e *encoder) bool(v bool) {
	if v {
		e.u64(1)
	} else {
		e.u64(0)
	}
}
func (e *encoder) str(s string) { e.int(len(s)); e.b = append(e.b, s...) }
func (e *encoder) strs(s []string) {
	e.int(len(s))
	for _, v := range s {
		e.str(v)
	}
}
func (e *encoder) ints(s []int) {
	e.int(len(s))
	for _, v := range s {
		e.int(v)
	}
}
func (e *encoder) f64s(s []float64) {
	e.int(len(s))
	for _, v := range s {
		e.f64(v)
	}
}

// dense encodes a possibly nil matrix.
func (e *encoder) dense(m *mat.Dense) {
	if m == nil || m.IsEmpty() {
		e.int(0)
		e.int(0)
		return
	}
	r, c := m.Dims()
	e.int(r)
	e.int(c)
	for i := 0; i < r; i++ {
		for _, v := range m.RawRowView(i) {
			e.f64(v)
		}
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errTruncated
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) int() int {
	v := int64(d.u64())
	if v < math.MinInt32*int64(1<<20) || v > math.MaxInt32*int64(1<<20) {
		d.fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

// count reads a length and checks that at least size bytes per element
// remain, so a corrupted length cannot trigger a huge allocation.
func (d *decoder) count(size int) int {
	n := d.int()
	if d.err != nil {
		return 0
	}
	if n < 0 || (size > 0 && n > len(d.b)/size) {
		d.fail("length %d exceeds the remaining %d bytes", n, len(d.b))
		return 0
	}
	return n
}

// f64 reads a float64. Every value dica writes is finite (data with NaN or
// Inf is rejected before it is summed), so a NaN or Inf is corruption.
func (d *decoder) f64() float64 {
	v := math.Float64frombits(d.u64())
	if isBad(v) {
		d.fail("a stored value is %v: not finite", v)
		return 0
	}
	return v
}
func (d *decoder) bool() bool { return d.u64() != 0 }
func (d *decoder) str() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
func (d *decoder) strs() []string {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	s := make([]string, n)
	for i := range s {
		s[i] = d.str()
	}
	return s
}
func (d *decoder) ints() []int {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	s := make([]int, n)
	for i := range s {
		s[i] = d.int()
	}
	return s
}
func (d *decoder) f64s() []float64 {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = d.f64()
	}
	return s
}
func (d *decoder) dense() *mat.Dense {
	r, c := d.int(), d.int()
	if d.err != nil || r == 0 || c == 0 {
		if r < 0 || c < 0 {
			d.fail("negative matrix shape %d x %d", r, c)
		}
		return nil
	}
	if r < 0 || c < 0 || r > len(d.b)/8 || c > len(d.b)/8 || r*c > len(d.b)/8 {
		d.fail("matrix %d x %d exceeds the remaining %d bytes", r, c, len(d.b))
		return nil
	}
	data := make([]float64, r*c)
	for i := range data {
		data[i] = d.f64()
	}
	return mat.NewDense(r, c, data)
}

func fingerprint(b []byte) [32]byte { return sha256.Sum256(b) }
