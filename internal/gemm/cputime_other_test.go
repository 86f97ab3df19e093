//go:build !linux

package gemm

import (
	"testing"
	"time"
)

type cpuTimer struct{ wall time.Time }

func startCPU() cpuTimer { return cpuTimer{time.Now()} }

func (c cpuTimer) report(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/time.Since(c.wall).Seconds()/1e9, "GFLOP/s-wall")
}
