// Package problems builds the symmetric eigenproblems with known spectra of
// docs/LANCZOS.md, the suite on which the lanczos package is measured
// against ARPACK and Spectra. Each problem is cheap to generate and carries
// its exact eigenvalues (or a reference computed from a small dense
// problem).
package problems

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Problem is a test eigenproblem A x = lambda B x (B = I when B is nil).
type Problem struct {
	// Name identifies the problem, as in the table of docs/LANCZOS.md.
	Name string
	// N is the dimension.
	N int
	// Apply stores A x in dst.
	Apply func(dst, x []float64)
	// Sym is A as a dense symmetric matrix when the problem is dense.
	Sym *mat.SymDense
	// BDiag, when not nil, is the diagonal of B (generalized problems).
	BDiag []float64
	// Top returns the exact k largest eigenvalues, largest first, with
	// multiplicities. Computing it may be costly for reference-based
	// problems (GOE).
	Top func(k int) []float64
	// NormA is ||A||_2 (or ||A|| for the generalized pair, B^{-1} A).
	NormA float64
	// ArpackEps, Arpack1e8 and Spectra are the anchors' matvec counts of
	// docs/LANCZOS.md for the k = 10 largest, ncv = 21: ARPACK at
	// tol = eps, ARPACK at tol = 1e-8, Spectra at tol = 1e-10; 0 where the
	// table has none.
	ArpackEps, Arpack1e8, Spectra int
	// CheapestCorrect, if not 0, is the cheapest correct anchor run at
	// tol 1e-8 where ARPACK's default run is wrong.
	CheapestCorrect int
}

func diagProblem(name string, d []float64) *Problem {
	s := append([]float64(nil), d...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	return &Problem{
		Name: name, N: len(d),
		Apply: func(dst, x []float64) {
			for i, v := range d {
				dst[i] = v * x[i]
			}
		},
		Top:   func(k int) []float64 { return append([]float64(nil), s[:k]...) },
		NormA: math.Max(math.Abs(s[0]), math.Abs(s[len(s)-1])),
	}
}

// Geometric is diag(rho^i), i = 0..n-1: a kernel-like spectrum.
func Geometric(n int, rho float64) *Problem {
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Pow(rho, float64(i))
	}
	p := diagProblem("diag(0.9^i)", d)
	p.ArpackEps, p.Arpack1e8, p.Spectra = 52, 37, 38
	return p
}

// Clustered is diag with the top ten eigenvalues 1 + 1e-6 i (i = 1..10)
// and the rest uniform on (0, 0.9), drawn with the given seed.
func Clustered(n int, seed uint64) *Problem {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := make([]float64, n)
	for i := range d {
		if i < 10 {
			d[i] = 1 + 1e-6*float64(i+1)
		} else {
			d[i] = 0.9 * rng.Float64()
		}
	}
	p := diagProblem("clustered top", d)
	p.ArpackEps, p.Arpack1e8, p.Spectra = 239, 207, 216
	return p
}

// Linear is diag(1, 2, ..., n).
func Linear(n int) *Problem {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(i + 1)
	}
	p := diagProblem("diag(1..n)", d)
	p.ArpackEps, p.Arpack1e8, p.Spectra = 3851, 2206, 2450
	return p
}

// TopMultiple is diag(1, ..., n-4, n, n, n, n): diag(1..n) with its top
// eigenvalue of multiplicity 4.
func TopMultiple(n int) *Problem {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(i + 1)
	}
	for i := n - 4; i < n; i++ {
		d[i] = float64(n)
	}
	p := diagProblem("top eigenvalue x4", d)
	p.ArpackEps, p.Spectra = 6155, 1600
	return p
}

