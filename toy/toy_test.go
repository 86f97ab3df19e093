package toy

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dicalab/dica/dataset"
)

func TestShapesAndNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		reg  bool
	}{
		{"regression-default", Options{Seed: 1}, true},
		{"regression-small", Options{Domains: 3, MeanSize: 20, Dim: 2, Seed: 2}, true},
		{"classification-default", Options{Seed: 3}, false},
		{"classification-4", Options{Domains: 4, MeanSize: 30, Dim: 7, Classes: 4, Seed: 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o.resolve()
			ds := Classification(tc.o)
			if tc.reg {
				ds = Regression(tc.o)
			}
			if err := ds.Validate(); err != nil {
				t.Fatal(err)
			}
			if ds.NumDomains() != o.Domains || ds.D() != o.Dim {
				t.Fatalf("got %d domains, %d dims; want %d, %d", ds.NumDomains(), ds.D(), o.Domains, o.Dim)
			}
			for i, name := range ds.DomainNames {
				if want := fmt.Sprintf("d%d", i+1); name != want {
					t.Errorf("domain %d named %q, want %q", i, name, want)
				}
			}
			sum := 0
			for _, c := range ds.DomainSizes() {
				sum += c
			}
			if sum != ds.N() {
				t.Errorf("domain sizes sum to %d, want %d", sum, ds.N())
			}
			if tc.reg {
				r, c := ds.Target.Dims()
				if r != ds.N() || c != 1 || ds.Label != nil {
					t.Errorf("target is %d x %d, labels %v; want %d x 1 and no labels", r, c, ds.Label != nil, ds.N())
				}
			} else {
				if ds.Target != nil || len(ds.Label) != ds.N() || ds.NumClasses() != o.Classes {
					t.Errorf("want %d labels in %d classes and no target", ds.N(), o.Classes)
				}
			}
		})
	}
}

func TestReproducible(t *testing.T) {
	o := Options{Domains: 4, MeanSize: 50, Seed: 42}
	a, b := Regression(o), Regression(o)
	if !mat.Equal(a.X, b.X) || !mat.Equal(a.Target, b.Target) {
		t.Error("same seed gave different regression data")
	}
	c := Regression(Options{Domains: 4, MeanSize: 50, Seed: 43})
	if a.N() == c.N() && mat.Equal(a.X, c.X) {
		t.Error("different seeds gave the same regression data")
	}
	ca, cb := Classification(o), Classification(o)
	if !mat.Equal(ca.X, cb.X) || fmt.Sprint(ca.Label) != fmt.Sprint(cb.Label) {
		t.Error("same seed gave different classification data")
	}
}

func TestSplit(t *testing.T) {
	o := Options{Domains: 5, MeanSize: 40, Seed: 7}
	full := Regression(o)
	train, test := RegressionSplit(o, 3)
	if !mat.Equal(train.X, full.X) || !mat.Equal(train.Target, full.Target) {
		t.Error("RegressionSplit train differs from Regression")
	}
	if test.NumDomains() != 3 || test.DomainNames[0] != "d6" || test.DomainNames[2] != "d8" {
		t.Errorf("test domains %v, want [d6 d7 d8]", test.DomainNames)
	}
	// Test domain j is training domain N+j of a larger draw: same generator.
	big := Regression(Options{Domains: 8, MeanSize: 40, Seed: 7})
	if !mat.Equal(big.X, stackDS(train.X, test.X)) || !mat.Equal(big.Target, stackDS(train.Target, test.Target)) {
		t.Error("test domains are not draws from the same generator as training domains")
	}
	ctrain, ctest := ClassificationSplit(o, 2)
	if !mat.Equal(ctrain.X, Classification(o).X) || ctest.NumDomains() != 2 || ctest.DomainNames[0] != "d6" {
		t.Error("ClassificationSplit: wrong train or test domains")
	}
	cbig := Classification(Options{Domains: 7, MeanSize: 40, Seed: 7})
	if fmt.Sprint(cbig.Label) != fmt.Sprint(append(append([]int(nil), ctrain.Label...), ctest.Label...)) {
		t.Error("test domains do not share the class rule")
	}
}

func stackDS(a, b *mat.Dense) *mat.Dense {
	var s mat.Dense
	s.Stack(a, b)
	return &s
}

