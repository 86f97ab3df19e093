package svm

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
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

// TestAddOuters checks the sums over violators (of the outer products and
// of the labelled rows), by SYRK on gathered rows and one outer product at
// a time, against a direct sum.
func TestAddOuters(t *testing.T) {
	x, y := overlapping(100, 4, 2, 7)
	pb, err := NewProblem(x, y, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := pb.p
	sc := pb.getScratch()
	yk := pb.classLabels(1)
	xa := augment(x, 1)
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
			v := make([]float64, p)
			for j := range v {
				v[j] = float64(-j)
			}
			pb.addOuters(sum, v, rows, 1, sign, sc)
			for j := range p {
				want := float64(-j)
				for _, i := range rows {
					want += sign * yk[i] * xa.At(i, j)
				}
				if math.Abs(v[j]-want) > 1e-12*(1+math.Abs(want)) {
					t.Errorf("%d rows, sign %v: v[%d] = %v, want %v", n, sign, j, v[j], want)
				}
			}
			for a := range p {
				for b := a; b < p; b++ {
					want := float64(a*p + b)
					for _, i := range rows {
						want += sign * xa.At(i, a) * xa.At(i, b)
					}
					if math.Abs(sum[a*p+b]-want) > 1e-12*(1+math.Abs(want)) {
						t.Errorf("%d rows, sign %v: sum[%d][%d] = %v, want %v", n, sign, a, b, sum[a*p+b], want)
					}
				}
			}
		}
	}
}

// addOutersSyrk is the SYRK path of addOuters on rows gathered one by one
// into blocks of stride p for gemm.Syrk, the reference for the bits of
// addOuters; block and outer are its scratch (outerBlock*p and p*p values).
func addOutersSyrk(pb *Problem, sum, v []float64, rows []int, k int, sign float64, block, outer []float64) {
	p := pb.p
	block, outer = block[:outerBlock*p], outer[:p*p]
	clear(outer)
	for lo := 0; lo < len(rows); lo += outerBlock {
		hi := min(lo+outerBlock, len(rows))
		for j, i := range rows[lo:hi] {
			r := block[j*p : (j+1)*p]
			pb.rowTo(r, i)
			sy := sign
			if pb.y[i] != k {
				sy = -sign
			}
			addScaled(v, sy, r)
		}
		gemm.Syrk(blas.Trans, blas64.General{Rows: hi - lo, Cols: p, Stride: p, Data: block}, blas64.Symmetric{Uplo: blas.Upper, N: p, Stride: p, Data: outer})
	}
	for a := range p {
		for b := a; b < p; b++ {
			sum[a*p+b] += sign * outer[a*p+b]
		}
	}
}

// TestAddOutersBits checks addOuters bit for bit against gemm.Syrk on
// rows gathered one by one, for several widths with and without the bias
// feature, with one scratch shared by the problems as the pool does.
func TestAddOutersBits(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		bias float64
		seed uint64
	}{
		{900, 10, 0, 1}, {900, 3, 0, 2}, {700, 8, -1, 3}, {800, 11, 0.5, 4}, {600, 13, 0, 5}, {500, 1, 0, 6},
	} {
		x, y := overlapping(tc.n, tc.d, 3, tc.seed)
		// Values of very different sizes, so that the order of the terms
		// shows in the bits.
		rng := rand.New(rand.NewPCG(tc.seed, 9))
		rowsx, _ := x.Dims()
		for i := range rowsx {
			for j := range tc.d {
				x.Set(i, j, x.At(i, j)*math.Exp(2*rng.NormFloat64()))
			}
		}
		pb, err := NewProblem(x, y, 3, tc.bias)
		if err != nil {
			t.Fatal(err)
		}
		// The pool hands back the scratch of the previous case: its
		// padding holds that case's rows.
		sc := pb.getScratch()
		p := pb.p
		for _, n := range []int{outerMin, 255, 256, 257, 600} {
			rows := make([]int, n)
			for i := range rows {
				rows[i] = rng.IntN(rowsx)
			}
			for _, sign := range []float64{1, -1} {
				sum := make([]float64, p*p)
				v := make([]float64, p)
				for i := range sum {
					sum[i] = rng.NormFloat64()
				}
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				wsum, wv := slices.Clone(sum), slices.Clone(v)
				pb.addOuters(sum, v, rows, 2, sign, sc)
				addOutersSyrk(pb, wsum, wv, rows, 2, sign, make([]float64, outerBlock*p), make([]float64, p*p))
				for a := range p {
					for b := a; b < p; b++ {
						if math.Float64bits(sum[a*p+b]) != math.Float64bits(wsum[a*p+b]) {
							t.Fatalf("n=%d d=%d bias=%v, %d rows, sign %v: sum[%d][%d] = %v, want %v", tc.n, tc.d, tc.bias, n, sign, a, b, sum[a*p+b], wsum[a*p+b])
						}
					}
				}
				for j := range p {
					if math.Float64bits(v[j]) != math.Float64bits(wv[j]) {
						t.Fatalf("n=%d d=%d bias=%v, %d rows, sign %v: v[%d] = %v, want %v", tc.n, tc.d, tc.bias, n, sign, j, v[j], wv[j])
					}
				}
			}
		}
		putScratch(sc)
	}
}

