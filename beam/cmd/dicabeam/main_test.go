package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/toy"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// writeSamples writes each domain of ds as dir/sampleNAME.csv (no header)
// with its labels in dir/labelsNAME.csv, and returns the paths.
func writeSamples(t *testing.T, dir string, ds *dataset.Dataset) (files, labels []string) {
	t.Helper()
	for g, name := range ds.DomainNames {
		var data, lab strings.Builder
		for p := range ds.N() {
			if ds.Domain[p] != g {
				continue
			}
			for j, v := range ds.X.RawRowView(p) {
				if j > 0 {
					data.WriteByte(',')
				}
				data.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
			data.WriteByte('\n')
			fmt.Fprintln(&lab, ds.ClassNames[ds.Label[p]])
		}
		f, l := filepath.Join(dir, "sample"+name+".csv"), filepath.Join(dir, "labels"+name+".csv")
		require.NoError(t, os.WriteFile(f, []byte(data.String()), 0o644))
		require.NoError(t, os.WriteFile(l, []byte(lab.String()), 0o644))
		files, labels = append(files, f), append(labels, l)
	}
	return files, labels
}

// TestCommand runs the command on Prism on CSV files with label files and
// checks the model it writes against dica.Fit of the same files.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 100, Seed: 21})
	writeSamples(t, dir, ds)
	out := filepath.Join(dir, "m.dica")
	z := filepath.Join(dir, "z.csv")
	// --data and --label-files add to what is there: start from nothing
	// (go test -count=N runs this again in the same process).
	data, labelFiles = nil, nil
	for k, v := range map[string]string{
		"data": filepath.Join(dir, "sample*.csv"), "label-files": filepath.Join(dir, "labels*.csv"),
		"header": "no", "rank": "40", "components": "2", "seed": "5", "out": out, "z": z,
		"bundle-workers": "2",
	} {
		require.NoError(t, flag.Set(k, v))
	}
	require.NoError(t, run(context.Background()))
	got, err := dica.Load(out)
	require.NoError(t, err)

	files, err := csvio.Glob([]string{filepath.Join(dir, "sample*.csv")})
	require.NoError(t, err)
	labels, err := csvio.Glob([]string{filepath.Join(dir, "labels*.csv")})
	require.NoError(t, err)
	src, err := csvio.NewSource(files, csvio.Options{Header: csvio.NoHeader, LabelFiles: labels})
	require.NoError(t, err)
	want, err := dica.Fit(context.Background(), src, dica.Config{Method: dica.DICA, Rank: 40, Components: 2, Seed: 5})
	require.NoError(t, err)
	require.Equal(t, want.Summary.Domains, got.Summary.Domains)
	require.Equal(t, want.Positive, got.Positive)
	for j := range want.Positive {
		require.InEpsilon(t, want.Eigenvalues[j], got.Eigenvalues[j], 1e-10)
	}
	b, err := os.ReadFile(z)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, ds.N())
	require.Len(t, strings.Split(lines[0], ","), 3+got.Positive)
}

// TestSelfWorker: on a cluster runner the command stages itself as the
// worker binary (instead of the Go SDK compiling its source), not with
// Prism, not over a given --worker_binary, not for Dataflow's arm64 machines.
func TestSelfWorker(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	runner := flag.Lookup("runner")
	machine := flag.Lookup("worker_machine_type")
	old := []string{runner.Value.String(), machine.Value.String()}
	defer func() {
		require.NoError(t, runner.Value.Set(old[0]))
		require.NoError(t, machine.Value.Set(old[1]))
		require.NoError(t, flag.Set("worker_binary", ""))
	}()
	for _, tc := range []struct {
		runner, machine, given, want string
	}{
		{"flink", "", "", exe},
		{"spark", "", "", exe},
		{"universal", "", "", exe},
		{"dataflow", "n2-standard-4", "", exe},
		{"dataflow", "t2a-standard-4", "", ""},
		{"flink", "", "/opt/w", "/opt/w"},
		{"prism", "", "", ""},
	} {
		require.NoError(t, runner.Value.Set(tc.runner))
		require.NoError(t, machine.Value.Set(tc.machine))
		require.NoError(t, flag.Set("worker_binary", tc.given))
		selfWorker()
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			tc.want = tc.given
		}
		require.Equal(t, tc.want, flag.Lookup("worker_binary").Value.String(), "%+v", tc)
	}
}

// TestCommandPlanLocal: on local files of more cells than the plan's
// sample, the command (--plan auto, its default) writes the model file of
// ingest.Open + dica.Fit (the dica command's) byte for byte; the plan the
// pipeline draws itself (--plan pipeline) comes from another sample, and so
// another model.
func TestCommandPlanLocal(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 8000, Seed: 22})
	require.Greater(t, ds.N(), 20000, "more cells than the default sample")
	files, labels := writeSamples(t, dir, ds)
	in, err := ingest.Open(files, ingest.Options{LabelFiles: labels, Transform: "asinh:2"})
	require.NoError(t, err)
	want, err := dica.Fit(context.Background(), in.Source, dica.Config{Method: dica.UDICA, Rank: 30, Components: 3, Seed: 5, Preprocessing: in.Pipeline})
	require.NoError(t, err)
	wb, err := want.MarshalBinary()
	require.NoError(t, err)

	defer func() {
		for k, v := range map[string]string{"plan": "auto", "transform": "none", "method": "dica"} {
			require.NoError(t, flag.Set(k, v))
		}
	}()
	for _, local := range []bool{true, false} {
		out := filepath.Join(dir, fmt.Sprintf("m-%v.dica", local))
		data, labelFiles = nil, nil
		for k, v := range map[string]string{
			"data": filepath.Join(dir, "sample*.csv"), "label-files": filepath.Join(dir, "labels*.csv"), "transform": "asinh:2",
			"method": "udica", "rank": "30", "components": "3", "seed": "5", "out": out, "z": "",
			"bundle-workers": "2", "plan": map[bool]string{true: "auto", false: "pipeline"}[local],
		} {
			require.NoError(t, flag.Set(k, v))
		}
		require.NoError(t, run(context.Background()))
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		if local {
			require.Equal(t, wb, got, "--plan auto on local files: the model of dica fit")
		} else {
			require.NotEqual(t, wb, got, "the pipeline's own plan comes from a bottom-k sample")
		}
	}
}
