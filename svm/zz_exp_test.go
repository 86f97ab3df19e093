package svm

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func relGrad(pb *Problem, k int, b *Binary, c float64) float64 {
	yk := pb.classLabels(k)
	p := pb.p
	w := append(append([]float64{}, b.W...), b.Intercept/pb.bias)
	g := append([]float64{}, w...)
	g0 := make([]float64, p)
	for i := range pb.n {
		row := pb.rows[i*p : (i+1)*p]
		z := 0.0
		for j := range p {
			z += w[j] * row[j]
		}
		z *= yk[i]
		for j := range p {
			g0[j] -= 2 * c * yk[i] * row[j]
		}
		if z < 1 {
			for j := range p {
				g[j] -= 2 * c * (1 - z) * yk[i] * row[j]
			}
		}
	}
	var a, bb float64
	for j := range p {
		a += g[j] * g[j]
		bb += g0[j] * g0[j]
	}
	return math.Sqrt(a / bb)
}

func TestZZExp(t *testing.T) {
	x, y := loadCyTOF(t, 1, 2, 3, 4, 5, 6)
	n, d := x.Dims()
	const keep = 20000
	sub := mat.NewDense(keep, d, nil)
	ys := make([]int, keep)
	for i := range keep {
		r := i * (n / keep)
		sub.SetRow(i, x.RawRowView(r))
		ys[i] = y[r]
	}
	sc, _ := Standardize(sub)
	z, _ := sc.Apply(sub)
	pb, _ := NewProblem(z, ys, 4, 0)
	ctx := context.Background()
	diffPred := func(a, b *Model) int {
		pa, _ := a.Predict(z)
		pbb, _ := b.Predict(z)
		c := 0
		for i := range pa {
			if pa[i] != pbb[i] {
				c++
			}
		}
		return c
	}
	var prev *Model
	for _, c := range []float64{0.1, 1, 10} {
		cold, _ := pb.Train(ctx, Options{C: c})
		exact, _ := pb.Train(ctx, Options{C: c, Tol: 1e-12})
		for k := range 4 {
			t.Logf("C=%g k=%d cold epochs %d relgrad %.3g exact epochs %d relgrad %.3g", c, k, cold.Machines[k].Epochs, relGrad(pb, k, cold.Machines[k], c), exact.Machines[k].Epochs, relGrad(pb, k, exact.Machines[k], c))
		}
		t.Logf("C=%g cold vs exact: %d predictions differ", c, diffPred(cold, exact))
		if prev != nil {
			for _, tol := range []float64{1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
				warm, _ := pb.Train(ctx, Options{C: c, Tol: tol, Init: prev})
				ep := 0
				for k := range 4 {
					ep += warm.Machines[k].Epochs
				}
				t.Logf("  warm tol %g: epochs %d, vs exact %d differ, vs cold %d differ", tol, ep, diffPred(warm, exact), diffPred(warm, cold))
			}
		}
		prev = cold
	}
}
