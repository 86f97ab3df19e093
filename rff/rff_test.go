package rff

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

// expectedRelError returns the root of the expected squared relative
// Frobenius error of i.i.d. sin/cos features with D frequencies:
// phi(x)'phi(z) is the mean of D i.i.d. cos(w'(x - z)), whose variance is
// (1 + k(2 delta))/2 - k(delta)^2 (cos^2 = (1 + cos 2t)/2), so
// E||K - Phi Phi^T||_F^2 = (1/D) sum_ij [(1 + k(2 delta_ij))/2 - k_ij^2].
func expectedRelError(k kernel.Kernel, x *mat.Dense, nf int) float64 {
	n, d := x.Dims()
	var num, den float64
	two := make([]float64, d)
	zero := make([]float64, d)
	for i := range n {
		for j := range n {
			xi, xj := x.RawRowView(i), x.RawRowView(j)
			for c := range two {
				two[c] = 2 * (xi[c] - xj[c])
			}
			kij := k.Eval(xi, xj)
			num += (1+k.Eval(two, zero))/2 - kij*kij
			den += kij * kij
		}
	}
	return math.Sqrt(num / float64(nf) / den)
}

// TestErrorMatchesTheory: at m = 2000 the root mean square over seeds of the
// measured relative Frobenius error of each kernel is within a factor 1.3 of
// its closed-form expectation, no seed is more than 2x off, and the error
// falls with m on average over seeds. (The squared error is a sum of n^2
// terms, but all share the same frequencies, so it concentrates only
// moderately, less for the heavy-tailed Cauchy frequencies.)
func TestErrorMatchesTheory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randmat.Normal(rng, 150, 5)
	sigma := kernel.MedianSigma(x, 0, 1)
	for _, k := range []kernel.Kernel{kernel.RBF{Sigma: sigma}, kernel.Laplacian{Sigma: sigma}, kernel.Laplacian{Sigma: 3 * sigma, L1: true}} {
		ms := []int{50, 200, 800, 2000}
		const seeds = 4
		mean := make([]float64, len(ms))
		want := expectedRelError(k, x, 1000)
		var ms2 float64
		for s := range uint64(seeds) {
			for i, m := range ms {
				f, err := New(k, 5, m, false, s)
				if err != nil {
					t.Fatal(err)
				}
				e := approx.FrobeniusError(k, f, x)
				mean[i] += e / seeds
				if m == 2000 {
					ms2 += e * e / seeds
					if e > 2*want || e < want/2 {
						t.Errorf("%v seed %d m = 2000: error %.4g, expected %.4g", k, s, e, want)
					}
				}
			}
		}
		t.Logf("%v: m %v mean errors %.3g (expected at 2000: %.3g, rms %.3g)", k, ms, mean, want, math.Sqrt(ms2))
		if r := math.Sqrt(ms2) / want; r > 1.3 || r < 1/1.3 {
			t.Errorf("%v m = 2000: rms error %.4g, expected %.4g", k, math.Sqrt(ms2), want)
		}
		for i := 1; i < len(ms); i++ {
			if !(mean[i] < mean[i-1]) {
				t.Errorf("%v: error does not fall with m: %v", k, mean)
			}
		}
	}
}

// TestUnbiased: averaged over many seeds, phi(x)'phi(z) converges to k(x, z)
// (Bochner), within 5 standard deviations of the Monte Carlo mean.
func TestUnbiased(t *testing.T) {
	x := []float64{0.3, -0.2, 0.5}
	z := []float64{-0.4, 0.1, 1.0}
	xm := mat.NewDense(2, 3, append(append([]float64{}, x...), z...))
	for _, c := range []struct {
		k    kernel.Kernel
		orth bool
	}{
		{kernel.RBF{Sigma: 0.8}, false}, {kernel.RBF{Sigma: 0.8}, true},
		{kernel.Laplacian{Sigma: 0.8}, false}, {kernel.Laplacian{Sigma: 0.8}, true},
		{kernel.Laplacian{Sigma: 0.8, L1: true}, false},
	} {
		const seeds, m = 400, 64
		var sum float64
		var phi mat.Dense
		for s := range uint64(seeds) {
			f, err := New(c.k, 3, m, c.orth, s)
			if err != nil {
				t.Fatal(err)
			}
			phi.Reset()
			f.Map(&phi, xm)
			sum += mat.Dot(phi.RowView(0), phi.RowView(1))
		}
		got, want := sum/seeds, c.k.Eval(x, z)
		// Var cos <= 1/2 per frequency.
		if sd := math.Sqrt(0.5 / (seeds * m / 2)); math.Abs(got-want) > 5*sd {
			t.Errorf("%v orthogonal=%v: mean phi(x)'phi(z) = %.4f, k = %.4f (sd %.4f)", c.k, c.orth, got, want, sd)
		}
	}
}

// TestOrthogonalBeatsIID: orthogonal random features have a smaller error
// than i.i.d. ones on average over seeds. On Gaussian data with the median
// bandwidth the ratio of the errors is about 0.5 (n = 300 to 1000, 6 or 20
// seeds), so a ratio below 0.6 is asserted.
func TestOrthogonalBeatsIID(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := randmat.Normal(rng, 300, 12)
	k := kernel.RBF{Sigma: kernel.MedianSigma(x, 0, 1)}
	const seeds = 6
	var iid, orf float64
	for s := range uint64(seeds) {
		for _, orth := range []bool{false, true} {
			f, err := New(k, 12, 100, orth, s)
			if err != nil {
				t.Fatal(err)
			}
			e := approx.FrobeniusError(k, f, x)
			if orth {
				orf += e / seeds
			} else {
				iid += e / seeds
			}
		}
	}
	t.Logf("m = 100, d = 12: mean relative error iid %.4g, orthogonal %.4g (ratio %.2f)", iid, orf, orf/iid)
	if !(orf < 0.6*iid) {
		t.Errorf("orthogonal error %.4g not below 0.6 x iid error %.4g", orf, iid)
	}
}

