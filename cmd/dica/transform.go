package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

const transformUsage = `Usage: dica transform --model MODEL --data FILES --out OUT.csv|.fcs|.parquet|.zarr

Project cells with a fitted model. The model applies the preprocessing it
was fitted with (channels, --linearize, --compensate, --transform): give the
raw files, as for the fit; 'dica info MODEL' shows the preprocessing.

The output has, for each cell, its domain (the sample), its label when the
input has labels, every input channel as read (raw values), the model's
inputs after preprocessing with --write-transformed, and the components,
named after the method (DICA1..DICAk, UDICA1.., KPCA1.., COIR1..). The
format follows the --out extension:

  .csv      RFC 4180, the columns above
  .fcs      FCS 3.1, float32, readable by FlowJo, FlowKit and flowCore: every
            input channel with its keywords, the components, then LABEL and
            DOMAIN channels whose codes are named by the keywords DICA_LABELk
            and DICA_DOMAINk; the source files' keywords are kept and DICA_*
            keywords record the model
  .parquet  the CSV's columns, float64, in row groups (pandas, Arrow, Spark)
  .zarr     an AnnData store (Zarr v2) for scanpy: X the model's inputs as
            the model used them, obs the domain and label,
            obsm["X_dica"] (X_udica, ...) the components, uns["dica"] the
            model; open it with anndata.read_zarr (h5ad: convert it with
            anndata.read_zarr(...).write_h5ad(...))

Every output is streamed (memory does not grow with the cells) and written
to a temporary file (or folder) renamed over --out only when complete: an
error or an interruption leaves a previous --out as it was.

Examples:

  dica transform --model cytof.dica --data sample16.csv --labels labels16.csv \
      --out sample16_dica.csv
  dica transform --model gvhd.dica --data new.fcs --out new_dica.fcs

  # Data that is already preprocessed (columns named as the model's inputs):
  dica transform --model cytof.dica --data ready.csv --preprocess none --out z.csv

Preprocessing flags (--transform, --compensate, --linearize,
--transform-channels) are not needed; one that contradicts the model is an
error. A model from a dica that did not record its preprocessing uses the
flags as given (the same as for the fit).

Centering (--center): train (the default) subtracts the training cells' mean
feature, so each cell is projected on its own and a new sample keeps its
shift; batch subtracts the mean of all the cells given, and domain the mean
of each file's (or --domain's) own cells, which removes a new sample's
overall shift (transductive, as the authors' dica.m does; one cell alone
projects to 0). Models fitted with --form paper default to batch, as dica.m.
--scale divides component j by sqrt(gamma_j) (dica.m's scaling).
` + dataHelp

// transformFlags are the flags of dica transform besides the data flags.
type transformFlags struct {
	model, out, center, preprocess string
	quiet, scale, writeTransformed bool
}

