package preprocess

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time used by the calling OS thread (Linux
// RUSAGE_THREAD), so that benchmarks on a shared, oversubscribed machine can
// report time actually spent computing next to wall time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimer measures the thread CPU time of a benchmark loop: call start
// before b.Loop and report after, with the number of items per iteration.
type cpuTimer struct{ t0 time.Duration }

func startCPU() cpuTimer {
	runtime.LockOSThread()
	return cpuTimer{threadCPU()}
}

func (c cpuTimer) report(b *testing.B, items int, unit string) {
	d := threadCPU() - c.t0
	runtime.UnlockOSThread()
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N*items), "cpu-ns/"+unit)
}