// TestPrimalStoppingGradient checks the gradient the primal solver takes
// from its sums over the margin violators against the gradient computed
// directly from the rows, at the default tolerance, for cold and warm
// starts: a machine that stops after e Newton iterations has a gradient at
// most the stopping bound there, and above it after e - 1 iterations (the
// iterates of a run limited to e - 1 iterations, which are the same).
func TestPrimalStoppingGradient(t *testing.T) {
	const bias = 1
	ctx := context.Background()
	var checked, warmChecked int
	for _, tc := range []struct {
		n, d, nc int
		seed     uint64
		c        []float64
	}{
		{250, 5, 4, 3, []float64{0.05, 1, 20}},
		{400, 3, 3, 8, []float64{0.01, 0.1, 1, 10, 100}},
		{300, 6, 5, 5, []float64{0.1, 1, 10}},
		{100, 8, 2, 11, []float64{1, 3}},
	} {
		x, y := overlapping(tc.n, tc.d, tc.nc, tc.seed)
		xa := augment(x, bias)
		pb, err := NewProblem(x, y, tc.nc, 0)
		if err != nil {
			t.Fatal(err)
		}
		var prev *Model
		for _, c := range tc.c {
			for _, init := range []*Model{nil, prev} {
				if init == nil && prev != nil {
					continue
				}
				m, err := pb.Train(ctx, Options{C: c, Init: init})
				if err != nil {
					t.Fatal(err)
				}
				for k, b := range m.Machines {
					if b == nil {
						continue
					}
					yk := make([]float64, len(y))
					npos := 0
					for i, l := range y {
						yk[i] = -1
						if l == k {
							yk[i] = 1
							npos++
						}
					}
					eps := DefaultPrimalTol * math.Max(1, float64(min(npos, len(y)-npos))) / float64(len(y))
					bound := eps * gradNorm(xa, yk, make([]float64, tc.d+1), c)
					if !b.Converged {
						t.Errorf("n=%d C=%g warm=%t class %d: not converged", tc.n, c, init != nil, k)
						continue
					}
					if g := gradNorm(xa, yk, weights(b, bias), c); g > bound*(1+1e-9) {
						t.Errorf("n=%d C=%g warm=%t class %d: stopped after %d iterations at gradient %v, above the bound %v", tc.n, c, init != nil, k, b.Epochs, g, bound)
					}
					// The iterate before the last: the starting point after
					// one iteration (MaxEpochs 0 is the default).
					var before []float64
					switch {
					case b.Epochs == 0 || b.Epochs == 1 && init == nil:
						continue
					case b.Epochs == 1:
						before = weights(init.Machines[k], bias)
					default:
						early, err := pb.Train(ctx, Options{C: c, Init: init, MaxEpochs: b.Epochs - 1})
						if err != nil {
							t.Fatal(err)
						}
						if early.Machines[k].Converged {
							t.Errorf("n=%d C=%g warm=%t class %d: converged within %d iterations, but took %d without the limit", tc.n, c, init != nil, k, b.Epochs-1, b.Epochs)
						}
						before = weights(early.Machines[k], bias)
					}
					checked++
					if init != nil {
						warmChecked++
					}
					if g := gradNorm(xa, yk, before, c); g <= bound*(1-1e-9) {
						t.Errorf("n=%d C=%g warm=%t class %d: did not stop after %d iterations at gradient %v, below the bound %v", tc.n, c, init != nil, k, b.Epochs-1, g, bound)
					}
				}
				prev = m
			}
		}
	}
	t.Logf("%d machines checked before their last iteration, %d warm-started", checked, warmChecked)
	if checked < 20 || warmChecked < 8 {
		t.Errorf("%d machines checked before their last iteration, %d warm-started; want at least 20 and 8", checked, warmChecked)
	}
}

