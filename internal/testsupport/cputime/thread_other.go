//go:build !linux

package cputime

import "time"

// threadMeasured says whether threadCPU measures.
const threadMeasured = false

func threadCPU() time.Duration { return 0 }
