// Package svm trains linear support vector machines by dual coordinate
// descent, the algorithm of LIBLINEAR (Hsieh, Chang, Lin, Keerthi and
// Sundararajan, "A Dual Coordinate Descent Method for Large-scale Linear
// SVM", ICML 2008), for classifying DICA-projected features.
//
// For labels y_i in {-1, +1} and augmented inputs x~_i = [x_i, B] (B the bias
// feature, as LIBLINEAR -B), the primal problem is
//
//	min_w  1/2 w'w + C sum_i xi(w; x~_i, y_i)
//
// with the hinge (L1) loss xi = max(0, 1 - y_i w'x~_i) or the squared hinge
// (L2) loss xi = max(0, 1 - y_i w'x~_i)^2. The dual is
//
//	min_a  f(a) = 1/2 a'(Q + D)a - e'a   subject to 0 <= a_i <= U,
//
// Q_ij = y_i y_j x~_i'x~_j, with U = C, D = 0 for the hinge loss and
// U = inf, D = I/(2C) for the squared hinge loss. Coordinate descent keeps
// w = sum_i y_i a_i x~_i, so each coordinate step costs O(d): the gradient
// is G_i = y_i w'x~_i - 1 + D_ii a_i and a_i <- min(max(a_i - G_i/Q~_ii, 0), U).
// Coordinates are visited in a random permutation each epoch; optional
// shrinking removes bound variables whose projected gradient is beyond the
// previous epoch's extremes (Section 3 of the paper, as LIBLINEAR's
// solve_l2r_l1l2_svc). Iteration stops when the spread of the projected
// gradient, max PG - min PG, is at most Tol (LIBLINEAR's eps, default 0.1).
//
// Multiclass problems are solved one-vs-rest, as LIBLINEAR does by default,
// with the classes trained concurrently.
//
// The same squared-hinge problem can also be solved in the primal by a
// generalized Newton method (Solver Primal, the default through Auto for
// up to AutoPrimalMaxDim features), which is far faster when n >> d.
package svm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/enum"
)

// Loss selects the loss function of the primal problem.
type Loss int

const (
	// SquaredHinge is the L2 loss max(0, 1 - y w'x)^2 (LIBLINEAR -s 1, the
	// default).
	SquaredHinge Loss = iota
	// Hinge is the L1 loss max(0, 1 - y w'x) (LIBLINEAR -s 3).
	Hinge
)

var lossNames = enum.Names[Loss]{Type: "Loss", Names: []string{SquaredHinge: "squared-hinge", Hinge: "hinge"}}

// String returns the name of the loss ("squared-hinge", "hinge").
func (l Loss) String() string { return lossNames.String(l) }

// Solver selects the optimization method.
type Solver int

const (
	// Auto, the default, picks Primal for the squared hinge loss when the
	// number of features is at most AutoPrimalMaxDim, and Dual otherwise.
	// On data with n >> d and overlapping classes the dual method can need
	// thousands of epochs (LIBLINEAR then warns that it reached the maximum
	// number of iterations and that -s 2 may be faster), while the primal
	// Newton method converges in a few iterations (BenchmarkTrain200kx10x4
	// compares them on 200,000 points of 4 overlapping classes).
	Auto Solver = iota
	// Dual is dual coordinate descent (LIBLINEAR -s 1 and -s 3).
	Dual
	// Primal is the generalized Newton method on the primal squared-hinge
	// problem (the problem of LIBLINEAR -s 2, which uses a trust-region
	// Newton method with conjugate gradients; here the (d+1) x (d+1)
	// generalized Hessian I + 2C sum_{i in I} x~_i x~_i' is formed and
	// factorized exactly, with I the margin violators, and the step is
	// chosen by backtracking on the piecewise-quadratic objective). Each
	// iteration costs O(n d^2), and a few tens of iterations reach the
	// optimum, so it is much faster than Dual when n >> d and the classes
	// overlap (many support vectors). It supports SquaredHinge only. The
	// stopping rule is LIBLINEAR's for -s 2:
	// ||grad f(w)|| <= Tol * max(1, min(#pos, #neg)) / n * ||grad f(0)||.
	Primal
)

