package zarr

import (
	"encoding/binary"
	"math"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func meta(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestReadChunkLayouts: column-major chunks, big-endian types, "/" chunk
// keys, fixed-width strings and missing chunks (fill value) decode to the
// values a reference layout written here gives.
func TestReadChunkLayouts(t *testing.T) {
	f64 := func(big bool, v ...float64) []byte {
		var b []byte
		for _, x := range v {
			if big {
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
			} else {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
		}
		return b
	}
	utf32 := func(s string, n int) []byte {
		var b []byte
		for _, r := range s {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
		}
		for len(b) < 4*n {
			b = append(b, 0, 0, 0, 0)
		}
		return b
	}
	fsys := fstest.MapFS{
		// 3 x 2, one column-major chunk: rows (1, 2), (3, 4), (5, 6).
		"f/.zarray": meta(`{"zarr_format": 2, "shape": [3, 2], "chunks": [3, 2], "dtype": "<f8", "compressor": null, "fill_value": 0, "order": "F", "filters": null}`),
		"f/0.0":     {Data: f64(false, 1, 3, 5, 2, 4, 6)},
		// big-endian, "/" keys, a missing chunk filled with NaN.
		"b/.zarray": meta(`{"zarr_format": 2, "shape": [4, 1], "chunks": [2, 1], "dtype": ">f8", "compressor": null, "fill_value": "NaN", "order": "C", "filters": null, "dimension_separator": "/"}`),
		"b/0/0":     {Data: f64(true, -1.5, 2.25)},
		// fixed-width strings.
		"u/.zarray": meta(`{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<U3", "compressor": null, "fill_value": "", "order": "C", "filters": null}`),
		"u/0":       {Data: append(utf32("ab", 3), utf32("é€x", 3)...)},
		"s/.zarray": meta(`{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|S2", "compressor": null, "fill_value": "", "order": "C", "filters": null}`),
		"s/0":       {Data: []byte("a\x00bc")},
		// int16, big-endian, and unsigned.
		"i/.zarray": meta(`{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": ">i2", "compressor": null, "fill_value": 0, "order": "C", "filters": null}`),
		"i/0":       {Data: []byte{0xff, 0xfe, 0x01, 0x00}},
	}
	a, err := OpenArray(fsys, "f", "f", Limits{})
	require.NoError(t, err)
	c, err := a.ReadChunk(Limits{}, 0, 0)
	require.NoError(t, err)
	for i, want := range []float64{1, 2, 3, 4, 5, 6} {
		require.Equal(t, want, c.Float(i))
	}
	a, err = OpenArray(fsys, "b", "b", Limits{})
	require.NoError(t, err)
	c, err = a.ReadChunk(Limits{}, 0, 0)
	require.NoError(t, err)
	require.Equal(t, []float64{-1.5, 2.25}, []float64{c.Float(0), c.Float(1)})
	c, err = a.ReadChunk(Limits{}, 1, 0)
	require.NoError(t, err)
	require.True(t, math.IsNaN(c.Float(0)) && math.IsNaN(c.Float(1)), "missing chunk: fill value")
	a, err = OpenArray(fsys, "u", "u", Limits{})
	require.NoError(t, err)
	c, err = a.ReadChunk(Limits{}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"ab", "é€x"}, c.Strings)
	a, err = OpenArray(fsys, "s", "s", Limits{})
	require.NoError(t, err)
	c, err = a.ReadChunk(Limits{}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "bc"}, c.Strings)
	a, err = OpenArray(fsys, "i", "i", Limits{})
	require.NoError(t, err)
	c, err = a.ReadChunk(Limits{}, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{-2, 256}, []int64{c.Int(0), c.Int(1)})
}

// TestVLen: numcodecs' vlen-utf8 layout decodes; a wrong count or a cut
// item is an error.
func TestVLen(t *testing.T) {
	b := binary.LittleEndian.AppendUint32(nil, 3)
	for _, s := range []string{"x", "", "CD45RA"} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	got, err := decodeVLen(b, 3)
	require.NoError(t, err)
	require.Equal(t, []string{"x", "", "CD45RA"}, got)
	_, err = decodeVLen(b, 4)
	require.ErrorContains(t, err, "holds 3 items; want 4")
	_, err = decodeVLen(b[:len(b)-1], 3)
	require.ErrorContains(t, err, "truncated")
}

// TestParseDType: the numpy type strings read, and those refused.
func TestParseDType(t *testing.T) {
	for s, want := range map[string]DType{"<f4": {Float, 4, false}, ">f8": {Float, 8, true}, "|u1": {Uint, 1, false},
		"<i8": {Int, 8, false}, "|b1": {Bool, 1, false}, "|O": {Object, 0, false}, "<U5": {UTF32, 20, false}, "|S7": {Bytes, 7, false}} {
		got, err := ParseDType(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "f8", "<f2", "<c16", "<i3", "|V8", "<M8[ns]", "<U0", "<U9999999999"} {
		_, err := ParseDType(s)
		require.Error(t, err, s)
	}
}
