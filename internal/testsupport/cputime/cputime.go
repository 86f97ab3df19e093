// Package cputime measures the CPU time of the test process and of the
// calling thread, so that benchmarks on a shared, oversubscribed machine
// can report the time spent computing beside the wall time, which the
// machine's other jobs disturb.
//
// The process's CPU time is read on Unix systems and the thread's on
// Linux; elsewhere they are not measured, and the timers report only what
// was.
package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Process returns the user and system CPU time the process (all its
// threads) has used so far, or 0 where it is not measured. Callers report
// a difference of two calls only when it is positive.
func Process() time.Duration { return processCPU() }

// ThreadTimer measures the CPU time of the calling OS thread over a
// benchmark loop.
type ThreadTimer struct{ t0 time.Duration }

// StartThread locks the calling goroutine to its OS thread and starts a
// ThreadTimer. Call it just before b.Loop, and Report just after.
func StartThread() ThreadTimer {
	if !threadMeasured {
		return ThreadTimer{}
	}
	runtime.LockOSThread()
	return ThreadTimer{threadCPU()}
}

// Report unlocks the thread and reports the thread's CPU time per item as
// "cpu-ns/"+unit, with items the number of items of one iteration. Where
// the thread's CPU time is not measured it reports nothing.
func (c ThreadTimer) Report(b *testing.B, items int, unit string) {
	if !threadMeasured {
		return
	}
	d := threadCPU() - c.t0
	runtime.UnlockOSThread()
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N*items), "cpu-ns/"+unit)
}

// FlopTimer measures the wall and process CPU time of a benchmark loop of
// floating-point operations; it counts the goroutines of a multi-worker
// loop too.
type FlopTimer struct {
	cpu  time.Duration
	wall time.Time
}

// StartFlops collects the garbage and starts a FlopTimer. Call it just
// before b.Loop, and Report just after.
func StartFlops() FlopTimer {
	runtime.GC()
	return FlopTimer{Process(), time.Now()}
}

// Report reports the GFLOP/s per wall second ("GFLOP/s-wall") and, where
// the process's CPU time is measured, per CPU second ("GFLOP/s-cpu"), with
// flops the floating-point operations of one iteration.
func (c FlopTimer) Report(b *testing.B, flops float64) {
	cpu := Process() - c.cpu
	wall := time.Since(c.wall)
	total := flops * float64(b.N)
	b.ReportMetric(total/wall.Seconds()/1e9, "GFLOP/s-wall")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds()/1e9, "GFLOP/s-cpu")
	}
}
