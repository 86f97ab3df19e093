package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// TestFitPrecision: --precision 32 on fit and plan gives a model and
// statistics of precision 32 (and the default, 64), whose eigenvalues
// agree with the float64 fit's to float32 rounding.
func TestFitPrecision(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 150, Seed: 2})
	path := writeToyCSV(t, dir, ds)
	var models [2]*dica.Model
	for i, p := range []string{"64", "32"} {
		model := filepath.Join(dir, p+".dica")
		_, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population",
			"--method", "udica", "--sigma", "1", "--rank", "60", "--components", "3", "--precision", p, "--out", model, "--quiet")
		require.Equal(t, 0, code, errs)
		m, err := dica.Load(model)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"64": 64, "32": 32}[p], m.Config().Precision)
		models[i] = m
		stats, plan := filepath.Join(dir, p+".stats"), filepath.Join(dir, p+".plan")
		_, errs, code = runCmd(t, "plan", "--data", path, "--domain", "patient", "--label", "population",
			"--method", "udica", "--sigma", "1", "--rank", "60", "--precision", p, "--out", plan, "--quiet")
		require.Equal(t, 0, code, errs)
		_, errs, code = runCmd(t, "accumulate", "--plan", plan, "--data", path, "--domain", "patient", "--label", "population", "--out", stats, "--quiet")
		require.Equal(t, 0, code, errs)
		st, err := dica.LoadStats(stats)
		require.NoError(t, err)
		require.Equal(t, models[i].Config().Precision, st.Plan().Config.Precision)
	}
	require.NotEqual(t, models[0].Eigenvalues, models[1].Eigenvalues)
	for j := range 3 {
		require.InEpsilon(t, models[0].Eigenvalues[j], models[1].Eigenvalues[j], 1e-5)
	}
}
