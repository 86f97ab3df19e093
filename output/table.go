package output

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

// parquetWriter writes Parquet with the CSV output's columns, typed:
// source, domain and label as strings, event as int64, the rest float64.
// The footer's key-value metadata records the model (dica.method,
// dica.model_sha256, ...) and the layout (dica.layout).
type parquetWriter struct {
	j    *job
	w    *parquetio.Writer
	rows parquetio.Rows
	// labNames and labCodes hold the label column's names and codes.
	labNames []string
	labCodes []int
}

func newParquetWriter(j *job, path string) (*parquetWriter, error) {
	l := j.layout()
	lj, err := ingest.MarshalLayout(l)
	if err != nil {
		return nil, err
	}
	md := map[string]string{ingest.MetadataLayout: string(lj)}
	for _, kv := range j.provenanceKeys() {
		md["dica."+kv[0]] = kv[1]
	}
	var cols []parquetio.Column
	for _, c := range l.Columns {
		k := parquetio.Float64
		switch c.Role {
		case ingest.RoleSource, ingest.RoleDomain, ingest.RoleLabel:
			k = parquetio.Text
		case ingest.RolePredicted:
			if j.targets == nil { // a population; predicted targets are floats
				k = parquetio.Text
			}
		case ingest.RoleEvent:
			k = parquetio.Int64
		}
		cols = append(cols, parquetio.Column{Name: c.Name, Kind: k})
	}
	// Row groups of 32,768 cells: a few MB buffered whatever the number of
	// cells.
	w, err := parquetio.Create(path, parquetio.WriterOptions{RowGroupRows: 1 << 15, Columns: cols, Metadata: md})
	if err != nil {
		return nil, err
	}
	return &parquetWriter{j: j, w: w}, nil
}

func (w *parquetWriter) write(c *cells) error {
	j := w.j
	r := &w.rows
	r.N = c.n
	text := 2 // source, domain, [label], [predicted]
	if c.lab != nil {
		text++
	}
	if c.pred != nil {
		text++
	}
	for len(r.Codes) < text {
		r.Codes, r.Names = append(r.Codes, nil), append(r.Names, nil)
	}
	r.Codes, r.Names = r.Codes[:text], r.Names[:text]
	for len(r.Ints) < 1 {
		r.Ints = append(r.Ints, nil)
	}
	src, ev := r.Codes[0][:0], r.Ints[0][:0]
	for i := 0; i < c.n; i++ {
		f, e := -1, int64(0)
		if c.b.HasOrigins() {
			f, e = c.b.File[i], c.b.Event[i]
		}
		src, ev = append(src, max(f, 0)), append(ev, e)
	}
	names := j.sources
	if len(names) == 0 {
		names = []string{""}
	}
	r.Codes[0], r.Names[0], r.Ints[0] = src, names, ev
	r.Codes[1], r.Names[1] = c.dom, j.doms.names
	k := 2
	if c.lab != nil {
		// An unlabelled cell has the empty label, after the model's.
		names := append(w.labNames[:0], j.cls.names...)
		w.labNames = append(names, "")
		w.labCodes = w.labCodes[:0]
		for _, l := range c.lab {
			if l < 0 {
				l = len(j.cls.names)
			}
			w.labCodes = append(w.labCodes, l)
		}
		r.Codes[k], r.Names[k] = w.labCodes, w.labNames
		k++
	}
	if c.pred != nil {
		r.Codes[k], r.Names[k] = c.pred, c.predNames
	}
	fl := r.Floats[:0]
	for i := 0; i < c.n; i++ {
		fl = append(fl, c.raw[i*c.rawD:(i+1)*c.rawD]...)
		if j.o.Inputs {
			fl = append(fl, c.b.Row(i)...)
		}
		fl = append(fl, c.z.RawRowView(i)...)
		fl = append(fl, c.vals[i*c.nt:(i+1)*c.nt]...)
		if c.pred != nil {
			fl = append(fl, c.conf[i])
		}
	}
	r.Floats = fl
	return w.w.Write(r)
}

func (w *parquetWriter) commit() error { return w.w.Commit() }
func (w *parquetWriter) abort()        { w.w.Abort() }