// Laplacian1D is the Dirichlet 1-D Laplacian tridiag(-1, 2, -1) of order n,
// eigenvalues 4 sin^2(j pi / (2 (n+1))).
func Laplacian1D(n int) *Problem {
	ev := make([]float64, n)
	for j := 1; j <= n; j++ {
		s := math.Sin(float64(j) * math.Pi / float64(2*(n+1)))
		ev[j-1] = 4 * s * s
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	return &Problem{
		Name: "1-D Laplacian", N: n,
		Apply: func(dst, x []float64) {
			for i := range x {
				v := 2 * x[i]
				if i > 0 {
					v -= x[i-1]
				}
				if i < n-1 {
					v -= x[i+1]
				}
				dst[i] = v
			}
		},
		Top:       func(k int) []float64 { return append([]float64(nil), ev[:k]...) },
		NormA:     ev[0],
		ArpackEps: 6637, Arpack1e8: 3600, Spectra: 4688,
	}
}

// Laplacian2D is the Dirichlet 5-point Laplacian on a p x p grid (n = p^2),
// eigenvalues 4 sin^2(i pi/(2(p+1))) + 4 sin^2(j pi/(2(p+1))): every value
// with i != j is an exact double eigenvalue.
func Laplacian2D(p int) *Problem {
	a := make([]float64, p)
	for i := 1; i <= p; i++ {
		s := math.Sin(float64(i) * math.Pi / float64(2*(p+1)))
		a[i-1] = 4 * s * s
	}
	ev := make([]float64, 0, p*p)
	for i := range a {
		for j := range a {
			ev = append(ev, a[i]+a[j])
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	pr := &Problem{
		Name: "2-D Laplacian", N: p * p,
		Apply: func(dst, x []float64) {
			for r := 0; r < p; r++ {
				for c := 0; c < p; c++ {
					i := r*p + c
					v := 4 * x[i]
					if c > 0 {
						v -= x[i-1]
					}
					if c < p-1 {
						v -= x[i+1]
					}
					if r > 0 {
						v -= x[i-p]
					}
					if r < p-1 {
						v -= x[i+p]
					}
					dst[i] = v
				}
			}
		},
		Top:   func(k int) []float64 { return append([]float64(nil), ev[:k]...) },
		NormA: ev[0],
	}
	switch p {
	case 100:
		pr.ArpackEps, pr.Arpack1e8, pr.Spectra = 2485, 3231, 3520
	case 300:
		pr.ArpackEps, pr.Spectra, pr.CheapestCorrect = 15840, 24891, 3339
	}
	return pr
}

// GOE is the dense Gaussian orthogonal ensemble matrix (G + G^T)/sqrt(2n).
// Its reference spectrum comes from dense mat.EigenSym (without vectors).
func GOE(n int, seed uint64) *Problem {
	rng := rand.New(rand.NewPCG(seed, 2))
	s := mat.NewSymDense(n, nil)
	c := 1 / math.Sqrt(2*float64(n))
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			g := rng.NormFloat64() + rng.NormFloat64()
			if i == j {
				g = 2 * rng.NormFloat64()
			}
			s.SetSym(i, j, g*c)
		}
	}
	raw := s.RawSymmetric()
	return &Problem{
		Name: "GOE", N: n, Sym: s,
		Apply: func(dst, x []float64) {
			blas64.Implementation().Dsymv(raw.Uplo, n, 1, raw.Data, raw.Stride, x, 1, 0, dst, 1)
		},
		Top: func(k int) []float64 {
			var es mat.EigenSym
			if !es.Factorize(s, false) {
				panic("problems: EigenSym failed")
			}
			v := es.Values(nil)
			sort.Sort(sort.Reverse(sort.Float64Slice(v)))
			return v[:k]
		},
		NormA:     2,
		ArpackEps: 537, Arpack1e8: 317, Spectra: 331,
	}
}

// GramLowRank is the matrix-free U U^T with U = G diag(0.9^j) / sqrt(n), G
// an n x r standard Gaussian matrix. Its nonzero eigenvalues are those of the
// r x r matrix U^T U, used as the reference; all others are 0.
func GramLowRank(n, r int, seed uint64) (*Problem, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 3))
	u := mat.NewDense(n, r, nil)
	c := 1 / math.Sqrt(float64(n))
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			u.Set(i, j, rng.NormFloat64()*c*math.Pow(0.9, float64(j)))
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, u.T())
	var es mat.EigenSym
	if !es.Factorize(&g, false) {
		panic("problems: EigenSym failed")
	}
	ev := es.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	raw := u.RawMatrix()
	p := &Problem{
		Name: "U U^T", N: n,
		Apply: func(dst, x []float64) {
			t := make([]float64, r)
			bl := blas64.Implementation()
			bl.Dgemv(blas.Trans, n, r, 1, raw.Data, raw.Stride, x, 1, 0, t, 1)
			bl.Dgemv(blas.NoTrans, n, r, 1, raw.Data, raw.Stride, t, 1, 0, dst, 1)
		},
		Top: func(k int) []float64 {
			out := make([]float64, k)
			copy(out, ev)
			return out
		},
		NormA:     ev[0],
		ArpackEps: 36, Arpack1e8: 27,
	}
	return p, u
}

// Mikota is the Mikota pair K x = lambda M x of order n with eigenvalues
// 1, 4, 9, ..., n^2: K is tridiagonal with diagonal (2n-1, 2n-3, ..., 1)
// and off-diagonal -(n-1, ..., 1), M = diag(1, 1/2, ..., 1/n).
func Mikota(n int) *Problem {
	d := make([]float64, n)
	o := make([]float64, n-1)
	m := make([]float64, n)
	for i := 0; i < n; i++ {
		d[i] = float64(2*n - 1 - 2*i)
		m[i] = 1 / float64(i+1)
		if i < n-1 {
			o[i] = -float64(n - 1 - i)
		}
	}
	return &Problem{
		Name: "Mikota pair", N: n, BDiag: m,
		Apply: func(dst, x []float64) {
			for i := range x {
				v := d[i] * x[i]
				if i > 0 {
					v += o[i-1] * x[i-1]
				}
				if i < n-1 {
					v += o[i] * x[i+1]
				}
				dst[i] = v
			}
		},
		Top: func(k int) []float64 {
			out := make([]float64, k)
			for i := range out {
				out[i] = float64((n - i) * (n - i))
			}
			return out
		},
		NormA:     float64(n * n),
		ArpackEps: 417, Arpack1e8: 265, Spectra: 278,
	}
}

// Cycle is the Laplacian of the cycle graph on n vertices, 2 I minus the
// adjacency, eigenvalues 2 - 2 cos(2 pi j / n): every value is an exact
// double except those of j = 0 and (n even) j = n/2.
func Cycle(n int) *Problem {
	ev := make([]float64, n)
	for j := range ev {
		ev[j] = 2 - 2*math.Cos(2*math.Pi*float64(j)/float64(n))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	return &Problem{
		Name: "cycle Laplacian", N: n,
		Apply: func(dst, x []float64) {
			for i := range x {
				dst[i] = 2*x[i] - x[(i+n-1)%n] - x[(i+1)%n]
			}
		},
		Top:   func(k int) []float64 { return append([]float64(nil), ev[:k]...) },
		NormA: ev[0],
	}
}
