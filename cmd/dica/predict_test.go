package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/toy"
)

// TestPredictCommand gates toy cells with a model that carries a learner:
// the predicted column equals the library's Model.Predict of the same raw
// cells, the summary's counts and accuracy equal those of the output, a
// minimum confidence leaves cells unassigned, and a model without a learner
// is refused with what to do.
func TestPredictCommand(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 80, Seed: 21})
	path := writeToyCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population", "--rank", "40", "--sigma", "1",
		"--classifier", "svm", "--C", "0.1,1", "--out", model)
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "learner: svm on 2 input(s), 3 population(s)")
	require.Contains(t, errs, "inner score")

	out := filepath.Join(dir, "gated.csv")
	summary := filepath.Join(dir, "summary.json")
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient", "--label", "population",
		"--out", out, "--summary", summary, "--quiet")
	require.Equal(t, 0, code, errs)
	rows := readCSV(t, out)
	head := rows[0]
	require.Equal(t, []string{"predicted", "confidence"}, head[len(head)-2:])

	m, err := dica.Load(model)
	require.NoError(t, err)
	labels, conf, err := m.Predict(ds.X)
	require.NoError(t, err)
	require.Len(t, rows, ds.N()+1)
	right := 0
	for i, r := range rows[1:] {
		require.Equal(t, labels[i], r[len(head)-2], "cell %d", i)
		c, err := strconv.ParseFloat(r[len(head)-1], 64)
		require.NoError(t, err)
		require.InDelta(t, conf[i], c, 1e-5)
		if labels[i] == ds.ClassNames[ds.Label[i]] {
			right++
		}
	}
	b, err := os.ReadFile(summary)
	require.NoError(t, err)
	var rep gatingReport
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Samples, 4)
	require.EqualValues(t, ds.N(), rep.All.Cells)
	require.InDelta(t, float64(right)/float64(ds.N()), *rep.All.Accuracy, 1e-12)
	require.Greater(t, *rep.All.Accuracy, 0.6, "better than chance (3 populations)")
	require.Equal(t, append(append([]string(nil), m.Classifier().Classes...), "unassigned"), rep.Populations)

	// A minimum confidence above every cell's leaves them all unassigned.
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient",
		"--min-confidence", "1", "--out", filepath.Join(dir, "none.parquet"), "--summary", filepath.Join(dir, "s.csv"), "--quiet")
	require.Equal(t, 0, code, errs)
	s := readCSV(t, filepath.Join(dir, "s.csv"))
	last := s[len(s)-1]
	require.Equal(t, "all", last[0])
	require.Equal(t, strconv.Itoa(ds.N()), last[len(last)-2], "every cell unassigned")

	// The same cells read back from the Parquet output: predicted is not
	// taken as a channel.
	in, err := ingest.Open([]string{filepath.Join(dir, "none.parquet")}, ingest.Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"CD1", "CD2", "CD3", "CD4", "CD5"}, in.Source.Schema().Features)

	// A model without a learner.
	plain := filepath.Join(dir, "plain.dica")
	_, errs, code = runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population", "--rank", "40", "--out", plain, "--quiet")
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "predict", "--model", plain, "--data", path, "--domain", "patient", "--out", filepath.Join(dir, "x.csv"))
	require.Equal(t, 2, code)
	require.Contains(t, errs, "this model has no classifier: fit it with --classifier svm")
	require.NoFileExists(t, filepath.Join(dir, "x.csv"))
}

// TestFitLearnerCellsFromThePass fits a model with a learner and no grid
// on a file of more labelled cells than --max-train-cells: the learner's
// cells are drawn during the fit's own pass, and the classifier equals,
// bit for bit, the one the library trains on dataset.Sample's cells of the
// same file (the same seed and count) with the model's projection.
func TestFitLearnerCellsFromThePass(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 120, Seed: 5})
	path := writeToyCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population", "--rank", "40", "--sigma", "1",
		"--classifier", "svm", "--max-train-cells", "150", "--seed", "3", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	got := m.Classifier()
	require.NotNil(t, got)
	require.Equal(t, 150, got.TrainCells)

	ctx := context.Background()
	in, err := ingest.Open([]string{path}, ingest.Options{Domain: "patient", Label: "population"})
	require.NoError(t, err)
	cells, err := dataset.Sample(ctx, in.Source, 150, 3)
	require.NoError(t, err)
	cfg := m.Config()
	train := make([]int, len(cells.DomainNames))
	for g := range train {
		train[g] = g
	}
	o := eval.Options{Methods: []string{"dica"}, Solver: cfg.Solver, Rank: cfg.Rank, Seed: cfg.Seed, MaxTrainCells: 150}
	o.Grid = eval.Grid{Sigma: []float64{cfg.Sigma}, Lambda: []float64{cfg.Lambda}, Epsilon: []float64{cfg.Epsilon}, Components: []int{cfg.Components}, C: []float64{1}}
	c := eval.Choice{Method: "dica", Params: eval.Params{Sigma: cfg.Sigma, Lambda: cfg.Lambda, Epsilon: cfg.Epsilon, Components: cfg.Components, C: 1}}
	bare, err := dica.Load(model)
	require.NoError(t, err)
	require.NoError(t, bare.SetClassifier(nil))
	fin, err := eval.TrainOn(ctx, cells, train, bare, c, o)
	require.NoError(t, err)
	want, err := fin.Classifier(ctx)
	require.NoError(t, err)
	require.Equal(t, want.W.RawMatrix().Data, got.W.RawMatrix().Data)
	require.Equal(t, want.Intercept, got.Intercept)
	require.Equal(t, want.InvTemperature, got.InvTemperature)
	require.Equal(t, want.Classes, got.Classes)
}

