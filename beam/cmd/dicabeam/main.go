// Command dicabeam fits a DICA model on Apache Beam: the files are read,
// sampled for the plan, accumulated into sufficient statistics and solved
// on the runner named by --runner (prism in process by default; flink,
// spark, dataflow or universal with a job server). The model is the one
// `dica fit` writes, readable by `dica transform` and dica.Load: on local
// files byte for byte (the plan is drawn here, as dica fit draws it, and
// the sums follow dica fit's order); on remote files (gs://...) the plan
// comes from a sample drawn on the workers (--plan pipeline).
//
// Usage:
//
//	dicabeam --data 'sample*.csv' --label-files 'labels*.csv' --labels-ignore 0 \
//	    --transform asinh:5 --rank 500 --out cytof.dica
//	dicabeam --runner flink --endpoint localhost:8099 --environment_type LOOPBACK \
//	    --method udica --data '/shared/cytof/sample*.csv' --out /shared/cytof.dica
//
// See beam/README.md for Flink, Spark and Dataflow.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// paths for --out and --z
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/dicalab/dica/beam/dicabeam"
	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/ingest"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var (
	data, labelFiles listFlag

	domain        = flag.String("domain", "", "CSV `column` holding the domain (default: one domain per file)")
	domainPerFile = flag.Bool("domain-per-file", true, "one domain per file, named after it (false needs --domain)")
	label         = flag.String("label", "", "CSV `column` holding class labels")
	labelsIgnore  = flag.String("labels-ignore", "", "label `values` whose cells are left out, comma-separated (e.g. 0)")
	target        = flag.String("target", "", "CSV `columns` holding real targets (regression), comma-separated")
	features      = flag.String("features", "", "CSV input `columns`, comma-separated (default: all others)")
	channels      = flag.String("channels", "", "FCS `markers` by $PnN or $PnS, comma-separated (default: all)")
	compensate    = flag.Bool("compensate", false, "apply each FCS file's $SPILLOVER compensation")
	header        = flag.String("header", "auto", "CSV header row: auto, yes or no")
	transform     = flag.String("transform", "none", "per-channel `transform`: asinh:COFACTOR, log1p, none")

	method     = flag.String("method", "dica", "`method`: dica, udica, kpca, coir")
	solver     = flag.String("solver", "nystrom", "`solver`: nystrom or rff")
	landmarks  = flag.String("landmarks", "uniform", "Nystrom landmarks: uniform or kmeans")
	components = flag.Int("components", dica.DefaultComponents, "number of components `k`")
	rank       = flag.Int("rank", dica.DefaultRank, "rank `m`: Nystrom landmarks or random features")
	outputRank = flag.Int("output-rank", 0, "Nystrom landmarks on real targets (0: min(rank, 200))")
	lambda     = flag.Float64("lambda", 0, "ridge `lambda` on the complexity term")
	epsilon    = flag.Float64("epsilon", dica.DefaultEpsilon, "`epsilon` of the inverse-regression operator")
	sigma      = flag.Float64("sigma", 0, "RBF bandwidth on inputs (0: median heuristic)")
	sigmaY     = flag.Float64("sigma-y", 0, "RBF bandwidth on real targets (0: median heuristic)")
	seed       = flag.Uint64("seed", 1, "random `seed`")
	sample     = flag.Int("sample", 0, "planning sample size (0: max(20000, 20 rank))")
	blockRows  = flag.Int("block-rows", dica.DefaultBlockRows, "cells per block of the statistics pass")
	gramParts  = flag.Int("gram-parts", dicabeam.DefaultGramParts, "row chunks (keys) of the Gram sum combine")
	workers    = flag.Int("bundle-workers", 1, "goroutines per bundle for the statistics (more than 1 helps on prism, whose bundles run one at a time)")
	planWhere  = flag.String("plan", "auto", "where the plan's sample is drawn: local (here, before submitting, as dica fit draws it: the model is dica fit's, bit for bit), pipeline (a bottom-k sample on the workers), auto (local when every file is local)")

	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile (pprof) of this process to `file` (with prism it includes the workers)")

	out  = flag.String("out", "", "model `file` to write (local path, or gs://... on Dataflow)")
	zOut = flag.String("z", "", "also project the cells and write them as CSV lines (key,domain,label,z...) to this `file`")
)

