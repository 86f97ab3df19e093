package fcs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
	"github.com/dicalab/dica/preprocess"
	"gonum.org/v1/gonum/mat"
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
	// MaxDataSets is the largest number of data sets read from the chain
	// of one file with AllDataSets: a longer chain is an error. 0 means
	// DefaultMaxDataSets; it must not be negative.
	MaxDataSets int
}

// Source is a dataset.Source over FCS files: each file is one domain, named
// by its base name (filepath.Base), and its events are the rows (with
// SourceOptions.AllDataSets, each data set of a file is one domain). Rows
// are streamed: files are opened one at a time during a pass. It implements
// dataset.Sizer.
//
// Besides the rows, a Source tells what a faithful output or a fitted model
// needs to record: the channels chosen (Channels, Params), the spillover
// applied to each data set (Compensations), the keywords worth carrying
// to an output file (Keywords), and what the reader warned about
// (Warnings).
type Source struct {
	files    []sourceFile
	domains  []string // of the files, in order
	features []string
	opts     SourceOptions
	n        int
	warnings []string
	keywords []Keyword
	params   []Param // of the chosen channels, Keywords common to all sets
	channels []ChannelInfo
}

type sourceFile struct {
	path, domain string
	set          int   // 0-based index of the data set in the $NEXTDATA chain
	chained      bool  // the file holds several data sets, read with AllDataSets
	base         int64 // file offset of its HEADER
	par          int
	cols         []int                    // parameter index of each chosen channel
	comp         *preprocess.Compensation // on the full raw row, or nil
	spill        *Spillover               // the spillover comp applies, or nil
	tcols        []int                    // chosen-channel indices to transform
	events       int
	params       []Param // of the chosen channels
}

// ChannelInfo describes a channel chosen by a Source: how the caller named
// it and the parameter of the first data set it matched.
type ChannelInfo struct {
	// Ref is the reference as given in SourceOptions.Channels, or the
	// parameter's name (File.Names) when Channels is nil.
	Ref string
	// Param is the 1-based number of the parameter ($PkN for Param k) in
	// the first data set of the source.
	Param int
	// Name and Label are its $PnN and $PnS ("" when absent).
	Name, Label string
}

var _ dataset.Source = (*Source)(nil)

// errNoSource is returned by the methods of a Source that NewSource did not
// make.
var errNoSource = errors.New("fcs: the Source was not made by NewSource")

// NewSource checks the files (HEADER and TEXT, channels, spillover,
// truncation) and returns a source over them, in the order given (the data
// sets of a file in chain order). It collects the readers' warnings (see
// Warnings): those of File.Warnings, and, with AllowTruncated, how many
// events of a truncated data set are read.
func NewSource(paths []string, opts SourceOptions) (*Source, error) {
	return NewSourceContext(context.Background(), paths, opts)
}

// NewSourceContext is NewSource, checking ctx before each file and each
// data set of a chain.
func NewSourceContext(ctx context.Context, paths []string, opts SourceOptions) (*Source, error) {
	if ctx == nil {
		return nil, errors.New("fcs: NewSourceContext with a nil context")
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("fcs: NewSource with no file")
	}
	if opts.Channels != nil && len(opts.Channels) == 0 {
		return nil, fmt.Errorf("fcs: NewSource with an empty list of Channels (nil reads every channel)")
	}
	if opts.MaxDataSets < 0 {
		return nil, fmt.Errorf("fcs: SourceOptions.MaxDataSets %d (want 0 for %d, or more)", opts.MaxDataSets, DefaultMaxDataSets)
	}
	s := &Source{opts: opts}
	domains := map[string]string{}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sets, err := s.inspectPath(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, si := range sets {
			sf, feats := si.sf, si.feats
			if prev, dup := domains[sf.domain]; dup {
				return nil, fmt.Errorf("fcs: files %s and %s have the same base name %s (the domain name)", prev, p, escape.String(sf.domain, 0))
			}
			domains[sf.domain] = p
			if s.features == nil {
				s.features = feats
			} else if opts.Channels == nil && !slices.Equal(feats, s.features) {
				return nil, &dataset.OptionError{Pkg: "fcs", Option: "Channels", Value: opts.Channels,
					Err: fmt.Errorf("%s has parameters %s, unlike %s (%s): name the channels to read", sf.name(), quoteList(feats), s.files[0].name(), quoteList(s.features))}
			}
			if len(s.files) > 0 {
				if err := samePanel(&s.files[0], &sf, feats); err != nil {
					return nil, &dataset.OptionError{Pkg: "fcs", Option: "Channels", Value: opts.Channels, Err: err}
				}
			}
			s.carry(si.f, &sf)
			s.files = append(s.files, sf)
			s.domains = append(s.domains, sf.domain)
			s.n += sf.events
		}
	}
	return s, nil
}

