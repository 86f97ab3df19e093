package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/internal/escape"
	"github.com/dicalab/dica/preprocess"
)

const fitUsage = `Usage: dica fit --data FILES [flags] --out MODEL

Fit a DICA model: components under which the samples (domains) look alike
while what predicts the label is kept.

Examples:

  # CyTOF, one CSV per sample, gated populations in label files:
  dica fit --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --sigma 1 --rank 500 --out cytof.dica --report json

  # One CSV, domain and label columns by name, exact n x n solver:
  dica fit --data cells.csv --domain patient --label population \
      --features CD3,CD4,CD8 --solver exact --components 5 --out m.dica

  # Unsupervised (no labels), FCS files, each file one domain:
  dica fit --method udica --data '*.fcs' --transform asinh:150 --out u.dica

  # One hand-gated sample among new ones (the reference workflow):
  dica fit --data 'sample*.csv' --labels sample2.csv=labels2.csv \
      --labels-ignore 0 --transform log1p --out ref.dica

What each method uses: UDICA and KPCA every cell (labels are not read);
DICA and COIR the labelled cells for the label term and every cell for
the sample term (a sample without labels still counts as a sample).
` + dataHelp

// modelFlags are the flags that configure a fit.
type modelFlags struct {
	method, solver, form, landmarks, report, out string
	rank, outputRank, precision                  int
	epsilon, sigmaY                              float64
	orthogonal, quiet                            bool
	cpuprofile, maxMemory                        string
	seed                                         uint64
	// Lists: one value, or several that the inner cross-validation of
	// --classifier chooses from.
	components intsFlag
	lambda     floatsFlag
	sigma      floatsFlag
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.method, "method", "dica", "`method`: dica (uses the labels), udica (no labels), kpca, coir (labels, no sample term)")
	fs.StringVar(&m.solver, "solver", "nystrom", "`solver`: nystrom, rff (random Fourier features) or exact (n x n, small data)")
	fs.StringVar(&m.form, "form", "canonical", "exact solver's eigenproblem: canonical or paper (the authors' dica.m)")
	m.components, m.lambda, m.sigma = intsFlag{dica.DefaultComponents}, floatsFlag{0}, floatsFlag{0}
	fs.Var(&m.components, "components", "number of `components` to keep")
	fs.Var(&m.lambda, "lambda", "regularization `lambda` >= 0: larger values give smoother components (0: none)")
	fs.Float64Var(&m.epsilon, "epsilon", dica.DefaultEpsilon, "label regularization `epsilon` > 0: smaller follows the labels more closely")
	fs.Var(&m.sigma, "sigma", "kernel width `sigma` on the (preprocessed) channels (0: the median distance between cells)")
	fs.Float64Var(&m.sigmaY, "sigma-y", 0, "kernel width `sigma` on real targets (0: the median distance)")
	fs.IntVar(&m.rank, "rank", dica.DefaultRank, "`rank`: the number of landmark cells (or random features); larger is closer to the exact fit and slower")
	fs.IntVar(&m.outputRank, "output-rank", 0, "landmarks on real targets, a `number` (0: min(rank, 200))")
	fs.StringVar(&m.landmarks, "landmarks", "uniform", "how landmark cells are `chosen`: uniform (at random) or kmeans")
	fs.BoolVar(&m.orthogonal, "orthogonal", false, "orthogonal random features (rff solver)")
	fs.Uint64Var(&m.seed, "seed", 1, "random `seed` (same seed, same model, whatever the number of cores)")
	fs.IntVar(&m.precision, "precision", 64, "floating-point `bits` of the pass over the data: 64, or 32 (float32 kernel rows and Gram sum, about twice as fast; docs/PERFORMANCE.md)")
	fs.StringVar(&m.report, "report", "", "print a report on stdout: `format` json or text")
	fs.BoolVar(&m.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&m.cpuprofile, "cpuprofile", "", "write a CPU profile (pprof) to this `file`")
	fs.StringVar(&m.maxMemory, "max-memory", "", "memory `budget` (e.g. 8G, 500M; 0: none): a fit estimated to need more is refused before it starts (default 3/4 of the machine's memory)")
}