var solverNames = enum.Names[Solver]{Type: "Solver", Names: []string{Auto: "auto", Dual: "dual", Primal: "primal"}}

// String returns the name of the solver ("auto", "dual", "primal").
func (s Solver) String() string { return solverNames.String(s) }

// Default option values, those of LIBLINEAR.
const (
	DefaultC   = 1.0
	DefaultTol = 0.1
	// DefaultPrimalTol is the default Tol of the Primal solver (LIBLINEAR's
	// eps for -s 2).
	DefaultPrimalTol = 0.01
	// AutoPrimalMaxDim is the largest number of features for which Auto
	// chooses the Primal solver (its Hessian is (d+1) x (d+1)).
	AutoPrimalMaxDim = 256
	DefaultMaxEpochs = 1000
	DefaultBias      = 1.0
)

// Options configures training. The zero value gives the problem of
// LIBLINEAR "-s 1 -B 1" (C = 1, squared hinge loss, bias feature 1); with
// Solver: Dual it is also LIBLINEAR's method (Tol = 0.1, at most 1000
// epochs, shrinking on), while the default Auto solves it in the primal for
// small d (see Auto).
type Options struct {
	// C is the cost of the loss term; 0 means DefaultC. It must not be
	// negative.
	C float64
	// Loss is the loss function; the zero value is SquaredHinge.
	Loss Loss
	// Solver is the optimization method; the zero value is Auto.
	Solver Solver
	// Tol is the stopping tolerance: for Dual, on max PG - min PG (the
	// spread of the projected gradient over an epoch), 0 meaning
	// DefaultTol; for Primal, on the relative gradient norm (see Primal), 0
	// meaning DefaultPrimalTol.
	Tol float64
	// MaxEpochs bounds the number of passes over the data (Newton
	// iterations for Primal); 0 means DefaultMaxEpochs. Reaching it is not an error (LIBLINEAR warns); the
	// Binary.Converged field reports it.
	MaxEpochs int
	// Bias is the value B of the constant feature appended to every input;
	// its weight is the intercept divided by B and is regularized like the
	// other weights (LIBLINEAR -B). 0 means DefaultBias; a negative value
	// means no bias feature (LIBLINEAR -B -1).
	Bias float64
	// NoShrink disables shrinking.
	NoShrink bool
	// KeepAlpha asks the Primal solver for the dual variables
	// (Binary.Alpha), an n-vector per machine; without it the Primal
	// solver leaves Alpha nil. The Dual solver always returns them.
	KeepAlpha bool
	// Seed seeds the PCG generator of the per-epoch permutations. Class k of
	// a one-vs-rest model uses the stream rand.NewPCG(Seed, k).
	Seed uint64
	// Init, when not nil, warm-starts the Primal solver: each machine
	// starts from the weights of Init's machine of the same class instead
	// of zero, as LIBLINEAR does along a path of costs (its parameter
	// search, -C). Init must have the same classes and the same bias
	// feature, and at most as many features as the inputs: a model trained
	// on the first d' < d features starts the weights of the others at
	// zero (a warm start along the number of features). A class Init has
	// no machine for starts at zero. The stopping rule stays relative to
	// the gradient at zero, so a warm start changes the solution only
	// within the tolerance. A warm start with the Dual solver is an error.
	Init *Model
}

func (o Options) withDefaults() (Options, error) {
	if o.C == 0 {
		o.C = DefaultC
	}
	if !(o.C > 0) || math.IsInf(o.C, 1) {
		return o, fmt.Errorf("svm: C = %g, want finite C > 0", o.C)
	}
	if o.Loss != SquaredHinge && o.Loss != Hinge {
		return o, fmt.Errorf("svm: unknown loss %d", int(o.Loss))
	}
	switch o.Solver {
	case Auto, Dual:
	case Primal:
		if o.Loss != SquaredHinge {
			return o, fmt.Errorf("svm: the primal solver supports the squared hinge loss only, not %v", o.Loss)
		}
	default:
		return o, fmt.Errorf("svm: unknown solver %d", int(o.Solver))
	}
	if !(o.Tol >= 0) {
		return o, fmt.Errorf("svm: Tol = %g, want Tol >= 0 (0 for the default)", o.Tol)
	}
	if o.MaxEpochs == 0 {
		o.MaxEpochs = DefaultMaxEpochs
	}
	if o.MaxEpochs < 0 {
		return o, fmt.Errorf("svm: MaxEpochs = %d, want > 0", o.MaxEpochs)
	}
	if o.Bias == 0 {
		o.Bias = DefaultBias
	}
	if math.IsNaN(o.Bias) || math.IsInf(o.Bias, 0) {
		return o, fmt.Errorf("svm: Bias = %g, want finite", o.Bias)
	}
	return o, nil
}

