package gemm

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// processCPU returns the user+system CPU time of the whole process, so that
// benchmarks on a shared, oversubscribed machine can report time actually
// spent computing next to wall time (covers the goroutines of the
// multi-worker benchmarks too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimer measures the CPU time of a benchmark loop: call startCPU just
// before b.Loop and report after it, with the flops of one iteration.
type cpuTimer struct {
	t0   time.Duration
	wall time.Time
}

func startCPU() cpuTimer {
	runtime.GC()
	return cpuTimer{processCPU(), time.Now()}
}

// report adds GFLOP/s per wall second and per CPU second.
func (c cpuTimer) report(b *testing.B, flops float64) {
	cpu := processCPU() - c.t0
	wall := time.Since(c.wall)
	total := flops * float64(b.N)
	b.ReportMetric(total/wall.Seconds()/1e9, "GFLOP/s-wall")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds()/1e9, "GFLOP/s-cpu")
	}
}
