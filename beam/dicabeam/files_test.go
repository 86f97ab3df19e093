package dicabeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/toy"
)

// streamKeys reads a source of files with one domain per file and returns
// its rows and the keys ReadFiles gives them (file number << KeyBits | row
// number in the file).
func streamKeys(t *testing.T, src dataset.Source) (*mat.Dense, []int64) {
	t.Helper()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	var (
		x    []float64
		keys []int64
		b    dataset.Block
	)
	file, row := -1, int64(0)
	for {
		k, err := r.Read(&b, 1000)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for i := 0; i < k; i++ {
			if b.Domain[i] != file {
				require.Equal(t, file+1, b.Domain[i], "one domain per file, in order")
				file, row = b.Domain[i], 0
			}
			keys = append(keys, int64(file)<<KeyBits|row)
			row++
			x = append(x, b.Row(i)...)
		}
	}
	return mat.NewDense(len(keys), src.Schema().D(), x), keys
}

// writeCSV writes the domains of ds as one CSV file each (with a header),
// and a label file per domain with an extra ignored label "0" on every
// fifth row (its cell is dropped).
func writeCSV(t *testing.T, dir string, ds *dataset.Dataset) (files, labels []string) {
	t.Helper()
	for g, name := range ds.DomainNames {
		var data, lab strings.Builder
		for j := range ds.D() {
			if j > 0 {
				data.WriteByte(',')
			}
			fmt.Fprintf(&data, "m%d", j+1)
		}
		data.WriteByte('\n')
		k := 0
		for p := range ds.N() {
			if ds.Domain[p] != g {
				continue
			}
			if k%5 == 4 {
				// A row to be ignored by its label.
				data.WriteString(strings.Repeat("7,", ds.D()-1) + "7\n")
				lab.WriteString("0\n")
			}
			k++
			for j, v := range ds.X.RawRowView(p) {
				if j > 0 {
					data.WriteByte(',')
				}
				data.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
			data.WriteByte('\n')
			lab.WriteString(ds.ClassNames[ds.Label[p]] + "\n")
		}
		f := filepath.Join(dir, name+".csv")
		l := filepath.Join(dir, name+".labels")
		require.NoError(t, os.WriteFile(f, []byte(data.String()), 0o644))
		require.NoError(t, os.WriteFile(l, []byte(lab.String()), 0o644))
		files, labels = append(files, f), append(labels, l)
	}
	return files, labels
}

func TestReadFilesCSV(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 100, Seed: 7})
	files, labels := writeCSV(t, dir, ds)
	// Glob gives natural order: the toy domains are d1..d4.
	globbed, err := Glob(filepath.Join(dir, "d*.csv"))
	require.NoError(t, err)
	require.Equal(t, files, globbed)
	o := FileOptions{Files: files, Options: ingest.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}, Transform: "asinh:2"}}
	src, err := o.Source()
	require.NoError(t, err)
	cfg := dica.Config{Method: dica.DICA, Rank: 50, Components: 3, Seed: 11}
	want, err := dica.Fit(ctx, src, cfg)
	require.NoError(t, err)
	require.Equal(t, int64(ds.N()), want.Summary.N, "label 0 rows dropped")

	got2, x, keys := requireFilesFit(t, o, src, cfg, want)
	// The model records the preprocessing of the files, as dica fit does:
	// field for field what ingest.Open (the command's reader) records for
	// all the files.
	require.Equal(t, "csv; 5 channels m1, m2, m3, m4, m5; asinh:2 on all channels", got2.Preprocessing().String())
	in, err := ingest.Open(files, o.Options)
	require.NoError(t, err)
	require.True(t, got2.Preprocessing().Identical(in.Pipeline), "%+v\n%+v", got2.Preprocessing(), in.Pipeline)
	require.True(t, want.Preprocessing() == nil, "the in-process fit here records none")

	// A sample smaller than the data: the bundles' bottom-k samples of
	// FitFiles, merged, must be PlanFiles' sample, and the model the
	// in-process pass with that plan.
	small := cfg
	small.Sample = 120
	plan, err := PlanFiles(ctx, o, small)
	require.NoError(t, err)
	st, err := plan.Accumulate(ctx, src)
	require.NoError(t, err)
	want3, err := st.Solve()
	require.NoError(t, err)
	require.NotEqual(t, want.Config().Kernel, want3.Config().Kernel, "the small sample gives another bandwidth")
	p, s := beam.NewPipelineWithRoot()
	model, err := FitFiles(s, o, Options{Config: small, BlockRows: 64})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m3.dica")
	WriteModel(s, path, model)
	require.NoError(t, ptest.Run(p))
	got3, err := dica.Load(path)
	require.NoError(t, err)
	requireSameModel(t, want3, got3, x, keys, nil, 1e-10)
}