// Binary is a trained two-class linear SVM: the decision function is
// f(x) = W'x + Intercept, with Intercept = w_B * B the weight of the bias
// feature times its value.
type Binary struct {
	// W holds the d input weights.
	W []float64
	// Intercept is w_B * B (0 without a bias feature).
	Intercept float64
	// Alpha holds the n dual variables at the solution; the primal weights
	// are [W, w_B] = sum_i y_i Alpha_i [x_i, B]. The Dual solver always
	// returns them; the Primal solver only with Options.KeepAlpha (else
	// Alpha is nil), as the dual point given by the optimality conditions,
	// Alpha_i = 2C max(0, 1 - y_i f(x_i)).
	Alpha []float64
	// Epochs is the number of passes over the (active) data, or of Newton
	// iterations.
	Epochs int
	// Converged reports whether the stopping rule (for Dual,
	// max PG - min PG <= Tol on the full set of variables) was met within
	// MaxEpochs.
	Converged bool
}

// Decision returns f(x) = W'x + Intercept for the d-vector x.
//
// Decision panics if len(x) != len(W): a programmer error, as for gonum's
// floats.Dot (check the input matrix once, or use Model.Decision, which
// returns an error).
func (b *Binary) Decision(x []float64) float64 {
	if len(x) != len(b.W) {
		panic(fmt.Sprintf("svm: input has length %d, model expects %d", len(x), len(b.W)))
	}
	s := b.Intercept
	for j, w := range b.W {
		s += w * x[j]
	}
	return s
}

// Model is a one-vs-rest multiclass linear SVM.
type Model struct {
	// NClass is the number of classes; labels are 0..NClass-1.
	NClass int
	// Dim is the number of input features d.
	Dim int
	// W is NClass x d; row k holds the weights of class k against the rest.
	// For two classes a single binary machine is trained (as LIBLINEAR), with
	// class 1 positive; row 1 holds its weights and row 0 their negation.
	W *mat.Dense
	// Intercept holds the NClass intercepts, with the same convention as W.
	Intercept []float64
	// Present reports which classes occur in the training labels. Absent
	// classes get decision value -Inf and are never predicted.
	Present []bool
	// Machines holds the binary machines trained (one per present class, or
	// one for two classes), indexed by class (nil for absent classes, and for
	// class 0 in the two-class case).
	Machines []*Binary
}

// Train trains a one-vs-rest linear SVM on the rows of x (n x d) with labels
// y in 0..nclass-1. Classes are trained concurrently. It returns an error for
// mismatched shapes, labels out of range, NaN or Inf inputs (naming the row
// and column), fewer than two classes present, or invalid options.
func Train(ctx context.Context, x *mat.Dense, y []int, nclass int, o Options) (*Model, error) {
	if _, err := o.withDefaults(); err != nil {
		return nil, err
	}
	pb, err := NewProblem(x, y, nclass, o.Bias)
	if err != nil {
		return nil, err
	}
	return pb.Train(ctx, o)
}

// TrainBinary trains a two-class linear SVM on the rows of x (n x d) with
// labels y_i in {-1, +1}. Errors are as for Train; both labels must occur.
func TrainBinary(ctx context.Context, x *mat.Dense, y []float64, o Options) (*Binary, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	n, _, err := check(x, len(y))
	if err != nil {
		return nil, err
	}
	var pos, neg bool
	labels := make([]int, n)
	for i, v := range y {
		switch v {
		case 1:
			pos = true
			labels[i] = 1
		case -1:
			neg = true
		default:
			return nil, fmt.Errorf("svm: label y[%d] = %g, want -1 or +1", i, v)
		}
	}
	if !pos || !neg {
		return nil, fmt.Errorf("svm: only one class present in %d labels, need both -1 and +1", n)
	}
	pb, err := NewProblem(x, labels, 2, o.Bias)
	if err != nil {
		return nil, err
	}
	if o, err = pb.resolve(o); err != nil {
		return nil, err
	}
	return pb.machine(ctx, y, 1, 0, o)
}

