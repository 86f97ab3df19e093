//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

// The tests of this file check what the command does with users' files
// that an output must not replace (devices, named pipes, sockets,
// write-protected files, an input store, an input behind the standard
// output) and with signals, through the real command.

// outputJob prepares, in a new folder, two samples with labels, a model
// (m.dica) and the statistics of one shard (a.stats).
func outputJob(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cytofLike(t, dir, 400)
	r := dicaRun(t, dir, "fit", "--data", "sample*.csv", "--labels", "labels*.csv", "--rank", "20", "--out", "m.dica", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	r = dicaRun(t, dir, "plan", "--data", "sample*.csv", "--labels", "labels*.csv", "--rank", "20", "--out", "fit.plan", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	r = dicaRun(t, dir, "accumulate", "--plan", "fit.plan", "--data", "sample*.csv", "--labels", "labels*.csv", "--out", "a.stats", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	return dir
}

// outputCommands are command lines that write the output OUT, one per
// kind of output.
var outputCommands = [][]string{
	{"fit", "--data", "sample*.csv", "--labels", "labels*.csv", "--rank", "20", "--quiet", "--out", "OUT.dica"},
	{"fit", "--data", "sample*.csv", "--labels", "labels*.csv", "--rank", "20", "--quiet", "--out", "new.dica", "--cpuprofile", "OUT.prof"},
	{"plan", "--data", "sample*.csv", "--labels", "labels*.csv", "--rank", "20", "--quiet", "--out", "OUT.plan"},
	{"accumulate", "--plan", "fit.plan", "--data", "sample*.csv", "--labels", "labels*.csv", "--quiet", "--out", "OUT.stats"},
	{"merge", "a.stats", "--out", "OUT.dica"},
	{"plot", "--model", "m.dica", "--data", "sample1.csv", "--out", "OUT.png"},
	{"transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "OUT.csv"},
	{"transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "OUT.fcs"},
	{"transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "OUT.parquet"},
}

// withOut returns args with OUT replaced by name.
func withOut(args []string, name string) ([]string, string) {
	out := make([]string, len(args))
	file := ""
	for i, a := range args {
		out[i] = a
		if strings.HasPrefix(a, "OUT.") {
			out[i] = name + strings.TrimPrefix(a, "OUT")
			file = out[i]
		}
	}
	return out, file
}

// fileTypes returns the type bits and the contents of the regular files of
// dir, by name.
func fileTypes(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range ents {
		out[e.Name()] = e.Type().String()
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] += " " + string(b)
		}
	}
	return out
}

// TestOutputNotRegular: an output that is a named pipe, a socket or a
// device (or a link to one) is refused before any work and stays what it
// is; before, it was replaced by a regular file.
func TestOutputNotRegular(t *testing.T) {
	dir := outputJob(t)
	kinds := []struct {
		name, msg string
		make      func(p string) error
	}{
		{"fifo", "is a named pipe (FIFO), not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"sock", "is a socket, not a regular file", func(p string) error {
			l, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
			return err
		}},
		{"null", "is a character device, not a regular file", func(p string) error {
			return syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3) // as /dev/null
		}},
		{"link", "is a named pipe (FIFO), not a regular file", func(p string) error {
			if err := syscall.Mkfifo(p+".target", 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".target", p)
		}},
	}
	for _, k := range kinds {
		for _, args := range outputCommands {
			args, file := withOut(args, k.name)
			if _, err := os.Lstat(filepath.Join(dir, file)); err == nil {
				// made for a command before
			} else if err := k.make(filepath.Join(dir, file)); err != nil {
				if k.name == "null" && os.Geteuid() != 0 {
					t.Logf("no device node without root (mknod: %v): devices not tested", err)
					break
				}
				t.Fatal(err)
			}
			before := fileTypes(t, dir)
			r := dicaRun(t, dir, args...)
			require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
			require.Contains(t, r.stderr, file+" "+k.msg, "%v", args)
			requireNoCrash(t, r, args)
			require.Less(t, r.elapsed, 5*time.Second, "%v: refused only after work", args)
			require.Equal(t, before, fileTypes(t, dir), "%v changed a file", args)
		}
	}
	// A named pipe where a store goes is not a store.
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.zarr"), 0o644))
	r := dicaRun(t, dir, "transform", "--model", "m.dica", "--data", "sample1.csv", "--out", "fifo.zarr")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "fifo.zarr exists and is not a Zarr store")
	fi, err := os.Lstat(filepath.Join(dir, "fifo.zarr"))
	require.NoError(t, err)
	require.Equal(t, fs.ModeNamedPipe, fi.Mode().Type())
}

// TestOutputThroughLink: an output through a symbolic link replaces the
// file it leads to and the link stays, as with a shell redirect (before,
// the link itself was replaced: --out /dev/stdout replaced /dev/stdout).
func TestOutputThroughLink(t *testing.T) {
	dir := outputJob(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "models"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "models", "real.dica"), []byte("old"), 0o640))
	require.NoError(t, os.Symlink("models/real.dica", filepath.Join(dir, "link.dica")))
	r := dicaRun(t, dir, "merge", "a.stats", "--out", "link.dica")
	require.Equal(t, 0, r.code, r.stderr)
	l, err := os.Readlink(filepath.Join(dir, "link.dica"))
	require.NoError(t, err)
	require.Equal(t, "models/real.dica", l)
	b, err := os.ReadFile(filepath.Join(dir, "models", "real.dica"))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("DICAMODL")), "the target holds %q", b[:min(len(b), 16)])
	fi, err := os.Stat(filepath.Join(dir, "models", "real.dica"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	require.NoError(t, os.Symlink("missing/m.dica", filepath.Join(dir, "dangling.dica")))
	r = dicaRun(t, dir, "merge", "a.stats", "--out", "dangling.dica")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "dangling.dica is a symbolic link that leads to no file")
	l, err = os.Readlink(filepath.Join(dir, "dangling.dica"))
	require.NoError(t, err)
	require.Equal(t, "missing/m.dica", l)
}

