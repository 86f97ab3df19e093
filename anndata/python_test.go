package anndata

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/tabletest"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

// python is the interpreter with Debian's python3-anndata and
// python3-zarr (anndata 0.8, zarr 2.13).
const python = "/usr/bin/python3"

// needPython skips the test when python3-anndata is not installed.
func needPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import anndata, zarr, numcodecs; print(anndata.__version__, zarr.__version__)").CombinedOutput()
	if err != nil {
		t.Skipf("skipped: %s cannot import anndata and zarr (apt-get install -y python3-anndata python3-zarr): %v: %s", python, err, lastLine(out))
	}
	t.Logf("anndata, zarr: %s", strings.TrimSpace(string(out)))
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// runPython runs a script with arguments and returns its standard output.
func runPython(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "python: %s", stderr.String())
	return out
}

const readScript = `
import json, sys, anndata
a = anndata.read_zarr(sys.argv[1])
out = {
    "shape": list(a.shape),
    "x_dtype": str(a.X.dtype),
    "X": a.X.astype(float).tolist(),
    "var_names": list(a.var_names),
    "obs_names": list(a.obs_names),
    "obs_columns": list(a.obs.columns),
    "domain_dtype": str(a.obs["domain"].dtype),
    "domain": [str(v) for v in a.obs["domain"]],
    "label_dtype": str(a.obs["label"].dtype),
    "label": [str(v) for v in a.obs["label"]],
    "obsm_keys": list(a.obsm.keys()),
    "obsm": a.obsm["X_dica"].tolist(),
    "uns": {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in a.uns["dica"].items()},
}
json.dump(out, sys.stdout)
`

// TestPythonReadsStore: anndata.read_zarr opens a store written here and
// finds X, obs (names, domain and label as categoricals), var_names,
// obsm["X_dica"] and uns["dica"] holding the values written, bit for bit.
func TestPythonReadsStore(t *testing.T) {
	longtest.Skip(t) // runs Python: in the long suite, which CI runs with python3-anndata installed
	needPython(t)
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 300, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	want, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	uns := &Uns{Method: "dica", Sigma: 1.5, Rank: 500, Eigenvalues: []float64{0.01623, 0.00612, 1.0 / 3}, Digest: "sha256:0f1e"}
	for _, f32 := range []bool{false, true} {
		store := filepath.Join(t.TempDir(), "cells.zarr")
		tabletest.Transform(t, src, Create, store, WriterOptions{Vars: channels, Components: 2, Float32: f32, ChunkRows: 100, Uns: uns}, 256)
		var got struct {
			Shape       []int
			XDtype      string `json:"x_dtype"`
			X           [][]float64
			VarNames    []string `json:"var_names"`
			ObsNames    []string `json:"obs_names"`
			ObsColumns  []string `json:"obs_columns"`
			DomainDtype string   `json:"domain_dtype"`
			Domain      []string
			LabelDtype  string `json:"label_dtype"`
			Label       []string
			ObsmKeys    []string `json:"obsm_keys"`
			Obsm        [][]float64
			Uns         map[string]any
		}
		require.NoError(t, json.Unmarshal(runPython(t, readScript, store), &got))
		n := want.N()
		require.Equal(t, []int{n, len(channels)}, got.Shape)
		require.Equal(t, channels, got.VarNames)
		require.Equal(t, []string{"domain", "label"}, got.ObsColumns)
		require.Equal(t, "category", got.DomainDtype)
		require.Equal(t, "category", got.LabelDtype)
		require.Equal(t, []string{"X_dica"}, got.ObsmKeys)
		if f32 {
			require.Equal(t, "float32", got.XDtype)
		} else {
			require.Equal(t, "float64", got.XDtype)
		}
		perDomain := map[string]int{}
		for i := 0; i < n; i++ {
			dom := want.DomainNames[want.Domain[i]]
			require.Equal(t, dom, got.Domain[i])
			require.Equal(t, want.ClassNames[want.Label[i]], got.Label[i])
			require.Equal(t, dom+":"+itoa(perDomain[dom]), got.ObsNames[i])
			perDomain[dom]++
			x := want.X.RawRowView(i)
			for j, v := range x {
				if f32 {
					v = float64(float32(v))
				}
				require.Equal(t, math.Float64bits(v), math.Float64bits(got.X[i][j]), "X[%d, %d]", i, j)
			}
			z := tabletest.Project(x)
			for j := range z {
				require.Equal(t, math.Float64bits(z[j]), math.Float64bits(got.Obsm[i][j]), "obsm[%d, %d]", i, j)
			}
		}
		require.Equal(t, "dica", got.Uns["method"])
		require.Equal(t, 1.5, got.Uns["sigma"])
		require.Equal(t, 500.0, got.Uns["rank"])
		require.Equal(t, "sha256:0f1e", got.Uns["digest"])
		require.Equal(t, []any{0.01623, 0.00612, 1.0 / 3}, got.Uns["eigenvalues"])
	}
}

func itoa(i int) string { return jsonNumber(i) }

func jsonNumber(i int) string { b, _ := json.Marshal(i); return string(b) }

