package dica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

// Fit fits a DICA model to the data of src.
//
// With the Nystrom and RFF solvers it makes a sampling pass (bandwidths,
// landmarks; skipped when nothing needs a sample), one streaming pass of
// sufficient statistics on Config.Workers goroutines, and a small solve; the
// memory used is O((N + c) m + m^2) whatever the number of points. With the
// Exact solver the data is read into memory and package exact solves the
// n x n problem. With Method Input it fits no projection: see Input. Fit
// stops early with ctx's error when ctx is cancelled.
func Fit(ctx context.Context, src dataset.Source, cfg Config) (*Model, error) {
	if ctx == nil || src == nil {
		return nil, fmt.Errorf("dica: Fit needs a context and a source")
	}
	if cfg.Method == Input {
		return fitInput(ctx, src, cfg)
	}
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Solver == Exact {
		return fitExact(ctx, src, cfg)
	}
	p, err := NewPlan(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	st, err := p.Accumulate(ctx, src)
	if err != nil {
		return nil, err
	}
	return st.Solve()
}

// Solve solves the DICA eigenproblem from the statistics and returns the
// model.
func (s *Stats) Solve() (*Model, error) {
	if s == nil || s.plan == nil {
		return nil, errNoPlan
	}
	s = s.naturalOrder()
	// The solve's domain and class matrices must fit before they are made.
	sc := s.plan.Schema
	if err := checkMemory(s.plan.Config, Shape{N: s.acc.n, D: sc.D(), T: len(sc.Targets), Domains: len(s.Domains), Classes: len(s.Classes)}); err != nil {
		return nil, err
	}
	fs, err := s.features()
	if err != nil {
		return nil, err
	}
	return s.solveFeatures(fs)
}

// solveFeatures is Solve from the feature statistics fs of s (which the
// solve does not change).
func (s *Stats) solveFeatures(fs *featureStats) (*Model, error) {
	sol, err := fs.solve(s.plan.Config)
	if err != nil {
		return nil, err
	}
	if err := checkSignal(s.plan.Config, s.plan.Config.Kernel, sol.values[0], s.signalScale(fs), s.plan.outMap != nil); err != nil {
		return nil, err
	}
	sum := Summary{
		N:            s.acc.n,
		Features:     s.plan.Schema.Features,
		Domains:      s.Domains,
		DomainCounts: s.DomainCounts(),
		Classes:      s.Classes,
		ClassCounts:  s.ClassCounts(),
		Targets:      s.plan.Schema.Targets,
	}
	m := newModel(s.plan, sol, fs.mu, sum)
	N := float64(fs.N)
	m.InputVariance = sqFrob(fs.mc) / N
	if m.W != nil {
		var p mat.Dense
		p.Mul(fs.mc, m.W)
		m.ProjectedVariance = sqFrob(&p) / N
	}
	return m, nil
}

// SolveWith solves the eigenproblem from the statistics as Solve does, with
// the solve settings of cfg: Method, Components, Lambda and Epsilon. The
// accumulated sums do not depend on them, so one pass over the data serves a
// sweep. Start from the plan's configuration and change those fields:
//
//	cfg := st.Plan().Config
//	cfg.Lambda = 0.1
//	m, err := st.SolveWith(cfg)
//
// The fields that shape the plan (kernels, solver, rank, landmarks, seed,
// ...) must be the plan's. The method may change to one that uses the data
// alike: between KPCA and UDICA, or between DICA and COIR. A solve that
// needs the Gram sum (Lambda > 0, KPCA, UDICA) needs statistics accumulated
// with it, by a plan whose configuration needs it. The model records cfg's
// solve settings, so it equals the model of Fit with cfg.
func (s *Stats) SolveWith(cfg Config) (*Model, error) {
	if s == nil || s.plan == nil {
		return nil, errNoPlan
	}
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	old := s.plan.Config
	if cfg.supervised() != old.supervised() {
		return nil, fmt.Errorf("dica: SolveWith: method %v uses the data unlike the plan's %v: switch between KPCA and UDICA, or between DICA and COIR", cfg.Method, old.Method)
	}
	if cfg.needsGram() && !s.acc.gram {
		return nil, fmt.Errorf("dica: SolveWith: %v with lambda = %v needs the Gram sum, and these statistics lack the Gram sum: accumulate them with a plan whose configuration needs it (Lambda > 0, KPCA or UDICA)", cfg.Method, cfg.Lambda)
	}
	p := *s.plan
	p.Config.Method, p.Config.Components, p.Config.Lambda, p.Config.Epsilon = cfg.Method, cfg.Components, cfg.Lambda, cfg.Epsilon
	var want, got encoder
	p.encode(&want)
	q := p
	q.Config = cfg
	q.encode(&got)
	if !bytes.Equal(want.b, got.b) {
		return nil, fmt.Errorf("dica: SolveWith: the configuration differs from the plan's in more than Method, Components, Lambda and Epsilon (start from Stats.Plan().Config)")
	}
	p.fp = fingerprint(want.b)
	st := *s
	st.plan = &p
	return st.Solve()
}

func sqFrob(a *mat.Dense) float64 {
	n := mat.Norm(a, 2)
	return n * n
}

func fitExact(ctx context.Context, src dataset.Source, cfg Config) (*Model, error) {
	sh := shapeOf(src)
	if err := checkMemory(cfg, sh); err != nil {
		return nil, err
	}
	// A stream of unknown length is read up to the largest number of
	// cells that fits, one more, and refused there.
	var lim *limitSource
	if sh.N == 0 {
		if probe, ok := checkMemory(cfg, Shape{N: math.MaxInt32, D: sh.D, T: sh.T}).(*MemoryError); ok {
			lim = &limitSource{Source: src, max: probe.Fits}
			src = lim
		}
	}
	ds, err := dataset.Collect(ctx, src)
	if errors.Is(err, errTooMany) {
		sh.N = lim.max + 1
		err = checkMemory(cfg, sh)
		if me, ok := err.(*MemoryError); ok {
			me.More = true
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	sh.N, sh.Domains, sh.Classes = int64(ds.N()), ds.NumDomains(), ds.NumClasses()
	if err := checkMemory(cfg, sh); err != nil {
		return nil, err
	}
	naturalDataset(ds)
	if cfg.domainTerm() {
		if err := ds.RequireDomains(2); err != nil {
			return nil, err
		}
	}
	k := cfg.Kernel
	if k == nil && cfg.Sigma > 0 {
		k = cfgKernel(cfg.Sigma)
	}
	if err := checkReach(k, ds.X, "the data"); err != nil {
		return nil, err
	}
	ok := cfg.OutputKernel
	if ok == nil && cfg.SigmaY > 0 {
		ok = cfgKernel(cfg.SigmaY)
	}
	em, err := exact.Fit(ctx, ds, exact.Options{
		Method:       cfg.Method,
		Form:         cfg.Form,
		Components:   cfg.Components,
		Lambda:       cfg.Lambda,
		Epsilon:      cfg.Epsilon,
		Kernel:       k,
		OutputKernel: ok,
		Seed:         cfg.Seed,
	})
	if err != nil {
		return nil, err
	}
	scale := em.Scale
	if cfg.Form == Paper {
		scale *= float64(ds.N()) // paper-form eigenvalues lack the 1/n
	}
	if err := checkSignal(cfg, em.Kernel, em.Eigenvalues[0], scale, ds.Target != nil); err != nil {
		return nil, err
	}
	return FromExact(em, ds, cfg)
}

// FromExact wraps a model of package exact: the kernel expansion
// z(x) = B^T (k(x) - mean_p k(., x_p)) is the feature-space form with
// phi(x) = [k(x, x_1) .. k(x, x_n)] (for the canonical form B^T 1 = 0, so
// the double-centering term vanishes).
func FromExact(em *exact.Model, ds *dataset.Dataset, cfg Config) (*Model, error) {
	if em == nil || ds == nil || em.X == nil || em.Kernel == nil {
		return nil, fmt.Errorf("dica: FromExact needs a fitted exact model and its data")
	}
	if r, _ := em.X.Dims(); r != ds.N() {
		return nil, fmt.Errorf("dica: FromExact: the exact model has %d points, the data %d", r, ds.N())
	}
	cfg = cfg.withDefaults()
	cfg.Solver = Exact
	cfg.Kernel = em.Kernel
	cfg.OutputKernel = em.Options.OutputKernel
	cfg.Rank = ds.N()
	sc := ds.Source().Schema()
	p, err := exactPlan(cfg, sc, em.Kernel, mat.DenseCopyOf(em.X))
	if err != nil {
		return nil, err
	}
	n := ds.N()
	k := len(em.Eigenvalues)
	w := mat.NewDense(n, max(k, 1), nil)
	if em.B != nil {
		_, bc := em.B.Dims()
		w.Slice(0, n, 0, bc).(*mat.Dense).Copy(em.B)
	}
	sol := &solution{w: w, values: em.Eigenvalues}
	sum := Summary{N: int64(n), Features: sc.Features, Domains: ds.DomainNames,
		Classes: ds.ClassNames, Targets: sc.Targets}
	for _, c := range ds.DomainSizes() {
		sum.DomainCounts = append(sum.DomainCounts, int64(c))
	}
	for _, c := range ds.ClassSizes() {
		sum.ClassCounts = append(sum.ClassCounts, int64(c))
	}
	m := newModel(p, sol, append([]float64(nil), em.KColMean...), sum)
	m.InputVariance, m.ProjectedVariance = em.InputVariance, em.ProjectedVariance
	return m, nil
}

func cfgKernel(sigma float64) kernel.Kernel { return kernel.RBF{Sigma: sigma} }

// errTooMany is returned by a limitSource's reader past its limit.
var errTooMany = errors.New("dica: more cells than fit")

// limitSource is a source whose passes fail with errTooMany once more than
// max rows were read.
type limitSource struct {
	dataset.Source
	max int64
}

func (s *limitSource) Open(ctx context.Context) (dataset.Reader, error) {
	r, err := s.Source.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &limitReader{Reader: r, left: s.max}, nil
}

type limitReader struct {
	dataset.Reader
	left int64
}

func (r *limitReader) Read(b *dataset.Block, max int) (int, error) {
	k, err := r.Reader.Read(b, max)
	if err == nil || !errors.Is(err, io.EOF) {
		r.left -= int64(k)
		if r.left < 0 {
			return 0, errTooMany
		}
	}
	return k, err
}
