package krr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/internal/testsupport/randmat"
	"github.com/dicalab/dica/kernel"
)

// randPoints returns n points of R^d with normal coordinates of mean shift
// and standard deviation scale, drawn row by row.
func randPoints(rng *rand.Rand, n, d int, shift, scale float64) *mat.Dense {
	x := randmat.Normal(rng, n, d)
	x.Apply(func(_, _ int, v float64) float64 { return shift + scale*v }, x)
	return x
}

// smooth is the regression target used in the tests.
func smooth(x []float64) float64 {
	s := math.Sin(2 * x[0])
	if len(x) > 1 {
		s += 0.5 * math.Cos(x[1])
	}
	return s
}

func targets(x *mat.Dense, noise float64, rng *rand.Rand) []float64 {
	n, _ := x.Dims()
	y := make([]float64, n)
	for i := range n {
		y[i] = smooth(x.RawRowView(i))
		if noise > 0 {
			y[i] += noise * rng.NormFloat64()
		}
	}
	return y
}

// gram returns k(A, B) by Eval loops.
func gram(k kernel.Kernel, a, b *mat.Dense) *mat.Dense {
	r, _ := a.Dims()
	s, _ := b.Dims()
	g := mat.NewDense(r, s, nil)
	for i := range r {
		for j := range s {
			g.Set(i, j, k.Eval(a.RawRowView(i), b.RawRowView(j)))
		}
	}
	return g
}

// closedForm returns m + k(T, X)(K + lambda I)^{-1}(y - m) by a dense LU
// solve.
func closedForm(k kernel.Kernel, x *mat.Dense, y []float64, lambda float64, c bool, xt *mat.Dense) []float64 {
	n, _ := x.Dims()
	kk := gram(k, x, x)
	for i := range n {
		kk.Set(i, i, kk.At(i, i)+lambda)
	}
	var m float64
	if c {
		for _, v := range y {
			m += v
		}
		m /= float64(n)
	}
	yc := mat.NewVecDense(n, nil)
	for i, v := range y {
		yc.SetVec(i, v-m)
	}
	var a mat.VecDense
	if err := a.SolveVec(kk, yc); err != nil {
		panic(err)
	}
	var f mat.VecDense
	f.MulVec(gram(k, xt, x), &a)
	out := f.RawVector().Data
	for i := range out {
		out[i] += m
	}
	return out
}

// whiten is the exact feature map phi(x) = k(x, Z) V L^{-1/2} on points Z,
// K_ZZ = V L V': phi(Z)phi(Z)' = K_ZZ and phi(x)phi(z)' = k(x, z) for z in Z.
type whiten struct {
	k kernel.Kernel
	z *mat.Dense
	t *mat.Dense
}

func newWhiten(k kernel.Kernel, z *mat.Dense) whiten {
	n, _ := z.Dims()
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, gram(k, z, z).RawMatrix().Data), true) {
		panic("eigen")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	t := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			t.Set(i, j, v.At(i, j)/math.Sqrt(vals[j]))
		}
	}
	return whiten{k: k, z: z, t: t}
}

