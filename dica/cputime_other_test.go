//go:build !linux

package dica

import "time"

var start = time.Now()

// processCPU returns the wall time since the start of the test binary
// where the process CPU time is not available.
func processCPU() time.Duration { return time.Since(start) }
