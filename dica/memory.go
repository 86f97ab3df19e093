package dica

import (
	"fmt"
	"math"

	"github.com/dicalab/dica/internal/sysmem"
)

// DefaultMemoryFraction is the part of the machine's memory (or of the
// process's cgroup limit) that a fit may use when Config.MaxMemory is 0.
const DefaultMemoryFraction = 0.75

// Shape describes the data of a fit for EstimateMemory: the number of
// cells N (0 when unknown: a stream not yet read), of inputs D, of target
// columns T, of domains and of classes (0 when unknown).
type Shape struct {
	N                      int64
	D, T, Domains, Classes int
}

// EstimateMemory returns an estimate, in bytes, of the peak memory a fit
// with cfg takes on data of the given shape, beyond the data itself when
// it is held in memory. With m = Rank, W = Workers, J = 2W + 3 the partial
// statistics in flight, and words of 8 bytes:
//
//	Nystrom, RFF:  7 m^2                    (feature map, solve)
//	             + (J + 7) m^2              (Gram sums; KPCA, UDICA, lambda > 0)
//	             + J (domains + classes + r) m + J r^2
//	             + BlockRows W m            (rows kept for the Gram and cross sums)
//	             + min(N, Sample) (D + T) + m D
//	Exact:       5 N^2 + N (D + T)
//
// with r the rank of the output map on real targets (0 for class labels).
// The constants come from the peak resident memory of fits measured at
// m = 1000 to 8000 and n = 2000 to 4000 (exact); TestEstimateMemoryBoundsPeak
// checks that the estimate is between the measured growth of the peak and
// twice it.
func EstimateMemory(cfg Config, s Shape) int64 {
	c := cfg.withDefaults()
	var words float64
	if c.Solver == Exact {
		n := float64(s.N)
		words = 5*n*n + n*float64(s.D+s.T)
		return saturate(8 * words)
	}
	m := float64(c.Rank)
	W := float64(c.Workers)
	J := 2*W + 3
	r := 0.0
	if c.supervised() && s.T > 0 {
		r = float64(c.OutputRank)
	}
	words = 7 * m * m
	if c.needsGram() {
		words += (J + 7) * m * m
	}
	words += J*(float64(s.Domains+s.Classes)+r)*m + J*r*r
	if c.needsGram() || r > 0 {
		words += float64(c.BlockRows) * W * m
	}
	sample := float64(c.Sample)
	if s.N > 0 {
		sample = math.Min(sample, float64(s.N))
	}
	words += sample*float64(s.D+s.T) + m*float64(s.D)
	return saturate(8 * words)
}

// saturate converts a number of bytes to int64, at most math.MaxInt64.
func saturate(b float64) int64 {
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// MemoryError is returned by Fit and NewPlan when the estimated memory of a
// fit exceeds the budget (Config.MaxMemory), before anything large is
// allocated.
type MemoryError struct {
	// Need is the estimate (EstimateMemory) and Budget the limit, in bytes.
	Need, Budget int64
	// Exact reports whether the exact n x n solver was asked for.
	Exact bool
	// N is the number of cells (exact) and Rank the rank m (low rank).
	N    int64
	Rank int
	// Fits is the largest number of cells (exact) or the largest rank (low
	// rank) that fits in the budget.
	Fits int64
	// More reports that N is a lower bound: the data were read only up to
	// the first cell that did not fit.
	More bool
	// Inputs is set when no rank fits (low rank): the data's columns
	// (inputs and targets) are the cause, through the landmark sample of
	// Sample cells; InputsFit is the largest number of columns that fits
	// at Rank.
	Inputs, InputsFit int
	Sample            int64
}

func (e *MemoryError) Error() string {
	const advice = "use the Nystrom solver (its memory does not grow with the number of cells)"
	if e.Exact && e.More {
		return fmt.Sprintf("dica: the exact solver needs 40 N^2 bytes for N cells: the data has more than %d cells, more than fit in the budget of %s; %s",
			e.Fits, Bytes(e.Budget), advice)
	}
	if e.Exact {
		return fmt.Sprintf("dica: the exact solver on %d cells needs about %s of memory, more than the budget of %s; at most about %d cells fit: %s",
			e.N, Bytes(e.Need), Bytes(e.Budget), e.Fits, advice)
	}
	if e.Inputs > 0 {
		return fmt.Sprintf("dica: %d input columns need about %s for the landmark sample of %d cells alone, more than the budget of %s at any rank; about %d columns fit at rank %d: select fewer columns",
			e.Inputs, Bytes(saturate(8*float64(e.Sample)*float64(e.Inputs))), e.Sample, Bytes(e.Budget), e.InputsFit, e.Rank)
	}
	return fmt.Sprintf("dica: rank %d needs about %s of memory, more than the budget of %s; ranks up to about %d fit",
		e.Rank, Bytes(e.Need), Bytes(e.Budget), e.Fits)
}

// Bytes formats a number of bytes for a message ("12 GB", "350 MB").
func Bytes(b int64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.3g TB", float64(b)/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.3g GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.3g MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%d kB", (b+999)/1000)
}

// MemoryBudget returns the memory budget of cfg in bytes: MaxMemory when
// it is set, else DefaultMemoryFraction of the machine's memory; 0 means
// no limit (MaxMemory < 0, or the machine's memory is unknown).
func (c Config) MemoryBudget() int64 {
	switch {
	case c.MaxMemory < 0:
		return 0
	case c.MaxMemory > 0:
		return c.MaxMemory
	}
	return int64(DefaultMemoryFraction * float64(sysmem.Total()))
}

// checkMemory returns a *MemoryError when the fit of data of shape s with
// cfg would exceed its budget.
func checkMemory(cfg Config, s Shape) error {
	budget := cfg.MemoryBudget()
	if budget <= 0 {
		return nil
	}
	c := cfg.withDefaults()
	need := EstimateMemory(c, s)
	if need <= budget {
		return nil
	}
	e := &MemoryError{Need: need, Budget: budget, Exact: c.Solver == Exact, N: s.N, Rank: c.Rank}
	// The largest size that fits, by bisection on the estimate.
	lo, hi := int64(0), int64(c.Rank)
	if e.Exact {
		hi = s.N
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		t, ts := c, s
		if e.Exact {
			ts.N = mid
		} else {
			t.Rank = int(mid)
			t.OutputRank = min(t.OutputRank, int(mid))
		}
		if EstimateMemory(t, ts) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	e.Fits = lo
	if !e.Exact && lo == 0 && s.D+s.T > 0 {
		// No rank fits: the width of the data is the cause.
		e.Inputs, e.Sample = s.D+s.T, int64(c.Sample)
		if s.N > 0 {
			e.Sample = min(e.Sample, s.N)
		}
		lo, hi := 0, s.D
		for lo < hi {
			mid := (lo + hi + 1) / 2
			ts := s
			ts.D = mid
			if EstimateMemory(c, ts) <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		e.InputsFit = lo
	}
	return e
}
