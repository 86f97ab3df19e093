package gemm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMulAddGenerated checks that kern_muladd.go is what gen_muladd.go
// makes of kern_go.go (run go generate after editing kern_go.go).
func TestMulAddGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out := filepath.Join(t.TempDir(), "kern_muladd.go")
	if msg, err := exec.Command(goTool, "run", "gen_muladd.go", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_muladd.go: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("kern_muladd.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("kern_muladd.go is out of date: run go generate ./internal/gemm")
	}
}
