//go:build unix

package atomicfile

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// access returns an error when this process (its effective user) may not
// write the file at path, as the kernel decides: permissions, a read-only
// file system, an immutable file.
func access(path string, _ fs.FileInfo) error {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
}
