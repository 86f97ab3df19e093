package ingest

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
)

// Raw is the data of an Input with every input channel as stored in the
// files: the rows of Input.Source, in the same order, for outputs that
// keep the raw values beside what a model makes of them.
type Raw struct {
	// Source delivers the rows: the same files, domains, labels and
	// left-out cells as the Input's, with the raw channels as inputs.
	Source dataset.Source
	// Params describes the raw channels of FCS files (with their
	// keywords), nil for other kinds.
	Params []fcs.Param
	// Keywords are the keywords the FCS files share that an output may
	// carry (fcs.Source.Keywords), nil for other kinds.
	Keywords []fcs.Keyword
}

// Raw opens the rows of in with every input channel of the files as
// stored: the numeric columns of CSV files but the domain, label and target
// columns (of dica's own outputs, the channels alone), every FCS
// parameter (the input's channels, when the files do not share one list of
// parameters, and the channels alone of dica's FCS output), the variables
// of an AnnData store's X, the numeric columns of Parquet files (of dica's
// outputs, the channels).
func (in *Input) Raw() (*Raw, error) {
	switch in.Kind {
	case FCS:
		return in.rawFCS()
	case Parquet, AnnData:
		_, domain, label := in.tableDefaults()
		var sel []string // every numeric column, every variable of X
		if in.Kind == Parquet && in.Layout != nil {
			sel = in.Layout.Names(RoleChannel)
		}
		src, err := in.tableSource(sel, domain, label, nil)
		return &Raw{Source: src}, err
	}
	return in.rawCSV()
}

// rawFCS opens the FCS files with every parameter as stored.
func (in *Input) rawFCS() (*Raw, error) {
	o := in.opts
	var sel []string
	if in.Layout != nil {
		sel = in.Layout.Names(RoleChannel)
	}
	_, domain, label, err := in.fcsCodes(sel)
	if err != nil {
		return nil, err
	}
	so := fcs.SourceOptions{Channels: sel, AllowTruncated: o.AllowTruncated, AllDataSets: o.AllDataSets, Scale: in.Pipeline != nil && in.Pipeline.Linearize}
	if sel == nil && (domain != "" || label != "") {
		so.Channels, _, _, err = in.fcsCodes(nil)
		if err != nil {
			return nil, err
		}
	}
	raw := &Input{Kind: FCS, Files: in.Files, opts: o}
	src, err := raw.fcsSource(so, domain, label)
	if err != nil && so.Channels == nil {
		// The files do not share one parameter list: the input channels.
		so.Channels = in.Source.Schema().Features
		src, err = raw.fcsSource(so, domain, label)
	}
	if err != nil {
		return nil, err
	}
	return &Raw{Source: raw.Source, Params: src.Params(), Keywords: src.Keywords()}, nil
}

// rawCSV opens the CSV files with every numeric column that is not the
// domain, a label or a target.
func (in *Input) rawCSV() (*Raw, error) {
	cs, ok := in.Source.(*csvio.Source)
	if !ok {
		return nil, errors.New("ingest: internal error: a CSV input without a CSV source")
	}
	co := in.csvOptions()
	in.layoutDefaults(&co.Domain, &co.Label)
	co.Header = csvio.NoHeader
	if cs.HasHeader() {
		co.Header = csvio.WithHeader
	}
	if in.Layout != nil {
		co.Features = in.Layout.Names(RoleChannel)
		src, err := csvio.NewSource(in.Files, co)
		return &Raw{Source: src}, err
	}
	all, err := csvio.NewSource(in.Files, co)
	if err != nil {
		return nil, err
	}
	// The columns a pass would read as inputs whose first rows are numbers:
	// one read of those rows, whatever the number of columns.
	num, err := all.NumericColumns(context.Background(), sniffRows)
	if err != nil {
		return nil, err
	}
	co.Features = co.Features[:0]
	for _, c := range all.FeatureColumns() {
		if _, ok := slices.BinarySearch(num, c); ok {
			co.Features = append(co.Features, strconv.Itoa(c+1))
		}
	}
	if len(co.Features) == 0 {
		return &Raw{Source: cs}, nil
	}
	src, err := csvio.NewSource(in.Files, co)
	return &Raw{Source: src}, err
}

// sniffRows is the number of first rows whose fields tell the numeric
// columns of CSV files.
const sniffRows = 64
