package anndata

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/sourcetest"
)

// writeStore writes a store of n cells of d channels (values i*d+j) in
// two domains, labels of three classes, in chunks of chunkRows rows.
func writeStore(t testing.TB, path string, n, d, chunkRows int, compression string) {
	t.Helper()
	vars := make([]string, d)
	for j := range vars {
		vars[j] = fmt.Sprintf("c%d", j)
	}
	w, err := Create(path, WriterOptions{Vars: vars, ChunkRows: chunkRows, Compression: compression})
	require.NoError(t, err)
	var b dataset.Block
	for done := 0; done < n; {
		k := min(4096, n-done)
		b.Reset(k, d, true, 0)
		b.Rows = k
		for i := 0; i < k; i++ {
			for j := 0; j < d; j++ {
				// Varied bits, so that zlib does not shrink the chunks much.
				b.X[i*d+j] = float64((done+i)*d+j) * 1.0000001
			}
			b.Domain[i], b.Label[i] = (done+i)%2, (done+i)%3
		}
		require.NoError(t, w.WriteBlock(&b, nil, []string{"d0", "d1"}, []string{"x", "y", "z"}))
		done += k
	}
	require.NoError(t, w.Commit())
}

// TestMissingChunks: the Zarr format reads a chunk absent from the store
// as the fill value. A missing chunk of X is an error naming the chunk and
// its cells, whether it is missing when the Source is made or only at the
// pass; a missing chunk of an obs column is read as the fill value with a
// warning.
func TestMissingChunks(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.zarr")
	writeStore(t, good, 100, 3, 16, "zlib")
	copyStore := func(t *testing.T) string {
		dst := filepath.Join(t.TempDir(), "s.zarr")
		require.NoError(t, os.CopyFS(dst, os.DirFS(good)))
		return dst
	}
	o := Options{Domain: "domain", Label: "label"}

	s := copyStore(t)
	require.NoError(t, os.Remove(filepath.Join(s, "X", "2.0")))
	require.NoError(t, os.Remove(filepath.Join(s, "X", "5.0")))
	_, err := NewSource(s, o)
	require.EqualError(t, err, s+": X: 2 of its chunks are missing, the first 2.0 (cells 32 to 47); the store is incomplete: copy it again, or write it again from its source")

	s = copyStore(t)
	src, err := NewSource(s, o)
	require.NoError(t, err)
	require.Empty(t, src.Warnings())
	require.NoError(t, os.Remove(filepath.Join(s, "X", "6.0")))
	_, err = dataset.Collect(context.Background(), src)
	require.EqualError(t, err, s+": X: chunk 6.0 (cells 96 to 99) is missing; the store is incomplete")

	// obs/label/codes chunk 1 (cells 16 to 31) read as code 0, "x".
	s = copyStore(t)
	require.NoError(t, os.Remove(filepath.Join(s, "obs", "label", "codes", "1")))
	src, err = NewSource(s, o)
	require.NoError(t, err)
	require.Equal(t, []string{s + ": obs/label/codes: 1 chunk(s) missing, the first 1 (cells 16 to 31), read as the fill value 0, as the Zarr format says; is the store complete?"}, src.Warnings())
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 100, ds.N())
	for i := 0; i < 100; i++ {
		want := ds.ClassNames[ds.Label[i]]
		if i < 16 || i >= 32 {
			require.Equal(t, []string{"x", "y", "z"}[i%3], want, "cell %d", i)
		} else {
			require.Equal(t, "x", want, "cell %d", i)
		}
		require.Equal(t, float64(3*i)*1.0000001, ds.X.At(i, 0))
	}

	// The "/" separator: chunks in row folders.
	fsys := fstest.MapFS{
		".zgroup":            meta(`{"zarr_format": 2}`),
		"X/.zarray":          meta(`{"zarr_format": 2, "shape": [5, 2], "chunks": [2, 1], "dtype": "<f8", "compressor": null, "fill_value": 0, "order": "C", "filters": null, "dimension_separator": "/"}`),
		"X/0/0":              {Data: make([]byte, 16)},
		"X/0/1":              {Data: make([]byte, 16)},
		"X/1/0":              {Data: make([]byte, 16)},
		"X/2/0":              {Data: make([]byte, 16)},
		"X/2/1":              {Data: make([]byte, 16)},
		"var/.zgroup":        meta(`{"zarr_format": 2}`),
		"var/.zattrs":        meta(`{"_index": "_index"}`),
		"var/_index/.zarray": meta(`{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|S1", "compressor": null, "fill_value": "", "order": "C", "filters": null}`),
		"var/_index/0":       {Data: []byte("ab")},
	}
	_, err = NewSourceFS(fsys, "nested.zarr", Options{})
	require.EqualError(t, err, "nested.zarr: X: 1 of its chunks are missing, the first 1/1 (cells 2 to 3); the store is incomplete: copy it again, or write it again from its source")
	fsys["X/1/1"] = &fstest.MapFile{Data: make([]byte, 16)}
	_, err = NewSourceFS(fsys, "nested.zarr", Options{})
	require.NoError(t, err)
}

func meta(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestPassBytes: PassBytes bounds what a pass allocates (which bounds the
// memory it holds), and is not far above it: chunks of 4 MiB, compressed
// or not, with a few of the channels or all of them. A pass reuses its
// buffers from chunk to chunk: it allocates about one chunk's worth,
// whatever the number of chunks.
func TestPassBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 25 MB stores")
	}
	const rows, d, chunkRows = 200_000, 16, 32768 // chunks of 4 MiB, 7 chunk rows
	for _, comp := range []string{"zlib", "none"} {
		path := filepath.Join(t.TempDir(), comp+".zarr")
		writeStore(t, path, rows, d, chunkRows, comp)
		for _, o := range []Options{{Domain: "domain", Label: "label"}, {Features: []string{"c3", "c7"}}} {
			src, err := NewSource(path, o)
			require.NoError(t, err)
			got, bound := sourcetest.PassAlloc(t, src), src.PassBytes()
			t.Logf("%s, %d features: a pass allocates %.1f MB, PassBytes %.1f MB", comp, len(src.Schema().Features), float64(got)/1e6, float64(bound)/1e6)
			require.LessOrEqual(t, got, uint64(bound), "%s %+v", comp, o)
			require.Greater(t, float64(got), 0.5*float64(bound), "%s %+v", comp, o)
		}
	}
}

// TestZstdBomb: a chunk of a few hundred bytes that zstd decodes to 256
// MiB is refused at the chunk bound, without allocating what it claims.
func TestZstdBomb(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	bomb := enc.EncodeAll(make([]byte, 256<<20), nil)
	t.Logf("%d bytes of zstd", len(bomb))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = zarr.Decompress(&zarr.Codec{ID: "zstd"}, bomb, 0, 1<<20)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))
	_, err = zarr.Decompress(&zarr.Codec{ID: "zstd"}, bomb, 1<<20, 1<<20)
	require.Error(t, err)
}