// storeTree returns the files under dir with their contents and the
// folders, by path.
func storeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out[p] = d.Type().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] += " " + string(b)
		}
		return nil
	}))
	return out
}

// TestZarrOutputInsideInput: an output inside the input store (a store in
// it, a file in it), by path or through a link, is refused before any
// work and the store is unchanged; before, the output was written into the
// input.
func TestZarrOutputInsideInput(t *testing.T) {
	dir := outputJob(t)
	r := dicaRun(t, dir, "transform", "--model", "m.dica", "--data", "sample*.csv", "--labels", "labels*.csv", "--quiet", "--out", "cells.zarr")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.Symlink("cells.zarr", filepath.Join(dir, "link.zarr")))
	before := storeTree(t, dir)
	tr := []string{"transform", "--model", "m.dica", "--data", "cells.zarr", "--label", "label", "--quiet", "--out"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(tr, "cells.zarr/uns/qc.zarr"), "cells.zarr/uns/qc.zarr is inside the input cells.zarr"},
		{append(tr, "cells.zarr/sub.zarr"), "cells.zarr/sub.zarr is inside the input cells.zarr"},
		{append(tr, "link.zarr/sub.zarr"), "link.zarr/sub.zarr is inside the input cells.zarr"},
		{append(tr, "cells.zarr/qc.csv"), "cells.zarr/qc.csv is inside the input cells.zarr"},
		{append(tr, "cells.zarr"), "cells.zarr is also an input"},
		{[]string{"transform", "--model", "m.dica", "--data", "link.zarr", "--label", "label", "--out", "cells.zarr/sub.zarr"}, "cells.zarr/sub.zarr is inside the input link.zarr"},
		{[]string{"fit", "--data", "cells.zarr", "--label", "label", "--rank", "20", "--out", "cells.zarr/.zattrs"}, "cells.zarr/.zattrs is inside the input cells.zarr"},
	} {
		r := dicaRun(t, dir, c.args...)
		require.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.want, "%v", c.args)
		require.Less(t, r.elapsed, 5*time.Second, "%v: refused only after work", c.args)
		require.Equal(t, before, storeTree(t, dir), "%v changed a file", c.args)
	}
}

// runAs runs the command in dir as the user cred (nil: this process's
// user), with stdout to out when not nil.
func runAs(t *testing.T, dir string, cred *syscall.Credential, out *os.File, args ...string) result {
	t.Helper()
	cmd := exec.Command(dicaBin(t), args...)
	cmd.Dir = dir
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if out != nil {
		cmd.Stdout = out
	}
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String(), elapsed: time.Since(start)}
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

