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

// renameNoReplace renames a to b unless b exists (an error that is
// fs.ErrExist), in one atomic step (renameat2 RENAME_NOREPLACE) where the
// file system allows it.
func renameNoReplace(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return renameIfAbsent(a, b)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: err}
	}
	return nil
}
