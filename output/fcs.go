package output

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/internal/atomicfile"
)

// fcsWriter writes FCS 3.1, float32: every raw channel with its keywords,
// the model's inputs (Options.Inputs), the components, then LABEL, DOMAIN,
// SOURCE and EVENT parameters whose codes the keywords DICA_LABELk,
// DICA_DOMAINk and DICA_SOURCEk name; the source files' keywords are kept
// and DICA_* keywords record the model and the layout.
//
// DOMAIN codes 1..G are the model's G samples, in its order, in every file
// (see domainCode); 0 is the first sample the model was not fitted on (a
// new patient), named by DICA_DOMAIN0, so that files of new samples
// written one by one carry the same code table; further new samples of the
// same file take G+1, G+2, ... LABEL codes are the model's populations from
// 1 (0 unlabelled), then the populations it does not know.
//
// The file is written in one pass (fcs.StreamWriter): the cells as they
// come, then the TEXT with the number of cells, the ranges and the code
// tables, into room reserved before the cells.
type fcsWriter struct {
	j        *job
	f        *atomicfile.File
	w        *fcs.StreamWriter
	logCols  []int // raw channels written as their linear values
	ev       []float64
	labelled bool
	// rawParams are the raw channels' parameters as read; lo and hi the
	// range of each float column so far.
	rawParams []fcs.Param
	lo, hi    []float64
	// tlo and thi are the range of each predicted target so far.
	tlo, thi []float64
	rows     int64
	maxEvent int64
}

// maxFloatEvent is the largest event number float32 holds exactly.
const maxFloatEvent = 1 << 24

