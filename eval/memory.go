package eval

import (
	"fmt"
	"runtime"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

// MemoryError is the error of an evaluation whose memory estimate
// (EstimateMemory) exceeds Options.MaxMemory. It is returned before any fit.
type MemoryError struct {
	// Need is the estimate and Limit the budget, in bytes.
	Need, Limit int64
	// Step names the step that needs the most, such as "the exact fits of
	// 20000 cells".
	Step string
}

// Error says what needs how much and what the budget is.
func (e *MemoryError) Error() string {
	if e == nil {
		return "eval: <nil MemoryError>"
	}
	return fmt.Sprintf("eval: the evaluation needs about %s (%s), more than the memory budget of %s (Options.MaxMemory)",
		FormatBytes(e.Need), e.Step, FormatBytes(e.Limit))
}

// FormatBytes writes a number of bytes in decimal units: "812 MB",
// "80.0 GB".
func FormatBytes(b int64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.1f TB", float64(b)/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}

// EstimateMemory returns an estimate, in bytes, of the memory an evaluation
// of ds with the options needs beyond the data set itself, and a
// description of its largest step. It is an upper estimate from the sizes
// alone (8-byte values):
//
//   - the exact solver's fits: 4 n_f^2 values for n_f fitting cells (the
//     kernel matrix and the factors the solve holds beside it; measured by
//     go run ./bench exact);
//   - the Nystrom and random-feature fits, with m = Rank: (3 b + 6) m^2
//     values for the statistics of the b bandwidth pairs of the grid kept
//     by an inner fold and the solve, the planning sample max(20000, 20 m)
//     x d, and a block of 1024 rows of m features per core;
//   - the learner on at most MaxTrainCells cells n_l: 3 n_l (f + 1) values
//     for the linear SVM on f features; n_l D (f + 1) for the
//     distributional SVM with D domain features; 3 n_r^2 for the exact
//     kernel ridge regression on n_r cells; 2 n_l r for its Nystrom form of
//     rank r (times D for the distributional regression);
//   - the copies of the fitting cells, their projections and the mixing
//     subsample.
func EstimateMemory(ds *dataset.Dataset, o Options) (int64, string) {
	if ds == nil {
		return 0, "nothing"
	}
	regression := ds.Target != nil
	o = o.withDefaults(regression)
	n, d := int64(ds.N()), int64(ds.D())
	doms := int64(ds.NumDomains())
	if o.CellsPerDomain > 0 {
		n = min(n, int64(o.CellsPerDomain)*doms)
	}
	k := int64(0)
	for _, c := range o.Grid.Components {
		k = max(k, int64(c))
	}
	f := max(d, k)
	const w = 8
	type step struct {
		bytes int64
		what  string
	}
	var steps []step
	dicaMethods := false
	for _, m := range o.Methods {
		if m != Input {
			dicaMethods = true
		}
	}
	fitCells := min(n, int64(o.MaxFitCells))
	if o.FinalFitCells > 0 {
		fitCells = max(fitCells, min(n, int64(o.FinalFitCells)))
	} else if o.Solver != dica.Exact {
		fitCells = n
	}
	if dicaMethods {
		if o.Solver == dica.Exact {
			steps = append(steps, step{4 * w * fitCells * fitCells, fmt.Sprintf("the exact fits of %d cells", fitCells)})
		} else {
			m := int64(o.Rank)
			b := int64(len(o.Grid.Sigma) * len(o.Grid.TargetSigma))
			sample := max(int64(dica.DefaultSample), 20*m)
			cores := int64(runtime.GOMAXPROCS(0))
			steps = append(steps, step{w * ((3*b+6)*m*m + sample*d + cores*1024*m), fmt.Sprintf("the fits of rank %d", m)})
		}
	}
	nl := min(n, int64(o.MaxTrainCells))
	dd := doms
	if o.Dist.RFF > 0 {
		dd = int64(o.Dist.RFF)
	}
	switch {
	case !regression && o.Learner == Distributional:
		steps = append(steps, step{w * (nl*dd*(f+1) + 2*nl*(f+1)), fmt.Sprintf("the distributional SVM on %d cells of %d x %d features", nl, dd, f+1)})
	case !regression:
		steps = append(steps, step{3 * w * nl * (f + 1), fmt.Sprintf("the SVM on %d cells", nl)})
	case o.Learner == Distributional:
		r := int64(o.Dist.PointRank)
		steps = append(steps, step{2 * w * nl * dd * r, fmt.Sprintf("the distributional regression on %d cells of %d x %d features", nl, dd, r)})
	default:
		nr := min(nl, int64(o.MaxRegressionCells))
		r := int64(o.RegressionRank)
		ex := 3 * w * nr * nr
		ny := 2*w*nl*r + 2*w*r*r
		if o.RegressionSolver == RegressionExact || o.RegressionSolver == RegressionAuto && nl <= int64(o.MaxRegressionCells) {
			steps = append(steps, step{ex, fmt.Sprintf("the exact kernel ridge regression on %d cells", nr)})
		} else {
			steps = append(steps, step{ny, fmt.Sprintf("the kernel ridge regression of rank %d on %d cells", r, nl)})
		}
	}
	top := step{}
	for _, s := range steps {
		if s.bytes > top.bytes {
			top = s
		}
	}
	// Copies of the fitting cells and their projections, and the mixing
	// subsample with its neighbour lists.
	copies := w * (fitCells*(d+f) + nl*(f+1))
	if o.MixingCells > 0 {
		mc := int64(o.MixingCells)
		copies += w * mc * (f + 2*90 + doms)
	}
	return top.bytes + copies, top.what
}
