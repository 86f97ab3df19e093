package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/toy"
)

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// writeCSV writes a toy classification data set with a header and domain and
// label columns.
func writeToyCSV(t *testing.T, dir string, ds *dataset.Dataset) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("patient,population")
	for j := 0; j < ds.D(); j++ {
		fmt.Fprintf(&b, ",CD%d", j+1)
	}
	b.WriteString("\n")
	for i := 0; i < ds.N(); i++ {
		fmt.Fprintf(&b, "%s,%s", ds.DomainNames[ds.Domain[i]], ds.ClassNames[ds.Label[i]])
		for _, v := range ds.X.RawRowView(i) {
			fmt.Fprintf(&b, ",%g", v)
		}
		b.WriteString("\n")
	}
	path := filepath.Join(dir, "cells.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func TestFitReportJSON(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 80, Seed: 1})
	path := writeToyCSV(t, dir, ds)
	for _, solver := range []string{"nystrom", "rff", "exact"} {
		model := filepath.Join(dir, solver+".dica")
		out, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population",
			"--solver", solver, "--rank", "40", "--components", "4", "--lambda", "0.1", "--report", "json", "--out", model, "--quiet")
		require.Equal(t, 0, code, errs)
		var rep map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		for _, k := range []string{"n", "d", "domains", "classes", "method", "solver", "form", "eigenvalues",
			"components_positive", "sigma", "sigma_y", "seconds", "distributional_variance_input", "distributional_variance_projected"} {
			require.Contains(t, rep, k)
		}
		require.EqualValues(t, ds.N(), rep["n"])
		require.EqualValues(t, 4, rep["domains"])
		require.EqualValues(t, 3, rep["classes"])
		require.EqualValues(t, 2, rep["components_positive"], "3 classes give 2 components")
		require.Len(t, rep["eigenvalues"], 4)

		// Transform keeps domain and label beside the components.
		zpath := filepath.Join(dir, solver+"_z.csv")
		_, errs, code = runCmd(t, "transform", "--model", model, "--data", path, "--domain", "patient",
			"--label", "population", "--out", zpath, "--quiet")
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(zpath)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		require.Len(t, lines, ds.N()+1)
		require.Equal(t, "domain,label,CD1,CD2,CD3,CD4,CD5,DICA1,DICA2", lines[0])
		require.True(t, strings.HasPrefix(lines[1], ds.DomainNames[ds.Domain[0]]+","+ds.ClassNames[ds.Label[0]]+","))
	}
}

func TestAccumulateMergeEqualsFit(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 60, Seed: 2})
	// One CSV per domain: the shards.
	var files []string
	for g, name := range ds.DomainNames {
		var rows []int
		for i, d := range ds.Domain {
			if d == g {
				rows = append(rows, i)
			}
		}
		sub := ds.Subset(rows)
		sub.Compact()
		sdir := filepath.Join(dir, name)
		require.NoError(t, os.Mkdir(sdir, 0o755))
		p := writeToyCSV(t, sdir, sub)
		np := filepath.Join(dir, name+".csv")
		require.NoError(t, os.Rename(p, np))
		files = append(files, np)
	}
	common := []string{"--label", "population", "--features", "CD1,CD2,CD3,CD4,CD5", "--rank", "30", "--lambda", "0.05", "--components", "3", "--quiet"}
	all := filepath.Join(dir, "*.csv")
	out, errs, code := runCmd(t, append([]string{"fit", "--data", all, "--report", "json"}, common...)...)
	require.Equal(t, 0, code, errs)
	var whole map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &whole))
	var parts []string
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("part%d.stats", i))
		_, errs, code := runCmd(t, append([]string{"accumulate", "--data", f, "--sample-data", all, "--out", p}, common...)...)
		require.Equal(t, 0, code, errs)
		parts = append(parts, p)
	}
	out, errs, code = runCmd(t, append([]string{"merge", "--report", "json", "--out", filepath.Join(dir, "m.dica")}, parts...)...)
	require.Equal(t, 0, code, errs)
	var merged map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &merged))
	we, me := whole["eigenvalues"].([]any), merged["eigenvalues"].([]any)
	require.Len(t, me, len(we))
	for j := 0; j < int(whole["components_positive"].(float64)); j++ {
		require.InEpsilon(t, we[j].(float64), me[j].(float64), 1e-10)
	}
	// Statistics from another configuration do not merge.
	other := filepath.Join(dir, "other.stats")
	_, errs, code = runCmd(t, append([]string{"accumulate", "--data", files[0], "--sample-data", all, "--out", other, "--seed", "9"}, common...)...)
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "merge", parts[0], other)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "different configurations")
}

