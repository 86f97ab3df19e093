package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/mixing"
)

// evaluator holds the data and options of one evaluation.
type evaluator struct {
	ds         *dataset.Dataset
	splits     []Split
	o          Options
	methods    []string
	regression bool
	byDomain   [][]int // rows of each domain, in order
	// splitRows[si][g] holds the rows of domain g in split si after
	// CellsPerDomain (nil without it: byDomain).
	splitRows [][][]int
	// trainOnly: the splits have training domains only (Choose,
	// TrainFinal).
	trainOnly bool
	// progressMu serializes the calls of Options.Progress.
	progressMu sync.Mutex
	// maxTasks bounds the inner tasks that run at once (memory).
	maxTasks int
}

// domainRows returns the rows of domain g in split si, in order.
func (e *evaluator) domainRows(si, g int) []int {
	if e.splitRows != nil && e.splitRows[si] != nil {
		return e.splitRows[si][g]
	}
	return e.byDomain[g]
}

// subsampleDomains draws the rows of each domain of each split when
// CellsPerDomain is set.
func (e *evaluator) subsampleDomains() {
	c := e.o.CellsPerDomain
	if c <= 0 {
		return
	}
	e.splitRows = make([][][]int, len(e.splits))
	for si, s := range e.splits {
		rows := make([][]int, len(e.byDomain))
		for _, g := range append(append([]int(nil), s.Train...), s.Test...) {
			all := e.byDomain[g]
			if len(all) <= c {
				rows[g] = all
				continue
			}
			pick := kernel.SampleRows(len(all), c, e.rng(si, g, purposeCells).Uint64())
			r := make([]int, len(pick))
			for i, p := range pick {
				r[i] = all[p]
			}
			rows[g] = r
		}
		e.splitRows[si] = rows
	}
}

// cellsUsed counts the distinct cells of the training and test domains of
// all splits.
func (e *evaluator) cellsUsed() int {
	if e.splitRows == nil {
		used := make([]bool, len(e.byDomain))
		n := 0
		for _, s := range e.splits {
			for _, g := range append(append([]int(nil), s.Train...), s.Test...) {
				if !used[g] {
					used[g] = true
					n += len(e.byDomain[g])
				}
			}
		}
		return n
	}
	used := make([]bool, e.ds.N())
	n := 0
	for si, s := range e.splits {
		for _, g := range append(append([]int(nil), s.Train...), s.Test...) {
			for _, p := range e.domainRows(si, g) {
				if !used[p] {
					used[p] = true
					n++
				}
			}
		}
	}
	return n
}

func newEvaluator(ds *dataset.Dataset, splits []Split, o Options) (*evaluator, error) {
	return buildEvaluator(ds, splits, o, false)
}

