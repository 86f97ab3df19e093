//go:build !unix

package atomicfile

import "io/fs"

// access returns an error when the file is read-only: here its mode is
// all there is to go by.
func access(_ string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o200 == 0 {
		return fs.ErrPermission
	}
	return nil
}
