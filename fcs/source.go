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
}

// Source is a dataset.Source over FCS files: each file is one domain, named
// by its base name (filepath.Base), and its events are the rows. Rows are
// streamed: files are opened one at a time during a pass. It implements
// dataset.Sizer.
type Source struct {
	files    []sourceFile
	features []string
	opts     SourceOptions
	n        int
}

type sourceFile struct {
	path, domain string
	par          int
	cols         []int                    // parameter index of each chosen channel
	comp         *preprocess.Compensation // on the full raw row, or nil
	tcols        []int                    // chosen-channel indices to transform
	events       int
}

var _ dataset.Source = (*Source)(nil)

// NewSource checks the files (HEADER and TEXT, channels, spillover,
// truncation) and returns a source over them, in the order given.
func NewSource(paths []string, opts SourceOptions) (*Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("fcs: NewSource with no file")
	}
	s := &Source{opts: opts}
	domains := map[string]string{}
	for _, p := range paths {
		sf, feats, err := s.inspect(p)
		if err != nil {
			return nil, err
		}
		if prev, dup := domains[sf.domain]; dup {
			return nil, fmt.Errorf("fcs: files %s and %s have the same base name %q (the domain name)", prev, p, sf.domain)
		}
		domains[sf.domain] = p
		if s.features == nil {
			s.features = feats
		} else if opts.Channels == nil && !equal(feats, s.features) {
			return nil, fmt.Errorf("fcs: %s has parameters %s, unlike %s (%s): choose SourceOptions.Channels", p, strings.Join(feats, ", "), paths[0], strings.Join(s.features, ", "))
		}
		s.files = append(s.files, sf)
		s.n += sf.events
	}
	return s, nil
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

func (s *Source) inspect(path string) (sourceFile, []string, error) {
	f, err := Open(path)
	if err != nil {
		return sourceFile{}, nil, err
	}
	defer f.Close()
	sf := sourceFile{path: path, domain: filepath.Base(path), par: f.NumParams()}
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

// Len returns the number of rows of a pass.
func (s *Source) Len() int { return s.n }

// Domains returns the domain names, one per file, in order.
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
		return 0, fmt.Errorf("%w (file %s)", err, sf.path)
	}
	raw = raw[:k*sf.par]
	if sf.comp != nil {
		sf.comp.Apply(raw, sf.par)
	}
	d := len(sf.cols)
	b.Reset(k, d, false, 0)
	for i := 0; i < k; i++ {
		src := raw[i*sf.par : (i+1)*sf.par]
		dst := b.X[i*d : (i+1)*d]
		for c, j := range sf.cols {
			dst[c] = src[j]
		}
		b.Domain[i] = r.cur
	}
	if r.s.opts.Transform != nil {
		preprocess.Channels{F: r.s.opts.Transform, Cols: sf.tcols}.Apply(b.X[:k*d], d)
	}
	b.Rows = k
	return k, nil
}

// next opens the next file that has events, or returns io.EOF.
func (r *sourceReader) next() error {
	r.closeFile()
	for r.cur+1 < len(r.s.files) {
		r.closeFile()
		r.cur++
		sf := &r.s.files[r.cur]
		f, err := Open(sf.path)
		if err != nil {
			return err
		}
		if f.NumParams() != sf.par {
			f.Close()
			return fmt.Errorf("fcs: %s changed since NewSource: %d parameters, had %d", sf.path, f.NumParams(), sf.par)
		}
		er, err := f.Events(EventOptions{AllowTruncated: r.s.opts.AllowTruncated})
		if err != nil {
			f.Close()
			return fmt.Errorf("%w (file %s)", err, sf.path)
		}
		if er.Len() != sf.events {
			f.Close()
			return fmt.Errorf("fcs: %s changed since NewSource: %d events, had %d", sf.path, er.Len(), sf.events)
		}
		r.f, r.r = f, er
		if er.Len() > 0 {
			return nil
		}
	}
	r.closeFile()
	return io.EOF
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
