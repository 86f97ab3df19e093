package svm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// blobs draws n points per class around the given centers with unit-sd
// Gaussian noise scaled by sd.
func blobs(centers [][]float64, n int, sd float64, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := len(centers[0])
	x := mat.NewDense(n*len(centers), d, nil)
	y := make([]int, n*len(centers))
	for k, c := range centers {
		for p := range n {
			i := k*n + p
			y[i] = k
			for j := range d {
				x.Set(i, j, c[j]+sd*rng.NormFloat64())
			}
		}
	}
	return x, y
}

// pm1 maps labels 0/1 to -1/+1.
func pm1(y []int) []float64 {
	out := make([]float64, len(y))
	for i, l := range y {
		out[i] = float64(2*l - 1)
	}
	return out
}

// augment appends the bias column B.
func augment(x *mat.Dense, b float64) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(n, d+1, nil)
	for i := range n {
		copy(out.RawRowView(i), x.RawRowView(i))
		out.Set(i, d, b)
	}
	return out
}

// primal returns 1/2 w'w + C sum loss for augmented inputs xa and weights w.
func primal(xa *mat.Dense, y, w []float64, c float64, loss Loss) float64 {
	f := 0.5 * dot(w, w)
	for i := range y {
		m := 1 - y[i]*dot(w, xa.RawRowView(i))
		if m > 0 {
			if loss == Hinge {
				f += c * m
			} else {
				f += c * m * m
			}
		}
	}
	return f
}

