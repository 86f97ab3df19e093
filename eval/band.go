package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

// bandwidths are the settings that shape a pass over the fitting cells:
// the input and output kernels' bandwidths. Fits that differ only in
// method, lambda, epsilon or k share one pass (dica.Family).
type bandwidths struct{ sigma, sigmaY float64 }

func keyOf(p Params) bandwidths { return bandwidths{p.Sigma, p.TargetSigma} }

// fitSpec is one transformation to fit: a DICA-family method with its fit
// parameters and number of components.
type fitSpec struct {
	name string
	p    Params
	k    int
	// scaledOf, when positive, is 1 + the index of an earlier spec whose
	// model has this one's components up to a factor each (KPCA at
	// another lambda): the spec is not solved when that one was (see
	// band.scaledOf).
	scaledOf int
}

// config returns the dica configuration of the spec.
func (e *evaluator) config(s fitSpec) dica.Config {
	m, _, _ := parseMethod(s.name)
	cfg := dica.Config{
		Method: m, Components: s.k, Lambda: s.p.Lambda, Epsilon: s.p.Epsilon, Sigma: s.p.Sigma,
		Solver: e.o.Solver, Rank: e.o.Rank, Seed: e.o.Seed,
	}
	if e.regression && m.Supervised() {
		cfg.SigmaY = s.p.TargetSigma
	}
	return cfg
}

// band is a set of transformations fitted on the same cells with the same
// bandwidths: for the streaming solvers the models of one dica.Family (one
// pass over the cells, one input map, so that each cell's kernel row is
// computed once for all models), for the exact solver one fit each.
type band struct {
	plan   *dica.Plan // the family's plan; nil for the exact solver
	models []*dica.Model
	errs   []error
	// features holds the raw input features of the fitting cells when
	// fitBand was asked to keep them (dica.NewFamilyFeatures), else nil.
	features *mat.Dense
	// scaledOf[i] is the index of the spec whose model stands for spec
	// i's, which was not solved (its model and error are nil), or -1.
	scaledOf []int
}

// fitBand fits the transformations of specs, which share their
// bandwidths, on ds with workers goroutines per pass, and with keep set
// keeps the raw input features of ds's cells that the pass computes (8
// bytes per cell and raw feature) for their projection. A spec that fails
// (or returns no component) has its error in errs; an error of the shared
// pass is every spec's. A spec with scaledOf set is not solved when the
// spec it names was solved without error and with as many components; its
// model is then nil and b.scaledOf names that spec. Only a cancelled ctx
// is returned as an error.
func (e *evaluator) fitBand(ctx context.Context, ds *dataset.Dataset, specs []fitSpec, workers int, keep bool) (*band, error) {
	b := &band{models: make([]*dica.Model, len(specs)), errs: make([]error, len(specs)), scaledOf: make([]int, len(specs))}
	for i := range b.scaledOf {
		b.scaledOf[i] = -1
	}
	cfgs := make([]dica.Config, len(specs))
	for i, s := range specs {
		cfgs[i] = e.config(s)
		cfgs[i].Workers = workers
	}
	var fam *dica.Family
	if e.o.Solver != dica.Exact {
		var err error
		if keep {
			fam, err = dica.NewFamilyFeatures(ctx, ds.Source(), cfgs...)
		} else {
			fam, err = dica.NewFamily(ctx, ds.Source(), cfgs...)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for i := range b.errs {
				b.errs[i] = err
			}
			return b, nil
		}
		b.plan, b.features = fam.Plan(), fam.Features()
	}
	for i, s := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j := s.scaledOf - 1; j >= 0 && j < i && fam != nil && b.errs[j] == nil && b.models[j] != nil && b.models[j].Components() == min(s.k, specs[j].k) {
			b.scaledOf[i] = j
			continue
		}
		var m *dica.Model
		var err error
		if fam != nil {
			m, err = fam.Solve(cfgs[i])
		} else {
			m, err = dica.Fit(ctx, ds.Source(), cfgs[i])
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		if err == nil && m.Components() == 0 {
			err = fmt.Errorf("%s returned no components", s.name)
		}
		b.models[i], b.errs[i] = m, err
	}
	return b, nil
}

// projectChunk is the number of rows whose raw features are held at a
// time by one worker: few enough for the features and the product to stay
// in the core's L2 cache between their computation and their use
// (dica.BenchmarkProjector).
const projectChunk = 256

