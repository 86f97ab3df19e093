package approx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/randmat"
	"github.com/dicalab/dica/kernel"
)

// projMap is the linear feature map phi(x) = P^T x (P is d x m).
type projMap struct{ p *mat.Dense }

func (p projMap) InputDim() int { r, _ := p.p.Dims(); return r }
func (p projMap) Dim() int      { _, c := p.p.Dims(); return c }
func (p projMap) Map(dst, x *mat.Dense) {
	dst.Mul(x, p.p)
}

// bruteKernelError computes the errors with Eval, explicit loops and the
// singular values of a general (not symmetric) SVD.
func bruteKernelError(k kernel.Kernel, m Map, x *mat.Dense) (frob, spec float64) {
	n, _ := x.Dims()
	var phi mat.Dense
	m.Map(&phi, x)
	kk := mat.NewDense(n, n, nil)
	e := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			kij := k.Eval(x.RawRowView(i), x.RawRowView(j))
			kk.Set(i, j, kij)
			e.Set(i, j, kij-mat.Dot(phi.RowView(i), phi.RowView(j)))
		}
	}
	norm2 := func(a *mat.Dense) float64 {
		var svd mat.SVD
		svd.Factorize(a, mat.SVDNone)
		return svd.Values(nil)[0]
	}
	return mat.Norm(e, 2) / mat.Norm(kk, 2), norm2(e) / norm2(kk)
}

func TestKernelError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randmat.Normal(rng, 60, 4)
	for _, tc := range []struct {
		name string
		k    kernel.Kernel
		m    Map
	}{
		{"rbf-kernelrows", kernel.RBF{Sigma: 1.5}, KernelRows{Kernel: kernel.RBF{Sigma: 3}, Points: randmat.Normal(rng, 10, 4)}},
		{"linear-proj", kernel.Linear{}, projMap{randmat.Normal(rng, 4, 3)}},
		{"laplacian-proj", kernel.Laplacian{Sigma: 2}, projMap{randmat.Normal(rng, 4, 2)}},
	} {
		frob, spec := KernelError(tc.k, tc.m, x)
		wf, ws := bruteKernelError(tc.k, tc.m, x)
		if f := FrobeniusError(tc.k, tc.m, x); f != frob {
			t.Errorf("%s: FrobeniusError %v != KernelError's %v", tc.name, f, frob)
		}
		if math.Abs(frob-wf) > 1e-12*wf || math.Abs(spec-ws) > 1e-10*ws {
			t.Errorf("%s: got (%.15g, %.15g), brute force (%.15g, %.15g)", tc.name, frob, spec, wf, ws)
		}
	}
}

func TestKernelErrorClosedForm(t *testing.T) {
	// Linear kernel, phi(x) = first coordinate: K - Phi Phi^T = X2 X2^T with
	// X2 the remaining coordinates. Identity map: zero error.
	rng := rand.New(rand.NewPCG(3, 4))
	x := randmat.Normal(rng, 30, 3)
	id := mat.NewDense(3, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	frob, spec := KernelError(kernel.Linear{}, projMap{id}, x)
	if frob > 1e-15 || spec > 1e-15 {
		t.Errorf("identity map: errors (%g, %g), want 0", frob, spec)
	}
	e1 := mat.NewDense(3, 1, []float64{1, 0, 0})
	frob, spec = KernelError(kernel.Linear{}, projMap{e1}, x)
	// ||X2 X2^T||_F^2 = sum of squared singular values^4 of X2, etc.
	sv := func(a mat.Matrix) []float64 {
		var s mat.SVD
		s.Factorize(a, mat.SVDNone)
		return s.Values(nil)
	}
	s2 := sv(x.Slice(0, 30, 1, 3))
	s := sv(x)
	var n2, d2 float64
	for _, v := range s2 {
		n2 += math.Pow(v, 4)
	}
	for _, v := range s {
		d2 += math.Pow(v, 4)
	}
	wf := math.Sqrt(n2 / d2)
	ws := s2[0] * s2[0] / (s[0] * s[0])
	if math.Abs(frob-wf) > 1e-12 || math.Abs(spec-ws) > 1e-12 {
		t.Errorf("first-coordinate map: got (%.15g, %.15g), want (%.15g, %.15g)", frob, spec, wf, ws)
	}
}

func TestPrincipalCosines(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 20
	unit := func(i int) []float64 { v := make([]float64, n); v[i] = 1; return v }
	comb := func(c1 float64, v1 []float64, c2 float64, v2 []float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = c1*v1[i] + c2*v2[i]
		}
		return out
	}
	cols := func(vs ...[]float64) *mat.Dense {
		a := mat.NewDense(n, len(vs), nil)
		for j, v := range vs {
			a.SetCol(j, v)
		}
		return a
	}
	a := randmat.Normal(rng, n, 4)
	var rot mat.Dense
	rot.Mul(a, randmat.Normal(rng, 4, 4)) // same span, different basis
	th1, th2 := 0.3, 1.1
	for _, tc := range []struct {
		name string
		a, b *mat.Dense
		want []float64
	}{
		{"same span", a, &rot, []float64{1, 1, 1, 1}},
		{"orthogonal", cols(unit(0), unit(1)), cols(unit(2), unit(3)), []float64{0, 0}},
		{"one angle", cols(unit(0)), cols(comb(math.Cos(th1), unit(0), math.Sin(th1), unit(1))), []float64{math.Cos(th1)}},
		{"two angles", cols(unit(0), unit(1)),
			cols(comb(math.Cos(th2), unit(0), math.Sin(th2), unit(2)), comb(math.Cos(th1), unit(1), math.Sin(th1), unit(3))),
			[]float64{math.Cos(th1), math.Cos(th2)}},
		{"shared plus orthogonal", cols(unit(0), unit(1)), cols(comb(2, unit(0), 0, unit(0)), unit(5)), []float64{1, 0}},
		{"different widths", cols(unit(0), unit(1), unit(2)), cols(comb(math.Cos(th1), unit(2), math.Sin(th1), unit(7))), []float64{math.Cos(th1)}},
	} {
		got := PrincipalCosines(tc.a, tc.b)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d cosines, want %d", tc.name, len(got), len(tc.want))
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-13 {
				t.Errorf("%s: cosines %v, want %v", tc.name, got, tc.want)
				break
			}
		}
		if !slices.IsSortedFunc(got, func(x, y float64) int { return -cmpF(x, y) }) {
			t.Errorf("%s: cosines %v not decreasing", tc.name, got)
		}
	}
}

func cmpF(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