func runTransform(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("transform", transformUsage, stderr)
	var df dataFlags
	var tf transformFlags
	df.register(fs, true)
	fs.StringVar(&tf.model, "model", "", "model `file` written by dica fit")
	fs.StringVar(&tf.out, "out", "", "output `file` (.csv or .fcs); - for CSV on stdout")
	fs.BoolVar(&tf.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&tf.center, "center", "", "centering: train, batch or domain (default: train; batch for --form paper models)")
	fs.BoolVar(&tf.scale, "scale", false, "divide component j by sqrt(gamma_j)")
	fs.StringVar(&tf.preprocess, "preprocess", "model", "`model`: apply the model's preprocessing; none: the data is already preprocessed")
	fs.BoolVar(&tf.writeTransformed, "write-transformed", false, "also write the model's inputs after preprocessing (columns NAME_t)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if tf.model == "" || tf.out == "" {
		return usageErr("--model and --out are required")
	}
	ext := strings.ToLower(filepath.Ext(strings.TrimRight(tf.out, "/")))
	if ext != ".zarr" {
		if err := checkOutputs([]string{tf.out}, tf.model); err != nil {
			return err
		}
	}
	switch {
	case tf.out == "-", ext == ".csv", ext == ".fcs", ext == ".parquet", ext == ".parq", ext == ".zarr":
	case ext == ".h5ad":
		return usageErr("--out %s: h5ad (HDF5) cannot be written in pure Go; write an AnnData Zarr store (--out %s.zarr) and convert it in Python: anndata.read_zarr(\"%s.zarr\").write_h5ad(\"%s\")",
			tf.out, strings.TrimSuffix(tf.out, filepath.Ext(tf.out)), strings.TrimSuffix(tf.out, filepath.Ext(tf.out)), tf.out)
	default:
		return usageErr("--out %s: want a .csv, .fcs, .parquet file or a .zarr AnnData store (or - for CSV on the standard output)", tf.out)
	}
	if ext == ".zarr" {
		if err := anndata.CheckOutput(tf.out, tf.model); err != nil {
			return usageErr("%v", err)
		}
	}
	m, err := dica.LoadContext(ctx, tf.model, dica.LoadOptions{})
	if err != nil {
		return err
	}
	paper := m.Config().Solver == dica.Exact && m.Config().Form == dica.Paper
	mode := tf.center
	switch mode {
	case "":
		mode = "train"
		if paper {
			mode = "batch"
		}
	case "train", "batch", "domain":
	default:
		return usageErr("--center %q: want train, batch or domain", mode)
	}
	if tf.scale && paper {
		return usageErr("--scale: a --form paper model's components are already scaled by 1/sqrt(gamma)")
	}
	df.markSet(fs)
	if err := df.fromModel(m, tf.preprocess, stderr); err != nil {
		return err
	}
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	inputs := slices.Concat(in.files, in.labels, []string{tf.model})
	if ext == ".zarr" {
		if err := anndata.CheckOutput(tf.out, inputs...); err != nil {
			return usageErr("%v", err)
		}
	} else if err := checkOutputs([]string{tf.out}, inputs...); err != nil {
		return err
	}
	raw, rawParams, err := df.rawSource(in)
	if err != nil {
		return err
	}
	warnInput(stderr, in)
	pr := newProgress(tf.quiet)
	defer pr.done()
	pr.setTotal(in.src)
	p := &projector{m: m, mode: mode, scale: tf.scale}
	if err := p.prepare(ctx, in.src, pr); err != nil {
		return err
	}
	t := &transformJob{p: p, in: in, raw: raw, rawParams: rawParams, pr: pr, withTransformed: tf.writeTransformed}
	switch ext {
	case ".fcs":
		return t.writeFCS(ctx, tf.out, tf.model)
	case ".zarr":
		return t.writeZarr(ctx, tf.out, tf.model)
	case ".parquet", ".parq":
		return t.writeParquet(ctx, tf.out, tf.model)
	}
	return t.writeCSV(ctx, tf.out, stdout)
}

// fromModel sets the data flags from the model's recorded preprocessing
// (mode "model"), or for data that is already preprocessed (mode "none"). A
// preprocessing flag the user set that contradicts the model is an error.
func (d *dataFlags) fromModel(m *dica.Model, mode string, stderr io.Writer) error {
	p := m.Preprocessing()
	set := d.set
	d.defaults = m.Inputs()
	prepFlags := []string{"transform", "transform-channels", "compensate", "linearize"}
	switch mode {
	case "none":
		for _, f := range prepFlags {
			if set[f] {
				return usageErr("--%s with --preprocess none: the data is said to be preprocessed already", f)
			}
		}
		return nil
	case "model":
	default:
		return usageErr("--preprocess %q: want model or none", mode)
	}
	if p == nil {
		fmt.Fprintln(stderr, "dica transform: the model does not record its preprocessing (it was fitted by an older dica or through the library without it): give the same --transform, --compensate and --linearize as for the fit")
		return nil
	}
	refs := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		refs[i] = c.Name
		if c.Ref != "" {
			refs[i] = c.Ref
		}
	}
	d.defaults = refs
	contradict := func(flagName, given, model string) error {
		return usageErr("--%s %s contradicts the model, fitted with %s; leave --%s out to apply the model's preprocessing, or give --preprocess none for data that is already preprocessed",
			flagName, given, model, flagName)
	}
	if set["transform"] {
		f, err := preprocess.ParseFunc(d.transform)
		if err != nil {
			return usageErr("--transform: %v", err)
		}
		if f.String() != p.TransformSpec() {
			return contradict("transform", d.transform, "--transform "+p.TransformSpec())
		}
	}
	d.transform = p.TransformSpec()
	tc := strings.Join(p.TransformChannels, ",")
	if set["transform-channels"] && !slices.Equal(splitList(d.transformChans), p.TransformChannels) {
		model := "--transform-channels " + tc
		if p.TransformChannels == nil {
			model = "the transform on every channel"
		}
		return contradict("transform-channels", d.transformChans, model)
	}
	if p.TransformChannels != nil {
		d.transformChans = tc
	}
	if set["linearize"] && d.linearize != p.Linearize {
		return contradict("linearize", strconv.FormatBool(d.linearize), fmt.Sprintf("--linearize=%v", p.Linearize))
	}
	d.linearize = p.Linearize
	comp := p.Compensation != nil
	if set["compensate"] && d.compensate != comp {
		return contradict("compensate", strconv.FormatBool(d.compensate), fmt.Sprintf("--compensate=%v", comp))
	}
	d.compensate = false
	if s := p.Compensation; s != nil {
		if s.PerFile {
			d.compensate = true
		} else {
			k := len(s.Channels)
			d.spillover = &fcs.Spillover{Keyword: s.Keyword, Channels: slices.Clone(s.Channels), Matrix: mat.NewDense(k, k, slices.Clone(s.Matrix))}
		}
	}
	return nil
}