// profile starts CPU profiling when asked and returns the function that
// stops it.
func (m *modelFlags) profile() (func(), error) { return startProfile(m.cpuprofile) }

// startProfile starts CPU profiling into the file at path ("" for none) and
// returns the function that stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Commit() }, nil
}

func (m *modelFlags) config() (dica.Config, error) {
	var c dica.Config
	var err error
	if c.Method, err = dica.ParseMethod(m.method); err != nil {
		return c, usageErr("--method: %v", err)
	}
	if c.Solver, err = dica.ParseSolver(m.solver); err != nil {
		return c, usageErr("--solver: %v", err)
	}
	if c.Form, err = dica.ParseForm(m.form); err != nil {
		return c, usageErr("--form: %v", err)
	}
	if c.Landmarks, err = dica.ParseLandmarks(m.landmarks); err != nil || c.Landmarks == dica.GivenLandmarks {
		return c, usageErr("--landmarks %q: want uniform or kmeans", m.landmarks)
	}
	for _, k := range m.components {
		if k < 1 {
			return c, usageErr("--components %d: need at least 1", k)
		}
	}
	for _, l := range m.lambda {
		if l < 0 {
			return c, usageErr("--lambda %g: need a value >= 0", l)
		}
	}
	if m.rank < 1 {
		return c, usageErr("--rank %d: need at least 1", m.rank)
	}
	if m.precision != 32 && m.precision != 64 {
		return c, usageErr("--precision %d: want 32 or 64", m.precision)
	}
	if m.precision == 32 && c.Solver == dica.Exact {
		return c, usageErr("--precision 32 applies to the nystrom and rff solvers; the exact solver is float64 only")
	}
	if slices.Min(m.sigma) < 0 || m.sigmaY < 0 {
		return c, usageErr("--sigma and --sigma-y must be > 0 (or 0 for the median heuristic)")
	}
	switch m.report {
	case "", "json", "text":
	default:
		return c, usageErr("--report %q: want json or text", m.report)
	}
	c.Components, c.Lambda, c.Epsilon = m.components[0], m.lambda[0], m.epsilon
	c.Sigma, c.SigmaY, c.Rank, c.OutputRank = m.sigma[0], m.sigmaY, m.rank, m.outputRank
	c.Orthogonal, c.Seed, c.Precision = m.orthogonal, m.seed, m.precision
	budget, err := memoryBudget(m.maxMemory)
	if err != nil {
		return c, err
	}
	c.MaxMemory = budget
	softLimit(budget)
	if budget == 0 {
		c.MaxMemory = -1 // no budget
	}
	return c, nil
}

// fitError turns the errors of a fit that the user can act on into usage
// errors that say what to do.
func fitError(err error) error {
	var me *dica.MemoryError
	if errors.As(err, &me) {
		if me.Limit != "" {
			return usageErr("%s: merge or leave out %s, or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "), me.Limit)
		}
		if me.Exact {
			return usageErr("%s; or lower the number of cells, or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "))
		}
		if me.Reader > 0 {
			return usageErr("%s, or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "))
		}
		if me.Inputs > 0 {
			return usageErr("%s (--features), or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "))
		}
		return usageErr("%s: use --rank %d or less, or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "), me.Fits)
	}
	return err
}

