package lanczos

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Operator is a linear operator on R^n, y = A x. The solvers in this package
// require it to be symmetric.
//
// Apply must store A x in dst (len n) without modifying x and without
// keeping either slice; dst and x never overlap. Apply is called from a
// single goroutine per solve, but the same Operator may be used by several
// concurrent solves, so it must not mutate shared state without locking.
type Operator interface {
	// Dim returns n.
	Dim() int
	// Apply stores A x in dst.
	Apply(dst, x []float64)
}

// Dense returns the operator x -> A x for a symmetric matrix. For a
// *mat.SymDense it uses the BLAS routine Dsymv directly.
func Dense(a mat.Symmetric) Operator {
	if s, ok := a.(*mat.SymDense); ok {
		return symDense{s.RawSymmetric()}
	}
	return matSym{a}
}

type symDense struct{ a blas64.Symmetric }

func (s symDense) Dim() int { return s.a.N }
func (s symDense) Apply(dst, x []float64) {
	n := s.a.N
	blas64.Implementation().Dsymv(s.a.Uplo, n, 1, s.a.Data, s.a.Stride, x, 1, 0, dst, 1)
}

type matSym struct{ a mat.Symmetric }

func (s matSym) Dim() int { return s.a.SymmetricDim() }
func (s matSym) Apply(dst, x []float64) {
	n := s.a.SymmetricDim()
	mat.NewVecDense(n, dst).MulVec(s.a, mat.NewVecDense(n, x))
}

// Func returns the operator of dimension n that calls f(dst, x) to compute
// dst = A x. It is the matrix-free adapter.
func Func(n int, f func(dst, x []float64)) Operator {
	if n < 1 {
		panic(fmt.Sprintf("lanczos: Func dimension %d < 1", n))
	}
	return funcOp{n, f}
}

type funcOp struct {
	n int
	f func(dst, x []float64)
}

func (o funcOp) Dim() int               { return o.n }
func (o funcOp) Apply(dst, x []float64) { o.f(dst, x) }

// LowRank is the structured operator A = Alpha I + U diag(S) U^T, with U an
// n x r matrix (not necessarily orthonormal) and S of length r (nil means all
// ones, A = Alpha I + U U^T). One Apply costs 4 n r flops and needs r
// scratch values, allocated per call so that the operator is safe for
// concurrent use.
//
// With Alpha = 0 and S = nil it is the Gram-type operator U U^T; with a
// positive Alpha it is the identity-plus-low-rank matrix B of DICA.
type LowRank struct {
	Alpha float64
	U     *mat.Dense
	S     []float64
}

// Dim returns the number of rows of U.
func (l LowRank) Dim() int { r, _ := l.U.Dims(); return r }

// Apply stores (Alpha I + U diag(S) U^T) x in dst.
func (l LowRank) Apply(dst, x []float64) {
	u := l.U.RawMatrix()
	t := make([]float64, u.Cols)
	bl := blas64.Implementation()
	bl.Dgemv(blas.Trans, u.Rows, u.Cols, 1, u.Data, u.Stride, x, 1, 0, t, 1)
	if l.S != nil {
		for i := range t {
			t[i] *= l.S[i]
		}
	}
	copy(dst, x)
	bl.Dgemv(blas.NoTrans, u.Rows, u.Cols, 1, u.Data, u.Stride, t, 1, l.Alpha, dst, 1)
}
