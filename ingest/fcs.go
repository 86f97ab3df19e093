package ingest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/preprocess"
)

// The keywords of dica's FCS output that describe it: DICA_LAYOUT (the
// Layout as JSON), and the names of the codes of its domain, label and
// predicted-population parameters: DICA_DOMAINk, DICA_LABELk,
// DICA_PREDICTEDk name code k.
const (
	KeywordLayout    = "DICA_LAYOUT"
	KeywordDomain    = "DICA_DOMAIN"
	KeywordLabel     = "DICA_LABEL"
	KeywordPredicted = "DICA_PREDICTED"
)

// fcsLayout reads the layout of the first file when dica wrote it.
func (in *Input) fcsLayout() error {
	f, err := fcs.Open(in.Files[0])
	if err != nil {
		return err
	}
	defer f.Close()
	v, ok := f.Keyword(KeywordLayout)
	if !ok {
		return nil
	}
	l, err := UnmarshalLayout([]byte(v))
	if err != nil {
		return fmt.Errorf("%s: keyword %s: %w", in.Files[0], KeywordLayout, unprefix(err))
	}
	in.Layout = l
	return nil
}

// fcsCodes returns, with the channels sel (nil: every parameter of the
// first file but the code channels), the domain and label parameters of
// the options or of dica's layout, as references, "" for none.
func (in *Input) fcsCodes(sel []string) (chans []string, domain, label string, err error) {
	o := in.opts
	if len(o.Target) > 0 {
		return nil, "", "", optErr("Target", o.Target, "FCS files hold no real targets")
	}
	domain, label = o.Domain, o.Label
	def := in.layoutDefaults(&domain, &label)
	if sel == nil {
		sel = def
	}
	if domain == "" && label == "" {
		return sel, "", "", nil
	}
	if sel == nil {
		f, err := fcs.Open(in.Files[0])
		if err != nil {
			return nil, "", "", err
		}
		names := f.Names()
		skip := map[int]bool{}
		for _, ref := range []string{domain, label} {
			if ref == "" {
				continue
			}
			j, err := f.LookupParam(ref)
			if err != nil {
				f.Close()
				return nil, "", "", err
			}
			skip[j] = true
		}
		f.Close()
		for j, n := range names {
			if !skip[j] {
				sel = append(sel, n)
			}
		}
	}
	return sel, domain, label, nil
}

// openFCS opens FCS files for a fit.
func (in *Input) openFCS(tr preprocess.Func) error {
	o := in.opts
	if err := in.fcsLayout(); err != nil {
		return err
	}
	refs := o.Channels
	sel, domain, label, err := in.fcsCodes(refs)
	if err != nil {
		return err
	}
	so := fcs.SourceOptions{Channels: sel, Compensate: o.Compensate, AllowTruncated: o.AllowTruncated,
		Scale: o.Linearize, AllDataSets: o.AllDataSets}
	if _, none := tr.(preprocess.Identity); !none {
		so.Transform, so.TransformChannels = tr, o.TransformChannels
		if so.TransformChannels == nil && (domain != "" || label != "") {
			so.TransformChannels = sel
		}
	}
	src, err := in.fcsSource(so, domain, label)
	if err != nil {
		return err
	}
	pipe := &preprocess.Pipeline{Format: "fcs", Linearize: o.Linearize, Transform: tr.String()}
	chans := src.Channels()
	for j := range sel {
		c := preprocess.Channel{Name: chans[j].Ref, Index: chans[j].Param, PnN: chans[j].Name, PnS: chans[j].Label}
		if j < len(refs) {
			c.Ref = refs[j]
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
		pipe.Compensation = &preprocess.Spill{PerFile: true, Keyword: sp.Keyword, Source: filepath.Base(in.Files[0]),
			Channels: slices.Clone(sp.Channels), Matrix: m}
	}
	if in.Layout != nil {
		fromOutput(pipe)
	}
	in.Pipeline = pipe
	return nil
}

// fcsSource opens the FCS source of so with the code channels domain and
// label (references, "" for none) read after the channels, and sets
// in.Source: the FCS source itself, or one that turns the codes into the
// rows' domain and label.
func (in *Input) fcsSource(so fcs.SourceOptions, domain, label string) (*fcs.Source, error) {
	sel := so.Channels
	var extra []string
	if domain != "" {
		extra = append(extra, domain)
	}
	if label != "" {
		extra = append(extra, label)
	}
	if len(extra) > 0 {
		so.Channels = slices.Concat(sel, extra)
	}
	src, err := fcs.NewSource(in.Files, so)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		in.Source = src
		return src, nil
	}
	cs, err := newCodedSource(src, len(sel), domain, label, in.opts.LabelsIgnore, in.opts.AllowUnmatchedIgnore)
	if err != nil {
		return nil, err
	}
	in.Source = cs
	return src, nil
}

