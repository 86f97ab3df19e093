package preprocess

import (
	"fmt"
	"slices"
	"strings"
)

// Equal reports whether p and q describe the same preprocessing of the
// same channels: the channels' names in order, whether they are named,
// linearization, the compensation (per file, or the same matrix on the
// same channels) and the transform with the channels it applies to. How
// the channels were found (Ref, Index, $PnN, $PnS) and the kind of file
// (Format) do not count: Identical compares them too.
func (p *Pipeline) Equal(q *Pipeline) bool {
	if p == nil || q == nil {
		return p == q
	}
	return slices.Equal(p.Names(), q.Names()) && p.Unnamed == q.Unnamed && p.sameSteps(q)
}

// Identical reports whether p and q are equal in every field.
func (p *Pipeline) Identical(q *Pipeline) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Format == q.Format && slices.Equal(p.Channels, q.Channels) && p.Equal(q)
}

// sameSteps reports whether p and q apply the same steps (their channels
// are assumed to be the same).
func (p *Pipeline) sameSteps(q *Pipeline) bool {
	return p.Linearize == q.Linearize && sameSpill(p.Compensation, q.Compensation) && p.sameTransform(q)
}

func sameSpill(a, b *Spill) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.PerFile || b.PerFile {
		return a.PerFile == b.PerFile && strings.EqualFold(a.Keyword, b.Keyword)
	}
	return slices.Equal(a.Channels, b.Channels) && slices.Equal(a.Matrix, b.Matrix)
}

// sameTransform reports whether p and q transform the same channels with
// the same function.
func (p *Pipeline) sameTransform(q *Pipeline) bool {
	if p.TransformSpec() != q.TransformSpec() {
		return false
	}
	if p.TransformSpec() == "none" {
		return true
	}
	return slices.Equal(p.transformed(), q.transformed())
}

// transformed returns the names of the channels the transform applies to,
// in channel order.
func (p *Pipeline) transformed() []string {
	if p.TransformChannels == nil {
		return p.Names()
	}
	var out []string
	for _, c := range p.Channels {
		if slices.Contains(p.TransformChannels, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Steps describes the steps of p in order, one phrase each, as messages
// name them: "linearization ($PnE, $PnG)", "compensation with ...",
// "log1p on all channels". A pipeline without steps has none.
func (p *Pipeline) Steps() []string {
	if p == nil {
		return nil
	}
	var out []string
	if p.Linearize {
		out = append(out, "linearization ($PnE, $PnG)")
	}
	if s := p.Compensation; s != nil {
		if s.PerFile {
			out = append(out, "compensation with each file's own "+s.Keyword)
		} else {
			out = append(out, fmt.Sprintf("compensation with the %s of %s (matrix %s)", s.Keyword, s.Source, s.digest()))
		}
	}
	if tr := p.TransformSpec(); tr != "none" {
		if p.TransformChannels == nil {
			out = append(out, tr+" on all channels")
		} else {
			out = append(out, fmt.Sprintf("%s on %s", tr, strings.Join(p.TransformChannels, ", ")))
		}
	}
	return out
}

// Remaining returns the preprocessing still to apply to values that have
// been through applied, for a model whose preprocessing is p: the steps of
// p after those of applied. applied describes what a file declares it
// holds (dica's own AnnData output holds the model's inputs after the
// model's preprocessing, for example); nil means raw values. The steps of
// applied must be the first steps of p, on the same channels: otherwise
// the values cannot become the model's inputs, and the error names the
// step that differs. The result has p's channels, and no step when applied
// holds them all.
func (p *Pipeline) Remaining(applied *Pipeline) (*Pipeline, error) {
	if p == nil {
		if len(applied.Steps()) > 0 {
			return nil, fmt.Errorf("preprocess: the values were preprocessed (%s) and the model records no preprocessing", strings.Join(applied.Steps(), "; "))
		}
		return nil, nil
	}
	q := *p
	q.Channels = slices.Clone(p.Channels)
	if applied == nil || len(applied.Steps()) == 0 {
		return &q, nil
	}
	if !slices.Equal(applied.Names(), p.Names()) {
		return nil, fmt.Errorf("preprocess: the values were preprocessed as channels %s, the model's inputs are %s", strings.Join(applied.Names(), ", "), strings.Join(p.Names(), ", "))
	}
	mismatch := func(step string) error {
		have := strings.Join(applied.Steps(), "; ")
		want := strings.Join(p.Steps(), "; ")
		if want == "" {
			want = "none"
		}
		return fmt.Errorf("preprocess: the values were preprocessed with %s, which is not how the model's inputs begin (%s): %s differs; give the raw files", have, want, step)
	}
	if applied.Linearize {
		if !p.Linearize {
			return nil, mismatch("linearization")
		}
		q.Linearize = false
	} else if applied.Compensation != nil || applied.TransformSpec() != "none" {
		if p.Linearize {
			return nil, mismatch("linearization")
		}
	}
	if applied.Compensation != nil {
		if !sameSpill(applied.Compensation, p.Compensation) {
			return nil, mismatch("compensation")
		}
		q.Compensation = nil
	} else if applied.TransformSpec() != "none" && p.Compensation != nil {
		return nil, mismatch("compensation")
	}
	if applied.TransformSpec() != "none" {
		if !applied.sameTransform(p) {
			return nil, mismatch("the transform")
		}
		q.Transform, q.TransformChannels = "none", nil
	}
	return &q, nil
}

// Select returns the pipeline restricted to the channels named names, in
// that order (for a model reading some of the columns of a file whose
// preprocessing is p). The transform keeps the channels among names; a
// compensation must find its channels among them, else Select returns an
// error.
func (p *Pipeline) Select(names []string) (*Pipeline, error) {
	if p == nil {
		return nil, nil
	}
	q := *p
	q.Channels = nil
	for _, n := range names {
		j := slices.Index(p.Names(), n)
		if j < 0 {
			return nil, fmt.Errorf("preprocess: channel %q is not among %s", n, strings.Join(p.Names(), ", "))
		}
		q.Channels = append(q.Channels, p.Channels[j])
	}
	if p.TransformChannels != nil {
		q.TransformChannels = []string{}
		for _, n := range p.TransformChannels {
			if slices.Contains(names, n) {
				q.TransformChannels = append(q.TransformChannels, n)
			}
		}
	}
	if s := p.Compensation; s != nil && !s.PerFile {
		for _, c := range s.Channels {
			if !slices.Contains(names, c) {
				return nil, fmt.Errorf("preprocess: the compensation needs channel %q, which is not among %s", c, strings.Join(names, ", "))
			}
		}
	}
	return &q, q.Check()
}