// rawSource returns a source of the same rows as in.src with every input
// channel as read (no compensation, no transform), and for FCS input the
// parameters of those channels. When the FCS files do not share one
// parameter list, the raw channels are the model's inputs.
func (d *dataFlags) rawSource(in *input) (dataset.Source, []fcs.Param, error) {
	switch in.kind {
	case "zarr":
		src, err := anndata.NewSource(in.files[0], anndata.Options{Domain: d.domain, Label: d.label,
			Target: splitList(d.target), LabelsIgnore: splitList(d.labelsIgnore)})
		return src, nil, err
	case "parquet":
		src, err := parquetio.NewSource(in.files, parquetio.Options{Domain: d.domain, Label: d.label,
			Target: splitList(d.target), LabelsIgnore: splitList(d.labelsIgnore)})
		return src, nil, err
	}
	if in.fcs {
		o := fcs.SourceOptions{AllowTruncated: d.allowTruncated, Scale: d.linearize, AllDataSets: d.allDataSets}
		src, err := fcs.NewSource(in.files, o)
		if err != nil {
			o.Channels = in.src.Schema().Features
			if src, err = fcs.NewSource(in.files, o); err != nil {
				return nil, nil, err
			}
		}
		return src, src.Params(), nil
	}
	cs, ok := in.src.(*csvio.Source)
	if !ok {
		return nil, nil, fmt.Errorf("internal error: CSV input is a %T", in.src)
	}
	o := csvio.Options{
		Domain:       d.domain,
		Label:        d.label,
		Target:       splitList(d.target),
		LabelsIgnore: splitList(d.labelsIgnore),
		LabelFiles:   in.labels,
		Header:       csvio.NoHeader,
		MaxLineBytes: d.maxLineBytes,
	}
	if cs.HasHeader() {
		o.Header = csvio.WithHeader
	}
	// Every column but the domain, label and targets, less those that do
	// not hold numbers (found by reading the first rows).
	all, err := csvio.NewSource(in.files, o)
	if err != nil {
		return nil, nil, err
	}
	var cand []int // file columns
	cand = all.FeatureColumns()
	for len(cand) > 0 {
		o.Features = o.Features[:0]
		for _, c := range cand {
			o.Features = append(o.Features, strconv.Itoa(c+1))
		}
		src, err := csvio.NewSource(in.files, o)
		if err != nil {
			return nil, nil, err
		}
		bad, err := firstBadColumn(src)
		if err != nil {
			return nil, nil, err
		}
		if bad < 0 {
			return src, nil, nil
		}
		cand = slices.DeleteFunc(cand, func(c int) bool { return c == bad })
	}
	return cs, nil, nil
}

// firstBadColumn reads the first rows of src and returns the 0-based file
// column of a field that is not a number, -1 when they parse, or another
// error.
func firstBadColumn(src *csvio.Source) (int, error) {
	r, err := src.Open(context.Background())
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var b dataset.Block
	_, err = r.Read(&b, 64)
	var pe *csvio.ParseError
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return -1, nil
	case errors.As(err, &pe) && pe.Column > 0 && strings.Contains(pe.Msg, "number"):
		return pe.Column - 1, nil
	}
	return 0, err
}

