package eval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
)

// finalGroup is a set of DICA-family methods whose chosen points share
// their bandwidths and whose fits share their cells (the training cells,
// or every cell of the split for the transductive fits): their final fits
// share one pass over the cells and each cell's kernel row.
type finalGroup struct {
	names []string
	band  *band
	// trans: the methods are fitted transductively, on the cells of the
	// test domains too.
	trans bool
}

// finalMethod is the final stage of one method on a split.
type finalMethod struct {
	name  string
	sr    *SplitResult
	group *finalGroup // nil for the baseline
	index int         // the method's index in group
	l     *learner
	acc   tally // pooled over the test cells
	mix   *mixingSample
	busy  time.Duration
}

// final refits each method's chosen transformation on the split's
// training cells, trains its learner and scores every test domain, filling
// in the rest of the methods' SplitResults (whose Params are set). The
// fits of methods whose points share bandwidths share one pass, and each
// test cell's kernel row is computed once for them.
func (e *evaluator) final(ctx context.Context, si int, names []string, srs map[string]*SplitResult, busy map[string]time.Duration) error {
	s := e.splits[si]
	var testCells int
	for _, gi := range s.Test {
		testCells += len(e.domainRows(si, gi))
	}
	unseen := e.unseenClasses(si)
	for _, name := range names {
		srs[name].TestCells, srs[name].UnseenClasses = testCells, unseen
	}
	fms, groups, err := e.finalFit(ctx, si, names, srs)
	if err != nil {
		return err
	}
	for _, fm := range fms {
		fm.mix = e.newMixingSample(si)
		fm.sr.Confusion = e.newConfusion()
	}

	// Test domains, each on all its cells (after CellsPerDomain).
	for _, gi := range s.Test {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows := e.domainRows(si, gi)
		zt, err := e.projectFinal(fms, groups, e.ds.Subset(rows).X, rows)
		if err != nil {
			return err
		}
		for i, fm := range fms {
			start := time.Now()
			acc := map[int]*tally{}
			conf := e.newConfusion()
			if err := e.score(fm.l, zt[i], rows, acc, conf); err != nil {
				return fmt.Errorf("eval: %s: scoring %s: %w", fm.name, e.ds.DomainNames[gi], err)
			}
			t := acc[gi]
			if t == nil {
				fm.sr.Unscored = append(fm.sr.Unscored, e.ds.DomainNames[gi])
				if err := fm.mix.add(fm.l, zt[i], rows); err != nil {
					return err
				}
				fm.busy += time.Since(start)
				continue
			}
			fm.acc.sum += t.sum
			fm.acc.count += t.count
			fm.acc.cells += t.cells
			d := DomainScore{Domain: e.ds.DomainNames[gi], Cells: t.cells, Score: e.value(t)}
			if conf != nil {
				addConfusion(fm.sr.Confusion, conf)
				d.FMeasure = FMeasure(conf, -1)
			}
			fm.sr.Scores = append(fm.sr.Scores, d)
			if err := fm.mix.add(fm.l, zt[i], rows); err != nil {
				return err
			}
			fm.busy += time.Since(start)
		}
	}
	for _, fm := range fms {
		start := time.Now()
		sr := fm.sr
		if len(sr.Scores) == 0 {
			return fmt.Errorf("eval: %s: no test domain of the split has a labelled cell to score (%s)", fm.name, strings.Join(sr.Unscored, ", "))
		}
		sr.Pooled, sr.pooled = e.value(&fm.acc), fm.acc
		for _, d := range sr.Scores {
			sr.DomainMean += d.Score
		}
		sr.DomainMean /= float64(len(sr.Scores))
		var err error
		if sr.Mixing, err = fm.mix.measure(ctx); err != nil {
			return fmt.Errorf("eval: %s: mixing measures of the test domains: %w", fm.name, err)
		}
		fm.busy += time.Since(start)
		busy[fm.name] += fm.busy
	}
	return nil
}

