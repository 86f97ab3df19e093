package nystrom

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/internal/testsupport/randmat"
	"github.com/dicalab/dica/kernel"
)

// TestAllPointsReproduceK: with every point a landmark (m = n), Phi Phi^T = K
// on a well-conditioned set (RBF with a bandwidth small enough that K is far
// from singular).
func TestAllPointsReproduceK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randmat.Normal(rng, 60, 3)
	k := kernel.RBF{Sigma: 0.5}
	uni, err := Uniform(x, 60, 7)
	if err != nil {
		t.Fatal(err)
	}
	for name, z := range map[string]*mat.Dense{"given": x, "uniform": uni} {
		m, err := New(k, z, 0)
		if err != nil {
			t.Fatal(err)
		}
		if m.EffectiveRank() != 60 {
			t.Errorf("%s: effective rank %d, want 60", name, m.EffectiveRank())
		}
		frob, spec := approx.KernelError(k, m, x)
		if frob > 1e-9 || spec > 1e-9 {
			t.Errorf("%s: m = n relative errors frob %g spec %g, want <= 1e-9", name, frob, spec)
		}
	}
}

// TestTransformWhitens checks T against its definition: T^T K_mm T = I_r, and
// the features satisfy Map(x) = MapRaw(x) T.
func TestTransformWhitens(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := randmat.Normal(rng, 200, 4)
	z, _ := Uniform(x, 30, 3)
	k := kernel.Laplacian{Sigma: 2}
	m, err := New(k, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kmm, tmp, g mat.Dense
	k.Block(&kmm, z, z)
	tmp.Mul(&kmm, m.Transform())
	g.Mul(m.Transform().T(), &tmp)
	r := m.Dim()
	for i := range r {
		for j := range r {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(g.At(i, j)-want) > 1e-9 {
				t.Fatalf("(T^T K_mm T)[%d,%d] = %g, want %g", i, j, g.At(i, j), want)
			}
		}
	}
	var phi, raw, want mat.Dense
	m.Map(&phi, x) // 200 rows: crosses a block boundary? No: use 600 below.
	m.MapRaw(&raw, x)
	want.Mul(&raw, m.Transform())
	if !mat.EqualApprox(&phi, &want, 1e-13) {
		t.Error("Map(x) != MapRaw(x) T")
	}
	// Several blocks and a ragged last block.
	big := randmat.Normal(rng, 2*blockRows+17, 4)
	phi.Reset()
	raw.Reset()
	want.Reset()
	m.Map(&phi, big)
	m.MapRaw(&raw, big)
	want.Mul(&raw, m.Transform())
	if !mat.EqualApprox(&phi, &want, 1e-13) {
		t.Error("blocked Map(x) != MapRaw(x) T")
	}
}

// TestErrorDecreasesWithM: the Nystrom error falls as landmarks are added
// (averaged over seeds), and k-means++ landmarks beat uniform ones.
func TestErrorDecreasesWithM(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := randmat.Normal(rng, 300, 5)
	k := kernel.RBF{Sigma: kernel.MedianSigma(x, 0, 1)}
	ms := []int{25, 50, 100, 200}
	const seeds = 3
	errU := make([]float64, len(ms))
	errK := make([]float64, len(ms))
	for s := range uint64(seeds) {
		for i, mm := range ms {
			zu, err := Uniform(x, mm, s)
			if err != nil {
				t.Fatal(err)
			}
			zk, err := KMeansPP(x, mm, 3, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				z   *mat.Dense
				acc []float64
			}{{zu, errU}, {zk, errK}} {
				m, err := New(k, c.z, 0)
				if err != nil {
					t.Fatal(err)
				}
				f := approx.FrobeniusError(k, m, x)
				c.acc[i] += f / seeds
			}
		}
	}
	t.Logf("m %v: uniform %.3g, k-means++ %.3g", ms, errU, errK)
	for i := 1; i < len(ms); i++ {
		if !(errU[i] < errU[i-1]) || !(errK[i] < errK[i-1]) {
			t.Errorf("error does not decrease with m: uniform %v, k-means++ %v", errU, errK)
		}
	}
	// Uniform and k-means++ are both far from exact at m = 25.
	if errU[0] < 1e-3 {
		t.Errorf("m = 25 uniform error %g is implausibly small", errU[0])
	}
	for i := range ms {
		if !(errK[i] < errU[i]) {
			t.Errorf("m = %d: k-means++ error %g not below uniform %g", ms[i], errK[i], errU[i])
		}
	}
}

// TestNearDuplicateLandmarks: each point twice, the copy perturbed by 1e-12,
// gives finite features with ||phi(x)||^2 <= k(x, x), the same kernel
// approximation as the points alone, and no blow-up.
func TestNearDuplicateLandmarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := randmat.Normal(rng, 40, 3)
	z := mat.NewDense(80, 3, nil)
	for i := range 40 {
		z.SetRow(i, x.RawRowView(i))
		for j := range 3 {
			z.Set(40+i, j, x.At(i, j)+1e-12*rng.NormFloat64())
		}
	}
	k := kernel.RBF{Sigma: 0.7}
	m, err := New(k, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.EffectiveRank(); r > 40 {
		t.Errorf("effective rank %d with 40 distinct landmarks", r)
	}
	test := randmat.Normal(rng, 100, 3)
	var phi mat.Dense
	m.Map(&phi, test)
	for i := range 100 {
		var s float64
		for _, v := range phi.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("feature %d is %g", i, v)
			}
			s += v * v
		}
		if s > 1+1e-8 { // k(x, x) = 1 for the RBF kernel
			t.Errorf("||phi(x_%d)||^2 = %g > k(x, x) = 1", i, s)
		}
	}
	// Same approximation as the 40 distinct landmarks.
	single, err := New(k, x, 0)
	if err != nil {
		t.Fatal(err)
	}
	var phi1, g, g1 mat.Dense
	single.Map(&phi1, test)
	g.Mul(&phi, phi.T())
	g1.Mul(&phi1, phi1.T())
	if !mat.EqualApprox(&g, &g1, 1e-6) {
		t.Error("near-duplicate landmarks change Phi Phi^T by more than 1e-6")
	}
	// The features of the landmarks reproduce K_mm to the cutoff.
	if f := approx.FrobeniusError(k, m, x); f > 1e-6 {
		t.Errorf("error on the landmarks %g", f)
	}
}