func init() {
	flag.Var(&data, "data", "data `files` or globs (CSV or FCS; repeatable)")
	flag.Var(&labelFiles, "label-files", "row-aligned label `files`, one per data file (globs; repeatable)")
}

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: dicabeam --data FILES [flags] --out MODEL [--runner prism|flink|spark|dataflow|universal ...]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "dicabeam:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *runners.Runner == "" {
		*runners.Runner = "prism"
	}
	selfWorker()
	if len(data) == 0 || *out == "" {
		flag.Usage()
		return fmt.Errorf("need --data and --out")
	}
	if !*domainPerFile && *domain == "" {
		return fmt.Errorf("--domain-per-file=false needs --domain COLUMN")
	}
	files, err := dicabeam.Glob(data...)
	if err != nil {
		return err
	}
	if *features != "" && *channels != "" {
		return fmt.Errorf("--features and --channels name the same thing: give one")
	}
	o := dicabeam.FileOptions{Files: files, Options: ingest.Options{
		Domain: *domain, Channels: splitList(*features + *channels), Label: *label,
		LabelsIgnore: splitList(*labelsIgnore), Target: splitList(*target),
		Transform: *transform, Compensate: *compensate,
	}}
	switch *header {
	case "", "auto":
		o.Options.Header = csvio.DetectHeader
	case "yes":
		o.Options.Header = csvio.WithHeader
	case "no":
		o.Options.Header = csvio.NoHeader
	default:
		return fmt.Errorf("--header %q: want auto, yes or no", *header)
	}
	if len(labelFiles) > 0 {
		if o.Options.LabelFiles, err = dicabeam.Glob(labelFiles...); err != nil {
			return err
		}
	}
	cfg := dica.Config{
		Components: *components, Rank: *rank, OutputRank: *outputRank, Lambda: *lambda,
		Epsilon: *epsilon, Sigma: *sigma, SigmaY: *sigmaY, Seed: *seed, Sample: *sample,
	}
	if cfg.Method, err = exact.ParseMethod(*method); err != nil {
		return err
	}
	if cfg.Solver, err = dica.ParseSolver(*solver); err != nil {
		return err
	}
	if cfg.Landmarks, err = dica.ParseLandmarks(*landmarks); err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	p, s := beam.NewPipelineWithRoot()
	opts := dicabeam.Options{Config: cfg, BlockRows: *blockRows, GramParts: *gramParts, Workers: *workers}
	local, err := planHere(*planWhere, append(slices.Clone(files), o.Options.LabelFiles...))
	if err != nil {
		return err
	}
	if local {
		if opts.Plan, err = dicabeam.PlanLikeFit(ctx, o, cfg); err != nil {
			return err
		}
	}
	// The files are read once for the sample and once for the statistics
	// (and once more for --z), as the in-process fit does.
	model, err := dicabeam.FitFiles(s, o, opts)
	if err != nil {
		return err
	}
	dicabeam.WriteModel(s, *out, model)
	if *zOut != "" {
		cells, _, err := dicabeam.ReadFiles(s, o)
		if err != nil {
			return err
		}
		z := dicabeam.Transform(s, model, cells, *blockRows, false)
		textio.Write(s, *zOut, beam.ParDo(s, dicabeam.FormatProjection, z))
	}
	if err := beamx.Run(ctx, p); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dicabeam: %d files, fit on %s in %.1f s, model written to %s\n", len(files), *runners.Runner, time.Since(start).Seconds(), *out)
	return nil
}

// selfWorker makes this program its own worker binary. The Go SDK stages the
// binary that --worker_binary names as the workers' program and otherwise
// compiles the source of the main package where the job is submitted (which
// needs this module's source tree and Go there). The program is a worker
// too (beam.Init), so on linux/amd64, the workers' platform, it stages
// itself, except with the in-process runner and for Dataflow's arm64 (t2a)
// machines.
func selfWorker() {
	if *jobopts.WorkerBinary != "" || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	switch *runners.Runner {
	case "prism", "direct":
		return
	}
	if f := flag.Lookup("worker_machine_type"); f != nil && strings.HasPrefix(f.Value.String(), "t2a") {
		return
	}
	if exe, err := os.Executable(); err == nil {
		*jobopts.WorkerBinary = exe
	}
}

// planHere reports whether the plan is drawn in this process (--plan):
// local, pipeline, or auto (local when no file has a scheme such as gs://,
// so that the model is that of dica fit on the same files).
func planHere(where string, files []string) (bool, error) {
	switch where {
	case "local":
		return true, nil
	case "pipeline":
		return false, nil
	case "auto":
		for _, f := range files {
			if strings.Contains(f, "://") {
				return false, nil
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("--plan %q: want auto, local or pipeline", where)
}