const writeScript = `
import json, sys, numpy as np, pandas as pd, anndata, zarr, numcodecs
codecs = {
    "default": None,
    "blosc-lz4-noshuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.NOSHUFFLE),
    "blosc-blosclz": numcodecs.Blosc(cname="blosclz", clevel=9, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zstd": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zlib": numcodecs.Blosc(cname="zlib", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-small-blocks": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE, blocksize=256),
    "zlib": numcodecs.Zlib(level=5),
    "gzip": numcodecs.GZip(level=5),
    "bz2": numcodecs.BZ2(level=5),
    "lz4": numcodecs.LZ4(),
    "zstd": numcodecs.Zstd(level=3),
    "none": "none",
}
rng = np.random.default_rng(42)
n = 3000
X = (rng.standard_normal((n, 5)) * 100).astype(np.float32)
X[:, 4] = np.round(X[:, 4])
sample = np.array(["p1", "p2", "p10"])[rng.integers(0, 3, n)]
cell = np.array(["T cell", "B cell", "NK", "ungated"])[rng.integers(0, 4, n)]
obs = pd.DataFrame({
    "sample": pd.Categorical(sample),
    "cell_type": pd.Categorical(cell),
    "age": rng.uniform(20, 80, n),
    "batch": np.array(["b%d" % (i % 3) for i in range(n)], dtype=object),
    "cluster": rng.integers(0, 9, n),
}, index=["c%d" % i for i in range(n)])
var = pd.DataFrame(index=["CD45", "CD3", "CD19", "CD56", "DNA"])
default = zarr.storage.default_compressor
comps = {}
for path, codec in zip(sys.argv[1::2], sys.argv[2::2]):
    c = codecs[codec]
    zarr.storage.default_compressor = None if c == "none" else (default if c is None else c)
    a = anndata.AnnData(X=X, obs=obs, var=var)
    a.write_zarr(path, chunks=(701, 3))
    x = zarr.open(path + "/X")
    comps[codec] = x.compressor.get_config() if x.compressor else None
json.dump({"X": X.astype(float).tolist(), "sample": list(sample), "cell": list(cell),
           "age": obs["age"].tolist(), "batch": list(obs["batch"]), "cluster": obs["cluster"].tolist(),
           "compressor": comps}, sys.stdout)
`

// TestReadPythonStore: stores written by Python anndata (with zarr's
// default blosc compression and with every other compressor numcodecs
// offers here) read back here to the values Python wrote.
func TestReadPythonStore(t *testing.T) {
	longtest.Skip(t) // runs Python: in the long suite, which CI runs with python3-anndata installed
	needPython(t)
	codecs := []string{"default", "blosc-lz4-noshuffle", "blosc-blosclz", "blosc-zstd", "blosc-zlib", "blosc-small-blocks", "zlib", "gzip", "bz2", "lz4", "zstd", "none"}
	dir := t.TempDir()
	var args []string
	for _, c := range codecs {
		args = append(args, filepath.Join(dir, c+".zarr"), c)
	}
	var want struct {
		X          [][]float64
		Sample     []string
		Cell       []string
		Age        []float64
		Batch      []string
		Cluster    []int
		Compressor map[string]map[string]any
	}
	require.NoError(t, json.Unmarshal(runPython(t, writeScript, args...), &want))
	n := len(want.X)
	for _, codec := range codecs {
		t.Run(codec, func(t *testing.T) {
			store := filepath.Join(dir, codec+".zarr")
			t.Logf("X compressor: %v", want.Compressor[codec])
			src, err := NewSource(store, Options{Domain: "obs:sample", Label: "obs:cell_type", LabelsIgnore: []string{"ungated"}})
			require.NoError(t, err)
			require.Equal(t, []string{"CD45", "CD3", "CD19", "CD56", "DNA"}, src.Schema().Features)
			ds, err := dataset.Collect(context.Background(), src)
			require.NoError(t, err)
			k := 0
			for i := 0; i < n; i++ {
				if want.Cell[i] == "ungated" {
					continue
				}
				require.Equal(t, want.X[i], ds.X.RawRowView(k), "row %d", i)
				require.Equal(t, want.Sample[i], ds.DomainNames[ds.Domain[k]], "row %d", i)
				require.Equal(t, want.Cell[i], ds.ClassNames[ds.Label[k]], "row %d", i)
				k++
			}
			require.Equal(t, k, ds.N())
			require.Equal(t, k, src.Len())

			// A string column as the domain, an integer column as the
			// label, a float column as a target, features by name.
			src, err = NewSource(store, Options{Domain: "batch", Target: []string{"age"}, Features: []string{"DNA", "CD3"}})
			require.NoError(t, err)
			ds, err = dataset.Collect(context.Background(), src)
			require.NoError(t, err)
			require.Equal(t, n, ds.N())
			for i := 0; i < n; i++ {
				require.Equal(t, []float64{want.X[i][4], want.X[i][1]}, ds.X.RawRowView(i))
				require.Equal(t, want.Batch[i], ds.DomainNames[ds.Domain[i]])
				require.Equal(t, want.Age[i], ds.Target.At(i, 0))
			}
			src, err = NewSource(store, Options{Label: "cluster"})
			require.NoError(t, err)
			ds, err = dataset.Collect(context.Background(), src)
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				require.Equal(t, jsonNumber(want.Cluster[i]), ds.ClassNames[ds.Label[i]])
			}
		})
	}
}
