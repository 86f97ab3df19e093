// Package output writes cells with what a fitted model makes of them, in
// the formats dica reads: CSV, FCS 3.1, Parquet and AnnData stores (Zarr
// v2). Each cell keeps where it came from (the source file and its 1-based
// row or event number), its domain and label, every input channel as read,
// optionally the model's inputs after preprocessing, and its components.
//
// Every output describes itself (ingest.Layout: the role of each column,
// the preprocessing of the model's inputs; and the model's provenance), so
// that reading it back with package ingest gives the same channels, the
// same codes and the same cells. Domain and label codes come from the
// model: the model's domains and populations (in natural order) have the
// same code in every file, whatever the file holds; names the model does
// not know follow, in the order they first appear.
//
// Outputs are streamed (memory does not grow with the cells) and written
// atomically: to a temporary file or folder beside the destination,
// renamed over it only when complete.
package output

import (
	"context"
	"crypto/sha256"
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

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/kernel"
)

// Format is the format of an output.
type Format int

// The output formats.
const (
	CSV     Format = iota + 1 // RFC 4180 text, a header row of column names
	FCS                       // FCS 3.1, float32, with the source files' keywords
	Parquet                   // Apache Parquet, the CSV's columns typed
	AnnData                   // an AnnData store (Zarr v2) for scanpy
)

// FormatOf returns the format of an output path by its extension (.csv,
// .fcs, .parquet or .parq, .zarr; "-" is CSV on the standard output), or an
// error naming the formats. An .h5ad path is an error that says how to get
// one.
func FormatOf(path string) (Format, error) {
	if path == "-" {
		return CSV, nil
	}
	ext := strings.ToLower(filepath.Ext(strings.TrimRight(path, "/")))
	switch ext {
	case ".csv":
		return CSV, nil
	case ".fcs":
		return FCS, nil
	case ".parquet", ".parq":
		return Parquet, nil
	case ".zarr":
		return AnnData, nil
	case ".h5ad":
		base := strings.TrimSuffix(path, filepath.Ext(path))
		return 0, fmt.Errorf("output: %s: h5ad (HDF5) cannot be written in pure Go; write an AnnData Zarr store (%s.zarr) and convert it in Python: anndata.read_zarr(%q).write_h5ad(%q)", path, base, base+".zarr", path)
	}
	return 0, fmt.Errorf("output: %s: want a .csv, .fcs, .parquet file or a .zarr AnnData store (or - for CSV on the standard output)", path)
}

// Center says what is subtracted from the components.
type Center int

// The centerings of the components, z = W^T (phi(x) - mu) - c.
const (
	// CenterTrain subtracts nothing more: mu is the training cells' mean
	// feature, so each cell is projected on its own and a new sample
	// keeps its shift.
	CenterTrain Center = iota
	// CenterBatch subtracts the mean of the components of all the cells
	// written (transductive, as the authors' dica.m does).
	CenterBatch
	// CenterDomain subtracts the mean of the components of each domain's
	// cells, which removes a new sample's overall shift (one cell alone
	// projects to 0).
	CenterDomain
)

// String returns "train", "batch" or "domain".
func (c Center) String() string {
	switch c {
	case CenterTrain:
		return "train"
	case CenterBatch:
		return "batch"
	case CenterDomain:
		return "domain"
	}
	return fmt.Sprintf("Center(%d)", int(c))
}

// ParseCenter reads "train", "batch" or "domain".
func ParseCenter(s string) (Center, error) {
	for _, c := range []Center{CenterTrain, CenterBatch, CenterDomain} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("output: centering %q: want train, batch or domain", s)
}

// Options say what to write.
type Options struct {
	// Model projects the cells; ModelPath names its file (the outputs
	// record its base name and SHA-256; "" records neither).
	Model     *dica.Model
	ModelPath string
	// Center and Scale post-process the components: Scale divides
	// component j by sqrt(gamma_j) (dica.m's scaling).
	Center Center
	Scale  bool
	// Inputs also writes the model's inputs after preprocessing (columns
	// NAME_t in CSV, Parquet and FCS; an AnnData store's X holds them
	// always).
	Inputs bool
	// Progress, when set, is called with the name of the pass and the
	// cells done so far.
	Progress func(pass string, rows int64)
	// Predict, when set, adds to every cell the population a classifier
	// predicts and its confidence (columns predicted and confidence; FCS:
	// PREDICTED, whose codes the keywords DICA_PREDICTEDk name, and
	// CONFIDENCE; AnnData: obs["predicted"] and obs["confidence"]), or
	// the real targets a regressor predicts (see Predictor.Targets).
	Predict *Predictor
}

