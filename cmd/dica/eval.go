package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
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
groups). The test samples are never used to choose anything.

Supervised DICA and COIR keep at most (number of populations - 1)
components, whatever --components asks for; the table says how many were
used.

Without --train-domains and --test-domains every sample is tested once with
all the others for training (leave-one-domain-out). Samples are named after
their files without extension (sample3.csv is sample3), or by the --domain
column.

To keep this fast on large data, each inner fit uses at most
--max-fit-cells cells and the final SVM at most --max-train-cells cells
(sampled from each training sample in proportion to its size); the final
DICA fit uses all training cells, and every test cell is scored.

With --batch-center each sample (training and test) is projected centered
with its own mean, which removes a sample's overall shift; this uses the
unlabelled cells of the test samples (transductive), never their labels.

Examples:

  # The 16 CyTOF samples: train on samples 1-8, test on the 8 others,
  # choosing sigma and lambda on samples 1-8:
  dica eval --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --methods input,kpca,udica,dica \
      --train-domains sample1,sample2,sample3,sample4,sample5,sample6,sample7,sample8 \
      --test-domains sample9,sample10,sample11,sample12,sample13,sample14,sample15,sample16 \
      --sigma 1,2 --lambda 0,0.1

  # Leave-one-sample-out over FCS-derived CSVs, machine-readable output:
  dica eval --data cells.csv --domain patient --label population \
      --methods input,dica --components 2,5 --C 0.1,1 --json
