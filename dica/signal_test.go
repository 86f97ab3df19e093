package dica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// TestNoSignalRefused fits data and settings without signal: each fit
// returns an error wrapping ErrNoSignal that says why, and no model. The
// same data with sensible settings fit.
func TestNoSignalRefused(t *testing.T) {
	ctx := context.Background()
	cls := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 11})
	reg := toy.Regression(toy.Options{Domains: 3, MeanSize: 60, Seed: 12})
	// 60 identical cells in 3 domains and 2 classes.
	same := func() *dataset.Dataset {
		x := mat.NewDense(60, 4, nil)
		dom, lab := make([]string, 60), make([]string, 60)
		for i := range dom {
			x.SetRow(i, []float64{1, 2, 3, 4})
			dom[i], lab[i] = []string{"a", "b", "c"}[i%3], []string{"x", "y"}[i%2]
		}
		ds, err := dataset.New(x, dom)
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.SetLabels(lab); err != nil {
			t.Fatal(err)
		}
		return ds
	}()
	landmarks := mat.DenseCopyOf(cls.X.Slice(0, 20, 0, cls.D()))
	const (
		identity  = "is numerically the identity on the data"
		constant  = "is numerically constant on the data"
		overwhelm = "the regularization overwhelms the data"
	)
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
		want string // "" for a fit with signal
	}{
		{"exact, identical cells", same, Config{Method: DICA, Solver: Exact, Sigma: 1}, "the variance of the features that the labels explain is 0: the kernel rbf(sigma=1) " + constant},
		{"nystrom, identical cells", same, Config{Method: DICA, Rank: 1, Sigma: 1}, "the variance of the features that the labels explain is 0"},
		{"nystrom, epsilon 1e308", cls, Config{Method: DICA, Rank: 30, Sigma: 1, Epsilon: 1e308}, overwhelm + " (lambda = 0, epsilon = 1e+308, or the domain term)"},
		{"exact, epsilon 1e308", cls, Config{Method: DICA, Solver: Exact, Sigma: 1, Epsilon: 1e308}, overwhelm},
		{"nystrom, lambda 1e308", cls, Config{Method: DICA, Rank: 30, Sigma: 1, Lambda: 1e308}, "is at most 1e-10 times"},
		{"exact, lambda 1e308", cls, Config{Method: DICA, Solver: Exact, Sigma: 1, Lambda: 1e308}, overwhelm + " (lambda = 1e+308, epsilon = 0.0001, or the domain term)"},
		{"exact paper form, lambda 1e308", cls, Config{Method: DICA, Solver: Exact, Form: Paper, Sigma: 1, Lambda: 1e308}, overwhelm},
		{"udica, lambda 1e308", cls, Config{Method: UDICA, Rank: 30, Sigma: 1, Lambda: 1e308}, "(the variance of the features): the regularization overwhelms the data (lambda = 1e+308, or the domain term)"},
		{"kpca, rff, lambda 1e308", cls, Config{Method: KPCA, Solver: RFF, Rank: 30, Sigma: 1, Lambda: 1e308}, "(lambda = 1e+308); use smaller values"},
		{"regression, epsilon 1e308", reg, Config{Method: DICA, Rank: 30, Sigma: 1, SigmaY: 1, Epsilon: 1e308}, "the variance of the features that the targets explain"},
		{"rff, sigma 1e-300", cls, Config{Method: DICA, Solver: RFF, Rank: 30, Sigma: 1e-300}, "the kernel rbf(sigma=1e-300) " + identity + fmt.Sprintf(": no two distinct cells of the first %d cells of the pass", cls.N())},
		{"nystrom, sigma 1e-300", cls, Config{Method: DICA, Rank: 30, Sigma: 1e-300}, fmt.Sprintf("no two distinct cells of the first %d cells of the sample", cls.N())},
		{"nystrom, laplacian 1e-30", cls, Config{Method: DICA, Rank: 30, Kernel: kernel.Laplacian{Sigma: 1e-30}}, "laplacian"},
		{"given landmarks, sigma 1e-20", cls, Config{Method: DICA, Rank: 20, Sigma: 1e-20, Landmarks: GivenLandmarks, LandmarkPoints: landmarks}, "of the first 20 cells of the landmarks"},
		{"exact, sigma 1e-5", cls, Config{Method: DICA, Solver: Exact, Sigma: 1e-5}, identity + fmt.Sprintf(": no two distinct cells of the first %d cells of the data", cls.N())},
		{"rff, sigma 1e300", cls, Config{Method: DICA, Solver: RFF, Rank: 30, Sigma: 1e300}, "the kernel rbf(sigma=1e+300) " + constant},
		{"exact, sigma 1e300", cls, Config{Method: DICA, Solver: Exact, Sigma: 1e300}, constant},
		// With signal.
		{"nystrom", cls, Config{Method: DICA, Rank: 30, Sigma: 1}, ""},
		{"nystrom, lambda 1e3", cls, Config{Method: DICA, Rank: 30, Sigma: 1, Lambda: 1e3}, ""},
		{"rff", cls, Config{Method: DICA, Solver: RFF, Rank: 30, Sigma: 1}, ""},
		{"exact", cls, Config{Method: DICA, Solver: Exact, Sigma: 1}, ""},
		{"exact paper form", cls, Config{Method: DICA, Solver: Exact, Form: Paper, Sigma: 1}, ""},
		{"udica", cls, Config{Method: UDICA, Rank: 30, Sigma: 1}, ""},
		{"regression", reg, Config{Method: DICA, Rank: 30, Sigma: 1, SigmaY: 1}, ""},
		{"exact regression", reg, Config{Method: COIR, Solver: Exact, Sigma: 1, SigmaY: 1}, ""},
		{"small sigma, cells in reach", cls, Config{Method: DICA, Rank: 30, Sigma: 0.05}, ""},
		{"exact, linear kernel", cls, Config{Method: DICA, Solver: Exact, Kernel: kernel.Linear{}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Fit(ctx, c.ds.Source(), c.cfg)
			if c.want == "" {
				if err != nil || m.Components() == 0 {
					t.Fatalf("a fit with signal: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNoSignal) || !strings.Contains(err.Error(), c.want) || m != nil {
				t.Fatalf("err = %v\nwant ErrNoSignal saying %q", err, c.want)
			}
		})
	}
}

// TestSignalScale checks gamma_ref against its definition computed from
// the features of every cell: the between-class variance of the Nystrom
// features (class labels), tr(F S^+ F^T)/n from the output features (real
// targets) and the total variance (UDICA); it bounds the leading
// eigenvalue for every lambda and epsilon, and is reached as both go to 0
// without a domain term (COIR with 2 classes: one component).
func TestSignalScale(t *testing.T) {
	ctx := context.Background()
	cls := toy.Classification(toy.Options{Domains: 3, MeanSize: 80, Classes: 2, Seed: 13})
	reg := toy.Regression(toy.Options{Domains: 3, MeanSize: 80, Seed: 14})
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
	}{
		{"classes", cls, Config{Method: COIR, Rank: 40, Sigma: 1}},
		{"targets", reg, Config{Method: COIR, Rank: 40, Sigma: 1, SigmaY: 1}},
		{"unsupervised", cls, Config{Method: KPCA, Rank: 40, Sigma: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(ctx, c.ds.Source(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			st, err := p.Accumulate(ctx, c.ds.Source())
			if err != nil {
				t.Fatal(err)
			}
			fs, err := st.features()
			if err != nil {
				t.Fatal(err)
			}
			got := st.signalScale(fs)
			// The features of every cell, centered.
			n := c.ds.N()
			var phi mat.Dense
			p.InputMap().Map(&phi, c.ds.X)
			_, m := phi.Dims()
			center(&phi)
			var want float64
			switch {
			case c.cfg.Method == KPCA:
				want = sqFrob(&phi) / float64(n)
			case c.ds.Label != nil:
				// P_0 Phi_c: each cell replaced by its class mean.
				mean := mat.NewDense(c.ds.NumClasses(), m, nil)
				size := c.ds.ClassSizes()
				for i, l := range c.ds.Label {
					r := mean.RawRowView(l)
					for j, v := range phi.RawRowView(i) {
						r[j] += v / float64(size[l])
					}
				}
				for l, s := range size {
					r := mean.RawRowView(l)
					want += float64(s) * mat.Dot(mat.NewVecDense(m, r), mat.NewVecDense(m, r))
				}
				want /= float64(n)
			default:
				// P_0 = Psi_c (Psi_c^T Psi_c)^+ Psi_c^T from the output features.
				var psi mat.Dense
				p.OutputMap().Map(&psi, c.ds.Target)
				center(&psi)
				var svd mat.SVD
				if !svd.Factorize(&psi, mat.SVDThin) {
					t.Fatal("svd")
				}
				var u mat.Dense
				svd.UTo(&u)
				vals := svd.Values(nil)
				for j, s := range vals {
					if s*s > OutputRCond*vals[0]*vals[0] {
						var proj mat.VecDense
						proj.MulVec(phi.T(), u.ColView(j))
						want += mat.Dot(&proj, &proj)
					}
				}
				want /= float64(n)
			}
			if math.Abs(got-want) > 1e-8*want {
				t.Errorf("gamma_ref = %.12g, from the features %.12g", got, want)
			}
			// A bound of the leading eigenvalue, approached as lambda and
			// epsilon go to 0 without a domain term.
			for _, set := range [][2]float64{{0, 1e-12}, {0, 1e-4}, {0.1, 1e-4}, {10, 1}} {
				cfg := st.Plan().Config
				cfg.Lambda, cfg.Epsilon = set[0], set[1]
				if cfg.Lambda > 0 && !st.HasGram() {
					continue // COIR was accumulated without the Gram sum
				}
				mod, err := st.SolveWith(cfg)
				if err != nil {
					t.Fatal(err)
				}
				g := mod.Eigenvalues[0]
				if g > got*(1+1e-9) {
					t.Errorf("lambda %g, epsilon %g: gamma_1 = %g above gamma_ref %g", set[0], set[1], g, got)
				}
				if set[0] == 0 && set[1] == 1e-12 && c.cfg.Method == COIR && c.ds.Label != nil && math.Abs(g-got) > 1e-6*got {
					t.Errorf("COIR with 2 classes at epsilon -> 0: gamma_1 = %.9g, gamma_ref %.9g", g, got)
				}
			}
		})
	}
}

// center subtracts the column means of a.
func center(a *mat.Dense) {
	r, c := a.Dims()
	for j := 0; j < c; j++ {
		var s float64
		for i := 0; i < r; i++ {
			s += a.At(i, j)
		}
		s /= float64(r)
		for i := 0; i < r; i++ {
			a.Set(i, j, a.At(i, j)-s)
		}
	}
}