// dual returns the negated dual objective e'a - 1/2 a'(Q+D)a, computed from
// a directly (w recomputed as sum y_i a_i x~_i).
func dual(xa *mat.Dense, y, a []float64, c float64, loss Loss) float64 {
	_, d := xa.Dims()
	w := make([]float64, d)
	var sa, sd float64
	for i := range y {
		for j, v := range xa.RawRowView(i) {
			w[j] += y[i] * a[i] * v
		}
		sa += a[i]
		if loss == SquaredHinge {
			sd += a[i] * a[i] / (2 * c)
		}
	}
	return sa - 0.5*dot(w, w) - 0.5*sd
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func weights(b *Binary, bias float64) []float64 {
	w := append([]float64(nil), b.W...)
	return append(w, b.Intercept/bias)
}

func TestSeparable(t *testing.T) {
	x, y := blobs([][]float64{{-3, -1}, {3, 1}}, 200, 0.7, 1)
	for _, loss := range []Loss{SquaredHinge, Hinge} {
		for _, noShrink := range []bool{false, true} {
			m, err := Train(context.Background(), x, y, 2, Options{Solver: Dual, Loss: loss, NoShrink: noShrink, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if acc := Accuracy(ok[[]int](t)(m.Predict(x)), y); acc != 1 {
				t.Errorf("%v noShrink=%v: train accuracy %g, want 1", loss, noShrink, acc)
			}
			if !m.Machines[1].Converged {
				t.Errorf("%v: not converged in %d epochs", loss, m.Machines[1].Epochs)
			}
		}
	}
}

// TestDualityGap checks that at convergence the primal objective computed
// from the weights matches the dual objective computed from Alpha, and that
// the weights equal sum_i y_i a_i x~_i.
func TestDualityGap(t *testing.T) {
	// Overlapping classes, so that many constraints are active.
	x, yl := blobs([][]float64{{-1, 0, 0.5}, {1, 0.5, 0}}, 150, 1.2, 2)
	y := pm1(yl)
	for _, tc := range []struct {
		solver Solver
		loss   Loss
		c      float64
		bias   float64
	}{
		{Dual, SquaredHinge, 1, 1},
		{Dual, SquaredHinge, 0.05, 2},
		{Dual, Hinge, 1, 1},
		{Dual, Hinge, 10, 0.5},
		{Dual, Hinge, 1, -1},
		{Primal, SquaredHinge, 1, 1},
		{Primal, SquaredHinge, 0.05, 2},
		{Primal, SquaredHinge, 1, -1},
	} {
		t.Run(fmt.Sprintf("%v/%v/C=%g/B=%g", tc.solver, tc.loss, tc.c, tc.bias), func(t *testing.T) {
			o := Options{Solver: tc.solver, C: tc.c, Loss: tc.loss, Bias: tc.bias, Tol: 1e-6, MaxEpochs: 100000, Seed: 1, KeepAlpha: tc.solver == Primal}
			b, err := TrainBinary(context.Background(), x, y, o)
			if err != nil {
				t.Fatal(err)
			}
			if !b.Converged {
				t.Fatalf("not converged after %d epochs", b.Epochs)
			}
			var xa *mat.Dense
			var w []float64
			if tc.bias > 0 {
				xa = augment(x, tc.bias)
				w = weights(b, tc.bias)
			} else {
				xa = x
				w = b.W
				if b.Intercept != 0 {
					t.Errorf("intercept %g without bias", b.Intercept)
				}
			}
			// w = sum y a x~.
			_, d := xa.Dims()
			wr := make([]float64, d)
			for i := range y {
				if b.Alpha[i] < 0 || (tc.loss == Hinge && b.Alpha[i] > tc.c) {
					t.Fatalf("alpha[%d] = %g outside [0, %g]", i, b.Alpha[i], tc.c)
				}
				for j, v := range xa.RawRowView(i) {
					wr[j] += y[i] * b.Alpha[i] * v
				}
			}
			for j := range wr {
				if math.Abs(wr[j]-w[j]) > 1e-9*(1+math.Abs(w[j])) {
					t.Errorf("w[%d] = %g, sum y a x = %g", j, w[j], wr[j])
				}
			}
			p := primal(xa, y, w, tc.c, tc.loss)
			q := dual(xa, y, b.Alpha, tc.c, tc.loss)
			if gap := p - q; gap < -1e-9 || gap > 1e-5*math.Abs(p) {
				t.Errorf("primal %.10g dual %.10g gap %g", p, q, gap)
			}
		})
	}
}

// newtonL2 minimizes the L2-loss primal 1/2 w'w + C sum max(0, 1 - y w'x)^2
// by the generalized Newton method with backtracking.
func newtonL2(xa *mat.Dense, y []float64, c float64) []float64 {
	n, d := xa.Dims()
	w := make([]float64, d)
	for it := 0; it < 100; it++ {
		g := mat.NewVecDense(d, append([]float64(nil), w...))
		h := mat.NewSymDense(d, nil)
		for j := range d {
			h.SetSym(j, j, 1)
		}
		for i := range n {
			xi := xa.RawRowView(i)
			m := 1 - y[i]*dot(w, xi)
			if m <= 0 {
				continue
			}
			for j := range d {
				g.SetVec(j, g.AtVec(j)-2*c*m*y[i]*xi[j])
				for k := j; k < d; k++ {
					h.SetSym(j, k, h.At(j, k)+2*c*xi[j]*xi[k])
				}
			}
		}
		if mat.Norm(g, 2) < 1e-13 {
			break
		}
		var step mat.VecDense
		if err := step.SolveVec(h, g); err != nil {
			panic(err)
		}
		f0 := primal(xa, y, w, c, SquaredHinge)
		t := 1.0
		for {
			wn := make([]float64, d)
			for j := range d {
				wn[j] = w[j] - t*step.AtVec(j)
			}
			if primal(xa, y, wn, c, SquaredHinge) <= f0 || t < 1e-12 {
				w = wn
				break
			}
			t /= 2
		}
	}
	return w
}

// pgHinge solves the hinge-loss dual min 1/2 a'Qa - e'a, 0 <= a <= C, by
// projected gradient descent with step 1/||Q||.
func pgHinge(xa *mat.Dense, y []float64, c float64) []float64 {
	n, _ := xa.Dims()
	var q mat.Dense
	q.Mul(xa, xa.T())
	for i := range n {
		for j := range n {
			q.Set(i, j, q.At(i, j)*y[i]*y[j])
		}
	}
	var ev mat.EigenSym
	ev.Factorize(mat.NewSymDense(n, q.RawMatrix().Data), false)
	vals := ev.Values(nil)
	step := 1 / vals[n-1]
	a := make([]float64, n)
	g := make([]float64, n)
	for it := 0; it < 200000; it++ {
		for i := range n {
			g[i] = dot(q.RawRowView(i), a) - 1
		}
		for i := range n {
			a[i] = math.Min(math.Max(a[i]-step*g[i], 0), c)
		}
	}
	return a
}

func TestBruteForce(t *testing.T) {
	x, yl := blobs([][]float64{{-0.5, 0.2}, {0.5, -0.1}}, 15, 1, 4)
	y := pm1(yl)
	const bias = 1
	xa := augment(x, bias)
	for _, c := range []float64{0.1, 1, 5} {
		t.Run(fmt.Sprintf("L2/C=%g", c), func(t *testing.T) {
			want := newtonL2(xa, y, c)
			b, err := TrainBinary(context.Background(), x, y, Options{Solver: Dual, C: c, Tol: 1e-10, MaxEpochs: 1000000, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			got := weights(b, bias)
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-4 {
					t.Errorf("w[%d] = %.8g, Newton %.8g", j, got[j], want[j])
				}
			}
			b, err = TrainBinary(context.Background(), x, y, Options{Solver: Primal, C: c, Tol: 1e-10})
			if err != nil {
				t.Fatal(err)
			}
			got = weights(b, bias)
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-6 {
					t.Errorf("primal solver: w[%d] = %.8g, Newton %.8g", j, got[j], want[j])
				}
			}
		})
		t.Run(fmt.Sprintf("L1/C=%g", c), func(t *testing.T) {
			a := pgHinge(xa, y, c)
			want := dual(xa, y, a, c, Hinge)
			b, err := TrainBinary(context.Background(), x, y, Options{C: c, Loss: Hinge, Tol: 1e-10, MaxEpochs: 1000000, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			got := dual(xa, y, b.Alpha, c, Hinge)
			if math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("dual objective %.10g, projected gradient %.10g", got, want)
			}
			// Also the primal objective of the returned weights.
			if p := primal(xa, y, weights(b, bias), c, Hinge); math.Abs(p-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("primal objective %.10g, brute-force optimum %.10g", p, want)
			}
		})
	}
}

func TestMulticlassBlobs(t *testing.T) {
	centers := [][]float64{{0, 0}, {4, 0}, {2, 3.5}}
	xtr, ytr := blobs(centers, 300, 0.8, 10)
	xte, yte := blobs(centers, 300, 0.8, 11)
	for _, o := range []Options{{Solver: Dual}, {Loss: Hinge}, {}} {
		o.Seed = 1
		m, err := Train(context.Background(), xtr, ytr, 3, o)
		if err != nil {
			t.Fatal(err)
		}
		if acc := Accuracy(ok[[]int](t)(m.Predict(xte)), yte); acc < 0.95 {
			t.Errorf("%v %v: held-out accuracy %g, want > 0.95", o.Solver, o.Loss, acc)
		}
	}
}

func TestAbsentClass(t *testing.T) {
	x, y := blobs([][]float64{{0, 0}, {5, 5}}, 50, 0.5, 12)
	for i := range y {
		y[i] *= 2 // classes 0 and 2 of 4
	}
	m, err := Train(context.Background(), x, y, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Present[1] || m.Present[3] || !m.Present[0] || !m.Present[2] {
		t.Errorf("Present = %v", m.Present)
	}
	dec := ok[*mat.Dense](t)(m.Decision(x))
	if !math.IsInf(dec.At(0, 1), -1) || !math.IsInf(dec.At(0, 3), -1) {
		t.Errorf("absent classes have decision %g, %g, want -Inf", dec.At(0, 1), dec.At(0, 3))
	}
	if acc := Accuracy(ok[[]int](t)(m.Predict(x)), y); acc != 1 {
		t.Errorf("accuracy %g, want 1", acc)
	}
}

func TestDeterminism(t *testing.T) {
	x, y := blobs([][]float64{{0, 0, 0}, {1, 1, 0}, {0, 1, 1}, {1, 0, 1}}, 100, 0.6, 13)
	train := func(seed uint64) *Model {
		m, err := Train(context.Background(), x, y, 4, Options{Solver: Dual, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := train(5), train(5), train(6)
	if !mat.Equal(a.W, b.W) {
		t.Error("same seed gave different weights")
	}
	for k := range a.Intercept {
		if a.Intercept[k] != b.Intercept[k] {
			t.Errorf("same seed: intercept %d differs", k)
		}
	}
	if mat.Equal(a.W, c.W) {
		t.Error("different seeds gave bitwise identical weights (permutation unused?)")
	}
}

func TestShrinkingSameSolution(t *testing.T) {
	x, yl := blobs([][]float64{{-1, 0}, {1, 0}}, 200, 1, 14)
	y := pm1(yl)
	for _, loss := range []Loss{SquaredHinge, Hinge} {
		o := Options{Solver: Dual, Loss: loss, Tol: 1e-9, MaxEpochs: 100000, Seed: 2}
		a, err := TrainBinary(context.Background(), x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		o.NoShrink = true
		b, err := TrainBinary(context.Background(), x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		for j := range a.W {
			if math.Abs(a.W[j]-b.W[j]) > 1e-5 {
				t.Errorf("%v: w[%d] %g with shrinking, %g without", loss, j, a.W[j], b.W[j])
			}
		}
		if math.Abs(a.Intercept-b.Intercept) > 1e-5 {
			t.Errorf("%v: intercept %g with shrinking, %g without", loss, a.Intercept, b.Intercept)
		}
	}
}

func TestErrors(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3})
	nan := mat.DenseCopyOf(x)
	nan.Set(2, 1, math.NaN())
	inf := mat.DenseCopyOf(x)
	inf.Set(3, 0, math.Inf(1))
	for _, tc := range []struct {
		name   string
		x      *mat.Dense
		y      []int
		nclass int
		o      Options
		want   string
	}{
		{"shape", x, []int{0, 1, 0}, 2, Options{}, "4 rows in x but 3 labels"},
		{"nan", nan, []int{0, 1, 0, 1}, 2, Options{}, "x[2, 1] = NaN"},
		{"inf", inf, []int{0, 1, 0, 1}, 2, Options{}, "x[3, 0] = +Inf"},
		{"one class", x, []int{1, 1, 1, 1}, 3, Options{}, "only 1 class present"},
		{"label range", x, []int{0, 1, 2, 1}, 2, Options{}, "y[2] = 2 out of range"},
		{"negative label", x, []int{0, -1, 0, 1}, 2, Options{}, "y[1] = -1 out of range"},
		{"C negative", x, []int{0, 1, 0, 1}, 2, Options{C: -1}, "C = -1"},
		{"C nan", x, []int{0, 1, 0, 1}, 2, Options{C: math.NaN()}, "C = NaN"},
		{"nclass", x, []int{0, 0, 0, 0}, 1, Options{}, "nclass = 1"},
		{"tol", x, []int{0, 1, 0, 1}, 2, Options{Tol: -1}, "Tol = -1"},
		{"loss", x, []int{0, 1, 0, 1}, 2, Options{Loss: 7}, "unknown loss"},
		{"empty", &mat.Dense{}, nil, 2, Options{}, "empty input"},
		{"primal hinge", x, []int{0, 1, 0, 1}, 2, Options{Solver: Primal, Loss: Hinge}, "squared hinge loss only"},
		{"solver", x, []int{0, 1, 0, 1}, 2, Options{Solver: 5}, "unknown solver"},
	} {
		_, err := Train(context.Background(), tc.x, tc.y, tc.nclass, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := TrainBinary(context.Background(), x, []float64{1, 0, 1, -1}, Options{}); err == nil || !strings.Contains(err.Error(), "y[1] = 0") {
		t.Errorf("binary bad label: %v", err)
	}
	if _, err := TrainBinary(context.Background(), x, []float64{1, 1, 1, 1}, Options{}); err == nil || !strings.Contains(err.Error(), "only one class") {
		t.Errorf("binary one class: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, x, []int{0, 1, 0, 1}, 2, Options{}); err != context.Canceled {
		t.Errorf("canceled context: %v", err)
	}

	// Prediction inputs a user can get wrong are errors.
	m, err := Train(context.Background(), x, []int{0, 1, 0, 1}, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Standardize(x)
	if err != nil {
		t.Fatal(err)
	}
	wide := mat.NewDense(2, 3, nil)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Decision", second(m.Decision(wide)), "input has 3 columns, model expects 2"},
		{"Predict", second(m.Predict(wide)), "input has 3 columns, model expects 2"},
		{"Predict empty", second(m.Predict(&mat.Dense{})), "empty input"},
		{"Apply", second(sc.Apply(wide)), "input has 3 columns, scaler expects 2"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want containing %q", tc.name, tc.err, tc.want)
		}
	}
	// Slices of different lengths are programmer errors: these panic.
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"Accuracy", func() { Accuracy([]int{1, 2}, []int{1}) }, "2 predictions for 1 labels"},
		{"Binary.Decision", func() { m.Machines[1].Decision([]float64{1}) }, "input has length 1, model expects 2"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("%s: recovered %v, want a panic containing %q", tc.name, r, tc.want)
				}
			}()
			tc.f()
		}()
	}
}

// ok returns a function that fails the test on a non-nil error and otherwise
// returns the value: ok[T](t)(f()) for a function f returning (T, error).
func ok[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// second returns the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }

func TestStandardize(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{
		1, 10, 5,
		2, 20, 5,
		3, 30, 5,
		4, 40, 5,
	})
	s, err := Standardize(x)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(1.25)
	want := []struct{ mean, sd float64 }{{2.5, sd}, {25, 10 * sd}, {5, 1}}
	for j, w := range want {
		if math.Abs(s.Mean[j]-w.mean) > 1e-12 || math.Abs(s.SD[j]-w.sd) > 1e-12 {
			t.Errorf("column %d: mean %g sd %g, want %g %g", j, s.Mean[j], s.SD[j], w.mean, w.sd)
		}
	}
	z := ok[*mat.Dense](t)(s.Apply(mat.NewDense(1, 3, []float64{4, 0, 7})))
	for j, w := range []float64{1.5 / sd, -25 / (10 * sd), 2} {
		if math.Abs(z.At(0, j)-w) > 1e-12 {
			t.Errorf("z[%d] = %g, want %g", j, z.At(0, j), w)
		}
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(1, 2, math.Inf(-1))
	if _, err := Standardize(bad); err == nil || !strings.Contains(err.Error(), "x[1, 2]") {
		t.Errorf("Standardize Inf: %v", err)
	}
}

func ExampleTrain() {
	// Two well-separated clusters on a line, labels 0 and 1.
	x := mat.NewDense(6, 1, []float64{-3, -2, -1, 1, 2, 3})
	y := []int{0, 0, 0, 1, 1, 1}
	m, err := Train(context.Background(), x, y, 2, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := m.Predict(mat.NewDense(3, 1, []float64{-0.5, 0.5, 10}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pred)
	// Squared hinge loss, C = 1: only x = +-1 are inside the margin, and
	// 1/2 w^2 + 2 (1 - w)^2 is minimal at w = 0.8; symmetry gives b = 0.
	fmt.Printf("w = %.4f, |b| < 1e-6: %v\n", m.W.At(1, 0), math.Abs(m.Intercept[1]) < 1e-6)
	// Output:
	// [0 1 1]
	// w = 0.8000, |b| < 1e-6: true
}

func BenchmarkTrain200kx10x4(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, nc = 200000, 10, 4
	centers := make([][]float64, nc)
	for k := range centers {
		centers[k] = make([]float64, d)
		for j := range d {
			centers[k][j] = 2 * rng.NormFloat64()
		}
	}
	x, y := blobs(centers, n/nc, 1.5, 3)
	for _, o := range []Options{{Solver: Primal}, {Solver: Dual}, {Loss: Hinge}} {
		b.Run(o.Solver.String()+"-"+o.Loss.String(), func(b *testing.B) {
			var acc float64
			var epochs int
			for b.Loop() {
				m, err := Train(context.Background(), x, y, nc, o)
				if err != nil {
					b.Fatal(err)
				}
				acc = Accuracy(ok[[]int](b)(m.Predict(x)), y)
				epochs = 0
				for _, mc := range m.Machines {
					epochs = max(epochs, mc.Epochs)
				}
			}
			b.ReportMetric(acc, "acc")
			b.ReportMetric(float64(epochs), "max-epochs")
		})
	}
}

// BenchmarkTrainPrimal700kx50 is the largest case the package targets:
// 700k rows, 50 features, 6 overlapping classes, default (Auto) solver.
func BenchmarkTrainPrimal700kx50(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 2))
	const n, d, nc = 700002, 50, 6
	centers := make([][]float64, nc)
	for k := range centers {
		centers[k] = make([]float64, d)
		for j := range d {
			centers[k][j] = 0.5 * rng.NormFloat64()
		}
	}
	x, y := blobs(centers, n/nc, 1, 4)
	var acc float64
	for b.Loop() {
		m, err := Train(context.Background(), x, y, nc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		acc = Accuracy(ok[[]int](b)(m.Predict(x)), y)
	}
	b.ReportMetric(acc, "acc")
}

// TestDecisionProduct checks Decision against the dense product X W^T
// plus the intercepts (gonum), on a strided input.
func TestDecisionProduct(t *testing.T) {
	x, y := blobs([][]float64{{0, 0, 0}, {1, 1, 0}, {0, 1, 1}, {1, 0, 1}}, 60, 0.6, 17)
	m, err := Train(context.Background(), x, y, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wide := mat.NewDense(240, 5, nil)
	wide.Slice(0, 240, 1, 4).(*mat.Dense).Copy(x)
	xs := wide.Slice(0, 240, 1, 4).(*mat.Dense)
	dec := ok[*mat.Dense](t)(m.Decision(xs))
	var want mat.Dense
	want.Mul(x, m.W.T())
	for i := range 240 {
		for k := range 4 {
			w := want.At(i, k) + m.Intercept[k]
			if d := math.Abs(dec.At(i, k) - w); d > 1e-12*math.Max(1, math.Abs(w)) {
				t.Fatalf("decision (%d, %d) = %v, want %v", i, k, dec.At(i, k), w)
			}
		}
	}
}

// TestPredictDecision checks Predict against the largest decision value of
// Decision, ties to the smaller label: on a strided input, with two
// classes of equal weights and intercepts (every row a tie), an absent
// class (intercept -Inf) and a class that wins for some rows only.
func TestPredictDecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d = 500, 3
	wide := mat.NewDense(n, d+2, nil)
	for i := range n {
		for j := range d + 2 {
			wide.Set(i, j, rng.NormFloat64())
		}
	}
	x := wide.Slice(0, n, 1, d+1).(*mat.Dense)
	m := &Model{NClass: 5, Dim: d, W: mat.NewDense(5, d, []float64{
		0.5, -1, 0.25,
		1, 0.5, -0.5,
		1, 0.5, -0.5, // class 2 ties class 1
		0, 0, 0, // absent
		-1, 2, 0.5,
	}), Intercept: []float64{0.1, -0.2, -0.2, math.Inf(-1), 0.3}}
	pred := ok[[]int](t)(m.Predict(x))
	dec := ok[*mat.Dense](t)(m.Decision(x))
	counts := make([]int, 5)
	for i := range n {
		row := dec.RawRowView(i)
		want := 0
		for k, v := range row {
			if v > row[want] {
				want = k
			}
		}
		if pred[i] != want {
			t.Fatalf("row %d: Predict %d, want %d (decision values %v)", i, pred[i], want, row)
		}
		counts[pred[i]]++
	}
	if counts[0] == 0 || counts[1] == 0 || counts[4] == 0 || counts[2] != 0 || counts[3] != 0 {
		t.Errorf("predicted classes %v: want classes 0, 1 and 4 and never 2 (tied with 1) or 3 (absent)", counts)
	}
}