func TestErrors(t *testing.T) {
	x := randmat.Normal(rand.New(rand.NewPCG(5, 5)), 500, 2)
	if _, err := Uniform(x, 700, 1); err == nil || err.Error() != "nystrom: m = 700 landmarks but only 500 points" {
		t.Errorf("Uniform m > n: %v", err)
	}
	dup := mat.NewDense(5, 2, []float64{1, 2, 1, 2, 1, 2, 1, 2, 1, 2})
	nan := mat.NewDense(2, 2, []float64{1, 2, math.NaN(), 0})
	line := mat.NewDense(3, 2, []float64{0, 0, 3, 4, 6, 8}) // distances 5, 5 and 10
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"uniform m=0", errOf(Uniform(x, 0, 1)), "m = 0 landmarks"},
		{"kmeans m>n", errOf(KMeansPP(x, 501, 1, 1)), "only 500 points"},
		{"kmeans few distinct", errOf(KMeansPP(dup, 3, 1, 1)), "only 1 distinct rows"},
		{"kmeans NaN", errOf(KMeansPP(nan, 1, 1, 1)), "point 1, coordinate 0 is NaN"},
		{"no landmarks", errOf(New(kernel.RBF{Sigma: 1}, &mat.Dense{}, 0)), "no landmarks"},
		{"NaN landmark", errOf(New(kernel.RBF{Sigma: 1}, nan, 0)), "landmark 1, coordinate 0 is NaN"},
		{"duplicates", errOf(New(kernel.RBF{Sigma: 1}, dup, 0)), "landmarks are duplicates: effective rank 1 of 5"},
		{"bad rcond", errOf(New(kernel.RBF{Sigma: 1}, x, -1)), "rcond = -1"},
		{"zero kernel", errOf(New(kernel.Linear{}, mat.NewDense(2, 2, nil), 0)), "is zero"},
		{"tiny sigma", errOf(New(kernel.RBF{Sigma: 1e-300}, line, 0)), "nystrom: the bandwidth sigma = 1e-300 is too small for the data's scale (the median distance between landmarks is 5): the kernel of landmarks 0 and 0 is NaN; use a sigma near the median distance (the median heuristic, the default)"},
		{"subnormal sigma", errOf(New(kernel.RBF{Sigma: 1e-160}, line, 0)), "sigma = 1e-160 is too small for the data's scale (the median distance between landmarks is 5)"},
		{"tiny sigma, one point", errOf(New(kernel.RBF{Sigma: 1e-300}, dup, 0)), "sigma = 1e-300 is too small for the data's scale (the landmarks coincide; the median distance between data points is the usual choice)"},
		{"zero Laplacian sigma", errOf(New(kernel.Laplacian{}, line, 0)), "sigma = 0 is too small for the data's scale (the median distance between landmarks is 5)"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	// A single landmark, and rank-1 linear landmarks, are legitimate.
	if _, err := New(kernel.RBF{Sigma: 1}, mat.NewDense(1, 2, []float64{1, 2}), 0); err != nil {
		t.Errorf("one landmark: %v", err)
	}
	if m, err := New(kernel.Linear{}, mat.NewDense(3, 1, []float64{1, 2, 3}), 0); err != nil || m.Dim() != 1 {
		t.Errorf("linear 1-D landmarks: %v", err)
	}
}

