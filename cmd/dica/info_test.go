package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
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

// infoFiles writes the files of the info tests: a good one, a truncated
// one (the last 2 of 4 events cut), one with HEADER and TEXT only, one that
// is not FCS, and one whose events hold NaN and ±Inf.
func infoFiles(t *testing.T) (good, trunc, header, notFCS, nonFinite string) {
	dir := t.TempDir()
	ds := &fcs.DataSet{
		Params: []fcs.Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}},
		Events: mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8}),
	}
	var b bytes.Buffer
	require.NoError(t, fcs.Write(&b, ds))
	raw := b.Bytes()
	good = filepath.Join(dir, "good.fcs")
	require.NoError(t, os.WriteFile(good, raw, 0o644))
	trunc = filepath.Join(dir, "trunc.fcs")
	require.NoError(t, os.WriteFile(trunc, raw[:len(raw)-16], 0o644))
	header = filepath.Join(dir, "header.fcs")
	require.NoError(t, os.WriteFile(header, raw[:len(raw)-32], 0o644))
	notFCS = filepath.Join(dir, "notes.fcs")
	require.NoError(t, os.WriteFile(notFCS, []byte("oi21j08cn\n"), 0o644))

	d := &fcs.DataSet{DataType: 'D', Params: []fcs.Param{{Name: "A"}, {Name: "B"}}, Events: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}
	b.Reset()
	require.NoError(t, fcs.Write(&b, d))
	raw = b.Bytes()
	at := len(raw) - 32
	for k, v := range []float64{math.NaN(), 2, math.Inf(1), math.Inf(-1)} {
		binary.LittleEndian.PutUint64(raw[at+8*k:], math.Float64bits(v))
	}
	nonFinite = filepath.Join(dir, "nan.fcs")
	require.NoError(t, os.WriteFile(nonFinite, raw, 0o644))
	return
}

// TestInfoDamaged describes good and damaged files in one run: every
// readable summary is printed, each problem is reported on stderr, the
// other files are still described, and the exit status is 1.
func TestInfoDamaged(t *testing.T) {
	good, trunc, header, notFCS, nonFinite := infoFiles(t)
	out, errs, code := runCmd(t, "info", trunc, header, notFCS, good, nonFinite)
	require.Equal(t, 1, code, errs)
	// Five file headings, four summaries (all but the non-FCS file).
	for _, p := range []string{trunc, header, notFCS, good, nonFinite} {
		require.Contains(t, out, p+"\n")
	}
	require.Equal(t, 4, strings.Count(out, "version     FCS3.1"), out)
	// The truncated file's summary has its last complete event (3, 4).
	require.Contains(t, out, "1  FSC-A  -      32    8      1      3\n")
	require.Contains(t, errs, trunc+": truncated DATA: $TOT declares 4 events but only 2 complete events are present")
	require.Contains(t, errs, "; --allow-truncated reads the complete ones")
	require.Contains(t, errs, header+": no DATA segment")
	require.Contains(t, errs, "not an FCS file")
	require.Contains(t, errs, "3 of 5 files could not be read completely")
	require.NotContains(t, errs, good)
	require.NotContains(t, errs, nonFinite)

	out, errs, code = runCmd(t, "info", good)
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs)
}

