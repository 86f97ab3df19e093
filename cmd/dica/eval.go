package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/internal/sysmem"
	"github.com/dicalab/dica/mixing"
)

const evalUsage = `Usage: dica eval --data FILES [flags]

Leave-domains-out evaluation: does a classifier trained on some samples work
on samples it has never seen? For each method the cells of the training
samples are projected (DICA, UDICA, KPCA, COIR; "input" is no projection at
all), a linear SVM is trained to predict the label (the gated population),
and the accuracy is measured on each test sample separately. With real
targets (--target) kernel ridge regression is trained instead and the root
mean squared error (RMSE) is reported.

Hyperparameters given as lists (--sigma 1,2 --lambda 0,0.1 ...) are chosen
for each method by an inner cross-validation on the training samples only:
groups of training samples are held out in turn (at most --inner-folds
groups). The test samples are never used to choose anything. The inner
score is shown for single values too.

Supervised DICA and COIR keep at most (number of populations - 1)
components, whatever --components asks for; the table says how many were
used.

Splits of the samples into training and test samples (--splits):
  auto     --train-domains and/or --test-domains as given (the other samples
           complete the missing list); without either, leave-one-domain-out
  lodo     every sample tested once, trained on all the others
  random   the paper's protocol: --repeats random draws of --train-count
           training samples, the others tested (seeded by --seed)
  reference
           DeepCyTOF's protocol: one hand-gated sample (--reference NAME, or
           auto: the sample whose marker covariance, after --transform, is
           closest on average to the others' in Frobenius norm) trains the
           classifier, every other sample is tested; hyperparameters take
           single values (no inner cross-validation on one sample)
Samples are named after their files without extension (sample3.csv is
sample3), or by the --domain column; see "Domains" below for ranges and
globs. --cells-per-domain N keeps at most N cells of every training and test
sample of each split (the paper's n_i; seeded).

Each split is scored per test sample and pooled over all its test cells;
with several splits the tables give the pooled scores as mean ± sd over the
splits, and the score of all test cells of all splits together (what the
summed confusion matrix gives). Beside the
score, the mixing of the test samples in the space the learner sees (the
standardized components, or inputs) is measured on --mixing-cells test cells
spread evenly over the test samples (with at least 2 test samples): iLISI
(the effective number of samples around a cell: higher is better mixed),
cLISI (the effective number of populations around a cell: 1 is pure), the
silhouette of the samples (lower is better mixed) and the distributional
variance of the test samples (the paper's measure, Gaussian kernel; lower
is better mixed). A confusion matrix (true population by predicted) is
printed for each method, and a warning for test populations that no
training cell has.

The learner is a linear SVM on the pooled training cells (the paper's
"pooling" setting), or the paper's distributional SVM (--learner
distributional).

To keep this fast on large data, each inner fit uses at most
--max-fit-cells cells and the final SVM at most --max-train-cells cells
(sampled from each training sample in proportion to its size); the final
DICA fit uses all training cells, and every test cell is scored (after
--cells-per-domain).

With --batch-center each sample (training and test) is projected centered
with its own mean, which removes a sample's overall shift; this uses the
unlabelled cells of the test samples (transductive), never their labels.

With --transductive the projections of UDICA and KPCA are fitted on the
cells of the training and the test samples (the test samples' cells
unlabelled: their labels are never read), the classifier on the training
cells only: the new samples' cells are available when they are gated.
UDICA then fits with a single training sample (--splits reference). DICA
and COIR need every cell's label to be fitted, so they are fitted on the
training samples only (DICA cannot be fitted on one sample); the header
says which method used what. The inner cross-validation never uses the
held-out or test samples.

Besides the accuracy, every test sample is scored by the FlowCAP
F-measure (Aghaeepour et al., Nature Methods 2013): for each gated
population the best F1 (harmonic mean of precision and recall) over the
predicted populations, weighted by the population's share of the cells;
per sample and mean ± sd, in the tables and the JSON ("f_measure").

Examples:

  # The 16 CyTOF samples: train on samples 1-8, test on the 8 others,
  # choosing sigma and lambda on samples 1-8:
  dica eval --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --methods input,kpca,udica,dica \
      --train-domains sample1-sample8 --test-domains 'sample9,sample1[0-6]' \
      --sigma 1,2 --lambda 0,0.1

  # The paper's cytometry protocol: 30 random draws of 10 training samples,
  # 500 cells per sample, pooling and distributional SVM:
  dica eval --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --splits random --train-count 10 --repeats 30 \
      --cells-per-domain 500 --learner distributional

  # DeepCyTOF's protocol: one reference sample chosen by covariance trains
  # the classifier, the 15 others are tested; UDICA and KPCA fitted on
  # every sample's unlabelled cells:
  dica eval --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --splits reference --transductive --methods input,kpca,udica

  # Leave-one-sample-out over FCS-derived CSVs, machine-readable output:
  dica eval --data cells.csv --domain patient --label population \
      --methods input,dica --components 2,5 --C 0.1,1 --json
` + domainsHelp + dataHelp

