package exact

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// TestScale checks Model.Scale against tr(P_0 K)/n with P_0 the projection
// onto the span of the centered one-hot labels or of the centered output
// kernel matrix (formed densely by an SVD), and tr(K)/n for UDICA; the
// leading eigenvalue stays below it for every lambda and epsilon, and
// reaches it for COIR with two classes as both go to 0.
func TestScale(t *testing.T) {
	ctx := context.Background()
	cls := toy.Classification(toy.Options{Domains: 3, MeanSize: 40, Classes: 2, Seed: 3})
	reg := toy.Regression(toy.Options{Domains: 3, MeanSize: 40, Seed: 4})
	for _, c := range []struct {
		name   string
		ds     *dataset.Dataset
		method Method
	}{
		{"classes", cls, COIR},
		{"targets", reg, COIR},
		{"unsupervised", cls, UDICA},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first *Model
			for _, set := range [][2]float64{{0, 1e-10}, {0, 1e-3}, {1, 1e-3}, {100, 1}} {
				m, err := Fit(ctx, c.ds, Options{Method: c.method, Components: 2, Lambda: set[0], Epsilon: set[1],
					Kernel: kernel.RBF{Sigma: 1}, OutputKernel: kernel.RBF{Sigma: 1}})
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = m
				}
				if m.Scale != first.Scale {
					t.Errorf("Scale %g depends on lambda and epsilon (%g at first)", m.Scale, first.Scale)
				}
				if m.Eigenvalues[0] > m.Scale*(1+1e-9) {
					t.Errorf("lambda %g, epsilon %g: gamma_1 = %g above Scale %g", set[0], set[1], m.Eigenvalues[0], m.Scale)
				}
			}
			n := c.ds.N()
			kc := gram(kernel.RBF{Sigma: 1}, c.ds.X)
			center(kc)
			var want float64
			if c.method == UDICA {
				want = mat.Trace(kc) / float64(n)
			} else {
				var span *mat.Dense
				if c.ds.Label != nil {
					span, _ = kernelOneHot(c.ds.Label, c.ds.NumClasses())
				} else {
					// The span of L_c as the output factor sees it.
					span = pivotedCholesky(kernel.RBF{Sigma: 1}, c.ds.Target, pivotTol)
					centerCols(span)
				}
				var svd mat.SVD
				if !svd.Factorize(span, mat.SVDThin) {
					t.Fatal("svd")
				}
				var u mat.Dense
				svd.UTo(&u)
				vals := svd.Values(nil)
				var proj mat.VecDense
				for j, s := range vals {
					if s*s > factorTol*vals[0]*vals[0] {
						proj.MulVec(kc, u.ColView(j))
						want += mat.Dot(u.ColView(j), &proj)
					}
				}
				want /= float64(n)
			}
			if math.Abs(first.Scale-want) > 1e-6*want {
				t.Errorf("Scale = %.10g, want %.10g", first.Scale, want)
			}
			if c.method == COIR && c.ds.Label != nil && math.Abs(first.Eigenvalues[0]-want) > 1e-6*want {
				t.Errorf("COIR with 2 classes at lambda, epsilon -> 0: gamma_1 = %.10g, want Scale %.10g", first.Eigenvalues[0], want)
			}
		})
	}
}