// TestInfoJSONDamaged checks the JSON form: one object per readable file
// with the required keys, the error and warnings as extra keys, and NaN or
// infinite values as null.
func TestInfoJSONDamaged(t *testing.T) {
	good, trunc, header, notFCS, nonFinite := infoFiles(t)
	out, errs, code := runCmd(t, "info", "--json", good, trunc, notFCS, header, nonFinite)
	require.Equal(t, 1, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	objs := make([]map[string]any, len(lines))
	for i, l := range lines {
		require.NoError(t, json.Unmarshal([]byte(l), &objs[i]), l)
		for _, k := range []string{"version", "datatype", "byteorder", "events", "parameters", "first_event", "last_event", "file"} {
			require.Contains(t, objs[i], k, l)
		}
	}
	require.Equal(t, good, objs[0]["file"])
	require.NotContains(t, objs[0], "error")
	require.NotContains(t, objs[0], "warnings")
	require.Equal(t, []any{1.0, 2.0}, objs[0]["first_event"])
	require.Equal(t, []any{7.0, 8.0}, objs[0]["last_event"])

	require.Equal(t, trunc, objs[1]["file"])
	require.EqualValues(t, 4, objs[1]["events"])
	require.Equal(t, []any{3.0, 4.0}, objs[1]["last_event"])
	require.Contains(t, objs[1]["error"], "only 2 complete events")

	require.Equal(t, header, objs[2]["file"])
	require.Nil(t, objs[2]["first_event"])
	require.Contains(t, objs[2]["error"], "no DATA segment")

	require.Equal(t, nonFinite, objs[3]["file"])
	require.Equal(t, []any{nil, 2.0}, objs[3]["first_event"])
	require.Equal(t, []any{nil, nil}, objs[3]["last_event"])
	require.NotContains(t, objs[3], "error")

	require.Contains(t, errs, "not an FCS file")
	require.Contains(t, errs, "3 of 5 files could not be read completely")
}

// TestInfoReal describes the damaged real files of the shared folder: the
// truncated AriaFile1.fcs and the HEADER-only cytek sample_header.fcs.
func TestInfoReal(t *testing.T) {
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(root, "fcs")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real FCS files not available (%v): set DICA_DATA or provide ../shared/data/fcs", err)
	}
	aria := filepath.Join(dir, "MorganConrad_fcs", "AriaFile1.fcs")
	cytek := filepath.Join(dir, "fcsparser", "cytek-nl-2000__sample_header.fcs")
	out, errs, code := runCmd(t, "info", aria, cytek)
	require.Equal(t, 1, code, errs)
	require.Contains(t, out, "events      10000\nparameters  12\n")
	require.Contains(t, out, "12  Time    -      32    262144  0.20000000298023224  1497.0999755859375\n")
	require.Contains(t, out, "events      20000\nparameters  27\n")
	require.Contains(t, out, "27  R8-A   -      32    4194304  -      -\n")
	require.Contains(t, errs, "10000 events but only 6052 complete events")
	require.Contains(t, errs, aria+": warning: HEADER DATA offsets 2636-482635 disagree")
	require.Contains(t, errs, "no DATA segment")
}