// buildEvaluator is newEvaluator; with trainOnly the splits need no test
// domains (Choose, TrainFinal).
func buildEvaluator(ds *dataset.Dataset, splits []Split, o Options, trainOnly bool) (*evaluator, error) {
	if ds == nil {
		return nil, errors.New("eval: nil data set")
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	e := &evaluator{ds: ds, splits: splits, trainOnly: trainOnly}
	switch {
	case ds.Target != nil:
		e.regression = true
	case ds.Label != nil:
		if err := ds.RequireSupervision(); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	default:
		return nil, errors.New("eval: the data has no class labels or real targets to predict")
	}
	e.o = o.withDefaults(e.regression)
	if err := e.o.check(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range e.o.Methods {
		name = strings.ToLower(strings.TrimSpace(name))
		if _, _, err := parseMethod(name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("eval: method %q given twice", name)
		}
		seen[name] = true
		e.methods = append(e.methods, name)
	}
	e.byDomain = make([][]int, len(ds.DomainNames))
	for p, g := range ds.Domain {
		e.byDomain[g] = append(e.byDomain[g], p)
	}
	if len(splits) == 0 {
		return nil, errors.New("eval: no split of the domains")
	}
	for si, s := range splits {
		if err := e.checkSplit(si, s); err != nil {
			return nil, err
		}
	}
	mp := memoryPlan(ds, e.o)
	e.maxTasks = int(mp.tasks)
	if e.o.MaxMemory > 0 {
		t := mp.maxTasks(e.o.MaxMemory)
		if t == 0 {
			return nil, &MemoryError{Need: mp.total(1), Limit: e.o.MaxMemory, Step: mp.what(1)}
		}
		e.maxTasks = int(t)
	}
	e.subsampleDomains()
	return e, nil
}

func (e *evaluator) checkSplit(si int, s Split) error {
	if e.trainOnly && len(s.Train) == 0 {
		return errors.New("eval: no training domains")
	}
	if !e.trainOnly && (len(s.Train) == 0 || len(s.Test) == 0) {
		return fmt.Errorf("eval: split %d has %d training and %d test domains; need at least one of each", si+1, len(s.Train), len(s.Test))
	}
	role := map[int]string{}
	for _, part := range []struct {
		name string
		doms []int
	}{{"training", s.Train}, {"test", s.Test}} {
		for _, g := range part.doms {
			if g < 0 || g >= len(e.ds.DomainNames) {
				return fmt.Errorf("eval: split %d: domain index %d out of range [0, %d)", si+1, g, len(e.ds.DomainNames))
			}
			name := e.ds.DomainNames[g]
			if r, ok := role[g]; ok {
				if r == part.name {
					return fmt.Errorf("eval: split %d: domain %q given twice as a %s domain", si+1, name, r)
				}
				return fmt.Errorf("eval: split %d: domain %q is both a training and a test domain", si+1, name)
			}
			role[g] = part.name
			if len(e.byDomain[g]) == 0 {
				return fmt.Errorf("eval: split %d: %s domain %q has no cells", si+1, part.name, name)
			}
		}
	}
	for _, name := range e.methods {
		m, isDICA, _ := parseMethod(name)
		g := e.grid(name)
		nt := len(s.Train)
		if isDICA && m.UsesDomains() && nt < 2 && !(e.transductive(name) && len(s.Test) > 0) {
			return fmt.Errorf("eval: split %d: %s needs at least 2 training domains, have %d%s", si+1, name, nt, e.domainsHint(name))
		}
		if g.size() == 1 {
			continue
		}
		if nt < 2 {
			return fmt.Errorf("eval: split %d: the inner cross-validation over %d grid points needs at least 2 training domains, have %d (give a single value per hyperparameter)", si+1, g.size(), nt)
		}
		if isDICA && m.UsesDomains() {
			groups := e.groups(s.Train)
			if minIn := nt - len(groups[len(groups)-1]); minIn < 2 {
				return fmt.Errorf("eval: split %d: the inner cross-validation of %s leaves %d training domain(s) in a fold; %s needs 2: give at least 3 training domains or a single value per hyperparameter", si+1, name, minIn, name)
			}
		}
	}
	return nil
}

// groups cuts the training domains into at most InnerFolds contiguous groups
// of sizes differing by at most one (the larger ones last).
func (e *evaluator) groups(train []int) [][]int {
	f := min(e.o.InnerFolds, len(train))
	out := make([][]int, f)
	for i := range out {
		out[i] = train[i*len(train)/f : (i+1)*len(train)/f]
	}
	return out
}

// methodGrid is the grid of one method: the fit keys (the parameters that
// need a new fit), the components and the C values.
type methodGrid struct {
	fits       []Params // Sigma, TargetSigma, Lambda, Epsilon
	components []int
	learn      []Params // DistSigma, C
}

func (g methodGrid) size() int { return len(g.fits) * len(g.components) * len(g.learn) }

// points lists the grid points in grid order.
func (g methodGrid) points() []Params {
	var out []Params
	for _, f := range g.fits {
		for _, k := range g.components {
			for _, lp := range g.learn {
				p := f
				p.Components, p.DistSigma, p.C = k, lp.DistSigma, lp.C
				out = append(out, p)
			}
		}
	}
	return out
}

func (e *evaluator) grid(name string) methodGrid {
	gr := e.o.Grid
	var g methodGrid
	dist := []float64{0}
	if e.o.Learner == Distributional {
		dist = gr.DistSigma
	}
	for _, ds := range dist {
		for _, c := range gr.C {
			g.learn = append(g.learn, Params{DistSigma: ds, C: c})
		}
	}
	m, isDICA, _ := parseMethod(name)
	if !isDICA {
		g.fits = []Params{{}}
		g.components = []int{0}
		return g
	}
	g.components = gr.Components
	eps := gr.Epsilon
	if !m.Supervised() {
		eps = []float64{0}
	}
	tsig := []float64{0}
	if m.Supervised() && e.regression {
		tsig = gr.TargetSigma
	}
	for _, s := range gr.Sigma {
		for _, ts := range tsig {
			for _, l := range gr.Lambda {
				for _, ep := range eps {
					g.fits = append(g.fits, Params{Sigma: s, TargetSigma: ts, Lambda: l, Epsilon: ep})
				}
			}
		}
	}
	return g
}

func (e *evaluator) progress(format string, args ...any) {
	if e.o.Progress != nil {
		e.progressMu.Lock()
		defer e.progressMu.Unlock()
		e.o.Progress(fmt.Sprintf(format, args...))
	}
}

// Random streams of the subsamples: one per split, fold and purpose, shared
// by all methods so that they see the same cells.
const (
	purposeInnerFit = iota
	purposeInnerValid
	purposeFinalFit
	purposeFinalTrain
	purposeLearner
	purposeCells  // CellsPerDomain; the fold is the domain
	purposeMixing // the mixing subsample; the fold is the domain
)

func (e *evaluator) rng(split, fold, purpose int) *rand.Rand {
	return rand.New(rand.NewPCG(e.o.Seed, uint64(split)<<32|uint64(fold)<<8|uint64(purpose)))
}

// sample returns the rows of the domains in split si, at most limit of
// them (0: all), each domain in proportion to its size (at least 2 cells),
// in increasing order within each domain.
func (e *evaluator) sample(si int, doms []int, limit int, rng *rand.Rand) []int {
	total := 0
	for _, g := range doms {
		total += len(e.domainRows(si, g))
	}
	var out []int
	for _, g := range doms {
		rows := e.domainRows(si, g)
		if limit <= 0 || total <= limit {
			out = append(out, rows...)
			continue
		}
		k := max(min(2, len(rows)), int(float64(len(rows))*float64(limit)/float64(total)))
		for _, i := range kernel.SampleRows(len(rows), k, rng.Uint64()) {
			out = append(out, rows[i])
		}
	}
	return out
}

// subset returns the rows as a data set with only their domains and classes.
func (e *evaluator) subset(rows []int) *dataset.Dataset {
	s := e.ds.Subset(rows)
	s.Compact()
	return s
}

func (e *evaluator) names(doms []int) []string {
	out := make([]string, len(doms))
	for i, g := range doms {
		out[i] = e.ds.DomainNames[g]
	}
	return out
}

// transformer projects inputs: a fitted model, or the identity.
type transformer struct {
	model *dica.Model
	// batch centers each domain with its own mean (Options.BatchCenter).
	batch bool
}

// apply projects the rows of x, which are the data set's rows (in runs of
// equal domain), on the first k components (all when k is 0).
func (t transformer) apply(e *evaluator, x *mat.Dense, rows []int, k int) (*mat.Dense, error) {
	if !t.batch {
		if t.model == nil {
			return x, nil
		}
		z, err := t.model.Transform(x, dica.TransformOptions{})
		if err != nil {
			return nil, err
		}
		return firstCols(z, k), nil
	}
	var out *mat.Dense
	_, d := x.Dims()
	for lo := 0; lo < len(rows); {
		hi := lo + 1
		for hi < len(rows) && e.ds.Domain[rows[hi]] == e.ds.Domain[rows[lo]] {
			hi++
		}
		var z *mat.Dense
		if t.model == nil {
			z = mat.DenseCopyOf(x.Slice(lo, hi, 0, d))
			r, _ := z.Dims()
			for j := range d {
				var m float64
				for i := range r {
					m += z.At(i, j)
				}
				m /= float64(r)
				for i := range r {
					z.Set(i, j, z.At(i, j)-m)
				}
			}
		} else {
			var err error
			z, err = t.model.Transform(mat.DenseCopyOf(x.Slice(lo, hi, 0, d)), dica.TransformOptions{BatchCenter: true})
			if err != nil {
				return nil, err
			}
			z = firstCols(z, k)
		}
		if out == nil {
			_, c := z.Dims()
			out = mat.NewDense(len(rows), c, nil)
		}
		out.Slice(lo, hi, 0, out.RawMatrix().Cols).(*mat.Dense).Copy(z)
		lo = hi
	}
	return out, nil
}

// firstCols returns the first k columns of z (all when it has fewer).
func firstCols(z *mat.Dense, k int) *mat.Dense {
	r, c := z.Dims()
	if k <= 0 || k >= c {
		return z
	}
	return mat.DenseCopyOf(z.Slice(0, r, 0, k))
}

func (e *evaluator) value(t *tally) float64 {
	if e.regression {
		return math.Sqrt(t.sum / float64(t.count))
	}
	return t.sum / float64(t.count)
}

// better reports whether score a beats b.
func (e *evaluator) better(a, b float64) bool {
	if e.regression {
		return a < b
	}
	return a > b
}

// unseenClasses returns the names of the classes that cells of the test
// domains of split si have and no cell of its training domains has.
func (e *evaluator) unseenClasses(si int) []string {
	if e.regression {
		return nil
	}
	s := e.splits[si]
	inTrain := make([]bool, len(e.ds.ClassNames))
	for _, g := range s.Train {
		for _, p := range e.domainRows(si, g) {
			if c := e.ds.Label[p]; c != dataset.NoLabel {
				inTrain[c] = true
			}
		}
	}
	inTest := make([]bool, len(e.ds.ClassNames))
	for _, g := range s.Test {
		for _, p := range e.domainRows(si, g) {
			if c := e.ds.Label[p]; c != dataset.NoLabel {
				inTest[c] = true
			}
		}
	}
	var out []string
	for c, name := range e.ds.ClassNames {
		if inTest[c] && !inTrain[c] {
			out = append(out, name)
		}
	}
	return out
}

// mixingSample gathers the standardized projections of a seeded subsample
// of the test cells of a split, for the mixing measures.
type mixingSample struct {
	// pick holds, by test domain index, the positions (within the domain's
	// rows) of the chosen cells.
	e       *evaluator
	pick    map[int][]int
	order   map[int]int // test domain -> position in the split's Test
	z       []float64
	domains []int
	classes []int
	cols    int
}

// newMixingSample chooses the cells: at most MixingCells / (number of test
// domains) of each test domain, the same for every method. It returns nil
// (measuring nothing) with fewer than 2 test domains or when the measures
// are off.
func (e *evaluator) newMixingSample(si int) *mixingSample {
	s := e.splits[si]
	if e.o.MixingCells < 0 || len(s.Test) < 2 {
		return nil
	}
	per := e.o.MixingCells / len(s.Test)
	if per < 2 {
		return nil
	}
	m := &mixingSample{e: e, pick: map[int][]int{}, order: map[int]int{}}
	for i, g := range s.Test {
		n := len(e.domainRows(si, g))
		m.pick[g] = kernel.SampleRows(n, per, e.rng(si, g, purposeMixing).Uint64())
		m.order[g] = i
	}
	return m
}

// add adds the chosen cells of one test domain from its projection z (of
// the domain's rows), standardized as the learner sees them.
func (m *mixingSample) add(l *learner, z *mat.Dense, rows []int) error {
	if m == nil || len(rows) == 0 {
		return nil
	}
	g := m.e.ds.Domain[rows[0]]
	pick := m.pick[g]
	if len(pick) == 0 {
		return nil
	}
	_, c := z.Dims()
	sub := mat.NewDense(len(pick), c, nil)
	for i, p := range pick {
		sub.SetRow(i, z.RawRowView(p))
	}
	zs, err := l.scaler.Apply(sub)
	if err != nil {
		return err
	}
	m.cols = c
	for i, p := range pick {
		m.z = append(m.z, zs.RawRowView(i)...)
		m.domains = append(m.domains, m.order[g])
		if m.e.ds.Label != nil {
			m.classes = append(m.classes, m.e.ds.Label[rows[p]])
		}
	}
	return nil
}

// measure computes the mixing measures of the gathered cells.
func (m *mixingSample) measure(ctx context.Context) (*mixing.Report, error) {
	if m == nil || len(m.domains) == 0 {
		return nil, nil
	}
	x := mat.NewDense(len(m.domains), m.cols, m.z)
	var classes []int
	if !m.e.regression && !slices.Contains(m.classes, dataset.NoLabel) {
		classes = m.classes // cLISI needs the class of every cell
	}
	return mixing.Measure(ctx, x, m.domains, classes, mixing.Options{Perplexity: m.e.o.Perplexity, Seed: m.e.o.Seed})
}

// choose records every grid point's mean inner score (or error) in sr and
// chooses the best point.
func (e *evaluator) choose(name string, points []Params, sum []float64, count []int, errs []string, sr *SplitResult) error {
	best := -1
	for i, p := range points {
		gp := GridPoint{Params: p, Err: errs[i]}
		if gp.Err == "" {
			gp.Score = sum[i] / float64(count[i])
			if best < 0 || e.better(gp.Score, sr.Grid[best].Score) {
				best = i
			}
		}
		sr.Grid = append(sr.Grid, gp)
	}
	if best < 0 {
		return fmt.Errorf("eval: %s: every grid point failed in the inner cross-validation; first: %s", name, errs[0])
	}
	sr.Params, sr.InnerScore = points[best], sr.Grid[best].Score
	return nil
}

// paramString describes the parameters a method uses.
func paramString(name string, p Params, regression bool) string {
	c := "C"
	if regression {
		c = "ridge"
	}
	_, isDICA, _ := parseMethod(name)
	k1 := ""
	if p.DistSigma > 0 {
		k1 = fmt.Sprintf(" k1sigma=%g", p.DistSigma)
	}
	if !isDICA {
		return strings.TrimSpace(fmt.Sprintf("%s %s=%g", k1, c, p.C))
	}
	sig := "median"
	if p.Sigma > 0 {
		sig = fmt.Sprintf("%g", p.Sigma)
	}
	s := fmt.Sprintf("sigma=%s lambda=%g", sig, p.Lambda)
	if p.Epsilon > 0 {
		s += fmt.Sprintf(" epsilon=%g", p.Epsilon)
	}
	return s + fmt.Sprintf(" k=%d%s %s=%g", p.Components, k1, c, p.C)
}

// ParamString describes the parameters of a method in a short line, such as
// "sigma=1 lambda=0.1 epsilon=0.0001 k=5 C=1"; regression names C "ridge",
// and a requested bandwidth of the distributional learner's domain kernel
// appears as "k1sigma=0.5" before it.
func ParamString(method string, p Params, regression bool) string {
	return paramString(strings.ToLower(method), p, regression)
}
