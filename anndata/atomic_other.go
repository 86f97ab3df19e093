//go:build !linux

package anndata

// exchange reports that the directories cannot be swapped in one step
// here; replaceDir then renames twice.
func exchange(a, b string) (bool, error) { return false, nil }

// renameNoReplace renames a to b unless b exists (an error that is
// fs.ErrExist).
func renameNoReplace(a, b string) error { return renameIfAbsent(a, b) }
