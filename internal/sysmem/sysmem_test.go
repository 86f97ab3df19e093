package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	mi := filepath.Join(dir, "meminfo")
	os.WriteFile(mi, []byte("MemFree:  100 kB\nMemTotal:       24684096 kB\n"), 0o644)
	if got := memTotal(mi); got != 24684096*1024 {
		t.Errorf("memTotal = %d", got)
	}
	for _, c := range []struct {
		text string
		want int64
	}{{"max\n", 0}, {"1073741824\n", 1 << 30}, {"9223372036854771712\n", 0}, {"junk", 0}} {
		p := filepath.Join(dir, "limit")
		os.WriteFile(p, []byte(c.text), 0o644)
		if got := readLimit(p); got != c.want {
			t.Errorf("readLimit(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	if got := memTotal(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("absent meminfo: %d", got)
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && Total() <= 0 {
		t.Error("Total() <= 0 on a system with /proc/meminfo")
	}
}
