//go:build amd64 && !noasm

package svm

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/cpu"
)

var updateGolden = flag.Bool("svm.golden", false, "rewrite testdata/primal_golden.txt from the current primal solver")

// goldenPath is the file of the primal solver's recorded outputs.
var goldenPath = filepath.Join("testdata", "primal_golden.txt")

// goldenLines trains the primal solver on fixed-seed problems (two to
// four overlapping classes, 3 to 11 features, row counts that are not
// multiples of any block size, the default, a negative and a non-unit
// bias), cold and warm along the costs 0.1, 1, 10, warm from a model on
// fewer features and cold to a tight tolerance, and returns one line per
// machine: the case, the class, the Newton iterations, whether it
// converged, the bits of the intercept and of every weight, and an FNV-1a
// hash of the bits of Alpha (Options.KeepAlpha). It also checks that the
// cold machines without KeepAlpha are the same, with Alpha nil.
func goldenLines(tb testing.TB) []string {
	ctx := context.Background()
	var lines []string
	add := func(name string, m *Model) {
		for k, b := range m.Machines {
			if b == nil {
				continue
			}
			h := fnv.New64a()
			for _, a := range b.Alpha {
				fmt.Fprintf(h, "%x,", math.Float64bits(a))
			}
			ws := make([]string, len(b.W))
			for j, w := range b.W {
				ws[j] = fmt.Sprintf("%x", math.Float64bits(w))
			}
			lines = append(lines, fmt.Sprintf("%s class=%d epochs=%d converged=%v intercept=%x w=%s alpha=%x",
				name, k, b.Epochs, b.Converged, math.Float64bits(b.Intercept), strings.Join(ws, ","), h.Sum64()))
		}
	}
	for _, c := range []struct {
		per, d, nc int
		seed       uint64
		bias       float64
	}{
		{per: 333, d: 3, nc: 4, seed: 7, bias: 0},
		{per: 1201, d: 8, nc: 4, seed: 8, bias: 0},
		{per: 517, d: 10, nc: 4, seed: 9, bias: -1},
		{per: 901, d: 5, nc: 2, seed: 10, bias: 2.5},
		{per: 257, d: 11, nc: 3, seed: 11, bias: 0},
	} {
		x, y := overlapping(c.per, c.d, c.nc, c.seed)
		name := fmt.Sprintf("n=%d,d=%d,nc=%d,bias=%g", c.per*c.nc, c.d, c.nc, c.bias)
		pb, err := NewProblem(x, y, c.nc, c.bias)
		if err != nil {
			tb.Fatal(err)
		}
		var prev *Model
		for _, cost := range []float64{0.1, 1, 10} {
			o := Options{C: cost, Bias: c.bias, Solver: Primal, KeepAlpha: true}
			cold, err := pb.Train(ctx, o)
			if err != nil {
				tb.Fatal(err)
			}
			add(fmt.Sprintf("%s,C=%g,cold", name, cost), cold)
			// Without KeepAlpha: the same machines, without Alpha.
			o.KeepAlpha = false
			plain, err := pb.Train(ctx, o)
			if err != nil {
				tb.Fatal(err)
			}
			o.KeepAlpha = true
			for k, b := range plain.Machines {
				if b == nil {
					continue
				}
				a := cold.Machines[k]
				if b.Alpha != nil || b.Epochs != a.Epochs || math.Float64bits(b.Intercept) != math.Float64bits(a.Intercept) ||
					!slices.EqualFunc(b.W, a.W, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) }) {
					tb.Errorf("%s C=%g class %d without KeepAlpha: alpha %d values, W %v, intercept %v, %d epochs; with it W %v, intercept %v, %d epochs",
						name, cost, k, len(b.Alpha), b.W, b.Intercept, b.Epochs, a.W, a.Intercept, a.Epochs)
				}
			}
			if prev != nil {
				o.Init = prev
				warm, err := pb.Train(ctx, o)
				if err != nil {
					tb.Fatal(err)
				}
				add(fmt.Sprintf("%s,C=%g,warm", name, cost), warm)
				prev = warm
			} else {
				prev = cold
			}
		}
		// A warm start along the features, from the first d-2.
		few := mat.DenseCopyOf(x.Slice(0, len(y), 0, c.d-2))
		pbf, err := NewProblem(few, y, c.nc, c.bias)
		if err != nil {
			tb.Fatal(err)
		}
		init, err := pbf.Train(ctx, Options{C: 1, Bias: c.bias, KeepAlpha: true})
		if err != nil {
			tb.Fatal(err)
		}
		m, err := pb.Train(ctx, Options{C: 1, Bias: c.bias, Init: init, KeepAlpha: true})
		if err != nil {
			tb.Fatal(err)
		}
		add(name+",C=1,features", m)
		// Solved tightly: more Newton iterations, near the optimum.
		for _, cost := range []float64{0.3, 30} {
			m, err := pb.Train(ctx, Options{C: cost, Bias: c.bias, Tol: 1e-10, KeepAlpha: true})
			if err != nil {
				tb.Fatal(err)
			}
			add(fmt.Sprintf("%s,C=%g,tight", name, cost), m)
		}
	}
	return lines
}

// TestPrimalGolden checks that the primal solver reproduces, bit for bit,
// the weights, intercepts, iteration counts and dual variables it gave
// when testdata/primal_golden.txt was recorded: changes that only speed it
// up must not move a bit. Run with -svm.golden to record a deliberate
// change of the results. The bits are those of amd64 with AVX2 and FMA:
// the SYRK of internal/gemm and gonum's dot products and sums round
// differently in their pure-Go fallbacks (the noasm tag, other CPUs).
func TestPrimalGolden(t *testing.T) {
	if !cpu.AVX2FMA {
		t.Skip("the recorded bits are those of the AVX2 kernels")
	}
	got := goldenLines(t)
	if *updateGolden {
		if err := os.WriteFile(goldenPath, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		want = append(want, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d machines, recorded %d", len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("machine %d:\n got  %s\n want %s", i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d machines differ from the recorded ones", bad, len(got))
	}
}