// TestPoissonSizes checks the domain sizes against Poisson(mean): with m
// domains the sample mean has standard deviation sqrt(mean/m); the sample
// variance of a Poisson sample has standard deviation about
// sqrt(2 mean^2/(m-1) + mean/m). Both are checked at 5 standard deviations.
func TestPoissonSizes(t *testing.T) {
	const m, mean = 300, 50.0
	ds := Classification(Options{Domains: m, MeanSize: mean, Dim: 1, Seed: 9})
	sizes := make([]float64, m)
	for i, c := range ds.DomainSizes() {
		sizes[i] = float64(c)
	}
	mu, v := stat.MeanVariance(sizes, nil)
	if sd := math.Sqrt(mean / m); math.Abs(mu-mean) > 5*sd {
		t.Errorf("mean domain size %.3f, want %g +- %.3f", mu, mean, 5*sd)
	}
	if sd := math.Sqrt(2*mean*mean/(m-1) + mean/m); math.Abs(v-mean) > 5*sd {
		t.Errorf("variance of domain sizes %.3f, want %g +- %.3f (Poisson)", v, mean, 5*sd)
	}
}

// TestDomainCovariance checks that each domain's sample covariance matches
// the domain's own Wishart draw Sigma: entry (j, k) of the sample covariance
// of n Gaussian points has standard deviation about
// sqrt((Sigma_jk^2 + Sigma_jj Sigma_kk) / n); every entry must lie within 5
// of those (75 checks: a false alarm has probability about 75 * 6e-7).
func TestDomainCovariance(t *testing.T) {
	o := Options{Domains: 3, MeanSize: 3000, Seed: 11}.resolve()
	ds := Regression(o)
	for i := 0; i < o.Domains; i++ {
		sigma := newRegDomain(o, i).sigma()
		x := rowsOf(ds, i)
		n, _ := x.Dims()
		var s mat.SymDense
		stat.CovarianceMatrix(&s, x, nil)
		for j := 0; j < o.Dim; j++ {
			for k := 0; k < o.Dim; k++ {
				sd := math.Sqrt((sigma.At(j, k)*sigma.At(j, k) + sigma.At(j, j)*sigma.At(k, k)) / float64(n))
				if d := s.At(j, k) - sigma.At(j, k); math.Abs(d) > 5*sd {
					t.Errorf("domain %d: cov[%d,%d] = %.4f, Sigma = %.4f (5 sd = %.4f)", i, j, k, s.At(j, k), sigma.At(j, k), 5*sd)
				}
			}
		}
	}
}

// TestWishartScale checks the scale of the covariances against the
// Wishart mean 10 * 0.2 I = 2 I: E tr(S) = 2 d = 10. Per domain tr(Sigma) is
// 0.2 chi^2(50) (sd 2) and tr(S) adds sampling noise of variance about
// 2 tr(Sigma^2)/n (about 1.2 at n = 50); over 100 domains the mean trace has
// sd about 0.27, and we allow 1.5 (5.5 sd). Off-diagonal entries average to 0
// (sd per domain about sqrt(0.2^2 * 10 * 2 + 4/50) ~ 0.96, mean over 100
// domains and 10 pairs: allow 0.3).
func TestWishartScale(t *testing.T) {
	o := Options{Domains: 100, MeanSize: 50, Seed: 12}.resolve()
	ds := Regression(o)
	var tr, off float64
	for i := 0; i < o.Domains; i++ {
		var s mat.SymDense
		stat.CovarianceMatrix(&s, rowsOf(ds, i), nil)
		tr += mat.Trace(&s)
		for j := 0; j < o.Dim; j++ {
			for k := j + 1; k < o.Dim; k++ {
				off += s.At(j, k)
			}
		}
	}
	tr /= float64(o.Domains)
	off /= float64(o.Domains * o.Dim * (o.Dim - 1) / 2)
	if want := WishartDOF * WishartScale * float64(o.Dim); math.Abs(tr-want) > 1.5 {
		t.Errorf("mean trace of domain covariances %.3f, want %g +- 1.5", tr, want)
	}
	if math.Abs(off) > 0.3 {
		t.Errorf("mean off-diagonal covariance %.3f, want 0 +- 0.3", off)
	}
}