// TestFCSDirectory fits on a directory of FCS files written by the writer,
// one domain per file, and writes the projection back as FCS.
func TestFCSDirectory(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 100, Seed: 3})
	params := []fcs.Param{{Name: "FSC-A"}, {Name: "SSC-A"}, {Name: "FL1-A", Label: "CD3"}, {Name: "FL2-A", Label: "CD4"}, {Name: "FL3-A", Label: "CD8"}}
	for g, name := range ds.DomainNames {
		var rows []int
		for i, d := range ds.Domain {
			if d == g {
				rows = append(rows, i)
			}
		}
		ev := mat.NewDense(len(rows), ds.D(), nil)
		for i, p := range rows {
			row := ds.X.RawRowView(p)
			for j, v := range row {
				ev.Set(i, j, 1000*(v+10))
			}
		}
		require.NoError(t, fcs.WriteFile(filepath.Join(dir, name+".fcs"), &fcs.DataSet{Params: params, Events: ev}))
	}
	model := filepath.Join(dir, "u.dica")
	out, errs, code := runCmd(t, "fit", "--method", "udica", "--data", filepath.Join(dir, "*.fcs"),
		"--channels", "CD3,CD4,CD8", "--transform", "asinh:150", "--rank", "50", "--components", "2", "--report", "json", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.EqualValues(t, 3, rep["domains"])
	require.EqualValues(t, 3, rep["d"])
	require.EqualValues(t, ds.N(), rep["n"])

	zpath := filepath.Join(dir, "z.fcs")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", filepath.Join(dir, "d*.fcs"),
		"--channels", "CD3,CD4,CD8", "--transform", "asinh:150", "--out", zpath, "--quiet")
	require.Equal(t, 0, code, errs)
	f, err := fcs.Open(zpath)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, ds.N(), f.NumEvents())
	require.Equal(t, []string{"CD3", "CD4", "CD8", "DICA1", "DICA2", "DOMAIN"}, f.Names())

	out, errs, code = runCmd(t, "info", "--json", zpath)
	require.Equal(t, 0, code, errs)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	for _, k := range []string{"version", "datatype", "byteorder", "events", "parameters", "first_event", "last_event"} {
		require.Contains(t, info, k)
	}
	require.Equal(t, "FCS3.1", info["version"])
	require.EqualValues(t, ds.N(), info["events"])
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nope"}, 2, "unknown command"},
		{[]string{"fit"}, 2, "no data"},
		{[]string{"fit", "--data", "/nonexistent/*.csv"}, 1, "nonexistent"},
		{[]string{"fit", "--data", "x.csv", "--method", "pca"}, 2, "--method"},
		{[]string{"fit", "--data", "x.csv", "--transform", "sqrt"}, 2, "sqrt"},
		{[]string{"transform", "--model", "m"}, 2, "--out"},
	}
	for _, c := range cases {
		_, errs, code := runCmd(t, c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, "%v", c.args)
	}
	out, _, code := runCmd(t, "help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "dica fit --data 'sample*.csv'")
	out, _, code = runCmd(t, "help", "fit")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--labels-ignore 0")
}

func TestDemoSmall(t *testing.T) {
	rows, err := demo(context.Background(), 1, 25)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for _, r := range rows {
		require.Greater(t, r.vals[0], 0.0)
		require.GreaterOrEqual(t, r.dvTest, 0.0)
	}
}

// dataDir returns the shared real-data folder, or skips the test.
func dataDir(t *testing.T, sub string) string {
	t.Helper()
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(root, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real data %s not found (set DICA_DATA): %v", dir, err)
	}
	return dir
}

// TestCyTOFEndToEnd fits supervised DICA on the 16 CyTOF samples, one
// domain per CSV file, with the label files and log1p, as the README shows.
func TestCyTOFEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 46 MB of CSV")
	}
	dir := dataDir(t, "multicenter16_cytof")
	out, errs, code := runCmd(t, "fit", "--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"),
		"--labels-ignore", "0", "--transform", "log1p", "--sigma", "1", "--rank", "50", "--report", "json", "--quiet")
	require.Equal(t, 0, code, errs)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.EqualValues(t, 693643, rep["n"])
	require.EqualValues(t, 16, rep["domains"])
	require.EqualValues(t, 4, rep["classes"])
	require.EqualValues(t, 8, rep["d"])
	require.EqualValues(t, 3, rep["components_positive"], "4 populations give 3 components")
	require.Less(t, rep["distributional_variance_projected"].(float64), rep["distributional_variance_input"].(float64))
}