// TestInfoModel describes a model file: the text and JSON summaries carry
// the fitted model's numbers, and a damaged model is an error naming it.
func TestInfoModel(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 2})
	m, err := dica.Fit(context.Background(), ds.Source(), dica.Config{Method: dica.DICA, Rank: 40, Components: 3, Seed: 1})
	require.NoError(t, err)
	path := filepath.Join(dir, "m.dica")
	require.NoError(t, m.Save(path))

	out, errs, code := runCmd(t, "info", "--json", path)
	require.Equal(t, 0, code, errs)
	var r struct {
		fitReport
		File string `json:"file"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, path, r.File)
	require.EqualValues(t, ds.N(), r.N)
	require.Equal(t, "dica", r.Method)
	require.Equal(t, m.Eigenvalues[:m.Positive], r.Eigenvalues)
	require.Equal(t, m.Summary.Domains, r.DomainNames)
	require.Equal(t, m.InputVariance, r.DistVarInput)
	require.Zero(t, r.Seconds)
	require.Zero(t, r.PeakRSSMB)
	require.NotContains(t, out, "seconds")

	out, errs, code = runCmd(t, "info", path)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, fmt.Sprintf("cells                    %d\n", ds.N()))
	require.Contains(t, out, "eigenvalues              "+fmtFloats(m.Eigenvalues[:m.Positive])+"\n")
	require.NotContains(t, out, "seconds")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.dica")
	require.NoError(t, os.WriteFile(cut, b[:len(b)/2], 0o644))
	_, errs, code = runCmd(t, "info", cut)
	require.Equal(t, 1, code)
	require.Contains(t, errs, cut)
}

// TestInfoFolder describes a folder: its FCS files in natural order
// (sample2 before sample10), not its other or hidden files nor its
// subfolders; a folder without FCS files is a usage error.
func TestInfoFolder(t *testing.T) {
	dir := t.TempDir()
	ds := &fcs.DataSet{Params: []fcs.Param{{Name: "FSC-A"}}, Events: mat.NewDense(1, 1, []float64{1})}
	for _, name := range []string{"sample10.fcs", "sample2.fcs", ".hidden.fcs", "sample1.lmd"} {
		require.NoError(t, fcs.WriteFile(filepath.Join(dir, name), ds))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("gating notes\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.fcs"), 0o755))

	out, errs, code := runCmd(t, "info", dir)
	require.Equal(t, 0, code, errs)
	var heads []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, dir) {
			heads = append(heads, l)
		}
	}
	require.Equal(t, []string{filepath.Join(dir, "sample1.lmd"), filepath.Join(dir, "sample2.fcs"), filepath.Join(dir, "sample10.fcs")}, heads)
	require.Equal(t, 3, strings.Count(out, "events      1\n"), out)

	// A glob and a folder together; JSON names each file.
	out, errs, code = runCmd(t, "info", "--json", filepath.Join(dir, "sample1*"), dir)
	require.Equal(t, 0, code, errs)
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		files = append(files, m["file"].(string))
	}
	require.Equal(t, []string{filepath.Join(dir, "sample1.lmd"), filepath.Join(dir, "sample10.fcs"), filepath.Join(dir, "sample2.fcs")}, files)

	empty := filepath.Join(dir, "sub.fcs")
	out, errs, code = runCmd(t, "info", empty)
	require.Equal(t, 2, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, empty+" is a folder without FCS files")
}

// TestInfoAllDataSets describes a file holding two data sets: the first
// only, with a note, or both with --all-datasets, in text and JSON.
func TestInfoAllDataSets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "multi.fcs")
	require.NoError(t, fcs.WriteFile(path,
		&fcs.DataSet{Params: []fcs.Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}}, Events: mat.NewDense(2, 2, []float64{1, 2, 3, 4})},
		&fcs.DataSet{Params: []fcs.Param{{Name: "SSC-A"}}, Events: mat.NewDense(3, 1, []float64{7, 8, 9}), Keywords: []fcs.Keyword{{Key: "$SPILLOVER", Value: "1,SSC-A,1"}}},
	))
	out, errs, code := runCmd(t, "info", path)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "events      2\nparameters  2\nspillover   none\n")
	require.NotContains(t, out, "SSC-A")
	require.Equal(t, "dica info: "+path+": note: the file holds more data sets; --all-datasets describes them all\n", errs)

	out, errs, code = runCmd(t, "info", "--all-datasets", path)
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs)
	require.True(t, strings.HasPrefix(out, "data set 1 of 2\nversion     FCS3.1\n"), out)
	require.Contains(t, out, "2  FL1-A  CD3    32    5      2      4\n\ndata set 2 of 2\nversion     FCS3.1\n")
	require.Contains(t, out, "events      3\nparameters  1\nspillover   $SPILLOVER 1 x 1\n")
	require.Contains(t, out, "1  SSC-A  -      32    10     7      9\n")

	out, errs, code = runCmd(t, "info", "--json", "--all-datasets", path)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	for k, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		require.EqualValues(t, k+1, m["dataset"])
		require.Equal(t, path, m["file"])
		require.EqualValues(t, []float64{2, 3}[k], m["events"])
	}
	require.Contains(t, lines[1], `"spillover":{"keyword":"$SPILLOVER","channels":["SSC-A"]}`)
	require.Contains(t, lines[0], `"spillover":null`)
}

// TestInfoWarnings prints what the reader warns about on stderr, in text
// and JSON: channels sharing a $PnN (listed as NAME#k), a DATA segment
// holding more events than $TOT, an unknown version; and says whether a
// spillover matrix is present.
func TestInfoWarnings(t *testing.T) {
	dir := t.TempDir()
	ds := &fcs.DataSet{
		Params:   []fcs.Param{{Name: "FSC-A"}, {Name: "CD3"}, {Name: "CD3"}},
		Events:   mat.NewDense(5, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}),
		Keywords: []fcs.Keyword{{Key: "$SPILLOVER", Value: "2,FSC-A,CD3#3,1,0.1,0,1"}},
	}
	var b bytes.Buffer
	require.NoError(t, fcs.Write(&b, ds))
	raw := b.Bytes()
	copy(raw, "FCS4.0")
	raw = bytes.Replace(raw, []byte("/$TOT/5/"), []byte("/$TOT/3/"), 1)
	path := filepath.Join(dir, "odd.fcs")
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	out, errs, code := runCmd(t, "info", path)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "version     FCS4.0\n")
	require.Contains(t, out, "events      3\n")
	require.Contains(t, out, "spillover   $SPILLOVER 2 x 2\n")
	require.Contains(t, out, "2  CD3#2  -      32    15     2      8\n3  CD3#3  -      32    16     3      9\n")
	want := []string{
		"dica info: " + path + ": warning: unknown FCS version FCS4.0: read as FCS 3.1",
		"dica info: " + path + `: warning: parameters 2 and 3 have the same $PnN "CD3": they are named "CD3#2" and "CD3#3"`,
		"dica info: " + path + ": warning: the DATA segment holds 5 events but $TOT declares 3: reading 3",
	}
	require.Equal(t, strings.Join(want, "\n")+"\n", errs)

	out, errs2, code := runCmd(t, "info", "--json", path)
	require.Equal(t, 0, code, errs2)
	require.Equal(t, errs, errs2)
	var m struct {
		Warnings   []string `json:"warnings"`
		Parameters []struct {
			Name string `json:"name"`
		} `json:"parameters"`
		Spillover struct {
			Keyword  string   `json:"keyword"`
			Channels []string `json:"channels"`
		} `json:"spillover"`
		LastEvent []float64 `json:"last_event"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Len(t, m.Warnings, 3)
	require.Equal(t, "CD3#3", m.Parameters[2].Name)
	require.Equal(t, "$SPILLOVER", m.Spillover.Keyword)
	require.Equal(t, []string{"FSC-A", "CD3#3"}, m.Spillover.Channels)
	require.Equal(t, []float64{7, 8, 9}, m.LastEvent)
}