// checkOutputs refuses, before any work, an output that is one of the
// inputs or cannot be written, and two outputs that are the same file.
func checkOutputs(outs []string, inputs ...string) error {
	for i, out := range outs {
		if out == "" {
			continue
		}
		if err := atomicfile.CheckOutput(out, append(slices.Clone(inputs), outs[:i]...)...); err != nil {
			return usageErr("%v", err)
		}
	}
	return nil
}

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit", fitUsage, stderr)
	var df dataFlags
	var mf modelFlags
	var cf classifierFlags
	df.register(fs, true)
	mf.register(fs)
	cf.register(fs)
	fs.StringVar(&mf.out, "out", "", "write the model to this `file` (required unless --report is given)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, err := mf.config()
	if err != nil {
		return err
	}
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	src := in.src
	kind, err := cf.classifierKind(&mf, src.Schema())
	if err != nil {
		return err
	}
	if cfg.Method == dica.Input && kind == classify.None {
		return usageErr("--method input fits no projection: it is the baseline of a learner; give --classifier svm (or krr)")
	}
	if err := supervision(cfg, src.Schema()); err != nil {
		return err
	}
	if err := oneDomain(cfg, src); err != nil {
		return err
	}
	if mf.out == "" && mf.report == "" {
		return usageErr("--out is required: the file to write the model to (e.g. --out model.dica)")
	}
	outs := []string{mf.out, mf.cpuprofile}
	if mf.report != "" {
		outs = append(outs, "-") // the report on stdout must not land in an input
	}
	if err := checkOutputs(outs, slices.Concat(in.files, in.labels)...); err != nil {
		return err
	}
	cfg.Preprocessing = in.pipe
	stop, err := mf.profile()
	if err != nil {
		return err
	}
	pr := newProgress(mf.quiet)
	pr.setTotal(src)
	cfg.Progress = pr.update
	start := time.Now()
	var (
		choice  *eval.Choice
		cells   *dataset.Dataset
		sampler *dataset.Sampler
	)
	fitSrc := src
	if kind != classify.None {
		choice, cells, err = cf.chooseSettings(ctx, &mf, &cfg, src, stderr)
		if err == nil && cells == nil {
			sampler, err = cf.learnerSampler(cfg, src)
			fitSrc = sampler.Tee(src)
		}
		if err != nil {
			stop()
			pr.done()
			return err
		}
	}
	model, err := dica.Fit(ctx, fitSrc, cfg)
	if err == nil && kind != classify.None && cells == nil {
		cells, err = cf.learnerCells(ctx, sampler, cfg, src)
	}
	if err == nil && kind != classify.None {
		err = cf.trainLearner(ctx, &mf, model, choice, cells)
	}
	stop()
	pr.done()
	if err != nil {
		return fitError(err)
	}
	secs := time.Since(start).Seconds()
	warnInput(stderr, in)
	if mf.out != "" {
		if err := model.Save(mf.out); err != nil {
			return err
		}
		if !mf.quiet {
			fmt.Fprintf(stderr, "dica fit: wrote %s: %s\n", mf.out, modelSummary(model))
			if l := learnerSummary(model); l != "" {
				fmt.Fprintf(stderr, "dica fit: learner: %s\n", l)
			}
		}
	} else {
		fmt.Fprintln(stderr, "dica fit: no --out given: the model is not saved")
	}
	return report(stdout, mf.report, model, secs)
}

// supervision returns a usage error when the method needs labels or targets
// and the data has neither: the default method, DICA, is supervised, so this
// is the first thing a fit of unlabelled files runs into.
// oneDomain returns a usage error when the method needs several domains and
// the source knows without reading that it has one (one FCS file).
func oneDomain(cfg dica.Config, src dataset.Source) error {
	d, ok := src.(interface{ Domains() []string })
	if !ok || !cfg.Method.UsesDomains() || len(d.Domains()) != 1 {
		return nil
	}
	alt := map[dica.Method]string{dica.DICA: "coir", dica.UDICA: "kpca"}[cfg.Method]
	return usageErr("--method %s compares domains (samples), and the data is one: %s; give several files (one sample each), or use --method %s",
		strings.ToLower(cfg.Method.String()), d.Domains()[0], alt)
}

func supervision(cfg dica.Config, sc dataset.Schema) error {
	if cfg.Method.Supervised() && !sc.Labelled && len(sc.Targets) == 0 {
		return usageErr("--method %s needs class labels or real targets: give --labels FILES (one label file per data file), --label COLUMN or --target COLUMNS, or fit without them with --method udica or kpca",
			strings.ToLower(cfg.Method.String()))
	}
	return nil
}

