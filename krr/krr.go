// Package krr fits kernel ridge regression, equivalently the posterior mean
// of Gaussian-process regression, on (DICA-projected) features.
//
// For training pairs (x_i, y_i), i = 1..n, a kernel k and a ridge
// Lambda >= 0, kernel ridge regression minimizes
//
//	sum_i (y_i - f(x_i))^2 + Lambda ||f||_H^2
//
// over the RKHS H of k. By the representer theorem f(x) = k(x, X) alpha with
//
//	alpha = (K + Lambda I)^{-1} y,                                   (1)
//
// which is also the posterior mean of a GP with covariance k and Gaussian
// observation noise of variance Lambda. With Center set, a constant mean
// m = mean(y) is fitted first: f(x) = m + k(x, X)(K + Lambda I)^{-1}(y - m).
//
// FitExact solves (1) by a Cholesky factorization, O(n^3) time and O(n^2)
// memory, for n up to a few thousand. FitLinear is the path for large n: it
// takes explicit features Phi (n x m, from any approx.Map such as a
// Nystrom or random Fourier map, or from Distributional) and solves the
// generalized ridge regression
//
//	min_w ||y - Phi w||^2 + Lambda w'Rw,  (Phi'Phi + Lambda R) w = Phi'y,   (2)
//
// with R = I unless a Penalty is given, accumulating Phi'Phi and Phi'y over
// row blocks in O(n m^2) time and O(m^2) memory. Predictions are Phi(x) w.
//
// Ridge mapping between (1) and (2). If Phi Phi' = K exactly (for example
// the Nystrom map with all training points as landmarks), (2) with R = I and
// the same Lambda gives exactly the predictions of (1), since
// Phi(Phi'Phi + Lambda I)^{-1}Phi' = K(K + Lambda I)^{-1}. For the kernel
// rows on points Z (approx.KernelRows, Phi = k(X, Z)) use R = K_ZZ: (2) is
// then the subset-of-regressors (Nystrom) KRR with f = k(., Z) w and
// ||f||_H^2 = w'K_ZZ w, and with Z = X it reduces to (K K + Lambda K) w = K y,
// that is w = alpha of (1).
//
// Distributional builds the features of the paper's product kernel
// k1(P, Q) k2(x, x') on (domain, point) pairs, so that the same linear
// solver fits the distributional regression; Exact.Variance gives the GP
// posterior variance.
package krr

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// Options configures a fit.
type Options struct {
	// Lambda is the ridge parameter (the GP noise variance); it must be
	// finite and >= 0. With Lambda = 0 the exact path interpolates and
	// needs a positive definite Gram matrix.
	Lambda float64
	// Center fits the constant mean(y) before the kernel part.
	Center bool
	// Penalty is the matrix R of the generalized ridge (2) (FitLinear only;
	// nil means the identity). It must be m x m.
	Penalty mat.Symmetric
	// BlockRows is the number of rows per block of features (FitLinear and
	// predictions; 0 means DefaultBlockRows).
	BlockRows int
}

// DefaultBlockRows is the default number of feature rows per block.
const DefaultBlockRows = 2048

func (o Options) check() error {
	if !(o.Lambda >= 0) || math.IsInf(o.Lambda, 1) {
		return fmt.Errorf("krr: Lambda = %g, want finite Lambda >= 0", o.Lambda)
	}
	if o.BlockRows < 0 {
		return fmt.Errorf("krr: BlockRows = %d, want >= 0", o.BlockRows)
	}
	return nil
}

func (o Options) blockRows() int {
	if o.BlockRows == 0 {
		return DefaultBlockRows
	}
	return o.BlockRows
}

// Exact is a kernel ridge regression fitted by the exact solve (1).
type Exact struct {
	// Kernel is the kernel k.
	Kernel kernel.Kernel
	// X holds the training inputs (n x d), a copy.
	X *mat.Dense
	// Alpha holds the n expansion coefficients (K + Lambda I)^{-1}(y - Mean).
	Alpha []float64
	// Mean is the fitted constant (0 unless Options.Center).
	Mean float64

	chol mat.Cholesky // of K + Lambda I
}

// FitExact fits f(x) = Mean + k(x, X) alpha with alpha from (1) by a Cholesky
// factorization of K + Lambda I. It returns an error for mismatched shapes,
// NaN or Inf values (naming where), a bad Lambda, or a Gram matrix that is
// not numerically positive definite (increase Lambda).
func FitExact(x *mat.Dense, y []float64, k kernel.Kernel, o Options) (*Exact, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	n, _, err := checkXY(x, y)
	if err != nil {
		return nil, err
	}
	mean, yc := center(y, o.Center)
	g := mat.NewDense(n, n, nil)
	k.Block(g, x, x)
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			// Symmetrize: Block is symmetric only up to rounding.
			sym.SetSym(i, j, (g.At(i, j)+g.At(j, i))/2)
		}
		sym.SetSym(i, i, sym.At(i, i)+o.Lambda)
	}
	e := &Exact{Kernel: k, X: mat.DenseCopyOf(x), Mean: mean}
	if !e.chol.Factorize(sym) {
		return nil, fmt.Errorf("krr: K + %g I is not positive definite (%d points, kernel %v); increase Lambda", o.Lambda, n, k)
	}
	var a mat.VecDense
	if err := e.chol.SolveVecTo(&a, mat.NewVecDense(n, yc)); err != nil {
		return nil, fmt.Errorf("krr: %v", err)
	}
	e.Alpha = a.RawVector().Data
	return e, nil
}

