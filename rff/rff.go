// Package rff implements random Fourier features (Rahimi and Recht, 2007):
// by Bochner's theorem a shift-invariant kernel is k(x, z) = E_w cos(w'(x - z))
// for frequencies w drawn from the kernel's spectral density, so with D
// frequencies w_1 .. w_D the map
//
//	phi(x) = sqrt(1/D) [cos(w_1'x) .. cos(w_D'x), sin(w_1'x) .. sin(w_D'x)]
//
// (m = 2D features, sin/cos pairs, which have lower variance than the
// cos-plus-random-phase form) satisfies E[phi(x)'phi(z)] = k(x, z), with
// phi(x)'phi(z) = (1/D) sum_j cos(w_j'(x - z)) and ||phi(x)|| = 1.
//
// Spectral densities:
//   - kernel.RBF{Sigma}: w ~ N(0, Sigma^-2 I);
//   - kernel.Laplacian{Sigma, L1: true}, exp(-||x - z||_1 / Sigma): independent
//     Cauchy coordinates with scale 1/Sigma;
//   - kernel.Laplacian{Sigma}, exp(-||x - z|| / Sigma): the multivariate
//     Cauchy, w = g / (Sigma |u|) with g ~ N(0, I_d), u ~ N(0, 1).
//
// Orthogonal random features (Yu et al., "Orthogonal Random Features",
// NeurIPS 2016) replace the i.i.d. Gaussian directions by blocks of d
// exactly orthogonal ones: each block is S Q / Sigma with Q a uniformly
// random d x d orthogonal matrix (QR of a Gaussian matrix, signs fixed by the
// diagonal of R) and S diagonal with independent chi-distributed (d degrees
// of freedom) norms, so every row keeps the N(0, Sigma^-2 I) marginal (the
// estimator stays unbiased) while its variance drops (docs/MATH.md,
// "Kernels and feature maps"). The same construction applies to
// the Euclidean Laplacian (radial density: norms chi_d / |u|); it does not
// apply to the L1 Laplacian, whose density is not rotation invariant, and New
// returns an error for that combination.
//
// A Map is a deterministic function of (kernel, d, m, orthogonal, seed): the
// frequencies are drawn from math/rand/v2's PCG generator, so a saved model
// only needs those five values (the frequencies are bit-identical on every
// platform for a given Go release; the features may differ in the last bit
// between CPUs with and without AVX2+FMA, which run different code).
//
// Map computes the projections W x and their sines and cosines 4 at a time
// with AVX2+FMA assembly on amd64 (Cody-Waite reduction by pi/2 and the
// Cephes polynomials of math.Sincos), and in plain Go with math.Sincos
// elsewhere or with the noasm build tag. The assembly's sines and cosines
// are within 2.5e-16 absolute of math.Sincos's (about 1 ulp near 1;
// TestSincos); arguments beyond 2^20, which heavy-tailed Cauchy frequencies
// can produce, go to math.Sincos. BenchmarkSincos compares it with
// math.Sincos and with the same polynomials in plain Go.
package rff

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
)

// Map is a random Fourier feature map. It is immutable after New and safe
// for concurrent use.
type Map struct {
	k          kernel.Kernel
	d, m       int
	orthogonal bool
	seed       uint64
	w          *mat.Dense // D x d frequencies, one per row
	wt         []float64  // d x stride, w transposed, columns padded with 0
	stride     int        // D rounded up to a multiple of 4
	scale      float64    // sqrt(1/D)
}

var _ approx.Map = (*Map)(nil)

// spectrum identifies a kernel's spectral density.
type spectrum int

const (
	gaussian spectrum = iota
	cauchyL1
	cauchyL2
)

