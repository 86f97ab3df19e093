//go:build !unix

package parquetio

import "time"

// cpuTime returns 0: the CPU time of the process is read on Unix systems
// only (the benchmarks' cpu-ns/value is then meaningless).
func cpuTime() time.Duration { return 0 }