func newFCSWriter(_ context.Context, j *job, path string) (*fcsWriter, error) {
	w := &fcsWriter{j: j, labelled: j.in.Source.Schema().Labelled}
	// Float data is linear: a log-amplified channel read as stored (without
	// linearization) is written as its linear value, $PnE 0,0. A channel
	// read linearized was divided by its gain: its $PnG becomes 1.
	pp := j.m.Preprocessing()
	linearize := j.in.Kind == ingest.FCS && pp != nil && pp.Linearize
	w.rawParams = append([]fcs.Param(nil), j.raw.Params...)
	for k := range w.rawParams {
		if linearize {
			w.rawParams[k].Gain = 1
		} else if w.rawParams[k].Decades > 0 {
			w.logCols = append(w.logCols, k)
		}
	}
	raw, inputs := j.channels()
	cols := len(raw) + len(inputs) + j.m.Positive
	w.lo, w.hi = make([]float64, cols), make([]float64, cols)
	ds, err := w.dataSet()
	if err != nil {
		return nil, err
	}
	for k := range w.lo {
		w.lo[k], w.hi[k] = math.Inf(1), math.Inf(-1)
	}
	w.tlo, w.thi = make([]float64, len(j.targets)), make([]float64, len(j.targets))
	for t := range w.tlo {
		w.tlo[t], w.thi[t] = math.Inf(1), math.Inf(-1)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w.f = f
	// Room for the names of about a thousand samples and populations; more
	// make the writer move the cells once.
	if w.w, err = fcs.NewStreamWriter(f, ds, 1<<16); err != nil {
		f.Abort()
		return nil, err
	}
	return w, nil
}

// dataSet returns the parameters and keywords of the output as known so
// far: the ranges of the cells written and the codes met.
func (w *fcsWriter) dataSet() (*fcs.DataSet, error) {
	j := w.j
	raw, inputs := j.channels()
	params := make([]fcs.Param, 0, len(w.lo)+4)
	for k, name := range append(append([]string(nil), raw...), inputs...) {
		p := fcs.Param{Name: name}
		if k < len(w.rawParams) {
			p = w.rawParams[k]
		} else if k >= len(raw) {
			p.Label = "model input after preprocessing"
		}
		fp, err := p.ForFloat(w.lo[k], w.hi[k])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	for k, name := range componentNames(j.m) {
		c := len(raw) + len(inputs) + k
		fp, err := fcs.Param{Name: name, Label: j.prov.method + " component " + strconv.Itoa(k+1)}.ForFloat(w.lo[c], w.hi[c])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	if w.labelled {
		params = append(params, fcs.Param{Name: "LABEL", Label: "label code (" + ingest.KeywordLabel + "k; 0 unlabelled)", Range: float64(len(j.cls.names) + 1)})
	}
	params = append(params,
		fcs.Param{Name: "DOMAIN", Label: "domain code (" + ingest.KeywordDomain + "k; 0 a new sample)", Range: float64(len(j.doms.names) + 1)},
		fcs.Param{Name: "SOURCE", Label: "source file code (DICA_SOURCEk)", Range: float64(len(j.sources) + 1)},
		fcs.Param{Name: "EVENT", Label: "row or event number in the source file", Range: float64(w.maxEvent + 1)})
	if j.predNames != nil {
		params = append(params,
			fcs.Param{Name: "PREDICTED", Label: "predicted population code (" + ingest.KeywordPredicted + "k)", Range: float64(len(j.predNames) + 1)},
			fcs.Param{Name: "CONFIDENCE", Label: "confidence of the prediction, 0 to 1", Range: 1})
	}
	for t, name := range j.targetColumns() {
		lo, hi := 0.0, 0.0
		if t < len(w.tlo) && w.tlo[t] <= w.thi[t] {
			lo, hi = w.tlo[t], w.thi[t]
		}
		fp, err := fcs.Param{Name: name, Label: "predicted " + j.targets[t]}.ForFloat(lo, hi)
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	kw, err := w.keywords()
	if err != nil {
		return nil, err
	}
	return &fcs.DataSet{Params: params, Keywords: kw}, nil
}

// event returns the values of cell i of c in the output's float columns
// (reused from one call to the next).
func (w *fcsWriter) event(c *cells, i int, rawParams []fcs.Param) []float64 {
	w.ev = append(w.ev[:0], c.raw[i*c.rawD:(i+1)*c.rawD]...)
	for _, k := range w.logCols {
		w.ev[k] = rawParams[k].Linear(w.ev[k])
	}
	if w.j.o.Inputs {
		w.ev = append(w.ev, c.b.Row(i)...)
	}
	return append(w.ev, c.z.RawRowView(i)...)
}

// keywords returns the keywords of the output: those of the input files
// worth keeping, the model's provenance, the layout, and the names of the
// codes.
func (w *fcsWriter) keywords() ([]fcs.Keyword, error) {
	j := w.j
	var kw []fcs.Keyword
	for _, k := range j.raw.Keywords {
		if !strings.HasPrefix(strings.ToUpper(k.Key), "DICA_") && !strings.EqualFold(k.Key, "$ORIGINALITY") {
			kw = append(kw, k)
		}
	}
	add := func(k, v string) { kw = append(kw, fcs.Keyword{Key: k, Value: v}) }
	add("$ORIGINALITY", "Appended")
	for _, kv := range j.provenanceKeys() {
		add("DICA_"+strings.ToUpper(kv[0]), kv[1])
	}
	l, err := ingest.MarshalLayout(j.layout())
	if err != nil {
		return nil, err
	}
	add(ingest.KeywordLayout, string(l))
	for i, d := range j.doms.names {
		add(fmt.Sprintf("%s%d", ingest.KeywordDomain, domainCode(i, j.doms.known)), d)
	}
	if w.labelled {
		for i, c := range j.cls.names {
			add(fmt.Sprintf("%s%d", ingest.KeywordLabel, i+1), c)
		}
	}
	for i, s := range j.sources {
		add(fmt.Sprintf("DICA_SOURCE%d", i+1), s)
	}
	for i, p := range j.predNames {
		add(fmt.Sprintf("%s%d", ingest.KeywordPredicted, i+1), p)
	}
	return kw, nil
}

// domainCode returns the DOMAIN code of domain number k of an output
// whose model has g samples (numbers 0..g-1; the samples the model does
// not know follow, in the order met): k+1 for the model's samples, 0 for
// the first sample it does not know, k for the others (g+1, g+2, ...).
func domainCode(k, g int) int {
	switch {
	case k < g:
		return k + 1
	case k == g:
		return 0
	}
	return k
}

func (w *fcsWriter) write(c *cells) error {
	cols := len(w.lo)
	for i := 0; i < c.n; i++ {
		e := w.event(c, i, w.rawParams)
		for k, v := range e[:cols] {
			w.lo[k], w.hi[k] = min(w.lo[k], v), max(w.hi[k], v)
		}
		if c.lab != nil {
			e = append(e, float64(c.lab[i]+1)) // 0: unlabelled
		}
		e = append(e, float64(domainCode(c.dom[i], w.j.doms.known)))
		src, ev := 0, int64(0)
		if c.b.HasOrigins() {
			src, ev = c.b.File[i]+1, c.b.Event[i]
		}
		if ev > maxFloatEvent {
			return fmt.Errorf("output: %s holds more than %d rows: their numbers do not fit the float32 values of an FCS file; write CSV or Parquet instead", w.j.sources[src-1], maxFloatEvent)
		}
		w.maxEvent = max(w.maxEvent, ev)
		e = append(e, float64(src), float64(ev))
		if c.pred != nil {
			e = append(e, float64(c.pred[i]+1), c.conf[i])
		}
		for t, v := range c.vals[i*c.nt : (i+1)*c.nt] {
			w.tlo[t], w.thi[t] = min(w.tlo[t], v), max(w.thi[t], v)
			e = append(e, v)
		}
		w.ev = e
		if err := w.w.WriteEvent(e); err != nil {
			return err
		}
	}
	w.rows += int64(c.n)
	return nil
}

func (w *fcsWriter) commit() error {
	if w.rows > math.MaxInt32 {
		return fmt.Errorf("output: %d cells: an FCS file of dica's holds at most %d", w.rows, math.MaxInt32)
	}
	ds, err := w.dataSet()
	if err != nil {
		return err
	}
	if err := w.w.Close(ds); err != nil {
		return err
	}
	return w.f.Commit()
}

func (w *fcsWriter) abort() {
	if w.f != nil {
		w.f.Abort()
	}
}
