//go:build !unix

package cputime

import "time"

// processMeasured says whether processCPU measures.
const processMeasured = false

func processCPU() time.Duration { return 0 }
