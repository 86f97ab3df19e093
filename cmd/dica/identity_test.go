package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
)

// panelSamples writes n headerless CSV samples of 4 channels (values
// that float32 holds exactly, so FCS outputs keep them) and their label
// files: populations 1-4 first met in the order 2, 4, 1, 3, and ungated
// cells (label 0) here and there. It returns the data and label globs.
func panelSamples(t *testing.T, dir string, n int) (string, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, uint64(n)))
	order := []int{2, 4, 1, 3}
	for s := 1; s <= n; s++ {
		var x, l bytes.Buffer
		for i := 0; i < 120; i++ {
			c := order[i%4]
			if i%11 == 5 {
				c = 0
			}
			for j := 0; j < 4; j++ {
				v := float64(int(256*(float64(10*c+s)+4*rng.NormFloat64()))) / 256
				if j > 0 {
					x.WriteByte(',')
				}
				fmt.Fprintf(&x, "%g", 20+v+float64(j))
			}
			x.WriteByte('\n')
			fmt.Fprintf(&l, "%d\n", c)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)), x.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)), l.Bytes(), 0o644))
	}
	return filepath.Join(dir, "sample*.csv"), filepath.Join(dir, "labels*.csv")
}

// TestPanelByName: a model applied to data whose columns are named
// otherwise is refused, listing both; --by-position takes them by position
// and says so; a model of headerless files takes named columns by
// position with a warning naming them.
func TestPanelByName(t *testing.T) {
	dir := t.TempDir()
	ds := writeNamed(t, dir, "named.csv", "CD3,CD4,CD8,CD19")
	other := writeNamed(t, dir, "other.csv", "A,B,C,D")
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--method", "udica", "--data", ds, "--data", filepath.Join(dir, "named2.csv"), "--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	z := filepath.Join(dir, "z.csv")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", other, "--out", z, "--quiet")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `other.csv has no channel "CD3", "CD4", "CD8", "CD19": the model reads "CD3", "CD4", "CD8", "CD19"; the file has "A", "B", "C", "D"`)
	require.Contains(t, errs, "--by-position")
	require.NoFileExists(t, z)
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", other, "--by-position", "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, `warning: taking the model's channels "CD3", "CD4", "CD8", "CD19" by position (columns 1, 2, 3, 4 of`)

	// Headerless training files: the names of new files are not the
	// model's, and the warning says which columns are taken.
	data, labels := panelSamples(t, dir, 2)
	unnamed := filepath.Join(dir, "u.dica")
	_, errs, code = runCmd(t, "fit", "--data", data, "--labels", labels, "--labels-ignore", "0", "--rank", "20", "--out", unnamed, "--quiet")
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "transform", "--model", unnamed, "--data", other, "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, `fitted on CSV files without a header (channels V1, V2, V3, V4): the columns "A", "B", "C", "D" of`)
}

// writeNamed writes a CSV file of 4 channels with the header names, and a
// second one beside it (name with a 2 before the extension).
func writeNamed(t *testing.T, dir, name, header string) string {
	t.Helper()
	for k, n := range []string{name, strings.Replace(name, ".csv", "2.csv", 1)} {
		var b bytes.Buffer
		b.WriteString(header + "\n")
		rng := rand.New(rand.NewPCG(uint64(k), 5))
		for i := 0; i < 60; i++ {
			fmt.Fprintf(&b, "%g,%g,%g,%g\n", rng.NormFloat64()+float64(k), rng.NormFloat64(), rng.NormFloat64()*2, rng.NormFloat64())
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b.Bytes(), 0o644))
	}
	return filepath.Join(dir, name)
}

// TestFCSMarkersChecked: FCS files whose detector carries another marker
// are refused at fit time, and a model refuses a file of another panel.
func TestFCSMarkersChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, labels []string, shift float64) string {
		rng := rand.New(rand.NewPCG(uint64(shift), 1))
		ev := mat.NewDense(80, 3, nil)
		for i := 0; i < 80; i++ {
			for j := 0; j < 3; j++ {
				ev.Set(i, j, 100+shift+20*rng.NormFloat64())
			}
		}
		var ps []fcs.Param
		for j, l := range labels {
			ps = append(ps, fcs.Param{Name: []string{"FL1-H", "FL2-H", "FL3-H"}[j], Label: l})
		}
		p := filepath.Join(dir, name)
		require.NoError(t, fcs.WriteFile(p, &fcs.DataSet{Params: ps, Events: ev}))
		return p
	}
	p1 := write("patient1.fcs", []string{"CD4", "CD8", "CD3"}, 0)
	p2 := write("patient2.fcs", []string{"CD4", "CD8", "CD3"}, 10)
	otherPanel := write("otherpanel.fcs", []string{"CD4", "CD8", "CD19"}, 5)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--method", "udica", "--data", p1, "--data", otherPanel, "--channels", "FL1-H,FL2-H,FL3-H",
		"--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `--channels: channel "FL3-H" is "CD19" in `)
	require.Contains(t, errs, "different panels")
	require.NoFileExists(t, model)
	// By marker, each file's CD4 and CD8 are read: no error.
	_, errs, code = runCmd(t, "fit", "--method", "udica", "--data", p1, "--data", otherPanel, "--channels", "CD4,CD8",
		"--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	_, errs, code = runCmd(t, "fit", "--method", "udica", "--data", p1, "--data", p2, "--channels", "FL1-H,FL2-H,FL3-H",
		"--rank", "20", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	require.Equal(t, "CD3", m.Preprocessing().Channels[2].PnS)
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", otherPanel, "--out", filepath.Join(dir, "z.csv"), "--quiet")
	require.Equal(t, 1, code)
	require.Contains(t, errs, `channel "FL3-H" is "CD19" in `)
	require.Contains(t, errs, `and was "CD3" in the model's training files`)
}

