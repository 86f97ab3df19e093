package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/internal/escape"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// dataFlags are the flags that say where cells come from.
type dataFlags struct {
	data, labels                           listFlag
	domain, label, target, features, chans string
	labelsIgnore, transform, header        string
	transformChans                         string
	compensate, allowTruncated, linearize  bool
	allDataSets                            bool
	maxLineBytes                           int
	// shard: the data is one shard of a larger set (dica accumulate), so a
	// --labels-ignore value may be absent from it.
	shard bool
	// set holds the names of the flags given on the command line.
	set map[string]bool
	// spillover, when not nil, compensates every FCS file with this
	// matrix (a model's recorded one).
	spillover *fcs.Spillover
	// defaults are the input columns used when neither --features (CSV)
	// nor --channels (FCS) is given: a model's columns in dica transform.
	defaults []string
}

const dataHelp = `
Data:
  --data takes files, globs ('sample*.csv', quoted so dica expands them in
  natural order: sample2 before sample10) and folders (their FCS files);
  files may also follow the flags.
  FCS files (.fcs, .lmd, or any file starting with "FCS"): one domain per
  file, named after the file. CSV and Parquet files: one domain per file, or
  --domain COLUMN; labels from --label COLUMN (or --labels files for CSV).
  An AnnData store (a .zarr folder, as anndata's write_zarr writes it):
  X dense, --domain obs:COLUMN, --label obs:COLUMN (h5ad: convert it with
  anndata.read_h5ad(...).write_zarr(...)).
`

func (d *dataFlags) register(fs *flag.FlagSet, supervised bool) {
	fs.Var(&d.data, "data", "data `files` or globs (CSV or FCS; repeatable)")
	fs.StringVar(&d.domain, "domain", "", "CSV `column` holding the domain (default: one domain per file)")
	fs.StringVar(&d.features, "features", "", "CSV input `columns`, comma-separated, by name or 1-based index (default: all others)")
	fs.StringVar(&d.chans, "channels", "", "FCS `markers` by $PnN or $PnS name, comma-separated (default: all)")
	fs.StringVar(&d.transform, "transform", "none", "per-channel `transform`: asinh:COFACTOR (5 for mass, 150 for flow cytometry), log1p, none")
	fs.StringVar(&d.transformChans, "transform-channels", "", "`channels` the --transform applies to, comma-separated (default: all chosen; e.g. leave FSC-A, SSC-A linear)")
	fs.BoolVar(&d.compensate, "compensate", false, "apply the FCS file's $SPILLOVER compensation")
	fs.StringVar(&d.header, "header", "auto", "CSV header row: auto, yes or no")
	fs.IntVar(&d.maxLineBytes, "max-line-bytes", 0, "longest line of a CSV or label file, in `bytes` (0: 1 MiB); a longer line is an error")
	fs.BoolVar(&d.allowTruncated, "allow-truncated", false, "read the complete events of truncated FCS files instead of failing")
	fs.BoolVar(&d.linearize, "linearize", false, "FCS: convert log-amplified channels ($PnE) to linear values and divide by gains ($PnG), as flowCore does")
	fs.BoolVar(&d.allDataSets, "all-datasets", false, "FCS: read every data set of multi-data-set files, each as its own domain (file.fcs#k)")
	if supervised {
		fs.StringVar(&d.label, "label", "", "CSV `column` holding class labels (e.g. the gated population)")
		fs.StringVar(&d.target, "target", "", "CSV `columns` holding real targets (regression), comma-separated")
		fs.Var(&d.labels, "labels", "row-aligned label `files`, one per data file (globs; repeatable)")
		fs.StringVar(&d.labelsIgnore, "labels-ignore", "", "label `values` whose cells are left out, comma-separated (e.g. 0 for ungated)")
	}
}

// markSet records which flags of fs the command line gave.
func (d *dataFlags) markSet(fs *flag.FlagSet) {
	d.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { d.set[f.Name] = true })
}

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

// files expands the data files and globs.
func expand(patterns []string, what string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	files, err := csvio.Glob(patterns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return files, nil
}

// expandDirs replaces each directory among the data patterns by the FCS
// files in it (a folder of samples, one file each, is how cytometers and
// FlowJo export them), in natural order. A directory without FCS files is
// an error: its CSV files may be data or label files, so they must be named
// by a glob.
func expandDirs(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		var fcsFiles []string
		for _, e := range ents {
			f := filepath.Join(p, e.Name())
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && fcs.Detect(f) {
				fcsFiles = append(fcsFiles, f)
			}
		}
		if len(fcsFiles) == 0 {
			return nil, usageErr("--data %s is a folder without FCS files; name CSV files with a glob such as '%s'", p, filepath.Join(p, "*.csv"))
		}
		slices.SortFunc(fcsFiles, csvio.NaturalCompare)
		out = append(out, fcsFiles...)
	}
	return out, nil
}

