package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
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
  file, named after the file. CSV files: one domain per file, or --domain COL.
`

func (d *dataFlags) register(fs *flag.FlagSet, supervised bool) {
	fs.Var(&d.data, "data", "data `files` or globs (CSV or FCS; repeatable)")
	fs.StringVar(&d.domain, "domain", "", "CSV `column` holding the domain (default: one domain per file)")
	fs.StringVar(&d.features, "features", "", "CSV input `columns`, comma-separated, by name or 1-based index (default: all others)")
	fs.StringVar(&d.chans, "channels", "", "FCS `markers` by $PnN or $PnS name, comma-separated (default: all)")
	fs.StringVar(&d.transform, "transform", "none", "per-channel `transform`: asinh:COFACTOR (5 for mass, 150 for flow cytometry), log1p, none")
	fs.StringVar(&d.transformChans, "transform-channels", "", "FCS `channels` the --transform applies to, comma-separated (default: all chosen; e.g. leave FSC-A, SSC-A linear)")
	fs.BoolVar(&d.compensate, "compensate", false, "apply the FCS file's $SPILLOVER compensation")
	fs.StringVar(&d.header, "header", "auto", "CSV header row: auto, yes or no")
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

// source opens the data named by the flags and extra arguments.
func (d *dataFlags) source(extra []string) (dataset.Source, error) {
	tr, err := preprocess.ParseFunc(d.transform)
	if err != nil {
		return nil, usageErr("--transform: %v", err)
	}
	if len(d.data)+len(extra) == 0 {
		return nil, usageErr("no data: give --data FILES")
	}
	pats, err := expandDirs(append(append([]string(nil), d.data...), extra...))
	if err != nil {
		return nil, err
	}
	files, err := expand(pats, "--data")
	if err != nil {
		return nil, err
	}
	nfcs := 0
	for _, f := range files {
		if fcs.Detect(f) {
			nfcs++
		}
	}
	if nfcs > 0 && nfcs < len(files) {
		return nil, usageErr("--data mixes FCS and CSV files")
	}
	if nfcs > 0 {
		return d.fcsSource(files, tr)
	}
	if d.chans != "" || d.compensate || d.allowTruncated || d.linearize || d.allDataSets || d.transformChans != "" {
		return nil, usageErr("--channels, --transform-channels, --compensate, --allow-truncated, --linearize and --all-datasets apply to FCS files; use --features for CSV")
	}
	features := splitList(d.features)
	if features == nil {
		features = d.defaults
	}
	o := csvio.Options{
		Features:     features,
		Domain:       d.domain,
		Label:        d.label,
		Target:       splitList(d.target),
		LabelsIgnore: splitList(d.labelsIgnore),
	}
	switch d.header {
	case "auto", "":
		o.Header = csvio.DetectHeader
	case "yes", "true":
		o.Header = csvio.WithHeader
	case "no", "false":
		o.Header = csvio.NoHeader
	default:
		return nil, usageErr("--header %q: want auto, yes or no", d.header)
	}
	if _, none := tr.(preprocess.Identity); !none {
		ch := preprocess.Channels{F: tr}
		o.Transform = func(row []float64) { ch.Apply(row, len(row)) }
	}
	if len(d.labels) > 0 {
		if o.LabelFiles, err = expand(d.labels, "--labels"); err != nil {
			return nil, err
		}
		if len(o.LabelFiles) != len(files) {
			return nil, usageErr("%d data files but %d label files (quote globs so that dica expands them, one list per flag: --data 'sample*.csv' --labels 'labels*.csv')", len(files), len(o.LabelFiles))
		}
	}
	return csvio.NewSource(files, o)
}

// progress prints a progress line on stderr when it is a terminal.
type progress struct {
	on    bool
	total int64
	start time.Time
	last  time.Time
	pass  string
}

func newProgress(quiet bool) *progress {
	p := &progress{start: time.Now()}
	if quiet {
		return p
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.on = true
	}
	return p
}

// update is a dica.Config.Progress callback.
func (p *progress) update(pass string, rows int64) {
	if !p.on {
		return
	}
	now := time.Now()
	if pass != p.pass {
		p.pass, p.start = pass, now
	}
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := float64(rows) / max(el, 1e-9)
	line := fmt.Sprintf("\r%-10s %12d cells  %10.0f cells/s", pass, rows, rate)
	if p.total > 0 && rows > 0 {
		eta := time.Duration(float64(p.total-rows) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf("  ETA %v", eta)
	}
	fmt.Fprint(os.Stderr, line)
}

// setTotal sets the number of cells of a pass, for the ETA, when the
// source knows it without reading (dataset.Sizer: FCS files, data in memory).
func (p *progress) setTotal(src dataset.Source) {
	if s, ok := src.(dataset.Sizer); ok {
		p.total = int64(s.Len())
	}
}

func (p *progress) done() {
	if p.on && p.pass != "" {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}

// fcsSource reads FCS files, one domain per file.
func (d *dataFlags) fcsSource(files []string, tr preprocess.Func) (dataset.Source, error) {
	if d.domain != "" || d.label != "" || d.target != "" || d.features != "" {
		return nil, usageErr("with FCS files each file is one domain: --domain, --label, --target and --features apply to CSV (use --channels)")
	}
	if len(d.labels) > 0 {
		return nil, usageErr("--labels with FCS files is not supported: gate populations into separate files or use CSV")
	}
	o := fcs.SourceOptions{Channels: splitList(d.chans), Compensate: d.compensate, AllowTruncated: d.allowTruncated,
		Scale: d.linearize, AllDataSets: d.allDataSets}
	if o.Channels == nil {
		o.Channels = d.defaults
	}
	if _, none := tr.(preprocess.Identity); !none {
		o.Transform = tr
		o.TransformChannels = splitList(d.transformChans)
	} else if d.transformChans != "" {
		return nil, usageErr("--transform-channels without --transform")
	}
	return fcs.NewSource(files, o)
}