// projector projects a stream with the model, then centers and scales the
// components as asked: z = (W^T (phi(x) - mu) - c) / s, with c = 0 (train),
// the mean of z over all cells (batch) or over the cell's domain (domain),
// and s_j = sqrt(gamma_j) with --scale. Since z is affine in phi(x),
// subtracting the batch mean of z is centering phi(x) with the batch mean.
type projector struct {
	m     *dica.Model
	mode  string
	scale bool
	shift [][]float64 // per domain index (batch: the same slice for all)
}

// prepare makes the first pass that batch and domain centering need.
func (p *projector) prepare(ctx context.Context, src dataset.Source, pr *progress) error {
	if p.mode == "train" {
		return nil
	}
	k := p.m.Positive
	var sums [][]float64
	var counts []float64
	var rows int64
	err := p.m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, _, _ []string) error {
		for i := 0; i < b.Rows; i++ {
			g := 0
			if p.mode == "domain" {
				g = b.Domain[i]
			}
			for len(sums) <= g {
				sums, counts = append(sums, make([]float64, k)), append(counts, 0)
			}
			for j, v := range z.RawRowView(i) {
				sums[g][j] += v
			}
			counts[g]++
		}
		rows += int64(b.Rows)
		pr.update("center", rows)
		return nil
	})
	if err != nil {
		return err
	}
	for g := range sums {
		for j := range sums[g] {
			sums[g][j] /= max(counts[g], 1)
		}
	}
	p.shift = sums
	return nil
}

// post centers and scales the projections z of the rows of b in place.
func (p *projector) post(b *dataset.Block, z *mat.Dense) {
	if p.shift == nil && !p.scale {
		return
	}
	for i := 0; i < b.Rows; i++ {
		row := z.RawRowView(i)
		if p.shift != nil {
			g := 0
			if p.mode == "domain" {
				g = b.Domain[i]
			}
			for j, c := range p.shift[g] {
				row[j] -= c
			}
		}
		if p.scale {
			for j := range row {
				row[j] /= math.Sqrt(p.m.Eigenvalues[j])
			}
		}
	}
}

// componentNames names the model's components after its method: DICA1,
// UDICA1, KPCA1 or COIR1, ...
func componentNames(m *dica.Model) []string {
	s := make([]string, m.Positive)
	for j := range s {
		s[j] = strings.ToUpper(m.Config().Method.String()) + strconv.Itoa(j+1)
	}
	return s
}

// outRows is one block of the output: the rows of the model's source (its
// preprocessed inputs, domains and labels), the same rows' raw channels, and
// their projections.
type outRows struct {
	b       *dataset.Block // model inputs, domain, label
	raw     []float64      // rows x rawD
	z       *mat.Dense
	domains []string
	classes []string
}

// transformJob streams the model's source and the raw source side by side.
type transformJob struct {
	p               *projector
	in              *input
	raw             dataset.Source
	rawParams       []fcs.Param
	pr              *progress
	withTransformed bool
}

// stream calls emit with each block of the output, in row order.
func (t *transformJob) stream(ctx context.Context, pass string, emit func(o *outRows) error) error {
	rr, err := t.raw.Open(ctx)
	if err != nil {
		return err
	}
	defer rr.Close()
	rawD := t.raw.Schema().D()
	var (
		rb   dataset.Block
		buf  []float64 // raw rows read ahead of the model's
		doms []int
		rows int64
	)
	// fill reads raw rows until buf holds at least k of them.
	fill := func(k int) error {
		for len(doms) < k {
			n, err := rr.Read(&rb, 4096)
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("internal error: the raw channels ended before the model's inputs")
			}
			if err != nil {
				return err
			}
			buf = append(buf, rb.X[:n*rawD]...)
			doms = append(doms, rb.Domain[:n]...)
		}
		return nil
	}
	return t.p.m.TransformStream(ctx, t.in.src, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		if err := fill(b.Rows); err != nil {
			return err
		}
		if !slices.Equal(doms[:b.Rows], b.Domain[:b.Rows]) {
			return fmt.Errorf("internal error: the raw channels and the model's inputs disagree on the rows")
		}
		t.p.post(b, z)
		if err := emit(&outRows{b: b, raw: buf[:b.Rows*rawD], z: z, domains: domains, classes: classes}); err != nil {
			return err
		}
		buf = append(buf[:0], buf[b.Rows*rawD:]...)
		doms = append(doms[:0], doms[b.Rows:]...)
		rows += int64(b.Rows)
		t.pr.update(pass, rows)
		return nil
	})
}