// fitReport is the JSON report of a fit.
type fitReport struct {
	N       int64  `json:"n"`
	D       int    `json:"d"`
	Domains int    `json:"domains"`
	Classes int    `json:"classes"`
	Method  string `json:"method"`
	Solver  string `json:"solver"`
	Form    string `json:"form"`
	Rank    int    `json:"rank,omitempty"`
	// Eigenvalues are those of the components returned; Components the
	// number asked for.
	Eigenvalues        []float64 `json:"eigenvalues"`
	ComponentsPositive int       `json:"components_positive"`
	Components         int       `json:"components"`
	Sigma              float64   `json:"sigma"`
	SigmaY             float64   `json:"sigma_y"`
	Lambda             float64   `json:"lambda"`
	Epsilon            float64   `json:"epsilon"`
	Seconds            float64   `json:"seconds,omitempty"`
	DistVarInput       float64   `json:"distributional_variance_input"`
	DistVarProjected   float64   `json:"distributional_variance_projected"`
	DomainNames        []string  `json:"domain_names"`
	ClassNames         []string  `json:"class_names,omitempty"`
	Features           []string  `json:"features"`
	PeakRSSMB          float64   `json:"peak_rss_mb,omitempty"`
	// Preprocessing is how the model expects its data (null: not
	// recorded), and PreprocessingText the same on one line.
	Preprocessing     *preprocess.Pipeline `json:"preprocessing"`
	PreprocessingText string               `json:"preprocessing_text"`
	// Learner is the learner the model carries (with --classifier).
	Learner *learnerJSON `json:"learner,omitempty"`
}

// learnerJSON describes the learner a model carries: its kind, the
// settings chosen and their inner cross-validation score (folds 0: not
// cross-validated), the populations or targets, the cells it trained on
// and the calibration of its confidence.
type learnerJSON struct {
	Kind           string          `json:"kind"`
	Params         classify.Params `json:"params"`
	Score          float64         `json:"inner_score"`
	Folds          int             `json:"inner_folds"`
	Populations    []string        `json:"populations,omitempty"`
	Targets        []string        `json:"targets,omitempty"`
	TrainCells     int             `json:"train_cells"`
	InvTemperature float64         `json:"inv_temperature,omitempty"`
	Calibration    string          `json:"calibration,omitempty"`
}

func newReport(m *dica.Model, secs float64) fitReport {
	c := m.Config()
	s := m.Summary
	sigma, sigmaY := c.Bandwidths()
	r := fitReport{
		N: s.N, D: len(s.Features), Domains: len(s.Domains), Classes: len(s.Classes),
		Method: strings.ToLower(c.Method.String()), Solver: c.Solver.String(),
		Eigenvalues: m.Eigenvalues[:m.Positive], ComponentsPositive: m.Positive, Components: c.Components,
		Sigma: sigma, SigmaY: sigmaY,
		Lambda: c.Lambda, Epsilon: c.Epsilon, Seconds: secs,
		DistVarInput: m.InputVariance, DistVarProjected: m.ProjectedVariance,
		DomainNames: s.Domains, ClassNames: s.Classes, Features: s.Features,
		PeakRSSMB:         peakRSSMB(),
		Preprocessing:     m.Preprocessing(),
		PreprocessingText: m.Preprocessing().String(),
	}
	if cl := m.Classifier(); cl != nil {
		r.Learner = &learnerJSON{Kind: cl.Kind.String(), Params: cl.Params, Score: cl.Score, Folds: cl.Folds,
			Populations: cl.Classes, Targets: cl.Targets, TrainCells: cl.TrainCells, InvTemperature: cl.InvTemperature, Calibration: cl.Calibration.Source}
	}
	r.Form = strings.ToLower(c.Form.String()) // the low-rank solvers solve the canonical form
	if c.Solver != dica.Exact {
		r.Rank = c.Rank
	}
	return r
}

