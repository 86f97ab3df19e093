package eval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
)

// The inner cross-validation of a split runs every method's grid at once.
// Its unit of work is a task: one inner fold and, for the DICA family, one
// pair of bandwidths (input sigma, target sigma). A task makes one pass
// over the fold's fitting cells for every method, lambda, epsilon and k of
// its bandwidths (dica.Family), keeps the fitting cells' kernel rows from
// that pass (dica.NewFamilyFeatures) and computes each held-out cell's once,
// for all the models (dica.Projector), projects on
// the largest k and takes the first columns for the others, trains each
// distinct learner input once (a k above the components a model returned
// gives the input of its last k) and the linear SVMs of all costs on one
// prepared problem. Tasks run on all cores; each writes its own scores, and
// the scores are summed in fold order afterwards, so the result does not
// depend on GOMAXPROCS. Each cost's SVM starts from zero, as the final
// learner does: a warm start from the previous cost's solution (svm
// Options.Init) stops, within the solver's tolerance, at other weights
// than the cold start, and the grid's costs are often tied to within a few
// held-out cells, so that it would change the choices.

// foldData holds the cells of one inner fold.
type foldData struct {
	f         int
	held      []int // the held-out training domains
	fitRows   []int
	validRows []int
	// fitCells and validCells gather the labels and domains of fitRows
	// and validRows for the learners.
	fitCells, validCells *rowCells
	fitDS                *dataset.Dataset
	validX               *mat.Dense
}

// cvMethod is the inner cross-validation of one method of a split.
type cvMethod struct {
	name   string
	grid   methodGrid
	points []Params
	// vals[f][pi] holds the scores of the held-out domains of fold f for
	// point pi, errs[f][pi] its error.
	vals [][][]float64
	errs [][]string
	busy time.Duration // time spent for the method (guarded by cv.mu)
}

// cvSplit is the inner cross-validation of the methods of one split.
type cvSplit struct {
	e       *evaluator
	si      int
	groups  [][]int
	folds   []*foldData
	methods []*cvMethod
	mu      sync.Mutex
}

// cvTask is one unit of work: the baseline on a fold, or the DICA-family
// methods of one pair of bandwidths on a fold.
type cvTask struct {
	fold    int
	input   bool
	key     bandwidths
	methods []*cvMethod
}

// canCrossValidate reports whether the inner cross-validation of a method
// can run on split si: at least 2 training domains, and for the methods
// with a domain term at least 2 in every fold's fitting groups.
func (e *evaluator) canCrossValidate(si int, name string) bool {
	train := e.splits[si].Train
	if len(train) < 2 {
		return false
	}
	if m, isDICA, _ := parseMethod(name); isDICA && m.UsesDomains() {
		groups := e.groups(train)
		return len(train)-len(groups[len(groups)-1]) >= 2
	}
	return true
}

