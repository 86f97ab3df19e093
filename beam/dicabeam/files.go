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
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

func init() {
	registerDoFns((*readFn)(nil), (*sampleFilesFn)(nil), (*accumFilesFn)(nil))
	beam.RegisterType(reflect.TypeOf(fileTask{}))
}

// FileOptions say which files hold the cells and how to read them. The
// files are read with the core readers (packages csvio, fcs and
// parquetio), so they give the same cells as the in-process Source.
type FileOptions struct {
	// Files are the data files in order (Glob expands patterns). All are
	// CSV, all are FCS (by extension .fcs/.lmd or an "FCS" signature) or
	// all are Parquet (by extension .parquet/.parq or a "PAR1" signature).
	Files []string
	// Domain names the CSV or Parquet column holding the domain; empty
	// means one domain per file, named after the file (always so for FCS
	// files).
	Domain string
	// Features selects input columns: CSV columns by name or 1-based
	// position, Parquet columns by name (default: every column not used
	// otherwise; for Parquet, every numeric one).
	Features []string
	// Label names the CSV or Parquet column holding class labels;
	// LabelFiles gives instead one row-aligned label file per CSV file.
	Label      string
	LabelFiles []string
	// LabelsIgnore lists label values whose cells are left out (e.g. "0").
	LabelsIgnore []string
	// Target names CSV or Parquet columns holding real targets
	// (regression).
	Target []string
	// Header is "auto" (default), "yes" or "no" (CSV).
	Header string
	// Transform is a per-channel transform spec of preprocess.ParseFunc
	// ("asinh:5", "log1p", "none").
	Transform string
	// Channels selects FCS channels by $PnN or $PnS; Compensate applies
	// each FCS file's spillover matrix.
	Channels   []string
	Compensate bool
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
	for _, f := range slices.Concat(o.Files, o.LabelFiles) {
		if isRemote(f) {
			return nil, fmt.Errorf("dicabeam: %s: the in-process source reads local files only", f)
		}
	}
	return o.source(o.Files, o.LabelFiles)
}

// schema returns the schema of the cells of the files, from the first file
// (copied locally when remote), after checking the file kinds.
func (o FileOptions) schema(ctx context.Context) (dataset.Schema, error) {
	sc, _, err := o.schemaAndPipeline(ctx)
	return sc, err
}

// schemaAndPipeline returns the schema of the cells and the preprocessing a
// fit on them records (dica.Config.Preprocessing), read from the first
// file.
func (o FileOptions) schemaAndPipeline(ctx context.Context) (dataset.Schema, *preprocess.Pipeline, error) {
	if len(o.Files) == 0 {
		return dataset.Schema{}, nil, fmt.Errorf("dicabeam: no data files")
	}
	if len(o.LabelFiles) > 0 && len(o.LabelFiles) != len(o.Files) {
		return dataset.Schema{}, nil, fmt.Errorf("dicabeam: %d data files but %d label files", len(o.Files), len(o.LabelFiles))
	}
	kind, err := kindOfFiles(o.Files)
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	first := []string{o.Files[0], ""}
	if len(o.LabelFiles) > 0 {
		first[1] = o.LabelFiles[0]
	}
	local, cleanup, err := fetch(ctx, first...)
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	defer cleanup()
	var labels []string
	if local[1] != "" {
		labels = local[1:]
	}
	src, err := o.source(local[:1], labels)
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	tr, err := preprocess.ParseFunc(orNone(o.Transform))
	if err != nil {
		return dataset.Schema{}, nil, err
	}
	pipe := &preprocess.Pipeline{Format: [...]string{csvFiles: "csv", fcsFiles: "fcs", parquetFiles: "parquet"}[kind], Transform: tr.String()}
	if fs, ok := src.(*fcs.Source); ok {
		if comps := fs.Compensations(); len(comps) > 0 {
			sp := comps[0]
			r, c := sp.Matrix.Dims()
			m := make([]float64, 0, r*c)
			for i := 0; i < r; i++ {
				m = append(m, sp.Matrix.RawRowView(i)...)
			}
			pipe.Compensation = &preprocess.Spill{PerFile: true, Keyword: sp.Keyword, Source: filepath.Base(o.Files[0]), Channels: sp.Channels, Matrix: m}
		}
	}
	return src.Schema(), pipe, nil
}

