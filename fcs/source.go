package fcs

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/preprocess"
)

// SourceOptions configures NewSource.
type SourceOptions struct {
	// Channels names the columns to read, each matched against $PnN, then
	// $PnS (exactly, then case-insensitively). Nil reads every parameter,
	// named by $PnN (all files must then have the same $PnN list).
	Channels []string
	// Compensate applies each file's own spillover matrix (see
	// File.Spillover) to the raw events before the channels are chosen. A
	// file without one is an error.
	Compensate bool
	// Spillover, when not nil, is applied to every file instead (its
	// Channels are matched by $PnN or $PnS). It implies Compensate.
	Spillover *Spillover
	// Transform, when not nil, is applied to the chosen channels after
	// compensation (e.g. preprocess.Asinh{Cofactor: 150}).
	Transform preprocess.Func
	// TransformChannels restricts Transform to these of the chosen channels
	// (nil: all of them).
	TransformChannels []string
	// AllowTruncated reads the complete events of truncated files instead of
	// failing.
	AllowTruncated bool
	// Scale converts the stored values to linear scale before compensation,
	// as flowCore's default read.FCS(transformation = "linearize") does for
	// log-amplified channels: v -> f2 * 10^(f1 * v / $PnR) for $PnE = f1,f2
	// with f1 > 0 (f2 = 0 read as 1), otherwise v -> v / $PnG (see
	// EventOptions.Scale). Without it the values are raw, as stored.
	Scale bool
	// AllDataSets reads every data set of a $NEXTDATA chain, each as its own
	// domain named "<base name>#k" (k = 1, 2, ... in chain order; a file
	// holding one data set keeps its base name). Without it only the first
	// data set of each file is read, as flowCore and FlowKit do by default.
	AllDataSets bool
}

// Source is a dataset.Source over FCS files: each file is one domain, named
// by its base name (filepath.Base), and its events are the rows (with
// SourceOptions.AllDataSets, each data set of a file is one domain). Rows
// are streamed: files are opened one at a time during a pass. It implements
// dataset.Sizer.
type Source struct {
	files    []sourceFile
	features []string
	opts     SourceOptions
	n        int
}

type sourceFile struct {
	path, domain string
	set          int // 0-based index of the data set in the $NEXTDATA chain
	par          int
	cols         []int                    // parameter index of each chosen channel
	comp         *preprocess.Compensation // on the full raw row, or nil
	tcols        []int                    // chosen-channel indices to transform
	events       int
	params       []Param // of the chosen channels
}

var _ dataset.Source = (*Source)(nil)

// NewSource checks the files (HEADER and TEXT, channels, spillover,
// truncation) and returns a source over them, in the order given (the data
// sets of a file in chain order).
func NewSource(paths []string, opts SourceOptions) (*Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("fcs: NewSource with no file")
	}
	s := &Source{opts: opts}
	domains := map[string]string{}
	for _, p := range paths {
		sets, err := s.inspectPath(p)
		if err != nil {
			return nil, err
		}
		for _, si := range sets {
			sf, feats := si.sf, si.feats
			if prev, dup := domains[sf.domain]; dup {
				return nil, fmt.Errorf("fcs: files %s and %s have the same base name %q (the domain name)", prev, p, sf.domain)
			}
			domains[sf.domain] = p
			if s.features == nil {
				s.features = feats
			} else if opts.Channels == nil && !equal(feats, s.features) {
				return nil, fmt.Errorf("fcs: %s has parameters %s, unlike %s (%s): choose the channels to read (SourceOptions.Channels; dica: --channels)", sf.name(), strings.Join(feats, ", "), s.files[0].name(), strings.Join(s.features, ", "))
			}
			s.files = append(s.files, sf)
			s.n += sf.events
		}
	}
	return s, nil
}