// TestRegressionTarget checks the target's structure against the shared
// coefficients: y = sign(b1'x + e1) log|b2'x + c + e2|. Where |b2'x + c| > 3,
// the log is positive with probability > 0.97, so sign(y) = sign(b1'x + e1);
// b1'x has standard deviation about sqrt(2)|b1|, so sign(y) agrees with
// sign(b1'x) well above chance (77% for this seed; 50% if y ignored b1'x).
// We require 65% (over 700 points the binomial sd is under 2%). Where
// |b2'x + c| < 0.3 the log is mostly negative and the agreement must be
// below 50%.
func TestRegressionTarget(t *testing.T) {
	o := Options{Domains: 5, MeanSize: 400, Seed: 13}.resolve()
	ds := Regression(o)
	p := newRegParams(o, sharedRNG(o.Seed))
	var far, farAgree, near, nearAgree int
	for r := 0; r < ds.N(); r++ {
		x := ds.X.RawRowView(r)
		y := ds.Target.At(r, 0)
		agree := sign(y) == sign(dot(p.b1, x))
		switch v := math.Abs(dot(p.b2, x) + p.c); {
		case v > 3:
			far++
			if agree {
				farAgree++
			}
		case v < 0.3:
			near++
			if agree {
				nearAgree++
			}
		}
	}
	if far < 50 || near < 20 {
		t.Fatalf("too few points to test: %d far, %d near", far, near)
	}
	if f := float64(farAgree) / float64(far); f < 0.65 {
		t.Errorf("|b2'x+c| > 3: sign(y) agrees with sign(b1'x) for %.3f of points, want > 0.65", f)
	}
	if f := float64(nearAgree) / float64(near); f > 0.5 {
		t.Errorf("|b2'x+c| < 0.3: sign(y) agrees with sign(b1'x) for %.3f of points, want < 0.5", f)
	}
}

// TestClassBalance checks the class rule: z is isotropic, so (u1'z, u2'z)
// is isotropic in the plane and each of the c sectors has probability 1/c.
// Proportions are checked to 5 binomial standard deviations.
func TestClassBalance(t *testing.T) {
	for _, c := range []int{2, 3, 4} {
		ds := Classification(Options{Domains: 10, MeanSize: 300, Classes: c, Seed: 14})
		n := float64(ds.N())
		p := 1 / float64(c)
		sd := math.Sqrt(p * (1 - p) / n)
		for k, m := range ds.ClassSizes() {
			if f := float64(m) / n; math.Abs(f-p) > 5*sd {
				t.Errorf("c = %d: class %d has fraction %.4f, want %.4f +- %.4f", c, k, f, p, 5*sd)
			}
		}
	}
}

// TestDomainShift checks that domains differ: the domain means of the
// classification data are shifted by m_i ~ N(0, I), so their spread across
// domains (variance about 1 per coordinate) is far above the sampling
// variance of a mean (about 1/n_i).
func TestDomainShift(t *testing.T) {
	o := Options{Domains: 20, MeanSize: 200, Seed: 15}.resolve()
	ds := Classification(o)
	means := make([]float64, o.Domains)
	for i := range means {
		x := rowsOf(ds, i)
		means[i] = stat.Mean(mat.Col(nil, 0, x), nil)
	}
	if v := stat.Variance(means, nil); v < 0.2 {
		t.Errorf("variance of domain means %.4f; want about 1 (domains shifted)", v)
	}
}

func rowsOf(ds *dataset.Dataset, i int) *mat.Dense {
	var rows []int
	for p, g := range ds.Domain {
		if g == i {
			rows = append(rows, p)
		}
	}
	return ds.Subset(rows).X
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Domains: -1}, "Domains = -1"},
		{Options{MeanSize: -2}, "MeanSize = -2"},
		{Options{MeanSize: math.NaN()}, "MeanSize = NaN"},
		{Options{Dim: -3}, "Dim = -3"},
		{Options{Classes: 1}, "Classes = 1"},
	} {
		err := tc.o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error mentioning %q", tc.o, err, tc.want)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Regression(%+v) did not panic", tc.o)
				}
			}()
			Regression(tc.o)
		}()
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}