// project returns the projection of the rows of x (the data set's rows
// rows, in runs of equal domain) by each fitted model of the band (nil for
// a failed one), all its components, as transformer.apply projects them.
// The kernel rows of each chunk of rows are computed once for all models
// (or taken from features, the raw input features of the rows of x, when
// not nil), on workers goroutines; with BatchCenter each domain's rows are
// projected and centered on their own.
func (b *band) project(e *evaluator, x *mat.Dense, rows []int, workers int, features *mat.Dense) ([]*mat.Dense, error) {
	out := make([]*mat.Dense, len(b.models))
	n, d := x.Dims()
	if b.plan == nil {
		for i, m := range b.models {
			if m == nil {
				continue
			}
			z, err := transformer{model: m, batch: e.o.BatchCenter}.apply(e, x, rows, 0)
			if err != nil {
				return nil, err
			}
			out[i] = z
		}
		return out, nil
	}
	for i, m := range b.models {
		if m != nil {
			out[i] = mat.NewDense(n, m.Components(), nil)
		}
	}
	// Runs of rows projected on their own: the whole matrix, or each
	// domain's rows with BatchCenter.
	type run struct{ lo, hi int }
	runs := []run{{0, n}}
	if e.o.BatchCenter {
		runs = runs[:0]
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && e.ds.Domain[rows[hi]] == e.ds.Domain[rows[lo]] {
				hi++
			}
			runs = append(runs, run{lo, hi})
			lo = hi
		}
	}
	type chunk struct{ lo, hi int }
	var chunks []chunk
	for _, r := range runs {
		for lo := r.lo; lo < r.hi; lo += projectChunk {
			chunks = append(chunks, chunk{lo, min(lo+projectChunk, r.hi)})
		}
	}
	var live []*dica.Model
	var idx []int
	for i, m := range b.models {
		if m != nil {
			live, idx = append(live, m), append(idx, i)
		}
	}
	if len(live) == 0 {
		return out, nil
	}
	pr, err := dica.NewProjector(live...)
	if err != nil {
		return nil, err
	}
	workers = max(1, min(workers, len(chunks)))
	next := make(chan chunk, len(chunks))
	for _, c := range chunks {
		next <- c
	}
	close(next)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var f mat.Dense
			raw := b.plan.RawDim()
			dst := make([]*mat.Dense, len(live))
			for c := range next {
				fc := &f
				if features != nil {
					fc = features.Slice(c.lo, c.hi, 0, raw).(*mat.Dense)
				} else {
					f.ReuseAs(c.hi-c.lo, raw)
					if err := b.plan.MapRaw(&f, x.Slice(c.lo, c.hi, 0, d).(*mat.Dense)); err != nil {
						errs[w] = err
						return
					}
				}
				for j, i := range idx {
					dst[j] = out[i].Slice(c.lo, c.hi, 0, live[j].Components()).(*mat.Dense)
				}
				if err := pr.Project(dst, fc); err != nil {
					errs[w] = err
					return
				}
				f.Reset()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if e.o.BatchCenter {
		for _, z := range out {
			if z == nil {
				continue
			}
			for _, r := range runs {
				centerColumns(z.Slice(r.lo, r.hi, 0, z.RawMatrix().Cols).(*mat.Dense))
			}
		}
	}
	return out, nil
}

// centerColumns subtracts from each column of z its mean, computed as
// dica's Transform computes it for TransformOptions.BatchCenter.
func centerColumns(z *mat.Dense) {
	r, c := z.Dims()
	for j := 0; j < c; j++ {
		col := mat.Col(nil, j, z)
		var s float64
		for _, v := range col {
			s += v
		}
		s /= float64(r)
		for i := range col {
			col[i] -= s
		}
		z.SetCol(j, col)
	}
}

// cores returns GOMAXPROCS.
func cores() int { return runtime.GOMAXPROCS(0) }

// scaledTol is the largest relative residual of a model's component on
// another model's same component that makes them the same direction (see
// scaledCopies): far below the sameInputTol the projections would then be
// compared to, far above the rounding of the solves.
const scaledTol = 1e-10

// scaledCopies returns, for each model of ms, the index of an earlier
// model with the same group and the same number of components whose every
// component it equals up to a factor (scaled), or -1: such a model's
// projection is the earlier one's with each column multiplied by a
// nonzero factor and shifted, so its standardized features are the same
// up to the signs of the columns and rounding. KPCA at every lambda is
// such a case (the ridge only rescales its components). ms[i] may be nil;
// group[i] tells which models may be compared.
func scaledCopies(ms []*dica.Model, group []int) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = -1
		if m == nil {
			continue
		}
		for j, o := range ms[:i] {
			if o != nil && out[j] < 0 && group[j] == group[i] && scaled(m.W, o.W, scaledTol) {
				out[i] = j
				break
			}
		}
	}
	return out
}

// scaled reports whether the matrices a and b have the same shape and
// every column of a is a multiple of the same column of b to tol
// relative: ||a_j - s_j b_j|| <= tol ||a_j|| in the Euclidean norm, with
// s_j = a_j^T b_j / b_j^T b_j the least-squares factor, and a_j and b_j
// not zero.
func scaled(a, b *mat.Dense, tol float64) bool {
	if a == nil || b == nil {
		return false
	}
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc || ac == 0 {
		return false
	}
	for j := range ac {
		var ab, bb, aa float64
		for i := range ar {
			x, y := a.At(i, j), b.At(i, j)
			ab += x * y
			bb += y * y
			aa += x * x
		}
		if aa == 0 || bb == 0 || math.IsNaN(ab) || math.IsInf(aa, 0) || math.IsInf(bb, 0) {
			return false
		}
		s := ab / bb
		var rr float64
		for i := range ar {
			d := a.At(i, j) - s*b.At(i, j)
			rr += d * d
		}
		if !(math.Sqrt(rr) <= tol*math.Sqrt(aa)) {
			return false
		}
	}
	return true
}
