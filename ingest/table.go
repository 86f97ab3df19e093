package ingest

import (
	"fmt"
	"strings"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

// tableLayout reads the layout of a Parquet file or AnnData store that
// dica wrote (nil for others).
func (in *Input) tableLayout() error {
	var (
		l   *Layout
		err error
	)
	if in.Kind == AnnData {
		l, err = zarrLayout(in.Files[0])
	} else {
		l, err = parquetLayout(in.Files[0])
	}
	if err != nil {
		return err // names the file
	}
	in.Layout = l
	return nil
}

// tableDefaults returns the domain, label and default input columns of a
// Parquet file or AnnData store: the options', else those of dica's
// layout. For an AnnData store, X holds the inputs (role RoleInput).
func (in *Input) tableDefaults() (sel []string, domain, label string) {
	domain, label = in.opts.Domain, in.opts.Label
	def := in.layoutDefaults(&domain, &label)
	if in.Kind == AnnData {
		def = nil // X's variables; the store's layout lists them as inputs
		if in.Layout != nil {
			if domain != "" && !strings.Contains(domain, ":") && in.Layout.RoleOf(domain) == RoleDomain {
				domain = "obs:" + domain
			}
			if label != "" && !strings.Contains(label, ":") && in.Layout.RoleOf(label) == RoleLabel {
				label = "obs:" + label
			}
		}
	}
	sel = in.opts.Channels
	if sel == nil {
		sel = def
	}
	return sel, domain, label
}

// tableSource opens the Parquet files or the AnnData store with the
// columns sel and the reader transform row.
func (in *Input) tableSource(sel []string, domain, label string, row func([]float64)) (dataset.Source, error) {
	o := in.opts
	if in.Kind == AnnData {
		return anndata.NewSource(in.Files[0], anndata.Options{Features: sel, Domain: domain, Label: label,
			Target: o.Target, LabelsIgnore: o.LabelsIgnore, Transform: row})
	}
	return parquetio.NewSource(in.Files, parquetio.Options{Features: sel, Domain: domain, Label: label,
		Target: o.Target, LabelsIgnore: o.LabelsIgnore, Transform: row})
}

// storeInputs returns the preprocessing that the channels sel of the
// source hold already, by the layout of dica's output: an AnnData store's
// X holds the model's inputs after its preprocessing; a Parquet file's
// channels are raw.
func (in *Input) storeInputs(sel []string) (*preprocess.Pipeline, error) {
	l := in.Layout
	if in.Kind != AnnData || l == nil || l.Preprocessing == nil {
		return nil, nil
	}
	p, err := l.Preprocessing.Select(sel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Files[0], unprefix(err))
	}
	return p, nil
}

// openTable opens Parquet files or an AnnData store for a fit.
func (in *Input) openTable(tr preprocess.Func) error {
	if err := fcsOnly(in.opts, in.Kind); err != nil {
		return err
	}
	if err := in.tableLayout(); err != nil {
		return err
	}
	sel, domain, label := in.tableDefaults()
	d := &deferred{}
	src, err := in.tableSource(sel, domain, label, d.rowFunc(tr))
	if err != nil {
		return err
	}
	feats := src.Schema().Features
	applied, err := in.storeInputs(feats)
	if err != nil {
		return err
	}
	pipe := &preprocess.Pipeline{Format: in.Kind.String(), Transform: tr.String()}
	for j, f := range feats {
		c := preprocess.Channel{Name: f}
		if j < len(in.opts.Channels) {
			c.Ref = in.opts.Channels[j]
		}
		pipe.Channels = append(pipe.Channels, c)
	}
	if err := in.compile(pipe, d); err != nil {
		return err
	}
	if len(applied.Steps()) > 0 {
		// The store holds inputs already preprocessed: the model records
		// the whole preprocessing from the original files, and the reader
		// applies no step again.
		if tr.String() != "none" {
			return optErr("Transform", in.opts.Transform, "%s holds values preprocessed already (%s): a transform would apply twice; leave it out",
				in.Files[0], strings.Join(applied.Steps(), "; "))
		}
		pipe = applied
		in.applied = applied
	}
	in.Source, in.Pipeline = src, pipe
	return nil
}

// openTableFor opens Parquet files or an AnnData store for a model whose
// preprocessing is p: the model's channels by name.
func (in *Input) openTableFor(p *preprocess.Pipeline) error {
	if err := fcsOnly(in.opts, in.Kind); err != nil {
		return err
	}
	if err := in.tableLayout(); err != nil {
		return err
	}
	_, domain, label := in.tableDefaults()
	names := p.Names()
	applied, err := in.storeInputs(names)
	if err != nil {
		return err
	}
	in.applied = applied
	run, err := in.remaining(p)
	if err != nil {
		return err
	}
	c, err := run.Compile()
	if err != nil {
		return fileSteps(p, in.Kind, err)
	}
	src, err := in.tableSource(names, domain, label, c.Row())
	if err != nil {
		return err
	}
	in.Source, in.Pipeline = src, p
	return nil
}

// parquetLayout reads the layout of a Parquet file dica wrote, from the
// key-value metadata dica.layout of its footer (nil for other files).
func parquetLayout(path string) (*Layout, error) {
	kv, err := parquetio.KeyValues(path)
	if err != nil {
		return nil, err
	}
	v, ok := kv[MetadataLayout]
	if !ok {
		return nil, nil
	}
	return UnmarshalLayout([]byte(v))
}

// zarrLayout reads the layout of an AnnData store dica wrote, from
// uns["dica"]["layout"] (nil for other stores).
func zarrLayout(path string) (*Layout, error) {
	uns, err := anndata.ReadDicaUns(path)
	if err != nil {
		return nil, err
	}
	v, ok := uns["layout"]
	if !ok {
		return nil, nil
	}
	return UnmarshalLayout([]byte(v))
}

// MetadataLayout is the key of a Parquet file's footer metadata that holds
// the Layout of dica's Parquet output (uns["dica"]["layout"] holds it in
// an AnnData store, the keyword DICA_LAYOUT in an FCS file).
const MetadataLayout = "dica.layout"
