package dica

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/longtest"
)

func TestEstimateMemoryFormula(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		s    Shape
		want float64 // words of 8 bytes
	}{
		// DICA, lambda = 0: 7 m^2 + J (N + c) m + sample (d) + m d, J = 2W + 3 = 7.
		{Config{Method: DICA, Rank: 1000, Workers: 2}, Shape{N: 1e6, D: 8, Domains: 16, Classes: 4},
			7e6 + 7*20*1000 + 20000*8 + 1000*8},
		// UDICA adds (J + 4) m^2 and the rows kept for the Gram sum.
		{Config{Method: UDICA, Rank: 1000, Workers: 2}, Shape{N: 1e6, D: 8, Domains: 16},
			7e6 + 14e6 + 7*16*1000 + 1024*2*1000 + 20000*8 + 1000*8},
		// The sample is at most the data.
		{Config{Method: KPCA, Rank: 100, Workers: 1}, Shape{N: 500, D: 3},
			7e4 + 12e4 + 5*0*100 + 1024*100 + 500*3 + 100*3},
		// Regression: the output map of rank r = min(m, 200).
		{Config{Method: DICA, Rank: 300, Workers: 1}, Shape{D: 4, T: 1, Domains: 2},
			7*9e4 + 5*(2+200)*300 + 5*200*200 + 1024*300 + 20000*5 + 300*4},
		// Exact: 5 N^2 + N (D + T).
		{Config{Method: DICA, Solver: Exact}, Shape{N: 3000, D: 8}, 5*9e6 + 3000*8},
	} {
		if got := EstimateMemory(c.cfg, c.s); got != int64(8*c.want) {
			t.Errorf("EstimateMemory(%v m=%d, %+v) = %d, want %d", c.cfg.Method, c.cfg.Rank, c.s, got, int64(8*c.want))
		}
	}
}

func TestFitRefusedOverBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(400, 3, nil)
	dom := make([]string, 400)
	lab := make([]string, 400)
	for i := range dom {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		dom[i], lab[i] = fmt.Sprint(i%4), fmt.Sprint(i%3)
	}
	ds, err := dataset.New(x, dom)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.SetLabels(lab); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Method: DICA, Rank: 300, Sigma: 1, MaxMemory: 4 << 20},
		{Method: UDICA, Rank: 300, Sigma: 1, MaxMemory: 4 << 20},
		{Method: DICA, Solver: Exact, Sigma: 1, MaxMemory: 4 << 20},
	} {
		_, err := Fit(context.Background(), ds.Source(), cfg)
		var me *MemoryError
		if !errors.As(err, &me) {
			t.Fatalf("%v %v: err = %v, want a *MemoryError", cfg.Method, cfg.Solver, err)
		}
		// Fits is the largest size within the budget.
		at := func(k int64) int64 {
			c, s := cfg.withDefaults(), Shape{N: 400, D: 3}
			if me.Exact {
				s.N = k
			} else {
				c.Rank, c.OutputRank = int(k), min(c.OutputRank, int(k))
			}
			return EstimateMemory(c, s)
		}
		if at(me.Fits) > me.Budget || at(me.Fits+1) <= me.Budget {
			t.Errorf("%v %v: Fits = %d: estimate %d there, %d one above, budget %d", cfg.Method, cfg.Solver, me.Fits, at(me.Fits), at(me.Fits+1), me.Budget)
		}
		// Within the budget the fit runs.
		ok := cfg
		ok.MaxMemory = -1
		if me.Exact {
			continue
		}
		ok.Rank = int(me.Fits)
		if _, err := Fit(context.Background(), ds.Source(), ok); err != nil {
			t.Errorf("%v at rank %d: %v", cfg.Method, ok.Rank, err)
		}
	}
}

// TestEstimateMemoryBoundsPeak runs fits in child processes and checks that
// the estimate is at or above the measured growth of the peak resident
// memory, and not more than twice it.
func TestEstimateMemoryBoundsPeak(t *testing.T) {
	if child := os.Getenv("DICA_MEMORY_CHILD"); child != "" {
		memoryChild(child)
		return
	}
	longtest.Skip(t)
	for _, c := range []string{"dica,nystrom,1500,2", "udica,nystrom,1500,2", "udica,nystrom,1500,1", "dica,exact,2500,2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEstimateMemoryBoundsPeak$")
		cmd.Env = append(os.Environ(), "DICA_MEMORY_CHILD="+c)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		var grew, est float64
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "MEMORY "); ok {
				fmt.Sscan(rest, &grew, &est)
			}
		}
		t.Logf("%s: peak grew by %.0f MB, estimate %.0f MB (%.2f x)", c, grew/1e6, est/1e6, est/grew)
		if grew <= 0 || est < grew || est > 2*grew {
			t.Errorf("%s: estimate %.0f MB for a measured %.0f MB", c, est/1e6, grew/1e6)
		}
	}
}

// memoryChild fits as spec says (method,solver,m-or-n,workers) and prints
// the growth of the peak resident memory and the estimate.
func memoryChild(spec string) {
	f := strings.Split(spec, ",")
	size, _ := strconv.Atoi(f[2])
	workers, _ := strconv.Atoi(f[3])
	cfg := Config{Sigma: 1, Workers: workers, MaxMemory: -1}
	cfg.Method, _ = map[string]Method{"dica": DICA, "udica": UDICA}[f[0]]
	n := 50000
	if f[1] == "exact" {
		cfg.Solver, n = Exact, size
	} else {
		cfg.Rank = size
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(n, 8, nil)
	dom := make([]string, n)
	lab := make([]string, n)
	for i := 0; i < n; i++ {
		for j := 0; j < 8; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		dom[i], lab[i] = fmt.Sprint(i%10), fmt.Sprint(i%4)
	}
	ds, _ := dataset.New(x, dom)
	ds.SetLabels(lab)
	base := peakRSS()
	if _, err := Fit(context.Background(), ds.Source(), cfg); err != nil {
		fmt.Println("fit:", err)
		os.Exit(1)
	}
	est := EstimateMemory(cfg, Shape{N: int64(n), D: 8, Domains: 10, Classes: 4})
	fmt.Printf("MEMORY %d %d\n", peakRSS()-base, est)
}

func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
