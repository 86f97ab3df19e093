package ingest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/preprocess"
)

// csvOptions returns the reader options of the input's options for CSV
// files (without Features and Transform).
func (in *Input) csvOptions() csvio.Options {
	o := in.opts
	return csvio.Options{
		Domain: o.Domain, Label: o.Label, Target: o.Target,
		LabelsIgnore: o.LabelsIgnore, LabelFiles: in.LabelFiles, AllowUnmatchedIgnore: o.AllowUnmatchedIgnore,
		Header: o.Header, MaxLineBytes: o.MaxLineBytes,
	}
}

// probeCSV reads the header of the first file (or the number of its
// columns without one), and the layout of a CSV file that dica wrote.
func (in *Input) probeCSV() (cols []string, header bool, err error) {
	probe, err := csvio.NewSource(in.Files[:1], csvio.Options{Header: in.opts.Header, MaxLineBytes: in.opts.MaxLineBytes})
	if err != nil {
		return nil, false, err
	}
	cols, header = probe.Columns(), probe.HasHeader()
	if header {
		in.Layout = ParseCSVHeader(cols)
	}
	return cols, header, nil
}

// layoutDefaults fills the domain and label of co from the layout of one
// of dica's outputs, where the options name none, and returns the default
// input columns: the layout's channels.
func (in *Input) layoutDefaults(domain, label *string) []string {
	l := in.Layout
	if l == nil {
		return nil
	}
	o := in.opts
	if *domain == "" {
		if d := l.Names(RoleDomain); len(d) == 1 {
			*domain = d[0]
		}
	}
	if *label == "" && len(in.LabelFiles) == 0 && len(o.Target) == 0 {
		if c := l.Names(RoleLabel); len(c) == 1 {
			*label = c[0]
		}
	}
	return l.Names(RoleChannel)
}

// openCSV opens CSV files for a fit.
func (in *Input) openCSV(tr preprocess.Func) error {
	if err := fcsOnly(in.opts, CSV); err != nil {
		return err
	}
	if _, _, err := in.probeCSV(); err != nil {
		return err
	}
	co := in.csvOptions()
	refs := in.opts.Channels
	if def := in.layoutDefaults(&co.Domain, &co.Label); refs == nil {
		co.Features = def
	} else {
		co.Features = refs
	}
	d := &deferred{}
	co.Transform = d.rowFunc(tr)
	src, err := csvio.NewSource(in.Files, co)
	if err != nil {
		return err
	}
	pipe := &preprocess.Pipeline{Format: "csv", Transform: tr.String(), Unnamed: !src.HasHeader()}
	cols := src.FeatureColumns()
	for j, f := range src.Schema().Features {
		c := preprocess.Channel{Name: f, Index: cols[j] + 1}
		if j < len(refs) {
			c.Ref = refs[j]
		}
		pipe.Channels = append(pipe.Channels, c)
	}
	if err := in.compile(pipe, d); err != nil {
		return err
	}
	in.Source, in.Pipeline = src, pipe
	return nil
}

// openCSVFor opens CSV files for a model whose preprocessing is p.
func (in *Input) openCSVFor(p *preprocess.Pipeline) error {
	o := in.opts
	if err := fcsOnly(o, CSV); err != nil {
		return err
	}
	cols, header, err := in.probeCSV()
	if err != nil {
		return err
	}
	co := in.csvOptions()
	in.layoutDefaults(&co.Domain, &co.Label)
	if co.Features, err = in.csvChannels(p, cols, header); err != nil {
		return err
	}
	run, err := in.remaining(p)
	if err != nil {
		return err
	}
	c, err := run.Compile()
	if err != nil {
		return fileSteps(p, CSV, err)
	}
	co.Transform = c.Row()
	src, err := csvio.NewSource(in.Files, co)
	if err != nil {
		return err
	}
	in.Source, in.Pipeline = src, p
	return nil
}