// floatList parses a comma-separated list of numbers.
func floatList(flagName, s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, usageErr("--%s: %q is not a number", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// evalFlags are the flags of dica eval besides the data flags.
type evalFlags struct {
	methods, solver, trainDoms, testDoms, splits, maxMem, targetSigma string
	sigma, lambda, epsilon, components, cost, learner, distSigma      string
	regSolver, cpuprofile, reference                                  string
	rank, trainCount, repeats, cellsPer, mixCells, innerFolds         int
	maxFit, finalFit, maxTrain, maxReg, distEmbed, distPoint, distRFF int
	regRank                                                           int
	perplexity                                                        float64
	batch, asJSON, quiet, transductive                                bool
	seed                                                              uint64
}

func (f *evalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.methods, "methods", strings.Join(eval.Methods(), ","), "`methods` to compare, comma-separated: input (no projection), kpca, udica, coir, dica")
	fs.StringVar(&f.solver, "solver", "nystrom", "`solver`: nystrom, rff or exact (n x n, small data)")
	fs.IntVar(&f.rank, "rank", 200, "rank `m`: Nystrom landmarks or random features")
	fs.StringVar(&f.trainDoms, "train-domains", "", "training `domains` (samples): names, ranges (1-8, sample1-sample8) or globs, comma-separated (default: all but the test domains)")
	fs.StringVar(&f.testDoms, "test-domains", "", "test `domains`, as --train-domains (default: all but the training domains; neither: leave-one-domain-out)")
	fs.StringVar(&f.splits, "splits", "auto", "`protocol`: auto (the domain lists, or leave-one-domain-out without them), lodo, random (--repeats draws of --train-count training domains), or reference (one training domain, --reference; all others tested)")
	fs.StringVar(&f.reference, "reference", "", "--splits reference: the training `domain`, or auto (default): the domain whose input covariance is closest on average to the others' (Frobenius norm)")
	fs.BoolVar(&f.transductive, "transductive", false, "fit the UDICA and KPCA projections on the test domains' unlabelled cells too (DICA and COIR: on the training domains); the learner on the training cells only")
	fs.IntVar(&f.trainCount, "train-count", 0, "--splits random: training domains per draw (`K`)")
	fs.IntVar(&f.repeats, "repeats", 10, "--splits random: number of random draws (`R`)")
	fs.IntVar(&f.cellsPer, "cells-per-domain", 0, "keep at most `N` cells of every training and test domain of each split (seeded; 0: all)")
	fs.IntVar(&f.mixCells, "mixing-cells", eval.DefaultMixingCells, fmt.Sprintf("test cells of each split for the mixing measures (`N`, at most %d; 0: none)", mixing.MaxCells))
	fs.Float64Var(&f.perplexity, "perplexity", mixing.DefaultPerplexity, "perplexity of the iLISI/cLISI neighbourhoods (`P`; 3P - 1 neighbours)")
	fs.StringVar(&f.maxMem, "max-memory", "", "memory `budget` (e.g. 8G, 500M; 0: none); default 3/4 of physical memory")
	fs.StringVar(&f.targetSigma, "target-sigma", "median", "bandwidth `values` of the output kernel on real targets (--target) for dica and coir: numbers or median (the median distance between the targets)")
	fs.StringVar(&f.sigma, "sigma", "0", "RBF bandwidth `values` to try, comma-separated (0: median heuristic)")
	fs.StringVar(&f.lambda, "lambda", "0", "ridge `values` lambda on the complexity term to try")
	fs.StringVar(&f.epsilon, "epsilon", strconv.FormatFloat(dica.DefaultEpsilon, 'g', -1, 64), "`values` of epsilon to try (DICA, COIR)")
	fs.StringVar(&f.components, "components", strconv.Itoa(dica.DefaultComponents), "numbers of components `k` to try")
	fs.StringVar(&f.cost, "C", "", "SVM cost `values` C to try (default 1), or ridges of the regression (default 0.1)")
	fs.IntVar(&f.innerFolds, "inner-folds", eval.DefaultInnerFolds, "groups of training domains in the inner cross-validation (`N`)")
	fs.IntVar(&f.maxFit, "max-fit-cells", 0, fmt.Sprintf("cells per inner fit and held-out group (`N`; default %d, %d with --solver exact)", eval.DefaultMaxFitCells, eval.DefaultMaxExactCells))
	fs.IntVar(&f.finalFit, "final-fit-cells", 0, "cells of the final fit (`N`; default all, --max-fit-cells with --solver exact)")
	fs.IntVar(&f.maxTrain, "max-train-cells", eval.DefaultMaxTrainCells, "training cells of the final SVM (`N`)")
	fs.IntVar(&f.maxReg, "max-regression-cells", eval.DefaultMaxRegressionCells, "largest training set of the exact kernel ridge regression (`N`); above it auto uses Nystrom")
	fs.StringVar(&f.learner, "learner", "plain", "`learner`: plain (linear SVM or kernel ridge on the pooled components: the paper's pooling setting; also: pooling), or distributional (the paper's k1(P_i, P_j) k2(x, x'): also sees each sample's mean embedding)")
	fs.StringVar(&f.distSigma, "dist-sigma", "0", "bandwidth `values` of the distributional learner's kernel k1 on the samples' mean embeddings (0: median distance)")
	fs.IntVar(&f.distEmbed, "dist-embed-rank", eval.DefaultEmbedRank, "Nystrom landmarks of the mean-embedding kernel (`m`)")
	fs.IntVar(&f.distPoint, "dist-point-rank", eval.DefaultDistPointRank, "Nystrom landmarks of the point kernel of the distributional regression (`m`)")
	fs.IntVar(&f.distRFF, "dist-rff", 0, "random Fourier features of k1 (`D`; 0: exact features on the training samples)")
	fs.StringVar(&f.regSolver, "regression-solver", "auto", "kernel ridge regression `solver`: auto (exact up to --max-regression-cells, Nystrom above), exact, nystrom")
	fs.IntVar(&f.regRank, "regression-rank", eval.DefaultRegressionRank, "Nystrom landmarks of the kernel ridge regression (`m`)")
	fs.BoolVar(&f.batch, "batch-center", false, "center each sample with its own mean in the projection (transductive: uses the test samples' unlabelled cells)")
	fs.Uint64Var(&f.seed, "seed", 1, "random `seed`")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile (pprof) to this `file`")
}

// options checks the flags and returns the evaluation's options.
func (f *evalFlags) options() (eval.Options, error) {
	o := eval.Options{
		Methods: splitList(f.methods), Rank: f.rank, InnerFolds: f.innerFolds,
		MaxFitCells: f.maxFit, FinalFitCells: f.finalFit, MaxTrainCells: f.maxTrain,
		MaxRegressionCells: f.maxReg, Seed: f.seed, BatchCenter: f.batch,
		CellsPerDomain: f.cellsPer, MixingCells: f.mixCells, Perplexity: f.perplexity,
		Transductive: f.transductive,
	}
	if f.mixCells == 0 {
		o.MixingCells = -1
	}
	if f.mixCells < 0 || f.mixCells > mixing.MaxCells {
		return o, usageErr("--mixing-cells %d: want 0 (none) to %d", f.mixCells, mixing.MaxCells)
	}
	if !(f.perplexity >= 1) || math.IsInf(f.perplexity, 0) {
		return o, usageErr("--perplexity %v: want a number >= 1", f.perplexity)
	}
	if f.cellsPer < 0 {
		return o, usageErr("--cells-per-domain %d: want a positive number (or 0 for all cells)", f.cellsPer)
	}
	var err error
	if o.MaxMemory, err = memoryBudget(f.maxMem); err != nil {
		return o, err
	}
	softLimit(o.MaxMemory)
	if o.Solver, err = dica.ParseSolver(f.solver); err != nil {
		return o, usageErr("--solver: %v", err)
	}
	if o.Learner, err = eval.ParseLearner(f.learner); err != nil {
		return o, usageErr("--learner: %v", strings.TrimPrefix(err.Error(), "eval: "))
	}
	if o.RegressionSolver, err = eval.ParseRegressionSolver(f.regSolver); err != nil {
		return o, usageErr("--regression-solver: %v", strings.TrimPrefix(err.Error(), "eval: "))
	}
	if o.Grid.DistSigma, err = floatList("dist-sigma", f.distSigma); err != nil {
		return o, err
	}
	o.Dist = eval.DistOptions{EmbedRank: f.distEmbed, PointRank: f.distPoint, RFF: f.distRFF}
	o.RegressionRank = f.regRank
	if err := f.checkSizes(); err != nil {
		return o, err
	}
	for _, m := range o.Methods {
		if !slices.ContainsFunc(eval.Methods(), func(k string) bool { return strings.EqualFold(m, k) }) {
			return o, usageErr("--methods: unknown method %q; want some of %s", m, strings.Join(eval.Methods(), ","))
		}
	}
	return o, f.grid(&o.Grid)
}

// checkSizes checks the flags that give ranks, folds and numbers of cells.
func (f *evalFlags) checkSizes() error {
	for _, r := range []struct {
		name string
		v    int
	}{{"dist-embed-rank", f.distEmbed}, {"dist-point-rank", f.distPoint}, {"regression-rank", f.regRank}} {
		if r.v < 1 {
			return usageErr("--%s %d: need at least 1", r.name, r.v)
		}
	}
	if f.distRFF < 0 {
		return usageErr("--dist-rff %d: need 0 or more", f.distRFF)
	}
	if f.rank < 1 || f.rank > dica.MaxRank {
		return usageErr("--rank %d: want 1 to %d", f.rank, dica.MaxRank)
	}
	if f.innerFolds < 2 {
		return usageErr("--inner-folds %d: need at least 2", f.innerFolds)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"max-fit-cells", f.maxFit}, {"final-fit-cells", f.finalFit}, {"max-train-cells", f.maxTrain}, {"max-regression-cells", f.maxReg}} {
		if c.v < 0 || (c.v > 0 && c.v < 2) {
			return usageErr("--%s %d: need at least 2 (or 0 for the default)", c.name, c.v)
		}
	}
	return nil
}

