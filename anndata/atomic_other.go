//go:build !linux

package anndata

// exchange reports that the directories cannot be swapped in one step
// here; replaceDir then renames twice.
func exchange(a, b string) (bool, error) { return false, nil }

// syncTree flushes the files written under dir to disk, one by one.
func syncTree(dir string) error { return syncWalk(dir) }