// New returns a random Fourier feature map of the kernel k on R^d with m
// features (m/2 frequencies as cos/sin pairs), orthogonal random features
// when orthogonal is set, drawn with a PCG generator seeded by seed.
//
// Supported kernels are kernel.RBF and kernel.Laplacian (L1 or Euclidean).
// New returns an error for other kernels (kernel.Linear has no spectral
// density), a bandwidth that is not positive and finite, d < 1, m < 2 or m
// odd, and for orthogonal features of the L1 Laplacian kernel.
func New(k kernel.Kernel, d, m int, orthogonal bool, seed uint64) (*Map, error) {
	var sigma float64
	var spec spectrum
	switch k := k.(type) {
	case kernel.RBF:
		sigma, spec = k.Sigma, gaussian
	case kernel.Laplacian:
		sigma, spec = k.Sigma, cauchyL2
		if k.L1 {
			spec = cauchyL1
		}
	default:
		return nil, fmt.Errorf("rff: unsupported kernel %v: random Fourier features need a shift-invariant kernel (rbf or laplacian)", k)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("rff: kernel %v: bandwidth must be positive and finite", k)
	}
	if d < 1 {
		return nil, fmt.Errorf("rff: input dimension d = %d, want at least 1", d)
	}
	if m < 2 || m%2 != 0 {
		return nil, fmt.Errorf("rff: m = %d features, want an even number >= 2 (cos/sin pairs)", m)
	}
	if orthogonal && spec == cauchyL1 {
		return nil, errors.New("rff: orthogonal random features need a rotation-invariant kernel; the L1 laplacian is not (use the euclidean laplacian or orthogonal = false)")
	}
	nf := m / 2
	rng := rand.New(rand.NewPCG(seed, 0x7266662d66726571))
	w := mat.NewDense(nf, d, nil)
	if orthogonal {
		orthogonalFrequencies(w, rng, spec)
	} else {
		for i := range nf {
			row := w.RawRowView(i)
			switch spec {
			case gaussian:
				for j := range row {
					row[j] = rng.NormFloat64()
				}
			case cauchyL1:
				for j := range row {
					row[j] = math.Tan(math.Pi * (rng.Float64() - 0.5))
				}
			case cauchyL2:
				for j := range row {
					row[j] = rng.NormFloat64()
				}
				u := math.Abs(rng.NormFloat64())
				for j := range row {
					row[j] /= u
				}
			}
		}
	}
	w.Scale(1/sigma, w)
	stride := (nf + 3) &^ 3
	wt := make([]float64, d*stride)
	for i := range nf {
		for j, v := range w.RawRowView(i) {
			wt[j*stride+i] = v
		}
	}
	return &Map{k: k, d: d, m: m, orthogonal: orthogonal, seed: seed, w: w, wt: wt, stride: stride, scale: math.Sqrt(1 / float64(nf))}, nil
}

// orthogonalFrequencies fills w (D x d) with blocks of d orthogonal rows of
// random norms (unit bandwidth).
func orthogonalFrequencies(w *mat.Dense, rng *rand.Rand, spec spectrum) {
	nf, d := w.Dims()
	g := mat.NewDense(d, d, nil)
	var qr mat.QR
	var q, r mat.Dense
	for lo := 0; lo < nf; lo += d {
		for i := range d {
			for j := range d {
				g.Set(i, j, rng.NormFloat64())
			}
		}
		qr.Factorize(g)
		qr.QTo(&q)
		qr.RTo(&r)
		for i := 0; i < d && lo+i < nf; i++ {
			// Row i of (Q diag(sign(R_jj)))^T, a Haar-distributed
			// orthogonal matrix: column i of Q times sign(R_ii).
			sgn := 1.0
			if r.At(i, i) < 0 {
				sgn = -1
			}
			// Radius: chi with d degrees of freedom (the norm of a
			// d-dimensional standard normal), divided by |u| for the
			// multivariate Cauchy.
			var s float64
			for range d {
				v := rng.NormFloat64()
				s += v * v
			}
			rad := math.Sqrt(s)
			if spec == cauchyL2 {
				rad /= math.Abs(rng.NormFloat64())
			}
			row := w.RawRowView(lo + i)
			for j := range d {
				row[j] = sgn * rad * q.At(j, i)
			}
		}
	}
}

// Kernel returns the kernel the features approximate.
func (f *Map) Kernel() kernel.Kernel { return f.k }

// Seed returns the seed the frequencies were drawn with.
func (f *Map) Seed() uint64 { return f.seed }

// Orthogonal reports whether the frequencies are orthogonal random features.
func (f *Map) Orthogonal() bool { return f.orthogonal }

// Frequencies returns the D x d matrix of frequencies w_j (D = Dim/2), one
// per row. The caller must not modify it.
func (f *Map) Frequencies() *mat.Dense { return f.w }

// InputDim returns d.
func (f *Map) InputDim() int { return f.d }

// Dim returns m, the number of features (twice the number of frequencies).
func (f *Map) Dim() int { return f.m }

// Map stores phi(x_i) in row i of dst (r x Dim, or empty to be resized): the
// cosines of the projections w_j'x_i in columns 0..D-1 and their sines in
// columns D..2D-1, all times sqrt(1/D). It panics if x does not have InputDim
// columns or dst has the wrong shape.
func (f *Map) Map(dst, x *mat.Dense) {
	n, d := x.Dims()
	if d != f.d {
		panic(fmt.Sprintf("rff: input has %d columns, map expects %d", d, f.d))
	}
	if dst.IsEmpty() {
		dst.ReuseAs(n, f.m)
	} else if rr, cc := dst.Dims(); rr != n || cc != f.m {
		panic(fmt.Sprintf("rff: destination is %d x %d, want %d x %d", rr, cc, n, f.m))
	}
	nf := f.m / 2
	proj := make([]float64, f.stride)
	for i := range n {
		xi := x.RawRowView(i)[:d]
		if hasAVX2FMA {
			projAVX2(proj, xi, f.wt, f.stride)
		} else {
			clear(proj)
			for k, a := range xi {
				wk := f.wt[k*f.stride : k*f.stride+nf]
				for j, v := range wk {
					proj[j] += a * v
				}
			}
		}
		row := dst.RawRowView(i)[:f.m]
		sincosScaled(row[nf:], row[:nf], proj[:nf], f.scale)
	}
}