// TestInfoRealFolder describes the FlowIO folder of the shared data: four
// files in natural order, with their spillover matrices.
func TestInfoRealFolder(t *testing.T) {
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(root, "fcs", "FlowIO")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real FCS files not available (%v): set DICA_DATA or provide ../shared/data/fcs", err)
	}
	out, errs, code := runCmd(t, "info", dir)
	require.Equal(t, 0, code, errs)
	var heads []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, dir) {
			heads = append(heads, strings.TrimPrefix(l, dir+string(filepath.Separator)))
		}
	}
	require.Equal(t, []string{"3FITC_4PE_004.fcs", "B01_KC-A-W---91-US.fcs", "G11.fcs", "variable_int_example.fcs"}, heads)
	for _, want := range []string{
		"events      94569\nparameters  4\nspillover   none\n",
		"events      1589\nparameters  14\nspillover   $SPILLOVER 8 x 8\n",
		"events      5785\nparameters  12\nspillover   $SPILLOVER 5 x 5\n",
		"events      2\nparameters  26\nspillover   SPILL (unreadable: channel \"xxxxxxxxxxxxxxxxxxxxxxxxxxxx\" is neither a $PnN, a $PnS nor a parameter number)\n",
	} {
		require.Contains(t, out, want)
	}
	require.Empty(t, errs)

	out, errs, code = runCmd(t, "info", "--json", filepath.Join(dir, "G11.fcs"))
	require.Equal(t, 0, code, errs)
	var m struct {
		Spillover struct {
			Keyword  string   `json:"keyword"`
			Channels []string `json:"channels"`
		} `json:"spillover"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, "$SPILLOVER", m.Spillover.Keyword)
	require.Len(t, m.Spillover.Channels, 5)
}
