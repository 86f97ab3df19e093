package cpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestAgainstProcCPUInfo compares the CPUID answer with the flags the Linux
// kernel reports.
func TestAgainstProcCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("needs Linux on amd64")
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			flags = strings.Fields(line)
			break
		}
	}
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	want := has("avx2") && has("fma")
	if AVX2FMA && !want {
		t.Errorf("AVX2FMA is true but /proc/cpuinfo lacks avx2 or fma")
	}
	if !AVX2FMA && want && !strings.Contains(strings.Join(os.Args, " "), "noasm") {
		t.Logf("AVX2FMA is false although /proc/cpuinfo lists avx2 and fma (noasm build?)")
	}
}
