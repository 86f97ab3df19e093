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
		dica.Bytes(e.Need), e.Step, dica.Bytes(e.Limit))
}

// EstimateMemory returns an estimate, in bytes, of the memory an evaluation
// of ds with the options needs beyond the data set itself, and a
// description of its largest step. It is an upper estimate from the sizes
// alone (8-byte values):
//
//   - the exact solver's fits: 4 n_f^2 values for n_f fitting cells (the
//     kernel matrix and the factors the solve holds beside it; measured by
//     go run ./bench exact);
//   - the Nystrom and random-feature fits, with m = Rank: the inner
//     cross-validation runs T = min(GOMAXPROCS, InnerFolds x (b + 1))
//     tasks at once, b the bandwidth pairs of the grid, each holding
//     16 m^2 values (the statistics of a supervised and an unsupervised
//     method, their feature statistics and the solve), the projections of
//     2 MaxFitCells cells by its models (f k values a cell, f the fits of a
//     bandwidth pair and k the largest number of components), the kernel
//     rows of the MaxFitCells fitting cells (kept from the pass for their
//     projection) and of 256 held-out cells, and the planning sample of
//     max(20000, 20 m) x d;
//   - the learner on at most MaxTrainCells cells n_l: 3 n_l (f + 1) values
//     for the linear SVM on f features; n_l D (f + 1) for the
//     distributional SVM with D domain features; 3 n_r^2 for the exact
//     kernel ridge regression on n_r cells; 2 n_l r for its Nystrom form of
//     rank r (times D for the distributional regression);
//   - the copies of the fitting cells, their projections and the mixing
//     subsample.
//
// With Options.MaxMemory set, an evaluation runs fewer inner tasks at once
// when that keeps it within the budget.
func EstimateMemory(ds *dataset.Dataset, o Options) (int64, string) {
	if ds == nil {
		return 0, "nothing"
	}
	o = o.withDefaults(ds.Target != nil)
	p := memoryPlan(ds, o)
	return p.total(p.tasks), p.what(p.tasks)
}

// memPlan is the memory estimate of an evaluation: its steps but the inner
// fits, and the inner fits' tasks.
type memPlan struct {
	top    int64 // the largest step besides the inner fits
	topStr string
	task   int64 // one inner task of a streaming solver (0 without)
	tasks  int64 // the tasks at once
	m      int64
	copies int64
}

// total is the estimate with t inner tasks at once.
func (p memPlan) total(t int64) int64 { return max(p.top, t*p.task) + p.copies }

func (p memPlan) what(t int64) string {
	if t*p.task > p.top {
		return fmt.Sprintf("the inner fits of rank %d, %d at once", p.m, t)
	}
	return p.topStr
}

// maxTasks returns the most inner tasks at once (at most p.tasks) that keep
// the estimate within budget, or 0 when even one does not.
func (p memPlan) maxTasks(budget int64) int64 {
	if p.task == 0 {
		if p.total(0) <= budget {
			return p.tasks
		}
		return 0
	}
	t := p.tasks
	for t > 0 && p.total(t) > budget {
		t--
	}
	return t
}

func memoryPlan(ds *dataset.Dataset, o Options) memPlan {
	regression := ds.Target != nil
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
	var dicaMethods int64
	for _, m := range o.Methods {
		if m != Input {
			dicaMethods++
		}
	}
	fitCells := min(n, int64(o.MaxFitCells))
	if o.FinalFitCells > 0 {
		fitCells = max(fitCells, min(n, int64(o.FinalFitCells)))
	} else if o.Solver != dica.Exact {
		fitCells = n
	}
	p := memPlan{m: int64(o.Rank), tasks: 1}
	if dicaMethods > 0 {
		if o.Solver == dica.Exact {
			steps = append(steps, step{4 * w * fitCells * fitCells, fmt.Sprintf("the exact fits of %d cells", fitCells)})
		} else {
			m := int64(o.Rank)
			b := int64(len(o.Grid.Sigma) * len(o.Grid.TargetSigma))
			fits := dicaMethods * int64(len(o.Grid.Lambda)*len(o.Grid.Epsilon))
			sample := max(int64(dica.DefaultSample), 20*m)
			inner := min(n, 2*int64(o.MaxFitCells))
			// The fitting cells' raw features kept from the pass for
			// their projection, and a chunk of the held-out cells'.
			p.task = w * (16*m*m + inner*fits*k + (min(n, int64(o.MaxFitCells))+projectChunk)*m + sample*d)
			p.tasks = max(1, min(int64(runtime.GOMAXPROCS(0)), int64(o.InnerFolds)*(b+1)))
			// The final fit: one family, and kernel rows on all cores.
			cores := int64(runtime.GOMAXPROCS(0))
			steps = append(steps, step{w * (16*m*m + sample*d + cores*projectChunk*m), fmt.Sprintf("the final fits of rank %d", m)})
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
	for _, s := range steps {
		if s.bytes > p.top {
			p.top, p.topStr = s.bytes, s.what
		}
	}
	// Copies of the fitting cells and their projections, and the mixing
	// subsample with its neighbour lists.
	p.copies = w * (fitCells*(d+f) + nl*(f+1))
	if o.MixingCells > 0 {
		mc := int64(o.MixingCells)
		p.copies += w * mc * (f + 2*90 + doms)
	}
	return p
}
