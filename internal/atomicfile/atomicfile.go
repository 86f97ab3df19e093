// Package atomicfile writes files so that the destination holds either its
// previous contents or the complete new contents, never a part: the bytes go
// to a temporary file in the destination's directory, which is synced to
// disk and renamed over the destination only when the whole output is
// written (rename within one directory is atomic on POSIX file systems).
// An output that fails, is cancelled or is interrupted leaves the previous
// file as it was; Abort removes the temporary file (a process killed with
// SIGKILL leaves it behind, named ".NAME.tmp-*").
//
// CheckOutput refuses, before any work, an output path that is one of the
// inputs (by device and inode, so through symbolic and hard links too) or
// whose directory does not exist or cannot be written.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// File is an output in progress. Write to it as to an *os.File; Commit
// publishes it, Abort discards it.
type File struct {
	*os.File
	path string // destination
	done bool
}

// TempPrefix begins the names of the temporary files, followed by the
// destination's base name: ".NAME.tmp-RANDOM".
const TempPrefix = "."

// Create starts writing a new version of the file at path. The destination
// is not touched until Commit. The new file gets the mode of the existing
// destination, or 0666 less the umask, as os.Create gives.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, fmt.Errorf("%s: not a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	var mode fs.FileMode
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		mode = fi.Mode().Perm()
	}
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, TempPrefix+base+".tmp-"+strconv.FormatUint(rand.Uint64()>>16, 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
		}
		if mode != 0 {
			if err := f.Chmod(mode); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
		}
		return &File{File: f, path: path}, nil
	}
}

// unwrapPath drops the temporary name from an *fs.PathError.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path returns the destination.
func (f *File) Path() string { return f.path }

// Commit syncs the new contents to disk, renames them over the destination
// and syncs the directory. After an error the destination is unchanged and
// the temporary file is removed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", f.path, unwrapPath(err))
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort discards the new contents; the destination is unchanged. It does
// nothing after Commit or a previous Abort, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: some file systems refuse to sync a directory
		d.Close()
	}
}

// Write writes the output of write to path atomically: the destination
// changes only if write returns nil and the contents reach the disk.
func Write(path string, write func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckOutput returns an error, before any work is done, when out cannot be
// written as an output: it is one of inputs (the same device and inode, so
// the same file through a symbolic or hard link as well), it is a
// directory, or its directory does not exist or is not writable. "-" (the
// standard output) and "" pass. Inputs that do not exist are ignored.
func CheckOutput(out string, inputs ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	fi, err := os.Stat(out)
	if err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory; give a file name", out)
		}
		for _, in := range inputs {
			if in == "" || in == "-" {
				continue
			}
			if ii, err := os.Stat(in); err == nil && os.SameFile(fi, ii) {
				if in == out {
					return fmt.Errorf("%s is also an input; write the output to another file", out)
				}
				return fmt.Errorf("%s is the input %s (the same file); write the output to another file", out, in)
			}
		}
	}
	dir := filepath.Dir(out)
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: the folder %s does not exist", out, dir)
	}
	if !di.IsDir() {
		return fmt.Errorf("%s: %s is not a folder", out, dir)
	}
	f, err := Create(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	f.Abort()
	return nil
}