// TestProtectedOutputs: a write-protected output (mode 0444, a store of
// mode 0555) is refused as a shell redirect refuses it, "permission
// denied", and stays as it was; before, it was replaced. The command runs
// as nobody when the test runs as root (root may write any file).
func TestProtectedOutputs(t *testing.T) {
	dir := outputJob(t)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		// nobody reaches the command and the files, and may write the
		// folder: only the outputs' own protection is in the way.
		require.NoError(t, os.Chmod(filepath.Dir(dicaBin(t)), 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
		require.NoError(t, os.Chmod(dir, 0o777))
	}
	r := dicaRun(t, dir, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "ro.zarr")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.Chmod(filepath.Join(dir, "ro.zarr"), 0o555))
	for _, args := range outputCommands {
		args, file := withOut(args, "ro")
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte("thesis\n"), 0o444))
		before := storeTree(t, dir)
		r := runAs(t, dir, cred, nil, args...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, file+": permission denied (the file is write-protected, mode 0444)", "%v", args)
		require.Equal(t, before, storeTree(t, dir), "%v changed a file", args)
		fi, err := os.Stat(filepath.Join(dir, file))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o444), fi.Mode().Perm())
	}
	before := storeTree(t, dir)
	r = runAs(t, dir, cred, nil, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "ro.zarr")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "ro.zarr: permission denied (the folder is write-protected, mode 0555)")
	require.Equal(t, before, storeTree(t, dir))
	// A writable file is replaced by the same user.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rw.csv"), []byte("old\n"), 0o666))
	require.NoError(t, os.Chmod(filepath.Join(dir, "rw.csv"), 0o666))
	r = runAs(t, dir, cred, nil, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "rw.csv")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestStdoutOntoInput: "--out -" with the standard output redirected onto
// an input (">> self.csv"), the model or a file of an input store is
// refused and the input is unchanged; before, the output was appended to
// the input.
func TestStdoutOntoInput(t *testing.T) {
	dir := outputJob(t)
	r := dicaRun(t, dir, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "cells.zarr")
	require.Equal(t, 0, r.code, r.stderr)
	before := storeTree(t, dir)
	for _, c := range []struct {
		stdout string
		args   []string
		want   string
	}{
		{"sample1.csv", []string{"--data", "sample1.csv"}, "the standard output is the input sample1.csv (the same file)"},
		{"labels1.csv", []string{"--data", "sample1.csv", "--labels", "labels1.csv"}, "the standard output is the input labels1.csv"},
		{"m.dica", []string{"--data", "sample1.csv"}, "the standard output is the input m.dica"},
		{"cells.zarr/.zattrs", []string{"--data", "cells.zarr"}, "cells.zarr/.zattrs, inside the input cells.zarr"},
	} {
		f, err := os.OpenFile(filepath.Join(dir, c.stdout), os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		args := append([]string{"transform", "--model", "m.dica", "--quiet", "--out", "-"}, c.args...)
		r := runAs(t, dir, nil, f, args...)
		f.Close()
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, c.want, "%v", args)
		require.Equal(t, before, storeTree(t, dir), "%v changed a file", args)
	}
	f, err := os.Create(filepath.Join(dir, "other.csv"))
	require.NoError(t, err)
	r = runAs(t, dir, nil, f, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "-")
	f.Close()
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "other.csv"))
	require.NoError(t, err)
	require.Equal(t, 201, bytes.Count(b, []byte("\n")))
}

// blockedTransform starts "dica transform --out -" on 20,000 cells with
// its standard output a pipe that nobody reads, through sh -c when shell
// is not empty (shell runs before the command), and returns once the pipe
// is full: the command is then stuck in a write, where it cannot see that
// it is cancelled. drain reads the rest of the output.
func blockedTransform(t *testing.T, dir, shell string) (cmd *exec.Cmd, stderr *bytes.Buffer, done chan error, drain func() []byte) {
	t.Helper()
	args := []string{"transform", "--model", "m.dica", "--data", "big1.csv", "--quiet", "--out", "-"}
	if shell != "" {
		args = append([]string{"-c", shell + `; exec "$0" "$@"`, dicaBin(t)}, args...)
		cmd = exec.Command("/bin/sh", args...)
	} else {
		cmd = exec.Command(dicaBin(t), args...)
	}
	cmd.Dir = dir
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	stderr = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = w, stderr
	require.NoError(t, cmd.Start())
	w.Close()
	done = make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The pipe is full when it holds more than half its capacity (writes
	// fill its pages partly) and no more comes for 200 ms.
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	require.NoError(t, err)
	last, since := -1, time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
		require.NoError(t, err)
		if n != last {
			last, since = n, time.Now()
		} else if n > size/2 && time.Since(since) > 200*time.Millisecond {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the transform ended (%v) before filling the pipe: %s", err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the pipe holds %d bytes of %d after 60 s", n, size)
		}
		time.Sleep(5 * time.Millisecond)
	}
	drain = func() []byte {
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		return b
	}
	return cmd, stderr, done, drain
}