func TestReadFilesFCS(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 150, Seed: 8})
	var files []string
	for g, name := range ds.DomainNames {
		var rows []int
		for p := range ds.N() {
			if ds.Domain[p] == g {
				rows = append(rows, p)
			}
		}
		sub := ds.Subset(rows)
		params := make([]fcs.Param, ds.D())
		for j := range params {
			params[j] = fcs.Param{Name: fmt.Sprintf("FL%d", j+1)}
		}
		f := filepath.Join(dir, name+".fcs")
		require.NoError(t, fcs.WriteFile(f, &fcs.DataSet{Params: params, DataType: 'D', Events: sub.X}))
		files = append(files, f)
	}
	o := FileOptions{Files: files}
	src, err := o.Source()
	require.NoError(t, err)
	cfg := dica.Config{Method: dica.UDICA, Rank: 40, Components: 4, Seed: 12}
	want, err := dica.Fit(ctx, src, cfg)
	require.NoError(t, err)

	p, s := beam.NewPipelineWithRoot()
	cells, schema, err := ReadFiles(s, o)
	require.NoError(t, err)
	require.Equal(t, []string{"FL1", "FL2", "FL3", "FL4", "FL5"}, schema.Features)
	got, z := beamFit(t, cells, s, p, Options{Config: cfg, Schema: schema, BlockRows: 100, GramParts: 3})
	x, keys := streamKeys(t, src)
	requireSameModel(t, want, got, x, keys, z, 1e-10)

	// FitFiles (files read inside the sampling and statistics steps).
	p, s = beam.NewPipelineWithRoot()
	model, err := FitFiles(s, o, Options{Config: cfg, BlockRows: 100, GramParts: 3, Workers: 2})
	require.NoError(t, err)
	path := filepath.Join(dir, "m.dica")
	WriteModel(s, path, model)
	require.NoError(t, ptest.Run(p))
	got2, err := dica.Load(path)
	require.NoError(t, err)
	requireSameModel(t, want, got2, x, keys, nil, 1e-10)

	// Mixing FCS and CSV, and CSV options on FCS files, are errors.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.csv"), []byte("1,2,3,4,5\n"), 0o644))
	_, err = FileOptions{Files: append(files, filepath.Join(dir, "x.csv"))}.Source()
	require.ErrorContains(t, err, "mix")
	_, err = FileOptions{Files: files, Options: ingest.Options{Target: []string{"x"}}}.Source()
	require.ErrorContains(t, err, "FCS files hold no real targets")
}

// TestReadFilesRemote reads the files through Beam's filesystem package (an
// in-memory file system standing in for gs://): the model must be the one
// of the local files.
func TestReadFilesRemote(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 80, Seed: 9})
	files, labels := writeCSV(t, t.TempDir(), ds)
	var rfiles, rlabels []string
	for i := range files {
		for _, pair := range [][2]string{{files[i], "memfs://dicabeam-test/" + filepath.Base(files[i])}, {labels[i], "memfs://dicabeam-test/" + filepath.Base(labels[i])}} {
			b, err := os.ReadFile(pair[0])
			require.NoError(t, err)
			memfs.Write(pair[1], b)
		}
	}
	rfiles, err := Glob("memfs://dicabeam-test/*.csv")
	require.NoError(t, err)
	require.Len(t, rfiles, 3)
	rlabels, err = Glob("memfs://dicabeam-test/*.labels")
	require.NoError(t, err)
	local := FileOptions{Files: files, Options: ingest.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}}}
	remote := FileOptions{Files: rfiles, Options: ingest.Options{LabelFiles: rlabels, LabelsIgnore: []string{"0"}}}
	_, err = remote.Source()
	require.ErrorContains(t, err, "local files only")

	cfg := dica.Config{Method: dica.DICA, Rank: 40, Components: 2, Seed: 13}
	src, err := local.Source()
	require.NoError(t, err)
	want, err := dica.Fit(ctx, src, cfg)
	require.NoError(t, err)
	// The plan drawn in process from the remote files is the pipeline's.
	plan, err := PlanFiles(ctx, remote, cfg)
	require.NoError(t, err)
	p, s := beam.NewPipelineWithRoot()
	cells, schema, err := ReadFiles(s, remote)
	require.NoError(t, err)
	require.Equal(t, src.Schema(), schema)
	got, z := beamFit(t, cells, s, p, Options{Config: cfg, Schema: schema, Plan: plan})
	require.Equal(t, want.Summary.Domains, got.Summary.Domains)
	x, keys := streamKeys(t, src)
	requireSameModel(t, want, got, x, keys, z, 1e-10)
}

// requireFilesFit fits the files of o in a pipeline twice, from ReadFiles'
// cells and with FitFiles (which reads the files twice instead of keeping
// the cells), checks both models against want (fitted in process on src),
// and returns the FitFiles model with src's points and their keys.
func requireFilesFit(t *testing.T, o FileOptions, src dataset.Source, cfg dica.Config, want *dica.Model) (*dica.Model, *mat.Dense, []int64) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	cells, schema, err := ReadFiles(s, o)
	require.NoError(t, err)
	require.Equal(t, src.Schema(), schema)
	got, z := beamFit(t, cells, s, p, Options{Config: cfg, Schema: schema, BlockRows: 64})
	require.Equal(t, want.Summary.Classes, got.Summary.Classes, "classes in order of first appearance")
	require.Equal(t, want.Summary.ClassCounts, got.Summary.ClassCounts)
	x, keys := streamKeys(t, src)
	requireSameModel(t, want, got, x, keys, z, 1e-10)

	p, s = beam.NewPipelineWithRoot()
	model, err := FitFiles(s, o, Options{Config: cfg, BlockRows: 64, Workers: 2})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.dica")
	WriteModel(s, path, model)
	require.NoError(t, ptest.Run(p))
	got2, err := dica.Load(path)
	require.NoError(t, err)
	requireSameModel(t, want, got2, x, keys, nil, 1e-10)
	return got2, x, keys
}
