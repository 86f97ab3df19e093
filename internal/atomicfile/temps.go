package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// ErrInterrupted is returned by Create, TempDir and Publish once
// RemoveTemporaries has run: the process is stopping and publishes no
// output.
var ErrInterrupted = errors.New("interrupted: no output is written")

// temps records the temporary files and folders of the outputs in
// progress, for RemoveTemporaries.
var temps struct {
	sync.Mutex
	paths  map[string]bool // true: a folder
	closed bool            // RemoveTemporaries has run
}

// tempName returns the name of a temporary beside dest: ".NAME.tmp-RANDOM",
// and the folder it is in.
func tempName(dest string) (dir, tmp string, err error) {
	dir, base := filepath.Split(filepath.Clean(dest))
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." || base == string(filepath.Separator) {
		return "", "", fmt.Errorf("%s: not a file name", dest)
	}
	return dir, filepath.Join(dir, TempPrefix+base+".tmp-"+strconv.FormatUint(rand.Uint64()>>16, 36)), nil
}

// newTemp creates a temporary beside dest with create and records it; a
// name already taken is drawn again.
func newTemp(dest string, folder bool, create func(tmp string) error) (string, error) {
	for try := 0; ; try++ {
		dir, tmp, err := tempName(dest)
		if err != nil {
			return "", err
		}
		temps.Lock()
		if temps.closed {
			temps.Unlock()
			return "", ErrInterrupted
		}
		err = create(tmp)
		if err == nil {
			if temps.paths == nil {
				temps.paths = map[string]bool{}
			}
			temps.paths[tmp] = folder
		}
		temps.Unlock()
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
		}
		return tmp, nil
	}
}

// TempDir creates the temporary folder of an output folder to be renamed
// to dest when complete: ".NAME.tmp-RANDOM" beside dest, so that the rename
// stays on one file system. The folder gets the mode of the folder at dest
// when there is one (an output keeps the mode of the one it replaces), else
// 0777 less the umask, as os.Mkdir gives. RemoveTemporaries removes it until
// Release is called for it.
func TempDir(dest string) (string, error) {
	var mode fs.FileMode
	keep := false
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		mode, keep = fi.Mode().Perm(), true
	}
	return newTemp(dest, true, func(tmp string) error {
		if err := os.Mkdir(tmp, 0o777); err != nil {
			return err
		}
		if keep {
			if err := os.Chmod(tmp, mode); err != nil {
				os.Remove(tmp)
				return err
			}
		}
		return nil
	})
}

// Release forgets the temporary tmp (of TempDir): it was renamed into
// place, removed, or is kept on purpose.
func Release(tmp string) {
	temps.Lock()
	delete(temps.paths, tmp)
	temps.Unlock()
}

// Publish runs publish, which renames a complete output into place, so
// that RemoveTemporaries runs entirely before or entirely after it. Once
// RemoveTemporaries has run, Publish returns ErrInterrupted without
// calling publish.
func Publish(publish func() error) error {
	temps.Lock()
	defer temps.Unlock()
	if temps.closed {
		return ErrInterrupted
	}
	return publish()
}

// RemoveTemporaries removes the temporary files and folders of every
// output in progress (made by Create or TempDir, neither committed, aborted
// nor released yet); a Publish in progress completes first. Later calls of
// Create, TempDir and Publish fail with ErrInterrupted. It is for a process
// about to exit on a signal, whose deferred Aborts will not run: the
// destinations are left as they are.
func RemoveTemporaries() {
	temps.Lock()
	defer temps.Unlock()
	temps.closed = true
	for p, folder := range temps.paths {
		if !folder {
			os.Remove(p)
			continue
		}
		// A writer still running may create a file in the folder while it
		// is removed: try again until it is gone.
		for try := 0; try < 10; try++ {
			if os.RemoveAll(p) == nil {
				if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
					break
				}
			}
		}
	}
	clear(temps.paths)
}