func (w whiten) InputDim() int { _, d := w.z.Dims(); return d }
func (w whiten) Dim() int      { n, _ := w.z.Dims(); return n }
func (w whiten) Map(dst, x *mat.Dense) {
	kb := gram(w.k, x, w.z)
	if dst.IsEmpty() {
		r, _ := x.Dims()
		dst.ReuseAs(r, w.Dim())
	}
	dst.Mul(kb, w.t)
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

// feats returns MapFeatures(m, x), failing the test on an error.
func feats(tb testing.TB, m approx.Map, x *mat.Dense) Features {
	tb.Helper()
	return ok[Features](tb)(MapFeatures(m, x))
}

func maxAbsDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func TestExactClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randPoints(rng, 60, 2, 0, 1)
	y := targets(x, 0.1, rng)
	xt := randPoints(rng, 25, 2, 0, 1.2)
	for _, tc := range []struct {
		k      kernel.Kernel
		lambda float64
		center bool
	}{
		{kernel.RBF{Sigma: 0.7}, 0.1, false},
		{kernel.RBF{Sigma: 0.7}, 0.1, true},
		{kernel.RBF{Sigma: 2}, 1e-3, true},
		{kernel.Laplacian{Sigma: 1}, 0.5, false},
	} {
		t.Run(fmt.Sprintf("%v/%g/%v", tc.k, tc.lambda, tc.center), func(t *testing.T) {
			e, err := FitExact(x, y, tc.k, Options{Lambda: tc.lambda, Center: tc.center})
			if err != nil {
				t.Fatal(err)
			}
			want := closedForm(tc.k, x, y, tc.lambda, tc.center, xt)
			if d := maxAbsDiff(ok[[]float64](t)(e.Predict(xt)), want); d > 1e-9 {
				t.Errorf("max |pred - closed form| = %g", d)
			}
			// Posterior variance k(x,x) - k_x'(K + lambda I)^{-1} k_x.
			kk := gram(tc.k, x, x)
			for i := range 60 {
				kk.Set(i, i, kk.At(i, i)+tc.lambda)
			}
			var inv mat.Dense
			if err := inv.Inverse(kk); err != nil {
				t.Fatal(err)
			}
			kx := gram(tc.k, x, xt)
			var q mat.Dense
			q.Mul(&inv, kx)
			got := ok[[]float64](t)(e.Variance(xt))
			for i := range got {
				v := tc.k.Eval(xt.RawRowView(i), xt.RawRowView(i)) - mat.Dot(kx.ColView(i), q.ColView(i))
				if math.Abs(got[i]-v) > 1e-9 {
					t.Errorf("variance[%d] = %g, want %g", i, got[i], v)
				}
			}
		})
	}
}

