// Package realdata finds the real data sets that tests and benchmarks read:
// the folder named by the environment variable DICA_DATA, or else
// ../shared/data beside the repository (the folder holding this module's
// go.mod). The data are not part of the repository; a test that needs them
// skips, saying how to provide them, when they are absent, so the suite
// passes on a fresh clone.
package realdata

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Module is the module path whose root Dir looks for.
const Module = "github.com/dicalab/dica"

// Dir returns the path of the data folder joined with elem (for example
// Dir(tb, "multicenter16_cytof")), or skips tb with a message saying how to
// provide the data when that path does not exist.
func Dir(tb testing.TB, elem ...string) string {
	tb.Helper()
	dir, err := Find(elem...)
	if err != nil {
		tb.Skipf("real data absent (set DICA_DATA to the data folder): %v", err)
	}
	return dir
}

// Find returns the path of the data folder joined with elem, or an error
// when that path does not exist.
func Find(elem ...string) (string, error) {
	root := os.Getenv("DICA_DATA")
	if root == "" {
		repo, err := repoRoot()
		if err != nil {
			return "", fmt.Errorf("no folder with the go.mod of %s above the working directory: %w", Module, err)
		}
		root = filepath.Join(repo, "..", "shared", "data")
	}
	dir := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// repoRoot returns the closest folder at or above the working directory
// (a package's folder under go test) whose go.mod declares Module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// isModuleRoot reports whether the go.mod file at path declares Module.
func isModuleRoot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == Module
		}
	}
	return false
}
