package anndata

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/tabletest"
)

var channels = tabletest.Channels

// fixture is this package's CSV fixture (see tabletest.WriteCSV).
var fixture = tabletest.CSV{Seed: 7, Stream: 11, PopStep: 7}

// readArray reads a whole array of a store (for checking what was written).
func readArray(t testing.TB, store, name string) ([]float64, []int64) {
	t.Helper()
	a, err := zarr.OpenArray(os.DirFS(store), name, name, zarr.Limits{})
	require.NoError(t, err)
	var out []float64
	w := int64(1)
	if len(a.Shape) == 2 {
		w = a.Shape[1]
		require.Equal(t, a.Shape[1], a.Chunks[1])
	}
	for ci := int64(0); ci < a.NumChunks(0); ci++ {
		idx := []int64{ci}
		if len(a.Shape) == 2 {
			idx = append(idx, 0)
		}
		c, err := a.ReadChunk(zarr.Limits{}, idx...)
		require.NoError(t, err)
		m := min(a.Chunks[0], a.Shape[0]-ci*a.Chunks[0]) * w
		for i := 0; i < int(m); i++ {
			out = append(out, c.Float(i))
		}
	}
	return out, a.Shape
}

// TestRoundTripCSV: CSV -> store -> Source gives the CSV's values bit for
// bit (float64) or rounded to float32, the same domains and labels in the
// same order; obsm holds the components bit for bit.
func TestRoundTripCSV(t *testing.T) {
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 1000, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	want, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	n := want.N()
	for _, tc := range []struct {
		name      string
		o         WriterOptions
		blockRows int
	}{
		{"float64 zlib", WriterOptions{Vars: channels, Components: 2}, 700},
		{"float32 gzip", WriterOptions{Vars: channels, Components: 2, Float32: true, Compression: "gzip", Level: 9, ChunkRows: 256}, 1000},
		{"float64 none, chunks of 7 rows", WriterOptions{Vars: channels, Components: 2, Compression: "none", ChunkRows: 7}, 333},
		{"one chunk", WriterOptions{Vars: channels, Components: 2, ChunkRows: 100000}, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "out.zarr")
			tabletest.Transform(t, src, Create, store, tc.o, tc.blockRows)
			got, err := NewSource(store, Options{Domain: "obs:domain", Label: "label"})
			require.NoError(t, err)
			require.Equal(t, n, got.Len())
			require.Equal(t, channels, got.Schema().Features)
			ds, err := dataset.Collect(context.Background(), got)
			require.NoError(t, err)
			wx := slicesClone(want.X.RawMatrix().Data)
			if tc.o.Float32 {
				for i, v := range wx {
					wx[i] = float64(float32(v))
				}
			}
			require.True(t, tabletest.SameBits(wx, ds.X.RawMatrix().Data), "X differs")
			require.Equal(t, want.DomainNames, ds.DomainNames)
			require.Equal(t, want.Domain, ds.Domain)
			require.Equal(t, want.ClassNames, ds.ClassNames)
			require.Equal(t, want.Label, ds.Label)
			// obsm: the components of the CSV's values, bit for bit.
			z, shape := readArray(t, store, "obsm/X_dica")
			require.Equal(t, []int64{int64(n), 2}, shape)
			var wz []float64
			for i := 0; i < n; i++ {
				wz = append(wz, tabletest.Project(want.X.RawRowView(i))...)
			}
			require.True(t, tabletest.SameBits(wz, z), "obsm differs")
			// No temporary folder is left beside the store.
			ents, err := os.ReadDir(filepath.Dir(store))
			require.NoError(t, err)
			require.Len(t, ents, 1)
		})
	}
}

func slicesClone(v []float64) []float64 { return append([]float64(nil), v...) }

// TestFeaturesAndIgnore: features chosen by var name in another order,
// labels ignored (Len counts the cells kept), one domain per store, and a
// transform applied after reading.
func TestFeaturesAndIgnore(t *testing.T) {
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 200, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	want, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	store := filepath.Join(dir, "cells.zarr")
	tabletest.Transform(t, src, Create, store, WriterOptions{Vars: channels, Components: 2}, 128)

	got, err := NewSource(store, Options{Features: []string{"CD19", "CD3"}, Label: "obs:label", LabelsIgnore: []string{"NK"},
		Transform: func(x []float64) {
			for j := range x {
				x[j] = math.Log1p(math.Abs(x[j]))
			}
		}})
	require.NoError(t, err)
	ds, err := dataset.Collect(context.Background(), got)
	require.NoError(t, err)
	require.Equal(t, []string{"cells"}, ds.DomainNames)
	var k int
	for p := 0; p < want.N(); p++ {
		if want.ClassNames[want.Label[p]] == "NK" {
			continue
		}
		x := want.X.RawRowView(p)
		require.Equal(t, math.Log1p(math.Abs(x[3])), ds.X.At(k, 0), "row %d", p)
		require.Equal(t, math.Log1p(math.Abs(x[0])), ds.X.At(k, 1), "row %d", p)
		require.Equal(t, want.ClassNames[want.Label[p]], ds.ClassNames[ds.Label[k]])
		k++
	}
	require.Equal(t, k, ds.N())
	require.Equal(t, k, got.Len())
	require.NotContains(t, ds.ClassNames, "NK")
}

