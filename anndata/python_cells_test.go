package anndata

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

const readCellsScript = `
import json, sys, anndata
a = anndata.read_zarr(sys.argv[1])
json.dump({
    "obs_names": list(a.obs_names),
    "obs_columns": list(a.obs.columns),
    "population_dtype": str(a.obs["population"].dtype),
    "population_categories": list(a.obs["population"].cat.categories),
    "population": [str(v) for v in a.obs["population"]],
    "confidence_dtype": str(a.obs["confidence"].dtype),
    "confidence": a.obs["confidence"].tolist(),
    "var_columns": list(a.var.columns),
    "preprocessing": list(a.var["preprocessing"]),
    "role": list(a.var["role"]),
    "uns": {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in a.uns["dica"].items()},
}, sys.stdout)
`

// TestPythonReadsCells: anndata.read_zarr opens a store written by
// WriteCells: the cells' names from their sources and rows, the extra
// categorical and numeric obs columns, the var columns and the uns
// strings, as written.
func TestPythonReadsCells(t *testing.T) {
	longtest.Skip(t) // runs Python: in the long suite, which CI runs with python3-anndata installed
	needPython(t)
	const n = 500
	f := newCellsFixture(n)
	store := filepath.Join(t.TempDir(), "cells.zarr")
	f.write(t, store, f.options(), true, []int{100, 33})
	var got struct {
		ObsNames             []string `json:"obs_names"`
		ObsColumns           []string `json:"obs_columns"`
		PopulationDtype      string   `json:"population_dtype"`
		PopulationCategories []string `json:"population_categories"`
		Population           []string
		ConfidenceDtype      string `json:"confidence_dtype"`
		Confidence           []float64
		VarColumns           []string `json:"var_columns"`
		Preprocessing        []string
		Role                 []string
		Uns                  map[string]any
	}
	require.NoError(t, json.Unmarshal(runPython(t, readCellsScript, store), &got))
	require.Equal(t, []string{"domain", "label", "population", "confidence"}, got.ObsColumns)
	require.Equal(t, "category", got.PopulationDtype)
	require.Equal(t, f.pops, got.PopulationCategories)
	require.Equal(t, "float64", got.ConfidenceDtype)
	require.Len(t, got.ObsNames, n)
	for i := 0; i < n; i++ {
		require.Equal(t, f.sources[f.file[i]]+":"+strconv.FormatInt(f.event[i], 10), got.ObsNames[i], "cell %d", i)
		require.Equal(t, f.pops[f.pop[i]], got.Population[i], "cell %d", i)
		require.Equal(t, math.Float64bits(f.conf[i]), math.Float64bits(got.Confidence[i]), "cell %d", i)
	}
	require.Equal(t, []string{"preprocessing", "role"}, got.VarColumns)
	require.Equal(t, []string{"asinh", "asinh", "none"}, got.Preprocessing)
	require.Equal(t, []string{"raw", "raw", "input"}, got.Role)
	require.Equal(t, map[string]any{"method": "dica", "sigma": 2.0, "digest": "sha256:ab", "layout": testLayout, "preprocessing": testPrep}, got.Uns)
}

const writeUnsScript = `
import sys, numpy as np, anndata
a = anndata.AnnData(X=np.zeros((3, 2), dtype=np.float32))
a.uns["dica"] = {"method": "dica", "layout": '{"columns": ["é", "✓"]}', "sigma": 1.5, "eigenvalues": np.array([0.5, 0.25])}
a.uns["other"] = "x"
a.write_zarr(sys.argv[1])
anndata.AnnData(X=np.zeros((3, 2), dtype=np.float32)).write_zarr(sys.argv[2])
`

// TestReadPythonUns: ReadDicaUns reads the strings of uns["dica"] of a
// store Python's anndata wrote, and nothing of a store without it.
func TestReadPythonUns(t *testing.T) {
	longtest.Skip(t) // runs Python: in the long suite, which CI runs with python3-anndata installed
	needPython(t)
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.zarr"), filepath.Join(dir, "without.zarr")
	runPython(t, writeUnsScript, with, without)
	m, err := ReadDicaUns(with)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"method": "dica", "layout": `{"columns": ["é", "✓"]}`}, m)
	m, err = ReadDicaUns(without)
	require.NoError(t, err)
	require.Nil(t, m)
}
