package dica

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
)

// ErrNoSignal is wrapped by the errors of fits that have no signal: Fit,
// Plan.Accumulate, Stats.Solve and Stats.SolveWith return such an error,
// saying why, instead of a model whose components carry nothing. A fit has
// no signal when
//
//  1. the kernel is numerically the identity on the data: no two distinct
//     cells among the first ReachCells of the plan's sample (Nystrom), of
//     a pass (every solver) or of the data (exact) have a kernel value
//     above 2^-53, that is 1 + k(x, y) = 1 in float64 (an RBF or
//     Laplacian bandwidth far below the distances between cells: new
//     cells would all project onto the same point);
//  2. the kernel is numerically constant on the data: gamma_ref (case 3)
//     is at most 2^-52 for a kernel with k(x, x) = 1 (RBF, Laplacian), or
//     0 for any kernel (a bandwidth far above the data's scale, or
//     identical cells);
//  3. no eigenvalue exceeds NullTol times gamma_ref, the largest value the
//     leading eigenvalue can take on these data at lambda = 0 and
//     epsilon -> 0 without the domain term: the between-class variance of
//     the features (class labels), the variance of the features explained
//     by the targets' (real targets), or their total variance (UDICA,
//     KPCA). Then lambda, epsilon or the domain term overwhelm the data
//     (lambda = 1e308 gives eigenvalues of 1e-307).
var ErrNoSignal = errors.New("dica: the fit has no signal")

// ReachCells is the number of cells on which a fit checks that its kernel
// relates two distinct cells (see ErrNoSignal, case 1).
const ReachCells = 1000

// reachMin is the kernel value above which two cells are related: below
// it, 1 + k rounds to 1.
const reachMin = 0x1p-53

// unitDiagonal reports whether k(x, x) = 1 for every x (RBF, Laplacian).
func unitDiagonal(k kernel.Kernel) bool {
	switch k.(type) {
	case kernel.RBF, kernel.Laplacian:
		return true
	}
	return false
}

// checkReach returns an error wrapping ErrNoSignal when k, a kernel with
// k(x, x) = 1, is numerically the identity on the first ReachCells rows of
// x (what names them in the message): some two of them are distinct and
// no two distinct ones have k > reachMin. Rows with a value that is not
// finite are skipped (the pass reports them).
func checkReach(k kernel.Kernel, x *mat.Dense, what string) error {
	if !unitDiagonal(k) || x == nil || x.IsEmpty() {
		return nil
	}
	n, _ := x.Dims()
	n = min(n, ReachCells)
	rows := make([][]float64, 0, n)
	for i := 0; i < n; i++ {
		if r := x.RawRowView(i); finiteVec(r) {
			rows = append(rows, r)
		}
	}
	closest, distinct := math.Inf(1), false
	for p := 1; p < len(rows); p++ {
		for q := 0; q < p; q++ {
			if floats.Equal(rows[p], rows[q]) {
				continue
			}
			if k.Eval(rows[p], rows[q]) > reachMin {
				return nil
			}
			distinct = true
			closest = math.Min(closest, math.Sqrt(kernel.SqDist(rows[p], rows[q])))
		}
	}
	if !distinct {
		return nil // identical cells: the variance check reports them
	}
	return fmt.Errorf("%w: the kernel %v is numerically the identity on the data: no two distinct cells of the first %d cells of %s have a kernel value above 2^-53 (the closest two are %.3g apart): every new cell would project onto the same point; the bandwidth is too small for the data's scale (use a larger sigma, or 0 for the median heuristic)",
		ErrNoSignal, k, len(rows), what, closest)
}

// reachCheck runs checkReach on the first ReachCells rows of a pass.
type reachCheck struct {
	k    kernel.Kernel
	x    []float64
	d    int
	done bool
}

func newReachCheck(p *Plan) *reachCheck {
	if !unitDiagonal(p.Config.Kernel) {
		return nil
	}
	return &reachCheck{k: p.Config.Kernel, d: p.Schema.D()}
}

