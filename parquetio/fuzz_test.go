package parquetio

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	acompress "github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/tabletest"
)

// fuzzSeeds returns small valid files: one written here (dictionary
// strings, snappy) and one written by Apache Arrow (many pages and row
// groups, float32, integers, an optional column).
func fuzzSeeds(t testing.TB) [][]byte {
	dir := t.TempDir()
	p := filepath.Join(dir, "ours.parquet")
	w, err := Create(p, WriterOptions{Vars: []string{"a", "b"}, Components: []string{"z"}, RowGroupRows: 8})
	require.NoError(t, err)
	b := dataset.Block{Rows: 20, D: 2, Domain: make([]int, 20), Label: make([]int, 20)}
	z := mat.NewDense(20, 1, nil)
	for i := 0; i < 20; i++ {
		b.X = append(b.X, float64(i), -float64(i)/3)
		b.Domain[i], b.Label[i] = i%2, i%3
		z.Set(i, 0, float64(i*i))
	}
	require.NoError(t, w.WriteBlock(&b, z, []string{"d0", "d1"}, []string{"x", "y", "z"}))
	require.NoError(t, w.Commit())
	ours, err := os.ReadFile(p)
	require.NoError(t, err)
	q := filepath.Join(dir, "arrow.parquet")
	c := arrowData(60)
	c.opt[7] = math.NaN()
	writeArrow(t, q, c, acompress.Codecs.Uncompressed, 25)
	theirs, err := os.ReadFile(q)
	require.NoError(t, err)
	return [][]byte{ours, theirs}
}

// FuzzParquet feeds the reader arbitrary files: each is read or refused
// with an error, never a panic, and what is read is finite.
func FuzzParquet(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"f.parquet": &fstest.MapFile{Data: data}}
		for _, o := range []Options{{MaxPageBytes: 1 << 20}, {Label: "label", Domain: "domain", MaxPageBytes: 1 << 20}} {
			src, err := NewSourceFS(fsys, []string{"f.parquet"}, o)
			if err != nil {
				continue
			}
			tabletest.CheckRead(t, src)
		}
	})
}

// TestFuzzSeedsRead: the seeds read back (so the fuzzer starts from files
// that decode).
func TestFuzzSeedsRead(t *testing.T) {
	seeds := fuzzSeeds(t)
	src, err := NewSourceFS(fstest.MapFS{"f.parquet": {Data: seeds[0]}}, []string{"f.parquet"}, Options{Domain: "domain", Label: "label"})
	require.NoError(t, err)
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 20, ds.N())
	require.Equal(t, []float64{7, -7.0 / 3, 49}, ds.X.RawRowView(7))
	src, err = NewSourceFS(fstest.MapFS{"f.parquet": {Data: seeds[1]}}, []string{"f.parquet"}, Options{Features: []string{"f64"}})
	require.NoError(t, err)
	ds, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 60, ds.N())
}