// openFCSFor opens FCS files for a model whose preprocessing is p.
func (in *Input) openFCSFor(p *preprocess.Pipeline) error {
	o := in.opts
	if err := in.fcsLayout(); err != nil {
		return err
	}
	refs := make([]string, len(p.Channels))
	for j, c := range p.Channels {
		refs[j] = c.Name
		if c.Ref != "" {
			refs[j] = c.Ref
		}
		if p.Format != "fcs" && !p.Unnamed {
			refs[j] = c.Name
		}
	}
	_, domain, label, err := in.fcsCodes(refs)
	if err != nil {
		return err
	}
	run, err := in.remaining(p)
	if err != nil {
		return err
	}
	so := fcs.SourceOptions{Channels: refs, AllowTruncated: o.AllowTruncated, AllDataSets: o.AllDataSets, Scale: run.Linearize}
	if s := run.Compensation; s != nil {
		if s.PerFile {
			so.Compensate = true
		} else {
			k := len(s.Channels)
			so.Spillover = &fcs.Spillover{Keyword: s.Keyword, Channels: slices.Clone(s.Channels), Matrix: mat.NewDense(k, k, slices.Clone(s.Matrix))}
		}
	}
	f, err := run.Func()
	if err != nil {
		return err
	}
	if _, none := f.(preprocess.Identity); !none {
		so.Transform, so.TransformChannels = f, run.TransformChannels
		if so.TransformChannels != nil {
			// The model names its channels; the files may name them by
			// their references.
			so.TransformChannels = make([]string, len(run.TransformChannels))
			for i, n := range run.TransformChannels {
				so.TransformChannels[i] = refs[slices.Index(p.Names(), n)]
			}
		} else if domain != "" || label != "" {
			so.TransformChannels = refs
		}
	}
	src, err := in.fcsSource(so, domain, label)
	if err != nil {
		return err
	}
	if err := in.checkMarkers(p, src); err != nil {
		return err
	}
	in.Pipeline = p
	return nil
}

// checkMarkers checks that the channels of the FCS files carry the markers
// the model's did: a channel chosen by its detector ($PnN) whose marker
// ($PnS) differs from the model's is an error (the file is of another
// panel), unless ByPosition is set, which turns it into a warning.
func (in *Input) checkMarkers(p *preprocess.Pipeline, src *fcs.Source) error {
	chans := src.Channels()
	for j, c := range p.Channels {
		if j >= len(chans) || c.PnS == "" || chans[j].Label == "" {
			continue
		}
		got := chans[j]
		if strings.EqualFold(strings.TrimSpace(got.Label), strings.TrimSpace(c.PnS)) {
			continue
		}
		msg := fmt.Sprintf("channel %s is %s in %s, and was %s in the model's training files", quoted([]string{got.Name})[0], quoted([]string{got.Label})[0], in.Files[0], quoted([]string{c.PnS})[0])
		if in.opts.ByPosition {
			in.warn("%s; taken as the model's %s as asked", msg, c.Name)
			continue
		}
		return fmt.Errorf("%s: the file is of another panel (choose the channels by marker when fitting to match markers across panels)", msg)
	}
	return nil
}