// columns returns the output's channel columns: the raw channels, then the
// preprocessed inputs with --write-transformed.
func (t *transformJob) columns() []string {
	cols := slices.Clone(t.raw.Schema().Features)
	if t.withTransformed {
		for _, f := range t.in.src.Schema().Features {
			cols = append(cols, f+"_t")
		}
	}
	return cols
}

// writeCSV writes the output as CSV to path ("-": stdout).
func (t *transformJob) writeCSV(ctx context.Context, path string, stdout io.Writer) error {
	var (
		w   io.Writer = stdout
		out *atomicfile.File
	)
	if path != "-" {
		f, err := atomicfile.Create(path)
		if err != nil {
			return err
		}
		defer f.Abort()
		w, out = f, f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sc := t.in.src.Schema()
	head := []string{"domain"}
	if sc.Labelled {
		head = append(head, "label")
	}
	head = append(head, t.columns()...)
	head = append(head, componentNames(t.p.m)...)
	cw := csv.NewWriter(bw)
	if err := cw.Write(head); err != nil {
		return err
	}
	cw.Flush()
	var (
		line    []byte
		domText []string // CSV field of each domain name
		clsText []string
	)
	err := t.stream(ctx, "transform", func(o *outRows) error {
		domText = csvFields(domText, o.domains)
		clsText = csvFields(clsText, o.classes)
		b, rawD := o.b, len(o.raw)/max(o.b.Rows, 1)
		for i := 0; i < b.Rows; i++ {
			line = append(line[:0], domText[b.Domain[i]]...)
			if b.Label != nil {
				line = append(line, ',')
				line = append(line, clsText[b.Label[i]]...)
			}
			for _, v := range o.raw[i*rawD : (i+1)*rawD] {
				line = append(line, ',')
				line = strconv.AppendFloat(line, v, 'g', -1, 64)
			}
			if t.withTransformed {
				for _, v := range b.Row(i) {
					line = append(line, ',')
					line = strconv.AppendFloat(line, v, 'g', -1, 64)
				}
			}
			for _, v := range o.z.RawRowView(i) {
				line = append(line, ',')
				line = strconv.AppendFloat(line, v, 'g', 10, 64)
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if out != nil {
		return out.Commit()
	}
	return nil
}

// csvFields extends fields to hold the CSV field of each name, quoted as
// encoding/csv quotes it (RFC 4180).
func csvFields(fields, names []string) []string {
	for _, n := range names[len(fields):] {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write([]string{n})
		w.Flush()
		fields = append(fields, strings.TrimSuffix(b.String(), "\n"))
	}
	return fields
}

// writeFCS writes the output as FCS 3.1 float32, streaming: a first pass
// counts the cells and finds each column's range ($TOT and $PnR come before
// the data in an FCS file), a second writes them, so no cell is held in
// memory.
func (t *transformJob) writeFCS(ctx context.Context, path, modelPath string) error {
	o := newFCSOut(t)
	if err := o.scan(ctx); err != nil {
		return err
	}
	params, err := o.params()
	if err != nil {
		return err
	}
	kw, err := t.keywords(modelPath, o.domains, o.classes, o.labelled)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := fcs.NewWriter(bw, &fcs.DataSet{Params: params, Keywords: kw}, int(o.rows))
	if err != nil {
		return err
	}
	err = t.stream(ctx, "transform", func(r *outRows) error {
		for i := 0; i < r.b.Rows; i++ {
			e := o.event(r, i)
			if o.labelled {
				e = append(e, float64(r.b.Label[i]+1))
			}
			e = append(e, float64(r.b.Domain[i]+1))
			if err := w.WriteEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// fcsOut is the state of an FCS output: its columns (the raw channels, the
// preprocessed inputs with --write-transformed, the components), their
// ranges, and the cells, domains and classes of the scan.
type fcsOut struct {
	t                *transformJob
	cols             []string
	lo, hi           []float64
	logCols          []int // raw channels written as their linear values
	ev               []float64
	rows             int64
	domains, classes []string
	labelled         bool
}

func newFCSOut(t *transformJob) *fcsOut {
	o := &fcsOut{t: t, cols: t.columns(), labelled: t.in.src.Schema().Labelled}
	nc := len(o.cols) + t.p.m.Positive
	o.lo, o.hi = make([]float64, nc), make([]float64, nc)
	for j := range o.lo {
		o.lo[j], o.hi[j] = math.Inf(1), math.Inf(-1)
	}
	o.ev = make([]float64, 0, nc+2)
	// Float data is linear: a log-amplified channel read as stored (without
	// --linearize) is written as its linear value, $PnE 0,0. A channel read
	// with --linearize was divided by its gain: its $PnG becomes 1.
	pp := t.p.m.Preprocessing()
	linearize := t.in.fcs && pp != nil && pp.Linearize
	for j := range t.rawParams {
		if linearize {
			t.rawParams[j].Gain = 1
		} else if t.rawParams[j].Decades > 0 {
			o.logCols = append(o.logCols, j)
		}
	}
	return o
}

// event returns the values of row i of r in the output's columns (reused
// from one call to the next).
func (o *fcsOut) event(r *outRows, i int) []float64 {
	rawD := len(r.raw) / r.b.Rows
	o.ev = append(o.ev[:0], r.raw[i*rawD:(i+1)*rawD]...)
	for _, j := range o.logCols {
		o.ev[j] = o.t.rawParams[j].Linear(o.ev[j])
	}
	if o.t.withTransformed {
		o.ev = append(o.ev, r.b.Row(i)...)
	}
	return append(o.ev, r.z.RawRowView(i)...)
}

// scan makes the first pass: the number of cells, the range of every
// column, the domains and classes.
func (o *fcsOut) scan(ctx context.Context) error {
	err := o.t.stream(ctx, "scan", func(r *outRows) error {
		for i := 0; i < r.b.Rows; i++ {
			for j, v := range o.event(r, i) {
				o.lo[j], o.hi[j] = min(o.lo[j], v), max(o.hi[j], v)
			}
		}
		o.rows += int64(r.b.Rows)
		o.domains, o.classes = r.domains, r.classes
		return nil
	})
	if err == nil && o.rows == 0 {
		err = fmt.Errorf("no cells to write")
	}
	return err
}

// params returns the output's parameters: the input channels with their
// keywords, the components, then LABEL and DOMAIN.
func (o *fcsOut) params() ([]fcs.Param, error) {
	t, m := o.t, o.t.p.m
	params := make([]fcs.Param, 0, len(o.lo)+2)
	for j, c := range o.cols {
		p := fcs.Param{Name: c}
		if j < len(t.rawParams) {
			p = t.rawParams[j]
		} else if j >= len(t.raw.Schema().Features) {
			p.Label = "model input after preprocessing"
		}
		fp, err := p.ForFloat(o.lo[j], o.hi[j])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	method := strings.ToUpper(m.Config().Method.String())
	for j, c := range componentNames(m) {
		k := len(o.cols) + j
		fp, err := fcs.Param{Name: c, Label: method + " component " + strconv.Itoa(j+1)}.ForFloat(o.lo[k], o.hi[k])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	if o.labelled {
		params = append(params, fcs.Param{Name: "LABEL", Label: "label number (DICA_LABELk)", Range: float64(len(o.classes) + 1)})
	}
	return append(params, fcs.Param{Name: "DOMAIN", Label: "domain number (DICA_DOMAINk)", Range: float64(len(o.domains) + 1)}), nil
}

// modelDigest returns the SHA-256 of the model file, in hexadecimal.
func modelDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// writeZarr writes the output as an AnnData store (Zarr v2) that
// anndata.read_zarr reads: X the model's inputs as the model used them
// (after preprocessing), var their names, obs the domain and label,
// obsm["X_<method>"] the components and uns["dica"] the model's method,
// sigma, rank, eigenvalues and digest. Chunks are written as the cells
// stream; the store replaces --out only when complete.
func (t *transformJob) writeZarr(ctx context.Context, path, modelPath string) error {
	m := t.p.m
	c := m.Config()
	digest, err := modelDigest(modelPath)
	if err != nil {
		return err
	}
	meth := strings.ToLower(c.Method.String())
	rank := c.Rank
	if c.Solver == dica.Exact {
		rank = 0
	}
	// Chunks of 16,384 cells: a few MB in flight per array, whatever the
	// number of cells (a million cells make 62 chunks per array).
	w, err := anndata.Create(path, anndata.WriterOptions{
		ChunkRows: 1 << 14,
		Vars:      t.in.src.Schema().Features, ObsmKey: "X_" + meth, Components: m.Positive, Targets: t.in.src.Schema().Targets,
		Uns: &anndata.Uns{Method: meth, Sigma: sigmaOf(c.Kernel), Rank: rank, Eigenvalues: m.Eigenvalues[:m.Positive], Digest: digest},
	})
	if err != nil {
		return err
	}
	defer w.Abort()
	err = t.stream(ctx, "transform", func(o *outRows) error { return w.WriteBlock(o.b, o.z, o.domains, o.classes) })
	if err != nil {
		return err
	}
	return w.Commit()
}

// writeParquet writes the output as a Parquet file with the columns of
// the CSV output, in row groups as the cells stream.
func (t *transformJob) writeParquet(ctx context.Context, path, modelPath string) error {
	m := t.p.m
	c := m.Config()
	digest, err := modelDigest(modelPath)
	if err != nil {
		return err
	}
	cols := t.columns()
	// Row groups of 32,768 cells: a few MB buffered whatever the number of
	// cells.
	w, err := parquetio.Create(path, parquetio.WriterOptions{RowGroupRows: 1 << 15, Vars: cols, Components: componentNames(m), Metadata: map[string]string{
		"dica.method": strings.ToUpper(c.Method.String()), "dica.model_sha256": digest,
		"dica.sigma": strconv.FormatFloat(sigmaOf(c.Kernel), 'g', -1, 64), "dica.preprocessing": m.Preprocessing().String(),
	}})
	if err != nil {
		return err
	}
	defer w.Abort()
	var x []float64
	err = t.stream(ctx, "transform", func(o *outRows) error {
		b, rawD := o.b, len(o.raw)/max(o.b.Rows, 1)
		x = x[:0]
		for i := 0; i < b.Rows; i++ {
			x = append(x, o.raw[i*rawD:(i+1)*rawD]...)
			if t.withTransformed {
				x = append(x, b.Row(i)...)
			}
		}
		return w.WriteBlock(&dataset.Block{Rows: b.Rows, D: len(cols), X: x, Domain: b.Domain, Label: b.Label}, o.z, o.domains, o.classes)
	})
	if err != nil {
		return err
	}
	return w.Commit()
}

// keywords returns the keywords of the FCS output: those of the input files
// worth keeping, the names of the domain and label codes, and the model's
// provenance.
func (t *transformJob) keywords(modelPath string, domains, classes []string, labelled bool) ([]fcs.Keyword, error) {
	var kw []fcs.Keyword
	if s, ok := t.raw.(*fcs.Source); ok {
		for _, k := range s.Keywords() {
			if !strings.HasPrefix(strings.ToUpper(k.Key), "DICA_") && !strings.EqualFold(k.Key, "$ORIGINALITY") {
				kw = append(kw, k)
			}
		}
	}
	m := t.p.m
	c := m.Config()
	digest, err := modelDigest(modelPath)
	if err != nil {
		return nil, err
	}
	add := func(k, v string) { kw = append(kw, fcs.Keyword{Key: k, Value: v}) }
	add("$ORIGINALITY", "Appended")
	add("DICA_MODEL", filepath.Base(modelPath))
	add("DICA_MODEL_SHA256", digest)
	add("DICA_METHOD", strings.ToUpper(c.Method.String()))
	add("DICA_SOLVER", c.Solver.String())
	if sg := sigmaOf(c.Kernel); sg > 0 {
		add("DICA_SIGMA", strconv.FormatFloat(sg, 'g', -1, 64))
	}
	if c.Solver != dica.Exact {
		add("DICA_RANK", strconv.Itoa(c.Rank))
	}
	add("DICA_PREPROCESSING", m.Preprocessing().String())
	add("DICA_CENTER", t.p.mode)
	for i, d := range domains {
		add(fmt.Sprintf("DICA_DOMAIN%d", i+1), d)
	}
	if labelled {
		for i, c := range classes {
			add(fmt.Sprintf("DICA_LABEL%d", i+1), c)
		}
	}
	return kw, nil
}
