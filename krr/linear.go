package krr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/internal/gemm"
)

// Features is an n x m feature matrix Phi produced block by block, so that
// large n never needs Phi in memory.
//
// Implementations are safe for concurrent calls to Block.
type Features interface {
	// Len returns n, the number of rows.
	Len() int
	// Dim returns m, the number of features.
	Dim() int
	// Block stores rows lo..hi-1 of Phi in dst, which is (hi-lo) x m or
	// empty, in which case it is resized. It may panic if dst has another
	// shape or the range is outside [0, Len()): a programmer error, as in
	// gonum's mat.
	Block(dst *mat.Dense, lo, hi int)
}

// MapFeatures returns the features phi(x_i) of the rows of x under the map m.
// It returns an error if x is empty or does not have m.InputDim() columns.
func MapFeatures(m approx.Map, x *mat.Dense) (Features, error) {
	if x == nil || x.IsEmpty() {
		return nil, errors.New("krr: empty input matrix")
	}
	if _, d := x.Dims(); d != m.InputDim() {
		return nil, fmt.Errorf("krr: input has %d columns, map expects %d", d, m.InputDim())
	}
	return mapFeatures{m: m, x: x}, nil
}

type mapFeatures struct {
	m approx.Map
	x *mat.Dense
}

func (f mapFeatures) Len() int { r, _ := f.x.Dims(); return r }
func (f mapFeatures) Dim() int { return f.m.Dim() }
func (f mapFeatures) Block(dst *mat.Dense, lo, hi int) {
	_, d := f.x.Dims()
	f.m.Map(dst, f.x.Slice(lo, hi, 0, d).(*mat.Dense))
}

// Materialize returns Phi as a dense n x m matrix.
func Materialize(f Features) *mat.Dense {
	n, m := f.Len(), f.Dim()
	out := mat.NewDense(n, m, nil)
	for lo := 0; lo < n; lo += DefaultBlockRows {
		hi := min(lo+DefaultBlockRows, n)
		f.Block(out.Slice(lo, hi, 0, m).(*mat.Dense), lo, hi)
	}
	return out
}

// normalEquations is implemented by features that can form Phi'Phi and
// Phi'y faster than by blocks of rows (Distributional).
type normalEquations interface {
	normal(ctx context.Context, y []float64, blockRows int) (*mat.SymDense, []float64, error)
}

// Linear is a ridge regression on explicit features: f(x) = Mean + phi(x)'W.
type Linear struct {
	// W holds the m feature weights.
	W []float64
	// Mean is the fitted constant (0 unless Options.Center).
	Mean float64
}

// FitLinear solves the generalized ridge regression (2) of the package
// documentation, (Phi'Phi + Lambda R) w = Phi'(y - Mean), on the features
// f with targets y. Phi'Phi and Phi'y are accumulated over blocks of
// BlockRows rows on up to GOMAXPROCS goroutines; each block's sums are added
// in block order, so the result has the same bits for any GOMAXPROCS (for a
// given BlockRows). Time O(n m^2 + m^3), memory O(m^2) plus one block and
// one m x m accumulator per goroutine.
//
// It returns an error for mismatched lengths, non-finite targets or
// features (naming the row), a Penalty of the wrong size, or a system that
// is not numerically positive definite (increase Lambda).
func FitLinear(ctx context.Context, f Features, y []float64, o Options) (*Linear, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	n, m := f.Len(), f.Dim()
	if n != len(y) {
		return nil, fmt.Errorf("krr: %d feature rows but %d targets", n, len(y))
	}
	if n == 0 || m == 0 {
		return nil, fmt.Errorf("krr: empty features (%d x %d)", n, m)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("krr: y[%d] = %g is not finite", i, v)
		}
	}
	if o.Penalty != nil {
		if r := o.Penalty.SymmetricDim(); r != m {
			return nil, fmt.Errorf("krr: Penalty is %d x %d, want %d x %d", r, r, m, m)
		}
	}
	mean, yc := center(y, o.Center)

	var a *mat.SymDense
	var b []float64
	var err error
	if ne, ok := f.(normalEquations); ok {
		a, b, err = ne.normal(ctx, yc, o.blockRows())
	} else {
		a, b, err = accumulate(ctx, f, yc, o.blockRows())
	}
	if err != nil {
		return nil, err
	}
	for i := range m {
		for j := i; j < m; j++ {
			r := 0.0
			if o.Penalty != nil {
				r = o.Penalty.At(i, j)
			} else if i == j {
				r = 1
			}
			a.SetSym(i, j, a.At(i, j)+o.Lambda*r)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return nil, fmt.Errorf("krr: Phi'Phi + %g R (%d x %d) is not positive definite; increase Lambda", o.Lambda, m, m)
	}
	var w mat.VecDense
	if err := chol.SolveVecTo(&w, mat.NewVecDense(m, b)); err != nil {
		return nil, fmt.Errorf("krr: %v", err)
	}
	return &Linear{W: w.RawVector().Data, Mean: mean}, nil
}

// accumulate returns Phi'Phi and Phi'y over blocks of rows, summed in a
// fixed order (reduceChunks): the same bits for any GOMAXPROCS.
func accumulate(ctx context.Context, f Features, y []float64, rows int) (*mat.SymDense, []float64, error) {
	n, m := f.Len(), f.Dim()
	acc, err := reduceChunks(ctx, n, rows, m*m+m, func() func(acc []float64, lo, hi int) error {
		buf := mat.NewDense(min(rows, n), m, nil)
		return func(acc []float64, lo, hi int) error {
			phi := buf.Slice(0, hi-lo, 0, m).(*mat.Dense)
			f.Block(phi, lo, hi)
			raw := phi.RawMatrix()
			for i := range hi - lo {
				for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+m] {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return fmt.Errorf("krr: feature [%d, %d] = %g is not finite", lo+i, j, v)
					}
				}
			}
			gemm.Syrk(blas.Trans, raw, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: acc[:m*m]})
			blas64.Gemv(blas.Trans, 1, raw, blas64.Vector{N: hi - lo, Inc: 1, Data: y[lo:hi]}, 1, blas64.Vector{N: m, Inc: 1, Data: acc[m*m:]})
			return nil
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return mat.NewSymDense(m, acc[:m*m:m*m]), acc[m*m:], nil
}

// Predict returns Mean + Phi W for the features f, computed over blocks of
// DefaultBlockRows rows (each row on its own, so the result does not depend
// on GOMAXPROCS). It returns an error if f.Dim() != len(W).
func (l *Linear) Predict(f Features) ([]float64, error) {
	n, m := f.Len(), f.Dim()
	if m != len(l.W) {
		return nil, fmt.Errorf("krr: features have %d columns, model has %d weights", m, len(l.W))
	}
	out := make([]float64, n)
	nblocks := (n + DefaultBlockRows - 1) / DefaultBlockRows
	workers := max(1, min(runtime.GOMAXPROCS(0), nblocks))
	w := mat.NewVecDense(m, l.W)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			var phi mat.Dense
			for blk := k; blk < nblocks; blk += workers {
				lo := blk * DefaultBlockRows
				hi := min(lo+DefaultBlockRows, n)
				phi.Reset()
				f.Block(&phi, lo, hi)
				v := mat.NewVecDense(hi-lo, out[lo:hi])
				v.MulVec(&phi, w)
				for i := lo; i < hi; i++ {
					out[i] += l.Mean
				}
			}
		})
	}
	wg.Wait()
	return out, nil
}