func TestGPInterpolates(t *testing.T) {
	// Noiseless samples of a smooth function on a grid of [0, 3].
	const n = 16
	x := mat.NewDense(n, 1, nil)
	for i := range n {
		x.Set(i, 0, 3*float64(i)/(n-1))
	}
	y := targets(x, 0, nil)
	e, err := FitExact(x, y, kernel.RBF{Sigma: 0.4}, Options{Lambda: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(ok[[]float64](t)(e.Predict(x)), y); d > 1e-6 {
		t.Errorf("at training points max |f - y| = %g, want interpolation", d)
	}
	if v := ok[[]float64](t)(e.Variance(x)); maxAbsDiff(v, make([]float64, n)) > 1e-6 {
		t.Errorf("posterior variance at training points %v, want ~0", v)
	}
	mid := mat.NewDense(n-1, 1, nil)
	for i := range n - 1 {
		mid.Set(i, 0, 3*(float64(i)+0.5)/(n-1))
	}
	if d := maxAbsDiff(ok[[]float64](t)(e.Predict(mid)), targets(mid, 0, nil)); d > 2e-3 {
		t.Errorf("at midpoints max |f - g| = %g", d)
	}
}

func TestLinearMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	x := randPoints(rng, 50, 2, 0, 1)
	y := targets(x, 0.1, rng)
	xt := randPoints(rng, 30, 2, 0, 1)
	k := kernel.RBF{Sigma: 0.5}
	for _, lambda := range []float64{0.05, 0.5} {
		for _, c := range []bool{false, true} {
			ex, err := FitExact(x, y, k, Options{Lambda: lambda, Center: c})
			if err != nil {
				t.Fatal(err)
			}
			want := ok[[]float64](t)(ex.Predict(xt))

			// Kernel rows on the training points: Phi = K, penalty R = K.
			rows := approx.KernelRows{Kernel: k, Points: x}
			pen := mat.NewSymDense(50, gram(k, x, x).RawMatrix().Data)
			lin, err := FitLinear(context.Background(), feats(t, rows, x), y, Options{Lambda: lambda, Center: c, Penalty: pen, BlockRows: 7})
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(ok[[]float64](t)(lin.Predict(feats(t, rows, xt))), want); d > 1e-6 {
				t.Errorf("KernelRows lambda=%g center=%v: max |linear - exact| = %g", lambda, c, d)
			}
			if d := maxAbsDiff(lin.W, ex.Alpha); d > 1e-6 {
				t.Errorf("KernelRows lambda=%g center=%v: max |w - alpha| = %g", lambda, c, d)
			}

			// Exact factor Phi Phi' = K, identity penalty, same lambda.
			wm := newWhiten(k, x)
			lin, err = FitLinear(context.Background(), feats(t, wm, x), y, Options{Lambda: lambda, Center: c, BlockRows: 16})
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(ok[[]float64](t)(lin.Predict(feats(t, wm, xt))), want); d > 1e-8 {
				t.Errorf("whitened lambda=%g center=%v: max |linear - exact| = %g", lambda, c, d)
			}
		}
	}
}

// domainData draws ndom domains of per points each, domain p centered at
// shift*p, with targets depending on the domain.
func domainData(rng *rand.Rand, ndom, per int, shift float64) (*mat.Dense, []int, []float64) {
	x := mat.NewDense(ndom*per, 2, nil)
	dom := make([]int, ndom*per)
	y := make([]float64, ndom*per)
	for p := range ndom {
		for i := range per {
			r := p*per + i
			dom[r] = 10 + 3*p // arbitrary label values
			x.Set(r, 0, shift*float64(p)+0.8*rng.NormFloat64())
			x.Set(r, 1, 0.8*rng.NormFloat64())
			y[r] = smooth(x.RawRowView(r)) + 0.3*float64(p)
		}
	}
	return x, dom, y
}

// mmd2 returns the squared MMD between the rows of a and b under k.
func mmd2(k kernel.Kernel, a, b *mat.Dense) float64 {
	mean := func(g *mat.Dense) float64 {
		r, c := g.Dims()
		return mat.Sum(g) / float64(r*c)
	}
	return mean(gram(k, a, a)) + mean(gram(k, b, b)) - 2*mean(gram(k, a, b))
}

func rowsOf(x *mat.Dense, dom []int, label int) *mat.Dense {
	_, c := x.Dims()
	var data []float64
	for i, l := range dom {
		if l == label {
			data = append(data, x.RawRowView(i)...)
		}
	}
	return mat.NewDense(len(data)/c, c, data)
}

func TestDistributionalGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	x, dom, _ := domainData(rng, 4, 7, 0.7)
	xs, domS, _ := domainData(rng, 1, 6, 1.1) // one unseen test domain
	for i := range domS {
		domS[i] = -1
	}
	k := kernel.RBF{Sigma: 0.6}
	const sigma1 = 0.3
	// Embedding map exact on train and test points (so mean embeddings
	// have exact MMD distances); point map exact on the training points.
	all := mat.NewDense(28+6, 2, nil)
	all.Stack(x, xs)
	embed := newWhiten(k, all)
	point := newWhiten(k, x)
	d, err := NewDistributional(embed, point, x, dom, DistOptions{Sigma: sigma1})
	if err != nil {
		t.Fatal(err)
	}
	if d.DomainDim() != 4 || d.Dim() != 4*28 {
		t.Fatalf("dims %d, %d, want 4, 112", d.DomainDim(), d.Dim())
	}
	ftr, err := d.Features(x, dom)
	if err != nil {
		t.Fatal(err)
	}
	fte, err := d.Features(xs, domS)
	if err != nil {
		t.Fatal(err)
	}
	ztr, zte := Materialize(ftr), Materialize(fte)
	var g, gc mat.Dense
	g.Mul(ztr, ztr.T())
	gc.Mul(zte, ztr.T())

	k1 := func(a, b *mat.Dense) float64 {
		return math.Exp(-mmd2(k, a, b) / (2 * sigma1 * sigma1))
	}
	var worst float64
	for i := range 28 {
		for j := range 28 {
			want := k1(rowsOf(x, dom, dom[i]), rowsOf(x, dom, dom[j])) * k.Eval(x.RawRowView(i), x.RawRowView(j))
			worst = math.Max(worst, math.Abs(g.At(i, j)-want))
		}
	}
	if worst > 1e-10 {
		t.Errorf("train Gram: max |z'z - k1 k2| = %g", worst)
	}
	worst = 0
	for i := range 6 {
		for j := range 28 {
			want := k1(xs, rowsOf(x, dom, dom[j])) * k.Eval(xs.RawRowView(i), x.RawRowView(j))
			worst = math.Max(worst, math.Abs(gc.At(i, j)-want))
		}
	}
	if worst > 1e-10 {
		t.Errorf("test-train Gram: max |z'z - k1 k2| = %g", worst)
	}
	// The kernel k1 must be non-trivial for the test to mean something.
	if v := k1(rowsOf(x, dom, 10), rowsOf(x, dom, 19)); v > 0.9 || v < 0.01 {
		t.Errorf("k1 between domains 0 and 3 = %g, want a value well inside (0, 1)", v)
	}
}

