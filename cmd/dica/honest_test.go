package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/toy"
)

// The tests of this file check that the command never answers wrong in
// silence: what it drops, doubles or guesses, it says.

// shards writes three samples with label files; sample3's cells are all
// labelled 0.
func shards(t *testing.T, dir string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	for s := 1; s <= 3; s++ {
		var x, l bytes.Buffer
		for i := 0; i < 150; i++ {
			c := 1 + i%3
			if s == 3 {
				c = 0
			}
			fmt.Fprintf(&x, "%.4f,%.4f,%.4f\n", float64(c)+rng.NormFloat64(), float64(s)+rng.NormFloat64(), rng.NormFloat64())
			fmt.Fprintf(&l, "%d\n", c)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.csv", s)), x.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("l%d.csv", s)), l.Bytes(), 0o644))
	}
}

func TestMergeCopyOfShardRefused(t *testing.T) {
	dir := t.TempDir()
	shards(t, dir)
	all, labels := filepath.Join(dir, "s[12].csv"), filepath.Join(dir, "l[12].csv")
	plan := filepath.Join(dir, "fit.plan")
	_, errs, code := runCmd(t, "plan", "--data", all, "--labels", labels, "--rank", "20", "--sigma", "1", "--out", plan, "--quiet")
	require.Equal(t, 0, code, errs)
	for s := 1; s <= 2; s++ {
		_, errs, code := runCmd(t, "accumulate", "--plan", plan, "--data", filepath.Join(dir, fmt.Sprintf("s%d.csv", s)), "--labels", filepath.Join(dir, fmt.Sprintf("l%d.csv", s)),
			"--out", filepath.Join(dir, fmt.Sprintf("p%d.stats", s)), "--quiet")
		require.Equal(t, 0, code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "p2.stats"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "copy.stats"), b, 0o644))
	out := filepath.Join(dir, "m.dica")
	_, errs, code = runCmd(t, "merge", filepath.Join(dir, "p1.stats"), filepath.Join(dir, "p2.stats"), filepath.Join(dir, "copy.stats"), "--out", out)
	require.Equal(t, 1, code)
	// The files are merged in the natural order of their names: copy.stats
	// first.
	require.Contains(t, errs, "p2.stats summarizes the same cells as "+filepath.Join(dir, "copy.stats")+" (150 cells")
	require.NoFileExists(t, out)
	o, errs, code := runCmd(t, "merge", filepath.Join(dir, "p1.stats"), filepath.Join(dir, "p2.stats"), "--out", out, "--report", "json")
	require.Equal(t, 0, code, errs)
	require.Contains(t, o, `"n":300`)
}

func TestLabelsIgnoreSaysWhatItDrops(t *testing.T) {
	dir := t.TempDir()
	shards(t, dir)
	data, labels := filepath.Join(dir, "s*.csv"), filepath.Join(dir, "l*.csv")
	// sample3's cells are all ungated: the domain goes, with a warning.
	out, errs, code := runCmd(t, "fit", "--data", data, "--labels", labels, "--labels-ignore", "0", "--rank", "20",
		"--report", "json", "--out", filepath.Join(dir, "m.dica"), "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, `--labels-ignore removed every cell of 1 domain(s), left out: "s3"`)
	require.Contains(t, out, `"domains":2`)
	// A value no label has is an error listing the labels.
	_, errs, code = runCmd(t, "fit", "--data", data, "--labels", labels, "--labels-ignore", "O", "--rank", "20",
		"--out", filepath.Join(dir, "n.dica"), "--quiet")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `--labels-ignore: value "O" matches no label (labels seen: "0", "1", "2", "3")`)
	require.NotContains(t, errs, "LabelsIgnore")
	require.NoFileExists(t, filepath.Join(dir, "n.dica"))
}

// TestCSVOutputQuoting writes names with commas, quotes and line ends and
// reads the output back with encoding/csv.
func TestCSVOutputQuoting(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("patient,\"cell, type\",\"CD3, total\",\"say \"\"hi\"\"\",CD8\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&b, "\"p,%d\",\"t\"\"%d\",%.3f,%.3f,%.3f\n", i%3, i%2, rng.NormFloat64()+float64(i%2), rng.NormFloat64(), rng.NormFloat64())
	}
	in := filepath.Join(dir, "in.csv")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", in, "--domain", "patient", "--label", "cell, type", "--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	z := filepath.Join(dir, "z.csv")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", in, "--domain", "patient", "--label", "cell, type", "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	f, err := os.Open(z)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, "the output is not valid CSV")
	require.Equal(t, []string{"source", "event", "domain", "label", "CD3, total", `say "hi"`, "CD8", "DICA1"}, rows[0])
	require.Len(t, rows, 121)
	require.Equal(t, "p,0", rows[1][2])
	require.Equal(t, `t"0`, rows[1][3])
	for _, r := range rows {
		require.Len(t, r, 8)
	}
}