// samePanel returns an error when a channel chosen by its detector ($PnN,
// the reference refs[c] or the parameter's own name) carries another
// marker ($PnS) in the data set sf than in first: the files are of
// different panels, and the same column would hold different markers. A
// channel chosen by its marker may sit on any detector.
func samePanel(first, sf *sourceFile, refs []string) error {
	for c := range sf.params {
		a, b := first.params[c], sf.params[c]
		if a.Label == "" || b.Label == "" || strings.EqualFold(strings.TrimSpace(a.Label), strings.TrimSpace(b.Label)) {
			continue
		}
		if c < len(refs) && strings.EqualFold(strings.TrimSpace(refs[c]), strings.TrimSpace(b.Label)) {
			continue // chosen by marker
		}
		return fmt.Errorf("channel %s is %s in %s and %s in %s: the files are of different panels; choose the channels by marker ($PnS) to read each marker wherever it is, or give files of one panel",
			escape.String(b.Name, 0), escape.String(b.Label, 0), sf.name(), escape.String(a.Label, 0), first.name())
	}
	return nil
}

// quoteList quotes names from users' files for a message.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = escape.String(n, 0)
	}
	return strings.Join(q, ", ")
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
	f     *File // closed; its metadata stays readable
}

// inspectPath inspects the first data set of the file at path, or all of
// them with SourceOptions.AllDataSets.
func (s *Source) inspectPath(ctx context.Context, path string) ([]setInfo, error) {
	max := 1
	if s.opts.AllDataSets {
		max = cmp.Or(s.opts.MaxDataSets, DefaultMaxDataSets)
	}
	sets, err := open(ctx, path, s.opts.AllDataSets, max, "SourceOptions.MaxDataSets raises it")
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range sets {
			f.Close()
		}
	}()
	out := make([]setInfo, len(sets))
	for k, f := range sets {
		domain := dataset.DomainName(path)
		if len(sets) > 1 {
			domain = fmt.Sprintf("%s#%d", domain, k+1)
		}
		sf, feats, err := s.inspect(f, path, domain, k)
		if err != nil {
			return nil, err
		}
		sf.chained = len(sets) > 1
		sf.base = f.base
		for _, w := range f.Warnings() {
			s.warnings = append(s.warnings, sf.name()+": "+w)
		}
		if sf.events < f.NumEvents() {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: read %d of %d events declared by $TOT (the file or its DATA segment ends early)", sf.name(), sf.events, f.NumEvents()))
		}
		out[k] = setInfo{sf, feats, f}
	}
	return out, nil
}

// carry keeps, in s.keywords and in the Keywords of s.params, the keywords
// of the data set f (inspected as sf) that all data sets so far share.
func (s *Source) carry(f *File, sf *sourceFile) {
	if s.params == nil {
		for _, k := range f.keys {
			if carried(k) {
				s.keywords = append(s.keywords, k)
			}
		}
		s.params = make([]Param, len(sf.params))
		for c, p := range sf.params {
			p.Keywords = append([]Keyword(nil), p.Keywords...)
			s.params[c] = p
			s.channels = append(s.channels, ChannelInfo{Param: sf.cols[c] + 1, Name: p.Name, Label: p.Label})
		}
		return
	}
	s.keywords = slices.DeleteFunc(s.keywords, func(k Keyword) bool {
		v, ok := f.Keyword(k.Key)
		return !ok || v != k.Value
	})
	for c := range s.params {
		other := sf.params[c].Keywords
		s.params[c].Keywords = slices.DeleteFunc(s.params[c].Keywords, func(k Keyword) bool {
			return !slices.Contains(other, k)
		})
	}
}

// notCarried are the keywords that describe how the input is laid out
// (segments, event count and format, text encoding, cell subsets): a
// writer sets them for its own output.
var notCarried = map[string]bool{
	"$BEGINANALYSIS": true, "$ENDANALYSIS": true, "$BEGINSTEXT": true, "$ENDSTEXT": true,
	"$BEGINDATA": true, "$ENDDATA": true, "$NEXTDATA": true, "$TOT": true, "$PAR": true,
	"$BYTEORD": true, "$DATATYPE": true, "$MODE": true, "$UNICODE": true,
	"$CSMODE": true, "$CSVBITS": true,
}

