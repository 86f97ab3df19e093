package anndata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/internal/atomicfile"
)

// checkDest returns the Zarr store at dest, which a writer may replace, or
// nil when dest is absent; or an error: dest exists and is not a Zarr store
// (a folder with .zgroup), this process may not write the store or a folder
// in it (write-protected), or the folder of dest does not exist.
func checkDest(dest string) (fs.FileInfo, error) {
	fi, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(dest)
		di, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: the folder %s does not exist", dest, dir)
		}
		if !di.IsDir() {
			return nil, fmt.Errorf("%s: %s is not a folder", dest, dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() || !zarr.IsGroup(os.DirFS(dest), ".") {
		return nil, fmt.Errorf("%s exists and is not a Zarr store (a folder with .zgroup); only a Zarr store is replaced: remove it or choose another name", dest)
	}
	// Replacing the store removes it: every folder in it must be writable.
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return atomicfile.Writable(p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return fi, nil
}

// CheckOutput returns an error, before any work is done, when a store
// cannot be written at out: out exists and is not a Zarr store or is
// write-protected, its folder does not exist or cannot be written, out is
// one of the inputs or holds one (an input file inside the store, an input
// store itself), or out lies inside an input store. Folders are compared
// by device and inode, along the paths as written and with their symbolic
// links resolved.
func CheckOutput(out string, inputs ...string) error {
	if _, err := checkDest(out); err != nil {
		return err
	}
	oi, oerr := os.Stat(out)
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if ii, err := os.Stat(in); oerr == nil && err == nil && os.SameFile(oi, ii) {
			return fmt.Errorf("%s is also an input; write the output to another store", out)
		}
		if atomicfile.Within(in, out) {
			return fmt.Errorf("%s holds the input %s; write the output to another store", out, in)
		}
		if atomicfile.Within(out, in) {
			return fmt.Errorf("%s is inside the input %s; write the output outside it", out, in)
		}
	}
	tmp, err := atomicfile.TempDir(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	defer atomicfile.Release(tmp)
	return os.Remove(tmp)
}

// changedError says that the destination of a store changed while the
// store was written: a file or folder appeared there, or the store checked
// at the start was replaced or changed. Both are kept.
type changedError struct {
	dest, tmp, what string
}

func (e *changedError) Error() string {
	return fmt.Sprintf("%s %s during the run: it is left as it is, and the new store is kept in %s (rename it yourself)", e.dest, e.what, e.tmp)
}

// leftError says that the new store is in place but the previous one
// could not be removed entirely.
type leftError struct {
	old string
	err error
}

func (e *leftError) Error() string {
	return fmt.Sprintf("the new store is in place, but the previous one could not be removed entirely (%v): what remains is in %s", e.err, e.old)
}

// sameStore reports whether now is the folder was, unchanged at its top
// (the same device, inode and modification time: no entry added, removed
// or renamed there).
func sameStore(was, now fs.FileInfo) bool {
	return was != nil && now.IsDir() && os.SameFile(was, now) && now.ModTime().Equal(was.ModTime())
}

// replaceDir moves the complete store tmp to dest, where the store was was
// found when the writer started (nil: dest was absent). It publishes only
// over that same store, unchanged at its top, or over nothing; otherwise it
// returns a *changedError and dest and tmp are both kept. The store is
// exchanged in one atomic step where the file system allows it, else
// renamed twice (dest to a side name, then tmp to dest); the folder that
// comes out is checked to be the store was before it is removed (else it
// is put back). After the new store is in place, a failure to remove the
// previous one is a *leftError.
func replaceDir(tmp, dest string, was fs.FileInfo) error {
	var old string
	err := atomicfile.Publish(func() error {
		fi, err := os.Lstat(dest)
		if errors.Is(err, fs.ErrNotExist) {
			err = renameNoReplace(tmp, dest)
			if errors.Is(err, fs.ErrExist) {
				return &changedError{dest, tmp, "appeared"}
			}
			return err
		}
		if err != nil {
			return err
		}
		if was == nil {
			return &changedError{dest, tmp, "appeared"}
		}
		if !sameStore(was, fi) || !zarr.IsGroup(os.DirFS(dest), ".") {
			return &changedError{dest, tmp, "was replaced or changed"}
		}
		ok, err := exchange(tmp, dest)
		if err != nil {
			return err
		}
		if ok {
			if oi, err := os.Lstat(tmp); err != nil || !sameStore(was, oi) {
				exchange(tmp, dest) // put it back
				return &changedError{dest, tmp, "was replaced or changed"}
			}
			old = tmp
			return nil
		}
		side := strings.Replace(tmp, ".tmp-", ".old-", 1)
		if err := os.Rename(dest, side); err != nil {
			return err
		}
		if oi, err := os.Lstat(side); err != nil || !sameStore(was, oi) {
			renameNoReplace(side, dest)
			return &changedError{dest, tmp, "was replaced or changed"}
		}
		if err := renameNoReplace(tmp, dest); err != nil {
			renameNoReplace(side, dest)
			return err
		}
		old = side
		return nil
	})
	if err != nil {
		return err
	}
	syncDir(filepath.Dir(dest))
	if err := os.RemoveAll(old); err != nil {
		return &leftError{old, err}
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// syncDirs fsyncs every directory under dir (the files are synced as they
// are written), so that the store's names are on disk.
func syncDirs(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			syncDir(p) // some file systems refuse to sync a directory
		}
		return nil
	})
}

// renameIfAbsent renames a to b unless b exists (an error that is
// fs.ErrExist): checked, then renamed, in two steps.
func renameIfAbsent(a, b string) error {
	if _, err := os.Lstat(b); err == nil {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: fs.ErrExist}
	}
	return os.Rename(a, b)
}
