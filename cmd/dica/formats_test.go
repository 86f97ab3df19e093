package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/parquetio"
)

// TestTransformToAnnDataAndParquet writes one transform as CSV, as an
// AnnData store and as Parquet, reads the two back with their readers and
// compares them with the CSV, and fits again from each.
func TestTransformToAnnDataAndParquet(t *testing.T) {
	dir := t.TempDir()
	shards(t, dir)
	data, labels := filepath.Join(dir, "s[12].csv"), filepath.Join(dir, "l[12].csv")
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", data, "--labels", labels, "--transform", "asinh:5", "--rank", "20", "--sigma", "1", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	common := []string{"transform", "--model", model, "--data", data, "--labels", labels, "--quiet"}
	for _, out := range []string{"z.csv", "z.zarr", "z.parquet"} {
		_, errs, code = runCmd(t, append(common, "--out", filepath.Join(dir, out))...)
		require.Equal(t, 0, code, "%s: %s", out, errs)
	}
	withOrigin := readCSV(t, filepath.Join(dir, "z.csv"))
	want := dropOrigin(t, withOrigin) // domain,label,V1..V3,DICA1,DICA2
	require.Equal(t, []string{"domain", "label", "V1", "V2", "V3", "DICA1", "DICA2"}, want[0])

	// Parquet: the CSV's columns, the values bit for bit (the CSV writes
	// the raw values exactly and the components to 10 digits).
	ps, err := parquetio.NewSource([]string{filepath.Join(dir, "z.parquet")}, parquetio.Options{Domain: "domain", Label: "label"})
	require.NoError(t, err)
	require.Equal(t, []string{"event", "V1", "V2", "V3", "DICA1", "DICA2"}, ps.Schema().Features)
	ps, err = parquetio.NewSource([]string{filepath.Join(dir, "z.parquet")}, parquetio.Options{Domain: "source", Label: "label", Features: []string{"V1", "V2", "V3", "DICA1", "DICA2", "event"}})
	require.NoError(t, err)
	rows := collectRows(t, ps)
	require.Len(t, rows, len(want)-1)
	for i, r := range rows {
		require.Equal(t, withOrigin[i+1][0], r.domain, "source")
		require.Equal(t, withOrigin[i+1][1], strconv.FormatFloat(r.x[5], 'g', -1, 64), "event")
		require.Equal(t, want[i+1][1], r.label)
		for j := 0; j < 3; j++ {
			require.Equal(t, want[i+1][2+j], strconv.FormatFloat(r.x[j], 'g', -1, 64))
		}
		for j := 3; j < 5; j++ {
			require.Equal(t, want[i+1][2+j], strconv.FormatFloat(r.x[j], 'g', 10, 64))
		}
	}

	// AnnData: X is the model's inputs after preprocessing (asinh(x/5)),
	// obs the domain and label; the components are in obsm, which the
	// command can fit from again.
	zs, err := anndata.NewSource(filepath.Join(dir, "z.zarr"), anndata.Options{Domain: "obs:domain", Label: "obs:label"})
	require.NoError(t, err)
	require.Equal(t, []string{"V1", "V2", "V3"}, zs.Schema().Features)
	zr := collectRows(t, zs)
	require.Len(t, zr, len(want)-1)
	pre := collectRows(t, mustCSV(t, data, labels))
	for i, r := range zr {
		require.Equal(t, want[i+1][0], r.domain)
		require.Equal(t, want[i+1][1], r.label)
		require.Equal(t, pre[i].x, r.x, "row %d: X is not the preprocessed inputs", i)
	}
	// Fits from the store and from the Parquet file, naming the columns
	// or not (the outputs say which is which).
	for _, args := range [][]string{
		{"--data", filepath.Join(dir, "z.zarr"), "--domain", "obs:domain", "--label", "obs:label"},
		{"--data", filepath.Join(dir, "z.zarr")},
		{"--data", filepath.Join(dir, "z.parquet"), "--domain", "domain", "--label", "label", "--features", "V1,V2,V3", "--transform", "asinh:5"},
		{"--data", filepath.Join(dir, "z.parquet"), "--transform", "asinh:5"},
	} {
		out, errs, code := runCmd(t, append(append([]string{"fit"}, args...), "--rank", "20", "--sigma", "1", "--report", "json", "--out", filepath.Join(dir, "again.dica"), "--quiet")...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		require.Contains(t, out, `"n":300`)
	}
	// An --out that is a folder but not a Zarr store is refused, untouched.
	other := filepath.Join(dir, "notes.zarr")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "keep.txt"), []byte("mine"), 0o644))
	_, errs, code = runCmd(t, append(common, "--out", other)...)
	require.Equal(t, 2, code, errs)
	b, err := os.ReadFile(filepath.Join(other, "keep.txt"))
	require.NoError(t, err)
	require.Equal(t, "mine", string(b))
	// h5ad is explained, not attempted.
	_, errs, code = runCmd(t, append(common, "--out", filepath.Join(dir, "z.h5ad"))...)
	require.Equal(t, 2, code)
	require.Contains(t, errs, `anndata.read_zarr(`)
}

type row struct {
	domain, label string
	x             []float64
}

func collectRows(t *testing.T, src dataset.Source) []row {
	t.Helper()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	var out []row
	var b dataset.Block
	for {
		k, err := r.Read(&b, 100)
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		for i := 0; i < k; i++ {
			w := row{domain: r.Domains()[b.Domain[i]], x: append([]float64(nil), b.Row(i)...)}
			if b.Label != nil {
				w.label = r.Classes()[b.Label[i]]
			}
			out = append(out, w)
		}
	}
}

// mustCSV opens the CSV data with their label files, preprocessed with
// asinh(x/5) as the test's model.
func mustCSV(t *testing.T, data, labels string) dataset.Source {
	t.Helper()
	df := dataFlags{data: listFlag{data}, labels: listFlag{labels}, transform: "asinh:5", header: "auto"}
	src, err := df.source(nil)
	require.NoError(t, err)
	return src
}
