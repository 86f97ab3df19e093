// Package approx defines the common face of the low-rank feature maps that
// approximate a kernel, K ~ Phi Phi^T (Nystrom, random Fourier features),
// and the tools to judge an approximation against the exact kernel.
package approx

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// Map is a feature map phi: R^d -> R^m with k(x, z) ~ phi(x)'phi(z).
//
// Implementations are safe for concurrent use by multiple goroutines.
type Map interface {
	// InputDim returns d.
	InputDim() int
	// Dim returns m, the number of features.
	Dim() int
	// Map stores phi(x_i) in row i of dst for each row x_i of x (r x d).
	// dst must be r x Dim(), or empty, in which case it is resized.
	Map(dst, x *mat.Dense)
}

// Factored is implemented by maps that are a fixed linear transform of a
// cheaper raw map: phi(x) = T^T raw(x), with T a RawDim x Dim matrix. Sums
// of features can then be accumulated in raw coordinates and transformed
// once at the end (docs/MATH.md, "4. Sufficient statistics": for Nystrom,
// raw(x) is the kernel row k_m(x) and T = K_mm^{-1/2}).
type Factored interface {
	Map
	// RawDim returns the dimension of the raw map.
	RawDim() int
	// MapRaw stores raw(x_i) in row i of dst (r x RawDim(), or empty).
	MapRaw(dst, x *mat.Dense)
	// Transform returns T (RawDim x Dim). The caller must not modify it.
	Transform() *mat.Dense
}

// KernelRows is the map x -> [k(x, z_1) ... k(x, z_m)] on fixed points Z
// (m x d). It is the exact kernel expansion used by the exact path: with Z
// the training points, Phi = K and a linear functional of Phi is a kernel
// expansion.
type KernelRows struct {
	Kernel kernel.Kernel
	Points *mat.Dense
}

// InputDim returns d.
func (k KernelRows) InputDim() int { _, d := k.Points.Dims(); return d }

// Dim returns the number of points.
func (k KernelRows) Dim() int { m, _ := k.Points.Dims(); return m }

// Map stores K(X, Z) in dst.
func (k KernelRows) Map(dst, x *mat.Dense) {
	if _, d := x.Dims(); d != k.InputDim() {
		panic(fmt.Sprintf("approx: input has %d columns, map expects %d", d, k.InputDim()))
	}
	k.Kernel.Block(dst, x, k.Points)
}