func errOf[T any](_ T, err error) error { return err }

func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	x := randmat.Normal(rng, 300, 6)
	k := kernel.RBF{Sigma: 2}
	z1, _ := KMeansPP(x, 40, 2, 9)
	z2, _ := KMeansPP(x, 40, 2, 9)
	z3, _ := KMeansPP(x, 40, 2, 10)
	if !mat.Equal(z1, z2) {
		t.Error("KMeansPP not deterministic")
	}
	if mat.Equal(z1, z3) {
		t.Error("KMeansPP ignores the seed")
	}
	a, _ := New(k, z1, 0)
	b, _ := New(a.Kernel(), a.Landmarks(), a.RCond())
	if !mat.Equal(a.Transform(), b.Transform()) {
		t.Error("New from (kernel, landmarks, rcond) is not bit-identical")
	}
	var pa, pb mat.Dense
	a.Map(&pa, x)
	b.Map(&pb, x)
	if !mat.Equal(&pa, &pb) {
		t.Error("reconstructed map gives different features")
	}
	// New copies the landmarks.
	z1.Set(0, 0, 1e6)
	if a.Landmarks().At(0, 0) == 1e6 {
		t.Error("New does not copy the landmarks")
	}
}

func TestConcurrentMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := randmat.Normal(rng, 300, 5)
	z, _ := Uniform(x, 50, 1)
	m, err := New(kernel.RBF{Sigma: 1.5}, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	m.Map(&want, x)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got, raw mat.Dense
			m.Map(&got, x)
			m.MapRaw(&raw, x)
			if !mat.Equal(&got, &want) {
				errs <- "goroutine " + string(rune('0'+g)) + ": different features"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestKMeansPPFindsClusters(t *testing.T) {
	// Three tight, well-separated blobs: the centers land on the blob means.
	rng := rand.New(rand.NewPCG(8, 8))
	means := [][]float64{{0, 0}, {10, 0}, {0, 10}}
	x := mat.NewDense(300, 2, nil)
	for i := range 300 {
		c := means[i%3]
		x.Set(i, 0, c[0]+0.1*rng.NormFloat64())
		x.Set(i, 1, c[1]+0.1*rng.NormFloat64())
	}
	z, err := KMeansPP(x, 3, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range means {
		best := math.Inf(1)
		for i := range 3 {
			best = math.Min(best, kernel.SqDist(z.RawRowView(i), c))
		}
		if best > 0.05*0.05 {
			t.Errorf("no center near %v: centers %v", c, mat.Formatted(z))
		}
	}
}

// TestCutoffFloor: on an ill-conditioned kernel matrix (wide RBF, eigenvalues
// spanning 16 orders of magnitude) with every point a landmark, the cutoff
// drops the directions below rcond * s_max and the eigenvalues of
// Phi Phi^T match those of K to rcond-level absolute error (Weyl), while the
// features stay bounded.
func TestCutoffFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := randmat.Normal(rng, 150, 3)
	k := kernel.RBF{Sigma: 4}
	m, err := New(k, x, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.EffectiveRank(); r == 150 || r < 10 {
		t.Fatalf("effective rank %d: the test needs a numerically rank-deficient K", r)
	}
	var kk mat.Dense
	k.Block(&kk, x, x)
	var eigK mat.EigenSym
	eigK.Factorize(symOf(&kk), false)
	wantVals := eigK.Values(nil)
	var phi mat.Dense
	m.Map(&phi, x)
	var g mat.Dense
	g.Mul(&phi, phi.T())
	var eigG mat.EigenSym
	eigG.Factorize(symOf(&g), false)
	gotVals := eigG.Values(nil)
	smax := wantVals[len(wantVals)-1]
	var worst float64
	for i := range wantVals {
		worst = math.Max(worst, math.Abs(gotVals[i]-wantVals[i]))
	}
	t.Logf("rank %d of 150; max eigenvalue difference %.3g = %.3g s_max", m.EffectiveRank(), worst, worst/smax)
	if worst > 10*DefaultRCond*smax {
		t.Errorf("eigenvalues of Phi Phi^T differ from K's by %g = %g s_max, want <= 10 rcond s_max", worst, worst/smax)
	}
	// Features bounded: ||phi(x)||^2 <= k(x, x) = 1.
	for i := range 150 {
		if s := mat.Dot(phi.RowView(i), phi.RowView(i)); s > 1+1e-9 {
			t.Errorf("||phi(x_%d)||^2 = %g", i, s)
		}
	}
}

func symOf(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}