// grid reads the values to try of the inner cross-validation.
func (f *evalFlags) grid(g *eval.Grid) error {
	var err error
	if g.Sigma, err = floatList("sigma", f.sigma); err != nil {
		return err
	}
	if g.Lambda, err = floatList("lambda", f.lambda); err != nil {
		return err
	}
	if g.Epsilon, err = floatList("epsilon", f.epsilon); err != nil {
		return err
	}
	if g.C, err = floatList("C", f.cost); err != nil {
		return err
	}
	for _, c := range splitList(f.components) {
		k, err := strconv.Atoi(c)
		if err != nil || k < 1 {
			return usageErr("--components: %q is not a positive integer", c)
		}
		g.Components = append(g.Components, k)
	}
	for _, t := range splitList(f.targetSigma) {
		if strings.EqualFold(t, "median") {
			g.TargetSigma = append(g.TargetSigma, 0)
			continue
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usageErr("--target-sigma: %q is neither median nor a number > 0", t)
		}
		g.TargetSigma = append(g.TargetSigma, v)
	}
	return nil
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", evalUsage, stderr)
	var df dataFlags
	var f evalFlags
	df.register(fs, true)
	f.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	proto := evalProtocol{Name: f.splits, TrainCount: f.trainCount, Repeats: f.repeats, Seed: f.seed, Reference: f.reference}
	if err := proto.check(f.trainDoms, f.testDoms); err != nil {
		return err
	}
	methodsGiven := false
	fs.Visit(func(fl *flag.Flag) { methodsGiven = methodsGiven || fl.Name == "methods" })

	in, err := df.open(pos)
	if err != nil {
		return err
	}
	// The tables go to the standard output: never onto an input.
	if err := checkOutputs([]string{"-"}, slices.Concat(in.files, in.labels)...); err != nil {
		return err
	}
	src := in.src
	if !f.quiet {
		fmt.Fprintln(stderr, "reading the data ...")
	}
	ds, err := dataset.Collect(ctx, src)
	if err != nil {
		return err
	}
	if ds.Label == nil && ds.Target == nil {
		return usageErr("no labels or targets to predict: give --labels FILES, --label COLUMN or --target COLUMNS")
	}
	if ds.Target == nil && f.targetSigma != "median" {
		return usageErr("--target-sigma applies to real targets (--target); class labels use the delta kernel")
	}
	splits, err := proto.splits(ctx, ds, f.trainDoms, f.testDoms, df.labelsIgnore, stderr)
	if err != nil {
		return err
	}
	if o.Methods, err = oneDomainMethods(o.Methods, splits, f.transductive, ds.Target != nil, methodsGiven, stderr); err != nil {
		return err
	}
	if !f.quiet {
		o.Progress = func(msg string) { fmt.Fprintln(stderr, msg) }
	}
	start := time.Now()
	stop, err := startProfile(f.cpuprofile)
	if err != nil {
		return err
	}
	res, err := eval.Evaluate(ctx, ds, splits, o)
	stop()
	var me *eval.MemoryError
	if errors.As(err, &me) {
		return usageErr("the evaluation needs about %s (%s), more than the %s allowed; lower --rank, --max-fit-cells or --max-train-cells (or use --solver nystrom), or raise --max-memory",
			dica.Bytes(me.Need), me.Step, dica.Bytes(me.Limit))
	}
	if err != nil {
		return err
	}
	warnUnseen(stderr, res)
	if f.asJSON {
		b, err := json.Marshal(evalJSON{Result: res, Domains: ds.DomainNames, Seconds: time.Since(start).Seconds(), Protocol: proto.describe()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return writeEvalText(stdout, ds, res, proto)
}

// memoryBudget parses --max-memory: a size with an optional unit (K, M, G,
// T: powers of 1000; KiB, MiB, GiB, TiB: powers of 1024), 0 for none, or
// empty for dica.DefaultMemoryFraction (3/4) of the machine's memory or of
// the process's cgroup limit.
func memoryBudget(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return int64(dica.DefaultMemoryFraction * float64(sysmem.Total())), nil
	}
	num := strings.TrimRightFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' })
	unit := strings.ToUpper(strings.TrimSpace(s[len(num):]))
	mult := map[string]float64{"": 1, "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}[unit]
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mult == 0 || v < 0 || v*mult > 1e18 {
		return 0, usageErr("--max-memory %q: want a size such as 8G, 500M or 16GiB (0: no budget)", s)
	}
	return int64(v * mult), nil
}

// softLimit makes the memory budget the garbage collector's soft limit
// (runtime/debug.SetMemoryLimit), unless GOMEMLIMIT sets one: the heap
// then stays near what the fit holds instead of growing to twice it
// between collections. run restores the previous limit when the command
// ends.
func softLimit(budget int64) {
	if budget > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(budget)
	}
}

// maxRepeats bounds --repeats.
const maxRepeats = 10000

// evalProtocol is how the domains are split.
type evalProtocol struct {
	Name       string `json:"name"`
	TrainCount int    `json:"train_count,omitempty"`
	Repeats    int    `json:"repeats,omitempty"`
	Seed       uint64 `json:"seed"`
	// Kind is what the splits turned out to be: "lists",
	// "leave-one-domain-out", "random" or "reference".
	Kind string `json:"kind"`
	// Reference is --reference as given, then the reference domain's
	// name; ReferenceChoice says how it was chosen ("auto" or "given"),
	// and ReferenceDistances gives, for the auto choice, each candidate
	// domain's mean Frobenius distance of its covariance to the others'.
	Reference          string             `json:"reference,omitempty"`
	ReferenceChoice    string             `json:"reference_choice,omitempty"`
	ReferenceDistances map[string]float64 `json:"reference_distances,omitempty"`
}

func (p *evalProtocol) check(train, test string) error {
	if p.Reference != "" && p.Name != "reference" {
		return usageErr("--reference applies to --splits reference")
	}
	switch p.Name {
	case "auto", "lodo":
		if p.TrainCount != 0 {
			return usageErr("--train-count applies to --splits random")
		}
		if p.Name == "lodo" && (train != "" || test != "") {
			return usageErr("--splits lodo tests every domain in turn: do not give --train-domains or --test-domains")
		}
	case "random":
		if train != "" || test != "" {
			return usageErr("--splits random draws the training domains itself: do not give --train-domains or --test-domains")
		}
		if p.TrainCount < 1 {
			return usageErr("--splits random needs --train-count K, the number of training domains per draw")
		}
		if p.Repeats < 1 || p.Repeats > maxRepeats {
			return usageErr("--repeats %d: want 1 to %d", p.Repeats, maxRepeats)
		}
	case "reference":
		if train != "" || test != "" {
			return usageErr("--splits reference trains on the --reference domain alone and tests every other domain: do not give --train-domains or --test-domains")
		}
		if p.TrainCount != 0 {
			return usageErr("--train-count applies to --splits random")
		}
	default:
		return usageErr("--splits %q: want auto, lodo, random or reference", p.Name)
	}
	return nil
}

// describe returns the protocol for the JSON output.
func (p evalProtocol) describe() evalProtocol {
	if p.Kind != "random" {
		p.TrainCount, p.Repeats = 0, 0
	}
	if p.Kind != "reference" {
		p.Reference, p.ReferenceChoice, p.ReferenceDistances = "", "", nil
	}
	return p
}

// splits turns the flags into splits of the data's domains. Domains left
// without cells (by --labels-ignore) are an error when named, and left out
// with a warning otherwise.
func (p *evalProtocol) splits(ctx context.Context, ds *dataset.Dataset, trainSpec, testSpec, ignore string, stderr io.Writer) ([]eval.Split, error) {
	sizes := ds.DomainSizes()
	var empty []string
	for g, n := range sizes {
		if n == 0 {
			empty = append(empty, ds.DomainNames[g])
		}
	}
	why := "it has no cells"
	if ignore != "" {
		why = fmt.Sprintf("--labels-ignore %s removed all its cells", ignore)
	}
	if p.Name == "random" {
		p.Kind = "random"
		warnEmpty(stderr, empty, why)
		s, err := eval.RandomSplits(ds, p.TrainCount, p.Repeats, p.Seed)
		if err != nil {
			return nil, usageErr("--train-count %d: %d domains have cells; want 1 to %d", p.TrainCount, len(sizes)-len(empty), len(sizes)-len(empty)-1)
		}
		return s, nil
	}
	named := func(flag, spec string) ([]int, error) {
		names, err := selectDomains(spec, ds.DomainNames)
		if err != nil {
			if ignore != "" {
				return nil, usageErr("--%s: %v; a domain whose cells --labels-ignore %s removed is not among them", flag, err, ignore)
			}
			return nil, usageErr("--%s: %v", flag, err)
		}
		idx, err := eval.DomainIndices(ds, names)
		if err != nil {
			return nil, err
		}
		for i, g := range idx {
			if sizes[g] == 0 {
				return nil, usageErr("--%s: domain %s is empty: %s", flag, names[i], why)
			}
		}
		return idx, nil
	}
	if p.Name == "reference" {
		p.Kind = "reference"
		warnEmpty(stderr, empty, why)
		return p.referenceSplit(ctx, ds, named)
	}
	tr, err := named("train-domains", trainSpec)
	if err != nil {
		return nil, err
	}
	te, err := named("test-domains", testSpec)
	if err != nil {
		return nil, err
	}
	var all []int
	for g, n := range sizes {
		if n > 0 {
			all = append(all, g)
		}
	}
	rest := func(used []int) []int {
		var out []int
		for _, g := range all {
			if !slices.Contains(used, g) {
				out = append(out, g)
			}
		}
		return out
	}
	if len(tr) == 0 && len(te) == 0 {
		p.Kind = "leave-one-domain-out"
		warnEmpty(stderr, empty, why)
		splits, err := eval.LeaveOneDomainOutSplits(ds)
		if err != nil {
			return nil, usageErr("leave-one-domain-out needs at least 2 domains with cells, the data has %d", len(all))
		}
		return splits, nil
	}
	p.Kind = "lists"
	switch {
	case len(tr) == 0:
		tr = rest(te)
	case len(te) == 0:
		te = rest(tr)
	}
	if len(tr) == 0 || len(te) == 0 {
		return nil, usageErr("no domains left to train or test on (domains: %s)", listDomains(ds.DomainNames))
	}
	return []eval.Split{{Train: tr, Test: te}}, nil
}

// referenceSplit chooses the reference domain (--reference: a name, or
// auto) and returns the split that trains on it and tests all others.
func (p *evalProtocol) referenceSplit(ctx context.Context, ds *dataset.Dataset, named func(flag, spec string) ([]int, error)) ([]eval.Split, error) {
	var ref int
	if p.Reference == "" || strings.EqualFold(p.Reference, "auto") {
		g, dist, err := eval.ChooseReference(ctx, ds)
		if err != nil {
			return nil, usageErr("--reference auto: %v", strings.TrimPrefix(err.Error(), "eval: "))
		}
		ref, p.ReferenceChoice = g, "auto"
		p.ReferenceDistances = map[string]float64{}
		for h, v := range dist {
			if !math.IsNaN(v) {
				p.ReferenceDistances[ds.DomainNames[h]] = v
			}
		}
	} else {
		idx, err := named("reference", p.Reference)
		if err != nil {
			return nil, err
		}
		if len(idx) != 1 {
			return nil, usageErr("--reference %s names %d domains; want one", p.Reference, len(idx))
		}
		ref, p.ReferenceChoice = idx[0], "given"
	}
	p.Reference = ds.DomainNames[ref]
	s, err := eval.ReferenceSplit(ds, ref)
	if err != nil {
		return nil, usageErr("--splits reference: %v", strings.TrimPrefix(err.Error(), "eval: "))
	}
	return []eval.Split{s}, nil
}

// oneDomainMethods checks the methods with a domain term (UDICA, DICA)
// against splits with a single training domain: such a method needs a
// second domain to fit on, which only a transductive fit gives it (UDICA
// with --transductive). Without --methods (given false) the others are
// left out with a note; named, they are a usage error that says what to
// do.
func oneDomainMethods(methods []string, splits []eval.Split, transductive, regression, given bool, stderr io.Writer) ([]string, error) {
	one := slices.ContainsFunc(splits, func(s eval.Split) bool { return len(s.Train) < 2 })
	if !one {
		return methods, nil
	}
	var keep, dropped []string
	for _, name := range methods {
		m, err := dica.ParseMethod(name)
		if strings.EqualFold(strings.TrimSpace(name), eval.Input) || err != nil || !m.UsesDomains() ||
			transductive && eval.FitsTransductively(name, regression) {
			keep = append(keep, name)
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if given {
			if eval.FitsTransductively(name, regression) {
				return nil, usageErr("--methods %s: with one training domain %s needs --transductive (its domain term then uses the test domains' unlabelled cells)", name, name)
			}
			return nil, usageErr("--methods %s: %s cannot be fitted on one training domain: its fit needs the label of every cell, so it cannot use the test domains' unlabelled cells; leave it out", name, name)
		}
		dropped = append(dropped, name)
	}
	if len(dropped) > 0 {
		how := "they need at least 2 domains to fit on"
		if !transductive && slices.ContainsFunc(dropped, func(n string) bool { return eval.FitsTransductively(n, regression) }) {
			how += " (--transductive gives udica the test domains' unlabelled cells)"
		}
		fmt.Fprintf(stderr, "note: %s left out: one training domain, and %s\n", strings.Join(dropped, ", "), how)
	}
	return keep, nil
}

// warnEmpty warns about domains left out because they have no cells.
func warnEmpty(w io.Writer, empty []string, why string) {
	if len(empty) > 0 {
		fmt.Fprintf(w, "warning: left out %d empty domain(s): %s (%s)\n", len(empty), listDomains(empty), strings.Replace(why, "its", "their", 1))
	}
}

// warnUnseen warns, once per set of classes, about test classes that the
// training cells of a split do not have: no learner can predict them.
func warnUnseen(w io.Writer, res *eval.Result) {
	if len(res.Methods) == 0 {
		return
	}
	var order []string
	splits := map[string][]string{}
	for i, s := range res.Methods[0].Splits {
		if len(s.UnseenClasses) == 0 {
			continue
		}
		k := strings.Join(s.UnseenClasses, ", ")
		if _, ok := splits[k]; !ok {
			order = append(order, k)
		}
		splits[k] = append(splits[k], strconv.Itoa(i+1))
	}
	for _, k := range order {
		where := "the test domains have"
		if len(res.Methods[0].Splits) > 1 {
			where = fmt.Sprintf("in split(s) %s the test domains have", listDomains(splits[k]))
		}
		fmt.Fprintf(w, "warning: %s cells of class(es) %s, which no training cell has: they are always misclassified\n", where, k)
	}
}

// evalJSON is the JSON output of dica eval.
type evalJSON struct {
	*eval.Result
	Domains  []string     `json:"domains"`
	Seconds  float64      `json:"seconds"`
	Protocol evalProtocol `json:"protocol"`
}

// fmtSpread writes a mean, with its sd when there are several values.
func fmtSpread(s eval.Spread) string {
	if s.N <= 1 {
		return fmt.Sprintf("%.4f", s.Mean)
	}
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.SD)
}

func writeEvalText(w io.Writer, ds *dataset.Dataset, res *eval.Result, proto evalProtocol) error {
	writeEvalHeader(w, ds, res, proto)
	for _, m := range res.Methods {
		if err := writeMethodText(w, res, m, proto); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	return writeEvalSummary(w, res)
}

// writeEvalHeader writes what was evaluated: the task, the cells, the
// setting and the protocol.
func writeEvalHeader(w io.Writer, ds *dataset.Dataset, res *eval.Result, proto evalProtocol) {
	rank := ""
	if res.Rank > 0 {
		rank = fmt.Sprintf(" rank %d", res.Rank)
	}
	batch := ""
	if res.BatchCenter {
		batch = "; each domain centered with its own mean"
	}
	fmt.Fprintf(w, "%s: %s per test domain; %d cells used of %d read, %d domains; solver %s%s%s\n",
		res.Task, res.Metric, res.Cells, res.CellsRead, len(ds.DomainNames), res.Solver, rank, batch)
	setting := "pooling (one learner on the pooled training cells)"
	if res.Setting == "distributional" {
		setting = "distributional (the learner also sees each domain's mean embedding)"
	}
	fmt.Fprintf(w, "setting: %s\n", setting)
	if res.CellsPerDomain > 0 {
		fmt.Fprintf(w, "at most %d cells per domain in each split (seed %d)\n", res.CellsPerDomain, proto.Seed)
	}
	switch proto.Kind {
	case "reference":
		writeReferenceHeader(w, res, proto)
	case "random":
		fmt.Fprintf(w, "random splits: %d draws of %d training domains, the others tested (seed %d)\n", len(res.Methods[0].Splits), proto.TrainCount, proto.Seed)
	case "leave-one-domain-out":
		fmt.Fprintln(w, "leave-one-domain-out: each domain tested once, trained on all the others")
	default:
		if len(res.Methods) > 0 && len(res.Methods[0].Splits) == 1 {
			s := res.Methods[0].Splits[0]
			fmt.Fprintf(w, "train: %s\ntest:  %s\n", strings.Join(s.Train, ","), strings.Join(s.Test, ","))
		}
	}
	writeTransductive(w, res)
}

// writeReferenceHeader writes the reference domain, how it was chosen,
// and which fits used the test domains' cells.
func writeReferenceHeader(w io.Writer, res *eval.Result, proto evalProtocol) {
	if len(res.Methods) == 0 || len(res.Methods[0].Splits) == 0 {
		return
	}
	s := res.Methods[0].Splits[0]
	how := ""
	if proto.ReferenceChoice == "auto" {
		type cand struct {
			name string
			d    float64
		}
		var cs []cand
		for n, d := range proto.ReferenceDistances {
			cs = append(cs, cand{n, d})
		}
		slices.SortFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(a.d, b.d); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		how = fmt.Sprintf(" (auto: its input covariance is the closest to the others', mean Frobenius distance %.4g", proto.ReferenceDistances[proto.Reference])
		for _, c := range cs {
			if c.name != proto.Reference {
				how += fmt.Sprintf("; next %s %.4g", c.name, c.d)
				break
			}
		}
		how += ")"
	}
	fmt.Fprintf(w, "reference protocol: the learner is trained on %s alone%s; the %d other domains are tested\n", strings.Join(s.Train, ","), how, len(s.Test))
}

// writeTransductive says which methods' fits used the test domains'
// cells (--transductive).
func writeTransductive(w io.Writer, res *eval.Result) {
	if !res.Transductive {
		return
	}
	var trans, ind []string
	cells, doms := 0, 0
	for _, m := range res.Methods {
		if m.Method == eval.Input || len(m.Splits) == 0 {
			continue
		}
		s := m.Splits[0]
		if s.Transductive {
			trans = append(trans, m.Method)
			cells, doms = s.FitCells, len(s.Train)+len(s.Test)
		} else {
			ind = append(ind, m.Method)
		}
	}
	line := "transductive:"
	if len(trans) > 0 {
		line += fmt.Sprintf(" %s fitted on the cells of the training and test domains (the test domains' unlabelled", strings.Join(trans, ", "))
		if len(res.Methods[0].Splits) == 1 {
			line += fmt.Sprintf("; %d cells of %d domains", cells, doms)
		}
		line += ")"
	}
	if len(ind) > 0 {
		if len(trans) > 0 {
			line += ";"
		}
		line += fmt.Sprintf(" %s on the training domains' cells only (their fit needs every cell's label)", strings.Join(ind, ", "))
	}
	if len(trans) == 0 && len(ind) == 0 {
		line += " no method fits a projection"
	}
	fmt.Fprintf(w, "%s; the learner is trained on the training cells only\n", line)
}

// meanF returns the mean F-measure of a split's test domains.
func meanF(s eval.SplitResult) float64 {
	var f float64
	for _, d := range s.Scores {
		f += d.FMeasure
	}
	return f / float64(len(s.Scores))
}

// writeMethodText writes one method's scores per split (random splits)
// or per test domain, and its confusion matrix.
func writeMethodText(w io.Writer, res *eval.Result, m eval.MethodResult, proto evalProtocol) error {
	regression := res.Task == "regression"
	if len(m.Splits) > 0 && m.Splits[0].Learner != "" {
		fmt.Fprintf(w, "\n%s (learner: %s)\n", m.Method, m.Splits[0].Learner)
	} else {
		fmt.Fprintf(w, "\n%s\n", m.Method)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	chosenOf := func(s eval.SplitResult) string {
		chosen := eval.ParamString(m.Method, s.Params, regression)
		if m.Method != eval.Input && s.Components < s.Params.Components {
			chosen += fmt.Sprintf(" (%d used)", s.Components)
		}
		switch {
		case s.InnerFolds > 0:
			chosen += fmt.Sprintf(" (%.4f, %d folds)", s.InnerScore, s.InnerFolds)
		case len(s.Grid) == 1 && s.Grid[0].Err != "":
			chosen += " (no inner score: it failed)"
		default:
			chosen += fmt.Sprintf(" (no inner score: %d training domain(s))", len(s.Train))
		}
		return chosen
	}
	splits := len(m.Splits)
	if proto.Kind == "random" {
		fHead := ""
		if !regression {
			fHead = "\tF-measure (domain mean)"
		}
		fmt.Fprintf(tw, "  split\ttest domains\tpooled\tdomain mean%s\tiLISI\tchosen (inner CV score)\tfit s\n", fHead)
		for i, s := range m.Splits {
			il := "-"
			if s.Mixing != nil {
				il = fmt.Sprintf("%.3f", s.Mixing.ILISI)
			}
			f := ""
			if !regression {
				f = fmt.Sprintf("\t%.4f", meanF(s))
			}
			fmt.Fprintf(tw, "  %d\t%s\t%.4f\t%.4f%s\t%s\t%s\t%.1f\n", i+1, listDomains(s.Test), s.Pooled, s.DomainMean, f, il, chosenOf(s), s.FitSeconds)
		}
		fEmpty := ""
		if !regression {
			fEmpty = "\t"
		}
		fmt.Fprintf(tw, "  mean ± sd\t\t%s\t%s%s\t\t\t\n", fmtSpread(m.Pooled), fmtSpread(m.DomainMean), fEmpty)
		fmt.Fprintf(tw, "  all test cells\t\t%.4f\t%s\t\t\t\n", m.AllCells, fEmpty)
	} else {
		fHead, fMean, fNone := "", "", ""
		if m.FMeasure != nil {
			fHead, fMean, fNone = "\tF-measure", fmt.Sprintf("\t%.4f ± %.4f", m.FMeasure.Mean, m.FMeasure.SD), "\t"
		}
		fmt.Fprintf(tw, "  domain\tcells\t%s%s\tchosen (inner CV score)\tfit s\n", res.Metric, fHead)
		for _, s := range m.Splits {
			chosen := chosenOf(s)
			for i, d := range s.Scores {
				c, secs := chosen, fmt.Sprintf("%.1f", s.FitSeconds)
				if i > 0 {
					c, secs = `"`, ""
				}
				f := ""
				if m.FMeasure != nil {
					f = fmt.Sprintf("\t%.4f", d.FMeasure)
				}
				fmt.Fprintf(tw, "  %s\t%d\t%.4f%s\t%s\t%s\n", d.Domain, d.Cells, d.Score, f, c, secs)
			}
		}
		fmt.Fprintf(tw, "  mean ± sd\t\t%.4f ± %.4f%s\t\t\n", m.Mean, m.SD, fMean)
		if splits > 1 {
			fmt.Fprintf(tw, "  pooled per split\t\t%s%s\t(mean ± sd over %d splits)\t\n", fmtSpread(m.Pooled), fNone, splits)
			fmt.Fprintf(tw, "  all test cells\t%d\t%.4f%s\t(%d splits together)\t\n", cellsOf(m), m.AllCells, fNone, splits)
		} else {
			fmt.Fprintf(tw, "  pooled\t%d\t%s%s\t\t\n", cellsOf(m), fmtSpread(m.Pooled), fNone)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeConfusion(w, res.Classes, m.Confusion, len(m.Splits))
}

// cellsOf returns the number of test cells of all splits of a method.
func cellsOf(m eval.MethodResult) int {
	n := 0
	for _, s := range m.Splits {
		n += s.TestCells
	}
	return n
}

// writeEvalSummary writes the table of the methods: scores, mixing and time.
func writeEvalSummary(w io.Writer, res *eval.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	mixHead := ""
	hasMix := false
	for _, m := range res.Methods {
		hasMix = hasMix || m.Mixing != nil
	}
	if hasMix {
		mixHead = "\tiLISI\tcLISI\tsilhouette\tdist. variance"
	}
	splits := 0
	if len(res.Methods) > 0 {
		splits = len(res.Methods[0].Splits)
	}
	pooledHead := "pooled"
	if splits > 1 {
		pooledHead = "pooled per split\tall test cells"
	}
	classes := res.Task != "regression"
	fHead := ""
	if classes {
		fHead = "\tF-measure per domain\tmin F"
	}
	fmt.Fprintf(tw, "method\t%s per domain\tmin\tmax%s\t%s\tdomain mean%s\tseconds\n", res.Metric, fHead, pooledHead, mixHead)
	for _, m := range res.Methods {
		lo, hi := m.Scores[0].Score, m.Scores[0].Score
		flo := m.Scores[0].FMeasure
		for _, d := range m.Scores {
			lo, hi, flo = min(lo, d.Score), max(hi, d.Score), min(flo, d.FMeasure)
		}
		f := ""
		if classes && m.FMeasure != nil {
			f = fmt.Sprintf("\t%.4f ± %.4f\t%.4f", m.FMeasure.Mean, m.FMeasure.SD, flo)
		} else if classes {
			f = "\t-\t-"
		}
		mix := ""
		if hasMix {
			mix = "\t-\t-\t-\t-"
			if mx := m.Mixing; mx != nil {
				cl := "-"
				if mx.CLISI != nil {
					cl = fmtSpread3(*mx.CLISI)
				}
				mix = fmt.Sprintf("\t%s\t%s\t%s\t%s", fmtSpread3(mx.ILISI), cl, fmtSpread3(mx.Silhouette), fmtSpreadG(mx.DistributionalVariance))
			}
		}
		pooled := fmtSpread(m.Pooled)
		if splits > 1 {
			pooled += fmt.Sprintf("\t%.4f", m.AllCells)
		}
		fmt.Fprintf(tw, "%s\t%.4f ± %.4f\t%.4f\t%.4f%s\t%s\t%s%s\t%.1f\n", m.Method, m.Mean, m.SD, lo, hi, f, pooled, fmtSpread(m.DomainMean), mix, m.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if splits > 1 {
		fmt.Fprintf(w, "(%s per domain: mean ± sd over the test domains of all splits; pooled per split: each split's %s over its test cells, mean ± sd over the %d splits; all test cells: the %s over the test cells of all splits together, which the summed confusion matrices give)\n",
			res.Metric, res.Metric, splits, res.Metric)
	}
	if classes {
		fmt.Fprintln(w, "(F-measure: FlowCAP's, per test domain: each true population's best F1 over the predicted populations, weighted by its share of the cells)")
	}
	if hasMix {
		fmt.Fprintf(w, "(mixing of the test domains on at most %d cells per split, perplexity %g: iLISI higher and silhouette and distributional variance lower are better mixed; cLISI 1 is pure populations)\n", res.MixingCells, res.Perplexity)
	}
	return nil
}

func fmtSpread3(s eval.Spread) string {
	if s.N <= 1 {
		return fmt.Sprintf("%.3f", s.Mean)
	}
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.SD)
}

func fmtSpreadG(s eval.Spread) string {
	if s.N <= 1 {
		return fmt.Sprintf("%.3g", s.Mean)
	}
	return fmt.Sprintf("%.3g ± %.2g", s.Mean, s.SD)
}

// writeConfusion prints a confusion matrix: true classes in rows,
// predicted in columns.
func writeConfusion(w io.Writer, classes []string, conf [][]int, splits int) error {
	if conf == nil {
		return nil
	}
	what := "test cells"
	if splits > 1 {
		what = fmt.Sprintf("test cells of all %d splits", splits)
	}
	fmt.Fprintf(w, "  confusion (%s; rows: true class, columns: predicted):\n", what)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "    \t")
	for _, c := range classes {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for i, row := range conf {
		fmt.Fprintf(tw, "    %s\t", classes[i])
		for _, v := range row {
			fmt.Fprintf(tw, "%d\t", v)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
