// Package sysmem tells how much memory the process may use: the machine's
// physical memory, or the cgroup limit when the process runs under a lower
// one (containers, systemd slices).
package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Total returns the memory available to the process in bytes: the smaller
// of MemTotal in /proc/meminfo and the cgroup (v2 memory.max, or v1
// memory.limit_in_bytes) limit. It returns 0 when neither can be read (a
// system without /proc).
func Total() int64 {
	total := memTotal("/proc/meminfo")
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if lim := readLimit(p); lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// readLimit reads a cgroup memory limit; "max" and absurd values (v1 uses
// a huge number for no limit) give 0.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 || v >= 1<<60 {
		return 0
	}
	return v
}
