package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/toy"
)

// TestMergeOverlappingShards accumulates a shard of samples 1 and 2 and one
// of samples 2 and 3: their merge is refused, naming both files and sample
// 2, and writes no model; shards of samples 1+2 and 3 merge.
func TestMergeOverlappingShards(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	var files []string
	var sizes []int
	for g := range ds.DomainNames {
		var rows []int
		for i, d := range ds.Domain {
			if d == g {
				rows = append(rows, i)
			}
		}
		sub := ds.Subset(rows)
		sub.Compact()
		sdir := filepath.Join(dir, fmt.Sprint(g))
		require.NoError(t, os.Mkdir(sdir, 0o755))
		np := filepath.Join(dir, fmt.Sprintf("sample%d.csv", g+1))
		require.NoError(t, os.Rename(writeToyCSV(t, sdir, sub), np))
		files, sizes = append(files, np), append(sizes, len(rows))
	}
	all := filepath.Join(dir, "sample*.csv")
	plan := filepath.Join(dir, "fit.plan")
	_, errs, code := runCmd(t, "plan", "--data", all, "--label", "population", "--features", "CD1,CD2,CD3,CD4,CD5", "--rank", "20", "--out", plan, "--quiet")
	require.Equal(t, 0, code, errs)
	acc := func(out string, data ...string) {
		t.Helper()
		accumulateShard(t, plan, out, []string{"--label", "population"}, data...)
	}
	a, b, c := filepath.Join(dir, "A.stats"), filepath.Join(dir, "B.stats"), filepath.Join(dir, "C.stats")
	acc(a, files[0], files[1])
	acc(b, files[1], files[2])
	acc(c, files[2])
	model := filepath.Join(dir, "m.dica")
	_, errs, code = runCmd(t, "merge", a, b, "--out", model)
	require.Equal(t, 1, code)
	require.Contains(t, errs, fmt.Sprintf("%s and %s both hold the %d cells of domain %q: each cell must be merged once", b, a, sizes[1], "sample2"))
	require.NoFileExists(t, model)

	_, errs, code = runCmd(t, "merge", a, c, "--out", model)
	require.Equal(t, 0, code, errs)
	require.FileExists(t, model)
}

// TestMergeOverlappingFiles: with the samples in a column, each file holds
// part of every sample. A shard of files 1 and 2 and one of file 2 share
// file 2's cells of every sample, though neither holds a whole sample the
// other holds: their merge is refused; shards of files 1+2 and 3 merge.
func TestMergeOverlappingFiles(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 6})
	var files []string
	for f := range 3 {
		var rows []int
		for i := range ds.N() {
			if i%3 == f {
				rows = append(rows, i)
			}
		}
		sub := ds.Subset(rows)
		sdir := filepath.Join(dir, fmt.Sprint(f))
		require.NoError(t, os.Mkdir(sdir, 0o755))
		np := filepath.Join(dir, fmt.Sprintf("part%d.csv", f+1))
		require.NoError(t, os.Rename(writeToyCSV(t, sdir, sub), np))
		files = append(files, np)
	}
	plan := filepath.Join(dir, "fit.plan")
	_, errs, code := runCmd(t, "plan", "--data", filepath.Join(dir, "part*.csv"), "--domain", "patient", "--label", "population", "--rank", "20", "--out", plan, "--quiet")
	require.Equal(t, 0, code, errs)
	acc := func(out string, data ...string) {
		t.Helper()
		accumulateShard(t, plan, out, []string{"--domain", "patient", "--label", "population"}, data...)
	}
	a, b, c := filepath.Join(dir, "A.stats"), filepath.Join(dir, "B.stats"), filepath.Join(dir, "C.stats")
	acc(a, files[0], files[1])
	acc(b, files[1])
	acc(c, files[2])
	model := filepath.Join(dir, "m.dica")
	_, errs, code = runCmd(t, "merge", a, b, "--out", model)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "each cell must be merged once")
	require.NoFileExists(t, model)

	_, errs, code = runCmd(t, "merge", a, c, "--out", model)
	require.Equal(t, 0, code, errs)
	require.FileExists(t, model)
}

// TestFitManyClassesRefused fits 12,000 cells with a label of their own
// under --max-memory 500M: refused in the pass over the data, with the
// number of classes that fit, and no model written.
func TestFitManyClassesRefused(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("sample,population,CD1,CD2,CD3\n")
	for i := 0; i < 12000; i++ {
		fmt.Fprintf(&b, "s%d,p%d,%d,%g,%g\n", i%4, i, i%97, float64(i%13)/7, float64(i%31)/3)
	}
	data := filepath.Join(dir, "cells.csv")
	require.NoError(t, os.WriteFile(data, []byte(b.String()), 0o644))
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", data, "--domain", "sample", "--label", "population", "--sigma", "1",
		"--max-memory", "500M", "--out", model, "--quiet")
	require.Equal(t, 2, code, errs)
	require.Regexp(t, `the data have at least \d+ classes .*; at most \d+ classes fit in the budget: merge or leave out classes, or raise --max-memory`, errs)
	require.NoFileExists(t, model)
}

// TestFitNoSignalRefused fits settings without signal: each is refused
// with its reason, and no model is written (before: exit 0 with models of
// 0 components, of noise components, or of eigenvalues of 1e-307).
func TestFitNoSignalRefused(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 5})
	data := writeToyCSV(t, dir, ds)
	var same strings.Builder
	same.WriteString("patient,population,CD1,CD2\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&same, "p%d,c%d,1,2\n", i%3, i%2)
	}
	identical := filepath.Join(dir, "same.csv")
	require.NoError(t, os.WriteFile(identical, []byte(same.String()), 0o644))
	for _, c := range []struct {
		data string
		args []string
		want string
	}{
		{identical, []string{"--solver", "exact"}, "the variance of the features that the labels explain is 0"},
		{data, []string{"--epsilon", "1e308"}, "the regularization overwhelms the data (lambda = 0, epsilon = 1e+308"},
		{data, []string{"--solver", "rff", "--sigma", "1e-300"}, "the kernel rbf(sigma=1e-300) is numerically the identity on the data"},
		{data, []string{"--lambda", "1e308"}, "the regularization overwhelms the data (lambda = 1e+308"},
	} {
		model := filepath.Join(dir, "m.dica")
		args := append([]string{"fit", "--data", c.data, "--domain", "patient", "--label", "population", "--rank", "30",
			"--out", model, "--quiet"}, c.args...)
		_, errs, code := runCmd(t, args...)
		require.Equal(t, 1, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, "the fit has no signal: ", c.args)
		require.Contains(t, errs, c.want, c.args)
		require.NoFileExists(t, model)
	}
}

// accumulateShard runs dica accumulate with the plan on the data files
// (and the flags given) into out, and requires it to succeed.
func accumulateShard(t *testing.T, plan, out string, flags []string, data ...string) {
	t.Helper()
	args := append([]string{"accumulate", "--plan", plan, "--out", out, "--quiet"}, flags...)
	for _, d := range data {
		args = append(args, "--data", d)
	}
	_, errs, code := runCmd(t, args...)
	require.Equal(t, 0, code, errs)
}
