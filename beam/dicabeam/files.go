package dicabeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/preprocess"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*readFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf(fileTask{}))
}

// FileOptions say which files hold the cells and how to read them. The
// files are read with the core readers (packages csvio and fcs), so they
// give the same cells as the in-process Source.
type FileOptions struct {
	// Files are the data files in order (Glob expands patterns). All are
	// CSV or all are FCS (by extension .fcs/.lmd or an "FCS" signature).
	Files []string
	// Domain names the CSV column holding the domain; empty means one
	// domain per file, named after the file (always so for FCS files).
	Domain string
	// Features selects CSV input columns by name or 1-based position
	// (default: every column not used otherwise).
	Features []string
	// Label names the CSV column holding class labels; LabelFiles gives
	// instead one row-aligned label file per data file.
	Label      string
	LabelFiles []string
	// LabelsIgnore lists label values whose cells are left out (e.g. "0").
	LabelsIgnore []string
	// Target names CSV columns holding real targets (regression).
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
// the dica command does.
func Glob(patterns ...string) ([]string, error) { return csvio.Glob(patterns) }

// IsFCS reports whether a file is an FCS file, by its extension or its
// first bytes.
func IsFCS(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".fcs", ".lmd":
		return true
	case ".csv", ".txt", ".tsv", ".gz":
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 3)
	n, _ := f.Read(b)
	return n == 3 && string(b) == "FCS"
}

// Source returns the in-process dataset.Source of the files (for dica.Fit,
// or to compare with a pipeline). Its stream order is the order of the keys
// ReadFiles gives the cells.
func (o FileOptions) Source() (dataset.Source, error) {
	return o.source(o.Files, o.LabelFiles)
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
	nfcs := 0
	for _, f := range files {
		if IsFCS(f) {
			nfcs++
		}
	}
	if nfcs > 0 {
		if nfcs < len(files) {
			return nil, fmt.Errorf("dicabeam: the files mix FCS and CSV")
		}
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
	var labels []string
	if t.Label != "" {
		labels = []string{t.Label}
	}
	src, err := f.Options.source([]string{t.Path}, labels)
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
func ReadFiles(s beam.Scope, o FileOptions) (beam.PCollection, dataset.Schema, error) {
	src, err := o.Source()
	if err != nil {
		return beam.PCollection{}, dataset.Schema{}, err
	}
	sc := src.Schema()
	s = s.Scope("dica.ReadFiles")
	tasks := make([]fileTask, len(o.Files))
	for i, f := range o.Files {
		tasks[i] = fileTask{Index: i, Path: f}
		if len(o.LabelFiles) > 0 {
			tasks[i].Label = o.LabelFiles[i]
		}
	}
	col := beam.Reshuffle(s, beam.CreateList(s, tasks))
	return beam.ParDo(s, &readFn{Options: o}, col), sc, nil
}

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
	src, err := o.Source()
	if err != nil {
		return nil, err
	}
	smp := NewSampler(sampleSize(cfg), cfg.Seed)
	for i, f := range o.Files {
		var labels []string
		if len(o.LabelFiles) > 0 {
			labels = []string{o.LabelFiles[i]}
		}
		fs, err := o.source([]string{f}, labels)
		if err != nil {
			return nil, err
		}
		if err := readCells(ctx, fs, int64(i)<<KeyBits, smp.Add); err != nil {
			return nil, err
		}
	}
	return PlanFromSample(ctx, smp.Cells(), src.Schema(), cfg)
}
