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
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/longtest"
)

func TestEstimateMemoryFormula(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		s    Shape
		want float64 // words of 8 bytes
	}{
		// DICA, lambda = 0: 7 m^2 + J (N + c) m + sample (d) + m d, J = 2W + 4 = 8,
		// the solve's 5 c^2 + 3 c m and 3.5 p^2 + 7 N m with p = min(N, m).
		{Config{Method: DICA, Rank: 1000, Workers: 2}, Shape{N: 1e6, D: 8, Domains: 16, Classes: 4},
			7e6 + 8*20*1000 + 20000*8 + 1000*8 + 5*16 + 3*4*1000 + 3.5*256 + 7*16*1000},
		// UDICA adds (J + 7) m^2 and the rows kept for the Gram sum.
		{Config{Method: UDICA, Rank: 1000, Workers: 2}, Shape{N: 1e6, D: 8, Domains: 16},
			7e6 + 15e6 + 8*16*1000 + 1024*2*1000 + 20000*8 + 1000*8 + 3.5*256 + 7*16*1000},
		// Classes count for supervised methods only; KPCA has no N x N
		// domain problem, only the N x m domain means.
		{Config{Method: KPCA, Rank: 100, Workers: 1}, Shape{N: 500, D: 3, Domains: 40, Classes: 1000},
			7e4 + 13e4 + 6*1040*100 + 1024*100 + 500*3 + 100*3 + 40*100},
		// Many classes: their c x c matrices dominate.
		{Config{Method: DICA, Rank: 500, Workers: 2}, Shape{N: 12000, D: 8, Domains: 2, Classes: 12000},
			7*25e4 + 8*12002*500 + 12000*8 + 500*8 + 5*144e6 + 3*12000*500 + 3.5*4 + 7*2*500},
		// Regression: the output map of rank r = min(m, 200).
		{Config{Method: DICA, Rank: 300, Workers: 1}, Shape{D: 4, T: 1, Domains: 2},
			7*9e4 + 6*(2+200)*300 + 6*200*200 + 1024*300 + 20000*5 + 300*4 + 3.5*4 + 7*2*300},
		// More domains than the rank: the domain problem is m x m.
		{Config{Method: UDICA, Rank: 200, Workers: 2}, Shape{N: 50000, D: 8, Domains: 2000},
			7*4e4 + 15*4e4 + 8*2000*200 + 1024*2*200 + 20000*8 + 200*8 + 3.5*4e4 + 7*2000*200},
		// Exact: 5 n^2 + n (D + T) + 3 n c + 4 c^2 + n N.
		{Config{Method: DICA, Solver: Exact}, Shape{N: 3000, D: 8}, 5*9e6 + 3000*8},
		{Config{Method: DICA, Solver: Exact}, Shape{N: 3000, D: 8, Domains: 10, Classes: 100}, 5*9e6 + 3000*8 + 3*3000*100 + 4*1e4 + 3000*10},
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
// memory in every run, and not more than twice the largest growth of up to
// 3 runs.
func TestEstimateMemoryBoundsPeak(t *testing.T) {
	if child := os.Getenv("DICA_MEMORY_CHILD"); child != "" {
		memoryChild(child)
		return
	}
	longtest.Skip(t)
	for _, c := range []string{"dica,nystrom,1500,2", "udica,nystrom,1500,2", "udica,nystrom,1500,1", "dica,exact,2500,2",
		// Many classes, many domains: the solve's c x c and N x N matrices.
		"dica,nystrom,200,2,10,2000", "dica,nystrom,200,2,2000,4", "udica,nystrom,200,2,2000,4", "dica,exact,2000,2,10,1000"} {
		// The growth depends on how the workers' blocks meet in the
		// merge, which the estimate bounds at its worst: every run must
		// stay under it, and the largest of up to 3 runs within half of
		// it.
		var grew, est float64
		for run := 0; run < 3 && (run == 0 || est > 2*grew); run++ {
			cmd := exec.Command(os.Args[0], "-test.run=^TestEstimateMemoryBoundsPeak$")
			cmd.Env = append(os.Environ(), "DICA_MEMORY_CHILD="+c)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c, err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if rest, ok := strings.CutPrefix(line, "MEMORY "); ok {
					var g float64
					fmt.Sscan(rest, &g, &est)
					if est < g {
						t.Errorf("%s: estimate %.0f MB below a measured %.0f MB", c, est/1e6, g/1e6)
					}
					grew = max(grew, g)
				}
			}
		}
		t.Logf("%s: peak grew by %.0f MB, estimate %.0f MB (%.2f x)", c, grew/1e6, est/1e6, est/grew)
		if grew <= 0 || est < grew || est > 2*grew {
			t.Errorf("%s: estimate %.0f MB for a measured %.0f MB", c, est/1e6, grew/1e6)
		}
	}
}