// alive fails unless the command is still running after d.
func alive(t *testing.T, done chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		done <- err
		t.Fatalf("%s: the command ended (%v)", what, err)
	case <-time.After(d):
	}
}

// endsWithin waits at most d for the command to end and returns how.
func endsWithin(t *testing.T, cmd *exec.Cmd, done chan error, d time.Duration) syscall.WaitStatus {
	t.Helper()
	select {
	case <-done:
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running %v after the signal", d)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// TestSignals: a second signal stops the command at once, even where the
// first cannot be acted on (a write that blocks), and the process dies of
// it as a shell expects; SIGQUIT stops at once with Go's dump; SIGHUP (the
// terminal closed) stops the command as SIGINT does, unless it was ignored
// when dica started (nohup). Before, a second signal was ignored, and
// SIGHUP and SIGQUIT killed the process without removing its temporaries.
func TestSignals(t *testing.T) {
	dir := outputJob(t)
	var xb bytes.Buffer
	for i := 0; i < 20000; i++ {
		xb.WriteString("11.5,42.25,63.125,84.5,105.75,126.5,147.25,168.125\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big1.csv"), xb.Bytes(), 0o644))

	for _, sigs := range [][2]syscall.Signal{{syscall.SIGINT, syscall.SIGINT}, {syscall.SIGTERM, syscall.SIGHUP}} {
		t.Run(sigs[0].String()+", "+sigs[1].String(), func(t *testing.T) {
			cmd, stderr, done, _ := blockedTransform(t, dir, "")
			require.NoError(t, cmd.Process.Signal(sigs[0]))
			alive(t, done, 300*time.Millisecond, "after the first signal")
			require.NoError(t, cmd.Process.Signal(sigs[1]))
			ws := endsWithin(t, cmd, done, 3*time.Second)
			require.True(t, ws.Signaled(), "exit status %d: %s", ws.ExitStatus(), stderr)
			require.Equal(t, sigs[1], ws.Signal())
			require.Contains(t, stderr.String(), "dica: "+sigs[1].String()+": stopped at once; the outputs in progress were removed")
		})
	}
	t.Run("quit", func(t *testing.T) {
		cmd, stderr, done, _ := blockedTransform(t, dir, "")
		require.NoError(t, cmd.Process.Signal(syscall.SIGQUIT))
		ws := endsWithin(t, cmd, done, 3*time.Second)
		require.Equal(t, 2, ws.ExitStatus(), stderr.String())
		require.Contains(t, stderr.String(), "dica: quit: stopped at once; the outputs in progress were removed")
		require.Contains(t, stderr.String(), "goroutine ")
	})
	t.Run("hangup", func(t *testing.T) {
		cmd, stderr, done, drain := blockedTransform(t, dir, "")
		require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
		alive(t, done, 100*time.Millisecond, "after SIGHUP, blocked")
		drain()
		ws := endsWithin(t, cmd, done, 10*time.Second)
		require.Equal(t, 1, ws.ExitStatus(), stderr.String())
		require.Contains(t, stderr.String(), "interrupted; no output was written")
	})
	t.Run("nohup", func(t *testing.T) {
		cmd, stderr, done, drain := blockedTransform(t, dir, `trap "" HUP`)
		require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
		out := drain()
		ws := endsWithin(t, cmd, done, 10*time.Second)
		require.Equal(t, 0, ws.ExitStatus(), stderr.String())
		require.Equal(t, 20001, bytes.Count(out, []byte("\n")), "SIGHUP stopped the command")
	})
}

// TestSignalsRemoveTemporaries: every signal that ends the command, at the
// first (SIGHUP, SIGQUIT) or second (SIGINT then SIGTERM) signal, removes
// the temporary outputs, of a file or of a store, and leaves the previous
// output as it was.
func TestSignalsRemoveTemporaries(t *testing.T) {
	longtest.Skip(t)
	dir, args, old := bigTransform(t)
	oldStore := filepath.Join(dir, "out.zarr")
	r := dicaRun(t, dir, "transform", "--model", "m.dica", "--data", "sample1.csv", "--quiet", "--out", "out.zarr")
	require.Equal(t, 0, r.code, r.stderr)
	storeBefore := storeTree(t, oldStore)
	for _, out := range []string{"out.csv", "out.zarr"} {
		args := append(slices.Clone(args[:len(args)-1]), out)
		for _, sigs := range [][]syscall.Signal{{syscall.SIGHUP}, {syscall.SIGQUIT}, {syscall.SIGINT, syscall.SIGTERM}} {
			t.Run(out+" "+sigs[0].String(), func(t *testing.T) {
				tmpGlob := filepath.Join(dir, "."+out+".tmp-*")
				cmd := exec.Command(dicaBin(t), args...)
				cmd.Dir = dir
				var errb bytes.Buffer
				cmd.Stderr = &errb
				require.NoError(t, cmd.Start())
				for deadline := time.Now().Add(60 * time.Second); ; {
					m, _ := filepath.Glob(tmpGlob)
					if len(m) == 1 && treeSize(m[0]) > 1<<20 {
						break
					}
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatalf("no output after 60 s: %s", errb.String())
					}
					time.Sleep(5 * time.Millisecond)
				}
				for _, s := range sigs {
					require.NoError(t, cmd.Process.Signal(s))
				}
				require.Error(t, cmd.Wait(), "the transform ended normally before the signal")
				m, _ := filepath.Glob(tmpGlob)
				require.Empty(t, m, "a temporary is left: %s", errb.String())
				b, err := os.ReadFile(filepath.Join(dir, "out.csv"))
				require.NoError(t, err)
				require.Equal(t, old, b, "the previous output changed")
				require.Equal(t, storeBefore, storeTree(t, oldStore), "the previous store changed")
			})
		}
	}
}

