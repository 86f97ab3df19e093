package svm

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// overlapping returns n points per class of nc overlapping Gaussian classes
// in d dimensions.
func overlapping(n, d, nc int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	centers := make([][]float64, nc)
	for k := range centers {
		centers[k] = make([]float64, d)
		for j := range d {
			centers[k][j] = rng.NormFloat64()
		}
	}
	return blobs(centers, n, 1, seed+1)
}

// gradNorm returns ||grad f(w)|| of the squared-hinge primal problem for the
// augmented rows xa, labels y and cost c.
func gradNorm(xa *mat.Dense, y, w []float64, c float64) float64 {
	g := append([]float64(nil), w...)
	for i := range y {
		xi := xa.RawRowView(i)
		if m := 1 - y[i]*dot(w, xi); m > 0 {
			for j := range g {
				g[j] -= 2 * c * m * y[i] * xi[j]
			}
		}
	}
	return math.Sqrt(dot(g, g))
}

// TestPrimalOptimum checks the primal solver of a Problem, solved tightly,
// against the plain Newton reference on every one-vs-rest machine of an
// overlapping problem (many margin violators, so that the sum over them is
// updated row by row, recomputed directly and taken from the Gram matrix
// less the others), for several costs.
func TestPrimalOptimum(t *testing.T) {
	x, y := overlapping(250, 5, 4, 3)
	const bias = 1
	xa := augment(x, bias)
	pb, err := NewProblem(x, y, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, d := pb.Dims(); n != 1000 || d != 5 {
		t.Errorf("problem of %d rows and %d features, want 1000 and 5", n, d)
	}
	for _, c := range []float64{0.05, 1, 20} {
		m, err := pb.Train(context.Background(), Options{C: c, Tol: 1e-12, Solver: Primal})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 4 {
			yk := make([]float64, len(y))
			for i, l := range y {
				yk[i] = -1
				if l == k {
					yk[i] = 1
				}
			}
			want := newtonL2(xa, yk, c)
			got := weights(m.Machines[k], bias)
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-8*(1+math.Abs(want[j])) {
					t.Errorf("C=%g class %d: w[%d] = %.12g, Newton %.12g", c, k, j, got[j], want[j])
				}
			}
			if !m.Machines[k].Converged {
				t.Errorf("C=%g class %d: not converged", c, k)
			}
		}
	}
}

// TestWarmStart checks Options.Init: a warm start along the costs and
// along the features reaches the optimum the cold start reaches (solved
// tightly), along the costs in fewer Newton iterations, and with the
// default tolerance it stops by the rule of a cold start, relative to the
// gradient at zero.
func TestWarmStart(t *testing.T) {
	x, y := overlapping(300, 6, 3, 5)
	const bias = 1
	xa := augment(x, bias)
	pb, err := NewProblem(x, y, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The first 3 features.
	x3 := mat.DenseCopyOf(x.Slice(0, len(y), 0, 3))
	pb3, err := NewProblem(x3, y, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	low, err := pb.Train(ctx, Options{C: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	few, err := pb3.Train(ctx, Options{C: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, init := range []*Model{low, few} {
		for _, tol := range []float64{1e-12, 0} {
			cold, err := pb.Train(ctx, Options{C: 4, Tol: tol})
			if err != nil {
				t.Fatal(err)
			}
			warm, err := pb.Train(ctx, Options{C: 4, Tol: tol, Init: init})
			if err != nil {
				t.Fatal(err)
			}
			var ci, wi int
			for k := range 3 {
				ci += cold.Machines[k].Epochs
				wi += warm.Machines[k].Epochs
				yk := make([]float64, len(y))
				for i, l := range y {
					yk[i] = -1
					if l == k {
						yk[i] = 1
					}
				}
				wc, ww := weights(cold.Machines[k], bias), weights(warm.Machines[k], bias)
				if tol != 0 {
					for j := range wc {
						if math.Abs(wc[j]-ww[j]) > 1e-8*(1+math.Abs(wc[j])) {
							t.Errorf("init of %d features, class %d: warm w[%d] = %.12g, cold %.12g", init.Dim, k, j, ww[j], wc[j])
						}
					}
					continue
				}
				// The stopping rule: ||grad|| <= Tol max(1, min(#pos, #neg)) / n ||grad f(0)||.
				npos := 0
				for _, v := range yk {
					if v > 0 {
						npos++
					}
				}
				eps := DefaultPrimalTol * math.Max(1, float64(min(npos, len(y)-npos))) / float64(len(y))
				g0 := gradNorm(xa, yk, make([]float64, len(ww)), 4)
				if g := gradNorm(xa, yk, ww, 4); g > eps*g0*(1+1e-9) {
					t.Errorf("init of %d features, class %d: gradient %v above the stopping bound %v", init.Dim, k, g, eps*g0)
				}
			}
			// Along the costs the warm start saves iterations (along the
			// features it need not).
			if init == low && wi >= ci {
				t.Errorf("init of %d features, tol %v: %d Newton iterations warm, %d cold", init.Dim, tol, wi, ci)
			}
			t.Logf("init of %d features, tol %v: %d Newton iterations warm, %d cold", init.Dim, tol, wi, ci)
		}
	}

	// Warm starts the problem cannot take.
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Solver: Dual, Init: low}, "needs the primal solver"},
		{Options{Loss: Hinge, Init: low}, "needs the primal solver"},
		{Options{Init: &Model{NClass: 2, Dim: 6, W: mat.NewDense(2, 6, nil), Intercept: make([]float64, 2)}}, "model of 2 classes"},
		{Options{Init: &Model{NClass: 3, Dim: 7, W: mat.NewDense(3, 7, nil), Intercept: make([]float64, 3)}}, "at most 6 features"},
		{Options{Init: &Model{NClass: 3, Dim: 2}}, "at most 6 features"},
		{Options{Bias: 2}, "bias 2 differs"},
	} {
		if _, err := pb.Train(ctx, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
	var empty *Problem
	if _, err := empty.Train(ctx, Options{}); err == nil {
		t.Error("Train of a nil problem: no error")
	}
}

// TestAddOuters checks the sum over violators, by SYRK on gathered rows and
// one outer product at a time, against a direct sum.
func TestAddOuters(t *testing.T) {
	x, y := overlapping(100, 4, 2, 7)
	pb, err := NewProblem(x, y, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := pb.p
	sc := pb.getScratch()
	for _, n := range []int{0, 5, outerMin, 300} {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = (7 * i) % len(y)
		}
		for _, sign := range []float64{1, -1} {
			sum := make([]float64, p*p)
			for i := range sum {
				sum[i] = float64(i)
			}
			pb.addOuters(sum, rows, sign, sc)
			for a := range p {
				for b := a; b < p; b++ {
					want := float64(a*p + b)
					for _, i := range rows {
						want += sign * pb.rows[i*p+a] * pb.rows[i*p+b]
					}
					if math.Abs(sum[a*p+b]-want) > 1e-12*(1+math.Abs(want)) {
						t.Errorf("%d rows, sign %v: sum[%d][%d] = %v, want %v", n, sign, a, b, sum[a*p+b], want)
					}
				}
			}
		}
	}
}