// Predictor predicts, from their components, the population of each cell
// (a classifier: Populations) or real targets (a regressor: Targets).
// Exactly one of Populations and Targets is set.
type Predictor struct {
	// Populations are the populations the classifier knows, in the
	// model's order; the output's codes follow them, then Unassigned.
	Populations []string
	// Targets names the real targets a regressor predicts, in order. Each
	// target T is written as a float column predicted_T (CSV, Parquet;
	// AnnData: obs["predicted_T"]) or a parameter PREDICTED_T whose $PnS
	// is "predicted T" (FCS), of role ingest.RolePredicted; a regressor
	// has no confidence.
	Targets []string
	// Predict predicts the cells whose components are the rows of z (as
	// the output writes them, before centering and scaling). A classifier
	// fills code[i] with the index in Populations of the population
	// predicted for row i, or -1 for a cell left unassigned, and conf[i]
	// with the confidence in [0, 1]; values is nil. A regressor fills
	// values[i*T+t] with target t of row i, T = len(Targets); code and
	// conf are nil.
	Predict func(z *mat.Dense, code []int, conf []float64, values []float64) error
}

// Unassigned names the cells a classifier leaves unassigned (below its
// least confidence) in the predicted column.
const Unassigned = "unassigned"

// PredictedColumn returns the name of the column of the predicted real
// target named target in CSV, Parquet and AnnData outputs:
// "predicted_" + target. In FCS the parameter is "PREDICTED_" + target.
func PredictedColumn(target string) string { return ingest.PredictedPrefix + target }

// predictedNames returns the names of the predicted codes: the
// populations, then Unassigned (nil for a regressor).
func (p *Predictor) predictedNames() []string {
	if len(p.Populations) == 0 {
		return nil
	}
	return append(slices.Clone(p.Populations), Unassigned)
}

// check reports whether the predictor is complete: a Predict function and
// either populations or distinct, non-empty target names.
func (p *Predictor) check() error {
	if p.Predict == nil || len(p.Populations) == 0 == (len(p.Targets) == 0) {
		return errors.New("output: a Predictor needs a Predict function and either populations or targets")
	}
	seen := map[string]bool{}
	for _, t := range p.Targets {
		if t == "" || seen[t] {
			return fmt.Errorf("output: the regressor's target %q is empty or repeated", t)
		}
		seen[t] = true
	}
	return nil
}

// targetColumns returns the names of the predicted targets' columns in
// the output's format.
func (j *job) targetColumns() []string {
	out := make([]string, len(j.targets))
	for t, name := range j.targets {
		if j.format == FCS {
			out[t] = "PREDICTED_" + name
		} else {
			out[t] = PredictedColumn(name)
		}
	}
	return out
}

// Summary says what Write wrote.
type Summary struct {
	// Cells is the number of cells written.
	Cells int64
	// Columns lists the columns of the output with their roles (an
	// AnnData store: X's variables and the obs columns).
	Columns []ingest.Column
	// Domains and Classes are the code tables of the output: the domain
	// and label names, code k+1 (FCS) naming Domains[k].
	Domains, Classes []string
	// With Options.Predict: Predicted names the predicted codes (the
	// populations, then Unassigned), and Counts[g][p] is the number of
	// cells of domain g (a code of Domains) predicted p; with labels,
	// Confusion[g][c][p] the number of those of label c (a code of
	// Classes).
	Predicted []string
	Counts    [][]int64
	Confusion [][][]int64
	// With a regressor (Predictor.Targets): Targets names the predicted
	// targets, and Regression[g] sums the predictions of the cells of
	// domain g (nil when it has none) and, when the input holds the true
	// targets (the same names), their errors.
	Targets    []string
	Regression []*TargetStats
}