// carried reports whether Source.Keywords may carry k to an output.
func carried(k Keyword) bool {
	nk := normKey(k.Key)
	if nk == "" || k.Value == "" || notCarried[nk] {
		return false
	}
	if strings.HasPrefix(nk, "$CSV") && strings.HasSuffix(nk, "FLAG") {
		return false // $CSVnFLAG
	}
	_, _, _, param := paramKey(nk)
	return !param
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
			j, err := f.LookupParam(c)
			if err != nil {
				return sf, nil, err // names the file
			}
			sf.cols = append(sf.cols, j)
		}
	}
	for _, j := range sf.cols {
		sf.params = append(sf.params, f.params[j])
	}
	if s.opts.Compensate || s.opts.Spillover != nil {
		if err := s.compensation(f, &sf); err != nil {
			return sf, nil, err
		}
	}
	if s.opts.Transform != nil {
		if s.opts.TransformChannels == nil {
			for k := range feats {
				sf.tcols = append(sf.tcols, k)
			}
		} else {
			for _, c := range s.opts.TransformChannels {
				j, err := f.lookupAs("transform channel", c)
				if err != nil {
					return sf, nil, err
				}
				k := slices.Index(sf.cols, j)
				if k < 0 {
					return sf, nil, fmt.Errorf("fcs: %s: transform channel %s is not one of the chosen channels %s", path, escape.String(c, 0), quoteList(feats))
				}
				sf.tcols = append(sf.tcols, k)
			}
		}
	}
	return sf, append([]string(nil), feats...), nil
}

// compensation sets sf's compensation: by SourceOptions.Spillover, or by
// the data set's own spillover matrix.
func (s *Source) compensation(f *File, sf *sourceFile) error {
	path := sf.name()
	sp := s.opts.Spillover
	if sp != nil && (sp.Matrix == nil || len(sp.Channels) == 0) {
		return fmt.Errorf("fcs: SourceOptions.Spillover has no matrix or no channels")
	}
	if sp == nil {
		var err error
		if sp, err = f.Spillover(); err != nil {
			return fmt.Errorf("fcs: %s: compensation asked: %w", path, err)
		}
	}
	applied := &Spillover{Keyword: sp.Keyword, Channels: append([]string(nil), sp.Channels...),
		Params: make([]int, len(sp.Channels))}
	names := make([]string, len(sp.Channels))
	for i, c := range sp.Channels {
		var j int
		if s.opts.Spillover == nil {
			j = sp.Params[i]
		} else {
			var err error
			if j, err = f.lookupAs("spillover channel", c); err != nil {
				return err
			}
		}
		applied.Params[i] = j
		names[i] = f.names[j]
	}
	comp, err := preprocess.NewCompensation(sp.Matrix, names, f.names)
	if err != nil {
		return fmt.Errorf("fcs: %s: %w", path, err)
	}
	applied.Matrix = mat.DenseCopyOf(sp.Matrix)
	sf.comp, sf.spill = comp, applied
	return nil
}

// Schema returns the chosen channels as features; rows carry no labels.
func (s *Source) Schema() dataset.Schema {
	if s == nil {
		return dataset.Schema{}
	}
	return dataset.Schema{Features: append([]string(nil), s.features...)}
}

// Params returns the parameters ($PnN, $PnS, $PnB, $PnR, ...) of the chosen
// channels, as the first data set declares them, except that their
// Keywords are only those every data set of the source has, with the same
// values, for that channel. They describe the raw values, before
// SourceOptions' compensation, scaling and transform.
func (s *Source) Params() []Param {
	if s == nil {
		return nil
	}
	ps := make([]Param, len(s.params))
	for i, p := range s.params {
		p.Keywords = append([]Keyword(nil), p.Keywords...)
		ps[i] = p
	}
	return ps
}

// Channels describes the chosen channels, in column order: the reference
// as given, and the parameter of the first data set it matched (the data
// sets may hold it at different numbers).
func (s *Source) Channels() []ChannelInfo {
	if s == nil || len(s.channels) == 0 {
		return nil
	}
	out := append([]ChannelInfo(nil), s.channels...)
	for c := range out {
		out[c].Ref = s.features[c]
	}
	return out
}