// check validates x against n labels and returns its shape.
func check(x *mat.Dense, nlabels int) (n, d int, err error) {
	n, d, err = checkShape(x, nlabels)
	if err != nil {
		return 0, 0, err
	}
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, notFinite(i, j, v)
			}
		}
	}
	return n, d, nil
}

// checkShape is check without the check of the values.
func checkShape(x *mat.Dense, nlabels int) (n, d int, err error) {
	if x == nil || x.IsEmpty() {
		return 0, 0, errors.New("svm: empty input matrix")
	}
	n, d = x.Dims()
	if n != nlabels {
		return 0, 0, fmt.Errorf("svm: %d rows in x but %d labels", n, nlabels)
	}
	return n, d, nil
}

// notFinite is the error of check for the value v at x[i, j].
func notFinite(i, j int, v float64) error {
	return fmt.Errorf("svm: x[%d, %d] = %g is not finite", i, j, v)
}

// solveDual is the dual coordinate descent of LIBLINEAR's
// solve_l2r_l1l2_svc: epochs over the variables in a random order (the PCG
// stream (o.Seed, stream)), with shrinking, until the spread of the
// projected gradient over an epoch is at most o.Tol on all the variables.
func solveDual(ctx context.Context, x *mat.Dense, y []float64, o Options, stream uint64) (*Binary, error) {
	n := len(y)
	s := newDualCD(x, y, o)
	rng := rand.New(rand.NewPCG(o.Seed, stream))
	pgMaxOld, pgMinOld := math.Inf(1), math.Inf(-1)
	res := &Binary{}
	epoch := 0
	for epoch < o.MaxEpochs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pgMaxNew, pgMinNew := s.epoch(rng, pgMaxOld, pgMinOld)
		epoch++
		if pgMaxNew-pgMinNew <= o.Tol {
			if s.active == n {
				res.Converged = true
				break
			}
			// Converged on the shrunk problem: recheck all variables.
			s.active = n
			pgMaxOld, pgMinOld = math.Inf(1), math.Inf(-1)
			continue
		}
		pgMaxOld, pgMinOld = pgMaxNew, pgMinNew
		if pgMaxOld <= 0 {
			pgMaxOld = math.Inf(1)
		}
		if pgMinOld >= 0 {
			pgMinOld = math.Inf(-1)
		}
	}
	res.W = s.w
	if s.hasBias {
		res.Intercept = s.wb * s.bias
	}
	res.Alpha = s.alpha
	res.Epochs = epoch
	return res, nil
}

// dualCD is the state of the dual coordinate descent: the weights w (and wb,
// that of the bias feature) kept equal to sum_i alpha_i y_i x~_i, the dual
// variables alpha in [0, upper], the diagonal qd of the dual Hessian, and
// the order of the variables, the first active of which are not shrunk.
type dualCD struct {
	data        []float64 // rows of X
	stride, d   int
	y           []float64
	bias        float64 // B, the value of the bias feature
	hasBias     bool
	upper, diag float64
	shrink      bool
	w           []float64
	wb          float64
	alpha, qd   []float64
	index       []int
	active      int
}

// newDualCD returns the state at alpha = 0 for the problem of o.
func newDualCD(x *mat.Dense, y []float64, o Options) *dualCD {
	n, d := x.Dims()
	raw := x.RawMatrix()
	s := &dualCD{data: raw.Data, stride: raw.Stride, d: d, y: y, bias: o.Bias, hasBias: o.Bias > 0,
		upper: o.C, shrink: !o.NoShrink, w: make([]float64, d),
		alpha: make([]float64, n), qd: make([]float64, n), index: make([]int, n), active: n}
	var bb float64 // B^2, contribution of the bias feature to x~'x~
	if s.hasBias {
		bb = s.bias * s.bias
	}
	if o.Loss == SquaredHinge {
		s.upper, s.diag = math.Inf(1), 0.5/o.C
	}
	for i := range n {
		var sq float64
		for _, v := range x.RawRowView(i) {
			sq += v * v
		}
		s.qd[i] = s.diag + sq + bb
		s.index[i] = i
	}
	return s
}