func TestDistributionalRFF(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	x, dom, _ := domainData(rng, 5, 20, 0.5)
	k := kernel.RBF{Sigma: 0.8}
	rows := approx.KernelRows{Kernel: k, Points: x.Slice(0, 30, 0, 2).(*mat.Dense)}
	exact, err := NewDistributional(nil, rows, x, dom, DistOptions{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	rff, err := NewDistributional(nil, rows, x, dom, DistOptions{Sigma: 1, RFF: 20000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	pe, pr := ok[*mat.Dense](t)(exact.Psi(exact.Means)), ok[*mat.Dense](t)(rff.Psi(rff.Means))
	var ge, gr mat.Dense
	ge.Mul(pe, pe.T())
	gr.Mul(pr, pr.T())
	// Exact features reproduce K1 = k1(M, M) directly.
	_, me := exact.Means.Dims()
	var worst, worstR float64
	for i := range 5 {
		for j := range 5 {
			var s float64
			for c := range me {
				v := exact.Means.At(i, c) - exact.Means.At(j, c)
				s += v * v
			}
			want := math.Exp(-s / 2)
			worst = math.Max(worst, math.Abs(ge.At(i, j)-want))
			worstR = math.Max(worstR, math.Abs(gr.At(i, j)-want))
		}
	}
	if worst > 1e-10 {
		t.Errorf("exact psi: max |psi'psi - k1| = %g", worst)
	}
	if worstR > 0.05 {
		t.Errorf("RFF psi (D = 20000): max |psi'psi - k1| = %g", worstR)
	}
	again, _ := NewDistributional(nil, rows, x, dom, DistOptions{Sigma: 1, RFF: 20000, Seed: 7})
	if !mat.Equal(ok[*mat.Dense](t)(again.Psi(again.Means)), pr) {
		t.Error("RFF features differ for the same seed")
	}
}

// denseFeatures is a plain Features over a dense matrix (no fast path).
type denseFeatures struct{ z *mat.Dense }

func (f denseFeatures) Len() int { r, _ := f.z.Dims(); return r }
func (f denseFeatures) Dim() int { _, c := f.z.Dims(); return c }
func (f denseFeatures) Block(dst *mat.Dense, lo, hi int) {
	if dst.IsEmpty() {
		dst.ReuseAs(hi-lo, f.Dim())
	}
	dst.Copy(f.z.Slice(lo, hi, 0, f.Dim()))
}

// spreadData draws ndom domains of per points, domain p from N(0, s_p^2 I)
// with s_p uniform in [0.5, 1.5], and targets smooth(x) + 2 (s_p - 1): the
// domain effect is visible in a domain's distribution, not in one point.
func spreadData(rng *rand.Rand, ndom, per, label0 int) (*mat.Dense, []int, []float64) {
	x := mat.NewDense(ndom*per, 2, nil)
	dom := make([]int, ndom*per)
	y := make([]float64, ndom*per)
	for p := range ndom {
		sp := 0.5 + rng.Float64()
		for i := range per {
			r := p*per + i
			dom[r] = label0 + p
			x.Set(r, 0, sp*rng.NormFloat64())
			x.Set(r, 1, sp*rng.NormFloat64())
			y[r] = smooth(x.RawRowView(r)) + 2*(sp-1) + 0.05*rng.NormFloat64()
		}
	}
	return x, dom, y
}

func TestDistributionalFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	x, dom, y := spreadData(rng, 12, 60, 0)
	xs, domS, ys := spreadData(rng, 6, 60, 100) // unseen test domains
	k := kernel.RBF{Sigma: 0.7}
	rows := approx.KernelRows{Kernel: k, Points: randPoints(rng, 25, 2, 0, 1.2)}
	for _, o := range []DistOptions{{}, {RFF: 40, Seed: 3}} {
		d, err := NewDistributional(nil, rows, x, dom, o)
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.Features(x, dom)
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Lambda: 0.3, Center: true, BlockRows: 37}
		fast, err := FitLinear(context.Background(), f, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := FitLinear(context.Background(), denseFeatures{Materialize(f)}, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := maxAbsDiff(fast.W, slow.W); diff > 1e-8*(1+maxAbsDiff(slow.W, make([]float64, len(slow.W)))) {
			t.Errorf("%+v: per-domain normal equations differ from row blocks by %g", o, diff)
		}
		fs, err := d.Features(xs, domS)
		if err != nil {
			t.Fatal(err)
		}
		rmse := RMSE(ok[[]float64](t)(fast.Predict(fs)), ys)
		plain, err := FitLinear(context.Background(), feats(t, rows, x), y, opt)
		if err != nil {
			t.Fatal(err)
		}
		base := RMSE(ok[[]float64](t)(plain.Predict(feats(t, rows, xs))), ys)
		t.Logf("%+v: held-out RMSE %.4f distributional, %.4f point kernel only", o, rmse, base)
		if rmse > 0.6*base {
			t.Errorf("%+v: held-out RMSE %g, not clearly below %g of the point kernel alone", o, rmse, base)
		}
	}
}

func TestRMSE(t *testing.T) {
	if got := RMSE([]float64{1, 2, 3}, []float64{1, 4, 7}); math.Abs(got-math.Sqrt(20.0/3)) > 1e-15 {
		t.Errorf("RMSE = %g", got)
	}
	if !math.IsNaN(RMSE(nil, nil)) {
		t.Error("RMSE of empty slices is not NaN")
	}
}

func TestErrors(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	nan := mat.NewDense(3, 1, []float64{0, math.NaN(), 2})
	k := kernel.RBF{Sigma: 1}
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		y    []float64
		o    Options
		want string
	}{
		{"shape", x, []float64{1, 2}, Options{Lambda: 1}, "3 rows in x but 2 targets"},
		{"nan x", nan, []float64{1, 2, 3}, Options{Lambda: 1}, "x[1, 0] = NaN"},
		{"inf y", x, []float64{1, math.Inf(1), 3}, Options{Lambda: 1}, "y[1] = +Inf"},
		{"lambda", x, []float64{1, 2, 3}, Options{Lambda: -1}, "Lambda = -1"},
		{"not pd", mat.NewDense(2, 1, []float64{1, 1}), []float64{1, 2}, Options{}, "not positive definite"},
		{"empty", &mat.Dense{}, nil, Options{}, "empty input"},
	} {
		_, err := FitExact(tc.x, tc.y, k, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FitExact %s: error %v, want containing %q", tc.name, err, tc.want)
		}
	}
	rows := approx.KernelRows{Kernel: k, Points: x}
	for _, tc := range []struct {
		name string
		f    Features
		y    []float64
		o    Options
		want string
	}{
		{"length", feats(t, rows, x), []float64{1}, Options{}, "3 feature rows but 1 targets"},
		{"penalty", feats(t, rows, x), []float64{1, 2, 3}, Options{Penalty: mat.NewSymDense(2, nil)}, "Penalty is 2 x 2, want 3 x 3"},
		{"nan y", feats(t, rows, x), []float64{1, math.NaN(), 3}, Options{}, "y[1] = NaN"},
		{"nan feature", denseFeatures{nan}, []float64{1, 2, 3}, Options{Lambda: 1}, "feature [1, 0] = NaN"},
		{"singular", denseFeatures{mat.NewDense(3, 2, []float64{1, 1, 2, 2, 3, 3})}, []float64{1, 2, 3}, Options{}, "not positive definite"},
	} {
		_, err := FitLinear(context.Background(), tc.f, tc.y, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FitLinear %s: error %v, want containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewDistributional(nil, rows, x, []int{1, 2}, DistOptions{}); err == nil || !strings.Contains(err.Error(), "3 rows in x but 2 domain labels") {
		t.Errorf("NewDistributional labels: %v", err)
	}
	if _, err := NewDistributional(nil, rows, nan, []int{1, 2, 2}, DistOptions{}); err == nil || !strings.Contains(err.Error(), "x[1, 0] = NaN") {
		t.Errorf("NewDistributional NaN: %v", err)
	}
	if _, err := NewDistributional(nil, rows, x, []int{1, 2, 2}, DistOptions{Sigma: -1}); err == nil || !strings.Contains(err.Error(), "Sigma = -1") {
		t.Errorf("NewDistributional Sigma: %v", err)
	}
	d, err := NewDistributional(nil, rows, x, []int{1, 2, 2}, DistOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Features(mat.NewDense(2, 2, nil), []int{1, 1}); err == nil || !strings.Contains(err.Error(), "2 columns") {
		t.Errorf("Features columns: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FitLinear(ctx, feats(t, rows, x), []float64{1, 2, 3}, Options{Lambda: 1}); err != context.Canceled {
		t.Errorf("canceled: %v", err)
	}

	// Prediction inputs a user can get wrong are errors.
	e, err := FitExact(x, []float64{1, 2, 3}, k, Options{Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	lin, err := FitLinear(context.Background(), feats(t, rows, x), []float64{1, 2, 3}, Options{Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	wide := mat.NewDense(2, 2, nil)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Exact.Predict", second(e.Predict(wide)), "input has 2 columns, model expects 1"},
		{"Exact.Predict empty", second(e.Predict(&mat.Dense{})), "empty input"},
		{"Exact.Variance", second(e.Variance(wide)), "input has 2 columns, model expects 1"},
		{"MapFeatures", second(MapFeatures(rows, wide)), "input has 2 columns, map expects 1"},
		{"Linear.Predict", second(lin.Predict(denseFeatures{wide})), "features have 2 columns, model has 3 weights"},
		{"Psi", second(d.Psi(wide)), "means have 2 columns, want 3"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want containing %q", tc.name, tc.err, tc.want)
		}
	}
	// RMSE of slices of different lengths is a programmer error: it panics.
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "2 predictions for 3 targets") {
				t.Errorf("RMSE of mismatched lengths: recovered %v, want a panic", r)
			}
		}()
		RMSE([]float64{1, 2}, []float64{1, 2, 3})
	}()
}

// second returns the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }

func ExampleFitExact() {
	// Noiseless GP regression of y = x^2 on five points.
	x := mat.NewDense(5, 1, []float64{-2, -1, 0, 1, 2})
	y := []float64{4, 1, 0, 1, 4}
	e, err := FitExact(x, y, kernel.RBF{Sigma: 1}, Options{Lambda: 1e-9, Center: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := e.Predict(mat.NewDense(3, 1, []float64{-1, 1, 0.5}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range pred {
		fmt.Printf("%.3f\n", v)
	}
	// Output:
	// 1.000
	// 1.000
	// 0.193
}