// Compensations returns, for each data set (in the order of Domains), the
// spillover matrix applied to it: its Keyword (the keyword of the file it
// was read from, or SourceOptions.Spillover's), Channels, Params (the
// 0-based parameters of that data set it applies to) and Matrix. It
// returns nil when the source does not compensate. The values are copies.
func (s *Source) Compensations() []*Spillover {
	if s == nil || !s.opts.Compensate && s.opts.Spillover == nil {
		return nil
	}
	out := make([]*Spillover, len(s.files))
	for i, sf := range s.files {
		if sp := sf.spill; sp != nil {
			out[i] = &Spillover{Keyword: sp.Keyword, Channels: append([]string(nil), sp.Channels...),
				Params: append([]int(nil), sp.Params...), Matrix: mat.DenseCopyOf(sp.Matrix)}
		}
	}
	return out
}

// Keywords returns the keywords of the source worth carrying to an output
// file made from its events: those that every data set of the source has,
// with the same value ($DATE, $CYT, $SPILLOVER, $FIL, $SRC, $INST, custom
// keywords, ...), in the order of the first data set, without those a
// writer sets for its own output: the segment offsets ($BEGINDATA,
// $ENDDATA, $BEGINANALYSIS, $ENDANALYSIS, $BEGINSTEXT, $ENDSTEXT,
// $NEXTDATA), $TOT, $PAR, $BYTEORD, $DATATYPE, $MODE, $UNICODE, the cell
// subset keywords ($CSMODE, $CSVBITS, $CSVnFLAG), and the keywords of one
// parameter ($PnN, $PnV, ..., and custom Pn keywords such as PnDISPLAY),
// which Params carries per channel. Keywords with an empty value are left
// out (FCS does not allow them).
func (s *Source) Keywords() []Keyword {
	if s == nil {
		return nil
	}
	return append([]Keyword(nil), s.keywords...)
}

// Warnings returns what the readers of the data sets warned about (see
// File.Warnings), each prefixed by the file's name ("path: " or "path
// (data set k): "), and, for data sets read with AllowTruncated, "read N
// of M events declared by $TOT".
func (s *Source) Warnings() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.warnings...)
}

// Len returns the number of rows of a pass.
func (s *Source) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Domains returns the domain names, one per file (or data set, with
// SourceOptions.AllDataSets), in order.
func (s *Source) Domains() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.domains)
}

// Files returns the data sets the source reads, in order (it implements
// dataset.Origins): a file's path, or "path#k" for data set k of a
// $NEXTDATA chain read with AllDataSets. Block.Event numbers the events
// of each from 1.
func (s *Source) Files() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.files))
	for i, f := range s.files {
		out[i] = f.path
		if f.chained {
			out[i] = fmt.Sprintf("%s#%d", f.path, f.set+1)
		}
	}
	return out
}

// Open starts a pass over the files.
func (s *Source) Open(ctx context.Context) (dataset.Reader, error) {
	if s == nil || len(s.files) == 0 {
		return nil, errNoSource
	}
	if ctx == nil {
		return nil, errors.New("fcs: Open with a nil context")
	}
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
	ev  int64 // events of the current data set handed out
}

// Read fills b with up to max rows of the current file (compensated,
// selected, transformed), opening the next file when one is exhausted.
func (r *sourceReader) Read(b *dataset.Block, max int) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if b == nil {
		return 0, errors.New("fcs: Read into a nil block")
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
	b.ResetOrigins(k)
	r.s.rows(sf, raw[:k*sf.par], b.X[:k*d])
	for i := range k {
		b.Domain[i] = r.cur
		r.ev++
		b.File[i], b.Event[i] = r.cur, r.ev
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
		if err := r.ctx.Err(); err != nil {
			return err
		}
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
		r.f, r.r, r.ev = f, er, 0
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
	f, err := openSet(sf.path, sf.set, sf.base)
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
	switch {
	case s == nil || len(s.files) == 0:
		return 0, errNoSource
	case ctx == nil || keep == nil || put == nil:
		return 0, errors.New("fcs: Skim with a nil context or function")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	x := make([]float64, len(s.features))
	for fi := range s.files {
		if err := ctx.Err(); err != nil {
			return n, err
		}
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

// Domains returns the names of the files opened so far. The slice is
// shared by the calls of a pass (readers call it for every block): it must
// not be modified.
func (r *sourceReader) Domains() []string {
	n := min(r.cur+1, len(r.s.domains))
	return r.s.domains[:n:n]
}

// Classes returns nil: FCS rows carry no labels.
func (r *sourceReader) Classes() []string { return nil }

// Close closes the open file and ends the pass.
func (r *sourceReader) Close() error {
	r.closeFile()
	r.cur = len(r.s.files)
	return nil
}