func report(w io.Writer, kind string, m *dica.Model, secs float64) error {
	switch kind {
	case "":
		return nil
	case "json":
		b, err := json.Marshal(newReport(m, secs))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return writeReport(w, newReport(m, secs))
}

// writeReport writes the text form of r; seconds only when known.
func writeReport(w io.Writer, r fitReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "cells\t%d\n", r.N)
	fmt.Fprintf(tw, "markers\t%d\t%s\n", r.D, strings.Join(r.Features, ","))
	fmt.Fprintf(tw, "domains\t%d\n", r.Domains)
	if r.Classes > 0 {
		fmt.Fprintf(tw, "classes\t%d\t%s\n", r.Classes, strings.Join(r.ClassNames, ","))
	}
	fmt.Fprintf(tw, "method\t%s\tsolver %s\n", r.Method, r.Solver)
	fmt.Fprintf(tw, "sigma\t%.4g\n", r.Sigma)
	fmt.Fprintf(tw, "components\t%s\n", componentsText(r))
	fmt.Fprintf(tw, "eigenvalues\t%s\n", fmtFloats(r.Eigenvalues))
	fmt.Fprintf(tw, "distributional variance\t%.4g input, %.4g projected\n", r.DistVarInput, r.DistVarProjected)
	fmt.Fprintf(tw, "preprocessing\t%s\n", r.PreprocessingText)
	if l := r.Learner; l != nil {
		p := l.Params
		fmt.Fprintf(tw, "learner\t%s\ton %d cells; chosen: sigma %g, lambda %g, components %d, C %g\n", l.Kind, l.TrainCells, p.Sigma, p.Lambda, p.Components, p.C)
		if l.Folds > 0 {
			fmt.Fprintf(tw, "inner score\t%.4f\tover %d leave-samples-out fold(s)\n", l.Score, l.Folds)
		} else {
			fmt.Fprintf(tw, "inner score\tnone\t(one value per setting, or one labelled sample: nothing to choose)\n")
		}
	}
	if r.Seconds > 0 {
		fmt.Fprintf(tw, "seconds\t%.2f\n", r.Seconds)
	}
	return tw.Flush()
}

// componentsText says how many components the model returns, and why
// fewer than asked: a supervised method with c populations gives at most
// c - 1, and any method no more than its signal allows.
func componentsText(r fitReport) string {
	if r.ComponentsPositive >= r.Components || r.Components == 0 {
		return fmt.Sprint(r.ComponentsPositive)
	}
	why := "the others carry no signal"
	if (r.Method == "dica" || r.Method == "coir") && r.Classes > 0 && r.ComponentsPositive >= r.Classes-1 {
		why = fmt.Sprintf("%s gives at most c - 1 = %d for %d populations", strings.ToUpper(r.Method), r.Classes-1, r.Classes)
	}
	return fmt.Sprintf("%d of the %d asked (%s)", r.ComponentsPositive, r.Components, why)
}

func fmtFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.4g", x)
	}
	return strings.Join(s, " ")
}

// peakRSSMB returns the peak resident set size of the process in MB, or 0
// where /proc is not available.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

const planUsage = `Usage: dica plan --data FILES [fit flags] --out FIT.plan

The first step of a fit made in shards (separate processes or machines):
choose the bandwidths and the landmark cells from a sample of all the data,
with the settings and preprocessing of the fit, and write them to a plan
file. Every shard is then accumulated with the plan (dica accumulate
--plan), and the shards' statistics merged into the model (dica merge): the
model of dica fit with the same flags, whatever the shards.

Example (the CyTOF samples, one shard per sample):

  dica plan --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --sigma 1 --rank 500 --out cytof.plan
  for i in $(seq 1 16); do
    dica accumulate --plan cytof.plan --data sample$i.csv --labels labels$i.csv \
        --labels-ignore 0 --out part$i.stats
  done
  dica merge part*.stats --out cytof.dica
` + dataHelp

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", planUsage, stderr)
	var df dataFlags
	var mf modelFlags
	df.register(fs, true)
	mf.register(fs)
	fs.StringVar(&mf.out, "out", "", "write the plan to this `file`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if mf.out == "" {
		return usageErr("--out is required: the file to write the plan to (e.g. --out cytof.plan)")
	}
	cfg, err := mf.config()
	if err != nil {
		return err
	}
	if cfg.Solver == dica.Exact {
		return usageErr("the exact solver has no plan: it holds all the cells at once; use nystrom or rff")
	}
	if mf.grid() {
		return usageErr("--sigma, --lambda and --components take one value each in a plan (lists are chosen by dica fit --classifier)")
	}
	df.markSet(fs)
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	if err := supervision(cfg, in.src.Schema()); err != nil {
		return err
	}
	if err := checkOutputs([]string{mf.out, mf.cpuprofile}, slices.Concat(in.files, in.labels)...); err != nil {
		return err
	}
	cfg.Preprocessing = in.pipe
	pr := newProgress(mf.quiet)
	pr.setTotal(in.src)
	cfg.Progress = pr.update
	p, err := dica.NewPlan(ctx, in.src, cfg)
	pr.done()
	if err != nil {
		return fitError(err)
	}
	warnInput(stderr, in)
	if err := p.Save(mf.out); err != nil {
		return err
	}
	if !mf.quiet {
		sigma, _ := p.Config.Bandwidths()
		fmt.Fprintf(stderr, "dica plan: wrote %s: %s, rank %d, sigma %.4g; %s\n", mf.out, strings.ToUpper(p.Config.Method.String()), p.Config.Rank, sigma, p.Config.Preprocessing)
	}
	return nil
}

