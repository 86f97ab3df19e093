package anndata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dicalab/dica/anndata/internal/zarr"
)

// tempDir creates the temporary directory of a store written to dest:
// ".NAME.tmp-RANDOM" beside it, so that renaming it into place stays on
// one file system.
func tempDir(dest string) (string, error) {
	dir, base := filepath.Split(filepath.Clean(dest))
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." || base == string(filepath.Separator) {
		return "", fmt.Errorf("%s: not a store name", dest)
	}
	tmp, err := os.MkdirTemp(dir, "."+base+".tmp-")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	return tmp, nil
}

// checkDest returns an error unless dest is absent or a Zarr store (a
// directory with .zgroup), which a writer may replace.
func checkDest(dest string) error {
	fi, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(dest)
		di, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("%s: the folder %s does not exist", dest, dir)
		}
		if !di.IsDir() {
			return fmt.Errorf("%s: %s is not a folder", dest, dir)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || !zarr.IsGroup(os.DirFS(dest), ".") {
		return fmt.Errorf("%s exists and is not a Zarr store (a folder with .zgroup); only a Zarr store is replaced: remove it or choose another name", dest)
	}
	return nil
}

// CheckOutput returns an error, before any work is done, when a store
// cannot be written at out: out exists and is not a Zarr store, its folder
// does not exist or cannot be written, or out is one of the inputs or
// holds one (an input file inside the store, an input store itself,
// compared by device and inode).
func CheckOutput(out string, inputs ...string) error {
	if err := checkDest(out); err != nil {
		return err
	}
	if oi, err := os.Stat(out); err == nil {
		for _, in := range inputs {
			if in == "" || in == "-" {
				continue
			}
			for p := filepath.Clean(in); ; {
				if pi, err := os.Stat(p); err == nil && os.SameFile(oi, pi) {
					return fmt.Errorf("%s holds the input %s; write the output to another store", out, in)
				}
				q := filepath.Dir(p)
				if q == p {
					break
				}
				p = q
			}
		}
	}
	tmp, err := tempDir(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	return os.Remove(tmp)
}

// replaceDir moves the complete store tmp to dest: one atomic exchange
// where the file system allows it, else two renames (dest to a side name,
// then tmp to dest); the previous store is then removed.
func replaceDir(tmp, dest string) error {
	if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, dest); err != nil {
			return err
		}
		syncDir(filepath.Dir(dest))
		return nil
	}
	ok, err := exchange(tmp, dest)
	if err != nil {
		return err
	}
	old := tmp
	if !ok {
		old = strings.Replace(tmp, ".tmp-", ".old-", 1)
		if err := os.Rename(dest, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, dest); err != nil {
			os.Rename(old, dest)
			return err
		}
	}
	syncDir(filepath.Dir(dest))
	return os.RemoveAll(old)
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
