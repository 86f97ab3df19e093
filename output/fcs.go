package output

import (
	"bufio"
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
// $TOT and $PnR come before the data in an FCS file: a first pass counts
// the cells, finds each column's range and the code tables, and the
// second writes them, so no cell is held in memory.
type fcsWriter struct {
	j        *job
	f        *atomicfile.File
	bw       *bufio.Writer
	w        *fcs.Writer
	params   []fcs.Param
	logCols  []int // raw channels written as their linear values
	ev       []float64
	labelled bool
	// rawParamsCache are the raw channels' parameters as read.
	rawParamsCache []fcs.Param
}

func newFCSWriter(ctx context.Context, j *job, path string) (*fcsWriter, error) {
	w := &fcsWriter{j: j, labelled: j.in.Source.Schema().Labelled}
	// Float data is linear: a log-amplified channel read as stored (without
	// linearization) is written as its linear value, $PnE 0,0. A channel
	// read linearized was divided by its gain: its $PnG becomes 1.
	pp := j.m.Preprocessing()
	linearize := j.in.Kind == ingest.FCS && pp != nil && pp.Linearize
	rawParams := append([]fcs.Param(nil), j.raw.Params...)
	for k := range rawParams {
		if linearize {
			rawParams[k].Gain = 1
		} else if rawParams[k].Decades > 0 {
			w.logCols = append(w.logCols, k)
		}
	}
	// The first pass: ranges, cells, code tables.
	raw, inputs := j.channels()
	cols := len(raw) + len(inputs) + j.m.Positive
	lo, hi := make([]float64, cols), make([]float64, cols)
	for k := range lo {
		lo[k], hi[k] = math.Inf(1), math.Inf(-1)
	}
	var rows, maxEvent int64
	err := j.stream(ctx, func(c *cells) error {
		for i := 0; i < c.n; i++ {
			for k, v := range w.event(c, i, rawParams)[:cols] {
				lo[k], hi[k] = min(lo[k], v), max(hi[k], v)
			}
			if c.b.HasOrigins() {
				maxEvent = max(maxEvent, c.b.Event[i])
			}
		}
		rows += int64(c.n)
		if j.o.Progress != nil {
			j.o.Progress("scan", rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, fmt.Errorf("output: no cells to write: %s hold no cell (after the labels left out)", strings.Join(j.in.Files, ", "))
	}
	if rows > math.MaxInt32 {
		return nil, fmt.Errorf("output: %d cells: an FCS file of dica's holds at most %d", rows, math.MaxInt32)
	}
	// The codes of the second pass are those of the first, which met every
	// name: reset the readers' numbering only.
	j.doms.of, j.cls.of = nil, nil
	params := make([]fcs.Param, 0, cols+4)
	for k, name := range append(append([]string(nil), raw...), inputs...) {
		p := fcs.Param{Name: name}
		if k < len(rawParams) {
			p = rawParams[k]
		} else if k >= len(raw) {
			p.Label = "model input after preprocessing"
		}
		fp, err := p.ForFloat(lo[k], hi[k])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	method := j.prov.method
	for k, name := range componentNames(j.m) {
		c := len(raw) + len(inputs) + k
		fp, err := fcs.Param{Name: name, Label: method + " component " + strconv.Itoa(k+1)}.ForFloat(lo[c], hi[c])
		if err != nil {
			return nil, err
		}
		params = append(params, fp)
	}
	if w.labelled {
		params = append(params, fcs.Param{Name: "LABEL", Label: "label code (" + ingest.KeywordLabel + "k)", Range: float64(len(j.cls.names) + 1)})
	}
	params = append(params,
		fcs.Param{Name: "DOMAIN", Label: "domain code (" + ingest.KeywordDomain + "k)", Range: float64(len(j.doms.names) + 1)},
		fcs.Param{Name: "SOURCE", Label: "source file code (DICA_SOURCEk)", Range: float64(len(j.sources) + 1)},
		fcs.Param{Name: "EVENT", Label: "row or event number in the source file", Range: float64(maxEvent + 1)})
	w.params = params
	kw, err := w.keywords()
	if err != nil {
		return nil, err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w.f = f
	w.bw = bufio.NewWriterSize(f, 1<<20)
	ds := &fcs.DataSet{Params: params, Keywords: kw}
	if maxEvent > 1<<24 {
		// float32 holds every whole number up to 2^24 only.
		ds.DataType = 'D'
	}
	if w.w, err = fcs.NewWriter(w.bw, ds, int(rows)); err != nil {
		f.Abort()
		return nil, err
	}
	w.rawParamsCache = rawParams
	return w, nil
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
		add(fmt.Sprintf("%s%d", ingest.KeywordDomain, i+1), d)
	}
	if w.labelled {
		for i, c := range j.cls.names {
			add(fmt.Sprintf("%s%d", ingest.KeywordLabel, i+1), c)
		}
	}
	for i, s := range j.sources {
		add(fmt.Sprintf("DICA_SOURCE%d", i+1), s)
	}
	return kw, nil
}

func (w *fcsWriter) write(c *cells) error {
	for i := 0; i < c.n; i++ {
		e := w.event(c, i, w.rawParamsCache)
		if c.lab != nil {
			e = append(e, float64(c.lab[i]+1))
		}
		e = append(e, float64(c.dom[i]+1))
		src, ev := 0, int64(0)
		if c.b.HasOrigins() {
			src, ev = c.b.File[i]+1, c.b.Event[i]
		}
		e = append(e, float64(src), float64(ev))
		w.ev = e
		if err := w.w.WriteEvent(e); err != nil {
			return err
		}
	}
	return nil
}

func (w *fcsWriter) commit() error {
	if err := w.w.Close(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.f.Commit()
}

func (w *fcsWriter) abort() {
	if w.f != nil {
		w.f.Abort()
	}
}
