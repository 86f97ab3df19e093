package anndata

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
)

// oneCell starts a store of one cell of value v at path.
func oneCell(t *testing.T, path string, v float64) *Writer {
	t.Helper()
	w, err := Create(path, WriterOptions{Vars: []string{"m"}})
	require.NoError(t, err)
	b := dataset.Block{Rows: 1, D: 1, X: []float64{v}, Domain: []int{0}}
	require.NoError(t, w.WriteBlock(&b, nil, []string{"d"}, nil))
	return w
}

// tree returns the files under dir with their contents, by path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[strings.TrimPrefix(p, dir)] = string(b)
		}
		return nil
	}))
	return out
}

// TestCommitRace: Commit publishes only over the store checked when the
// writer started, unchanged, or over nothing. What appeared at the path
// during the run, or a store replaced or changed meanwhile, is left as it
// is, and the new store is kept beside it, named in the error.
func TestCommitRace(t *testing.T) {
	thesis := func(t *testing.T, dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "thesis.txt"), []byte("thesis"), 0o644))
	}
	for _, c := range []struct {
		name   string
		store  bool                              // a store at the path when the writer starts
		during func(t *testing.T, p, dir string) // done at the path while the store is written
		want   string                            // the error ("": published)
	}{
		{"absent, folder made", false, func(t *testing.T, p, _ string) {
			require.NoError(t, os.Mkdir(p, 0o755))
			thesis(t, p)
		}, "appeared during the run"},
		{"absent, empty folder made", false, func(t *testing.T, p, _ string) {
			require.NoError(t, os.Mkdir(p, 0o755))
		}, "appeared during the run"},
		{"absent, file made", false, func(t *testing.T, p, _ string) {
			require.NoError(t, os.WriteFile(p, []byte("thesis"), 0o644))
		}, "appeared during the run"},
		{"store, replaced by a folder", true, func(t *testing.T, p, dir string) {
			require.NoError(t, os.Rename(p, filepath.Join(dir, "moved.zarr")))
			require.NoError(t, os.Mkdir(p, 0o755))
			thesis(t, p)
		}, "was replaced or changed"},
		{"store, replaced by another store", true, func(t *testing.T, p, dir string) {
			require.NoError(t, os.Rename(p, filepath.Join(dir, "moved.zarr")))
			oneCell(t, p, 7).Commit()
		}, "was replaced or changed"},
		{"store, file added", true, func(t *testing.T, p, _ string) {
			thesis(t, p)
		}, "was replaced or changed"},
		{"store, .zgroup removed", true, func(t *testing.T, p, _ string) {
			require.NoError(t, os.Remove(filepath.Join(p, ".zgroup")))
		}, "was replaced or changed"},
		{"store, removed", true, func(t *testing.T, p, _ string) {
			require.NoError(t, os.RemoveAll(p))
		}, ""},
		{"store, unchanged", true, func(*testing.T, string, string) {}, ""},
		{"absent, still absent", false, func(*testing.T, string, string) {}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "race.zarr")
			if c.store {
				require.NoError(t, oneCell(t, p, 1).Commit())
			}
			w := oneCell(t, p, 42)
			c.during(t, p, dir)
			var before map[string]string
			if _, err := os.Lstat(p); err == nil {
				before = tree(t, p)
			}
			err := w.Commit()
			if c.want == "" {
				require.NoError(t, err)
				x, _ := readArray(t, p, "X")
				require.Equal(t, []float64{42}, x)
			} else {
				require.ErrorContains(t, err, c.want)
				require.Equal(t, before, tree(t, p), "what is at the path changed")
				// The new store is kept, in the folder the error names.
				m := regexp.MustCompile(`kept in (\S+)`).FindStringSubmatch(err.Error())
				require.NotNil(t, m, err.Error())
				x, _ := readArray(t, m[1], "X")
				require.Equal(t, []float64{42}, x)
				require.NoError(t, os.RemoveAll(m[1]))
			}
			w.Abort()
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range ents {
				require.NotContains(t, e.Name(), ".tmp-", "a temporary folder is left")
				require.NotContains(t, e.Name(), ".old-", "a previous store is left")
			}
		})
	}
}

// TestCheckOutputInsideInput: a store inside an input store, or holding an
// input, is refused, by path and through symbolic links.
func TestCheckOutputInsideInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "cells.zarr")
	require.NoError(t, oneCell(t, in, 1).Commit())
	require.NoError(t, os.Symlink("cells.zarr", filepath.Join(dir, "link.zarr")))
	out := filepath.Join(dir, "out.zarr")
	require.NoError(t, oneCell(t, out, 2).Commit())
	require.NoError(t, os.WriteFile(filepath.Join(out, "in.csv"), []byte("1\n"), 0o644))
	require.NoError(t, os.Symlink("out.zarr", filepath.Join(dir, "olink")))
	before := tree(t, dir)
	for _, c := range []struct {
		out, in, want string
	}{
		{filepath.Join(in, "uns", "qc.zarr"), in, "is inside the input " + in},
		{filepath.Join(in, "sub.zarr"), in, "is inside the input " + in},
		{filepath.Join(dir, "link.zarr", "sub.zarr"), in, "is inside the input " + in},
		{filepath.Join(in, "sub.zarr"), filepath.Join(dir, "link.zarr"), "is inside the input"},
		{out, filepath.Join(out, "in.csv"), "holds the input"},
		{out, filepath.Join(dir, "olink", "in.csv"), "holds the input"},
		{filepath.Join(dir, "olink"), filepath.Join(out, "in.csv"), "is not a Zarr store"}, // a link is not replaced
		{in, filepath.Join(dir, "link.zarr"), "is also an input"},
		{filepath.Join(dir, "new.zarr"), in, ""},
		{out, in, ""},
	} {
		err := CheckOutput(c.out, c.in)
		if c.want == "" {
			require.NoError(t, err, "%s, input %s", c.out, c.in)
		} else {
			require.ErrorContains(t, err, c.want, "%s, input %s", c.out, c.in)
		}
	}
	require.Equal(t, before, tree(t, dir))
}

// TestStoreModes: a new store's folder takes 0777 less the umask (not
// 0700), and a replaced store keeps its folder's mode.
func TestStoreModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "m.zarr")
	require.NoError(t, oneCell(t, p, 1).Commit())
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	require.NoError(t, os.Chmod(p, 0o750))
	require.NoError(t, oneCell(t, p, 2).Commit())
	fi, err = os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
}

// TestWriteProtectedStore: a store this user may not write (its folder or
// one inside it write-protected) is not replaced: removing it would fail
// half-way. Root may write anything; cmd/dica's TestProtectedOutputs runs
// the command as nobody.
func TestWriteProtectedStore(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any folder: run as a user (cmd/dica's TestProtectedOutputs runs as nobody)")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "ro.zarr")
	require.NoError(t, oneCell(t, p, 1).Commit())
	for _, ro := range []string{p, filepath.Join(p, "X")} {
		require.NoError(t, os.Chmod(ro, 0o555))
		before := tree(t, p)
		require.ErrorContains(t, CheckOutput(p), "permission denied")
		_, err := Create(p, WriterOptions{Vars: []string{"m"}})
		require.ErrorContains(t, err, "permission denied")
		require.Equal(t, before, tree(t, p))
		require.NoError(t, os.Chmod(ro, 0o755))
	}
}
