package dicabeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/preprocess"
)

func init() {
	registerDoFns((*readFn)(nil), (*sampleFilesFn)(nil), (*accumFilesFn)(nil))
	beam.RegisterType(reflect.TypeOf(fileTask{}))
}

// FileOptions say which files hold the cells and how to read them: with
// package ingest, as the dica command reads them, so a pipeline fits the
// cells, and records the preprocessing, of an in-process fit of the same
// files.
type FileOptions struct {
	// Files are the data files in order (Glob expands patterns), all of one
	// kind (ingest.KindOf): CSV, FCS or Parquet.
	Files []string
	// Options say how to read them (ingest.Options). Options.LabelFiles,
	// when set, holds one row-aligned label file per CSV file, in the
	// order of Files (expanded, not patterns).
	Options ingest.Options
}

// Glob expands file patterns in natural order (sample2 before sample10), as
// the dica command does. Patterns with a scheme ("gs://bucket/x*.csv") are
// listed with Beam's filesystem package (the program must import the
// filesystem, e.g. .../io/filesystem/gcs).
func Glob(patterns ...string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		var m []string
		if isRemote(p) {
			ctx := context.Background()
			fs, err := filesystem.New(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("dicabeam: pattern %q: %w", p, err)
			}
			m, err = fs.List(ctx, p)
			fs.Close()
			if err != nil {
				return nil, fmt.Errorf("dicabeam: pattern %q: %w", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("dicabeam: no file matches %q", p)
			}
			slices.SortFunc(m, csvio.NaturalCompare)
		} else {
			var err error
			if m, err = csvio.Glob([]string{p}); err != nil {
				return nil, err
			}
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// isRemote reports whether a path names a file of a Beam filesystem other
// than the local one ("gs://bucket/x.csv").
func isRemote(path string) bool { return strings.Contains(path, "://") }

// fetch copies the remote files among paths into a local temporary folder,
// keeping their base names (domains are named after files), and returns
// the local paths and a function that removes the copies.
func fetch(ctx context.Context, paths ...string) ([]string, func(), error) {
	out := slices.Clone(paths)
	var dirs []string
	cleanup := func() {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}
	for i, p := range paths {
		if p == "" || !isRemote(p) {
			continue
		}
		dir, err := os.MkdirTemp("", "dicabeam-")
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		dirs = append(dirs, dir)
		out[i] = filepath.Join(dir, path.Base(p))
		if err := copyFile(ctx, p, out[i]); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("dicabeam: copying %s: %w", p, err)
		}
	}
	return out, cleanup, nil
}

func copyFile(ctx context.Context, from, to string) error {
	fs, err := filesystem.New(ctx, from)
	if err != nil {
		return err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Source returns the in-process dataset.Source of the files (for dica.Fit,
// or to compare with a pipeline). Its stream order is the order of the keys
// ReadFiles gives the cells. The files must be local.
func (o FileOptions) Source() (dataset.Source, error) {
	in, err := o.open(context.Background(), o.Files, o.Options.LabelFiles)
	if err != nil {
		return nil, err
	}
	return in.Source, nil
}

// open opens local copies of files (with their label files) as ingest
// does. Remote files are refused: fetch copies them first.
func (o FileOptions) open(_ context.Context, files, labels []string) (*ingest.Input, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("dicabeam: no data files")
	}
	for _, f := range slices.Concat(files, labels) {
		if isRemote(f) {
			return nil, fmt.Errorf("dicabeam: %s: the in-process source reads local files only", f)
		}
	}
	if len(labels) > 0 && len(labels) != len(files) {
		return nil, fmt.Errorf("dicabeam: %d data files but %d label files", len(files), len(labels))
	}
	io := o.Options
	io.LabelFiles = labels
	in, err := ingest.Open(files, io)
	if err != nil {
		return nil, fmt.Errorf("dicabeam: %w", err)
	}
	if in.Kind == ingest.AnnData {
		return nil, fmt.Errorf("dicabeam: an AnnData store is read by one process: fit it with the dica command or dica.Fit")
	}
	return in, nil
}

// schema returns the schema of the cells of the files, from the first file
// (copied locally when remote).
func (o FileOptions) schema(ctx context.Context) (dataset.Schema, error) {
	sc, _, err := o.schemaAndPipeline(ctx)
	return sc, err
}

// schemaAndPipeline returns the schema of the cells and the preprocessing a
// fit on them records (dica.Config.Preprocessing), read from the first
// file as ingest.Open reads it: the preprocessing the dica command records
// for the same files.
func (o FileOptions) schemaAndPipeline(ctx context.Context) (dataset.Schema, *preprocess.Pipeline, error) {
	if len(o.Files) == 0 {
		return dataset.Schema{}, nil, fmt.Errorf("dicabeam: no data files")
	}
	labels := o.Options.LabelFiles
	if len(labels) > 0 && len(labels) != len(o.Files) {
		return dataset.Schema{}, nil, fmt.Errorf("dicabeam: %d data files but %d label files", len(o.Files), len(labels))
	}
	if _, err := kindOfFiles(o.Files); err != nil {
		return dataset.Schema{}, nil, err
	}
	first := []string{o.Files[0], ""}
	if len(labels) > 0 {
		first[1] = labels[0]
	}
	local, cleanup, err := fetch(ctx, first...)
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	defer cleanup()
	var lf []string
	if local[1] != "" {
		lf = local[1:]
	}
	in, err := o.open(ctx, local[:1], lf)
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	pipe := in.Pipeline
	if pipe != nil && pipe.Compensation != nil {
		// The files' names, not the local copies'.
		pipe.Compensation.Source = path.Base(o.Files[0])
	}
	return in.Source.Schema(), pipe, nil
}

// kindOfFiles returns the kind of the files, all of one kind: by their
// extension (or, for local files, their first bytes; ingest.KindOf).
func kindOfFiles(files []string) (ingest.Kind, error) {
	n := map[ingest.Kind]int{}
	var k ingest.Kind
	for _, f := range files {
		switch {
		case isRemote(f) && (strings.HasSuffix(strings.ToLower(f), ".parquet") || strings.HasSuffix(strings.ToLower(f), ".parq")):
			k = ingest.Parquet
		case isRemote(f) && (strings.HasSuffix(strings.ToLower(f), ".fcs") || strings.HasSuffix(strings.ToLower(f), ".lmd")):
			k = ingest.FCS
		case isRemote(f):
			k = ingest.CSV
		default:
			k = ingest.KindOf(f)
		}
		n[k]++
	}
	if len(n) > 1 {
		return 0, fmt.Errorf("dicabeam: the files mix kinds (%d CSV, %d FCS, %d Parquet); give files of one kind", n[ingest.CSV], n[ingest.FCS], n[ingest.Parquet])
	}
	return k, nil
}

// KeyBits is the number of low bits of Cell.Key that ReadFiles gives the row
// number within its file; the file number is above them.
const KeyBits = 40

// fileTask is one file for readFn.
type fileTask struct {
	Index int
	Path  string
	Label string
}

// readFn reads one file into cells.
type readFn struct {
	Options FileOptions
}

func (f *readFn) ProcessElement(ctx context.Context, t fileTask, emit func(Cell)) error {
	return readFile(ctx, f.Options, t, emit)
}

// readFile emits the cells of one file (copied locally first when remote).
func readFile(ctx context.Context, o FileOptions, t fileTask, emit func(Cell)) error {
	local, cleanup, err := fetch(ctx, t.Path, t.Label)
	if err != nil {
		return err
	}
	defer cleanup()
	var labels []string
	if t.Label != "" {
		labels = local[1:]
	}
	in, err := o.open(ctx, local[:1], labels)
	if err != nil {
		return err
	}
	return readCells(ctx, in.Source, int64(t.Index)<<KeyBits, emit)
}

// readCells emits the rows of src as cells with keys base, base+1, ...
func readCells(ctx context.Context, src dataset.Source, base int64, emit func(Cell)) error {
	r, err := src.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	var b dataset.Block
	row := base
	for {
		k, err := r.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		doms, cls := r.Domains(), r.Classes()
		// One allocation per block for all the cells' values.
		vals := make([]float64, k*(b.D+b.T))
		for i := 0; i < k; i++ {
			c := Cell{Key: row, Domain: doms[b.Domain[i]]}
			row++
			c.Features = vals[:b.D:b.D]
			copy(c.Features, b.Row(i))
			vals = vals[b.D:]
			if b.Label != nil {
				c.Label = cls[b.Label[i]]
			}
			if b.T > 0 {
				c.Targets = vals[:b.T:b.T]
				copy(c.Targets, b.Target[i*b.T:(i+1)*b.T])
				vals = vals[b.T:]
			}
			emit(c)
		}
	}
}

// ReadFiles adds the reading of the files to the pipeline: one cell per row,
// files read in parallel (one file per element, reshuffled across workers).
// A cell's key is its file's number << KeyBits | its row number in the file,
// so the keys follow the stream order of FileOptions.Source. It also
// returns the schema of the cells (read from the first file when the
// pipeline is built), for Options.Schema.
//
// Local paths must exist on every worker (a shared file system). Paths with
// a scheme (gs://...) are read through Beam's filesystem package: each
// worker copies its file to a local temporary folder and reads it with the
// core readers.
func ReadFiles(s beam.Scope, o FileOptions) (beam.PCollection, dataset.Schema, error) {
	sc, err := o.schema(context.Background())
	if err != nil {
		return beam.PCollection{}, dataset.Schema{}, err
	}
	s = s.Scope("dica.ReadFiles")
	return beam.ParDo(s, &readFn{Options: o}, fileTasks(s, o)), sc, nil
}

// fileTasks returns the files as a PCollection of tasks, reshuffled so that
// the runner spreads them over its workers.
func fileTasks(s beam.Scope, o FileOptions) beam.PCollection {
	tasks := make([]fileTask, len(o.Files))
	for i, f := range o.Files {
		tasks[i] = fileTask{Index: i, Path: f}
		if len(o.Options.LabelFiles) > 0 {
			tasks[i].Label = o.Options.LabelFiles[i]
		}
	}
	return beam.Reshuffle(s, beam.CreateList(s, tasks))
}

// FitFiles fits the cells of the files as Fit(ReadFiles(o)) does, but reads
// the files twice, as dica.Fit does: once for the planning sample and once
// for the statistics, each read fused with its step, so the runner never
// holds the cells between the two steps. The returned PCollection holds
// the *dica.Model.
//
// The cells are not elements of the pipeline: a file is one element, and the
// DoFn that reads it offers its cells to the bundle's bottom-k sample (first
// read) or sums them (second read) directly. This saves the runner's
// per-element work (about a microsecond a cell in the Go SDK) on every
// cell.
//
// The statistics follow the reduction order of dica.Plan.Accumulate, so the
// model is bit-identical to that of dica.Fit (and of the dica command) on a
// source of the same files (ingest.Open, FileOptions.Source) with the same
// plan, BlockRows and configuration, whatever the bundling, the number of
// workers and the order of the combines: each file's statistics are
// accumulated alone (dica.Plan.Accumulate on Options.Workers goroutines,
// blocks of Options.BlockRows cells) and emitted tagged with the file's
// index; the keyed combine adds them in file order, keeping a file's
// statistics pending until those of every file before it have been added.
// In the worst case (file 0 read last) a combine holds every file's
// statistics: per Gram key about F m^2 / (2 GramParts) float64 for F files
// and rank m (m = 2000, 8 parts, 100 files: 200 MB), and F times the small
// statistics under the statistics key. Runners that run the files about
// in order keep few pending.
func FitFiles(s beam.Scope, o FileOptions, opts Options) (beam.PCollection, error) {
	sc, pipe, err := o.schemaAndPipeline(context.Background())
	if err != nil {
		return beam.PCollection{}, err
	}
	if opts.Config.Preprocessing == nil {
		opts.Config.Preprocessing = pipe
	}
	opts.Schema = sc
	s = s.Scope("dica.FitFiles")
	tasks := fileTasks(s, o)
	if err := opts.fixPlan(); err != nil {
		return beam.PCollection{}, err
	}
	var plan beam.PCollection
	if opts.Plan != nil {
		plan, err = NewPlan(s, beam.PCollection{}, opts)
	} else {
		samples := beam.ParDo(s.Scope("sample"), &sampleFilesFn{Options: o, K: sampleSize(opts.Config), Seed: opts.Config.Seed}, tasks)
		plan, err = planFromSamples(s, samples, opts)
	}
	if err != nil {
		return beam.PCollection{}, err
	}
	ss := s.Scope("statistics")
	parts := beam.ParDo(ss, &accumFilesFn{Options: o, BlockRows: opts.blockRows(), GramParts: opts.gramParts(), Workers: opts.workers()},
		tasks, beam.SideInput{Input: plan})
	return Solve(s, CombineParts(ss, parts)), nil
}

// sampleFilesFn reads files (fileTask elements) and keeps the bottom-k
// sample of the bundle's cells, emitted when the bundle ends.
type sampleFilesFn struct {
	Options FileOptions
	K       int
	Seed    uint64
	smp     *Sampler
}

func (f *sampleFilesFn) StartBundle(_ func(sampleAcc)) { f.smp = NewSampler(f.K, f.Seed) }

func (f *sampleFilesFn) ProcessElement(ctx context.Context, t fileTask, _ func(sampleAcc)) error {
	return readFile(ctx, f.Options, t, f.smp.Add)
}

func (f *sampleFilesFn) FinishBundle(emit func(sampleAcc)) {
	if len(f.smp.acc.Items) > 0 {
		emit(f.smp.acc)
	}
	f.smp = nil
}

// accumFilesFn accumulates the statistics of each file (a fileTask
// element) alone, with dica.Plan.Accumulate on Workers goroutines in blocks
// of BlockRows cells, and emits them as parts in file order (see FitFiles):
// the small statistics under statsKey and the Gram sum in GramParts row
// chunks keyed by chunk number, each tagged with the file's index.
type accumFilesFn struct {
	Options   FileOptions
	BlockRows int
	GramParts int
	Workers   int

	plan *dica.Plan
}

func (f *accumFilesFn) ProcessElement(ctx context.Context, t fileTask, planSide func(*[]byte) bool, emit func(int, Part)) error {
	if f.plan == nil {
		p, err := sidePlan(planSide)
		if err != nil {
			return err
		}
		// The run settings, which the plan's encoding does not hold.
		p.Config.Workers, p.Config.BlockRows = max(1, f.Workers), f.BlockRows
		f.plan = p
	}
	local, cleanup, err := fetch(ctx, t.Path, t.Label)
	if err != nil {
		return err
	}
	defer cleanup()
	var labels []string
	if t.Label != "" {
		labels = local[1:]
	}
	in, err := f.Options.open(ctx, local[:1], labels)
	if err != nil {
		return err
	}
	st, err := f.plan.Accumulate(ctx, in.Source)
	if err != nil {
		return fmt.Errorf("dicabeam: %s: %w", t.Path, err)
	}
	for k, g := range st.SplitGram(f.GramParts) {
		emit(k, Part{Pending: []FilePart{{File: t.Index, Gram: g}}})
	}
	emit(statsKey, Part{Pending: []FilePart{{File: t.Index, Stats: st}}})
	return nil
}

// Cells reads a source in process into cells with keys 0, 1, 2, ... in
// stream order (for tests and small data: beam.CreateList of the result
// gives a PCollection whose fit equals dica.Fit of the source).
func Cells(ctx context.Context, src dataset.Source) ([]Cell, error) {
	var out []Cell
	err := readCells(ctx, src, 0, func(c Cell) { out = append(out, c) })
	return out, err
}

// PlanLikeFit draws in process the plan that dica.Fit
// (and the dica command) draws on the same files and configuration: the
// seeded reservoir sample of the in-process stream (FileOptions.Source)
// and dica.NewPlan on it. FitFiles given it as Options.Plan gives the
// model of dica.Fit bit for bit (the sums follow dica.Fit's order, see
// FitFiles). The plan a pipeline draws itself, and PlanFiles, come from a
// bottom-k sample instead, which workers draw in pieces: on data of more
// than Config.Sample cells it is another uniform sample, so another plan
// and a model that differs from dica.Fit's as fits with two seeds do.
// Remote files are copied to a local temporary folder while the sample is
// drawn.
func PlanLikeFit(ctx context.Context, o FileOptions, cfg dica.Config) (*dica.Plan, error) {
	_, pipe, err := o.schemaAndPipeline(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Preprocessing == nil {
		cfg.Preprocessing = pipe
	}
	all := slices.Concat(o.Files, o.Options.LabelFiles)
	local, cleanup, err := fetch(ctx, all...)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	in, err := o.open(ctx, local[:len(o.Files)], local[len(o.Files):])
	if err != nil {
		return nil, err
	}
	return dica.NewPlan(ctx, in.Source, cfg)
}

// PlanFiles computes in process the plan that NewPlan draws on a pipeline
// from ReadFiles(o): the same bottom-k sample (the same keys and hash) and
// dica.NewPlan on it. Passing it as Options.Plan skips the sampling step of
// the pipeline; comparing a pipeline's model with an in-process fit on it
// checks the distributed pass.
func PlanFiles(ctx context.Context, o FileOptions, cfg dica.Config) (*dica.Plan, error) {
	schema, pipe, err := o.schemaAndPipeline(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Preprocessing == nil {
		cfg.Preprocessing = pipe
	}
	smp := NewSampler(sampleSize(cfg), cfg.Seed)
	for i, f := range o.Files {
		label := ""
		if len(o.Options.LabelFiles) > 0 {
			label = o.Options.LabelFiles[i]
		}
		if err := readFile(ctx, o, fileTask{Index: i, Path: f, Label: label}, smp.Add); err != nil {
			return nil, err
		}
	}
	return PlanFromSample(ctx, smp.Cells(), schema, cfg)
}
