package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/internal/escape"
	"github.com/dicalab/dica/preprocess"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

// Set adds v: a file or glob, or several separated by commas (a name that
// exists with its commas is one file).
func (l *listFlag) Set(v string) error {
	if _, err := os.Stat(v); err == nil || !strings.Contains(v, ",") {
		*l = append(*l, v)
		return nil
	}
	*l = append(*l, splitList(v)...)
	return nil
}

// dataFlags are the flags that say where cells come from.
type dataFlags struct {
	data, labels                           listFlag
	domain, label, target, features, chans string
	labelsIgnore, transform, header        string
	transformChans                         string
	compensate, allowTruncated, linearize  bool
	allDataSets, byPosition                bool
	maxLineBytes                           int
	// shard: the data is one shard of a larger set (dica accumulate), so a
	// --labels-ignore value may be absent from it.
	shard bool
	// set holds the names of the flags given on the command line.
	set map[string]bool
	// forModel: the data is opened for a model (fromModel), whose
	// preprocessing is model; preprocessed: the data holds the model's
	// inputs already (--preprocess none).
	forModel     bool
	model        *preprocess.Pipeline
	preprocessed bool
}

const dataHelp = `
Data:
  --data takes files, globs ('sample*.csv', quoted so dica expands them in
  natural order: sample2 before sample10) and folders (their FCS files),
  several at once separated by commas or by repeating --data; files may
  also follow the flags (--data a.csv b.csv reads both). Each file is one
  sample (domain), named
  after the file without its extension, unless --domain names a column.
  FCS files (.fcs, .lmd, or any file starting with "FCS"), CSV files (with
  or without a header; labels from --label COLUMN or --labels files, one
  per data file), Parquet files (--label COLUMN) and an AnnData store (a
  .zarr folder as anndata's write_zarr writes it: X dense, --domain
  obs:COLUMN, --label obs:COLUMN; h5ad: convert it with
  anndata.read_h5ad(...).write_zarr(...)). Files dica wrote (transform's
  outputs) are read as what they are: their channels are the inputs, their
  domain and label columns the domain and label.
`

func (d *dataFlags) register(fs *flag.FlagSet, supervised bool) {
	fs.Var(&d.data, "data", "data `files`, globs or folders (CSV, FCS, Parquet or an AnnData .zarr store; repeatable)")
	fs.StringVar(&d.domain, "domain", "", "`column` holding the sample of each cell (default: one sample per file)")
	fs.StringVar(&d.chans, "channels", "", "input `channels`, comma-separated: FCS markers by $PnN or $PnS, CSV and Parquet columns by name or position (default: all)")
	fs.StringVar(&d.features, "features", "", "the same as --channels (for CSV columns)")
	fs.StringVar(&d.transform, "transform", "none", "per-channel `transform`: asinh:COFACTOR (5 for mass, 150 for flow cytometry), log1p, none")
	fs.StringVar(&d.transformChans, "transform-channels", "", "`channels` the --transform applies to, comma-separated (default: all chosen; e.g. leave FSC-A, SSC-A linear)")
	fs.BoolVar(&d.compensate, "compensate", false, "apply the FCS file's $SPILLOVER compensation")
	fs.StringVar(&d.header, "header", "auto", "CSV header `row`: auto, yes or no")
	fs.IntVar(&d.maxLineBytes, "max-line-bytes", 0, "longest line of a CSV or label file, in `bytes` (0: 1 MiB); a longer line is an error")
	fs.BoolVar(&d.allowTruncated, "allow-truncated", false, "read the complete events of truncated FCS files instead of failing")
	fs.BoolVar(&d.linearize, "linearize", false, "FCS: convert log-amplified channels ($PnE) to linear values and divide by gains ($PnG), as flowCore does")
	fs.BoolVar(&d.allDataSets, "all-datasets", false, "FCS: read every data set of multi-data-set files, each as its own sample (file#k)")
	if supervised {
		fs.StringVar(&d.label, "label", "", "`column` holding class labels (e.g. the gated population)")
		fs.StringVar(&d.target, "target", "", "`columns` holding real targets (regression), comma-separated")
		fs.Var(&d.labels, "labels", "row-aligned label `files`: one per CSV data file (globs), or DATA=LABELS pairs for some files only (repeatable)")
		fs.StringVar(&d.labelsIgnore, "labels-ignore", "", "label `values` whose cells are left out, comma-separated (e.g. 0 for ungated)")
	}
}

// registerModel registers the flags of commands that read data for a
// fitted model.
func (d *dataFlags) registerModel(fs *flag.FlagSet) {
	fs.BoolVar(&d.byPosition, "by-position", false, "take the model's channels by their position when the data's column names differ from the model's (a warning says so)")
}