// input is data opened from the flags: the source of preprocessed rows,
// the files it reads, and the preprocessing that a fit records.
type input struct {
	src    dataset.Source
	files  []string // data files, expanded, in reading order
	labels []string // label files, expanded
	kind   string   // "csv", "fcs", "zarr" or "parquet"
	fcs    bool
	pipe   *preprocess.Pipeline
}

// isZarrStore reports whether path is a Zarr store (a folder with a
// .zgroup), as dica transform writes and anndata.write_zarr does.
func isZarrStore(path string) bool {
	fi, err := os.Stat(filepath.Join(path, ".zgroup"))
	return err == nil && fi.Mode().IsRegular()
}

// isParquet reports whether the file at path is Parquet: its name ends in
// .parquet or .parq, or it starts with the magic bytes PAR1.
func isParquet(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".parq":
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == "PAR1"
}

// source opens the data named by the flags and extra arguments.
func (d *dataFlags) source(extra []string) (dataset.Source, error) {
	in, err := d.open(extra)
	if err != nil {
		return nil, err
	}
	return in.src, nil
}

// dataFiles expands the data files and folders of the flags and extra
// arguments, and the label files.
func (d *dataFlags) dataFiles(extra []string) (files, labels []string, err error) {
	if len(d.data)+len(extra) == 0 {
		return nil, nil, usageErr("no data: give --data FILES")
	}
	pats := append(append([]string(nil), d.data...), extra...)
	// A Zarr store is a folder, read as one input.
	var stores []string
	for _, p := range pats {
		if isZarrStore(p) {
			stores = append(stores, p)
		}
	}
	if len(stores) > 0 {
		if len(stores) != len(pats) {
			return nil, nil, usageErr("--data mixes an AnnData store (%s) with other files", stores[0])
		}
		if len(stores) > 1 {
			return nil, nil, usageErr("--data: one AnnData store at a time (%s and %s)", stores[0], stores[1])
		}
		return stores, nil, nil
	}
	pats, err = expandDirs(pats)
	if err != nil {
		return nil, nil, err
	}
	if files, err = expand(pats, "--data"); err != nil {
		return nil, nil, err
	}
	if len(d.labels) > 0 {
		if labels, err = expand(d.labels, "--labels"); err != nil {
			return nil, nil, err
		}
	}
	return files, labels, nil
}

// open opens the data named by the flags and extra arguments.
func (d *dataFlags) open(extra []string) (*input, error) {
	tr, err := preprocess.ParseFunc(d.transform)
	if err != nil {
		return nil, usageErr("--transform: %v", err)
	}
	files, labels, err := d.dataFiles(extra)
	if err != nil {
		return nil, err
	}
	in := &input{files: files, labels: labels}
	kinds := map[string]int{}
	for _, f := range files {
		switch {
		case isZarrStore(f):
			in.kind = "zarr"
		case fcs.Detect(f):
			in.kind = "fcs"
		case isParquet(f):
			in.kind = "parquet"
		default:
			in.kind = "csv"
		}
		kinds[in.kind]++
	}
	if len(kinds) > 1 {
		return nil, usageErr("--data mixes kinds of files (%d FCS, %d Parquet, %d CSV): give one kind", kinds["fcs"], kinds["parquet"], kinds["csv"])
	}
	switch in.kind {
	case "fcs":
		in.fcs = true
		if err := d.fcsSource(in, tr); err != nil {
			return nil, err
		}
		return in, nil
	case "zarr", "parquet":
		if err := d.tableSource(in, tr); err != nil {
			return nil, err
		}
		return in, nil
	}
	if err := d.csvSource(in, tr); err != nil {
		return nil, err
	}
	return in, nil
}