// memoryChild fits as spec says (method,solver,m-or-n,workers[,domains,
// classes]; 10 domains and 4 classes by default) and prints the growth of
// the peak resident memory and the estimate.
func memoryChild(spec string) {
	f := strings.Split(spec, ",")
	size, _ := strconv.Atoi(f[2])
	workers, _ := strconv.Atoi(f[3])
	doms, classes := 10, 4
	if len(f) == 6 {
		doms, _ = strconv.Atoi(f[4])
		classes, _ = strconv.Atoi(f[5])
	}
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
		dom[i], lab[i] = fmt.Sprint(i%doms), fmt.Sprint(i%classes)
	}
	ds, _ := dataset.New(x, dom)
	ds.SetLabels(lab)
	base := peakRSS()
	if _, err := Fit(context.Background(), ds.Source(), cfg); err != nil {
		fmt.Println("fit:", err)
		os.Exit(1)
	}
	est := EstimateMemory(cfg, Shape{N: int64(n), D: 8, Domains: doms, Classes: classes})
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

// distinct returns a data set of n cells of 3 inputs in the given number
// of domains, each cell with a class of its own when classes is n (else
// i mod classes).
func distinct(n, domains, classes int) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, 3, nil)
	dom := make([]string, n)
	lab := make([]string, n)
	for i := range dom {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		dom[i], lab[i] = fmt.Sprint("d", i%domains), fmt.Sprint("c", i%classes)
	}
	ds, err := dataset.New(x, dom)
	if err != nil {
		panic(err)
	}
	if err := ds.SetLabels(lab); err != nil {
		panic(err)
	}
	return ds
}

// TestManyGroupsRefused fits data with many classes or domains under a
// budget: the fit is refused with a *MemoryError that names them and the
// largest number that fits, before the class x class or domain x domain
// matrices are made (during the pass for a stream, after reading the data
// for the exact solver, before the solve for merged statistics).
func TestManyGroupsRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name             string
		ds               *dataset.Dataset
		cfg              Config
		limit            string
		more             bool
		domains, classes int // of the refusal: at least (more) or exactly
	}{
		{"12000 classes", distinct(12000, 4, 12000), Config{Method: DICA, Sigma: 1, MaxMemory: 500e6}, "classes", true, 4, 3072},
		{"20000 domains", distinct(40000, 20000, 3), Config{Method: UDICA, Sigma: 1, MaxMemory: 1e9}, "domains", true, 5120, 0},
		{"exact, 3000 classes", distinct(3000, 3, 3000), Config{Method: DICA, Sigma: 1, Solver: Exact, MaxMemory: 500e6}, "classes", false, 3, 3000},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := Fit(ctx, c.ds.Source(), c.cfg)
			var me *MemoryError
			if !errors.As(err, &me) || me.Limit != c.limit || me.More != c.more {
				t.Fatalf("err = %v, want a *MemoryError on %s", err, c.limit)
			}
			if me.Domains < c.domains || me.Classes < c.classes || !c.more && (me.Domains != c.domains || me.Classes != c.classes) {
				t.Errorf("refused at %d domains and %d classes, want %d and %d", me.Domains, me.Classes, c.domains, c.classes)
			}
			// Fits is the largest number within the budget.
			at := func(k int64) int64 {
				s := Shape{D: 3, Domains: me.Domains, Classes: me.Classes}
				if c.cfg.Solver == Exact {
					s.N = int64(c.ds.N())
				}
				if c.limit == "classes" {
					s.Classes = int(k)
				} else {
					s.Domains = int(k)
				}
				return EstimateMemory(c.cfg, s)
			}
			if me.Fits < 1 || at(me.Fits) > me.Budget || at(me.Fits+1) <= me.Budget {
				t.Errorf("Fits = %d: estimate %d there, %d one above, budget %d", me.Fits, at(me.Fits), at(me.Fits+1), me.Budget)
			}
			want := fmt.Sprintf("at most %d %s fit in the budget", me.Fits, c.limit)
			matrices := map[string]string{"classes": "classes x classes matrices", "domains": "domains x rank matrices"}[c.limit]
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), matrices) {
				t.Errorf("message %q does not say %q", err, want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("refused after %v", d)
			}
		})
	}
	// Statistics merged from shards: refused by Solve.
	ds := distinct(4000, 2, 2000)
	p, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Sigma: 1, Rank: 50, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Accumulate(ctx, ds.Source())
	if err != nil {
		t.Fatal(err)
	}
	st.plan.Config.MaxMemory = 50e6
	var me *MemoryError
	if _, err := st.Solve(); !errors.As(err, &me) || me.Limit != "classes" || me.More || me.Classes != 2000 {
		t.Errorf("Solve of 2000 classes in 50 MB: %v", err)
	}
	// AddBlock: the block that brings too many classes is not added.
	st.plan.Config.MaxMemory = 30e6
	s := p.NewStats()
	s.plan = st.plan
	r, err := ds.Source().Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b dataset.Block
	for {
		if _, err = r.Read(&b, 500); err != nil {
			break
		}
		if err = s.AddBlock(&b, r.Domains(), r.Classes()); err != nil {
			break
		}
	}
	if !errors.As(err, &me) || me.Limit != "classes" || len(s.Classes) != int(s.N()) || s.N()%500 != 0 || int64(len(s.Classes)) > me.Fits {
		t.Errorf("AddBlock: %v, %d classes kept for %d cells", err, len(s.Classes), s.N())
	}
}