// TestStableCodes: samples transformed separately get the model's codes
// (populations and samples in natural order) in their FCS outputs, and
// every output says where each cell came from, counting the cells left
// out (--labels-ignore).
func TestStableCodes(t *testing.T) {
	dir := t.TempDir()
	data, labels := panelSamples(t, dir, 12)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", data, "--labels", labels, "--labels-ignore", "0", "--rank", "30", "--transform", "log1p", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3", "4"}, m.Summary.Classes)
	require.Equal(t, "sample2", m.Summary.Domains[1])
	require.Equal(t, "sample10", m.Summary.Domains[9])
	tables := map[string]map[string]string{}
	for _, s := range []string{"9", "10"} {
		out := filepath.Join(dir, "s"+s+".fcs")
		_, errs, code = runCmd(t, "transform", "--model", model, "--data", filepath.Join(dir, "sample"+s+".csv"),
			"--labels", filepath.Join(dir, "labels"+s+".csv"), "--labels-ignore", "0", "--out", out, "--quiet")
		require.Equal(t, 0, code, errs)
		f, err := fcs.Open(out)
		require.NoError(t, err)
		kw := map[string]string{}
		for _, k := range f.Keywords() {
			if strings.HasPrefix(k.Key, "DICA_LABEL") || strings.HasPrefix(k.Key, "DICA_DOMAIN") {
				kw[k.Key] = k.Value
			}
		}
		tables[s] = kw
		ev, err := f.ReadAll(fcs.EventOptions{})
		require.NoError(t, err)
		f.Close()
		// The cells of sample s have its domain code, the model's.
		k, _ := strconv.Atoi(s)
		names := f.Names()
		col := func(n string) int {
			for j, x := range names {
				if x == n {
					return j
				}
			}
			t.Fatalf("no parameter %s in %v", n, names)
			return -1
		}
		r, _ := ev.Dims()
		var wantEvents []float64
		for i := 1; i <= 120; i++ {
			if i%11 != 6 { // row i-1 of the generator is ungated when (i-1)%11 == 5
				wantEvents = append(wantEvents, float64(i))
			}
		}
		require.Equal(t, len(wantEvents), r)
		for i := 0; i < r; i++ {
			require.Equal(t, float64(k), ev.At(i, col("DOMAIN")))
			require.Equal(t, wantEvents[i], ev.At(i, col("EVENT")))
			pop := []int{2, 4, 1, 3}[(int(wantEvents[i])-1)%4]
			require.Equal(t, float64(pop), ev.At(i, col("LABEL")), "cell %d", i)
		}
	}
	require.Equal(t, tables["9"], tables["10"])
	require.Equal(t, "1", tables["9"]["DICA_LABEL1"])
	require.Equal(t, "sample10", tables["9"]["DICA_DOMAIN10"])

	// CSV: the event column joins back to the file.
	z := filepath.Join(dir, "z.csv")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", filepath.Join(dir, "sample3.csv"),
		"--labels", filepath.Join(dir, "labels3.csv"), "--labels-ignore", "0", "--out", z, "--quiet")
	require.Equal(t, 0, code, errs)
	rows := readCSV(t, z)
	src := readCSV(t, filepath.Join(dir, "sample3.csv"))
	require.Equal(t, []string{"source", "event", "domain", "label", "V1", "V2", "V3", "V4"}, rows[0][:8])
	for _, r := range rows[1:] {
		require.Equal(t, "sample3", r[0])
		e, err := strconv.Atoi(r[1])
		require.NoError(t, err)
		require.Equal(t, src[e-1], r[4:8], "event %d", e)
	}
}