func (o FileOptions) source(files, labels []string) (dataset.Source, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("dicabeam: no data files")
	}
	tr, err := preprocess.ParseFunc(orNone(o.Transform))
	if err != nil {
		return nil, fmt.Errorf("dicabeam: transform: %w", err)
	}
	_, identity := tr.(preprocess.Identity)
	kind, err := kindOfFiles(files)
	if err != nil {
		return nil, err
	}
	if kind == parquetFiles {
		if len(labels) > 0 || len(o.Channels) > 0 || o.Compensate || (o.Header != "" && o.Header != "auto") {
			return nil, fmt.Errorf("dicabeam: LabelFiles, Header, Channels and Compensate do not apply to Parquet files (name a Label column)")
		}
		po := parquetio.Options{Features: o.Features, Domain: o.Domain, Label: o.Label, Target: o.Target, LabelsIgnore: o.LabelsIgnore}
		if !identity {
			ch := preprocess.Channels{F: tr}
			po.Transform = func(row []float64) { ch.Apply(row, len(row)) }
		}
		return parquetio.NewSource(files, po)
	}
	if kind == fcsFiles {
		if o.Domain != "" || o.Label != "" || len(o.Target) > 0 || len(o.Features) > 0 || len(labels) > 0 {
			return nil, fmt.Errorf("dicabeam: FCS files are one domain each, without labels or targets: Domain, Label, LabelFiles, Target and Features apply to CSV (use Channels)")
		}
		so := fcs.SourceOptions{Channels: o.Channels, Compensate: o.Compensate}
		if !identity {
			so.Transform = tr
		}
		return fcs.NewSource(files, so)
	}
	if len(o.Channels) > 0 || o.Compensate {
		return nil, fmt.Errorf("dicabeam: Channels and Compensate apply to FCS files; use Features for CSV")
	}
	co := csvio.Options{
		Features:     o.Features,
		Domain:       o.Domain,
		Label:        o.Label,
		Target:       o.Target,
		LabelsIgnore: o.LabelsIgnore,
		LabelFiles:   labels,
	}
	switch o.Header {
	case "", "auto":
		co.Header = csvio.DetectHeader
	case "yes", "true":
		co.Header = csvio.WithHeader
	case "no", "false":
		co.Header = csvio.NoHeader
	default:
		return nil, fmt.Errorf("dicabeam: header %q: want auto, yes or no", o.Header)
	}
	if !identity {
		ch := preprocess.Channels{F: tr}
		co.Transform = func(row []float64) { ch.Apply(row, len(row)) }
	}
	if len(labels) > 0 && len(labels) != len(files) {
		return nil, fmt.Errorf("dicabeam: %d data files but %d label files", len(files), len(labels))
	}
	return csvio.NewSource(files, co)
}

// Kinds of data files.
const (
	csvFiles = iota
	fcsFiles
	parquetFiles
)

// isParquet reports whether a file is Parquet: by its extension, or for a
// local file by the "PAR1" signature at its start.
func isParquet(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".parq":
		return true
	}
	if isRemote(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PAR1"
}

// kindOfFiles returns the kind of the files, all of one kind.
func kindOfFiles(files []string) (int, error) {
	var n [3]int
	for _, f := range files {
		switch {
		case isParquet(f):
			n[parquetFiles]++
		case fcs.Detect(f):
			n[fcsFiles]++
		default:
			n[csvFiles]++
		}
	}
	for k, c := range n {
		if c == len(files) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("dicabeam: the files mix kinds (%d CSV, %d FCS, %d Parquet); give files of one kind", n[csvFiles], n[fcsFiles], n[parquetFiles])
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
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
	src, err := o.source(local[:1], labels)
	if err != nil {
		return err
	}
	return readCells(ctx, src, int64(t.Index)<<KeyBits, emit)
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
		if len(o.LabelFiles) > 0 {
			tasks[i].Label = o.LabelFiles[i]
		}
	}
	return beam.Reshuffle(s, beam.CreateList(s, tasks))
}

// FitFiles fits the cells of the files as Fit(ReadFiles(o)) does, but reads
// the files twice, as dica.Fit does: once for the planning sample and once
// for the statistics, each read fused with its step, so the runner never
// holds the cells between the two steps. The model is the same. The
// returned PCollection holds the *dica.Model.
//
// The cells are not elements of the pipeline: a file is one element, and the
// DoFn that reads it offers its cells to the bundle's bottom-k sample (first
// read) or adds them to the bundle's statistics (second read) directly. This
// saves the runner's per-element work (about a microsecond a cell in the Go
// SDK) on every cell.
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
	parts := beam.ParDo(ss, &accumFilesFn{Options: o, Acc: accumFn{BlockRows: opts.blockRows(), GramParts: opts.gramParts(), Workers: opts.workers()}},
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

// accumFilesFn is accumFn fed by files: each element is a file, read on the
// worker, its cells added to the bundle's statistics as accumFn adds cells
// that are elements. The parts it emits are accumFn's.
type accumFilesFn struct {
	Options FileOptions
	Acc     accumFn
}

func (f *accumFilesFn) StartBundle(plan func(*[]byte) bool, emit func(int, Part)) {
	f.Acc.StartBundle(plan, emit)
}

func (f *accumFilesFn) ProcessElement(ctx context.Context, t fileTask, plan func(*[]byte) bool, emit func(int, Part)) error {
	var err error
	rerr := readFile(ctx, f.Options, t, func(c Cell) {
		if err == nil {
			err = f.Acc.ProcessElement(c, plan, emit)
		}
	})
	if err != nil {
		return err
	}
	return rerr
}

func (f *accumFilesFn) FinishBundle(plan func(*[]byte) bool, emit func(int, Part)) error {
	return f.Acc.FinishBundle(plan, emit)
}

func (f *accumFilesFn) Teardown() { f.Acc.Teardown() }

// Cells reads a source in process into cells with keys 0, 1, 2, ... in
// stream order (for tests and small data: beam.CreateList of the result
// gives a PCollection whose fit equals dica.Fit of the source).
func Cells(ctx context.Context, src dataset.Source) ([]Cell, error) {
	var out []Cell
	err := readCells(ctx, src, 0, func(c Cell) { out = append(out, c) })
	return out, err
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
		if len(o.LabelFiles) > 0 {
			label = o.LabelFiles[i]
		}
		if err := readFile(ctx, o, fileTask{Index: i, Path: f, Label: label}, smp.Add); err != nil {
			return nil, err
		}
	}
	return PlanFromSample(ctx, smp.Cells(), schema, cfg)
}
