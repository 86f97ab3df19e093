package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if root != want {
		t.Errorf("repository root %s, want %s", root, want)
	}
}

func TestDirFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "set"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DICA_DATA", dir)
	if got := Dir(t, "set"); got != filepath.Join(dir, "set") {
		t.Errorf("Dir = %s, want %s", got, filepath.Join(dir, "set"))
	}
	// An absent folder skips the test that asks for it.
	ran := t.Run("absent", func(t *testing.T) {
		Dir(t, "absent")
		t.Error("Dir returned for an absent folder")
	})
	if !ran {
		t.Error("the subtest failed instead of skipping")
	}
}

func TestIsModuleRoot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{"module github.com/dicalab/dica\n\ngo 1.26\n", true},
		{"// comment\nmodule \"github.com/dicalab/dica\"\n", true},
		{"module github.com/dicalab/dica/beam\n", false},
		{"go 1.26\n", false},
	} {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := isModuleRoot(p); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.content, got, tc.want)
		}
	}
	if isModuleRoot(filepath.Join(dir, "missing")) {
		t.Error("a missing go.mod is a module root")
	}
}
