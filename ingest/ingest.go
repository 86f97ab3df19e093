// Package ingest opens users' files as data for dica: CSV files (with or
// without a header, with row-aligned label files), FCS files, Parquet files
// and AnnData stores (Zarr v2), dica's own outputs among them. It returns
// the rows as a dataset.Source together with the preprocessing that turned
// the values stored in the files into those rows (a preprocess.Pipeline):
// one value that the reader applies and a fitted model records, so that
// new files are read exactly as the training files were.
//
// Open reads files for a fit, with the preprocessing its Options ask for.
// OpenFor reads files for a fitted model: the model's preprocessing
// (preprocess.Pipeline, from dica.Model.Preprocessing) decides the
// channels, matched by name (a header or an FCS $PnN/$PnS) and checked
// against what the model recorded, and the steps, applied unless the files
// declare they hold them already (dica's AnnData output holds the model's
// inputs). Input.Raw reads the same rows with every input channel as
// stored, for outputs that keep them.
//
// Every source opened here says where each row came from (dataset.Origins:
// Block.File and Block.Event), so outputs can be joined back to the files.
package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
	"github.com/dicalab/dica/preprocess"
)

// Options say how to read the files. The zero value reads every numeric
// column (every FCS parameter) of files of one domain each, without labels
// or preprocessing.
type Options struct {
	// Channels selects the input columns, in this order: CSV columns by
	// header name or 1-based position ("3" or "V3"), FCS parameters by
	// $PnN or $PnS, Parquet columns and AnnData variables by name. Nil
	// means every one not used otherwise (the domain, label and target
	// columns, and in dica's own outputs every column that is not a
	// channel).
	Channels []string

	// Domain names the column (CSV, Parquet; obs:COLUMN for AnnData; a
	// parameter holding codes for FCS) holding each cell's domain. Empty
	// means one domain per file, named after the file (dataset.DomainName),
	// or, for dica's own outputs, the domain they record.
	Domain string
	// Label names the column holding class labels, as Domain does; a
	// label file per CSV file (LabelFiles) instead. The files read
	// together share their columns, so a label column is in every file or
	// in none: to label some CSV files only, give their label files
	// (LabelFiles pairs).
	Label string
	// Target names columns holding real targets (regression).
	Target []string
	// LabelFiles are row-aligned label files for CSV data (one label per
	// line, line i labelling data row i), in one of two forms:
	//
	//   - files or globs, expanded in natural order to one label file per
	//     data file, in the data files' order: every file is labelled
	//     ("labels*.csv" beside "sample*.csv");
	//   - pairs DATA=LABELS ("sample2.csv=labels2.csv"), each giving the
	//     label file of one data file, named by its path (as given in
	//     the data paths, or as their globs expand) or by its base name:
	//     only those files are labelled, and the rows of the others have
	//     no label (dataset.NoLabel), for a fit that finds its components
	//     on every cell and its label term on the labelled ones.
	//
	// An entry holding '=' is a pair unless a file of that name exists
	// (SplitLabelPair); the two forms do not mix. Input.LabelFiles lists
	// the label file of every data file ("" for none).
	LabelFiles []string
	// LabelsIgnore lists label values whose cells are left out (such as "0"
	// for ungated cells); cells without a label are kept. A value no cell
	// has is an error unless AllowUnmatchedIgnore is set (for a shard of a
	// larger data set).
	LabelsIgnore         []string
	AllowUnmatchedIgnore bool

	// Header says whether CSV files start with a row of column names
	// (csvio.DetectHeader, the zero value, detects it).
	Header csvio.HeaderMode
	// MaxLineBytes bounds a line of a CSV or label file (0:
	// csvio.DefaultMaxLineBytes).
	MaxLineBytes int

	// Transform is the elementwise transform of the input channels, as
	// preprocess.ParseFunc reads it ("asinh:150", "log1p"; "" or "none"
	// for none), on TransformChannels (nil: every input channel).
	Transform         string
	TransformChannels []string
	// Compensate applies each FCS file's own spillover matrix.
	Compensate bool
	// Linearize converts log-amplified FCS values to linear scale ($PnE,
	// $PnG), as flowCore does.
	Linearize bool
	// AllowTruncated reads the complete events of truncated FCS files.
	AllowTruncated bool
	// AllDataSets reads every data set of FCS files holding several, each
	// as its own domain.
	AllDataSets bool

	// ByPosition (OpenFor) takes the model's channels by their position
	// in the training files when the files' column names differ from the
	// model's; Input.Warnings then says so.
	ByPosition bool
	// Preprocessed (OpenFor) says the files hold the model's inputs
	// already preprocessed: the model's preprocessing is not applied.
	Preprocessed bool
}

