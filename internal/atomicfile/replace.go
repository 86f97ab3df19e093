package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkReplace returns an error when the file at path, if there is one, may
// not be replaced by a new regular file: it is a folder, it is not a
// regular file (a device, a named pipe, a socket: renaming a file over it
// would destroy it) or it is write-protected for this process.
func checkReplace(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil // absent (or a dangling link): a new file is created
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", path)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file, and an output would replace it: give the name of a regular file", path, Kind(fi.Mode()))
	}
	return Writable(path)
}

// Kind names the kind of a file that is not a regular file ("a named pipe
// (FIFO)", "a directory", ...), for messages that refuse it.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDir != 0:
		return "a directory"
	}
	return "a special file"
}

// Writable returns an error, as a shell redirect would give ("permission
// denied"), when this process may not write the existing file or folder at
// path: it is write-protected (mode 0444 for a user who is not root), on a
// read-only file system or immutable. A path that does not exist passes.
func Writable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	err = access(path, fi)
	if err == nil {
		return nil
	}
	what := "file"
	if fi.IsDir() {
		what = "folder"
	}
	return fmt.Errorf("%s: %v (the %s is write-protected, mode %04o): make it writable or choose another name", path, err, what, fi.Mode().Perm())
}

// Within reports whether path is the folder dir or lies inside it: whether
// one of the folders above path is dir, compared by device and inode, along
// path as written and along path with its symbolic links resolved. path
// need not exist.
func Within(path, dir string) bool {
	di, err := os.Stat(dir)
	if err != nil || !di.IsDir() {
		return false
	}
	for _, p := range paths(path) {
		for {
			if pi, err := os.Stat(p); err == nil && os.SameFile(pi, di) {
				return true
			}
			q := filepath.Dir(p)
			if q == p {
				break
			}
			p = q
		}
	}
	return false
}

// paths returns path made absolute, and path with its symbolic links
// resolved as far as it exists (a ".." after a link goes up from where the
// link leads, as the kernel takes it).
func paths(path string) []string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return []string{filepath.Clean(path)}
	}
	out := []string{abs}
	raw := path
	if !filepath.IsAbs(raw) {
		wd, err := os.Getwd()
		if err != nil {
			return out
		}
		raw = wd + string(filepath.Separator) + raw
	}
	// The longest leading part that resolves, then the rest as written.
	parts := strings.Split(raw, string(filepath.Separator))
	for k := len(parts); k > 0; k-- {
		head := strings.Join(parts[:k], string(filepath.Separator))
		if head == "" {
			head = string(filepath.Separator)
		}
		if r, err := filepath.EvalSymlinks(head); err == nil {
			if r = filepath.Join(append([]string{r}, parts[k:]...)...); r != abs {
				out = append(out, r)
			}
			break
		}
	}
	return out
}

// checkStdout returns an error when the standard output is a regular file
// that is one of inputs (the same device and inode) or lies inside an
// input folder: writing the output there would change an input (as
// "cmd < f >> f" would; GNU cat refuses it too).
func checkStdout(inputs []string) error {
	so, err := os.Stdout.Stat()
	if err != nil || !so.Mode().IsRegular() {
		return nil
	}
	// Linux names the file of the standard output.
	name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", os.Stdout.Fd()))
	if err != nil || !filepath.IsAbs(name) {
		name = ""
	} else if ni, err := os.Stat(name); err != nil || !os.SameFile(ni, so) {
		name = ""
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ii, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(so, ii) {
			return fmt.Errorf("the standard output is the input %s (the same file): the output would be written into it; redirect it to another file", in)
		}
		if name != "" && ii.IsDir() && Within(name, in) {
			return fmt.Errorf("the standard output is %s, inside the input %s: the output would be written into it; redirect it to another file", name, in)
		}
	}
	return nil
}

// checkFolder returns an error when the folder of out is missing or not a
// folder.
func checkFolder(out string) error {
	dir := filepath.Dir(out)
	di, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: the folder %s does not exist", out, dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", out, unwrapPath(err))
	}
	if !di.IsDir() {
		return fmt.Errorf("%s: %s is not a folder", out, dir)
	}
	return nil
}
