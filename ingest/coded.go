package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/internal/escape"
)

// codedSource reads FCS files whose events carry their domain or label as
// a code in a parameter (dica's FCS output: the DOMAIN and LABEL
// parameters, whose codes the keywords DICA_DOMAINk and DICA_LABELk name;
// in other files a code is named by its number). The inner source reads
// the input channels, then the domain parameter, then the label parameter.
type codedSource struct {
	src            *fcs.Source
	d              int // input channels
	domCol, labCol int // columns of the codes in the inner rows, -1 if none
	// Per data set of the inner source: the names of the codes.
	domNames, labNames []map[int]string
	ignore             map[string]bool
	ignoreList         []string
	allowUnmatched     bool
	schema             dataset.Schema
}

// newCodedSource returns the coded source over src, whose first d
// channels are the inputs, followed by the domain parameter (ref domain)
// and the label parameter (ref label), each when not "".
func newCodedSource(src *fcs.Source, d int, domain, label string, ignore []string, allowUnmatched bool) (*codedSource, error) {
	s := &codedSource{src: src, d: d, domCol: -1, labCol: -1, allowUnmatched: allowUnmatched}
	col := d
	if domain != "" {
		s.domCol = col
		col++
	}
	if label != "" {
		s.labCol = col
	} else if len(ignore) > 0 {
		return nil, optErr("LabelsIgnore", ignore, "cells are left out by their label, and the data has none (Label)")
	}
	feats := src.Schema().Features
	s.schema = dataset.Schema{Features: feats[:d], Labelled: label != ""}
	s.ignore = map[string]bool{}
	for _, v := range ignore {
		s.ignore[strings.TrimSpace(v)] = true
		s.ignoreList = append(s.ignoreList, strings.TrimSpace(v))
	}
	for _, f := range src.Files() {
		path, _, _ := strings.Cut(f, "#")
		dn, ln, err := codeNames(path)
		if err != nil {
			return nil, err
		}
		s.domNames = append(s.domNames, dn)
		s.labNames = append(s.labNames, ln)
	}
	return s, nil
}

// codeNames reads the names of the domain and label codes of an FCS file
// (DICA_DOMAINk, DICA_LABELk).
func codeNames(path string) (dom, lab map[int]string, err error) {
	f, err := fcs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	dom, lab = map[int]string{}, map[int]string{}
	for _, k := range f.Keywords() {
		key := strings.ToUpper(k.Key)
		for _, t := range []struct {
			prefix string
			m      map[int]string
		}{{KeywordDomain, dom}, {KeywordLabel, lab}} {
			if rest, ok := strings.CutPrefix(key, t.prefix); ok {
				if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
					t.m[n] = k.Value
				}
			}
		}
	}
	return dom, lab, nil
}

func (s *codedSource) Schema() dataset.Schema { return s.schema }

// Files returns the files of the inner source (dataset.Origins).
func (s *codedSource) Files() []string { return s.src.Files() }

// Warnings returns the FCS reader's warnings.
func (s *codedSource) Warnings() []string { return s.src.Warnings() }

func (s *codedSource) Open(ctx context.Context) (dataset.Reader, error) {
	r, err := s.src.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &codedReader{s: s, r: r, seen: map[string]bool{}}, nil
}

type codedReader struct {
	s           *codedSource
	r           dataset.Reader
	in          dataset.Block
	doms, class dataset.Index
	seen        map[string]bool // ignored labels met
	files       []string
	err         error
}

func (r *codedReader) Domains() []string { return r.doms.Names() }

func (r *codedReader) Classes() []string {
	if r.s.labCol < 0 {
		return nil
	}
	return r.class.Names()
}

func (r *codedReader) Close() error { return r.r.Close() }

// name returns the name of the code v of a parameter, in data set f, from
// the table names (the number itself when the table has none).
func (r *codedReader) name(v float64, names []map[int]string, f int, what string, ev int64) (string, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || math.Abs(v) > 1<<30 {
		return "", fmt.Errorf("%s event %d: the %s code %v is not a whole number", r.fileName(f), ev, what, v)
	}
	c := int(v)
	if n, ok := names[f][c]; ok {
		return n, nil
	}
	return strconv.Itoa(c), nil
}

func (r *codedReader) fileName(f int) string {
	if r.files == nil {
		r.files = r.s.src.Files()
	}
	if f >= 0 && f < len(r.files) {
		return r.files[f]
	}
	return "?"
}

func (r *codedReader) Read(b *dataset.Block, max int) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if b == nil || max < 1 {
		return 0, errors.New("ingest: Read into a nil block or of fewer than 1 row")
	}
	s := r.s
	for {
		n, err := r.r.Read(&r.in, max)
		if errors.Is(err, io.EOF) {
			r.err = io.EOF
			if err := r.unmatched(); err != nil {
				r.err = err
			}
			return 0, r.err
		}
		if err != nil {
			r.err = err
			return 0, err
		}
		in := &r.in
		b.Reset(n, s.d, s.labCol >= 0, 0)
		b.ResetOrigins(n)
		k := 0
		for i := 0; i < n; i++ {
			row := in.Row(i)
			f, ev := in.File[i], in.Event[i]
			if s.labCol >= 0 {
				name, err := r.name(row[s.labCol], s.labNames, f, "label", ev)
				if err != nil {
					r.err = err
					return 0, err
				}
				if s.ignore[name] {
					r.seen[name] = true
					continue
				}
				b.Label[k] = r.class.ID(name)
			}
			if s.domCol >= 0 {
				name, err := r.name(row[s.domCol], s.domNames, f, "domain", ev)
				if err != nil {
					r.err = err
					return 0, err
				}
				b.Domain[k] = r.doms.ID(name)
			} else {
				b.Domain[k] = r.doms.ID(r.r.Domains()[in.Domain[i]])
			}
			copy(b.Row(k), row[:s.d])
			b.File[k], b.Event[k] = f, ev
			k++
		}
		if k > 0 {
			b.Rows = k
			return k, nil
		}
	}
}

// unmatched returns the error of a LabelsIgnore value that no event has.
func (r *codedReader) unmatched() error {
	if r.s.allowUnmatched {
		return nil
	}
	for _, v := range r.s.ignoreList {
		if !r.seen[v] {
			return optErr("LabelsIgnore", r.s.ignoreList, "%s matches no label (labels: %s)", escape.String(v, 0), listNames(r.class.Names(), 20))
		}
	}
	return nil
}