// name names the data set in messages: its path, and its place in the
// $NEXTDATA chain when it is not the first.
func (sf *sourceFile) name() string {
	if sf.set == 0 {
		return sf.path
	}
	return fmt.Sprintf("%s (data set %d)", sf.path, sf.set+1)
}

type setInfo struct {
	sf    sourceFile
	feats []string
}

// inspectPath inspects the first data set of the file at path, or all of
// them with SourceOptions.AllDataSets.
func (s *Source) inspectPath(path string) ([]setInfo, error) {
	var sets []*File
	if s.opts.AllDataSets {
		all, err := OpenAll(path)
		if err != nil {
			return nil, err
		}
		sets = all
	} else {
		f, err := Open(path)
		if err != nil {
			return nil, err
		}
		sets = []*File{f}
	}
	defer func() {
		for _, f := range sets {
			f.Close()
		}
	}()
	out := make([]setInfo, len(sets))
	for k, f := range sets {
		domain := filepath.Base(path)
		if len(sets) > 1 {
			domain = fmt.Sprintf("%s#%d", domain, k+1)
		}
		sf, feats, err := s.inspect(f, path, domain, k)
		if err != nil {
			return nil, err
		}
		out[k] = setInfo{sf, feats}
	}
	return out, nil
}

// openSet opens data set k (0-based) of the $NEXTDATA chain of the file at
// path.
func openSet(path string, k int) (*File, error) {
	if k == 0 {
		return Open(path)
	}
	sets, err := OpenAll(path)
	if err != nil {
		return nil, err
	}
	for i, f := range sets {
		if i != k {
			f.Close()
		}
	}
	if k >= len(sets) {
		return nil, fmt.Errorf("fcs: %s changed since NewSource: %d data sets, had at least %d", path, len(sets), k+1)
	}
	return sets[k], nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// inspect checks data set k of the file at path, open as f.
func (s *Source) inspect(f *File, path, domain string, k int) (sourceFile, []string, error) {
	sf := sourceFile{path: path, domain: domain, set: k, par: f.NumParams()}
	if k > 0 {
		path = sf.name() // for the messages below
	}
	n, err := f.present(s.opts.AllowTruncated)
	if err != nil {
		return sf, nil, fmt.Errorf("%w (file %s)", err, path)
	}
	sf.events = n
	feats := s.opts.Channels
	if feats == nil {
		feats = f.Names()
		for j := range feats {
			sf.cols = append(sf.cols, j)
		}
	} else {
		for _, c := range feats {
			j := f.FindParam(c)
			if j < 0 {
				return sf, nil, fmt.Errorf("fcs: %s: channel %q not found; available ($PnN / $PnS): %s", path, c, available(f))
			}
			sf.cols = append(sf.cols, j)
		}
	}
	for _, j := range sf.cols {
		sf.params = append(sf.params, f.params[j])
	}
	if s.opts.Compensate || s.opts.Spillover != nil {
		sp := s.opts.Spillover
		if sp != nil && (sp.Matrix == nil || len(sp.Channels) == 0) {
			return sf, nil, fmt.Errorf("fcs: SourceOptions.Spillover has no matrix or no channels")
		}
		if sp == nil {
			if sp, err = f.Spillover(); err != nil {
				return sf, nil, fmt.Errorf("fcs: %s: compensation asked: %w", path, err)
			}
		}
		names := make([]string, len(sp.Channels))
		for i, c := range sp.Channels {
			j := -1
			if sp.Params != nil && s.opts.Spillover == nil {
				j = sp.Params[i]
			} else {
				j = f.FindParam(c)
			}
			if j < 0 {
				return sf, nil, fmt.Errorf("fcs: %s: spillover channel %q not found; available ($PnN / $PnS): %s", path, c, available(f))
			}
			names[i] = f.params[j].Name
		}
		sf.comp, err = preprocess.NewCompensation(sp.Matrix, names, f.Names())
		if err != nil {
			return sf, nil, fmt.Errorf("fcs: %s: %w", path, err)
		}
	}
	if s.opts.Transform != nil {
		if s.opts.TransformChannels == nil {
			for k := range feats {
				sf.tcols = append(sf.tcols, k)
			}
		} else {
			for _, c := range s.opts.TransformChannels {
				k := -1
				j := f.FindParam(c)
				for i, cj := range sf.cols {
					if cj == j {
						k = i
					}
				}
				if j < 0 || k < 0 {
					return sf, nil, fmt.Errorf("fcs: %s: transform channel %q is not one of the chosen channels %s", path, c, strings.Join(feats, ", "))
				}
				sf.tcols = append(sf.tcols, k)
			}
		}
	}
	return sf, append([]string(nil), feats...), nil
}

func available(f *File) string {
	var b strings.Builder
	for i, p := range f.params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", p.Name)
		if p.Label != "" && p.Label != p.Name {
			fmt.Fprintf(&b, " / %q", p.Label)
		}
	}
	return b.String()
}