` + dataHelp

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

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", evalUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	methods := fs.String("methods", strings.Join(eval.Methods(), ","), "`methods` to compare, comma-separated: input (no projection), kpca, udica, coir, dica")
	solver := fs.String("solver", "nystrom", "`solver`: nystrom, rff or exact (n x n, small data)")
	rank := fs.Int("rank", 200, "rank `m`: Nystrom landmarks or random features")
	trainDoms := fs.String("train-domains", "", "training `domains` (samples), comma-separated (default: all but the test domains)")
	testDoms := fs.String("test-domains", "", "test `domains`, comma-separated (default: all but the training domains; neither: leave-one-domain-out)")
	sigma := fs.String("sigma", "0", "RBF bandwidth `values` to try, comma-separated (0: median heuristic)")
	lambda := fs.String("lambda", "0", "ridge `values` lambda on the complexity term to try")
	epsilon := fs.String("epsilon", strconv.FormatFloat(dica.DefaultEpsilon, 'g', -1, 64), "`values` of epsilon to try (DICA, COIR)")
	components := fs.String("components", strconv.Itoa(dica.DefaultComponents), "numbers of components `k` to try")
	cost := fs.String("C", "", "SVM cost `values` C to try (default 1), or ridges of the regression (default 0.1)")
	innerFolds := fs.Int("inner-folds", eval.DefaultInnerFolds, "groups of training domains in the inner cross-validation (`N`)")
	maxFit := fs.Int("max-fit-cells", 0, fmt.Sprintf("cells per inner fit and held-out group (`N`; default %d, %d with --solver exact)", eval.DefaultMaxFitCells, eval.DefaultMaxExactCells))
	finalFit := fs.Int("final-fit-cells", 0, "cells of the final fit (`N`; default all, --max-fit-cells with --solver exact)")
	maxTrain := fs.Int("max-train-cells", eval.DefaultMaxTrainCells, "training cells of the final SVM (`N`)")
	maxReg := fs.Int("max-regression-cells", eval.DefaultMaxRegressionCells, "largest training set of the exact kernel ridge regression (`N`); above it auto uses Nystrom")
	learner := fs.String("learner", "plain", "`learner`: plain (linear SVM or kernel ridge on the components), or distributional (the paper's k1(P_i, P_j) k2(x, x'): also sees each sample's mean embedding)")
	distSigma := fs.String("dist-sigma", "0", "bandwidth `values` of the distributional learner's kernel k1 on the samples' mean embeddings (0: median distance)")
	distEmbed := fs.Int("dist-embed-rank", eval.DefaultEmbedRank, "Nystrom landmarks of the mean-embedding kernel (`m`)")
	distPoint := fs.Int("dist-point-rank", eval.DefaultDistPointRank, "Nystrom landmarks of the point kernel of the distributional regression (`m`)")
	distRFF := fs.Int("dist-rff", 0, "random Fourier features of k1 (`D`; 0: exact features on the training samples)")
	regSolver := fs.String("regression-solver", "auto", "kernel ridge regression `solver`: auto (exact up to --max-regression-cells, Nystrom above), exact, nystrom")
	regRank := fs.Int("regression-rank", eval.DefaultRegressionRank, "Nystrom landmarks of the kernel ridge regression (`m`)")
	batch := fs.Bool("batch-center", false, "center each sample with its own mean in the projection (transductive: uses the test samples' unlabelled cells)")
	seed := fs.Uint64("seed", 1, "random `seed`")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile (pprof) to this `file`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}

	o := eval.Options{
		Methods: splitList(*methods), Rank: *rank, InnerFolds: *innerFolds,
		MaxFitCells: *maxFit, FinalFitCells: *finalFit, MaxTrainCells: *maxTrain,
		MaxRegressionCells: *maxReg, Seed: *seed, BatchCenter: *batch,
	}
	if o.Solver, err = dica.ParseSolver(*solver); err != nil {
		return usageErr("--solver: %v", err)
	}
	if o.Learner, err = eval.ParseLearner(*learner); err != nil {
		return usageErr("--learner: %v", err)
	}
	if o.RegressionSolver, err = eval.ParseRegressionSolver(*regSolver); err != nil {
		return usageErr("--regression-solver: %v", err)
	}
	if o.Grid.DistSigma, err = floatList("dist-sigma", *distSigma); err != nil {
		return err
	}
	o.Dist = eval.DistOptions{EmbedRank: *distEmbed, PointRank: *distPoint, RFF: *distRFF}
	o.RegressionRank = *regRank
	for _, f := range []struct {
		name string
		v    int
	}{{"dist-embed-rank", *distEmbed}, {"dist-point-rank", *distPoint}, {"regression-rank", *regRank}} {
		if f.v < 1 {
			return usageErr("--%s %d: need at least 1", f.name, f.v)
		}
	}
	if *distRFF < 0 {
		return usageErr("--dist-rff %d: need 0 or more", *distRFF)
	}
	if *rank < 1 {
		return usageErr("--rank %d: need at least 1", *rank)
	}
	if *innerFolds < 2 {
		return usageErr("--inner-folds %d: need at least 2", *innerFolds)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-fit-cells", *maxFit}, {"final-fit-cells", *finalFit}, {"max-train-cells", *maxTrain}, {"max-regression-cells", *maxReg}} {
		if f.v < 0 || (f.v > 0 && f.v < 2) {
			return usageErr("--%s %d: need at least 2 (or 0 for the default)", f.name, f.v)
		}
	}
	for _, m := range o.Methods {
		ok := false
		for _, k := range eval.Methods() {
			ok = ok || strings.EqualFold(m, k)
		}
		if !ok {
			return usageErr("--methods: unknown method %q; want some of %s", m, strings.Join(eval.Methods(), ","))
		}
	}
	if o.Grid.Sigma, err = floatList("sigma", *sigma); err != nil {
		return err
	}
	if o.Grid.Lambda, err = floatList("lambda", *lambda); err != nil {
		return err
	}
	if o.Grid.Epsilon, err = floatList("epsilon", *epsilon); err != nil {
		return err
	}
	if o.Grid.C, err = floatList("C", *cost); err != nil {
		return err
	}
	for _, f := range splitList(*components) {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return usageErr("--components: %q is not a positive integer", f)
		}
		o.Grid.Components = append(o.Grid.Components, k)
	}

	src, err := df.source(pos)
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintln(stderr, "reading the data ...")
	}
	ds, err := dataset.Collect(ctx, src)
	if err != nil {
		return err
	}
	if ds.Label == nil && ds.Target == nil {
		return usageErr("no labels or targets to predict: give --labels FILES, --label COLUMN or --target COLUMNS")
	}
	splits, err := evalSplits(ds, splitList(*trainDoms), splitList(*testDoms))
	if err != nil {
		return err
	}
	if !*quiet {
		o.Progress = func(msg string) { fmt.Fprintln(stderr, msg) }
	}
	start := time.Now()
	stop, err := startProfile(*cpuprofile)
	if err != nil {
		return err
	}
	res, err := eval.Evaluate(ctx, ds, splits, o)
	stop()
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(evalJSON{Result: res, Domains: ds.DomainNames, Seconds: time.Since(start).Seconds()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return writeEvalText(stdout, ds, res)
}

// evalJSON is the JSON output of dica eval.
type evalJSON struct {
	*eval.Result
	Domains []string `json:"domains"`
	Seconds float64  `json:"seconds"`
}

// evalSplits turns domain names into splits: the given split, or
// leave-one-domain-out when neither list is given.
func evalSplits(ds *dataset.Dataset, train, test []string) ([]eval.Split, error) {
	all := make([]int, 0, len(ds.DomainNames))
	for g, n := range ds.DomainSizes() {
		if n > 0 {
			all = append(all, g)
		}
	}
	tr, err := eval.DomainIndices(ds, train)
	if err != nil {
		return nil, usageErr("--train-domains: %v", err)
	}
	te, err := eval.DomainIndices(ds, test)
	if err != nil {
		return nil, usageErr("--test-domains: %v", err)
	}
	rest := func(used []int) []int {
		in := map[int]bool{}
		for _, g := range used {
			in[g] = true
		}
		var out []int
		for _, g := range all {
			if !in[g] {
				out = append(out, g)
			}
		}
		return out
	}
	switch {
	case len(tr) == 0 && len(te) == 0:
		if len(all) < 2 {
			return nil, usageErr("leave-one-domain-out needs at least 2 domains, the data has %d", len(all))
		}
		splits := make([]eval.Split, len(all))
		for i, g := range all {
			splits[i] = eval.Split{Train: rest([]int{g}), Test: []int{g}}
		}
		return splits, nil
	case len(tr) == 0:
		tr = rest(te)
	case len(te) == 0:
		te = rest(tr)
	}
	if len(tr) == 0 || len(te) == 0 {
		return nil, usageErr("no domains left to train or test on (domains: %s)", strings.Join(ds.DomainNames, ","))
	}
	return []eval.Split{{Train: tr, Test: te}}, nil
}

func writeEvalText(w io.Writer, ds *dataset.Dataset, res *eval.Result) error {
	regression := res.Task == "regression"
	rank := ""
	if res.Rank > 0 {
		rank = fmt.Sprintf(" rank %d", res.Rank)
	}
	batch := ""
	if res.BatchCenter {
		batch = "; each domain centered with its own mean"
	}
	fmt.Fprintf(w, "%s: %s per test domain; %d cells, %d domains; solver %s%s%s\n",
		res.Task, res.Metric, res.Cells, len(ds.DomainNames), res.Solver, rank, batch)
	if len(res.Methods) > 0 && len(res.Methods[0].Splits) == 1 {
		s := res.Methods[0].Splits[0]
		fmt.Fprintf(w, "train: %s\ntest:  %s\n", strings.Join(s.Train, ","), strings.Join(s.Test, ","))
	} else {
		fmt.Fprintln(w, "leave-one-domain-out: each domain tested once, trained on all the others")
	}
	for _, m := range res.Methods {
		if len(m.Splits) > 0 && m.Splits[0].Learner != "" {
			fmt.Fprintf(w, "\n%s (learner: %s)\n", m.Method, m.Splits[0].Learner)
		} else {
			fmt.Fprintf(w, "\n%s\n", m.Method)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  domain\tcells\t%s\tchosen (inner CV score)\tfit s\n", res.Metric)
		for _, s := range m.Splits {
			chosen := eval.ParamString(m.Method, s.Params, regression)
			if m.Method != eval.Input && s.Components < s.Params.Components {
				chosen += fmt.Sprintf(" (%d used)", s.Components)
			}
			if s.InnerFolds > 0 {
				chosen += fmt.Sprintf(" (%.4f, %d folds)", s.InnerScore, s.InnerFolds)
			}
			for i, d := range s.Scores {
				c, secs := chosen, fmt.Sprintf("%.1f", s.FitSeconds)
				if i > 0 {
					c, secs = `"`, ""
				}
				fmt.Fprintf(tw, "  %s\t%d\t%.4f\t%s\t%s\n", d.Domain, d.Cells, d.Score, c, secs)
			}
		}
		fmt.Fprintf(tw, "  mean ± sd\t\t%.4f ± %.4f\t\t\n", m.Mean, m.SD)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "method\t%s mean ± sd\tmin\tmax\tseconds\n", res.Metric)
	for _, m := range res.Methods {
		lo, hi := m.Scores[0].Score, m.Scores[0].Score
		for _, d := range m.Scores {
			lo, hi = min(lo, d.Score), max(hi, d.Score)
		}
		fmt.Fprintf(tw, "%s\t%.4f ± %.4f\t%.4f\t%.4f\t%.1f\n", m.Method, m.Mean, m.SD, lo, hi, m.Seconds)
	}
	return tw.Flush()
}