const accumulateUsage = `Usage: dica accumulate --plan FIT.plan --data SHARD_FILES [data flags] --out PART.stats

Accumulate the sufficient statistics of one shard of a data set with the
plan of the fit (dica plan), so that shards can be processed in separate
processes or machines and merged with 'dica merge' into the model dica fit
would give. The plan decides the settings and the preprocessing: give only
where the shard's cells are (--data, and --labels, --label or --domain as
for the fit). Each shard is merged once: statistics know which cells they
hold, and a merge of shards that overlap is refused.

Example:

  dica accumulate --plan cytof.plan --data sample3.csv --labels labels3.csv \
      --labels-ignore 0 --out part3.stats
` + dataHelp

func runAccumulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("accumulate", accumulateUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	df.registerModel(fs)
	df.shard = true
	var planPath, out string
	var quiet bool
	fs.StringVar(&planPath, "plan", "", "the plan `file` of the fit (dica plan)")
	fs.StringVar(&out, "out", "", "write the statistics to this `file`")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if planPath == "" {
		return usageErr("--plan is required: make it once for all the shards with 'dica plan' and the fit's flags (see 'dica plan -h')")
	}
	if out == "" {
		return usageErr("--out is required: the file to write the statistics to (e.g. --out part1.stats)")
	}
	if err := checkOutputs([]string{out}, planPath); err != nil {
		return err
	}
	p, err := dica.LoadPlanContext(ctx, planPath, dica.LoadOptions{})
	if err != nil {
		return err
	}
	df.markSet(fs)
	df.forModel, df.model = true, p.Config.Preprocessing
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{out}, slices.Concat(in.files, in.labels, []string{planPath})...); err != nil {
		return err
	}
	pr := newProgress(quiet)
	pr.setTotal(in.src)
	p.Config.Progress = pr.update
	st, err := p.Accumulate(ctx, in.src)
	pr.done()
	if err != nil {
		return err
	}
	warnInput(stderr, in)
	if err := st.Save(out); err != nil {
		return err
	}
	if !quiet {
		fp := p.Fingerprint()
		fmt.Fprintf(stderr, "dica accumulate: wrote %s: %d cells, %d sample(s), plan %x\n", out, st.N(), len(st.Domains), fp[:6])
	}
	return nil
}

