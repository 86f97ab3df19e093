package lanczos

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

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

// Dense returns the operator x -> A x for a symmetric matrix.
//
// For a *mat.SymDense of order at least 256 the adapter keeps a full
// row-major copy of A (n^2 extra floats) and computes products by Dgemv on
// fixed blocks of rows, in parallel on up to GOMAXPROCS goroutines: about
// three times faster than Dsymv on the triangle, and bit-identical
// whatever the number of goroutines. Smaller ones use Dsymv directly.
func Dense(a mat.Symmetric) Operator {
	if s, ok := a.(*mat.SymDense); ok {
		raw := s.RawSymmetric()
		if raw.N < 256 {
			return symDense{raw}
		}
		n := raw.N
		full := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var v float64
				if raw.Uplo == blas.Upper {
					v = raw.Data[i*raw.Stride+j]
				} else {
					v = raw.Data[j*raw.Stride+i]
				}
				full[i*n+j] = v
				full[j*n+i] = v
			}
		}
		return fullDense{n: n, data: full}
	}
	return matSym{a}
}

type symDense struct{ a blas64.Symmetric }

func (s symDense) Dim() int { return s.a.N }
func (s symDense) Apply(dst, x []float64) {
	n := s.a.N
	blas64.Implementation().Dsymv(s.a.Uplo, n, 1, s.a.Data, s.a.Stride, x, 1, 0, dst, 1)
}

// fullDense is a symmetric matrix stored in full, multiplied by row blocks.
type fullDense struct {
	n    int
	data []float64
}

const denseBlock = 128 // rows per parallel block

func (f fullDense) Dim() int { return f.n }
func (f fullDense) Apply(dst, x []float64) {
	n := f.n
	nb := (n + denseBlock - 1) / denseBlock
	workers := min(runtime.GOMAXPROCS(0), nb)
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		bl := blas64.Implementation()
		for {
			b := int(next.Add(1) - 1)
			if b >= nb {
				return
			}
			r0 := b * denseBlock
			r1 := min(r0+denseBlock, n)
			bl.Dgemv(blas.NoTrans, r1-r0, n, 1, f.data[r0*n:r1*n], n, x, 1, 0, dst[r0:r1], 1)
		}
	}
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
}

type matSym struct{ a mat.Symmetric }

func (s matSym) Dim() int { return s.a.SymmetricDim() }
func (s matSym) Apply(dst, x []float64) {
	n := s.a.SymmetricDim()
	mat.NewVecDense(n, dst).MulVec(s.a, mat.NewVecDense(n, x))
}

// Func returns the operator of dimension n that calls f(dst, x) to compute
// dst = A x. It is the matrix-free adapter. Func does not validate its
// arguments: the solvers return an error for an operator of dimension n < 1
// or a nil f.
func Func(n int, f func(dst, x []float64)) Operator {
	return funcOp{n, f}
}

// checkOp returns an error for a nil operator, a Func operator with a nil
// function, or a dimension below 1; name says which operator.
func checkOp(a Operator, name string) error {
	if a == nil {
		return fmt.Errorf("lanczos: nil operator %s", name)
	}
	if f, ok := a.(funcOp); ok && f.f == nil {
		return fmt.Errorf("lanczos: operator %s is Func(%d, nil)", name, f.n)
	}
	if n := a.Dim(); n < 1 {
		return fmt.Errorf("lanczos: operator %s has dimension %d < 1", name, n)
	}
	return nil
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

// UUT returns the operator U U^T (n x n for U n x r), the Gram-type
// low-rank operator of DICA (rank <= r: see ReachableSpaceExhausted).
func UUT(u *mat.Dense) Operator { return LowRank{U: u} }

// LowRankPlusDiag returns the operator alpha I + U U^T, the
// identity-plus-low-rank matrix B of DICA.
func LowRankPlusDiag(alpha float64, u *mat.Dense) Operator { return LowRank{Alpha: alpha, U: u} }