// TestTargetsAndNumericLabel: real targets become numeric obs columns and
// read back as targets; a numeric label is written as float64.
func TestTargetsAndNumericLabel(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	ds, err := dataset.New(x, []string{"a", "a", "a", "b", "b", "b"})
	require.NoError(t, err)
	ds.Features = []string{"m1", "m2"}
	require.NoError(t, ds.SetTargets(mat.NewDense(6, 1, []float64{0.5, -1, 2, 1e-300, 7, 3}), []string{"age"}))
	store := filepath.Join(t.TempDir(), "t.zarr")
	w, err := Create(store, WriterOptions{Vars: ds.Features, Targets: []string{"age"}})
	require.NoError(t, err)
	r, _ := ds.Source().Open(context.Background())
	var b dataset.Block
	_, err = r.Read(&b, 10)
	require.NoError(t, err)
	require.NoError(t, w.WriteBlock(&b, nil, r.Domains(), nil))
	require.NoError(t, w.Commit())
	src, err := NewSource(store, Options{Domain: "domain", Target: []string{"age"}})
	require.NoError(t, err)
	got, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, ds.Target.RawMatrix().Data, got.Target.RawMatrix().Data)
	require.Equal(t, []string{"age"}, got.TargetNames)

	// Numeric labels: class names parsed as numbers.
	require.NoError(t, ds.SetLabels([]string{"1", "2", "1", "2.5", "1", "2"}))
	store2 := filepath.Join(t.TempDir(), "l.zarr")
	w, err = Create(store2, WriterOptions{Vars: ds.Features, NumericLabel: true})
	require.NoError(t, err)
	r, _ = ds.Source().Open(context.Background())
	_, err = r.Read(&b, 10)
	require.NoError(t, err)
	require.NoError(t, w.WriteBlock(&b, nil, r.Domains(), r.Classes()))
	require.NoError(t, w.Commit())
	v, _ := readArray(t, store2, "obs/label")
	require.Equal(t, []float64{1, 2, 1, 2.5, 1, 2}, v)
	src, err = NewSource(store2, Options{Label: "label"})
	require.NoError(t, err)
	got, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "2.5"}, got.ClassNames)
	require.Equal(t, []int{0, 1, 0, 2, 0, 1}, got.Label)
}

// TestAtomic: the destination is replaced only by Commit; Abort leaves it
// as it was; a folder that is not a Zarr store is never replaced.
func TestAtomic(t *testing.T) {
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 50, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	store := filepath.Join(dir, "a.zarr")
	tabletest.Transform(t, src, Create, store, WriterOptions{Vars: channels, Components: 2}, 64)
	before, _ := readArray(t, store, "X")

	// An aborted write leaves the store and no temporary folder.
	w, err := Create(store, WriterOptions{Vars: []string{"only"}})
	require.NoError(t, err)
	b := dataset.Block{Rows: 1, D: 1, X: []float64{42}, Domain: []int{0}}
	require.NoError(t, w.WriteBlock(&b, nil, []string{"d"}, nil))
	w.Abort()
	after, _ := readArray(t, store, "X")
	require.Equal(t, before, after)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		require.False(t, strings.Contains(e.Name(), ".tmp-"), e.Name())
	}

	// A committed write replaces it.
	w, err = Create(store, WriterOptions{Vars: []string{"only"}})
	require.NoError(t, err)
	require.NoError(t, w.WriteBlock(&b, nil, []string{"d"}, nil))
	require.NoError(t, w.Commit())
	after, shape := readArray(t, store, "X")
	require.Equal(t, []float64{42}, after)
	require.Equal(t, []int64{1, 1}, shape)
	require.Error(t, w.Commit(), "a second Commit")

	// A folder that is not a store, and a file, are refused.
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.Mkdir(plain, 0o777))
	_, err = Create(plain, WriterOptions{Vars: []string{"x"}})
	require.ErrorContains(t, err, "is not a Zarr store")
	_, err = Create(files[0], WriterOptions{Vars: []string{"x"}})
	require.ErrorContains(t, err, "is not a Zarr store")
	_, err = Create(filepath.Join(dir, "missing", "x.zarr"), WriterOptions{Vars: []string{"x"}})
	require.ErrorContains(t, err, "does not exist")
	// CheckOutput: an input inside the store, and the store itself.
	require.ErrorContains(t, CheckOutput(store, filepath.Join(store, "X", ".zarray")), "holds the input")
	require.ErrorContains(t, CheckOutput(store, store), "is also an input")
	require.NoError(t, CheckOutput(store, files[0]))
	require.NoError(t, CheckOutput(filepath.Join(dir, "new.zarr"), files[0]))
}

