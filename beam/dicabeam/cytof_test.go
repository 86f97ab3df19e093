package dicabeam

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
)

// cytofDir returns the folder of the 16 CyTOF samples (DICA_DATA, or
// ../shared/data beside the repository), or skips the test.
func cytofDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(root, "multicenter16_cytof")
	if _, err := os.Stat(filepath.Join(dir, "sample16.csv")); err != nil {
		t.Skipf("CyTOF data not found (%v): set DICA_DATA to the shared data folder", err)
	}
	return dir
}

// headFiles writes the first n lines of each of the 16 samples and of their
// label files into dir (a temporary folder, never the repository).
func headFiles(t *testing.T, src, dir string, n int) (files, labels []string) {
	t.Helper()
	head := func(from, to string) {
		in, err := os.Open(from)
		require.NoError(t, err)
		defer in.Close()
		out, err := os.Create(to)
		require.NoError(t, err)
		w := bufio.NewWriter(out)
		sc := bufio.NewScanner(in)
		for i := 0; i < n && sc.Scan(); i++ {
			w.Write(sc.Bytes())
			w.WriteByte('\n')
		}
		require.NoError(t, sc.Err())
		require.NoError(t, w.Flush())
		require.NoError(t, out.Close())
	}
	for i := 1; i <= 16; i++ {
		f := filepath.Join(dir, fmt.Sprintf("sample%d.csv", i))
		l := filepath.Join(dir, fmt.Sprintf("labels%d.csv", i))
		head(filepath.Join(src, fmt.Sprintf("sample%d.csv", i)), f)
		head(filepath.Join(src, fmt.Sprintf("labels%d.csv", i)), l)
		files, labels = append(files, f), append(labels, l)
	}
	return files, labels
}

// TestCyTOF16 fits the first 2,500 cells of each of the 16 CyTOF samples
// (one domain per file, asinh(x/5), gated populations 1..4 as classes,
// ungated cells left out) on the pipeline and in process: with a sample as
// large as the data, the plans are the same, and the models must agree to
// 1e-10 (measured: 3e-14 in the eigenvalues, 6e-13 in the projections).
func TestCyTOF16(t *testing.T) {
	src := cytofDir(t)
	ctx := context.Background()
	files, labels := headFiles(t, src, t.TempDir(), 2500)
	for _, tc := range []struct {
		name string
		o    FileOptions
		cfg  dica.Config
	}{
		{"dica", FileOptions{Files: files, Options: ingest.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}, Header: csvio.NoHeader, Transform: "asinh:5"}},
			dica.Config{Method: dica.DICA, Rank: 150, Components: 3, Sample: 40000, Seed: 1}},
		{"udica", FileOptions{Files: files, Options: ingest.Options{Header: csvio.NoHeader, Transform: "asinh:5"}},
			dica.Config{Method: dica.UDICA, Rank: 150, Components: 5, Sample: 40000, Seed: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := tc.o.Source()
			require.NoError(t, err)
			want, err := dica.Fit(ctx, in, tc.cfg)
			require.NoError(t, err)
			require.Len(t, want.Summary.Domains, 16)
			if tc.cfg.Method == dica.DICA {
				require.Equal(t, []string{"1", "2", "3", "4"}, sorted(want.Summary.Classes))
				require.Equal(t, 3, want.Positive, "4 classes give 3 components")
			}
			p, s := beam.NewPipelineWithRoot()
			cells, schema, err := ReadFiles(s, tc.o)
			require.NoError(t, err)
			got, z := beamFit(t, cells, s, p, Options{Config: tc.cfg, Schema: schema})
			require.Equal(t, want.Summary.Classes, got.Summary.Classes)
			x, keys := streamKeys(t, in)
			requireSameModel(t, want, got, x, keys, z, 1e-10)
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestCyTOFFull fits all 929,685 cells of the 16 CyTOF samples with UDICA
// at m = 500 on the pipeline and in process, and reports the times. It runs
// only with DICA_BEAM_FULL=1 (about a minute on two cores). The pipeline's
// plan is drawn on the pipeline (bottom-k sample of 20,000 cells); the
// in-process reference uses the same plan (PlanFiles), so the models must
// agree to 1e-10 (measured: 8e-12). The in-process dica.Fit (reservoir sample) is timed too.
func TestCyTOFFull(t *testing.T) {
	if os.Getenv("DICA_BEAM_FULL") == "" {
		t.Skip("set DICA_BEAM_FULL=1 to fit all 929,685 CyTOF cells (slow)")
	}
	src := cytofDir(t)
	ctx := context.Background()
	var files []string
	for i := 1; i <= 16; i++ {
		files = append(files, filepath.Join(src, fmt.Sprintf("sample%d.csv", i)))
	}
	o := FileOptions{Files: files, Options: ingest.Options{Header: csvio.NoHeader, Transform: "asinh:5"}}
	cfg := dica.Config{Method: dica.UDICA, Rank: 500, Components: 10, Seed: 1}
	in, err := o.Source()
	require.NoError(t, err)

	t0 := time.Now()
	core, err := dica.Fit(ctx, in, cfg)
	require.NoError(t, err)
	tCore := time.Since(t0)
	require.Equal(t, int64(929685), core.Summary.N)

	t0 = time.Now()
	plan, err := PlanFiles(ctx, o, cfg)
	require.NoError(t, err)
	st, err := plan.Accumulate(ctx, in)
	require.NoError(t, err)
	want, err := st.Solve()
	require.NoError(t, err)
	tRef := time.Since(t0)

	// The pipeline, with one and with two goroutines per bundle (Prism runs
	// the bundles of a stage one at a time), and reading the files twice
	// (FitFiles) instead of keeping the cells between the steps.
	var got *dica.Model
	var times []string
	for _, v := range []struct {
		name    string
		workers int
		twice   bool
	}{{"Fit(ReadFiles)", 1, false}, {"Fit(ReadFiles), 2 goroutines per bundle", 2, false}, {"FitFiles, 2 goroutines per bundle", 2, true}} {
		t0 = time.Now()
		p, s := beam.NewPipelineWithRoot()
		opts := Options{Config: cfg, Workers: v.workers}
		var model beam.PCollection
		if v.twice {
			model, err = FitFiles(s, o, opts)
		} else {
			var cells beam.PCollection
			cells, opts.Schema, err = ReadFiles(s, o)
			require.NoError(t, err)
			model, err = Fit(s, cells, opts)
		}
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "model.dica")
		WriteModel(s, path, model)
		require.NoError(t, ptest.Run(p))
		times = append(times, fmt.Sprintf("%s %.1f s", v.name, time.Since(t0).Seconds()))
		got, err = dica.Load(path)
		require.NoError(t, err)
		requireSameModel(t, want, got, nil, nil, nil, 1e-10)
	}
	t.Logf("929,685 cells, UDICA, m = 500: on Prism: %s; in process: dica.Fit %.1f s, with the Beam plan %.1f s",
		strings.Join(times, ", "), tCore.Seconds(), tRef.Seconds())
	rel := 0.0
	for j := 0; j < core.Positive && j < got.Positive; j++ {
		rel = math.Max(rel, math.Abs(core.Eigenvalues[j]-got.Eigenvalues[j])/core.Eigenvalues[j])
	}
	t.Logf("eigenvalues of Beam vs dica.Fit (different samples for the plan): largest relative difference %.2g (first: %.2g)", rel,
		math.Abs(core.Eigenvalues[0]-got.Eigenvalues[0])/core.Eigenvalues[0])
}