// TestNewSampleCodes: files of samples the model was not fitted on,
// written one by one, carry the same code tables for the model's samples
// and populations; DOMAIN 0 marks the new sample (DICA_DOMAIN0 names it),
// and a second new sample in the same file takes the code after the
// model's. Read back, every cell gets its sample's name.
func TestNewSampleCodes(t *testing.T) {
	dir := t.TempDir()
	panelSamples(t, dir, 5)
	sample := func(s int) string { return filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)) }
	labels := func(s int) string { return filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)) }
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", sample(1)+","+sample(2)+","+sample(3), "--labels", labels(1)+","+labels(2)+","+labels(3),
		"--labels-ignore", "0", "--rank", "30", "--transform", "log1p", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)

	read := func(path string) (map[string]string, *mat.Dense, []string) {
		f, err := fcs.Open(path)
		require.NoError(t, err)
		defer f.Close()
		kw := map[string]string{}
		for _, k := range f.Keywords() {
			if strings.HasPrefix(k.Key, "DICA_LABEL") || strings.HasPrefix(k.Key, "DICA_DOMAIN") {
				kw[k.Key] = k.Value
			}
		}
		ev, err := f.ReadAll(fcs.EventOptions{})
		require.NoError(t, err)
		return kw, ev, f.Names()
	}
	col := func(names []string, n string) int {
		j := slices.Index(names, n)
		require.GreaterOrEqual(t, j, 0, "no parameter %s in %v", n, names)
		return j
	}
	tables := map[int]map[string]string{}
	for _, s := range []int{4, 5} {
		out := filepath.Join(dir, fmt.Sprintf("s%d.fcs", s))
		_, errs, code = runCmd(t, "transform", "--model", model, "--data", sample(s), "--labels", labels(s), "--labels-ignore", "0", "--out", out, "--quiet")
		require.Equal(t, 0, code, errs)
		kw, ev, names := read(out)
		r, _ := ev.Dims()
		require.Equal(t, 109, r)
		for i := range r {
			require.Equal(t, 0.0, ev.At(i, col(names, "DOMAIN")), "cell %d", i)
		}
		require.Equal(t, fmt.Sprintf("sample%d", s), kw["DICA_DOMAIN0"])
		delete(kw, "DICA_DOMAIN0")
		tables[s] = kw
	}
	require.Equal(t, map[string]string{"DICA_DOMAIN1": "sample1", "DICA_DOMAIN2": "sample2", "DICA_DOMAIN3": "sample3",
		"DICA_LABEL1": "1", "DICA_LABEL2": "2", "DICA_LABEL3": "3", "DICA_LABEL4": "4"}, tables[4])
	require.Equal(t, tables[4], tables[5])

	// Two new samples and a training one in one file.
	both := filepath.Join(dir, "both.fcs")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", sample(5)+","+sample(2)+","+sample(4),
		"--labels", labels(5)+","+labels(2)+","+labels(4), "--labels-ignore", "0", "--out", both, "--quiet")
	require.Equal(t, 0, code, errs)
	kw, ev, names := read(both)
	require.Equal(t, "sample5", kw["DICA_DOMAIN0"])
	require.Equal(t, "sample4", kw["DICA_DOMAIN4"])
	r, _ := ev.Dims()
	require.Equal(t, 3*109, r)
	for i := range r {
		require.Equal(t, []float64{0, 2, 4}[i/109], ev.At(i, col(names, "DOMAIN")), "cell %d", i)
	}

	// Read back: each cell has its sample's name.
	in, err := ingest.Open([]string{filepath.Join(dir, "s4.fcs"), filepath.Join(dir, "s5.fcs"), both}, ingest.Options{})
	require.NoError(t, err)
	rd, err := in.Source.Open(context.Background())
	require.NoError(t, err)
	defer rd.Close()
	var got []string
	var b dataset.Block
	for {
		n, err := rd.Read(&b, 1000)
		if n == 0 {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		for i := range n {
			got = append(got, rd.Domains()[b.Domain[i]])
		}
	}
	var want []string
	for _, s := range []string{"sample4", "sample5", "sample5", "sample2", "sample4"} {
		for range 109 {
			want = append(want, s)
		}
	}
	require.Equal(t, want, got)
}

