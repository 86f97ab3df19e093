package ingest

import (
	"slices"
	"strings"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/preprocess"
)

// OpenFor opens data files for a model whose preprocessing is p (from
// dica.Model.Preprocessing): the model's channels, found by name in the
// files (by position where the model or the files have no names, with a
// warning; see Options.ByPosition), and the model's preprocessing steps,
// except those the files declare they hold (dica's AnnData output holds
// the model's inputs) or all of them with Options.Preprocessed. The
// options give where the domain and labels are and which cells to leave
// out; options that restate the preprocessing (Channels, Transform,
// TransformChannels, Compensate, Linearize) must agree with p.
//
// An FCS channel chosen by its detector ($PnN) whose marker ($PnS)
// differs from the one the model recorded is an error: the file is of
// another panel. Files without a channel of the model are an error
// (*ChannelError) listing the model's channels and the files'.
//
// A nil p (a model that did not record its preprocessing) opens the files
// as Open does, with a warning.
func OpenFor(p *preprocess.Pipeline, paths []string, o Options) (*Input, error) {
	if p == nil {
		in, err := Open(paths, o)
		if err != nil {
			return nil, err
		}
		in.warn("the model does not record its preprocessing (fitted by an older dica, or through the library without it): the files are read with the options given, which must be those of the fit")
		return in, nil
	}
	if err := agree(p, o); err != nil {
		return nil, err
	}
	return open(paths, o, func(in *Input) error {
		switch in.Kind {
		case FCS:
			return in.openFCSFor(p)
		case Parquet, AnnData:
			return in.openTableFor(p)
		}
		return in.openCSVFor(p)
	})
}

// agree checks that the options that restate a model's preprocessing
// agree with it.
func agree(p *preprocess.Pipeline, o Options) error {
	if o.Channels != nil {
		same := len(o.Channels) == len(p.Channels)
		for j, ref := range o.Channels {
			same = same && channelIndex(p, ref) == j
		}
		if !same {
			return optErr("Channels", o.Channels, "the model reads the channels %s; leave the channels out to read them", strings.Join(quoted(p.Names()), ", "))
		}
	}
	contradict := func(opt string, v any, model string) error {
		if o.Preprocessed {
			return optErr(opt, v, "the data is said to be preprocessed already (Preprocessed)")
		}
		return optErr(opt, v, "contradicts the model, fitted with %s; leave it out to apply the model's preprocessing", model)
	}
	if o.Transform != "" {
		f, err := preprocess.ParseFunc(o.Transform)
		if err != nil {
			return &dataset.OptionError{Pkg: "ingest", Option: "Transform", Value: o.Transform, Err: unprefix(err)}
		}
		if o.Preprocessed || f.String() != p.TransformSpec() {
			return contradict("Transform", o.Transform, "the transform "+p.TransformSpec())
		}
	}
	if o.TransformChannels != nil {
		var names []string
		for _, ref := range o.TransformChannels {
			if j := channelIndex(p, ref); j >= 0 {
				names = append(names, p.Channels[j].Name)
			}
		}
		if o.Preprocessed || !slices.Equal(names, p.TransformChannels) {
			model := "the transform on " + strings.Join(p.TransformChannels, ", ")
			if p.TransformChannels == nil {
				model = "the transform on every channel"
			}
			return contradict("TransformChannels", o.TransformChannels, model)
		}
	}
	if o.Compensate && (o.Preprocessed || p.Compensation == nil) {
		return contradict("Compensate", true, "no compensation")
	}
	if o.Linearize && (o.Preprocessed || !p.Linearize) {
		return contradict("Linearize", true, "no linearization")
	}
	return nil
}
