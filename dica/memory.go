package dica

import (
	"fmt"
	"math"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/sysmem"
)

// DefaultMemoryFraction is the part of the machine's memory (or of the
// process's cgroup limit) that a fit may use when Config.MaxMemory is 0.
const DefaultMemoryFraction = 0.75

// Shape describes the data of a fit for EstimateMemory: the number of
// cells N (0 when unknown: a stream not yet read), of inputs D, of target
// columns T, of domains and of classes (0 when unknown), and the bytes
// Reader that a pass over the data holds beyond its blocks (the PassBytes
// of the csvio, parquetio and anndata sources; 0 when unknown).
type Shape struct {
	N                      int64
	D, T, Domains, Classes int
	Reader                 int64
}

// EstimateMemory returns an estimate, in bytes, of the peak memory a fit
// with cfg takes on data of the given shape, beyond the data itself when
// it is held in memory. With m = Rank, W = Workers, J = 2W + 4 the partial
// statistics in flight (the 2W + 2 blocks', a file's and the total), N the
// domains, c the classes (supervised methods with class labels, else 0)
// and words of 8 bytes:
//
//	Nystrom, RFF:  7 m^2                    (feature map, solve)
//	             + (J + 7) m^2              (Gram sums; KPCA, UDICA, lambda > 0)
//	             + J (N + c + r) m + J r^2  (partial sums in flight)
//	             + BlockRows W m            (rows kept for the Gram and cross sums)
//	             + min(n, Sample) (D + T) + m D
//	             + 5 c^2 + 3 c m            (the solve's c x c output matrices)
//	             + 3.5 p^2 + 7 N m          (DICA, UDICA: the domain problem, of
//	                                         size p = min(N, m); N m for the
//	                                         other methods)
//	Exact:       5 n^2 + n (D + T)
//	             + 3 n c + 4 c^2 + n N      (labels and domain means)
//
// with r the rank of the output map on real targets (0 for class labels),
// plus the reader's bytes (Shape.Reader).
// The constants come from the peak resident memory of fits measured at
// m = 200 to 8000, n = 2000 to 4000 (exact), and 1000 to 4000 classes or
// domains; TestEstimateMemoryBoundsPeak checks that the estimate is between
// the measured growth of the peak and twice it.
func EstimateMemory(cfg Config, s Shape) int64 {
	return estimate(cfg.withDefaults(), s)
}

// estimate is EstimateMemory of a configuration with its defaults applied.
func estimate(c Config, s Shape) int64 {
	var words float64
	N := float64(s.Domains)
	cls := 0.0
	if c.supervised() {
		cls = float64(s.Classes)
	}
	if c.Solver == Exact {
		n := float64(s.N)
		words = 5*n*n + n*float64(s.D+s.T) + 3*n*cls + 4*cls*cls
		if N > 1 {
			words += n * N
		}
		return saturate(8*words + float64(max(s.Reader, 0)))
	}
	m := float64(c.Rank)
	W := float64(c.Workers)
	J := 2*W + 4
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
	words += 5*cls*cls + 3*cls*m
	if c.domainTerm() {
		p := math.Min(N, m)
		words += 3.5*p*p + 7*N*m
	} else {
		words += N * m
	}
	return saturate(8*words + float64(max(s.Reader, 0)))
}

