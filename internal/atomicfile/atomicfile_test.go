package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteKeepsOldOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(p, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("half a rec"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("after a failed write the file holds %q", b)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Fatalf("stray files: %v", got)
	}
	if err := WriteFile(p, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new\n" {
		t.Fatalf("after Write the file holds %q", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old file's 0640", fi.Mode().Perm())
	}
	if got := names(t, dir); len(got) != 1 {
		t.Fatalf("stray files: %v", got)
	}
}

func TestNewFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "m.dica")
	if err := WriteFile(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 as os.Create gives under umask 022", fi.Mode().Perm())
	}
}

func TestAbortAndCommitOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(f.Name()), ".a.tmp-") {
		t.Errorf("temporary name %s", f.Name())
	}
	f.WriteString("data")
	f.Abort()
	f.Abort()
	if got := names(t, dir); len(got) != 0 {
		t.Fatalf("after Abort: %v", got)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination exists after Abort: %v", err)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.csv")
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out, want string
	}{
		{in, "is also an input"},
		{sym, "is the input " + in},
		{hard, "is the input " + in},
		{filepath.Join(dir, "missing", "out.csv"), "does not exist"},
		{dir, "is a directory"},
		{filepath.Join(in, "x"), "is not a folder"},
		{filepath.Join(dir, "new.csv"), ""},
		{"-", ""},
	} {
		err := CheckOutput(c.out, "", "-", filepath.Join(dir, "absent"), in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckOutput(%s): %v", c.out, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckOutput(%s) = %v, want %q", c.out, err, c.want)
		}
	}
	if os.Geteuid() != 0 {
		if err := CheckOutput(filepath.Join(ro, "out.csv")); err == nil {
			t.Error("CheckOutput in a read-only folder passed")
		}
	}
	if got := names(t, dir); len(got) != 4 {
		t.Errorf("CheckOutput left files: %v", got)
	}
}
