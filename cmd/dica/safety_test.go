package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

// The tests of this file run the real command, built once, as a user runs
// it, and check the exit status, the messages and the bytes of every file
// involved.

var (
	binOnce   bool
	binPath   string
	binErr    error
	binTmpDir string
)

// dicaBin builds the command once per test binary and returns its path.
func dicaBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command: skipped with -short")
	}
	if !binOnce {
		binOnce = true
		binTmpDir, binErr = os.MkdirTemp("", "dica-bin-")
		if binErr == nil {
			binPath = filepath.Join(binTmpDir, "dica")
			out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
			if err != nil {
				binErr = fmt.Errorf("go build: %v\n%s", err, out)
			}
		}
	}
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binTmpDir != "" {
		os.RemoveAll(binTmpDir)
	}
	os.Exit(code)
}

// result is what a run of the command gave.
type result struct {
	code           int
	stdout, stderr string
	maxRSS         int64 // peak resident memory in bytes (0 when not seen)
	elapsed        time.Duration
}

// dicaRun runs the command with args in dir. Its peak resident memory is
// read from the child's own /proc/PID/status (VmHWM) while it runs: the
// rusage of a child started by os/exec counts the parent's memory too (the
// child shares the parent's address space until it executes the command).
func dicaRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(dicaBin(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dica %v: %v", args, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	var err error
poll:
	for {
		select {
		case err = <-done:
			break poll
		default:
		}
		if b, rerr := os.ReadFile(status); rerr == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					var kb int64
					fmt.Sscan(rest, &kb)
					peak = max(peak, kb*1024)
				}
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start), maxRSS: peak}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running dica %v: %v", args, err)
	}
	return r
}

// requireNoCrash fails when the command died of a Go panic or a runtime
// fatal error.
func requireNoCrash(t *testing.T, r result, args ...any) {
	t.Helper()
	for _, bad := range []string{"panic:", "fatal error:", "goroutine ", "runtime."} {
		require.NotContains(t, r.stderr, bad, args...)
	}
}

// cytofLike writes n cells of 8 markers in two samples, with label files,
// to dir and returns the data and label file names.
func cytofLike(t *testing.T, dir string, n int) (data, labels []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	for s := 1; s <= 2; s++ {
		var xb, lb bytes.Buffer
		for i := 0; i < n/2; i++ {
			c := rng.IntN(3) + 1
			for j := 0; j < 8; j++ {
				if j > 0 {
					xb.WriteByte(',')
				}
				fmt.Fprintf(&xb, "%.3f", float64(c*(j+1))*20*(1+0.1*float64(s))+10*rng.NormFloat64())
			}
			xb.WriteByte('\n')
			fmt.Fprintf(&lb, "%d\n", c)
		}
		d := filepath.Join(dir, fmt.Sprintf("sample%d.csv", s))
		l := filepath.Join(dir, fmt.Sprintf("labels%d.csv", s))
		require.NoError(t, os.WriteFile(d, xb.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(l, lb.Bytes(), 0o644))
		data, labels = append(data, d), append(labels, l)
	}
	return data, labels
}

func TestOutputIsNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	data, labels := cytofLike(t, dir, 400)
	r := dicaRun(t, dir, "fit", "--data", data[0], "--data", data[1], "--labels", labels[0], "--labels", labels[1],
		"--transform", "log1p", "--rank", "40", "--out", "m.dica", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.Symlink("sample1.csv", filepath.Join(dir, "link.csv")))
	require.NoError(t, os.Link(filepath.Join(dir, "labels1.csv"), filepath.Join(dir, "hard.csv")))
	before := fileTypes(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--out", "sample1.csv"}, "sample1.csv is also an input"},
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--labels", "labels1.csv", "--out", "labels1.csv"}, "labels1.csv is also an input"},
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--out", "m.dica"}, "m.dica is also an input"},
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--out", "link.csv"}, "link.csv is the input sample1.csv"},
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--labels", "labels1.csv", "--out", "hard.csv"}, "hard.csv is the input labels1.csv"},
		{[]string{"fit", "--data", "sample1.csv", "--data", "sample2.csv", "--labels", "labels1.csv", "--labels", "labels2.csv", "--out", "sample2.csv"}, "sample2.csv is also an input"},
		{[]string{"fit", "--data", "sample*.csv", "--labels", "labels*.csv", "--out", "missing/m.dica"}, "the folder missing does not exist"},
		{[]string{"transform", "--model", "m.dica", "--data", "sample1.csv", "--out", "missing/z.csv"}, "the folder missing does not exist"},
	} {
		r := dicaRun(t, dir, c.args...)
		require.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.want, "%v", c.args)
		requireNoCrash(t, r, c.args)
		require.Less(t, r.elapsed, 5*time.Second, "%v: refused only after work", c.args)
		require.Equal(t, before, fileTypes(t, dir), "%v changed a file", c.args)
	}
}

