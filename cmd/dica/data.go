package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	compensate                             bool
}

const dataHelp = `
Data:
  --data takes files and globs ('sample*.csv', quoted so dica expands them in
  natural order: sample2 before sample10); files may also follow the flags.
  FCS files (.fcs, .lmd, or any file starting with "FCS"): one domain per
  file, named after the file. CSV files: one domain per file, or --domain COL.
`

func (d *dataFlags) register(fs *flag.FlagSet, supervised bool) {
	fs.Var(&d.data, "data", "data `files` or globs (CSV or FCS; repeatable)")
	fs.StringVar(&d.domain, "domain", "", "CSV `column` holding the domain (default: one domain per file)")
	fs.StringVar(&d.features, "features", "", "CSV input `columns`, comma-separated, by name or 1-based index (default: all others)")
	fs.StringVar(&d.chans, "channels", "", "FCS `markers` by $PnN or $PnS name, comma-separated (default: all)")
	fs.StringVar(&d.transform, "transform", "none", "per-channel `transform`: asinh:COFACTOR (5 for mass, 150 for flow cytometry), log1p, none")
	fs.BoolVar(&d.compensate, "compensate", false, "apply the FCS file's $SPILLOVER compensation")
	fs.StringVar(&d.header, "header", "auto", "CSV header row: auto, yes or no")
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

// isFCS reports whether the file is an FCS file, by extension or by its
// first bytes.
func isFCS(path string) bool {
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

// source opens the data named by the flags and extra arguments.
func (d *dataFlags) source(extra []string) (dataset.Source, error) {
	tr, err := preprocess.ParseFunc(d.transform)
	if err != nil {
		return nil, usageErr("--transform: %v", err)
	}
	if len(d.data)+len(extra) == 0 {
		return nil, usageErr("no data: give --data FILES")
	}
	files, err := expand(append(append([]string(nil), d.data...), extra...), "--data")
	if err != nil {
		return nil, err
	}
	nfcs := 0
	for _, f := range files {
		if isFCS(f) {
			nfcs++
		}
	}
	if nfcs > 0 && nfcs < len(files) {
		return nil, usageErr("--data mixes FCS and CSV files")
	}
	if nfcs > 0 {
		return d.fcsSource(files, tr)
	}
	if d.chans != "" || d.compensate {
		return nil, usageErr("--channels and --compensate apply to FCS files; use --features for CSV")
	}
	o := csvio.Options{
		Features:     splitList(d.features),
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
			return nil, usageErr("%d data files but %d label files", len(files), len(o.LabelFiles))
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
	o := fcs.SourceOptions{Channels: splitList(d.chans), Compensate: d.compensate}
	if _, none := tr.(preprocess.Identity); !none {
		o.Transform = tr
	}
	return fcs.NewSource(files, o)
}
