//go:build linux

package anndata

import "golang.org/x/sys/unix"

// exchange swaps the directories a and b in one atomic step
// (renameat2 RENAME_EXCHANGE); ok is false when the file system cannot.
func exchange(a, b string) (ok bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.EXDEV || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}