// Input is data opened from files: the rows, the preprocessing that made
// them, and what the reading found.
type Input struct {
	// Source delivers the rows: the input channels after Pipeline (less
	// the steps the files declare they hold), the domain, and the label or
	// targets. It implements dataset.Origins.
	Source dataset.Source
	// Pipeline is the preprocessing from the values stored in the files
	// to the rows, as a model records it (for OpenFor, the model's).
	Pipeline *preprocess.Pipeline
	// Kind is the kind of the files; Files and LabelFiles are the files
	// read, in order. LabelFiles is empty without label files, else it
	// holds the label file of each data file, "" for a data file without
	// one (Options.LabelFiles pairs).
	Kind       Kind
	Files      []string
	LabelFiles []string
	// Layout describes the files when they are one of dica's outputs, else
	// it is nil.
	Layout *Layout

	opts     Options
	warnings []string
	// applied is the preprocessing the files declare they hold (the
	// steps of Pipeline the reader leaves out).
	applied *preprocess.Pipeline
}

// Warnings returns what the reading found that a user should know: the
// readers' warnings (FCS files that disagree with themselves, truncated
// files read in part, duplicate channel names) and how channels were
// matched when the files do not name them as the model does.
func (in *Input) Warnings() []string {
	if in == nil {
		return nil
	}
	out := slices.Clone(in.warnings)
	if w, ok := in.Source.(interface{ Warnings() []string }); ok {
		out = append(out, w.Warnings()...)
	}
	return out
}

// EmptiedDomains returns the domains whose every cell LabelsIgnore left
// out, once a pass has ended (known false before).
func (in *Input) EmptiedDomains() (names []string, known bool) {
	if in == nil {
		return nil, false
	}
	if e, ok := in.Source.(interface{ EmptiedDomains() ([]string, bool) }); ok {
		return e.EmptiedDomains()
	}
	return nil, false
}

// Open opens the data files (globs, files, folders of FCS files, or one
// AnnData store; see Expand) for a fit: the source of the rows after the
// preprocessing of o, and that preprocessing as a model records it.
//
// dica's own outputs are read as what they are (Layout): their channels
// are the inputs unless o.Channels names others, their domain and label
// columns are the domain and label unless o names others, and an AnnData
// store whose X holds a model's inputs already preprocessed is recorded
// so: the Pipeline is the full preprocessing from the original files, and
// no step is applied twice (a Transform that the store holds already is an
// error).
func Open(paths []string, o Options) (*Input, error) {
	tr, err := parseTransform(o)
	if err != nil {
		return nil, err
	}
	return open(paths, o, func(in *Input) error {
		switch in.Kind {
		case FCS:
			return in.openFCS(tr)
		case Parquet, AnnData:
			return in.openTable(tr)
		}
		return in.openCSV(tr)
	})
}

// open expands paths into an Input with options o, names its label files
// and opens its data with openData.
func open(paths []string, o Options, openData func(*Input) error) (*Input, error) {
	files, kind, err := Expand(paths)
	if err != nil {
		return nil, err
	}
	in := &Input{Kind: kind, Files: files, opts: o}
	if err := in.labelFiles(); err != nil {
		return nil, err
	}
	if err := openData(in); err != nil {
		return nil, err
	}
	return in, nil
}