// TestPredictTargets predicts real targets with a model that carries a
// kernel ridge regression: the predicted_y column of CSV and Parquet equals
// the library's Model.PredictWith bit for bit, FCS's PREDICTED_y parameter
// ($PnS "predicted y") its float32 value, AnnData's obs["predicted_y"] the
// float64 value; no output takes the predictions as a channel; and the
// summary's mean, RMSE and R^2 per sample equal a computation by hand from
// the library's predictions and the true targets.
func TestPredictTargets(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Regression(toy.Options{Domains: 4, MeanSize: 70, Seed: 5})
	path := writeToyRegressionCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--target", "y", "--rank", "40", "--sigma", "1",
		"--classifier", "krr", "--out", model)
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "learner: krr")
	m, err := dica.Load(model)
	require.NoError(t, err)
	p, err := m.PredictWith(ds.X, dica.PredictOptions{})
	require.NoError(t, err)
	want := p.Values
	require.Len(t, want, ds.N())
	channels := []string{"CD1", "CD2", "CD3", "CD4", "CD5"}

	// CSV, with the true targets: the values and the summary.
	out := filepath.Join(dir, "p.csv")
	summary := filepath.Join(dir, "s.json")
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient", "--target", "y",
		"--out", out, "--summary", summary, "--quiet")
	require.Equal(t, 0, code, errs)
	rows := readCSV(t, out)
	head := rows[0]
	require.Equal(t, "predicted_y", head[len(head)-1], "no confidence after it")
	require.NotContains(t, head, "confidence")
	require.Len(t, rows, ds.N()+1)
	for i, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[len(head)-1], 64)
		require.NoError(t, err)
		require.Equal(t, want[i], v, "cell %d", i)
	}
	in, err := ingest.Open([]string{out}, ingest.Options{})
	require.NoError(t, err)
	require.Equal(t, channels, in.Source.Schema().Features, "predicted_y is not a channel")
	require.Equal(t, ingest.RolePredicted, ingest.ParseCSVHeader(head).RoleOf("predicted_y"))

	b, err := os.ReadFile(summary)
	require.NoError(t, err)
	var rep regressionReport
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, []string{"y"}, rep.Targets)
	require.Len(t, rep.Samples, 4)
	check := func(s sampleRegression, keep func(i int) bool) {
		var n, sum, sse, ty float64
		for i := range ds.N() {
			if keep(i) {
				n++
				sum += want[i]
				e := want[i] - ds.Target.At(i, 0)
				sse += e * e
				ty += ds.Target.At(i, 0)
			}
		}
		var sst float64
		for i := range ds.N() {
			if keep(i) {
				d := ds.Target.At(i, 0) - ty/n
				sst += d * d
			}
		}
		require.EqualValues(t, n, s.Cells, s.Sample)
		require.Len(t, s.Targets, 1)
		require.InDelta(t, sum/n, s.Targets[0].Mean, 1e-12, s.Sample)
		require.NotNil(t, s.Targets[0].RMSE)
		require.InDelta(t, math.Sqrt(sse/n), *s.Targets[0].RMSE, 1e-12, s.Sample)
		require.InDelta(t, 1-sse/sst, *s.Targets[0].R2, 1e-12, s.Sample)
	}
	for g, s := range rep.Samples {
		require.Equal(t, ds.DomainNames[g], s.Sample)
		check(s, func(i int) bool { return ds.Domain[i] == g })
	}
	check(*rep.All, func(int) bool { return true })
	require.Less(t, *rep.All.Targets[0].RMSE, 1.3, "the regression beats a constant by far less than nothing")

	// The summary as text and CSV, without the true targets: the means only.
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient",
		"--out", filepath.Join(dir, "p.fcs"), "--summary", filepath.Join(dir, "s.csv"), "--quiet")
	require.Equal(t, 0, code, errs)
	s := readCSV(t, filepath.Join(dir, "s.csv"))
	require.Equal(t, []string{"sample", "cells", "mean_y"}, s[0])
	require.Equal(t, "all", s[len(s)-1][0])
	allMean, err := strconv.ParseFloat(s[len(s)-1][2], 64)
	require.NoError(t, err)
	require.InDelta(t, rep.All.Targets[0].Mean, allMean, 1e-12)

	// FCS: a float32 parameter PREDICTED_y, "predicted y".
	f, err := fcs.Open(filepath.Join(dir, "p.fcs"))
	require.NoError(t, err)
	k := f.FindParam("PREDICTED_y")
	require.GreaterOrEqual(t, k, 0)
	require.Equal(t, "predicted y", f.Params()[k].Label)
	x, err := f.ReadAll(fcs.EventOptions{})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for i := range ds.N() {
		require.Equal(t, float64(float32(want[i])), x.At(i, k), "cell %d", i)
	}
	in, err = ingest.Open([]string{filepath.Join(dir, "p.fcs")}, ingest.Options{})
	require.NoError(t, err)
	// Read without --target, y is a raw channel of the data: written as one.
	require.Equal(t, append([]string{"y"}, channels...), in.Source.Schema().Features, "PREDICTED_y is not a channel")

	// Parquet: a float64 column; AnnData: obs["predicted_y"].
	for _, ext := range []string{"parquet", "zarr"} {
		out := filepath.Join(dir, "p."+ext)
		_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient", "--target", "y",
			"--out", out, "--summary", filepath.Join(dir, "s_"+ext+".csv"), "--quiet")
		require.Equal(t, 0, code, errs)
		in, err := ingest.Open([]string{out}, ingest.Options{})
		require.NoError(t, err)
		require.Equal(t, channels, in.Source.Schema().Features, "%s: predicted_y is not a channel", ext)
		var src dataset.Source
		if ext == "parquet" {
			src, err = parquetio.NewSource([]string{out}, parquetio.Options{Features: []string{"predicted_y"}})
		} else {
			src, err = anndata.NewSource(out, anndata.Options{Target: []string{"predicted_y"}})
		}
		require.NoError(t, err)
		got, err := dataset.Collect(context.Background(), src)
		require.NoError(t, err)
		col := got.X
		if ext == "zarr" {
			col = got.Target
		}
		for i := range ds.N() {
			require.Equal(t, want[i], col.At(i, 0), "%s, cell %d", ext, i)
		}
	}

	// What cannot be compared with real targets, and what a regressor has
	// not.
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient", "--label", "y",
		"--out", filepath.Join(dir, "x.csv"))
	require.Equal(t, 2, code)
	require.Contains(t, errs, "the data has class labels, but the model's learner is krr")
	_, errs, code = runCmd(t, "predict", "--model", model, "--data", path, "--domain", "patient", "--min-confidence", "0.5",
		"--out", filepath.Join(dir, "x.csv"))
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--min-confidence applies to a classifier")
	require.NoFileExists(t, filepath.Join(dir, "x.csv"))
}

// TestFitClassifierRefusals: a learner that cannot be trained as asked is
// a usage error (exit 2) that says what to give, before any work.
func TestFitClassifierRefusals(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 40, Seed: 2})
	path := writeToyCSV(t, dir, ds)
	data := []string{"fit", "--data", path, "--domain", "patient", "--rank", "20", "--out", filepath.Join(dir, "m.dica")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "udica", "--classifier", "svm"}, "--classifier svm learns populations: give --labels FILES or --label COLUMN"},
		{[]string{"--label", "population", "--classifier", "krr"}, "--classifier krr learns real targets: give --target COLUMNS"},
		{[]string{"--label", "population", "--classifier", "svm", "--max-train-cells", "0"}, "--max-train-cells 0: the learner needs at least 1 cell (default 50000)"},
		{[]string{"--label", "population", "--sigma", "1,2"}, "take lists only with --classifier"},
		{[]string{"--label", "population", "--classifier", "tree"}, `--classifier "tree": want svm, krr or none`},
	} {
		_, errs, code := runCmd(t, append(slices.Clone(data), tc.args...)...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.want, "%v", tc.args)
		require.NoFileExists(t, filepath.Join(dir, "m.dica"))
	}
}
