package cputime

import (
	"flag"
	"testing"
	"time"
)

var sink float64

// burn computes for about d of CPU time.
func burn(d time.Duration) {
	x := 1.0
	for start := time.Now(); time.Since(start) < d; {
		for range 10000 {
			x = x*1.0000001 + 1e-9
		}
	}
	sink += x
}

func TestProcess(t *testing.T) {
	if !processMeasured {
		if got := Process(); got != 0 {
			t.Errorf("Process = %v where it is not measured, want 0", got)
		}
		return
	}
	c0 := Process()
	if c0 <= 0 {
		t.Fatalf("Process = %v at the start", c0)
	}
	// The clock's tick may be coarse: wait up to 5 s for it to move.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		burn(10 * time.Millisecond)
		if Process() > c0 {
			return
		}
	}
	t.Errorf("Process stayed at %v over 5 s of computing", c0)
}

// benchmark runs f as a benchmark of 20 iterations and returns its result.
func benchmark(t *testing.T, f func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	fl := flag.Lookup("test.benchtime")
	old := fl.Value.String()
	if err := fl.Value.Set("20x"); err != nil {
		t.Fatal(err)
	}
	defer fl.Value.Set(old)
	return testing.Benchmark(f)
}

func TestThreadTimer(t *testing.T) {
	r := benchmark(t, func(b *testing.B) {
		c := StartThread()
		for b.Loop() {
			burn(time.Millisecond)
		}
		c.Report(b, 4, "item")
	})
	got, ok := r.Extra["cpu-ns/item"]
	switch {
	case !threadMeasured:
		if ok {
			t.Errorf("cpu-ns/item = %v where the thread is not measured", got)
		}
	case !ok || got <= 0:
		t.Errorf("cpu-ns/item = %v (reported %t), want > 0: %v", got, ok, r.Extra)
	case got > 1e9:
		t.Errorf("cpu-ns/item = %v for about 0.25 ms an item", got)
	}
}

func TestFlopTimer(t *testing.T) {
	r := benchmark(t, func(b *testing.B) {
		c := StartFlops()
		for b.Loop() {
			burn(time.Millisecond)
		}
		c.Report(b, 1e6)
	})
	if got := r.Extra["GFLOP/s-wall"]; got <= 0 || got > 10 {
		t.Errorf("GFLOP/s-wall = %v for 1e6 flops in about 1 ms", got)
	}
	got, ok := r.Extra["GFLOP/s-cpu"]
	if !processMeasured {
		if ok {
			t.Errorf("GFLOP/s-cpu = %v where the process is not measured", got)
		}
		return
	}
	if !ok || got <= 0 {
		t.Errorf("GFLOP/s-cpu = %v (reported %t), want > 0", got, ok)
	}
}