// csvSource opens CSV files (with their label files) into in.
func (d *dataFlags) csvSource(in *input, tr preprocess.Func) error {
	if d.chans != "" || d.compensate || d.allowTruncated || d.linearize || d.allDataSets || d.spillover != nil {
		return usageErr("--channels, --compensate, --allow-truncated, --linearize and --all-datasets apply to FCS files; use --features for CSV")
	}
	refs := splitList(d.features)
	features := refs
	if features == nil {
		features = d.defaults
	}
	o := csvio.Options{
		Features:     features,
		Domain:       d.domain,
		Label:        d.label,
		Target:       splitList(d.target),
		LabelsIgnore: splitList(d.labelsIgnore),
		LabelFiles:   in.labels,
		MaxLineBytes: d.maxLineBytes,
		// A shard may lack a label that other shards have.
		AllowUnmatchedIgnore: d.shard,
	}
	switch d.header {
	case "auto", "":
		o.Header = csvio.DetectHeader
	case "yes", "true":
		o.Header = csvio.WithHeader
	case "no", "false":
		o.Header = csvio.NoHeader
	default:
		return usageErr("--header %q: want auto, yes or no", d.header)
	}
	// The transform's columns are known once the source has read the
	// header; it is applied only in passes, which come after.
	ch := &preprocess.Channels{F: tr}
	if _, none := tr.(preprocess.Identity); !none {
		o.Transform = func(row []float64) { ch.Apply(row, len(row)) }
	} else if d.transformChans != "" {
		return usageErr("--transform-channels without --transform")
	}
	if len(in.labels) > 0 && len(in.labels) != len(in.files) {
		return usageErr("%d data files but %d label files (quote globs so that dica expands them, one list per flag: --data 'sample*.csv' --labels 'labels*.csv')", len(in.files), len(in.labels))
	}
	src, err := csvio.NewSource(in.files, o)
	if err != nil {
		return err
	}
	in.src = src
	fileCols := src.FeatureColumns()
	return d.recordPipeline(in, "csv", tr, refs, ch, func(j int) int { return fileCols[j] + 1 })
}

// recordPipeline records in in.pipe the preprocessing of a CSV, Parquet or
// AnnData input: the channels (their references, and their 1-based column
// when index is not nil), the transform and the channels it applies to,
// which it also sets in ch.
func (d *dataFlags) recordPipeline(in *input, format string, tr preprocess.Func, refs []string, ch *preprocess.Channels, index func(j int) int) error {
	pipe := &preprocess.Pipeline{Format: format, Transform: tr.String()}
	for j, f := range in.src.Schema().Features {
		c := preprocess.Channel{Name: f}
		if index != nil {
			c.Index = index(j)
		}
		if j < len(refs) {
			c.Ref = refs[j]
		}
		pipe.Channels = append(pipe.Channels, c)
	}
	cols, err := transformChannels(pipe, splitList(d.transformChans))
	if err != nil {
		return err
	}
	if cols != nil {
		ch.Cols = cols
	}
	in.pipe = pipe
	return nil
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

// tableSource opens an AnnData store or Parquet files into in.
func (d *dataFlags) tableSource(in *input, tr preprocess.Func) error {
	if d.chans != "" || d.compensate || d.allowTruncated || d.linearize || d.allDataSets || d.spillover != nil {
		return usageErr("--channels, --compensate, --allow-truncated, --linearize and --all-datasets apply to FCS files; use --features")
	}
	if len(in.labels) > 0 {
		return usageErr("--labels files go with CSV data; with %s data, name the label column (--label)", in.kind)
	}
	refs := splitList(d.features)
	features := refs
	if features == nil {
		features = d.defaults
	}
	ch := &preprocess.Channels{F: tr}
	var transform func([]float64)
	if _, none := tr.(preprocess.Identity); !none {
		transform = func(row []float64) { ch.Apply(row, len(row)) }
	} else if d.transformChans != "" {
		return usageErr("--transform-channels without --transform")
	}
	var src dataset.Source
	var err error
	if in.kind == "zarr" {
		src, err = anndata.NewSource(in.files[0], anndata.Options{Features: features, Domain: d.domain, Label: d.label,
			Target: splitList(d.target), LabelsIgnore: splitList(d.labelsIgnore), Transform: transform})
	} else {
		src, err = parquetio.NewSource(in.files, parquetio.Options{Features: features, Domain: d.domain, Label: d.label,
			Target: splitList(d.target), LabelsIgnore: splitList(d.labelsIgnore), Transform: transform})
	}
	if err != nil {
		return err
	}
	in.src = src
	return d.recordPipeline(in, in.kind, tr, refs, ch, nil)
}

// fcsSource opens FCS files, one domain per file, into in.
func (d *dataFlags) fcsSource(in *input, tr preprocess.Func) error {
	if d.domain != "" || d.label != "" || d.target != "" || d.features != "" {
		return usageErr("with FCS files each file is one domain: --domain, --label, --target and --features apply to CSV (use --channels)")
	}
	if len(d.labels) > 0 {
		return usageErr("--labels with FCS files is not supported: gate populations into separate files or use CSV")
	}
	refs := splitList(d.chans)
	o := fcs.SourceOptions{Channels: refs, Compensate: d.compensate, AllowTruncated: d.allowTruncated,
		Scale: d.linearize, AllDataSets: d.allDataSets, Spillover: d.spillover}
	if o.Channels == nil {
		o.Channels = d.defaults
	}
	if _, none := tr.(preprocess.Identity); !none {
		o.Transform = tr
		o.TransformChannels = splitList(d.transformChans)
	} else if d.transformChans != "" {
		return usageErr("--transform-channels without --transform")
	}
	src, err := fcs.NewSource(in.files, o)
	if err != nil {
		return err
	}
	in.src = src
	pipe := &preprocess.Pipeline{Format: "fcs", Linearize: d.linearize, Transform: tr.String()}
	chans := src.Channels()
	for j, f := range src.Schema().Features {
		c := preprocess.Channel{Name: f}
		if j < len(refs) {
			c.Ref = refs[j]
		}
		if j < len(chans) {
			c.Index, c.PnN, c.PnS = chans[j].Param, chans[j].Name, chans[j].Label
		}
		pipe.Channels = append(pipe.Channels, c)
	}
	if _, err := transformChannels(pipe, o.TransformChannels); err != nil {
		return err
	}
	if comps := src.Compensations(); len(comps) > 0 {
		sp := comps[0]
		r, c := sp.Matrix.Dims()
		m := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			m = append(m, sp.Matrix.RawRowView(i)...)
		}
		pipe.Compensation = &preprocess.Spill{PerFile: o.Spillover == nil, Keyword: sp.Keyword, Source: filepath.Base(in.files[0]),
			Channels: slices.Clone(sp.Channels), Matrix: m}
	}
	in.pipe = pipe
	return nil
}

