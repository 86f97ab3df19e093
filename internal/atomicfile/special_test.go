//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specials makes, in dir, files that are not regular files, by name: a
// named pipe, a socket, a character device (as root only: mknod needs it;
// the test logs why it is missing otherwise) and a symbolic link to the
// pipe.
func specials(t *testing.T, dir string) map[string]string {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	out := map[string]string{fifo: "a named pipe (FIFO)", sock: "a socket"}
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		out[null] = "a character device"
	} else {
		t.Logf("no device node (mknod needs root): %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("fifo", link); err != nil {
		t.Fatal(err)
	}
	out[link] = "a named pipe (FIFO)"
	return out
}

// types returns the type bits of the files of dir, by name.
func types(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fs.FileMode{}
	for _, e := range ents {
		out[e.Name()] = e.Type()
	}
	return out
}

func TestNotRegularRefused(t *testing.T) {
	dir := t.TempDir()
	files := specials(t, dir)
	before := types(t, dir)
	for p, kind := range files {
		want := kind + ", not a regular file"
		if err := CheckOutput(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOutput(%s) = %v, want %q", p, err, want)
		}
		if f, err := Create(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Create(%s) = %v, want %q", p, err, want)
			if f != nil {
				f.Abort()
			}
		}
		if err := WriteFile(p, []byte("x")); err == nil {
			t.Errorf("WriteFile(%s) passed", p)
		}
	}
	if after := types(t, dir); !equalTypes(before, after) {
		t.Errorf("files changed: %v, were %v", after, before)
	}
}

func equalTypes(a, b map[string]fs.FileMode) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCommitChecksAgain: a named pipe that appears at the destination
// while the output is written is not replaced.
func TestCommitChecksAgain(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("data")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err == nil || !strings.Contains(err.Error(), "a named pipe (FIFO), not a regular file") {
		t.Fatalf("Commit over a named pipe: %v", err)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("the named pipe is now %v (%v)", fi, err)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("stray files: %v", got)
	}
}