// csvChannels returns the columns (csvio Features) holding the channels of
// p in CSV files with the columns cols (a header's names when header):
// by name, or by position when either side has no names, with a warning
// naming what is assumed. Names that differ are an error listing both,
// unless ByPosition is set.
func (in *Input) csvChannels(p *preprocess.Pipeline, cols []string, header bool) ([]string, error) {
	names := p.Names()
	if in.Layout != nil {
		// One of dica's outputs names the model's channels.
		header, p = true, &preprocess.Pipeline{Channels: p.Channels}
	}
	positions := func() []string {
		out := make([]string, len(p.Channels))
		for j, c := range p.Channels {
			k := c.Index
			if k <= 0 {
				k = j + 1
			}
			out[j] = strconv.Itoa(k)
		}
		return out
	}
	byPos := func() ([]string, error) {
		pos := positions()
		for _, s := range pos {
			if k, _ := strconv.Atoi(s); k > len(cols) {
				return nil, fmt.Errorf("%s has %d columns; the model reads column %d (its channels %s)", in.Files[0], len(cols), k, strings.Join(quoted(names), ", "))
			}
		}
		return pos, nil
	}
	switch {
	case !header && p.Unnamed:
		return byPos()
	case !header:
		pos, err := byPos()
		if err == nil {
			in.warn("%s has no header: its columns %s are taken as the model's channels %s", in.Files[0], strings.Join(pos, ", "), strings.Join(quoted(names), ", "))
		}
		return pos, err
	case p.Unnamed:
		pos, err := byPos()
		if err == nil {
			got := make([]string, len(pos))
			for j, s := range pos {
				k, _ := strconv.Atoi(s)
				got[j] = cols[k-1]
			}
			in.warn("the model was fitted on CSV files without a header (channels %s): the columns %s of %s are taken by position", strings.Join(names, ", "), strings.Join(quoted(got), ", "), in.Files[0])
		}
		return pos, err
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(cols, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return names, nil
	}
	if in.opts.ByPosition {
		pos, err := byPos()
		if err == nil {
			in.warn("taking the model's channels %s by position (columns %s of %s), not by name", strings.Join(quoted(names), ", "), strings.Join(pos, ", "), in.Files[0])
		}
		return pos, err
	}
	return nil, &ChannelError{File: in.Files[0], Missing: missing, Model: names, Data: cols}
}

// ChannelError is the error of files that lack channels a model reads:
// the model's channels, those missing, and the files' own.
type ChannelError struct {
	File    string
	Missing []string
	Model   []string
	Data    []string
}

func (e *ChannelError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("ingest: %s has no channel %s: the model reads %s, the file has %s; check that the file is of the model's panel (or take the channels by position, ByPosition)",
		e.File, strings.Join(quoted(e.Missing), ", "), strings.Join(quoted(e.Model), ", "), listNames(e.Data, 40))
}

// listNames quotes at most max names, saying how many more there are.
func listNames(names []string, max int) string {
	q := quoted(names[:min(len(names), max)])
	s := strings.Join(q, ", ")
	if len(names) > max {
		s += fmt.Sprintf(" and %d more", len(names)-max)
	}
	return s
}

// warn records a warning of the input.
func (in *Input) warn(format string, args ...any) {
	in.warnings = append(in.warnings, fmt.Sprintf(format, args...))
}

// remaining returns the steps of the model's preprocessing p that the
// reader must apply: none for data said to be preprocessed, else those the
// files do not declare they hold already.
func (in *Input) remaining(p *preprocess.Pipeline) (*preprocess.Pipeline, error) {
	if in.opts.Preprocessed {
		q := *p
		q.Linearize, q.Compensation, q.Transform, q.TransformChannels = false, nil, "none", nil
		return &q, nil
	}
	run, err := p.Remaining(in.applied)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Files[0], unprefix(err))
	}
	return run, nil
}

// fileSteps explains the error of a pipeline step that needs FCS files
// (linearization, each file's own spillover matrix) for data of kind k.
func fileSteps(p *preprocess.Pipeline, k Kind, err error) error {
	return fmt.Errorf("the model's preprocessing (%s) needs the FCS files themselves, and the data is %s: give FCS files, or data already preprocessed as the model expects (Preprocessed): %w", strings.Join(p.Steps(), "; "), k, err)
}