// add adds the rows of b, and checks them once there are ReachCells.
func (c *reachCheck) add(b *dataset.Block) error {
	if c == nil || c.done {
		return nil
	}
	if b.D != c.d || b.Rows < 0 || len(b.X) < b.Rows*b.D {
		return nil // the pass reports the block
	}
	k := min(b.Rows, ReachCells-len(c.x)/max(c.d, 1))
	c.x = append(c.x, b.X[:k*c.d]...)
	if len(c.x) >= ReachCells*c.d {
		return c.end()
	}
	return nil
}

// end checks the rows added (at the end of a shorter pass).
func (c *reachCheck) end() error {
	if c == nil || c.done || c.d == 0 || len(c.x) == 0 {
		return nil
	}
	c.done = true
	x := mat.NewDense(len(c.x)/c.d, c.d, c.x)
	c.x = nil
	return checkReach(c.k, x, "the pass")
}

// checkSignal returns an error wrapping ErrNoSignal when a solve with
// kernel k whose leading eigenvalue is gamma1 on data of reference
// variance ref (see ErrNoSignal, cases 2 and 3; targets: the fit is on
// real targets) has no signal.
func checkSignal(cfg Config, k kernel.Kernel, gamma1, ref float64, targets bool) error {
	what := "the variance of the features that the labels explain"
	switch {
	case !cfg.supervised():
		what = "the variance of the features"
	case targets:
		what = "the variance of the features that the targets explain"
	}
	if !(ref > 0) || unitDiagonal(k) && ref <= 0x1p-52 {
		return fmt.Errorf("%w: %s is %.3g: the kernel %v is numerically constant on the data (a bandwidth too large for the data's scale), or the cells are alike (identical cells, or classes with the same cells)",
			ErrNoSignal, what, ref, k)
	}
	if !(gamma1 > NullTol*ref) {
		domain := ""
		if cfg.domainTerm() {
			domain = ", or the domain term"
		}
		eps := ""
		if cfg.supervised() {
			eps = fmt.Sprintf(", epsilon = %g", cfg.Epsilon)
		}
		return fmt.Errorf("%w: the leading eigenvalue %.3g is at most %g times %.3g, the largest these data allow (%s): the regularization overwhelms the data (lambda = %g%s%s); use smaller values",
			ErrNoSignal, gamma1, NullTol, ref, what, cfg.Lambda, eps, domain)
	}
	return nil
}

// signalScale returns gamma_ref of the statistics (see ErrNoSignal): with
// F the m x r numerator factor before the output regularization and S its
// output Gram matrix, tr(F S^+ F^T)/n, that is sum_j ||f_j||^2 / (n_j n)
// for class labels; tr(C)/n for UDICA and KPCA.
func (s *Stats) signalScale(fs *featureStats) float64 {
	cfg := s.plan.Config
	if !cfg.supervised() {
		if fs.c == nil {
			return math.NaN()
		}
		return mat.Trace(fs.c) / fs.n
	}
	a := &s.acc
	t := mapTransform(s.plan.inMap)
	// dbar as features computes it.
	dbar := make([]float64, a.mraw)
	for _, v := range a.domSum {
		addTo(dbar, v)
	}
	floats.Scale(1/fs.n, dbar)
	var tr float64
	if s.plan.outMap != nil {
		f, sm := s.regressionFactor(t, dbar, fs)
		var es mat.EigenSym
		if !es.Factorize(symOf(sm), true) {
			return math.NaN()
		}
		vals := es.Values(nil)
		var v mat.Dense
		es.VectorsTo(&v)
		var fv mat.Dense
		fv.Mul(f, &v)
		top := vals[len(vals)-1]
		for j, e := range vals {
			if e > OutputRCond*top {
				c := fv.ColView(j)
				tr += mat.Dot(c, c) / e
			}
		}
		return tr / fs.n
	}
	raw := make([]float64, a.mraw)
	for j, nj := range s.ClassCounts() {
		if nj == 0 || j >= len(a.clsSum) {
			continue
		}
		copy(raw, a.clsSum[j])
		floats.AddScaled(raw, -float64(nj), dbar)
		f := transformRaw(t, raw)
		tr += floats.Dot(f, f) / float64(nj)
	}
	return tr / fs.n
}