// TestSymlinkFollowed: an output through a symbolic link replaces the file
// the link leads to, with its mode, and the link stays; a link that leads
// nowhere is refused.
func TestSymlinkFollowed(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "sub", "real.csv")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("sub/real.csv", link); err != nil {
		t.Fatal(err)
	}
	if err := CheckOutput(link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(link); err != nil || l != "sub/real.csv" {
		t.Fatalf("the link is now %q (%v)", l, err)
	}
	b, _ := os.ReadFile(target)
	fi, _ := os.Stat(target)
	if string(b) != "new\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("target holds %q, mode %v; want \"new\\n\", 0640", b, fi.Mode().Perm())
	}
	if got := names(t, filepath.Join(dir, "sub")); len(got) != 1 {
		t.Errorf("stray files: %v", got)
	}

	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("missing/x", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dangling, []byte("x")); err == nil || !strings.Contains(err.Error(), "leads to no file") {
		t.Errorf("WriteFile through a dangling link: %v", err)
	}
	if l, err := os.Readlink(dangling); err != nil || l != "missing/x" {
		t.Errorf("the dangling link is now %q (%v)", l, err)
	}
}

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "cells.zarr")
	if err := os.MkdirAll(filepath.Join(store, "uns"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("cells.zarr", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(store, "uns"), filepath.Join(dir, "other", "deep")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{filepath.Join(store, "uns", "qc.zarr"), store, true},
		{filepath.Join(store, "sub.zarr"), store, true},
		{filepath.Join(store, "a", "b", "c"), store, true}, // need not exist
		{store, store, true},
		{filepath.Join(dir, "link", "sub.zarr"), store, true},
		{filepath.Join(dir, "other", "deep", "x"), store, true},
		{dir + "/other/deep/../x", store, true}, // ".." after a link goes up from where it leads
		{dir + "/other/deep/../../other/x", store, false},
		{filepath.Join(store, "sub.zarr"), filepath.Join(dir, "link"), true},
		{filepath.Join(dir, "other", "x"), store, false},
		{filepath.Join(dir, "cells.zarr2"), store, false},
		{dir, store, false},
		{filepath.Join(store, "uns", "x"), filepath.Join(dir, "absent"), false},
		{filepath.Join(store, "uns", "x"), filepath.Join(store, "uns", "x"), false}, // not a folder
	} {
		if got := Within(c.path, c.dir); got != c.want {
			t.Errorf("Within(%s, %s) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

// TestOutputInsideInputFolder: an output inside an input that is a folder
// (a Zarr store) is refused: it would change the input.
func TestOutputInsideInputFolder(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "cells.zarr")
	if err := os.MkdirAll(filepath.Join(store, "X"), 0o755); err != nil {
		t.Fatal(err)
	}
	chunk := filepath.Join(store, "X", "0.0")
	if err := os.WriteFile(chunk, []byte("chunk"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{chunk, filepath.Join(store, ".zattrs"), filepath.Join(store, "qc.csv")} {
		err := CheckOutput(out, store)
		if err == nil || !strings.Contains(err.Error(), "is inside the input "+store) {
			t.Errorf("CheckOutput(%s, %s) = %v", out, store, err)
		}
	}
	if err := CheckOutput(filepath.Join(dir, "qc.csv"), store); err != nil {
		t.Error(err)
	}
	if b, _ := os.ReadFile(chunk); string(b) != "chunk" {
		t.Errorf("chunk is %q", b)
	}
}

// TestStdoutOntoInput: a standard output redirected onto an input ("--out
// - >> in.csv"), or into an input folder, is refused.
func TestStdoutOntoInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "s.zarr")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	defer func() { os.Stdout = stdout }()
	for _, c := range []struct {
		file string
		want string
	}{
		{in, "the standard output is the input " + in},
		{filepath.Join(store, ".zattrs"), "inside the input " + store},
		{filepath.Join(dir, "other.csv"), ""},
	} {
		f, err := os.OpenFile(c.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout = f
		err = CheckOutput("-", "", in, store)
		os.Stdout = stdout
		f.Close()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("stdout %s: %v", c.file, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("stdout %s: %v, want %q", c.file, err, c.want)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "1,2\n" {
		t.Errorf("input is %q", b)
	}
	// A pipe or a terminal is never an input file.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	os.Stdout = w
	err = CheckOutput("-", in)
	os.Stdout = stdout
	if err != nil {
		t.Errorf("stdout a pipe: %v", err)
	}
}

// asUser runs the test named name again in a child process as the user
// nobody when this one is root (root may write any file), and reports
// whether it did: then the caller returns and the child's result counts.
// Run by a user who is not root, it does nothing.
func asUser(t *testing.T, name string) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv("ATOMICFILE_AS_USER") != "" {
		return false
	}
	// The test binary, where nobody can run it.
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "atomicfile.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "ATOMICFILE_AS_USER=1", "TMPDIR=/tmp")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody did not pass:\n%s", name, out)
	}
	t.Logf("run as nobody:\n%s", out)
	return true
}

// TestWriteProtected: a file the user may not write (mode 0444) is not
// replaced, as a shell redirect refuses it ("permission denied"); root,
// which a shell lets write it, runs this test as nobody.
func TestWriteProtected(t *testing.T) {
	if asUser(t, "TestWriteProtected") {
		return
	}
	if os.Geteuid() == 0 {
		t.Skip("root may write any file: run as a user")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "ro.dica")
	if err := os.WriteFile(p, []byte("thesis\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.dica")
	if err := os.Symlink("ro.dica", link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{p, link} {
		if err := CheckOutput(out); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("CheckOutput(%s) = %v", out, err)
		}
		if err := WriteFile(out, []byte("new")); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("WriteFile(%s) = %v", out, err)
		}
	}
	// Made write-protected while the output is written: Commit refuses.
	q := filepath.Join(dir, "late.csv")
	if err := os.WriteFile(q, []byte("thesis\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(q)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if err := os.Chmod(q, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Commit over a file made read-only: %v", err)
	}
	for _, name := range []string{p, q} {
		b, _ := os.ReadFile(name)
		fi, _ := os.Stat(name)
		if string(b) != "thesis\n" || fi.Mode().Perm() != 0o444 {
			t.Errorf("%s: %q, mode %v", name, b, fi.Mode().Perm())
		}
	}
	if got := names(t, dir); len(got) != 3 {
		t.Errorf("files: %v", got)
	}
}

// TestModes: new files and folders take 0666 and 0777 less the umask, and
// a replaced one keeps the mode of the one it replaces.
func TestModes(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	mode := func(p string) fs.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	p := filepath.Join(dir, "new.csv")
	if err := WriteFile(p, nil); err != nil {
		t.Fatal(err)
	}
	if m := mode(p); m != 0o640 {
		t.Errorf("new file: %v, want 0640", m)
	}
	if err := os.Chmod(p, 0o604); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, nil); err != nil {
		t.Fatal(err)
	}
	if m := mode(p); m != 0o604 {
		t.Errorf("replaced file: %v, want 0604", m)
	}
	tmp, err := TempDir(filepath.Join(dir, "new.zarr"))
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(tmp); m != 0o750 {
		t.Errorf("new folder: %v, want 0750 (0700 is os.MkdirTemp's)", m)
	}
	os.Remove(tmp)
	Release(tmp)
	store := filepath.Join(dir, "old.zarr")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err = TempDir(store)
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(tmp); m != 0o755 {
		t.Errorf("folder replacing a 0755 one: %v, want 0755", m)
	}
	os.Remove(tmp)
	Release(tmp)
}

// TestRemoveTemporaries: the temporaries of the outputs in progress are
// removed, the destinations are left as they were, and nothing is written
// afterwards; a Publish in progress completes first.
func TestRemoveTemporaries(t *testing.T) {
	defer func() {
		temps.Lock()
		temps.closed = false
		temps.Unlock()
	}()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(old, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Create(old)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("new\n")
	b, err := Create(filepath.Join(dir, "b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	done, err := Create(filepath.Join(dir, "done.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := done.Commit(); err != nil {
		t.Fatal(err)
	}
	d, err := TempDir(filepath.Join(dir, "s.zarr"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d, "X"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "X", "0.0"), []byte("chunk"), 0o666); err != nil {
		t.Fatal(err)
	}

	// A Publish in progress holds RemoveTemporaries back until it is done.
	inPublish, release := make(chan bool), make(chan bool)
	published := make(chan error)
	go func() {
		published <- Publish(func() error {
			inPublish <- true
			<-release
			return nil
		})
	}()
	<-inPublish
	removed := make(chan bool)
	go func() {
		RemoveTemporaries()
		close(removed)
	}()
	select {
	case <-removed:
		t.Fatal("RemoveTemporaries ran during a Publish")
	case <-time.After(50 * time.Millisecond):
	}
	release <- true
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	<-removed

	want := []string{"done.csv", "old.csv"}
	if got := names(t, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after RemoveTemporaries: %v, want %v", got, want)
	}
	if err := a.Commit(); !errors.Is(err, ErrInterrupted) {
		t.Errorf("Commit after RemoveTemporaries: %v", err)
	}
	b.Abort()
	if bs, _ := os.ReadFile(old); string(bs) != "old\n" {
		t.Errorf("old.csv holds %q", bs)
	}
	if _, err := Create(filepath.Join(dir, "c.csv")); !errors.Is(err, ErrInterrupted) {
		t.Errorf("Create after RemoveTemporaries: %v", err)
	}
	if _, err := TempDir(filepath.Join(dir, "c.zarr")); !errors.Is(err, ErrInterrupted) {
		t.Errorf("TempDir after RemoveTemporaries: %v", err)
	}
	if err := Write(filepath.Join(dir, "w.csv"), func(io.Writer) error { return nil }); !errors.Is(err, ErrInterrupted) {
		t.Errorf("Write after RemoveTemporaries: %v", err)
	}
	if got := names(t, dir); len(got) != 2 {
		t.Errorf("files: %v", got)
	}
}
