package dica

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time of the whole process (all
// goroutines), so that benchmarks on a shared machine report the time
// spent computing beside the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