// epoch permutes the active variables with rng and updates each in turn
// by a projected Newton step, shrinking (moving past the active ones) the
// variables at a bound whose gradient lies beyond the previous epoch's
// extremes pgMaxOld, pgMinOld of the projected gradient. It returns this
// epoch's extremes.
func (s *dualCD) epoch(rng *rand.Rand, pgMaxOld, pgMinOld float64) (pgMaxNew, pgMinNew float64) {
	data, stride, d, y, bias := s.data, s.stride, s.d, s.y, s.bias
	w, alpha, qd, index := s.w, s.alpha, s.qd, s.index
	upper, diag, wb, active := s.upper, s.diag, s.wb, s.active
	pgMaxNew, pgMinNew = math.Inf(-1), math.Inf(1)
	for i := 0; i < active; i++ {
		j := i + rng.IntN(active-i)
		index[i], index[j] = index[j], index[i]
	}
	for k := 0; k < active; k++ {
		i := index[k]
		yi := y[i]
		xi := data[i*stride : i*stride+d]
		g := wb * bias
		if !s.hasBias {
			g = 0
		}
		for j, v := range xi {
			g += w[j] * v
		}
		g = g*yi - 1 + diag*alpha[i]

		var pg float64
		a := alpha[i]
		switch {
		case a == 0:
			if s.shrink && g > pgMaxOld {
				active--
				index[k], index[active] = index[active], index[k]
				k--
				continue
			}
			if g < 0 {
				pg = g
			}
		case a == upper:
			if s.shrink && g < pgMinOld {
				active--
				index[k], index[active] = index[active], index[k]
				k--
				continue
			}
			if g > 0 {
				pg = g
			}
		default:
			pg = g
		}
		pgMaxNew = math.Max(pgMaxNew, pg)
		pgMinNew = math.Min(pgMinNew, pg)

		if math.Abs(pg) > 1e-12 {
			na := math.Min(math.Max(a-g/qd[i], 0), upper)
			alpha[i] = na
			step := (na - a) * yi
			for j, v := range xi {
				w[j] += step * v
			}
			if s.hasBias {
				wb += step * bias
			}
		}
	}
	s.wb, s.active = wb, active
	return pgMaxNew, pgMinNew
}

// Decision returns the n x NClass matrix of one-vs-rest decision values
// f_k(x_i) = W_k'x_i + Intercept_k for the rows of x (n x Dim). Absent
// classes have value -Inf. It returns an error if x is empty or has the
// wrong number of columns.
func (m *Model) Decision(x *mat.Dense) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, errors.New("svm: empty input matrix")
	}
	n, d := x.Dims()
	if d != m.Dim {
		return nil, fmt.Errorf("svm: input has %d columns, model expects %d", d, m.Dim)
	}
	// Row by row: the product has only NClass columns, too thin for a
	// blocked (and parallel) matrix product to pay.
	out := mat.NewDense(n, m.NClass, nil)
	xr, wr := x.RawMatrix(), m.W.RawMatrix()
	for i := range n {
		xi := xr.Data[i*xr.Stride : i*xr.Stride+d]
		row := out.RawRowView(i)
		for k := range row {
			wk := wr.Data[k*wr.Stride : k*wr.Stride+d]
			var v float64
			for j, xv := range xi {
				v += xv * wk[j]
			}
			row[k] = v + m.Intercept[k]
		}
	}
	return out, nil
}