// TestTrailingSeparators reads a CSV whose rows all end with a comma: no
// row is taken for a header, none is dropped.
func TestTrailingSeparators(t *testing.T) {
	dir := t.TempDir()
	var x, l bytes.Buffer
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&x, "%.3f,%.3f,%.3f,\n", rng.NormFloat64()+float64(i%2), rng.NormFloat64(), rng.NormFloat64())
		fmt.Fprintf(&l, "%d\n", i%2)
	}
	for _, s := range []string{"a", "b"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, s+".csv"), x.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "l"+s+".txt"), l.Bytes(), 0o644))
	}
	model := filepath.Join(dir, "m.dica")
	out, errs, code := runCmd(t, "fit", "--data", filepath.Join(dir, "*.csv"), "--labels", filepath.Join(dir, "l*.txt"), "--rank", "20",
		"--out", model, "--report", "json", "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, `"n":200`)
	require.Contains(t, out, `"features":["V1","V2","V3"]`)
	o, errs, code := runCmd(t, "transform", "--model", model, "--data", filepath.Join(dir, "a.csv"), "--out", "-", "--quiet")
	require.Equal(t, 0, code, errs)
	require.Equal(t, 101, strings.Count(o, "\n"))
}

// TestFCSReaderWarningsReachTheUser writes an FCS file whose DATA segment
// holds more events than $TOT declares and one cut short, and checks that
// the command says so.
func TestFCSReaderWarningsReachTheUser(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 4))
	ev := mat.NewDense(200, 3, nil)
	for i := 0; i < 200; i++ {
		for j := 0; j < 3; j++ {
			ev.Set(i, j, 100+10*rng.NormFloat64()+float64(50*(i%2)))
		}
	}
	params := []fcs.Param{{Name: "A"}, {Name: "B"}, {Name: "C"}}
	var buf bytes.Buffer
	require.NoError(t, fcs.Write(&buf, &fcs.DataSet{Params: params, Events: ev}))
	full := buf.Bytes()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "full.fcs"), full, 0o644))
	// Cut: the last 50 events missing.
	cut := full[:len(full)-50*3*4]
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.fcs"), cut, 0o644))
	_, errs, code := runCmd(t, "fit", "--method", "udica", "--data", filepath.Join(dir, "cut.fcs"), "--data", filepath.Join(dir, "full.fcs"),
		"--rank", "20", "--out", filepath.Join(dir, "m.dica"), "--quiet")
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "cut.fcs")
	_, errs, code = runCmd(t, "fit", "--method", "udica", "--data", filepath.Join(dir, "cut.fcs"), "--data", filepath.Join(dir, "full.fcs"),
		"--allow-truncated", "--rank", "20", "--out", filepath.Join(dir, "m.dica"), "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "read 150 of 200 events declared by $TOT")
}

// TestModelPreprocessingShown: dica info shows a model's preprocessing, and
// says when a model fitted through the library does not record one, as
// dica transform does.
func TestModelPreprocessingShown(t *testing.T) {
	dir := t.TempDir()
	shards(t, dir)
	lib := filepath.Join(dir, "lib.dica")
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 40, Seed: 9})
	m, err := dica.Fit(context.Background(), ds.Source(), dica.Config{Method: dica.DICA, Rank: 20, Sigma: 1})
	require.NoError(t, err)
	require.NoError(t, m.Save(lib))
	out, errs, code := runCmd(t, "info", lib)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "preprocessing            not recorded")
	csvPath := writeToyCSV(t, dir, ds)
	_, errs, code = runCmd(t, "transform", "--model", lib, "--data", csvPath, "--domain", "patient", "--label", "population",
		"--features", "CD1,CD2,CD3,CD4,CD5", "--out", filepath.Join(dir, "z.csv"), "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "the model does not record its preprocessing")

	model := filepath.Join(dir, "m.dica")
	_, errs, code = runCmd(t, "fit", "--data", filepath.Join(dir, "s[12].csv"), "--labels", filepath.Join(dir, "l[12].csv"),
		"--transform", "asinh:5", "--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	out, errs, code = runCmd(t, "info", model)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "preprocessing            csv; 3 unnamed channels (columns V1, V2, V3); asinh:5 on all channels")
	out, errs, code = runCmd(t, "info", "--json", model)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, `"transform":"asinh:5"`)
	require.Contains(t, out, `{"name":"V1","index":1}`)
}