// parseTransform returns the transform of o.
func parseTransform(o Options) (preprocess.Func, error) {
	spec := o.Transform
	if spec == "" {
		spec = "none"
	}
	tr, err := preprocess.ParseFunc(spec)
	if err != nil {
		return nil, &dataset.OptionError{Pkg: "ingest", Option: "Transform", Value: o.Transform, Err: unprefix(err)}
	}
	if _, none := tr.(preprocess.Identity); none && o.TransformChannels != nil {
		return nil, optErr("TransformChannels", o.TransformChannels, "channels for a transform, but no transform")
	}
	return tr, nil
}

// unprefix removes a package name from the start of an error's message,
// for errors wrapped in an OptionError (which names the option instead).
func unprefix(err error) error {
	msg := err.Error()
	for _, p := range []string{"preprocess: ", "csvio: ", "fcs: ", "parquetio: ", "anndata: ", "dataset: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return fmt.Errorf("%s", msg)
}

// labelFiles expands the label files of the options, which go with CSV
// files: one per data file, or pairs naming the data file of each.
func (in *Input) labelFiles() error {
	o := in.opts
	if len(o.LabelFiles) == 0 {
		return nil
	}
	if in.Kind != CSV {
		return optErr("LabelFiles", o.LabelFiles, "label files go with CSV data; with %s data, name the label column (Label)", in.Kind)
	}
	pairs := 0
	for _, e := range o.LabelFiles {
		if _, _, ok := SplitLabelPair(e); ok {
			pairs++
		}
	}
	var labels []string
	switch pairs {
	case 0:
		var err error
		labels, err = Glob(o.LabelFiles)
		if err != nil {
			return &dataset.OptionError{Pkg: "ingest", Option: "LabelFiles", Value: o.LabelFiles, Err: err.(*dataset.OptionError).Err}
		}
		if len(labels) != len(in.Files) {
			return optErr("LabelFiles", o.LabelFiles, "%d data files but %d label files: give one label file per data file, in the same order (or DATA=LABELS pairs for some of the files)", len(in.Files), len(labels))
		}
	case len(o.LabelFiles):
		var err error
		if labels, err = pairLabels(in.Files, o.LabelFiles); err != nil {
			return err
		}
	default:
		return optErr("LabelFiles", o.LabelFiles, "label files and DATA=LABELS pairs are mixed: give either label files for every data file, or pairs")
	}
	for _, f := range labels {
		if f == "" {
			continue
		}
		if err := regular(f); err != nil {
			return err
		}
	}
	in.LabelFiles = labels
	return nil
}

// SplitLabelPair splits an entry of Options.LabelFiles of the form
// DATA=LABELS into the data file and its label file. ok is false for an
// entry that is a file or a glob: one without '=', or the name of a file
// that exists (a path may hold '='), or one with an empty side.
func SplitLabelPair(entry string) (data, labels string, ok bool) {
	data, labels, ok = strings.Cut(entry, "=")
	if !ok || strings.TrimSpace(data) == "" || strings.TrimSpace(labels) == "" {
		return "", "", false
	}
	if _, err := os.Stat(entry); err == nil {
		return "", "", false
	}
	return data, labels, true
}

// pairLabels returns the label file of each of the data files from pairs
// DATA=LABELS ("" for a file no pair names). DATA names a file by its path
// (compared after filepath.Abs) or, without a folder, by its base name; it
// must name exactly one data file, and no file twice.
func pairLabels(files, pairs []string) ([]string, error) {
	labels := make([]string, len(files))
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i] = absPath(f)
	}
	for _, e := range pairs {
		data, lab, _ := SplitLabelPair(e)
		var match []int
		for i, f := range files {
			if abs[i] == absPath(data) || !strings.ContainsAny(data, `/\`) && filepath.Base(f) == data {
				match = append(match, i)
			}
		}
		switch {
		case len(match) == 0:
			return nil, optErr("LabelFiles", pairs, "%s: %s is none of the %d data files (%s); name a data file by its path or its base name",
				escape.String(e, 0), escape.String(data, 0), len(files), listNames(files, 5))
		case len(match) > 1:
			return nil, optErr("LabelFiles", pairs, "%s: %s names %d data files (%s); name the file by its path",
				escape.String(e, 0), escape.String(data, 0), len(match), listNames(pick(files, match), 5))
		case labels[match[0]] != "":
			return nil, optErr("LabelFiles", pairs, "%s: the data file %s has a label file already (%s)",
				escape.String(e, 0), escape.String(files[match[0]], 0), escape.String(labels[match[0]], 0))
		}
		labels[match[0]] = lab
	}
	return labels, nil
}

// absPath returns the absolute form of path, or path when it has none.
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return filepath.Clean(path)
}

// pick returns the strings of s at the indices idx.
func pick(s []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

// fcsOnly returns an error naming the first FCS option of o that is set,
// for files of kind k.
func fcsOnly(o Options, k Kind) error {
	for _, f := range []struct {
		name string
		set  bool
	}{{"Compensate", o.Compensate}, {"Linearize", o.Linearize}, {"AllowTruncated", o.AllowTruncated}, {"AllDataSets", o.AllDataSets}} {
		if f.set {
			return optErr(f.name, true, "applies to FCS files, and the data is %s", k)
		}
	}
	return nil
}

// channelIndex returns the index of the channel of p that ref names (its
// reference, name, $PnN or $PnS; exactly, then ignoring case; or its
// 1-based column or parameter number), or -1.
func channelIndex(p *preprocess.Pipeline, ref string) int {
	if k, err := strconv.Atoi(strings.TrimSpace(ref)); err == nil && k > 0 {
		for j, c := range p.Channels {
			if c.Index == k {
				return j
			}
		}
	}
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

// transformChannels records in p the channels that refs (the option
// TransformChannels) name, and returns their indices among p's channels;
// nil refs (every channel) give nil.
func transformChannels(p *preprocess.Pipeline, refs []string) ([]int, error) {
	if refs == nil {
		return nil, nil
	}
	p.TransformChannels = []string{}
	cols := []int{}
	for _, ref := range refs {
		j := channelIndex(p, ref)
		if j < 0 {
			return nil, optErr("TransformChannels", refs, "%s is not among the input channels %s", escape.String(ref, 0), strings.Join(quoted(p.Names()), ", "))
		}
		cols = append(cols, j)
		p.TransformChannels = append(p.TransformChannels, p.Channels[j].Name)
	}
	return cols, nil
}

// quoted escapes names from users' files for a message.
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = escape.String(n, 40)
	}
	return out
}

// deferred is a row transform fixed after the reader is made (the
// reader's columns decide which channels it transforms): readers call Row,
// which applies the compiled pipeline set by set.
type deferred struct{ c *preprocess.Compiled }

func (d *deferred) row(x []float64) { d.c.Apply(x, len(x)) }

// compile completes the pipeline of an input read with its options (the
// channels they transform), compiles it into d, and marks the channels of
// dica's outputs as read from them (fromOutput).
func (in *Input) compile(pipe *preprocess.Pipeline, d *deferred) error {
	if _, err := transformChannels(pipe, in.opts.TransformChannels); err != nil {
		return err
	}
	var err error
	if d.c, err = pipe.Compile(); err != nil {
		return err
	}
	if in.Layout != nil {
		fromOutput(pipe)
	}
	return nil
}

// rowFunc returns the reader transform that applies d's pipeline, or nil
// when the transform is the identity (tr).
func (d *deferred) rowFunc(tr preprocess.Func) func([]float64) {
	if _, none := tr.(preprocess.Identity); none {
		return nil
	}
	return d.row
}