// TestScratchShared checks that the buffers the primal solver shares
// between problems do not change a solution: problems of different sizes
// trained in turn, cold and warm, concurrently, give the weights of their
// first training exactly.
func TestScratchShared(t *testing.T) {
	ctx := context.Background()
	var pbs []*Problem
	for i, n := range []int{40, 400, 150} {
		x, y := overlapping(n, 3+2*i, 3, uint64(20+i))
		pb, err := NewProblem(x, y, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		pbs = append(pbs, pb)
	}
	train := func(pb *Problem) [2]*Model {
		cold, err := pb.Train(ctx, Options{C: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		warm, err := pb.Train(ctx, Options{C: 3, Init: cold})
		if err != nil {
			t.Fatal(err)
		}
		return [2]*Model{cold, warm}
	}
	first := make([][2]*Model, len(pbs))
	for i, pb := range pbs {
		first[i] = train(pb)
	}
	var wg sync.WaitGroup
	for range 3 {
		for i, pb := range slices.Backward(pbs) {
			wg.Go(func() {
				got := train(pb)
				for j := range got {
					if !mat.Equal(got[j].W, first[i][j].W) || !slices.Equal(got[j].Intercept, first[i][j].Intercept) {
						t.Errorf("problem %d, model %d: the weights differ from the first training", i, j)
					}
				}
			})
		}
	}
	wg.Wait()
}

// TestMarginsTerms checks marginsTerms (four rows at a time in assembly
// where the CPU allows) bit for bit against clearing the output and adding
// floats.AddScaled of every column with a nonzero weight in turn, for row
// counts around multiples of 4 and weights with zeros.
func TestMarginsTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, n := range []int{2, 3, 4, 5, 11, 1001} {
		for _, d := range []int{1, 4, 10} {
			x := mat.NewDense(n, d, nil)
			for i := range n {
				for j := range d {
					x.Set(i, j, 10*rng.NormFloat64())
				}
			}
			y := make([]int, n)
			y[0] = 1
			pb, err := NewProblem(x, y, 2, 0)
			if err != nil {
				t.Fatal(err)
			}
			sc := pb.getScratch()
			for _, s := range [][]float64{make([]float64, d+1), randomWeights(rng, d+1, 0), randomWeights(rng, d+1, 0.4)} {
				want := make([]float64, n)
				for j, sj := range s {
					if sj != 0 {
						floats.AddScaled(want, sj, pb.col(j))
					}
				}
				got := make([]float64, n)
				for i := range got {
					got[i] = math.NaN()
				}
				pb.marginsTerms(got, s, sc)
				for i := range n {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("n=%d d=%d s=%v: row %d = %v, want %v", n, d, s, i, got[i], want[i])
					}
				}
			}
			putScratch(sc)
		}
	}
}

// randomWeights returns p normal weights, each zero with probability zero.
func randomWeights(rng *rand.Rand, p int, zero float64) []float64 {
	s := make([]float64, p)
	for j := range s {
		if rng.Float64() >= zero {
			s[j] = rng.NormFloat64()
		}
	}
	return s
}

// BenchmarkAddOuters adds the outer products of 2,000 random rows of
// 20,000 (10 features and the bias, as in the evaluation's grid) by
// addOuters and by the reference, gemm.Syrk on rows gathered one by one.
func BenchmarkAddOuters(b *testing.B) {
	x, y := overlapping(5000, 10, 4, 1)
	pb, err := NewProblem(x, y, 4, 0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	rows := make([]int, 2000)
	for i := range rows {
		rows[i] = rng.IntN(len(y))
	}
	slices.Sort(rows)
	p := pb.p
	sum, v := make([]float64, p*p), make([]float64, p)
	b.Run("padded", func(b *testing.B) {
		sc := pb.getScratch()
		for b.Loop() {
			pb.addOuters(sum, v, rows, 1, 1, sc)
		}
	})
	b.Run("syrk", func(b *testing.B) {
		block, outer := make([]float64, outerBlock*p), make([]float64, p*p)
		for b.Loop() {
			addOutersSyrk(pb, sum, v, rows, 1, 1, block, outer)
		}
	})
}