// zarrWriter writes an AnnData store that anndata.read_zarr reads: X the
// model's inputs as the model used them (after preprocessing), var their
// names and var["preprocessing"] what was applied to each, obs the cells'
// names ("source:event", e.g. "sample1:10" for row 10 of sample1.csv),
// domain and label, obsm["X_<method>"] the components, uns["dica"] the
// model's provenance, its preprocessing and the layout (JSON).
type zarrWriter struct {
	j *job
	w *anndata.Writer
	// obs holds the values of the extra obs columns of a block; vals
	// those of each predicted target.
	obs  []anndata.ObsValues
	vals [][]float64
}

func newZarrWriter(j *job, path string) (*zarrWriter, error) {
	m := j.m
	c := m.Config()
	meth := strings.ToLower(c.Method.String())
	lj, err := ingest.MarshalLayout(j.layout())
	if err != nil {
		return nil, err
	}
	pj, err := json.Marshal(m.Preprocessing())
	if err != nil {
		return nil, err
	}
	vars := j.in.Source.Schema().Features
	pre := make([]string, len(vars))
	for k, v := range vars {
		pre[k] = preprocessingOf(m.Preprocessing(), v)
	}
	// Chunks of 16,384 cells: a few MB in flight per array, whatever the
	// number of cells (a million cells make 62 chunks per array).
	var obs []anndata.ObsColumn
	if j.predNames != nil {
		obs = []anndata.ObsColumn{{Name: "predicted", Categorical: true}, {Name: "confidence"}}
	}
	for _, name := range j.targetColumns() {
		obs = append(obs, anndata.ObsColumn{Name: name})
	}
	w, err := anndata.Create(path, anndata.WriterOptions{
		ChunkRows: 1 << 14, Obs: obs,
		Vars: vars, ObsmKey: "X_" + meth, Components: m.Positive, Targets: j.in.Source.Schema().Targets,
		Sources:    j.sources,
		VarColumns: []anndata.VarColumn{{Name: "preprocessing", Values: pre}},
		Uns: &anndata.Uns{Method: meth, Sigma: j.prov.sigma, Rank: j.prov.rank, Eigenvalues: j.prov.eigenvalues, Digest: j.prov.digest,
			Layout: string(lj), Preprocessing: string(pj)},
	})
	if err != nil {
		return nil, err
	}
	return &zarrWriter{j: j, w: w}, nil
}

// preprocessingOf describes the preprocessing of the model's input named
// name: its steps ("log1p", "compensation with each file's own
// $SPILLOVER; asinh:150"), "none" for none.
func preprocessingOf(p *preprocess.Pipeline, name string) string {
	if p == nil {
		return "not recorded"
	}
	var steps []string
	if p.Linearize {
		steps = append(steps, "linearized")
	}
	if s := p.Compensation; s != nil && (s.PerFile || slices.Contains(s.Channels, name)) {
		steps = append(steps, "compensated")
	}
	if tr := p.TransformSpec(); tr != "none" && (p.TransformChannels == nil || slices.Contains(p.TransformChannels, name)) {
		steps = append(steps, tr)
	}
	if len(steps) == 0 {
		return "none"
	}
	return strings.Join(steps, "; ")
}

func (w *zarrWriter) write(c *cells) error {
	cells := &anndata.Cells{Block: c.coded(), Components: c.z, Domains: w.j.doms.names, Classes: w.j.cls.names}
	if c.pred != nil {
		cells.Obs = []anndata.ObsValues{{Codes: c.pred, Names: c.predNames}, {Values: c.conf}}
	}
	if c.vals != nil {
		// One column per target, from the cells' rows of targets.
		for len(w.vals) < c.nt {
			w.vals = append(w.vals, nil)
		}
		w.obs = w.obs[:0]
		for t := range c.nt {
			v := growFloats(w.vals[t], c.n)
			for i := range v {
				v[i] = c.vals[i*c.nt+t]
			}
			w.vals[t] = v
			w.obs = append(w.obs, anndata.ObsValues{Values: v})
		}
		cells.Obs = w.obs
	}
	return w.w.WriteCells(cells)
}

func (w *zarrWriter) commit() error { return w.w.Commit() }
func (w *zarrWriter) abort()        { w.w.Abort() }