// warnInput prints on stderr what the reading of the input found that the
// user should know: the readers' warnings (FCS files that disagree with
// themselves, truncated files read in part, duplicate channel names) and
// domains that --labels-ignore emptied.
func warnInput(stderr io.Writer, in *input) {
	if w, ok := in.src.(interface{ Warnings() []string }); ok {
		for _, msg := range w.Warnings() {
			fmt.Fprintf(stderr, "dica: warning: %s\n", msg)
		}
	}
	if e, ok := in.src.(interface{ EmptiedDomains() ([]string, bool) }); ok {
		if names, known := e.EmptiedDomains(); known && len(names) > 0 {
			q := make([]string, len(names))
			for i, n := range names {
				q[i] = escape.String(n, 0)
			}
			fmt.Fprintf(stderr, "dica: warning: --labels-ignore removed every cell of %d domain(s), left out: %s\n", len(names), strings.Join(q, ", "))
		}
	}
}

// transformChannels records in p the channels that refs (the entries of
// --transform-channels) name, and returns their indices among p's
// channels; nil refs (every channel) give nil.
func transformChannels(p *preprocess.Pipeline, refs []string) ([]int, error) {
	if refs == nil {
		return nil, nil
	}
	p.TransformChannels = []string{}
	cols := []int{}
	for _, ref := range refs {
		j := channelIndex(p, ref)
		if j < 0 {
			return nil, usageErr("--transform-channels %s is not among the input channels %s", ref, strings.Join(p.Names(), ", "))
		}
		cols = append(cols, j)
		p.TransformChannels = append(p.TransformChannels, p.Channels[j].Name)
	}
	return cols, nil
}

// channelIndex returns the index of the channel of p that ref names (its
// reference, name, $PnN or $PnS; exactly, then ignoring case), or -1.
func channelIndex(p *preprocess.Pipeline, ref string) int {
	for _, fold := range []bool{false, true} {
		for j, c := range p.Channels {
			for _, n := range []string{c.Ref, c.Name, c.PnN, c.PnS} {
				if n != "" && (n == ref || fold && strings.EqualFold(strings.TrimSpace(n), strings.TrimSpace(ref))) {
					return j
				}
			}
		}
	}
	return -1
}
