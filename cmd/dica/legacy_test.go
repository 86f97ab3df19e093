package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
)

// TestLegacyFiles reads files written by a dica that did not record the
// preprocessing (testdata/legacy): the model still projects as it did,
// given the fit's flags, and says that its preprocessing is not recorded;
// its statistics still load, and do not merge with statistics that record
// a preprocessing.
func TestLegacyFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "legacy")
	tmp := t.TempDir()
	out, errs, code := runCmd(t, "info", filepath.Join(dir, "model-v1.dica"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "preprocessing            not recorded")

	z := filepath.Join(tmp, "z.csv")
	_, errs, code = runCmd(t, "transform", "--model", filepath.Join(dir, "model-v1.dica"), "--data", filepath.Join(dir, "sample3.csv"),
		"--labels", filepath.Join(dir, "labels3.csv"), "--transform", "log1p", "--write-transformed", "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "the model does not record its preprocessing")
	old := readCSV(t, filepath.Join(dir, "transformed3-v1.csv"))
	got := readCSV(t, z)
	require.Equal(t, []string{"domain", "label", "V1", "V2", "V3", "V4", "DICA1", "DICA2"}, old[0])
	require.Equal(t, []string{"source", "event", "domain", "label", "V1", "V2", "V3", "V4", "V1_t", "V2_t", "V3_t", "V4_t", "DICA1", "DICA2"}, got[0])
	require.Len(t, got, len(old))
	got = dropOrigin(t, got)
	raw := readCSV(t, filepath.Join(dir, "sample3.csv"))
	for i := 1; i < len(old); i++ {
		require.Equal(t, old[i][:2], got[i][:2])
		for j := 0; j < 4; j++ {
			rv, err := strconv.ParseFloat(raw[i-1][j], 64)
			require.NoError(t, err)
			require.Equal(t, strconv.FormatFloat(rv, 'g', -1, 64), got[i][2+j], "raw channel")
			require.Equal(t, old[i][2+j], got[i][6+j], "transformed channel")
		}
		for j := 0; j < 2; j++ {
			a, err := strconv.ParseFloat(old[i][6+j], 64)
			require.NoError(t, err)
			b, err := strconv.ParseFloat(got[i][10+j], 64)
			require.NoError(t, err)
			require.InDelta(t, a, b, 1e-9*(1+abs(a)), "component %d of row %d", j+1, i)
		}
	}

	// The old statistics load; new ones that record their preprocessing do
	// not merge with them, and the refusal says why.
	part2, plan := filepath.Join(tmp, "part2.stats"), filepath.Join(tmp, "fit.plan")
	_, errs, code = runCmd(t, "plan", "--data", filepath.Join(dir, "sample*.csv"), "--labels", filepath.Join(dir, "labels*.csv"),
		"--transform", "log1p", "--sigma", "1", "--rank", "30", "--out", plan, "--quiet")
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "accumulate", "--plan", plan, "--data", filepath.Join(dir, "sample2.csv"), "--labels", filepath.Join(dir, "labels2.csv"),
		"--out", part2, "--quiet")
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "merge", filepath.Join(dir, "part1-v2.stats"), part2, "--out", filepath.Join(tmp, "m.dica"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "preprocessing: not recorded vs csv; 4 unnamed channels (columns V1, V2, V3, V4); log1p on all channels")
	st, err := dica.LoadStats(filepath.Join(dir, "part1-v2.stats"))
	require.NoError(t, err)
	require.EqualValues(t, 60, st.N())
	require.Nil(t, st.Parts())
	require.Nil(t, st.Plan().Config.Preprocessing)
}

// TestLegacyModelV2 reads a model file of version 2, written by the dica
// before models recorded whether their channels were named: fitted on CSV
// files without a header, it is read as such (its channels taken by
// position), and projects sample3 as the dica that wrote it did
// (transformed3-v2.csv).
func TestLegacyModelV2(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "legacy")
	m, err := dica.Load(filepath.Join(dir, "model-v2.dica"))
	require.NoError(t, err)
	require.True(t, m.Preprocessing().Unnamed)
	require.Equal(t, "log1p", m.Preprocessing().TransformSpec())
	z := filepath.Join(t.TempDir(), "z.csv")
	_, errs, code := runCmd(t, "transform", "--model", filepath.Join(dir, "model-v2.dica"), "--data", filepath.Join(dir, "sample3.csv"),
		"--labels", filepath.Join(dir, "labels3.csv"), "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs)
	old := readCSV(t, filepath.Join(dir, "transformed3-v2.csv"))
	got := dropOrigin(t, readCSV(t, z))
	require.Equal(t, old[0], got[0])
	require.Equal(t, []string{"domain", "label", "V1", "V2", "V3", "V4", "DICA1", "DICA2"}, got[0])
	require.Len(t, got, len(old))
	for i := 1; i < len(old); i++ {
		require.Equal(t, old[i], got[i], "row %d", i)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// dropOrigin returns the rows of a CSV output without its first two
// columns, source and event, after checking them: the cells of each file
// numbered from 1 (no cell left out).
func dropOrigin(t *testing.T, rows [][]string) [][]string {
	t.Helper()
	require.Equal(t, []string{"source", "event"}, rows[0][:2])
	out := [][]string{rows[0][2:]}
	seen := map[string]int{}
	for i, r := range rows[1:] {
		seen[r[0]]++
		require.Equal(t, strconv.Itoa(seen[r[0]]), r[1], "event of row %d", i+1)
		out = append(out, r[2:])
	}
	return out
}