// treeSize returns the bytes under p, a file or a folder.
func treeSize(p string) int64 {
	var n int64
	filepath.Walk(p, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// TestModelFromPipe: a model given as a named pipe without a writer is
// abandoned at the first SIGTERM (transform, predict and plot waited in a
// second open of the pipe, made to say what kind of file it was, until a
// second signal killed them), and dica info refuses a pipe before opening
// it (it read the first bytes of the stream to learn its kind, then read
// the stream again from after them: "not a model file").
func TestModelFromPipe(t *testing.T) {
	dir := outputJob(t)
	fifo := filepath.Join(dir, "model.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{
		{"transform", "--model", "model.fifo", "--data", "sample1.csv", "--quiet", "--out", "out.csv"},
		{"predict", "--model", "model.fifo", "--data", "sample1.csv", "--quiet", "--out", "out.csv"},
		{"plot", "--model", "model.fifo", "--data", "sample1.csv", "--out", "out.png"},
	} {
		cmd := exec.Command(dicaBin(t), args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		alive(t, done, 300*time.Millisecond, "waiting for the pipe's writer")
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		ws := endsWithin(t, cmd, done, 3*time.Second)
		require.False(t, ws.Signaled(), "%v: killed by %v: %s", args, ws.Signal(), stderr.String())
		require.Equal(t, 1, ws.ExitStatus(), "%v: %s", args, stderr.String())
		require.Contains(t, stderr.String(), "interrupted", "%v", args)
	}

	r := dicaRun(t, dir, "info", "model.fifo")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "model.fifo is a pipe: dica info reads a file more than once")
	require.Less(t, r.elapsed, 3*time.Second)

	model, err := os.Open(filepath.Join(dir, "m.dica"))
	require.NoError(t, err)
	defer model.Close()
	cmd := exec.Command(dicaBin(t), "info", "/dev/stdin")
	cmd.Dir = dir
	cmd.Stdin = io.MultiReader(model) // a pipe, not the file
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	require.Error(t, cmd.Run())
	require.Contains(t, se.String(), "/dev/stdin is a pipe: dica info reads a file more than once")
	require.NotContains(t, se.String(), "magic number")
}