// Schema returns the chosen channels as features; rows carry no labels.
func (s *Source) Schema() dataset.Schema {
	return dataset.Schema{Features: append([]string(nil), s.features...)}
}

// Params returns the parameters ($PnN, $PnS, $PnB, $PnR, ...) of the chosen
// channels, as the first file declares them; they describe the raw values,
// before SourceOptions' compensation, scaling and transform.
func (s *Source) Params() []Param {
	return append([]Param(nil), s.files[0].params...)
}

// Len returns the number of rows of a pass.
func (s *Source) Len() int { return s.n }

// Domains returns the domain names, one per file (or data set, with
// SourceOptions.AllDataSets), in order.
func (s *Source) Domains() []string {
	d := make([]string, len(s.files))
	for i, f := range s.files {
		d[i] = f.domain
	}
	return d
}

// Open starts a pass over the files.
func (s *Source) Open(ctx context.Context) (dataset.Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &sourceReader{s: s, ctx: ctx, cur: -1}, nil
}

type sourceReader struct {
	s   *Source
	ctx context.Context
	cur int // index of the open file
	f   *File
	r   *EventReader
	raw []float64
}

// Read fills b with up to max rows of the current file (compensated,
// selected, transformed), opening the next file when one is exhausted.
func (r *sourceReader) Read(b *dataset.Block, max int) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if max <= 0 {
		return 0, fmt.Errorf("fcs: Read of %d rows", max)
	}
	for r.r == nil || r.r.Len() == 0 {
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	sf := &r.s.files[r.cur]
	rows := min(max, r.r.Len())
	if cap(r.raw) < rows*sf.par {
		r.raw = make([]float64, rows*sf.par)
	}
	raw := r.raw[:rows*sf.par]
	k, err := r.r.Read(raw, rows)
	if err != nil {
		return 0, fmt.Errorf("%w (file %s)", err, sf.name())
	}
	d := len(sf.cols)
	b.Reset(k, d, false, 0)
	r.s.rows(sf, raw[:k*sf.par], b.X[:k*d])
	for i := range k {
		b.Domain[i] = r.cur
	}
	b.Rows = k
	return k, nil
}

// rows turns raw events of sf (row-major, sf.par values each; compensated
// in place) into rows of the chosen channels in x: compensation, channel
// selection, transform.
func (s *Source) rows(sf *sourceFile, raw, x []float64) {
	if sf.comp != nil {
		sf.comp.Apply(raw, sf.par)
	}
	d := len(sf.cols)
	for i := range len(raw) / sf.par {
		src := raw[i*sf.par : (i+1)*sf.par]
		dst := x[i*d : (i+1)*d]
		for c, j := range sf.cols {
			dst[c] = src[j]
		}
	}
	if s.opts.Transform != nil {
		preprocess.Channels{F: s.opts.Transform, Cols: sf.tcols}.Apply(x, d)
	}
}

