//go:build linux

package anndata

import (
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the directories a and b in one atomic step
// (renameat2 RENAME_EXCHANGE); ok is false when the file system cannot.
func exchange(a, b string) (ok bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.EXDEV || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}

// syncTree flushes the files written under dir to disk: syncfs(2) on the
// file system that holds dir.
func syncTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return syncWalk(dir)
	}
	return nil
}
