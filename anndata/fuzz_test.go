package anndata

import (
	"context"
	"encoding/binary"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/tabletest"
)

// bloscFrame builds a c-blosc 1.x frame of data with LZ4 streams (the
// format's fields as the decoder reads them): blocks of blocksize bytes,
// byte-shuffled when shuffle is set, each block split into typesize
// streams when split is set. A stream that LZ4 does not shrink is stored
// raw, as c-blosc does.
func bloscFrame(t testing.TB, data []byte, typesize, blocksize int, shuffle, split bool) []byte {
	t.Helper()
	flags := byte(1 << 5) // LZ4
	if shuffle {
		flags |= 0x1
	}
	if !split {
		flags |= 0x10
	}
	nblocks := (len(data) + blocksize - 1) / blocksize
	hdr := make([]byte, 16+4*nblocks)
	hdr[0], hdr[1], hdr[2], hdr[3] = 2, 1, flags, byte(typesize)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(data)))
	binary.LittleEndian.PutUint32(hdr[8:], uint32(blocksize))
	out := hdr
	for j := 0; j < nblocks; j++ {
		binary.LittleEndian.PutUint32(out[16+4*j:], uint32(len(out)))
		blk := data[j*blocksize : min((j+1)*blocksize, len(data))]
		leftover := len(blk) < blocksize
		if shuffle && typesize > 1 {
			s := make([]byte, len(blk))
			n := len(blk) / typesize
			for i := 0; i < n; i++ {
				for k := 0; k < typesize; k++ {
					s[k*n+i] = blk[i*typesize+k]
				}
			}
			copy(s[n*typesize:], blk[n*typesize:])
			blk = s
		}
		ns := 1
		if split && !leftover && typesize <= 16 && len(blk)/typesize >= 128 {
			ns = typesize
		}
		m := len(blk) / ns
		for s := 0; s < ns; s++ {
			part := blk[s*m : (s+1)*m]
			c := make([]byte, lz4.CompressBlockBound(len(part)))
			k, err := lz4.CompressBlock(part, c, nil)
			require.NoError(t, err)
			if k == 0 || k >= len(part) {
				c, k = part, len(part)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(k))
			out = append(out, c[:k]...)
		}
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)))
	return out
}

// TestBlosc: frames built from the format (shuffled or not, split or not,
// with a short last block) decode to their data.
func TestBlosc(t *testing.T) {
	data := make([]byte, 8*1000+5)
	for i := range data {
		data[i] = byte(i / 24 % 7) // compressible, so LZ4 streams are used
	}
	for _, tc := range []struct {
		typesize, blocksize int
		shuffle, split      bool
	}{{8, 4096, true, true}, {8, 4096, true, false}, {4, 1024, false, true}, {1, 333, false, false}, {8, 100000, true, true}} {
		frame := bloscFrame(t, data, tc.typesize, tc.blocksize, tc.shuffle, tc.split)
		got, err := zarr.Decompress(&zarr.Codec{ID: "blosc"}, frame, len(data), 1<<20)
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, data, got, "%+v", tc)
		// A cut frame is an error, not a panic.
		for _, cut := range []int{0, 15, 16, 20, len(frame) / 2, len(frame) - 1} {
			_, err := zarr.Decompress(&zarr.Codec{ID: "blosc"}, frame[:cut], len(data), 1<<20)
			require.Error(t, err, "cut at %d", cut)
		}
	}
	_, err := zarr.Decompress(&zarr.Codec{ID: "blosc"}, bloscFrame(t, data, 8, 4096, true, true), 0, 1000)
	require.ErrorContains(t, err, "over the limit of 1000")
}

// fuzzBase is a small valid store (X of 40 cells x 3 channels in chunks
// of 16 rows, zlib; domain and label categoricals) in memory.
func fuzzBase(t testing.TB) fstest.MapFS {
	dir := filepath.Join(t.TempDir(), "base.zarr")
	w, err := Create(dir, WriterOptions{Vars: []string{"a", "b", "c"}, ChunkRows: 16, Components: 1})
	require.NoError(t, err)
	b := dataset.Block{Rows: 40, D: 3, Label: make([]int, 40), Domain: make([]int, 40)}
	z := make([]float64, 40)
	for i := 0; i < 40; i++ {
		b.X = append(b.X, float64(i), float64(i)/3, -float64(i*i))
		b.Domain[i], b.Label[i], z[i] = i%2, i%3, float64(i)
	}
	require.NoError(t, w.WriteBlock(&b, mat.NewDense(40, 1, z), []string{"d0", "d1"}, []string{"x", "y", "z"}))
	require.NoError(t, w.Commit())
	m := fstest.MapFS{}
	require.NoError(t, fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		m[p] = &fstest.MapFile{Data: data}
		return err
	}))
	return m
}