// finalFit refits each named method's chosen transformation
// (srs[name].Params) on the training cells of split si, all of them or
// FinalFitCells, and trains its learner on the projections of at most
// MaxTrainCells of them, filling in the SplitResults' fit fields. The fits
// of methods whose points share bandwidths share one pass, and the kernel
// rows of the learners' training cells are computed once for them.
func (e *evaluator) finalFit(ctx context.Context, si int, names []string, srs map[string]*SplitResult) ([]*finalMethod, []*finalGroup, error) {
	s := e.splits[si]
	var trainCells int
	for _, gi := range s.Train {
		trainCells += len(e.domainRows(si, gi))
	}
	// The fitting cells: the training domains', and for the transductive
	// fits every domain's of the split.
	fitRows := map[bool][]int{false: e.sample(si, s.Train, e.o.FinalFitCells, e.rng(si, 0, purposeFinalFit))}
	for _, name := range names {
		if e.transductive(name) && fitRows[true] == nil {
			fitRows[true] = e.sample(si, e.fitDomains(si, true), e.o.FinalFitCells, e.rng(si, 0, purposeFinalFit))
		}
	}
	trainRows := e.sample(si, s.Train, e.o.MaxTrainCells, e.rng(si, 0, purposeFinalTrain))
	trainNames := strings.Join(e.names(s.Train), ",")

	var fms []*finalMethod
	var groups []*finalGroup
	type groupKey struct {
		bandwidths
		trans bool
	}
	byKey := map[groupKey]*finalGroup{}
	var desc []string
	for _, name := range names {
		sr := srs[name]
		sr.TrainCells = trainCells
		fm := &finalMethod{name: name, sr: sr}
		if name != Input {
			trans := e.transductive(name)
			sr.FitCells, sr.Transductive = len(fitRows[trans]), trans
			k := groupKey{keyOf(sr.Params), trans}
			g := byKey[k]
			if g == nil {
				g = &finalGroup{trans: trans}
				byKey[k] = g
				groups = append(groups, g)
			}
			fm.group, fm.index = g, len(g.names)
			g.names = append(g.names, name)
		} else {
			sr.FitCells = len(trainRows)
		}
		fms = append(fms, fm)
		d := fmt.Sprintf("%s (%s)", name, paramString(name, sr.Params, e.regression))
		if sr.Transductive {
			d = fmt.Sprintf("%s (%s; transductive, %d cells of %d domains)", name, paramString(name, sr.Params, e.regression), len(fitRows[true]), len(e.fitDomains(si, true)))
		}
		desc = append(desc, d)
	}
	e.progress("split %d/%d: final fits on %d cells of %d training domains: %s", si+1, len(e.splits), len(fitRows[false]), len(s.Train), strings.Join(desc, ", "))

	// Final fits, one pass per group of bandwidths and fitting cells.
	if len(groups) > 0 {
		fitDS := map[bool]*dataset.Dataset{}
		for _, g := range groups {
			if fitDS[g.trans] == nil {
				fitDS[g.trans] = e.fitSet(si, fitRows[g.trans], g.trans)
			}
		}
		for _, g := range groups {
			start := time.Now()
			var specs []fitSpec
			for _, name := range g.names {
				specs = append(specs, fitSpec{name: name, p: srs[name].Params, k: srs[name].Params.Components})
			}
			b, err := e.fitBand(ctx, fitDS[g.trans], specs, cores(), false)
			if err != nil {
				return nil, nil, err
			}
			for i, name := range g.names {
				if b.errs[i] != nil {
					return nil, nil, fmt.Errorf("eval: %s: final fit on %s: %w", name, trainNames, b.errs[i])
				}
			}
			g.band = b
			chargeFinal(fms, g, time.Since(start))
		}
	}

	// The learners, on the training cells' projections.
	xTrain := e.ds.Subset(trainRows).X
	zTrain, err := e.projectFinal(fms, groups, xTrain, trainRows)
	if err != nil {
		return nil, nil, err
	}
	for i, fm := range fms {
		start := time.Now()
		sr := fm.sr
		z := zTrain[i]
		_, sr.Components = z.Dims()
		if g := fm.group; g != nil {
			m := g.band.models[fm.index]
			sr.SigmaUsed = kernel.Bandwidth(m.Config().Kernel)
			if e.regression && m.Config().Method.Supervised() {
				sr.TargetSigmaUsed = kernel.Bandwidth(m.Config().OutputKernel)
			}
		}
		l, err := e.train(ctx, z, trainRows, sr.Params, e.rng(si, 0, purposeLearner))
		if err != nil {
			return nil, nil, fmt.Errorf("eval: %s: training the learner on %s: %w", fm.name, trainNames, err)
		}
		fm.l = l
		sr.Learner = l.desc
		fm.busy += time.Since(start)
		sr.FitSeconds = fm.busy.Seconds()
	}
	return fms, groups, nil
}

// chargeFinal adds d to the time of the methods of group g, in equal parts.
func chargeFinal(fms []*finalMethod, g *finalGroup, d time.Duration) {
	for _, fm := range fms {
		if fm.group == g {
			fm.busy += d / time.Duration(len(g.names))
		}
	}
}

// projectFinal returns each method's projection of the rows of x (the
// data set's rows rows) on its chosen number of components: the inputs
// for the baseline, and the models' projections, one computation of the
// kernel rows per group.
func (e *evaluator) projectFinal(fms []*finalMethod, groups []*finalGroup, x *mat.Dense, rows []int) ([]*mat.Dense, error) {
	zs := make(map[*finalGroup][]*mat.Dense, len(groups))
	for _, g := range groups {
		start := time.Now()
		z, err := g.band.project(e, x, rows, cores(), nil)
		if err != nil {
			return nil, err
		}
		zs[g] = z
		chargeFinal(fms, g, time.Since(start))
	}
	out := make([]*mat.Dense, len(fms))
	for i, fm := range fms {
		if fm.group == nil {
			z, err := transformer{batch: e.o.BatchCenter}.apply(e, x, rows, 0)
			if err != nil {
				return nil, err
			}
			out[i] = z
			continue
		}
		out[i] = firstCols(zs[fm.group][fm.index], fm.sr.Params.Components)
	}
	return out, nil
}