// TestWriterErrors: what a caller can get wrong is an error.
func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "e.zarr")
	_, err := Create(p, WriterOptions{})
	require.ErrorContains(t, err, "Vars is empty")
	_, err = Create(p, WriterOptions{Vars: []string{"a"}, Compression: "blosc"})
	require.ErrorContains(t, err, `compression "blosc"`)
	_, err = Create(p, WriterOptions{Vars: []string{"a"}, ObsmKey: "a/b"})
	require.ErrorContains(t, err, "obsm key")
	cases := []struct {
		name string
		b    *dataset.Block
		z    *mat.Dense
		doms []string
		want string
	}{
		{"nil block", nil, nil, []string{"d"}, "nil block"},
		{"short block", &dataset.Block{Rows: 2, D: 2, X: []float64{1, 2}, Domain: []int{0, 0}}, mat.NewDense(2, 1, nil), []string{"d"}, "block of 2 rows"},
		{"NaN", &dataset.Block{Rows: 1, D: 2, X: []float64{1, math.NaN()}, Domain: []int{0}}, mat.NewDense(1, 1, nil), []string{"d"}, `cell 0 (0-based), channel "b": value NaN is not finite`},
		{"Inf component", &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{0}}, mat.NewDense(1, 1, []float64{math.Inf(-1)}), []string{"d"}, "component 1: value -Inf"},
		{"float32 overflow", &dataset.Block{Rows: 1, D: 2, X: []float64{1, -1e300}, Domain: []int{0}}, mat.NewDense(1, 1, nil), []string{"d"}, "value -1e+300 is beyond the range of float32"},
		{"no components", &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{0}}, nil, []string{"d"}, "no components"},
		{"wrong components", &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{0}}, mat.NewDense(1, 3, nil), []string{"d"}, "want 1 columns"},
		{"domain out of range", &dataset.Block{Rows: 1, D: 2, X: []float64{1, 2}, Domain: []int{3}}, mat.NewDense(1, 1, nil), []string{"d"}, "domain index 3 out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(p, WriterOptions{Vars: []string{"a", "b"}, Components: 1, Float32: tc.name == "float32 overflow"})
			require.NoError(t, err)
			defer w.Abort()
			err = w.WriteBlock(tc.b, tc.z, tc.doms, nil)
			require.ErrorContains(t, err, tc.want)
			require.Error(t, w.Commit(), "Commit after a failed write")
			_, err = os.Stat(p)
			require.True(t, errors.Is(err, os.ErrNotExist), "nothing written")
		})
	}
}