// Variance returns the GP posterior variance of the latent function,
// k(x_i, x_i) - k(x_i, X)(K + Lambda I)^{-1} k(X, x_i), for the rows of x
// (add Lambda for the predictive variance of a noisy observation). It
// returns an error if x is empty or has the wrong number of columns.
func (e *Exact) Variance(x *mat.Dense) ([]float64, error) {
	r, d, err := e.checkInput(x)
	if err != nil {
		return nil, err
	}
	out := make([]float64, r)
	var kb, sol mat.Dense
	for lo := 0; lo < r; lo += DefaultBlockRows {
		hi := min(lo+DefaultBlockRows, r)
		kb.Reset()
		e.Kernel.Block(&kb, e.X, x.Slice(lo, hi, 0, d))
		sol.Reset()
		if err := e.chol.SolveTo(&sol, &kb); err != nil {
			return nil, fmt.Errorf("krr: %v", err)
		}
		n, _ := kb.Dims()
		for c := range hi - lo {
			xi := x.RawRowView(lo + c)
			v := e.Kernel.Eval(xi, xi)
			for j := range n {
				v -= kb.At(j, c) * sol.At(j, c)
			}
			out[lo+c] = v
		}
	}
	return out, nil
}

// Predict returns f(x_i) = Mean + k(x_i, X) alpha for the rows of x, computed
// over blocks of DefaultBlockRows rows. It returns an error if x is empty or
// has the wrong number of columns.
func (e *Exact) Predict(x *mat.Dense) ([]float64, error) {
	r, d, err := e.checkInput(x)
	if err != nil {
		return nil, err
	}
	out := make([]float64, r)
	alpha := mat.NewVecDense(len(e.Alpha), e.Alpha)
	var kb mat.Dense
	for lo := 0; lo < r; lo += DefaultBlockRows {
		hi := min(lo+DefaultBlockRows, r)
		kb.Reset()
		e.Kernel.Block(&kb, x.Slice(lo, hi, 0, d), e.X)
		f := mat.NewVecDense(hi-lo, out[lo:hi])
		f.MulVec(&kb, alpha)
		for i := lo; i < hi; i++ {
			out[i] += e.Mean
		}
	}
	return out, nil
}

// checkInput validates prediction inputs against the training inputs.
func (e *Exact) checkInput(x *mat.Dense) (r, d int, err error) {
	if x == nil || x.IsEmpty() {
		return 0, 0, errors.New("krr: empty input matrix")
	}
	r, d = x.Dims()
	if _, dx := e.X.Dims(); d != dx {
		return 0, 0, fmt.Errorf("krr: input has %d columns, model expects %d", d, dx)
	}
	return r, d, nil
}

// RMSE returns sqrt(mean((pred_i - truth_i)^2)), or NaN for empty slices.
//
// RMSE panics if the lengths differ: like the functions of gonum's floats
// and stat packages it treats two slices of different lengths as a
// programmer error (the predictions of a model have one value per input row).
func RMSE(pred, truth []float64) float64 {
	if len(pred) != len(truth) {
		panic(fmt.Sprintf("krr: %d predictions for %d targets", len(pred), len(truth)))
	}
	if len(pred) == 0 {
		return math.NaN()
	}
	var s float64
	for i, p := range pred {
		d := p - truth[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(pred)))
}

// checkXY validates the training data.
func checkXY(x *mat.Dense, y []float64) (n, d int, err error) {
	if x == nil || x.IsEmpty() {
		return 0, 0, errors.New("krr: empty input matrix")
	}
	n, d = x.Dims()
	if n != len(y) {
		return 0, 0, fmt.Errorf("krr: %d rows in x but %d targets", n, len(y))
	}
	if err := checkFinite(x); err != nil {
		return 0, 0, err
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("krr: y[%d] = %g is not finite", i, v)
		}
	}
	return n, d, nil
}

func checkFinite(x *mat.Dense) error {
	r, _ := x.Dims()
	for i := range r {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("krr: x[%d, %d] = %g is not finite", i, j, v)
			}
		}
	}
	return nil
}

// center returns the mean of y (0 unless c) and y minus it.
func center(y []float64, c bool) (float64, []float64) {
	var m float64
	if c {
		for _, v := range y {
			m += v
		}
		m /= float64(len(y))
	}
	yc := make([]float64, len(y))
	for i, v := range y {
		yc[i] = v - m
	}
	return m, yc
}