// crossValidate runs the inner cross-validation of the named methods on
// split si and fills in each one's SplitResult (Params, InnerFolds,
// InnerScore, Grid) and time. Test domains are never read.
func (e *evaluator) crossValidate(ctx context.Context, si int, names []string, out map[string]*SplitResult, busy map[string]time.Duration) error {
	if len(names) == 0 {
		return nil
	}
	cv := &cvSplit{e: e, si: si, groups: e.groups(e.splits[si].Train)}
	for _, name := range names {
		g := e.grid(name)
		cm := &cvMethod{name: name, grid: g, points: g.points()}
		cm.vals = make([][][]float64, len(cv.groups))
		cm.errs = make([][]string, len(cv.groups))
		for f := range cv.groups {
			cm.vals[f] = make([][]float64, len(cm.points))
			cm.errs[f] = make([]string, len(cm.points))
		}
		cv.methods = append(cv.methods, cm)
	}
	s := e.splits[si]
	for f, held := range cv.groups {
		inner := make([]int, 0, len(s.Train)-len(held))
		for j, gr := range cv.groups {
			if j != f {
				inner = append(inner, gr...)
			}
		}
		fd := &foldData{f: f, held: held}
		fd.fitRows = e.sample(si, inner, e.o.MaxFitCells, e.rng(si, f, purposeInnerFit))
		fd.validRows = e.sample(si, held, e.o.MaxFitCells, e.rng(si, f, purposeInnerValid))
		fd.fitCells, fd.validCells = e.gather(fd.fitRows), e.gather(fd.validRows)
		fd.fitDS = e.subset(fd.fitRows)
		fd.validX = e.ds.Subset(fd.validRows).X
		cv.folds = append(cv.folds, fd)
	}
	tasks := cv.tasks()
	for f, fd := range cv.folds {
		n := 0
		for _, t := range tasks {
			if t.fold == f {
				n++
			}
		}
		e.progress("split %d/%d: inner fold %d/%d (held out %s): %s on %d cells, %d tasks",
			si+1, len(e.splits), f+1, len(cv.groups), strings.Join(e.names(fd.held), ","), strings.Join(names, ","), len(fd.fitRows), n)
	}
	workers := max(1, min(cores(), len(tasks), e.maxTasks))
	inner := max(1, cores()/workers)
	errs := make([]error, len(tasks))
	next := make(chan int, len(tasks))
	for i := range tasks {
		next <- i
	}
	close(next)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				if errs[i] = cv.run(ctx, tasks[i], inner); errs[i] != nil {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && err != context.Canceled {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, cm := range cv.methods {
		sr := out[cm.name]
		sr.InnerFolds = len(cv.groups)
		sum := make([]float64, len(cm.points))
		count := make([]int, len(cm.points))
		errs := make([]string, len(cm.points))
		for f := range cv.groups {
			for pi := range cm.points {
				if errs[pi] != "" {
					continue
				}
				if msg := cm.errs[f][pi]; msg != "" {
					errs[pi] = msg
					continue
				}
				for _, v := range cm.vals[f][pi] {
					sum[pi] += v
					count[pi]++
				}
			}
		}
		for pi := range cm.points {
			if errs[pi] == "" && count[pi] == 0 {
				errs[pi] = "no held-out training domain of the inner cross-validation has a labelled cell to score"
			}
		}
		busy[cm.name] += cm.busy
		if len(cm.points) == 1 {
			singlePoint(sr, cm.points[0], sum[0], count[0], errs[0])
			continue
		}
		if err := e.choose(cm.name, cm.points, sum, count, errs, sr); err != nil {
			return err
		}
	}
	return nil
}

// singlePoint records the inner score of a grid of one point, which is not
// chosen: its mean score, or, when it failed, no inner folds and the
// error in Grid (the point is still evaluated).
func singlePoint(sr *SplitResult, p Params, sum float64, count int, err string) {
	sr.Params = p
	if err != "" {
		sr.InnerFolds, sr.InnerScore = 0, 0
		sr.Grid = []GridPoint{{Params: p, Err: err}}
		return
	}
	sr.InnerScore = sum / float64(count)
	sr.Grid = nil
}

// tasks lists the work of the inner cross-validation, fold by fold: the
// baseline, then one task per pair of bandwidths of the DICA-family
// methods, in grid order.
func (cv *cvSplit) tasks() []cvTask {
	var out []cvTask
	for f := range cv.folds {
		var keys []bandwidths
		byKey := map[bandwidths][]*cvMethod{}
		for _, cm := range cv.methods {
			if cm.name == Input {
				out = append(out, cvTask{fold: f, input: true, methods: []*cvMethod{cm}})
				continue
			}
			for _, fp := range cm.grid.fits {
				k := keyOf(fp)
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				if !slices.Contains(byKey[k], cm) {
					byKey[k] = append(byKey[k], cm)
				}
			}
		}
		for _, k := range keys {
			out = append(out, cvTask{fold: f, key: k, methods: byKey[k]})
		}
	}
	return out
}

// charge adds d to the time of the methods, in equal parts.
func (cv *cvSplit) charge(ms []*cvMethod, d time.Duration) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	for _, cm := range ms {
		cm.busy += d / time.Duration(len(ms))
	}
}

// run runs one task with workers goroutines for its passes and
// projections. Failures of fits and learners are recorded as grid point
// errors; only a cancelled ctx is returned.
func (cv *cvSplit) run(ctx context.Context, t cvTask, workers int) error {
	e, fd := cv.e, cv.folds[t.fold]
	start := time.Now()
	if t.input {
		cm := t.methods[0]
		tr := transformer{batch: e.o.BatchCenter}
		zfit, err := tr.apply(e, fd.fitDS.X, fd.fitRows, 0)
		if err == nil {
			var zval *mat.Dense
			if zval, err = tr.apply(e, fd.validX, fd.validRows, 0); err == nil {
				err = cv.learners(ctx, cm, t.fold, 0, zfit, zval, new([]learnInput))
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cv.fail(cm, t.fold, 0, err)
		}
		cv.charge(t.methods, time.Since(start))
		return nil
	}
	// The fits of the task: every method's fit points with these
	// bandwidths, on the largest k of its grid.
	type fitRef struct {
		cm *cvMethod
		fi int
	}
	var specs []fitSpec
	var refs []fitRef
	for _, cm := range t.methods {
		kmax := slices.Max(cm.grid.components)
		for fi, fp := range cm.grid.fits {
			if keyOf(fp) == t.key {
				specs = append(specs, fitSpec{name: cm.name, p: fp, k: kmax, scaledOf: 1 + ridgeCopyOf(cm.name, specs, fp)})
				refs = append(refs, fitRef{cm, fi})
			}
		}
	}
	b, err := e.fitBand(ctx, fd.fitDS, specs, workers, true)
	if err != nil {
		return err
	}
	// A fit whose components are those of an earlier fit of the same
	// method up to a factor each (KPCA at every lambda) would give the
	// same learner inputs: it is not projected and takes that fit's
	// scores.
	live := make([]*dica.Model, len(refs))
	group := make([]int, len(refs))
	for i, r := range refs {
		if b.errs[i] == nil {
			live[i] = b.models[i]
		}
		group[i] = slices.Index(t.methods, r.cm)
	}
	copyOf := scaledCopies(live, group)
	for i, j := range b.scaledOf {
		if j >= 0 {
			copyOf[i] = j
		}
	}
	if projectAll {
		for i := range copyOf {
			copyOf[i] = -1
		}
	}
	proj := &band{plan: b.plan, models: live}
	for i, j := range copyOf {
		if j >= 0 {
			live[i] = nil
		}
	}
	zfit, err := proj.project(e, fd.fitDS.X, fd.fitRows, workers, b.features)
	if err != nil {
		return err
	}
	b.features = nil
	zval, err := proj.project(e, fd.validX, fd.validRows, workers, nil)
	if err != nil {
		return err
	}
	cv.charge(t.methods, time.Since(start))
	var seen []learnInput
	for i, r := range refs {
		start := time.Now()
		if err := b.errs[i]; err != nil {
			cv.fail(r.cm, t.fold, r.fi, err)
			continue
		}
		if j := copyOf[i]; j >= 0 {
			cv.copyScores(r.cm, t.fold, refs[j].fi, r.fi)
			continue
		}
		if err := cv.learners(ctx, r.cm, t.fold, r.fi, zfit[i], zval[i], &seen); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cv.fail(r.cm, t.fold, r.fi, err)
		}
		cv.charge([]*cvMethod{r.cm}, time.Since(start))
	}
	return nil
}

// projectAll, set by tests, solves and projects every fit, scaled
// copies too.
var projectAll = false

// ridgeCopyOf returns the index in specs of the fit of the named method at
// lambda 0 whose components those of its fit at p.Lambda > 0 equal up to a
// factor each, or -1: for KPCA, whose ridge only rescales its components
// (without a domain term and with G = C, the problem (1/n) C w = gamma
// (I + lambda C^{-1}) w of docs/MATH.md has the eigenvectors of C, with
// gamma = c^2 / (n (c + lambda)) increasing with the eigenvalue c, so in
// the same order). scaledCopies would find them so; the grid does not
// solve them (unless projectAll is set).
func ridgeCopyOf(name string, specs []fitSpec, p Params) int {
	if m, isDICA, _ := parseMethod(name); projectAll || !isDICA || m != dica.KPCA || p.Lambda <= 0 {
		return -1
	}
	return slices.IndexFunc(specs, func(s fitSpec) bool {
		q := s.p
		q.Lambda = p.Lambda
		return s.name == name && s.p.Lambda == 0 && q == p
	})
}

// copyScores gives every point of fit fi of method cm in fold f the scores
// and errors of the same point of fit from.
func (cv *cvSplit) copyScores(cm *cvMethod, f, from, fi int) {
	per := len(cm.grid.components) * len(cm.grid.learn)
	for p := range per {
		cm.vals[f][fi*per+p], cm.errs[f][fi*per+p] = cm.vals[f][from*per+p], cm.errs[f][from*per+p]
	}
}

// fail records err for every point of fit fi of method cm in fold f.
func (cv *cvSplit) fail(cm *cvMethod, f, fi int, err error) {
	per := len(cm.grid.components) * len(cm.grid.learn)
	for pi := fi * per; pi < (fi+1)*per; pi++ {
		if cm.errs[f][pi] == "" {
			cm.errs[f][pi] = fmt.Sprintf("inner fold %d: %v", f+1, err)
		}
	}
}

// learners trains the learners of fit fi of method cm on fold f's
// projections zfit (of the fitting cells, all the model's components) and
// scores them on zval (of the held-out cells), for every k and learner
// parameter of the grid. A k whose first columns are those of an earlier
// k (both at least the number of components) has that k's scores.
func (cv *cvSplit) learners(ctx context.Context, cm *cvMethod, f, fi int, zfit, zval *mat.Dense, seen *[]learnInput) error {
	e, fd := cv.e, cv.folds[f]
	_, cols := zfit.Dims()
	g := cm.grid
	per := len(g.components) * len(g.learn)
	for ki, k := range g.components {
		base := fi*per + ki*len(g.learn)
		if dup := slices.IndexFunc(g.components[:ki], func(j int) bool { return min(j, cols) == min(k, cols) || j <= 0 && k <= 0 }); dup >= 0 {
			from := fi*per + dup*len(g.learn)
			for ci := range g.learn {
				cm.vals[f][base+ci], cm.errs[f][base+ci] = cm.vals[f][from+ci], cm.errs[f][from+ci]
			}
			continue
		}
		ts, err := e.trainingSetOf(firstCols(zfit, k), fd.fitCells, e.rng(cv.si, f, purposeLearner))
		var zs *mat.Dense
		if err == nil {
			zs, err = ts.scaler.Apply(firstCols(zval, k))
		}
		if err == nil {
			if j := slices.IndexFunc(*seen, func(in learnInput) bool { return in.same(ts.zs, zs) }); j >= 0 {
				in := (*seen)[j]
				for ci := range g.learn {
					cm.vals[f][base+ci], cm.errs[f][base+ci] = in.cm.vals[f][in.base+ci], in.cm.errs[f][in.base+ci]
				}
				continue
			}
			*seen = append(*seen, learnInput{train: ts.zs, valid: zs, cm: cm, base: base})
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for ci := range g.learn {
				cm.errs[f][base+ci] = fmt.Sprintf("inner fold %d: %v", f+1, err)
			}
			continue
		}
		for ci, lp := range g.learn {
			pi := base + ci
			l, err := e.learn(ctx, ts, lp)
			if err == nil {
				acc := map[int]*tally{}
				if err = e.scoreStdOf(l, zs, fd.validCells, acc, nil); err == nil {
					for _, gi := range fd.held {
						if t := acc[gi]; t != nil { // else no labelled cell: not scored
							cm.vals[f][pi] = append(cm.vals[f][pi], e.value(t))
						}
					}
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cm.errs[f][pi] = fmt.Sprintf("inner fold %d: %v", f+1, err)
			}
		}
	}
	return nil
}

// learnInput is the standardized input of the learners of one grid
// point: the training and the held-out cells' features.
type learnInput struct {
	train, valid *mat.Dense
	cm           *cvMethod
	base         int // the index of the point's first learner parameter
}

// sameInputTol is the largest difference between two standardized
// features (values of order 1) that makes them the same learner input.
const sameInputTol = 1e-9

// same reports whether the standardized features train and valid are
// those of in up to the signs of the columns (to sameInputTol): every
// learner then gives the same predictions, since the linear SVM, the
// Gaussian kernels and the domain embeddings are unchanged by a column's
// sign. KPCA at every lambda is such a case: the ridge rescales its
// components without turning them.
func (in learnInput) same(train, valid *mat.Dense) bool {
	pairs := [2][2]*mat.Dense{{in.train, train}, {in.valid, valid}}
	for _, pair := range pairs {
		ar, ac := pair[0].Dims()
		br, bc := pair[1].Dims()
		if ar != br || ac != bc {
			return false
		}
	}
	_, c := train.Dims()
	for j := range c {
		// The sign of column j: that of the first value away from zero.
		sign := 1.0
		a, b := in.train.RawMatrix(), train.RawMatrix()
		for i := range a.Rows {
			if x := a.Data[i*a.Stride+j]; math.Abs(x) > sameInputTol {
				if x*b.Data[i*b.Stride+j] < 0 {
					sign = -1
				}
				break
			}
		}
		for _, pair := range pairs {
			a, b := pair[0].RawMatrix(), pair[1].RawMatrix()
			for i := range a.Rows {
				if math.Abs(a.Data[i*a.Stride+j]-sign*b.Data[i*b.Stride+j]) > sameInputTol {
					return false
				}
			}
		}
	}
	return true
}