// Predict returns the class with the largest decision value for each row of
// x (ties go to the smaller label, as LIBLINEAR). Errors are as for
// Decision.
func (m *Model) Predict(x *mat.Dense) ([]int, error) {
	if x == nil || x.IsEmpty() {
		return nil, errors.New("svm: empty input matrix")
	}
	n, d := x.Dims()
	if d != m.Dim {
		return nil, fmt.Errorf("svm: input has %d columns, model expects %d", d, m.Dim)
	}
	// The decision values of Decision, row by row, without storing them,
	// each summed over the features in order; the largest is chosen
	// without branches, which would be mispredicted as often as the
	// classes overlap.
	pred := make([]int, n)
	nc := m.NClass
	xr, wr := x.RawMatrix(), m.W.RawMatrix()
	b := m.Intercept[:nc]
	if nc == 4 {
		// The weights interleaved by feature, for the four sums at once.
		var buf [64]float64
		w := buf[:0]
		if 4*d <= len(buf) {
			w = buf[:4*d]
		} else {
			w = make([]float64, 4*d)
		}
		for k := range 4 {
			for j, v := range wr.Data[k*wr.Stride : k*wr.Stride+d] {
				w[4*j+k] = v
			}
		}
		if hasAVX2 {
			// Rows with a NaN decision value are left at -1.
			if predict4AVX2(xr.Data[:(n-1)*xr.Stride+d], xr.Stride, d, w, b, pred) == 0 {
				return pred, nil
			}
			for i, p := range pred {
				if p < 0 {
					pred[i] = predict4(xr.Data[i*xr.Stride:][:d], w, b)
				}
			}
			return pred, nil
		}
		for i := range pred {
			pred[i] = predict4(xr.Data[i*xr.Stride:][:d], w, b)
		}
		return pred, nil
	}
	w := make([]float64, nc*d)
	for k := range nc {
		copy(w[k*d:(k+1)*d], wr.Data[k*wr.Stride:k*wr.Stride+d])
	}
	for i := range pred {
		xi := xr.Data[i*xr.Stride:][:d]
		var sel argmax
		for k := range nc {
			wk := w[k*d:][:len(xi)]
			var v float64
			for j, xv := range xi {
				v += xv * wk[j]
			}
			sel.add(k, v+b[k])
		}
		pred[i] = sel.best
	}
	return pred, nil
}

// predict4 returns the class of the largest of the four decision values
// sum_j x_j w[4j+k] + b[k], k = 0..3 (the weights interleaved by feature),
// the first on ties, never a NaN value unless class 0's.
func predict4(x, w, b []float64) int {
	w = w[:4*len(x)]
	var v0, v1, v2, v3 float64
	for j, xv := range x {
		q := w[4*j:][:4]
		v0 += xv * q[0]
		v1 += xv * q[1]
		v2 += xv * q[2]
		v3 += xv * q[3]
	}
	v0, v1, v2, v3 = v0+b[0], v1+b[1], v2+b[2], v3+b[3]
	if v0 != v0 || v1 != v1 || v2 != v2 || v3 != v3 {
		// A NaN is never larger: the first rule, one at a time.
		var sel argmax
		sel.add(0, v0)
		sel.add(1, v1)
		sel.add(2, v2)
		sel.add(3, v3)
		return sel.best
	}
	// The first of the largest: of the first pair, of the second, then
	// the second pair's if strictly larger.
	ia, ib := b2i(v1 > v0), 2+b2i(v3 > v2)
	return ia + b2i(max(v2, v3) > max(v0, v1))*(ib-ia)
}

// argmax selects the first class of the largest value among those added
// in increasing order of class, without branches.
type argmax struct {
	best  int
	value float64
}

// add offers the value v of class k: it is taken if k is 0 or v is
// larger than the best value so far (never if v is NaN).
func (a *argmax) add(k int, v float64) {
	take := -uint64(b2i(k == 0) | b2i(v > a.value))
	a.best = a.best&^int(take) | k&int(take)
	a.value = math.Float64frombits(math.Float64bits(a.value)&^take | math.Float64bits(v)&take)
}

// Accuracy returns the fraction of positions where pred equals truth, or NaN
// for empty slices.
//
// Accuracy panics if the lengths differ: like the functions of gonum's
// floats and stat packages it treats two slices of different lengths as a
// programmer error (Predict returns one label per input row).
func Accuracy(pred, truth []int) float64 {
	if len(pred) != len(truth) {
		panic(fmt.Sprintf("svm: %d predictions for %d labels", len(pred), len(truth)))
	}
	if len(pred) == 0 {
		return math.NaN()
	}
	var ok int
	for i, p := range pred {
		if p == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}
