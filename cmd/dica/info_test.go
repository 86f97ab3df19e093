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
	require.Contains(t, errs, trunc+": fcs: truncated DATA: $TOT declares 4 events but only 2 complete events are present")
	require.Contains(t, errs, "--allow-truncated")
	require.Contains(t, errs, header+": fcs: no DATA segment")
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
	require.Equal(t, m.Eigenvalues, r.Eigenvalues)
	require.Equal(t, m.Summary.Domains, r.DomainNames)
	require.Equal(t, m.InputVariance, r.DistVarInput)
	require.Zero(t, r.Seconds)
	require.Zero(t, r.PeakRSSMB)
	require.NotContains(t, out, "seconds")

	out, errs, code = runCmd(t, "info", path)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, fmt.Sprintf("cells                    %d\n", ds.N()))
	require.Contains(t, out, "eigenvalues              "+fmtFloats(m.Eigenvalues)+"\n")
	require.NotContains(t, out, "seconds")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.dica")
	require.NoError(t, os.WriteFile(cut, b[:len(b)/2], 0o644))
	_, errs, code = runCmd(t, "info", cut)
	require.Equal(t, 1, code)
	require.Contains(t, errs, cut)
}