// bigTransform prepares a model and data whose transform writes a large
// CSV, with an old output already in place.
func bigTransform(t *testing.T) (dir string, args []string, old []byte) {
	dir = t.TempDir()
	data, labels := cytofLike(t, dir, 300000)
	r := dicaRun(t, dir, "fit", "--data", "sample*.csv", "--labels", "labels*.csv", "--transform", "log1p",
		"--rank", "100", "--out", "m.dica", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	old = []byte("the previous output\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "out.csv"), old, 0o644))
	args = []string{"transform", "--model", "m.dica", "--data", data[0], "--data", data[1], "--labels", labels[0], "--labels", labels[1],
		"--write-transformed", "--center", "domain", "--out", "out.csv"}
	return dir, args, old
}

// temps returns the temporary files of an output in dir.
func temps(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, ".out.csv.tmp-*"))
	require.NoError(t, err)
	return m
}

func TestInterruptedTransformKeepsOutput(t *testing.T) {
	longtest.Skip(t)
	dir, args, old := bigTransform(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			for _, f := range temps(t, dir) {
				os.Remove(f)
			}
			cmd := exec.Command(dicaBin(t), args...)
			cmd.Dir = dir
			var errb bytes.Buffer
			cmd.Stderr = &errb
			require.NoError(t, cmd.Start())
			// Wait until the output is being written, then signal.
			deadline := time.Now().Add(60 * time.Second)
			for {
				if ts := temps(t, dir); len(ts) == 1 {
					if fi, err := os.Stat(ts[0]); err == nil && fi.Size() > 1<<20 {
						break
					}
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no output after 60 s: %s", errb.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			require.Error(t, err, "the transform ended normally before the signal")
			b, rerr := os.ReadFile(filepath.Join(dir, "out.csv"))
			require.NoError(t, rerr)
			require.Equal(t, old, b, "the previous output changed")
			if sig == syscall.SIGKILL {
				// A killed process cannot clean up: its temporary file
				// stays beside the output, which is intact.
				return
			}
			require.Equal(t, 1, cmd.ProcessState.ExitCode(), errb.String())
			require.Contains(t, errb.String(), "interrupted; no output was written")
			require.Empty(t, temps(t, dir), "a temporary file is left")
		})
	}
	// Uninterrupted, the output replaces the old one, complete.
	r := dicaRun(t, dir, append(args, "--quiet")...)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "out.csv"))
	require.NoError(t, err)
	require.Equal(t, 300000+1, bytes.Count(b, []byte("\n")))
}

func TestHugeLineBoundedMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sparse files and rusage as on Linux")
	}
	dir := t.TempDir()
	z := filepath.Join(dir, "z.csv")
	f, err := os.Create(z)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2<<30)) // 2 GB of zero bytes, no newline, sparse
	f.Close()
	r := dicaRun(t, dir, "fit", "--method", "udica", "--data", "z.csv", "--out", "m.dica", "--quiet")
	require.NotEqual(t, 0, r.code)
	requireNoCrash(t, r)
	require.Less(t, len(r.stderr), 1024, "message: %q", r.stderr)
	require.Less(t, r.maxRSS, int64(200<<20), "peak RSS")
	t.Logf("2 GB without a newline: exit %d in %v, peak RSS %.1f MB: %s", r.code, r.elapsed, float64(r.maxRSS)/(1<<20), r.stderr)
	// A model that is not a model is refused after its first bytes.
	for _, model := range []string{"/dev/zero", "z.csv"} {
		r = dicaRun(t, dir, "transform", "--model", model, "--data", "z.csv", "--out", "o.csv")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "not a model file")
		require.Less(t, r.maxRSS, int64(100<<20))
		require.Less(t, r.elapsed, 5*time.Second)
	}
}

func TestRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	// 100,000 cells: what the exact path cannot hold in memory.
	var b strings.Builder
	rng := rand.New(rand.NewPCG(1, 1))
	b.WriteString("patient,population,a,b,c\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, "p%d,c%d,%.3f,%.3f,%.3f\n", i%4, i%3, rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cells.csv"), []byte(b.String()), 0o644))
	common := []string{"fit", "--data", "cells.csv", "--domain", "patient", "--label", "population", "--out", "m.dica", "--max-memory", "16G"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--rank", "100000"}, []string{"rank 100000 needs about 560 GB", "; ranks up to about 168", "use --rank 168"}}, // (the largest rank depends on the workers and the reader)
		{[]string{"--rank", "30000"}, []string{"rank 30000 needs about 50.", "or raise --max-memory"}},
		{[]string{"--method", "udica", "--rank", "30000"}, []string{"rank 30000 needs about"}},
		{[]string{"--solver", "exact"}, []string{"the exact solver needs 40 N^2 bytes", "the data has more than 199", "use the Nystrom solver"}},
	} {
		r := dicaRun(t, dir, append(common, c.args...)...)
		require.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		requireNoCrash(t, r, c.args)
		for _, w := range c.want {
			require.Contains(t, r.stderr, w, "%v", c.args)
		}
		require.Less(t, r.elapsed, time.Second, "%v", c.args)
		require.Less(t, r.maxRSS, int64(200<<20), "%v", c.args)
		require.NoFileExists(t, filepath.Join(dir, "m.dica"))
	}
}

// TestFlagValuesFuzz runs the command in the process with random values of
// its flags and asserts that every run ends with status 0, 1 or 2 and at
// most a short error, never a panic.
func FuzzFlags(f *testing.F) {
	dir := f.TempDir()
	ds := writeFuzzData(f, dir)
	f.Add("fit", "--rank", "0", "--sigma", "-1")
	f.Add("fit", "--rank", "100000000", "--components", "99999")
	f.Add("fit", "--solver", "exact", "--rank", "5")
	f.Add("transform", "--center", "x", "--transform", "asinh:0")
	f.Add("transform", "--out", dir, "--scale", "true")
	f.Add("fit", "--landmarks", "kmeans", "--lambda", "NaN")
	f.Add("fit", "--rank", "7", "--solver", "rff")
	f.Add("eval", "--train-domains", "1-99", "--sigma", "1e308")
	f.Add("eval", "--C", "-1", "--components", "0")
	f.Add("info", "--all-datasets", "true", "--json", ds)
	f.Add("merge", "--report", "xml", ds, "")
	f.Fuzz(func(t *testing.T, cmd, f1, v1, f2, v2 string) {
		args := []string{cmd, "--data", ds, "--domain", "patient", "--label", "population", "--quiet",
			"--out", filepath.Join(dir, "out.dica"), f1, v1, f2, v2}
		if cmd == "transform" {
			args = append(args, "--model", filepath.Join(dir, "model.dica"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb)
		if code < 0 || code > 2 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if code != 0 && errb.Len() > 4096 && !strings.Contains(errb.String(), "Flags:") {
			t.Fatalf("%v: %d bytes of error: %.300s", args, errb.Len(), errb.String())
		}
	})
}

// writeFuzzData writes a small labelled CSV and a model fitted on it into
// dir, and returns the CSV's path.
func writeFuzzData(f *testing.F, dir string) string {
	f.Helper()
	var b strings.Builder
	b.WriteString("patient,population,CD1,CD2,CD3\n")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 120; i++ {
		c := i % 3
		fmt.Fprintf(&b, "p%d,c%d,%.4f,%.4f,%.4f\n", i%4, c, float64(c)+rng.NormFloat64(), rng.NormFloat64(), float64(i%4)+rng.NormFloat64())
	}
	path := filepath.Join(dir, "cells.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		f.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"fit", "--data", path, "--domain", "patient", "--label", "population",
		"--rank", "20", "--quiet", "--out", filepath.Join(dir, "model.dica")}, &out, &errb); code != 0 {
		f.Fatalf("fit: %s", errb.String())
	}
	return path
}