// saturate converts a number of bytes to int64, at most math.MaxInt64.
func saturate(b float64) int64 {
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// MemoryError is returned by Fit, NewPlan, Plan.Accumulate, Stats.AddBlock
// and Stats.Solve when the estimated memory of a fit (EstimateMemory)
// exceeds the budget (Config.MaxMemory), before anything large is
// allocated.
type MemoryError struct {
	// Need is the estimate (EstimateMemory) and Budget the limit, in bytes.
	Need, Budget int64
	// Exact reports whether the exact n x n solver was asked for.
	Exact bool
	// N is the number of cells (exact) and Rank the rank m (low rank).
	N    int64
	Rank int
	// Domains and Classes are the numbers of domains and classes (so far,
	// when More is set).
	Domains, Classes int
	// Limit is "classes" or "domains" when their number is what does not
	// fit (the rank, or the cells, fit without them); else "".
	Limit string
	// Fits is the largest number of cells (exact), of classes or domains
	// (Limit set), or the largest rank (low rank) that fits in the budget.
	Fits int64
	// More reports that N (or the number of Limit) is a lower bound: the
	// data were read only up to the first cell that did not fit.
	More bool
	// Inputs is set when no rank fits (low rank): the data's columns
	// (inputs and targets) are the cause, through the landmark sample of
	// Sample cells; InputsFit is the largest number of columns that fits
	// at Rank.
	Inputs, InputsFit int
	Sample            int64
	// Reader is set when no rank fits because of what a pass of the
	// reader holds (Shape.Reader, in bytes: its chunks or row groups),
	// the fit at rank 1 fitting without it.
	Reader int64
}

func (e *MemoryError) Error() string {
	if e == nil {
		return "dica: the fit needs more memory than the budget"
	}
	const advice = "use the Nystrom solver (its memory does not grow with the number of cells)"
	switch {
	case e.Limit != "":
		count := e.Classes
		what := "classes x classes"
		if e.Limit == "domains" {
			count, what = e.Domains, "domains x rank"
			if e.Exact {
				what = "cells x domains"
			}
		}
		seen := fmt.Sprintf("%d %s", count, e.Limit)
		if e.More {
			seen = fmt.Sprintf("the data have at least %d %s (read up to the first that did not fit): they", count, e.Limit)
		}
		return fmt.Sprintf("dica: %s need about %s of memory (the solve holds %s matrices), more than the budget of %s; at most %d %s fit in the budget",
			seen, Bytes(e.Need), what, Bytes(e.Budget), e.Fits, e.Limit)
	case e.Exact && e.More:
		return fmt.Sprintf("dica: the exact solver needs 40 N^2 bytes for N cells: the data has more than %d cells, more than fit in the budget of %s; %s",
			e.Fits, Bytes(e.Budget), advice)
	case e.Exact:
		return fmt.Sprintf("dica: the exact solver on %d cells needs about %s of memory, more than the budget of %s; at most about %d cells fit: %s",
			e.N, Bytes(e.Need), Bytes(e.Budget), e.Fits, advice)
	}
	if e.Reader > 0 {
		return fmt.Sprintf("dica: reading the data holds about %s at a time (its chunks or row groups), which leaves no room for a fit at any rank in the budget of %s: write the data in smaller chunks or row groups",
			Bytes(e.Reader), Bytes(e.Budget))
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
// cfg (defaults applied) would exceed its budget. When the data fit without their domains and
// classes, the error names those (Limit) and how many fit.
func checkMemory(c Config, s Shape) error {
	budget := c.MemoryBudget()
	if budget <= 0 {
		return nil
	}
	need := estimate(c, s)
	if need <= budget {
		return nil
	}
	e := &MemoryError{Need: need, Budget: budget, Exact: c.Solver == Exact, N: s.N, Rank: c.Rank,
		Domains: s.Domains, Classes: s.Classes}
	bare := s
	bare.Domains, bare.Classes = 0, 0
	if s.Domains+s.Classes > 0 && estimate(c, bare) <= budget {
		// The largest number of domains (with the classes), or of classes
		// (with the domains), that fits.
		noClasses := s
		noClasses.Classes = 0
		e.Limit, e.Fits = "classes", largest(int64(s.Classes), func(k int64) bool {
			t := s
			t.Classes = int(k)
			return estimate(c, t) <= budget
		})
		if estimate(c, noClasses) > budget {
			e.Limit, e.Fits = "domains", largest(int64(s.Domains), func(k int64) bool {
				t := s
				t.Domains = int(k)
				return estimate(c, t) <= budget
			})
		}
		return e
	}
	// The largest size that fits.
	hi := int64(c.Rank)
	if e.Exact {
		hi = s.N
	}
	e.Fits = largest(hi, func(k int64) bool {
		t, ts := c, s
		if e.Exact {
			ts.N = k
		} else {
			t.Rank = int(k)
			t.OutputRank = min(t.OutputRank, int(k))
		}
		return estimate(t, ts) <= budget
	})
	one, noReader := c, s
	one.Rank, one.OutputRank, noReader.Reader = 1, min(c.OutputRank, 1), 0
	if !e.Exact && e.Fits == 0 && s.Reader > 0 && estimate(one, noReader) <= budget {
		// No rank fits, and the reader's buffers are the cause.
		e.Reader = s.Reader
	} else if !e.Exact && e.Fits == 0 && s.D+s.T > 0 {
		// No rank fits: the width of the data is the cause.
		e.Inputs, e.Sample = s.D+s.T, int64(c.Sample)
		if s.N > 0 {
			e.Sample = min(e.Sample, s.N)
		}
		e.InputsFit = int(largest(int64(s.D), func(k int64) bool {
			ts := s
			ts.D = int(k)
			return estimate(c, ts) <= budget
		}))
	}
	return e
}

// largest returns the largest k in [0, hi] with fits(k) (0 when none), by
// bisection: fits must hold up to some k and fail above it.
func largest(hi int64, fits func(k int64) bool) int64 {
	lo := int64(0)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// groupLimit refuses, during a pass, a number of domains or classes whose
// sums (and the solve after the pass) would exceed the memory budget: the
// names are numbered in order of first appearance, so the largest index
// seen bounds their number.
type groupLimit struct {
	cfg              Config
	budget           int64 // cfg.MemoryBudget(), read once per pass
	shape            Shape
	domains, classes int // seen so far
	withClass        bool
}

func newGroupLimit(p *Plan) *groupLimit {
	return &groupLimit{cfg: p.Config, budget: p.Config.MemoryBudget(), shape: Shape{D: p.Schema.D(), T: len(p.Schema.Targets)},
		withClass: p.Config.supervised() && p.Schema.Labelled}
}

// check returns a *MemoryError (More set) when the domain or class
// indices of b make the fit exceed the budget.
func (g *groupLimit) check(b *dataset.Block) error {
	if g == nil || g.budget <= 0 {
		return nil
	}
	nd, nc := g.domains, g.classes
	for _, v := range b.Domain[:b.Rows] {
		nd = max(nd, v+1)
	}
	if g.withClass && b.Label != nil {
		for _, v := range b.Label[:b.Rows] {
			nc = max(nc, v+1)
		}
	}
	return g.grow(nd, nc)
}

// grow records nd domains and nc classes and checks them (once per
// change).
func (g *groupLimit) grow(nd, nc int) error {
	if nd <= g.domains && nc <= g.classes {
		return nil
	}
	g.domains, g.classes = max(nd, g.domains), max(nc, g.classes)
	s := g.shape
	s.Domains, s.Classes = g.domains, g.classes
	err := checkMemory(g.cfg, s)
	if me, ok := err.(*MemoryError); ok && me.Limit != "" {
		me.More = true
	}
	return err
}
