//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// processMeasured says whether processCPU measures.
const processMeasured = true

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