// markSet records which flags of fs the command line gave.
func (d *dataFlags) markSet(fs *flag.FlagSet) {
	d.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { d.set[f.Name] = true })
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// expand expands file globs in natural order; what names the flag in
// errors. A label pair DATA=LABELS (--labels) stands for its label file.
func expand(patterns []string, what string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	var pats []string
	for _, p := range patterns {
		if _, labels, ok := ingest.SplitLabelPair(p); ok {
			p = labels
		}
		pats = append(pats, p)
	}
	files, err := ingest.Glob(pats)
	if err != nil {
		var oe *dataset.OptionError
		if errors.As(err, &oe) {
			return nil, usageErr("%s: %v", what, oe.Err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return files, nil
}

// dataFiles lists the data and label files the flags and extra arguments
// name (for the checks of the outputs against the inputs).
func (d *dataFlags) dataFiles(extra []string) (files, labels []string, err error) {
	pats := slices.Concat(d.data, extra)
	if len(pats) == 0 {
		return nil, nil, usageErr("no data: give --data FILES")
	}
	files, _, err = ingest.Expand(pats)
	if err != nil {
		return nil, nil, dataError(err, d)
	}
	labels, err = expand(d.labels, "--labels")
	return files, labels, err
}

// options returns the ingest options of the flags.
func (d *dataFlags) options() (ingest.Options, error) {
	o := ingest.Options{
		Domain: d.domain, Label: d.label, Target: splitList(d.target),
		LabelFiles: d.labels, LabelsIgnore: splitList(d.labelsIgnore), AllowUnmatchedIgnore: d.shard,
		MaxLineBytes: d.maxLineBytes, TransformChannels: splitList(d.transformChans),
		Compensate: d.compensate, Linearize: d.linearize, AllowTruncated: d.allowTruncated, AllDataSets: d.allDataSets,
		ByPosition: d.byPosition, Preprocessed: d.preprocessed,
	}
	if d.chans != "" && d.features != "" {
		return o, usageErr("--channels and --features name the same thing: give one")
	}
	o.Channels = splitList(d.chans + d.features)
	if d.transform != "none" || d.set["transform"] {
		o.Transform = d.transform
	}
	switch d.header {
	case "auto", "":
		o.Header = csvio.DetectHeader
	case "yes", "true":
		o.Header = csvio.WithHeader
	case "no", "false":
		o.Header = csvio.NoHeader
	default:
		return o, usageErr("--header %q: want auto, yes or no", d.header)
	}
	return o, nil
}

// input is data opened from the flags: the source of preprocessed rows,
// the files it reads, and the preprocessing that a fit records.
type input struct {
	*ingest.Input
	src    dataset.Source
	files  []string // data files, expanded, in reading order
	labels []string // label files, expanded
	pipe   *preprocess.Pipeline
}

// source opens the data named by the flags and extra arguments.
func (d *dataFlags) source(extra []string) (dataset.Source, error) {
	in, err := d.open(extra)
	if err != nil {
		return nil, err
	}
	return in.src, nil
}

// open opens the data named by the flags and extra arguments: for a fit,
// or for the model given to fromModel.
func (d *dataFlags) open(extra []string) (*input, error) {
	pats := slices.Concat(d.data, extra)
	if len(pats) == 0 {
		return nil, usageErr("no data: give --data FILES")
	}
	o, err := d.options()
	if err != nil {
		return nil, err
	}
	var in *ingest.Input
	if d.forModel {
		in, err = ingest.OpenFor(d.model, pats, o)
	} else {
		in, err = ingest.Open(pats, o)
	}
	if err != nil {
		return nil, dataError(err, d)
	}
	return &input{Input: in, src: in.Source, files: in.Files, labels: in.LabelFiles, pipe: in.Pipeline}, nil
}

// fromModel makes open read the data as the model expects it: the
// model's channels and preprocessing (mode "model"), or its channels
// already preprocessed (mode "none"). A preprocessing flag that
// contradicts the model is an error (ingest.OpenFor).
func (d *dataFlags) fromModel(m *dica.Model, mode string, stderr io.Writer) error {
	switch mode {
	case "model", "none":
	default:
		return usageErr("--preprocess %q: want model or none", mode)
	}
	d.forModel, d.model, d.preprocessed = true, m.Preprocessing(), mode == "none"
	return nil
}

// flagNames maps the fields of ingest.Options (and the readers' options)
// to the command's flags.
var flagNames = map[string]string{
	"Files": "--data", "Domain": "--domain", "Label": "--label", "Target": "--target",
	"LabelFiles": "--labels", "LabelsIgnore": "--labels-ignore", "Header": "--header",
	"MaxLineBytes": "--max-line-bytes", "Transform": "--transform", "TransformChannels": "--transform-channels",
	"Compensate": "--compensate", "Linearize": "--linearize", "AllowTruncated": "--allow-truncated",
	"AllDataSets": "--all-datasets", "ByPosition": "--by-position", "Preprocessed": "--preprocess none",
	"Features": "--channels",
}

// dataError turns the errors of opening data that a user can act on into
// usage errors in the command's words: an option of the library becomes
// the flag that set it.
func dataError(err error, d *dataFlags) error {
	var oe *dataset.OptionError
	if errors.As(err, &oe) {
		name := flagNames[oe.Option]
		if oe.Option == "Channels" {
			name = "--channels"
			if d != nil && d.features != "" {
				name = "--features"
			}
			if d != nil && d.forModel && d.chans+d.features == "" {
				name = "the model's channels"
			}
		}
		if name == "" {
			name = oe.Option
		}
		return usageErr("%s: %v", name, oe.Err)
	}
	var ce *ingest.ChannelError
	if errors.As(err, &ce) {
		return usageErr("%s has no channel %s: the model reads %s; the file has %s. Check that the file is of the model's panel, or take the channels by position with --by-position",
			ce.File, strings.Join(quoteNames(ce.Missing), ", "), strings.Join(quoteNames(ce.Model), ", "), strings.Join(quoteNames(ce.Data[:min(len(ce.Data), 40)]), ", "))
	}
	return err
}

// quoteNames escapes names from users' files for a message.
func quoteNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = escape.String(n, 40)
	}
	return out
}

// expandDirs expands the data arguments as open does (globs, folders of
// FCS files, AnnData stores), for the checks of outputs against inputs.
func expandDirs(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	files, _, err := ingest.Expand(patterns)
	if err != nil {
		return nil, dataError(err, nil)
	}
	return files, nil
}

// progress prints a progress line on stderr when it is a terminal: the
// pass, the cells done, the rate and, when the number of cells is known
// (from the source, or from the previous pass over the same data), the time
// left.
type progress struct {
	on    bool
	w     io.Writer
	now   func() time.Time
	total int64 // cells of a pass, when known
	pass  string
	start time.Time // of the pass
	rows0 int64     // cells done at start
	last  time.Time // of the last line printed
	rows  int64     // cells done, at the last update
	shown bool
}

func newProgress(quiet bool) *progress {
	p := &progress{w: os.Stderr, now: time.Now}
	if quiet {
		return p
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.on = true
	}
	return p
}

// progressEvery is the least time between two progress lines, and the
// least time a pass runs before its rate is shown.
const progressEvery = 250 * time.Millisecond

// update is a dica.Config.Progress callback.
func (p *progress) update(pass string, rows int64) {
	if !p.on {
		return
	}
	now := p.now()
	if pass != p.pass {
		if p.pass != "" && p.total == 0 && p.rows > 0 {
			// A later pass over the same data has as many cells.
			p.total = p.rows
		}
		p.pass, p.start, p.rows0, p.last = pass, now, rows, now
	}
	p.rows = rows
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	if line := p.line(now); line != "" {
		fmt.Fprint(p.w, "\r\033[K"+line)
		p.shown = true
	}
}

// line returns the progress line at time now.
func (p *progress) line(now time.Time) string {
	el := now.Sub(p.start)
	line := fmt.Sprintf("%-10s %12d cells", p.pass, p.rows)
	if el < progressEvery || p.rows <= p.rows0 {
		return line
	}
	rate := float64(p.rows-p.rows0) / el.Seconds()
	line += fmt.Sprintf("  %9.3g cells/s", rate)
	if p.total > p.rows {
		eta := time.Duration(float64(p.total-p.rows) / rate * float64(time.Second))
		line += fmt.Sprintf("  %3.0f%%  ETA %v", 100*float64(p.rows)/float64(p.total), eta.Round(time.Second))
	}
	return line
}

// setTotal sets the number of cells of a pass, for the ETA, when the
// source knows it without reading (dataset.Sizer: FCS files, data in memory).
func (p *progress) setTotal(src dataset.Source) {
	if s, ok := src.(dataset.Sizer); ok {
		p.total = int64(s.Len())
	}
}

func (p *progress) done() {
	if p.on && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.pass, p.shown = "", false
}

// warnInput prints on stderr what the reading of the input found that the
// user should know: the readers' warnings (FCS files that disagree with
// themselves, truncated files read in part, duplicate channel names) and
// domains that --labels-ignore emptied.
func warnInput(stderr io.Writer, in *input) {
	for _, msg := range in.Warnings() {
		fmt.Fprintf(stderr, "dica: warning: %s\n", msg)
	}
	if names, known := in.EmptiedDomains(); known && len(names) > 0 {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = escape.String(n, 0)
		}
		fmt.Fprintf(stderr, "dica: warning: --labels-ignore removed every cell of %d domain(s), left out: %s\n", len(names), strings.Join(q, ", "))
	}
}

// commandError turns an error of the library that names one of its
// options into a usage error naming the flag (dataError), wherever it
// arose: opening the data, or a pass over it.
func commandError(err error) error {
	if err == nil || errors.Is(err, errUsage) {
		return err
	}
	var oe *dataset.OptionError
	var ce *ingest.ChannelError
	if errors.As(err, &oe) || errors.As(err, &ce) {
		return dataError(err, nil)
	}
	if errors.Is(err, fcs.ErrTooManyDataSets) {
		// The library names its option; the command has no flag for it.
		msg := strings.Replace(err.Error(), " (SourceOptions.MaxDataSets raises it)", "", 1)
		return fmt.Errorf("%s: read the first data set alone (without --all-datasets), or split the file", msg)
	}
	return err
}
