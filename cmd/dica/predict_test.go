package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
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