// TestReaderErrors: malformed and unsupported stores are errors naming the
// store, the array, the row and the column, before large allocations.
func TestReaderErrors(t *testing.T) {
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 30, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	good := filepath.Join(dir, "good.zarr")
	tabletest.Transform(t, src, Create, good, WriterOptions{Vars: channels, Components: 2, ChunkRows: 16, Compression: "none"}, 64)

	copyStore := func(t *testing.T) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "s.zarr")
		require.NoError(t, os.CopyFS(dst, os.DirFS(good)))
		return dst
	}
	edit := func(t *testing.T, s, file, old, new string) {
		t.Helper()
		p := filepath.Join(s, file)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(b), old)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o666))
	}
	readAllRows := func(s string, o Options) error {
		src, err := NewSource(s, o)
		if err != nil {
			return err
		}
		_, err = dataset.Collect(context.Background(), src)
		return err
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, s string)
		o     Options
		want  string
	}{
		{"not a store", func(t *testing.T, s string) { os.Remove(filepath.Join(s, ".zgroup")) }, Options{}, "not an AnnData Zarr store"},
		{"NaN in X", func(t *testing.T, s string) {
			p := filepath.Join(s, "X", "1.0")
			b, _ := os.ReadFile(p)
			copy(b[8*(3*4+2):], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // row 19, column 2
			os.WriteFile(p, b, 0o666)
		}, Options{}, `X row 19 (0-based), column 2 (var "CD8"): value NaN is not finite`},
		{"huge shape", func(t *testing.T, s string) {
			edit(t, s, "X/.zarray", `"shape": [
        201,`, `"shape": [
        281474976710657,`)
		}, Options{}, "shape [281474976710657 4] out of range"},
		{"huge chunk", func(t *testing.T, s string) {
			edit(t, s, "X/.zarray", `"chunks": [
        16,`, `"chunks": [
        100000000,`)
		}, Options{}, "over the limit of 64.0 MiB; rechunk"},
		{"3 dimensions", func(t *testing.T, s string) {
			edit(t, s, "X/.zarray", `"shape": [`, `"shape": [1,`)
			edit(t, s, "X/.zarray", `"chunks": [`, `"chunks": [1,`)
		}, Options{}, "3 dimensions"},
		{"truncated chunk", func(t *testing.T, s string) { os.Truncate(filepath.Join(s, "X", "0.0"), 100) }, Options{}, "array X: chunk 0.0: chunk holds 100 bytes; want 512"},
		{"oversized chunk", func(t *testing.T, s string) {
			f, _ := os.OpenFile(filepath.Join(s, "X", "0.0"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(make([]byte, 10))
			f.Close()
		}, Options{}, "chunk 0.0 is larger than its 64 elements can be"},
		{"bad compressor", func(t *testing.T, s string) {
			edit(t, s, "X/.zarray", `"compressor": null`, `"compressor": {"id": "lzma"}`)
		}, Options{}, `compressor "lzma" is not supported`},
		{"filter", func(t *testing.T, s string) {
			edit(t, s, "X/.zarray", `"filters": null`, `"filters": [{"id": "delta"}]`)
		}, Options{}, `filter "delta" is not supported`},
		{"sparse X", func(t *testing.T, s string) {
			os.RemoveAll(filepath.Join(s, "X"))
			os.MkdirAll(filepath.Join(s, "X"), 0o777)
			os.WriteFile(filepath.Join(s, "X", ".zgroup"), []byte(`{"zarr_format": 2}`), 0o666)
			os.WriteFile(filepath.Join(s, "X", ".zattrs"), []byte(`{"encoding-type": "csr_matrix", "encoding-version": "0.1.0", "shape": [201, 4]}`), 0o666)
		}, Options{}, "X is a sparse matrix (csr_matrix); dica reads a dense matrix"},
		{"missing obs column", nil, Options{Label: "obs:cell_type"}, `no obs column "cell_type" (columns: "domain", "label")`},
		{"missing var", nil, Options{Features: []string{"CD45"}}, `no variable "CD45" in var (variables: "CD3", "CD4", "CD8", "CD19")`},
		{"code out of range", func(t *testing.T, s string) {
			p := filepath.Join(s, "obs", "label", "codes", "2")
			b, _ := os.ReadFile(p)
			b[4*5] = 9 // row 37
			os.WriteFile(p, b, 0o666)
		}, Options{Label: "label"}, "obs/label row 37 (0-based): code 9 out of range of 4 categories"},
		{"missing category", func(t *testing.T, s string) {
			p := filepath.Join(s, "obs", "domain", "codes", "0")
			b, _ := os.ReadFile(p)
			copy(b[4*3:], []byte{0xff, 0xff, 0xff, 0xff})
			os.WriteFile(p, b, 0o666)
		}, Options{Domain: "domain"}, "obs/domain row 3 (0-based): no value (code -1, a missing category)"},
		{"obs length", func(t *testing.T, s string) {
			edit(t, s, "obs/label/codes/.zarray", `"shape": [
        201`, `"shape": [
        120`)
		}, Options{Label: "label"}, "has shape [120]; want [201], one value per cell"},
		{"categorical target", nil, Options{Target: []string{"label"}}, "is categorical; a target must be numeric"},
		{"bad json", func(t *testing.T, s string) { os.WriteFile(filepath.Join(s, "X", ".zarray"), []byte("{"), 0o666) }, Options{}, "not valid array metadata"},
		{"zarr v3", func(t *testing.T, s string) { edit(t, s, "X/.zarray", `"zarr_format": 2`, `"zarr_format": 3`) }, Options{}, "zarr_format 3; only Zarr v2"},
		{"dtype", func(t *testing.T, s string) { edit(t, s, "X/.zarray", `"<f8"`, `"<c16"`) }, Options{}, `data type "<c16" is not supported`},
		{"layer", nil, Options{Layer: "counts"}, "no array layers/counts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := copyStore(t)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			err := readAllRows(s, tc.o)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, readAllRows(copyStore(t), Options{Domain: "domain", Label: "label"}))
}
