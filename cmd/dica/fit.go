package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/kernel"
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
` + dataHelp

// modelFlags are the flags that configure a fit.
type modelFlags struct {
	method, solver, form, landmarks, report, out string
	components, rank, outputRank                 int
	lambda, epsilon, sigma, sigmaY               float64
	orthogonal, quiet                            bool
	cpuprofile, maxMemory                        string
	seed                                         uint64
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.method, "method", "dica", "`method`: dica (supervised), udica (unsupervised), kpca, coir")
	fs.StringVar(&m.solver, "solver", "nystrom", "`solver`: nystrom, rff (random Fourier features) or exact (n x n, small data)")
	fs.StringVar(&m.form, "form", "canonical", "exact solver's eigenproblem: canonical or paper (the authors' dica.m)")
	fs.IntVar(&m.components, "components", dica.DefaultComponents, "number of components `k`")
	fs.Float64Var(&m.lambda, "lambda", 0, "ridge `lambda` on the complexity term")
	fs.Float64Var(&m.epsilon, "epsilon", dica.DefaultEpsilon, "`epsilon` of the inverse-regression operator")
	fs.Float64Var(&m.sigma, "sigma", 0, "RBF bandwidth on inputs (0: median heuristic)")
	fs.Float64Var(&m.sigmaY, "sigma-y", 0, "RBF bandwidth on real targets (0: median heuristic)")
	fs.IntVar(&m.rank, "rank", dica.DefaultRank, "rank `m`: Nystrom landmarks or random features")
	fs.IntVar(&m.outputRank, "output-rank", 0, "Nystrom landmarks on real targets (0: min(rank, 200))")
	fs.StringVar(&m.landmarks, "landmarks", "uniform", "Nystrom landmarks: uniform or kmeans")
	fs.BoolVar(&m.orthogonal, "orthogonal", false, "orthogonal random features (rff solver)")
	fs.Uint64Var(&m.seed, "seed", 1, "random `seed` (same seed, same model, whatever the number of cores)")
	fs.StringVar(&m.report, "report", "", "print a report on stdout: json or text")
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
	if c.Method, err = exact.ParseMethod(m.method); err != nil {
		return c, usageErr("--method: %v", err)
	}
	if c.Solver, err = dica.ParseSolver(m.solver); err != nil {
		return c, usageErr("--solver: %v", err)
	}
	if c.Form, err = exact.ParseForm(m.form); err != nil {
		return c, usageErr("--form: %v", err)
	}
	if c.Landmarks, err = dica.ParseLandmarks(m.landmarks); err != nil || c.Landmarks == dica.GivenLandmarks {
		return c, usageErr("--landmarks %q: want uniform or kmeans", m.landmarks)
	}
	if m.components < 1 {
		return c, usageErr("--components %d: need at least 1", m.components)
	}
	if m.rank < 1 {
		return c, usageErr("--rank %d: need at least 1", m.rank)
	}
	if m.sigma < 0 || m.sigmaY < 0 {
		return c, usageErr("--sigma and --sigma-y must be > 0 (or 0 for the median heuristic)")
	}
	switch m.report {
	case "", "json", "text":
	default:
		return c, usageErr("--report %q: want json or text", m.report)
	}
	c.Components, c.Lambda, c.Epsilon = m.components, m.lambda, m.epsilon
	c.Sigma, c.SigmaY, c.Rank, c.OutputRank = m.sigma, m.sigmaY, m.rank, m.outputRank
	c.Orthogonal, c.Seed = m.orthogonal, m.seed
	budget, err := memoryBudget(m.maxMemory)
	if err != nil {
		return c, err
	}
	c.MaxMemory = budget
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
		if me.Exact {
			return usageErr("%s; or lower the number of cells, or raise --max-memory", strings.TrimPrefix(me.Error(), "dica: "))
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
	df.register(fs, true)
	mf.register(fs)
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
	if err := supervision(cfg, src.Schema()); err != nil {
		return err
	}
	if err := oneDomain(cfg, src); err != nil {
		return err
	}
	if mf.out == "" && mf.report == "" {
		return usageErr("--out is required: the file to write the model to (e.g. --out model.dica)")
	}
	if err := checkOutputs([]string{mf.out, mf.cpuprofile}, slices.Concat(in.files, in.labels)...); err != nil {
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
	model, err := dica.Fit(ctx, src, cfg)
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
	if !ok || (cfg.Method != dica.DICA && cfg.Method != dica.UDICA) || len(d.Domains()) != 1 {
		return nil
	}
	alt := map[dica.Method]string{dica.DICA: "coir", dica.UDICA: "kpca"}[cfg.Method]
	return usageErr("--method %s compares domains (samples), and the data is one: %s; give several files (one sample each), or use --method %s",
		strings.ToLower(cfg.Method.String()), d.Domains()[0], alt)
}

func supervision(cfg dica.Config, sc dataset.Schema) error {
	if (cfg.Method == dica.DICA || cfg.Method == dica.COIR) && !sc.Labelled && len(sc.Targets) == 0 {
		return usageErr("--method %s needs class labels or real targets: give --labels FILES (one label file per data file), --label COLUMN or --target COLUMNS, or fit without them with --method udica or kpca",
			strings.ToLower(cfg.Method.String()))
	}
	return nil
}

// fitReport is the JSON report of a fit.
type fitReport struct {
	N                  int64     `json:"n"`
	D                  int       `json:"d"`
	Domains            int       `json:"domains"`
	Classes            int       `json:"classes"`
	Method             string    `json:"method"`
	Solver             string    `json:"solver"`
	Form               string    `json:"form"`
	Rank               int       `json:"rank,omitempty"`
	Eigenvalues        []float64 `json:"eigenvalues"`
	ComponentsPositive int       `json:"components_positive"`
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
	Preprocessing     *pipelineJSON `json:"preprocessing"`
	PreprocessingText string        `json:"preprocessing_text"`
}

// pipelineJSON is the JSON form of a model's preprocessing.
type pipelineJSON struct {
	Format            string        `json:"format"`
	Channels          []channelJSON `json:"channels"`
	Linearize         bool          `json:"linearize"`
	Compensation      *spillJSON    `json:"compensation"`
	Transform         string        `json:"transform"`
	TransformChannels []string      `json:"transform_channels"`
}

type channelJSON struct {
	Name  string `json:"name"`
	Ref   string `json:"ref,omitempty"`
	Index int    `json:"index,omitempty"`
	PnN   string `json:"pnn,omitempty"`
	PnS   string `json:"pns,omitempty"`
}

type spillJSON struct {
	PerFile  bool      `json:"per_file"`
	Keyword  string    `json:"keyword"`
	Source   string    `json:"source"`
	Channels []string  `json:"channels"`
	Matrix   []float64 `json:"matrix"`
}

func newPipelineJSON(p *preprocess.Pipeline) *pipelineJSON {
	if p == nil {
		return nil
	}
	j := &pipelineJSON{Format: p.Format, Linearize: p.Linearize, Transform: p.TransformSpec(), TransformChannels: p.TransformChannels}
	for _, c := range p.Channels {
		j.Channels = append(j.Channels, channelJSON{c.Name, c.Ref, c.Index, c.PnN, c.PnS})
	}
	if s := p.Compensation; s != nil {
		j.Compensation = &spillJSON{s.PerFile, s.Keyword, s.Source, s.Channels, s.Matrix}
	}
	return j
}

func sigmaOf(k kernel.Kernel) float64 {
	switch k := k.(type) {
	case kernel.RBF:
		return k.Sigma
	case kernel.Laplacian:
		return k.Sigma
	}
	return 0
}

func newReport(m *dica.Model, secs float64) fitReport {
	c := m.Config()
	s := m.Summary
	r := fitReport{
		N: s.N, D: len(s.Features), Domains: len(s.Domains), Classes: len(s.Classes),
		Method: strings.ToLower(c.Method.String()), Solver: c.Solver.String(),
		Eigenvalues: m.Eigenvalues, ComponentsPositive: m.Positive,
		Sigma: sigmaOf(c.Kernel), SigmaY: sigmaOf(c.OutputKernel),
		Lambda: c.Lambda, Epsilon: c.Epsilon, Seconds: secs,
		DistVarInput: m.InputVariance, DistVarProjected: m.ProjectedVariance,
		DomainNames: s.Domains, ClassNames: s.Classes, Features: s.Features,
		PeakRSSMB:         peakRSSMB(),
		Preprocessing:     newPipelineJSON(m.Preprocessing()),
		PreprocessingText: m.Preprocessing().String(),
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
	fmt.Fprintf(tw, "components\t%d positive of %d returned\n", r.ComponentsPositive, len(r.Eigenvalues))
	fmt.Fprintf(tw, "eigenvalues\t%s\n", fmtFloats(r.Eigenvalues))
	fmt.Fprintf(tw, "distributional variance\t%.4g input, %.4g projected\n", r.DistVarInput, r.DistVarProjected)
	fmt.Fprintf(tw, "preprocessing\t%s\n", r.PreprocessingText)
	if r.Seconds > 0 {
		fmt.Fprintf(tw, "seconds\t%.2f\n", r.Seconds)
	}
	return tw.Flush()
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

const accumulateUsage = `Usage: dica accumulate --data SHARD_FILES [--sample-data ALL_FILES] [flags] --out PART.stats

