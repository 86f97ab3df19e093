// Package atomicfile writes files so that the destination holds either its
// previous contents or the complete new contents, never a part: the bytes go
// to a temporary file in the destination's directory, which is synced to
// disk and renamed over the destination only when the whole output is
// written (rename within one directory is atomic on POSIX file systems).
// An output that fails, is cancelled or is interrupted leaves the previous
// file as it was; Abort removes the temporary file, and RemoveTemporaries
// removes those of every output in progress, for a process that exits on a
// signal (a process killed with SIGKILL leaves them behind, named
// ".NAME.tmp-*").
//
// Only a regular file is replaced: a device, a named pipe or a socket at the
// destination is refused, and so is a file this process may not write
// (write-protected, as a shell redirect refuses it). A symbolic link at the
// destination is followed, as by a shell redirect: the file it leads to is
// replaced and the link stays. A new file gets 0666 less the umask; a
// replaced file keeps its mode.
//
// CheckOutput refuses, before any work, an output path that is one of the
// inputs (by device and inode, so through symbolic and hard links too) or
// lies inside an input folder, that may not be replaced, or whose directory
// does not exist or cannot be written; for the standard output ("-"), a
// standard output redirected to an input.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an output in progress. Write to it as to an *os.File; Commit
// publishes it, Abort discards it.
type File struct {
	*os.File
	path string // destination, as given
	dest string // destination, the symbolic link at path resolved
	done bool
}

// TempPrefix begins the names of the temporary files, followed by the
// destination's base name: ".NAME.tmp-RANDOM".
const TempPrefix = "."

// Create starts writing a new version of the file at path. The destination
// is not touched until Commit. The new file gets the mode of the existing
// destination, or 0666 less the umask, as os.Create gives. Create refuses a
// destination that is not a regular file (a directory, a device, a named
// pipe, a socket) or that this process may not write. When path is a
// symbolic link, the file it leads to is replaced and the link stays, as
// with a shell redirect; a link that leads nowhere is refused.
func Create(path string) (*File, error) {
	if err := checkReplace(path); err != nil {
		return nil, err
	}
	dest, err := resolve(path)
	if err != nil {
		return nil, err
	}
	var mode fs.FileMode
	keep := false
	if fi, err := os.Stat(dest); err == nil {
		mode, keep = fi.Mode().Perm(), true
	}
	var f *os.File
	_, err = newTemp(dest, false, func(tmp string) error {
		var err error
		f, err = os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil && keep {
			if err = f.Chmod(mode); err != nil {
				f.Close()
				os.Remove(tmp)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, dest: dest}, nil
}

// resolve returns the file that an output at path replaces: path, or the
// file that the symbolic link at path leads to.
func resolve(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	dest, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link that leads to no file (%v): remove it or give another name", path, unwrapPath(err))
	}
	return dest, nil
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
// (the file a symbolic link leads to) and syncs its directory. The destination is checked again first: if it
// became something that may not be replaced during the write (a device, a
// named pipe, a write-protected file), Commit refuses. After an error the
// destination is unchanged and the temporary file is removed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.Name()
	defer Release(tmp)
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", f.path, unwrapPath(err))
	}
	err = Publish(func() error {
		if err := checkReplace(f.dest); err != nil {
			return err
		}
		if err := os.Rename(tmp, f.dest); err != nil {
			return fmt.Errorf("%s: %w", f.path, unwrapPath(err))
		}
		return nil
	})
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(f.dest))
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
	Release(f.Name())
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
// the same file through a symbolic or hard link as well) or lies inside an
// input that is a folder, it is a directory or not a regular file (a
// device, a named pipe, a socket), this process may not write it
// (write-protected), or its directory does not exist or is not writable.
// For out "-" (the standard output), the standard output must not be an
// input or lie inside one (a redirection onto an input). "" passes. Inputs
// that do not exist are ignored.
func CheckOutput(out string, inputs ...string) error {
	switch out {
	case "":
		return nil
	case "-":
		return checkStdout(inputs)
	}
	fi, err := os.Stat(out)
	if err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", out)
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if ii, ierr := os.Stat(in); err == nil && ierr == nil && os.SameFile(fi, ii) {
			if in == out {
				return fmt.Errorf("%s is also an input; write the output to another file", out)
			}
			return fmt.Errorf("%s is the input %s (the same file); write the output to another file", out, in)
		}
		if Within(out, in) {
			return fmt.Errorf("%s is inside the input %s; write the output outside it", out, in)
		}
	}
	if err := checkReplace(out); err != nil {
		return err
	}
	if err := checkFolder(out); err != nil {
		return err
	}
	f, err := Create(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	f.Abort()
	return nil
}