// TestRefitFromOutputs: a model fitted on dica's own CSV and FCS outputs
// of the training files is the model fitted on the files: the same
// channels and preprocessing record, the same bits. Components, labels,
// domains and event numbers are never taken as channels.
func TestRefitFromOutputs(t *testing.T) {
	dir := t.TempDir()
	data, labels := panelSamples(t, dir, 3)
	fitArgs := []string{"--transform", "log1p", "--rank", "30", "--sigma", "1", "--quiet"}
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, append([]string{"fit", "--data", data, "--labels", labels, "--labels-ignore", "0", "--out", model}, fitArgs...)...)
	require.Equal(t, 0, code, errs)
	want, err := os.ReadFile(model)
	require.NoError(t, err)
	orig, err := dica.Load(model)
	require.NoError(t, err)
	for _, ext := range []string{"csv", "fcs", "parquet", "zarr"} {
		t.Run(ext, func(t *testing.T) {
			out := filepath.Join(dir, "all."+ext)
			_, errs, code := runCmd(t, "transform", "--model", model, "--data", data, "--labels", labels, "--labels-ignore", "0",
				"--write-transformed", "--out", out, "--quiet")
			require.Equal(t, 0, code, errs)
			refit := filepath.Join(dir, "refit-"+ext+".dica")
			args := fitArgs
			if ext == "zarr" {
				// The store's X holds the inputs after log1p, and says so:
				// the model records log1p, and a transform would apply it
				// twice.
				_, errs, code = runCmd(t, append([]string{"fit", "--data", out, "--out", refit}, args...)...)
				require.Equal(t, 2, code, errs)
				require.Contains(t, errs, "holds values preprocessed already (log1p on all channels): a transform would apply twice")
				args = args[2:]
			}
			_, errs, code = runCmd(t, append([]string{"fit", "--data", out, "--out", refit}, args...)...)
			require.Equal(t, 0, code, errs)
			m, err := dica.Load(refit)
			require.NoError(t, err)
			require.Equal(t, orig.Inputs(), m.Inputs())
			require.True(t, orig.Preprocessing().Equal(m.Preprocessing()), "%v\n%v", orig.Preprocessing(), m.Preprocessing())
			require.Equal(t, orig.Summary, m.Summary)
			got, err := os.ReadFile(refit)
			require.NoError(t, err)
			if ext == "csv" || ext == "zarr" {
				require.Equal(t, want, got, "the model's bytes")
			}
			require.Equal(t, orig.Eigenvalues, m.Eigenvalues)
			require.Equal(t, orig.W.RawMatrix().Data, m.W.RawMatrix().Data)

			// The refitted model applied to the raw files projects as the
			// original does.
			z1, z2 := filepath.Join(dir, "z1-"+ext+".csv"), filepath.Join(dir, "z2-"+ext+".csv")
			for _, c := range [][2]string{{model, z1}, {refit, z2}} {
				_, errs, code := runCmd(t, "transform", "--model", c[0], "--data", filepath.Join(dir, "sample2.csv"), "--out", c[1], "--quiet")
				require.Equal(t, 0, code, errs)
				require.Empty(t, errs)
			}
			a, b := readCSV(t, z1), readCSV(t, z2)
			require.Equal(t, a, b)
		})
	}
}

// TestLibraryEqualsCommand: a fit through ingest.Open and dica.Fit with
// the zero Config.Seed is the command's fit of the same files with its
// defaults, bit for bit.
func TestLibraryEqualsCommand(t *testing.T) {
	dir := t.TempDir()
	data, labels := panelSamples(t, dir, 3)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", data, "--labels", labels, "--labels-ignore", "0", "--transform", "log1p",
		"--sigma", "1", "--rank", "30", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	in, err := ingest.Open([]string{data}, ingest.Options{LabelFiles: []string{labels}, LabelsIgnore: []string{"0"}, Transform: "log1p"})
	require.NoError(t, err)
	m, err := dica.Fit(context.Background(), in.Source, dica.Config{Method: dica.DICA, Rank: 30, Sigma: 1, Preprocessing: in.Pipeline})
	require.NoError(t, err)
	got, err := m.MarshalBinary()
	require.NoError(t, err)
	want, err := os.ReadFile(model)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestPartialLabelsCommand: labels for one sample only (DATA=LABELS): the
// model counts that sample's populations and every sample's cells.
func TestPartialLabelsCommand(t *testing.T) {
	dir := t.TempDir()
	data, _ := panelSamples(t, dir, 3)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", data, "--labels", filepath.Join(dir, "sample2.csv")+"="+filepath.Join(dir, "labels2.csv"),
		"--labels-ignore", "0", "--rank", "30", "--sigma", "1", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	m, err := dica.Load(model)
	require.NoError(t, err)
	require.Equal(t, []string{"sample1", "sample2", "sample3"}, m.Summary.Domains)
	// sample2: 120 rows, 11 ungated left out; the others keep every cell.
	require.Equal(t, []int64{120, 109, 120}, m.Summary.DomainCounts)
	var labelled int64
	for _, c := range m.Summary.ClassCounts {
		labelled += c
	}
	require.EqualValues(t, 109, labelled)
	require.Equal(t, []string{"1", "2", "3", "4"}, m.Summary.Classes)
}