Accumulate the sufficient statistics of one shard of a data set, so that
shards can be processed in separate processes or machines and merged with
'dica merge'. Every shard must be given the same fit flags and the same
--sample-data (the files the landmarks and bandwidths are chosen from: by
default the shard itself, which only agrees across shards with --solver rff
and a given --sigma).

Example:

  for i in 1 2 3 4; do
    dica accumulate --data "sample$i.csv" --sample-data 'sample*.csv' \
        --labels "labels$i.csv" --sample-labels 'labels*.csv' --labels-ignore 0 \
        --transform log1p --sigma 1 --rank 500 --out part$i.stats
  done
  dica merge part*.stats --out cytof.dica
` + dataHelp

func runAccumulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("accumulate", accumulateUsage, stderr)
	var df, sf dataFlags
	var mf modelFlags
	df.register(fs, true)
	df.shard = true
	mf.register(fs)
	fs.Var(&sf.data, "sample-data", "`files` to choose landmarks and bandwidths from (default: --data)")
	fs.Var(&sf.labels, "sample-labels", "label `files` of --sample-data")
	fs.StringVar(&mf.out, "out", "", "write the statistics to this `file`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if mf.out == "" {
		return usageErr("--out is required: the file to write the statistics to (e.g. --out part1.stats)")
	}
	cfg, err := mf.config()
	if err != nil {
		return err
	}
	if cfg.Solver == dica.Exact {
		return usageErr("the exact solver has no statistics to accumulate; use nystrom or rff")
	}
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	src := in.src
	if err := supervision(cfg, src.Schema()); err != nil {
		return err
	}
	inputs := slices.Concat(in.files, in.labels)
	planSrc := src
	if len(sf.data) > 0 {
		s2 := df
		s2.data, s2.labels = sf.data, sf.labels
		sin, err := s2.open(nil)
		if err != nil {
			return fmt.Errorf("--sample-data: %w", err)
		}
		planSrc = sin.src
		inputs = slices.Concat(inputs, sin.files, sin.labels)
	}
	if err := checkOutputs([]string{mf.out, mf.cpuprofile}, inputs...); err != nil {
		return err
	}
	cfg.Preprocessing = in.pipe
	pr := newProgress(mf.quiet)
	cfg.Progress = pr.update
	p, err := dica.NewPlan(ctx, planSrc, cfg)
	if err != nil {
		pr.done()
		return fitError(err)
	}
	st, err := p.Accumulate(ctx, src)
	pr.done()
	if err != nil {
		return err
	}
	warnInput(stderr, in)
	if err := st.Save(mf.out); err != nil {
		return err
	}
	if !mf.quiet {
		fp := p.Fingerprint()
		fmt.Fprintf(stderr, "%s: %d cells, %d domains, plan %x\n", mf.out, st.N(), len(st.Domains), fp[:6])
	}
	return nil
}

const mergeUsage = `Usage: dica merge PART.stats... --out MODEL [--report json]

Merge statistics written by 'dica accumulate' (with identical fit flags and
sample data) and solve: the model equals the fit of all shards at once.
`

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", mergeUsage, stderr)
	var out, rep string
	fs.StringVar(&out, "out", "", "write the model to this `file` (required unless --report is given)")
	fs.StringVar(&rep, "report", "", "print a report on stdout: json or text")
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
	if err := checkOutputs([]string{out}, files...); err != nil {
		return err
	}
	start := time.Now()
	var total dica.Stats
	from := map[dica.Part]string{} // the file each part came from
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := dica.LoadStats(f)
		if err != nil {
			return err
		}
		if err := total.Merge(st); err != nil {
			var dup *dica.DuplicateError
			if errors.As(err, &dup) {
				return fmt.Errorf("%s summarizes the same cells as %s (%v): each shard must be merged once", f, from[dup.Part], dup.Part)
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