func fuzzStore(base fstest.MapFS, xmeta, chunk, codes []byte) fstest.MapFS {
	m := make(fstest.MapFS, len(base)+1)
	for k, v := range base {
		m[k] = v
	}
	m["X/.zarray"] = &fstest.MapFile{Data: xmeta}
	m["X/1.0"] = &fstest.MapFile{Data: chunk}
	m["obs/label/codes/0"] = &fstest.MapFile{Data: codes}
	return m
}

// FuzzZarr feeds the reader stores whose X metadata, one chunk of X and
// one chunk of label codes are arbitrary: every one is read or refused
// with an error, never a panic, and what is read is finite and in range.
func FuzzZarr(f *testing.F) {
	base := fuzzBase(f)
	meta := string(base["X/.zarray"].Data)
	raw := make([]byte, 16*3*8)
	for i := 0; i < 48; i++ {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(float64(i)*1.5))
	}
	codes := base["obs/label/codes/0"].Data
	f.Add([]byte(meta), base["X/1.0"].Data, codes)
	f.Add([]byte(strings.Replace(meta, `"compressor": {
        "id": "zlib",
        "level": 1
    }`, `"compressor": null`, 1)), raw, codes)
	withComp := func(c string) []byte {
		return []byte(strings.Replace(meta, `"id": "zlib",
        "level": 1`, c, 1))
	}
	f.Add(withComp(`"id": "blosc", "cname": "lz4", "shuffle": 1`), bloscFrame(f, raw, 8, 128, true, true), codes)
	f.Add(withComp(`"id": "blosc", "cname": "lz4", "shuffle": 0`), bloscFrame(f, raw, 8, 4096, false, false), codes)
	lz := make([]byte, lz4.CompressBlockBound(len(raw)))
	k, _ := lz4.CompressBlock(raw, lz, nil)
	f.Add(withComp(`"id": "lz4"`), append(binary.LittleEndian.AppendUint32(nil, uint32(len(raw))), lz[:k]...), codes)
	enc, _ := zstd.NewWriter(nil)
	f.Add(withComp(`"id": "zstd"`), enc.EncodeAll(raw, nil), codes)
	f.Add([]byte(strings.Replace(meta, `"<f8"`, `">i2"`, 1)), raw[:16*3*2], codes)
	f.Add([]byte(strings.Replace(meta, `"order": "C"`, `"order": "F"`, 1)), base["X/1.0"].Data, codes)
	f.Fuzz(func(t *testing.T, xmeta, chunk, codes []byte) {
		fsys := fuzzStore(base, xmeta, chunk, codes)
		src, err := NewSourceFS(fsys, "fuzz.zarr", Options{Domain: "domain", Label: "label", MaxChunkBytes: 1 << 20})
		if err != nil {
			return
		}
		tabletest.CheckRead(t, src)
	})
}

// TestFuzzSeedsRead: the fuzz seeds with valid chunks read back the values
// written (so the fuzzer starts from stores that decode).
func TestFuzzSeedsRead(t *testing.T) {
	base := fuzzBase(t)
	src, err := NewSourceFS(base, "base.zarr", Options{Domain: "domain", Label: "label"})
	require.NoError(t, err)
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 40, ds.N())
	require.Equal(t, []float64{17, 17.0 / 3, -289}, ds.X.RawRowView(17))

	raw := make([]byte, 16*3*8)
	for i := 0; i < 48; i++ {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(float64(i)*1.5))
	}
	meta := string(base["X/.zarray"].Data)
	m := strings.Replace(meta, `"id": "zlib",
        "level": 1`, `"id": "blosc", "cname": "lz4", "shuffle": 1`, 1)
	fsys := fuzzStore(base, []byte(m), bloscFrame(t, raw, 8, 128, true, true), base["obs/label/codes/0"].Data)
	fsys["X/0.0"] = &fstest.MapFile{Data: bloscFrame(t, raw, 8, 256, true, false)}
	fsys["X/2.0"] = &fstest.MapFile{Data: bloscFrame(t, raw, 8, 1024, false, true)}
	src, err = NewSourceFS(fsys, "b.zarr", Options{})
	require.NoError(t, err)
	ds, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, []float64{3 * 1.5, 4 * 1.5, 5 * 1.5}, ds.X.RawRowView(17))
}