// TargetStats sums a regressor's predictions of real targets over a group
// of cells: their number, the mean of each predicted target and, with the
// true targets, the mean and spread of each and the squared errors, so that
//
//	RMSE_t = sqrt(SSE_t / Cells),   R^2_t = 1 - SSE_t / TrueSS_t,
//
// SSE_t = sum_i (yhat_it - y_it)^2 and TrueSS_t = sum_i (y_it - TrueMean_t)^2.
// Means and spreads are updated cell by cell (Welford) and combined by
// Merge (Chan, Golub and LeVeque), so that they stay accurate whatever the
// offset of the values.
type TargetStats struct {
	// Cells is the number of cells; Mean[t] the mean of predicted target t.
	Cells int64
	Mean  []float64
	// Truth says whether the true targets were known; TrueMean, TrueSS
	// and SSE are then as above (nil otherwise).
	Truth                 bool
	TrueMean, TrueSS, SSE []float64
}

// newTargetStats returns empty sums of t targets.
func newTargetStats(t int, truth bool) *TargetStats {
	s := &TargetStats{Mean: make([]float64, t), Truth: truth}
	if truth {
		s.TrueMean, s.TrueSS, s.SSE = make([]float64, t), make([]float64, t), make([]float64, t)
	}
	return s
}

// add adds a cell of predicted targets pred and true targets truth (nil
// when not known).
func (s *TargetStats) add(pred, truth []float64) {
	s.Cells++
	n := float64(s.Cells)
	for t, v := range pred {
		s.Mean[t] += (v - s.Mean[t]) / n
	}
	if !s.Truth {
		return
	}
	for t, y := range truth {
		d := y - s.TrueMean[t]
		s.TrueMean[t] += d / n
		s.TrueSS[t] += d * (y - s.TrueMean[t])
		e := pred[t] - y
		s.SSE[t] += e * e
	}
}

// Merge adds the sums of o (of the same targets) to s. Truth stays only
// when both know it.
func (s *TargetStats) Merge(o *TargetStats) {
	if o == nil || o.Cells == 0 {
		return
	}
	if s.Cells == 0 {
		*s = TargetStats{Cells: o.Cells, Mean: slices.Clone(o.Mean), Truth: o.Truth,
			TrueMean: slices.Clone(o.TrueMean), TrueSS: slices.Clone(o.TrueSS), SSE: slices.Clone(o.SSE)}
		return
	}
	na, nb := float64(s.Cells), float64(o.Cells)
	n := na + nb
	for t := range s.Mean {
		s.Mean[t] += (o.Mean[t] - s.Mean[t]) * nb / n
	}
	if s.Truth && o.Truth {
		for t := range s.TrueMean {
			d := o.TrueMean[t] - s.TrueMean[t]
			s.TrueMean[t] += d * nb / n
			s.TrueSS[t] += o.TrueSS[t] + d*d*na*nb/n
			s.SSE[t] += o.SSE[t]
		}
	} else {
		s.Truth, s.TrueMean, s.TrueSS, s.SSE = false, nil, nil, nil
	}
	s.Cells += o.Cells
}

// RMSE returns the root mean squared error of target t, NaN without the
// true targets or cells.
func (s *TargetStats) RMSE(t int) float64 {
	if s == nil || !s.Truth || s.Cells == 0 {
		return math.NaN()
	}
	return math.Sqrt(s.SSE[t] / float64(s.Cells))
}

// R2 returns the coefficient of determination of target t, 1 - SSE/TrueSS:
// NaN without the true targets, or when they are constant (TrueSS 0).
func (s *TargetStats) R2(t int) float64 {
	if s == nil || !s.Truth || !(s.TrueSS[t] > 0) {
		return math.NaN()
	}
	return 1 - s.SSE[t]/s.TrueSS[t]
}