// TestOrthogonalRows: each block of d frequencies is orthogonal with
// chi-distributed norms (so not all equal), and the sin/cos features have
// unit norm.
func TestOrthogonalRows(t *testing.T) {
	const d = 6
	f, err := New(kernel.RBF{Sigma: 2}, d, 2*15, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	w := f.Frequencies()
	if r, c := w.Dims(); r != 15 || c != d {
		t.Fatalf("frequencies %d x %d, want 15 x %d", r, c, d)
	}
	for lo := 0; lo < 15; lo += d {
		for i := lo; i < min(15, lo+d); i++ {
			for j := i + 1; j < min(15, lo+d); j++ {
				if dot := mat.Dot(w.RowView(i), w.RowView(j)); math.Abs(dot) > 1e-12 {
					t.Errorf("rows %d and %d: dot %g, want 0", i, j, dot)
				}
			}
		}
	}
	if math.Abs(mat.Norm(w.RowView(0), 2)-mat.Norm(w.RowView(1), 2)) < 1e-9 {
		t.Error("orthogonal rows have equal norms: radii not drawn")
	}
	x := randmat.Normal(rand.New(rand.NewPCG(4, 4)), 10, d)
	var phi mat.Dense
	f.Map(&phi, x)
	for i := range 10 {
		if n := mat.Norm(phi.RowView(i), 2); math.Abs(n-1) > 1e-14 {
			t.Errorf("||phi(x_%d)|| = %.17g, want 1", i, n)
		}
	}
}

func TestDeterministic(t *testing.T) {
	x := randmat.Normal(rand.New(rand.NewPCG(5, 5)), 50, 4)
	for _, orth := range []bool{false, true} {
		k := kernel.RBF{Sigma: 1.2}
		a, _ := New(k, 4, 40, orth, 11)
		b, _ := New(a.Kernel(), a.InputDim(), a.Dim(), a.Orthogonal(), a.Seed())
		c, _ := New(k, 4, 40, orth, 12)
		if !mat.Equal(a.Frequencies(), b.Frequencies()) {
			t.Error("same seed, different frequencies")
		}
		if mat.Equal(a.Frequencies(), c.Frequencies()) {
			t.Error("different seeds, same frequencies")
		}
		var pa, pb mat.Dense
		a.Map(&pa, x)
		b.Map(&pb, x)
		if !mat.Equal(&pa, &pb) {
			t.Error("same seed, different features")
		}
	}
}

// TestMapBruteForce checks the layout of the features against the
// definition, computed from Frequencies with math.Cos and math.Sin.
func TestMapBruteForce(t *testing.T) {
	x := randmat.Normal(rand.New(rand.NewPCG(6, 6)), 7, 3)
	f, _ := New(kernel.Laplacian{Sigma: 1, L1: true}, 3, 10, false, 1)
	var phi mat.Dense
	f.Map(&phi, x)
	w := f.Frequencies()
	for i := range 7 {
		for j := range 5 {
			p := mat.Dot(x.RowView(i), w.RowView(j))
			s := math.Sqrt(1.0 / 5)
			if math.Abs(phi.At(i, j)-s*math.Cos(p)) > 1e-14 || math.Abs(phi.At(i, 5+j)-s*math.Sin(p)) > 1e-14 {
				t.Fatalf("phi[%d] = %v, frequency %d projection %g", i, phi.RawRowView(i), j, p)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		k    kernel.Kernel
		d, m int
		orth bool
		want string
	}{
		{"linear", kernel.Linear{}, 3, 10, false, "unsupported kernel linear"},
		{"m = 0", kernel.RBF{Sigma: 1}, 3, 0, false, "m = 0 features"},
		{"odd m", kernel.RBF{Sigma: 1}, 3, 101, false, "m = 101 features, want an even number"},
		{"d = 0", kernel.RBF{Sigma: 1}, 0, 10, false, "d = 0"},
		{"sigma 0", kernel.RBF{Sigma: 0}, 3, 10, false, "bandwidth"},
		{"sigma NaN", kernel.Laplacian{Sigma: math.NaN()}, 3, 10, false, "bandwidth"},
		{"orf l1", kernel.Laplacian{Sigma: 1, L1: true}, 3, 10, true, "rotation-invariant"},
	} {
		_, err := New(c.k, c.d, c.m, c.orth, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestConcurrentMap(t *testing.T) {
	x := randmat.Normal(rand.New(rand.NewPCG(7, 7)), 200, 5)
	f, _ := New(kernel.RBF{Sigma: 1}, 5, 64, true, 1)
	var want mat.Dense
	f.Map(&want, x)
	var wg sync.WaitGroup
	bad := make(chan int, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got mat.Dense
			f.Map(&got, x)
			if !mat.Equal(&got, &want) {
				bad <- g
			}
		}()
	}
	wg.Wait()
	close(bad)
	for g := range bad {
		t.Errorf("goroutine %d: different features", g)
	}
}