// next opens the next file that has events, or returns io.EOF.
func (r *sourceReader) next() error {
	r.closeFile()
	for r.cur+1 < len(r.s.files) {
		r.closeFile()
		r.cur++
		sf := &r.s.files[r.cur]
		f, err := r.s.openFile(sf)
		if err != nil {
			return err
		}
		er, err := f.Events(r.s.eventOptions())
		if err != nil {
			f.Close()
			return fmt.Errorf("%w (file %s)", err, sf.name())
		}
		if err := sf.sameEvents(er.Len()); err != nil {
			f.Close()
			return err
		}
		r.f, r.r = f, er
		if er.Len() > 0 {
			return nil
		}
	}
	r.closeFile()
	return io.EOF
}

// openFile opens the data set of sf and checks its number of parameters
// against the one NewSource inspected.
func (s *Source) openFile(sf *sourceFile) (*File, error) {
	f, err := openSet(sf.path, sf.set)
	if err != nil {
		return nil, err
	}
	if f.NumParams() != sf.par {
		f.Close()
		return nil, fmt.Errorf("fcs: %s changed since NewSource: %d parameters, had %d", sf.name(), f.NumParams(), sf.par)
	}
	return f, nil
}

// sameEvents checks the number of events of an opened data set against the
// one NewSource inspected.
func (sf *sourceFile) sameEvents(n int) error {
	if n != sf.events {
		return fmt.Errorf("fcs: %s changed since NewSource: %d events, had %d", sf.name(), n, sf.events)
	}
	return nil
}

func (s *Source) eventOptions() EventOptions {
	return EventOptions{AllowTruncated: s.opts.AllowTruncated, Scale: s.opts.Scale}
}

// Skim passes over the events in order and reads only those keep selects
// (it implements dataset.Skimmer): an event's place in its DATA segment
// follows from its index, so the events not kept are not read, and a file
// none of whose events is kept is not opened. The events kept are
// compensated, selected and transformed as Read does; the others are not
// checked.
func (s *Source) Skim(ctx context.Context, keep func(i int64) bool, put func(x, y []float64) error) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	x := make([]float64, len(s.features))
	for fi := range s.files {
		if err := s.skimFile(ctx, &s.files[fi], &n, x, keep, put); err != nil {
			return n, err
		}
	}
	return n, nil
}

// skimFile is Skim over the events of one data set; n counts the rows.
func (s *Source) skimFile(ctx context.Context, sf *sourceFile, n *int64, x []float64, keep func(i int64) bool, put func(x, y []float64) error) error {
	var (
		w   *eventWindow
		raw []float64
	)
	for i := range sf.events {
		if keep(*n) {
			if w == nil {
				f, err := s.openFile(sf)
				if err != nil {
					return err
				}
				defer f.Close()
				if w, err = f.window(s.eventOptions()); err != nil {
					return fmt.Errorf("%w (file %s)", err, sf.name())
				}
				if err := sf.sameEvents(w.n); err != nil {
					return err
				}
				raw = make([]float64, sf.par)
			}
			if err := w.event(i, raw); err != nil {
				return fmt.Errorf("%w (file %s)", err, sf.name())
			}
			s.rows(sf, raw, x)
			if err := put(x, nil); err != nil {
				return err
			}
		}
		*n++
		if *n&(1<<16-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *sourceReader) closeFile() {
	if r.f != nil {
		r.f.Close()
		r.f, r.r = nil, nil
	}
}

// Domains returns the names of the files opened so far.
func (r *sourceReader) Domains() []string {
	d := make([]string, 0, r.cur+1)
	for i := 0; i <= r.cur && i < len(r.s.files); i++ {
		d = append(d, r.s.files[i].domain)
	}
	return d
}

// Classes returns nil: FCS rows carry no labels.
func (r *sourceReader) Classes() []string { return nil }

// Close closes the open file and ends the pass.
func (r *sourceReader) Close() error {
	r.closeFile()
	r.cur = len(r.s.files)
	return nil
}