// Write writes the cells of in, projected by o.Model, to path in the
// format of its extension (FormatOf); "-" writes CSV to stdout. in must be
// opened for the model (ingest.OpenFor with the model's Preprocessing), so
// that its rows are the model's inputs.
func Write(ctx context.Context, in *ingest.Input, path string, stdout io.Writer, o Options) (*Summary, error) {
	if ctx == nil || in == nil || in.Source == nil || o.Model == nil {
		return nil, errors.New("output: Write needs a context, an input and a model")
	}
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	// Opened for the model (ingest.OpenFor), the input holds its inputs,
	// named as the files name them (by position, they may differ).
	got, want := in.Source.Schema().Features, o.Model.Inputs()
	if len(got) != len(want) || o.Model.Preprocessing() != nil && !in.Pipeline.Equal(o.Model.Preprocessing()) {
		return nil, fmt.Errorf("output: the input's channels %s are not the model's inputs %s: open the files for the model (ingest.OpenFor)", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	raw, err := in.Raw()
	if err != nil {
		return nil, err
	}
	j := &job{in: in, raw: raw, o: o, m: o.Model, format: format}
	j.doms = newCodes(o.Model.Summary.Domains)
	j.cls = newCodes(o.Model.Summary.Classes)
	if o.Predict != nil {
		if err := o.Predict.check(); err != nil {
			return nil, err
		}
		j.predNames, j.targets = o.Predict.predictedNames(), o.Predict.Targets
		if len(j.targets) > 0 {
			// The true targets, when the input holds the regressor's.
			if ts := in.Source.Schema().Targets; len(ts) > 0 {
				if !slices.Equal(ts, j.targets) {
					return nil, fmt.Errorf("output: the input's targets are %s, the regressor predicts %s", strings.Join(ts, ","), strings.Join(j.targets, ","))
				}
				j.truth = true
			}
		}
	}
	if err := j.provenance(); err != nil {
		return nil, err
	}
	p := &projector{m: o.Model, center: o.Center, scale: o.Scale}
	if err := p.prepare(ctx, in.Source, o.Progress); err != nil {
		return nil, err
	}
	j.p = p
	var w writer
	switch format {
	case FCS:
		w, err = newFCSWriter(ctx, j, path)
	case Parquet:
		w, err = newParquetWriter(j, path)
	case AnnData:
		w, err = newZarrWriter(j, path)
	default:
		w, err = newCSVWriter(j, path, stdout)
	}
	if err != nil {
		return nil, err
	}
	defer w.abort()
	var rows int64
	sum := &Summary{}
	err = j.stream(ctx, func(c *cells) error {
		if err := j.predict(c); err != nil {
			return err
		}
		if err := w.write(c); err != nil {
			return err
		}
		sum.count(c)
		rows += int64(c.n)
		if o.Progress != nil {
			o.Progress("write", rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, fmt.Errorf("output: no cells to write: %s hold no cell (after the labels left out)", strings.Join(in.Files, ", "))
	}
	if err := w.commit(); err != nil {
		return nil, err
	}
	sum.Cells, sum.Columns, sum.Domains, sum.Classes = rows, j.layout().Columns, j.doms.names, j.cls.names
	if o.Predict != nil {
		sum.Predicted, sum.Targets = o.Predict.predictedNames(), slices.Clone(o.Predict.Targets)
	}
	return sum, nil
}

// count adds the predictions of the cells of c to the summary.
func (s *Summary) count(c *cells) {
	if c.vals != nil {
		s.sum(c)
		return
	}
	if c.pred == nil {
		return
	}
	np := len(c.predNames)
	for i := 0; i < c.n; i++ {
		g, p := c.dom[i], c.pred[i]
		for len(s.Counts) <= g {
			s.Counts = append(s.Counts, nil)
			s.Confusion = append(s.Confusion, nil)
		}
		if s.Counts[g] == nil {
			s.Counts[g] = make([]int64, np)
		}
		s.Counts[g][p]++
		if c.lab != nil && c.lab[i] >= 0 {
			l := c.lab[i]
			for len(s.Confusion[g]) <= l {
				s.Confusion[g] = append(s.Confusion[g], make([]int64, np))
			}
			s.Confusion[g][l][p]++
		}
	}
}

// sum adds the predicted targets of the cells of c (and their errors,
// with the true targets) to the summary.
func (s *Summary) sum(c *cells) {
	t := c.nt
	for i := 0; i < c.n; i++ {
		g := c.dom[i]
		for len(s.Regression) <= g {
			s.Regression = append(s.Regression, nil)
		}
		if s.Regression[g] == nil {
			s.Regression[g] = newTargetStats(t, c.truth)
		}
		var truth []float64
		if c.truth {
			truth = c.b.Target[i*c.b.T : i*c.b.T+t]
		}
		s.Regression[g].add(c.vals[i*t:(i+1)*t], truth)
	}
}

// predict fills the predictions of the cells of c, when asked.
func (j *job) predict(c *cells) error {
	pr := j.o.Predict
	if pr == nil {
		return nil
	}
	if t := len(j.targets); t > 0 {
		c.nt, c.truth = t, j.truth && c.b.T == t
		if j.truth && c.b.T != t {
			return fmt.Errorf("output: internal error: a block of %d targets from an input of %d", c.b.T, t)
		}
		c.vals = growFloats(c.vals, c.n*t)
		if err := pr.Predict(c.zRaw, nil, nil, c.vals); err != nil {
			return err
		}
		for k, v := range c.vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("output: the regressor predicted %v for target %s of a cell: the model's learner is broken", v, j.targets[k%t])
			}
		}
		return nil
	}
	c.pred, c.conf = growInts(c.pred, c.n), growFloats(c.conf, c.n)
	if err := pr.Predict(c.zRaw, c.pred, c.conf, nil); err != nil {
		return err
	}
	un := len(pr.Populations)
	for i, p := range c.pred {
		if p < 0 {
			c.pred[i] = un
		} else if p >= un {
			return fmt.Errorf("output: the classifier predicted population %d of %d", p, un)
		}
	}
	c.predNames = j.predNames
	return nil
}

func growInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func growFloats(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// job is one output being written.
type job struct {
	in     *ingest.Input
	raw    *ingest.Raw
	o      Options
	m      *dica.Model
	p      *projector
	format Format
	// doms and cls number the domain and label names of the output.
	doms, cls *codes
	// sources name the files of the rows (their domain names: base names
	// without extension); prov the model's provenance.
	sources []string
	prov    provenance
	// predNames names the predicted codes of a classifier, targets the
	// targets of a regressor (Options.Predict); truth says that the
	// input holds the true targets.
	predNames []string
	targets   []string
	truth     bool
}

// provenance is what an output records of the model that made it.
type provenance struct {
	model, digest, method, solver string
	sigma                         float64
	rank                          int
	eigenvalues                   []float64
}

func (j *job) provenance() error {
	m := j.m
	c := m.Config()
	j.prov = provenance{method: strings.ToUpper(c.Method.String()), solver: c.Solver.String(), sigma: kernel.Bandwidth(c.Kernel),
		eigenvalues: m.Eigenvalues[:m.Positive]}
	if c.Solver != dica.Exact {
		j.prov.rank = c.Rank
	}
	if j.o.ModelPath != "" {
		b, err := os.ReadFile(j.o.ModelPath)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		j.prov.model, j.prov.digest = filepath.Base(j.o.ModelPath), hex.EncodeToString(sum[:])
	}
	if o, ok := j.in.Source.(dataset.Origins); ok {
		for _, f := range o.Files() {
			j.sources = append(j.sources, dataset.DomainName(f))
		}
	}
	return nil
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

// ComponentNames names the components of a model as the outputs do:
// DICA1, DICA2, ... after its method (UDICA1, KPCA1, COIR1).
func ComponentNames(m *dica.Model) []string {
	if m == nil {
		return nil
	}
	return componentNames(m)
}

// channels returns the names of the raw channels and, with Options.Inputs,
// of the model's inputs (NAME_t).
func (j *job) channels() (raw, inputs []string) {
	raw = j.raw.Source.Schema().Features
	if j.o.Inputs {
		for _, f := range j.in.Source.Schema().Features {
			inputs = append(inputs, f+ingest.InputSuffix)
		}
	}
	return raw, inputs
}

// layout returns the columns of the output and their roles.
func (j *job) layout() *ingest.Layout {
	l := &ingest.Layout{Preprocessing: j.m.Preprocessing()}
	add := func(r ingest.Role, names ...string) {
		for _, n := range names {
			l.Columns = append(l.Columns, ingest.Column{Name: n, Role: r})
		}
	}
	labelled := j.in.Source.Schema().Labelled
	raw, inputs := j.channels()
	switch j.format {
	case AnnData:
		add(ingest.RoleInput, j.in.Source.Schema().Features...)
		add(ingest.RoleDomain, "domain")
		if labelled {
			add(ingest.RoleLabel, "label")
		}
		j.addPredicted(add, "predicted", "confidence")
	case FCS:
		add(ingest.RoleChannel, raw...)
		add(ingest.RoleInput, inputs...)
		add(ingest.RoleComponent, componentNames(j.m)...)
		if labelled {
			add(ingest.RoleLabel, "LABEL")
		}
		add(ingest.RoleDomain, "DOMAIN")
		add(ingest.RoleSource, "SOURCE")
		add(ingest.RoleEvent, "EVENT")
		j.addPredicted(add, "PREDICTED", "CONFIDENCE")
	default:
		add(ingest.RoleSource, "source")
		add(ingest.RoleEvent, "event")
		add(ingest.RoleDomain, "domain")
		if labelled {
			add(ingest.RoleLabel, "label")
		}
		add(ingest.RoleChannel, raw...)
		add(ingest.RoleInput, inputs...)
		add(ingest.RoleComponent, componentNames(j.m)...)
		j.addPredicted(add, "predicted", "confidence")
	}
	return l
}

// addPredicted adds the columns of the predictions, if any: those of the
// predicted population and the confidence, named so, or the predicted
// targets'.
func (j *job) addPredicted(add func(r ingest.Role, names ...string), predicted, confidence string) {
	switch {
	case j.targets != nil:
		add(ingest.RolePredicted, j.targetColumns()...)
	case j.o.Predict != nil:
		add(ingest.RolePredicted, predicted)
		add(ingest.RoleConfidence, confidence)
	}
}

// codes numbers names from 0: a model's names first, in its order, then
// the names it does not know, in the order they are met.
type codes struct {
	names []string
	known int // the number of the model's names
	index map[string]int
	// of maps the numbers of a reader's names to codes (-1: not yet).
	of []int
}

func newCodes(known []string) *codes {
	c := &codes{names: slices.Clone(known), known: len(known), index: make(map[string]int, len(known))}
	for i, n := range known {
		c.index[n] = i
	}
	return c
}

// code returns the code of the reader's name number i, whose names are
// names.
func (c *codes) code(i int, names []string) int {
	for len(c.of) <= i {
		c.of = append(c.of, -1)
	}
	if k := c.of[i]; k >= 0 {
		return k
	}
	n := names[i]
	k, ok := c.index[n]
	if !ok {
		k = len(c.names)
		c.names = append(c.names, n)
		c.index[n] = k
	}
	c.of[i] = k
	return k
}

// cells is a block of the output: n cells with their origin, domain and
// label codes, raw channels, model inputs and components.
type cells struct {
	n       int
	b       *dataset.Block // the model's inputs, domains, labels, origins
	raw     []float64      // n x rawD
	rawD    int
	z       *mat.Dense
	dom     []int // codes into job.doms.names
	lab     []int // codes into job.cls.names (dataset.NoLabel for an unlabelled cell); nil without labels
	doms    []string
	classes []string
	// zRaw holds the components before centering and scaling (the
	// classifier's inputs) when a classifier predicts; z after.
	zRaw *mat.Dense
	// pred and conf are the predicted codes (into predNames) and
	// confidences, nil without a classifier.
	pred      []int
	conf      []float64
	predNames []string
	// vals holds the nt predicted targets of each cell (row-major), nil
	// without a regressor; truth says that the block holds the true
	// targets.
	vals  []float64
	nt    int
	truth bool
}

// stream passes over the model's source and the raw source side by side
// and calls emit with each block of cells, in order.
func (j *job) stream(ctx context.Context, emit func(c *cells) error) error {
	rr, err := j.raw.Source.Open(ctx)
	if err != nil {
		return err
	}
	defer rr.Close()
	rawD := j.raw.Source.Schema().D()
	var (
		rb       dataset.Block
		buf      []float64 // raw rows read ahead of the model's
		evs      []int64   // their events
		files    []int
		dom, lab []int
	)
	// fill reads raw rows until buf holds at least k of them.
	fill := func(k int) error {
		for len(evs) < k {
			n, err := rr.Read(&rb, 4096)
			if errors.Is(err, io.EOF) {
				return errors.New("output: internal error: the raw channels ended before the model's inputs")
			}
			if err != nil {
				return err
			}
			buf = append(buf, rb.X[:n*rawD]...)
			if rb.HasOrigins() {
				evs = append(evs, rb.Event[:n]...)
				files = append(files, rb.File[:n]...)
			} else {
				for range n {
					evs, files = append(evs, 0), append(files, -1)
				}
			}
		}
		return nil
	}
	c := &cells{rawD: rawD}
	return j.m.TransformStream(ctx, j.in.Source, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		if err := fill(b.Rows); err != nil {
			return err
		}
		if b.HasOrigins() && (!slices.Equal(evs[:b.Rows], b.Event[:b.Rows]) || !slices.Equal(files[:b.Rows], b.File[:b.Rows])) {
			return errors.New("output: internal error: the raw channels and the model's inputs disagree on the rows")
		}
		if j.o.Predict != nil {
			if c.zRaw == nil {
				c.zRaw = &mat.Dense{}
			}
			c.zRaw.CloneFrom(z)
		}
		j.p.post(b, z)
		dom, lab = dom[:0], lab[:0]
		for i := 0; i < b.Rows; i++ {
			dom = append(dom, j.doms.code(b.Domain[i], domains))
		}
		c.lab = nil
		if b.Label != nil {
			for i := 0; i < b.Rows; i++ {
				l := dataset.NoLabel
				if b.Label[i] >= 0 {
					l = j.cls.code(b.Label[i], classes)
				}
				lab = append(lab, l)
			}
			c.lab = lab
		}
		c.n, c.b, c.raw, c.z, c.dom, c.doms, c.classes = b.Rows, b, buf[:b.Rows*rawD], z, dom, domains, classes
		if err := emit(c); err != nil {
			return err
		}
		buf = append(buf[:0], buf[b.Rows*rawD:]...)
		evs = append(evs[:0], evs[b.Rows:]...)
		files = append(files[:0], files[b.Rows:]...)
		return nil
	})
}

// coded returns the block of the cells with the output's domain and label
// codes (a copy of the block's header; the rows are shared).
func (c *cells) coded() *dataset.Block {
	b := *c.b
	b.Domain, b.Label = c.dom, c.lab
	return &b
}

// source returns the name of the file of cell i of c and its event
// number ("" and 0 when the source does not say).
func (j *job) source(c *cells, i int) (string, int64) {
	b := c.b
	if !b.HasOrigins() || b.File[i] < 0 || b.File[i] >= len(j.sources) {
		return "", 0
	}
	return j.sources[b.File[i]], b.Event[i]
}

// writer writes one format.
type writer interface {
	write(c *cells) error
	commit() error
	abort()
}

// projector centers and scales the projections as asked: z = (W^T
// (phi(x) - mu) - c) / s, with c = 0 (CenterTrain), the mean of z over
// all cells (CenterBatch) or over the cell's domain (CenterDomain), and
// s_j = sqrt(gamma_j) with Scale. Since z is affine in phi(x),
// subtracting the batch mean of z is centering phi(x) with the batch mean.
type projector struct {
	m      *dica.Model
	center Center
	scale  bool
	shift  [][]float64 // per domain index of the source (batch: one)
}

// prepare makes the first pass that batch and domain centering need.
func (p *projector) prepare(ctx context.Context, src dataset.Source, progress func(string, int64)) error {
	if p.center == CenterTrain {
		return nil
	}
	k := p.m.Positive
	var sums [][]float64
	var counts []float64
	var rows int64
	err := p.m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, _, _ []string) error {
		for i := 0; i < b.Rows; i++ {
			g := 0
			if p.center == CenterDomain {
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
		if progress != nil {
			progress("center", rows)
		}
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
			if p.center == CenterDomain {
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

// provenanceKeys returns what the outputs record of the model, as key and
// value: model (the file's base name), model_sha256, method, solver,
// sigma, rank, preprocessing (its one-line description) and center. Keys
// without a value are left out.
func (j *job) provenanceKeys() [][2]string {
	p := j.prov
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("model", p.model)
	add("model_sha256", p.digest)
	add("method", p.method)
	add("solver", p.solver)
	if p.sigma > 0 {
		add("sigma", strconv.FormatFloat(p.sigma, 'g', -1, 64))
	}
	if p.rank > 0 {
		add("rank", strconv.Itoa(p.rank))
	}
	add("preprocessing", j.m.Preprocessing().String())
	add("center", j.o.Center.String())
	return out
}