const mergeUsage = `Usage: dica merge PART.stats... --out MODEL [--report json]

Merge statistics written by 'dica accumulate' (with one plan) and solve:
the model equals the fit of all shards at once. Statistics of another plan,
and shards that hold the same cells, are refused. The files are merged in
the natural order of their names (part2 before part10), whatever the order
given: shards named in the order of their data files (part1.stats for
sample1.csv, ...) give the model of 'dica fit' on those files byte for
byte, since the fit adds its files' sums in that order.
`

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", mergeUsage, stderr)
	var out, rep string
	fs.StringVar(&out, "out", "", "write the model to this `file` (required unless --report is given)")
	fs.StringVar(&rep, "report", "", "print a report on stdout: `format` json or text")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if out == "" && rep == "" {
		return usageErr("--out is required: the file to write the model to (e.g. --out model.dica)")
	}
	switch rep {
	case "", "json", "text":
	default:
		return usageErr("--report %q: want json or text", rep)
	}
	files, err := expand(pos, "statistics")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("no statistics files")
	}
	// Sums are added in one order whatever the order given: the natural
	// order of the names, that of the fit's files.
	slices.SortStableFunc(files, dataset.NaturalCompare)
	outs := []string{out}
	if rep != "" {
		outs = append(outs, "-")
	}
	if err := checkOutputs(outs, files...); err != nil {
		return err
	}
	start := time.Now()
	var total dica.Stats
	from := map[dica.Part]string{} // the file each part came from
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := dica.LoadStatsContext(ctx, f, dica.LoadOptions{})
		if err != nil {
			return err
		}
		if err := total.Merge(st); err != nil {
			var dup *dica.DuplicateError
			if errors.As(err, &dup) {
				return fmt.Errorf("%s summarizes the same cells as %s (%v): each shard must be merged once", f, from[dup.Part], dup.Part)
			}
			var ov *dica.OverlapError
			if errors.As(err, &ov) {
				return overlapError(f, from, ov)
			}
			var old *dica.LegacyError
			if errors.As(err, &old) && old.Merged {
				return fmt.Errorf("%s: %w", files[0], err) // the total is that file alone
			}
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, p := range st.Parts() {
			from[p] = f
		}
	}
	m, err := total.Solve()
	if err != nil {
		return err
	}
	if out != "" {
		if err := m.Save(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stderr, "dica merge: no --out given: the model is not saved")
	}
	return report(stdout, rep, m, time.Since(start).Seconds())
}

// modelSummary describes a model in one line: method, components, cells,
// samples and populations, bandwidth and rank.
func modelSummary(m *dica.Model) string {
	c := m.Config()
	s := m.Summary
	sigma, _ := c.Bandwidths()
	what := fmt.Sprintf("%s, %d component(s) of %d cells in %d sample(s)", strings.ToUpper(c.Method.String()), m.Positive, s.N, len(s.Domains))
	if c.Method == dica.Input {
		what = fmt.Sprintf("no projection (the %d preprocessed inputs) of %d cells in %d sample(s)", m.Positive, s.N, len(s.Domains))
	}
	if len(s.Classes) > 0 {
		what += fmt.Sprintf(", %d population(s)", len(s.Classes))
	}
	if c.Method == dica.Input {
		return what
	}
	what += fmt.Sprintf("; sigma %.4g", sigma)
	if c.Solver != dica.Exact {
		what += fmt.Sprintf(", rank %d", c.Rank)
	} else {
		what += ", exact"
	}
	return what
}

// grid reports whether a setting lists several values: the inner
// cross-validation of --classifier chooses among them.
func (m *modelFlags) grid() bool {
	return len(m.components) > 1 || len(m.lambda) > 1 || len(m.sigma) > 1
}

// floatsFlag is a flag holding one number or a comma-separated list.
type floatsFlag []float64

func (f *floatsFlag) String() string {
	if f == nil {
		return ""
	}
	s := make([]string, len(*f))
	for i, v := range *f {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (f *floatsFlag) Set(v string) error {
	var out []float64
	for _, item := range splitList(v) {
		x, err := strconv.ParseFloat(item, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%q is not a number", item)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return errors.New("no value")
	}
	*f = out
	return nil
}

// intsFlag is a flag holding one whole number or a comma-separated list.
type intsFlag []int

func (f *intsFlag) String() string {
	if f == nil {
		return ""
	}
	s := make([]string, len(*f))
	for i, v := range *f {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (f *intsFlag) Set(v string) error {
	var out []int
	for _, item := range splitList(v) {
		x, err := strconv.Atoi(item)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", item)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return errors.New("no value")
	}
	*f = out
	return nil
}

// overlapError names, for each domain that file f holds and a file merged
// before it held too, the two files and the domain.
func overlapError(f string, from map[dica.Part]string, e *dica.OverlapError) error {
	var b strings.Builder
	for i, o := range e.Overlaps {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Overlaps)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s and %s both hold the %d cells of domain %s", f, from[o.Merged.Part], o.New.N, escape.String(o.New.Domain, 0))
		if o.New.Domain != o.Merged.Domain {
			fmt.Fprintf(&b, " (named %s in %s)", escape.String(o.Merged.Domain, 0), from[o.Merged.Part])
		}
	}
	return fmt.Errorf("%s: each cell must be merged once (give every sample to one shard)", b.String())
}
