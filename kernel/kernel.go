// Package kernel provides the positive-definite kernels DICA uses on inputs
// and outputs: RBF, Laplacian and linear kernels on points, and the delta
// kernel on class labels.
//
// Block evaluation K(X, Z) is the floor of every fit (n x m kernel entries),
// so it is fused and vectorized: Z is transposed once per block, each row of
// K is accumulated from coordinate differences over contiguous columns of
// Z^T (exact zeros for equal points, no ||x||^2 + ||z||^2 - 2 x'z
// cancellation), and the exponential is evaluated in the same pass. On amd64
// CPUs with AVX2 and FMA this is assembly working on 4 columns at a time with
// a table-free polynomial exp; elsewhere (or with the noasm build tag) it is
// scalar Go with a table-driven exp (ExpSlice). Both exps are faithful:
// within 1 ulp of the correctly rounded result. The two paths may differ in
// the last bit. RBF and Laplacian also evaluate blocks against prepared
// points in single precision (Prepared32, BlockPoints32): 8 columns at a
// time on AVX2, at about 2.3 times the speed.
//
// BenchmarkRBFBlock measures a block (nanoseconds per entry, in float64 and
// float32, against a gonum GEMM of the distances followed by math.Exp) and
// BenchmarkExp the exponentials; docs/PERFORMANCE.md puts the numbers in
// the cost of a fit.
package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Kernel is a positive-definite kernel on R^d.
type Kernel interface {
	// Eval returns k(x, z).
	Eval(x, z []float64) float64
	// Block stores K(X, Z) in dst, where X is r x d, Z is s x d and dst is
	// r x s. dst is resized if empty and must otherwise have that shape.
	Block(dst *mat.Dense, x, z mat.Matrix)
	// String describes the kernel and its parameters.
	String() string
}

// RBF is the Gaussian kernel k(x, z) = exp(-||x - z||^2 / (2 Sigma^2)).
type RBF struct{ Sigma float64 }

// Eval returns k(x, z).
func (k RBF) Eval(x, z []float64) float64 {
	return math.Exp(-SqDist(x, z) / (2 * k.Sigma * k.Sigma))
}

// Block stores K(X, Z) in dst. The squared distances are computed from the
// coordinate differences (exact zeros for equal points, no cancellation) and
// the exponential by ExpSlice's fast exp, fused in one pass over each row.
func (k RBF) Block(dst *mat.Dense, x, z mat.Matrix) {
	distBlock(dst, x, z, -1/(2*k.Sigma*k.Sigma), modeExp)
}

// BlockPoints stores K(X, P) in dst, as Block(dst, x, p.Dense()).
func (k RBF) BlockPoints(dst *mat.Dense, x mat.Matrix, p *Points) {
	distBlockPoints(dst, x, p, -1/(2*k.Sigma*k.Sigma), modeExp)
}

// String returns "rbf(sigma=...)".
func (k RBF) String() string { return fmt.Sprintf("rbf(sigma=%g)", k.Sigma) }

// Laplacian is the Laplacian kernel exp(-||x - z|| / Sigma), with the
// Euclidean norm, or with the L1 norm exp(-||x - z||_1 / Sigma) when L1 is
// set (the kernel whose random Fourier features are Cauchy).
type Laplacian struct {
	Sigma float64
	L1    bool
}

// Eval returns k(x, z).
func (k Laplacian) Eval(x, z []float64) float64 {
	if k.L1 {
		var s float64
		for i := range x {
			s += math.Abs(x[i] - z[i])
		}
		return math.Exp(-s / k.Sigma)
	}
	return math.Exp(-math.Sqrt(SqDist(x, z)) / k.Sigma)
}

// Block stores K(X, Z) in dst.
func (k Laplacian) Block(dst *mat.Dense, x, z mat.Matrix) {
	if k.L1 {
		distBlock(dst, x, z, -1/k.Sigma, modeExpL1)
		return
	}
	distBlock(dst, x, z, -1/k.Sigma, modeExpSqrt)
}

// BlockPoints stores K(X, P) in dst, as Block(dst, x, p.Dense()).
func (k Laplacian) BlockPoints(dst *mat.Dense, x mat.Matrix, p *Points) {
	if k.L1 {
		distBlockPoints(dst, x, p, -1/k.Sigma, modeExpL1)
		return
	}
	distBlockPoints(dst, x, p, -1/k.Sigma, modeExpSqrt)
}

// String returns "laplacian(sigma=...)" or "laplacian-l1(sigma=...)".
func (k Laplacian) String() string {
	if k.L1 {
		return fmt.Sprintf("laplacian-l1(sigma=%g)", k.Sigma)
	}
	return fmt.Sprintf("laplacian(sigma=%g)", k.Sigma)
}

// Linear is the linear kernel k(x, z) = x'z.
type Linear struct{}

// Eval returns x'z.
func (Linear) Eval(x, z []float64) float64 {
	var s float64
	for i := range x {
		s += x[i] * z[i]
	}
	return s
}

// Block stores X Z^T in dst.
func (Linear) Block(dst *mat.Dense, x, z mat.Matrix) {
	r, _ := x.Dims()
	s, _ := z.Dims()
	reuse(dst, r, s)
	dst.Mul(x, z.T())
}

// String returns "linear".
func (Linear) String() string { return "linear" }

// Delta is the delta kernel on class labels: l(y, y') = 1 if y == y', else 0.
// Its Gram matrix is Y Y^T with Y the one-hot label matrix.
type Delta struct{}

// Gram returns the n x n delta-kernel matrix of the labels.
func (Delta) Gram(labels []int) *mat.SymDense {
	n := len(labels)
	g := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if labels[i] == labels[j] {
				g.SetSym(i, j, 1)
			}
		}
	}
	return g
}

// OneHot returns the n x c one-hot matrix Y of the labels (Y Y^T is the
// delta-kernel Gram matrix).
func (Delta) OneHot(labels []int, c int) *mat.Dense {
	y := mat.NewDense(len(labels), c, nil)
	for p, l := range labels {
		y.Set(p, l, 1)
	}
	return y
}

// String returns "delta".
func (Delta) String() string { return "delta" }

// SqDist returns ||x - z||^2.
func SqDist(x, z []float64) float64 {
	var s float64
	for i := range x {
		d := x[i] - z[i]
		s += d * d
	}
	return s
}

// SqDistBlock stores the squared Euclidean distances between the rows of X
// (r x d) and Z (s x d) in dst (r x s). They are summed from the coordinate
// differences, sum_k (x_k - z_k)^2, so equal points are at distance exactly 0
// and there is no cancellation (unlike ||x||^2 + ||z||^2 - 2 x'z).
func SqDistBlock(dst *mat.Dense, x, z mat.Matrix) {
	distBlock(dst, x, z, 0, modeSqDist)
}

func sqNorm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

func reuse(dst *mat.Dense, r, c int) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if rr, cc := dst.Dims(); rr != r || cc != c {
		panic(fmt.Sprintf("kernel: destination is %d x %d, want %d x %d", rr, cc, r, c))
	}
}

func dense(m mat.Matrix) *mat.Dense {
	if d, ok := m.(*mat.Dense); ok {
		return d
	}
	return mat.DenseCopyOf(m)
}
