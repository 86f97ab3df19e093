package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/output"
)

const predictUsage = `Usage: dica predict --model MODEL --data FILES --out OUT.fcs|.csv|.parquet|.zarr [flags]

Gate new samples with the learner a model carries (dica fit --classifier
svm; or predict real targets, --classifier krr, below): every cell gets the population it most likely belongs to and a
confidence in [0, 1], written beside every input channel (raw) and the
components, as dica transform writes them, and a summary per sample
(cells, and the count and percentage of each population) goes to the
standard output or --summary FILE (.csv or .json).

The confidence is a softmax over the learner's one-vs-rest margins whose
temperature was fitted on training cells the learner had not seen (docs/
MATH.md, "8. The learner a model carries"): among cells of confidence 0.8
to 0.9, about 80 to 90 in 100 are right. Cells below --min-confidence are
left "unassigned" (0, the default, assigns every cell; DeepCyTOF uses 0.4).

With labels (--labels, --label), predict also prints, per sample and in
all, the accuracy, the FlowCAP F-measure (per true population the best F1
over the predicted populations, weighted by the population's size) and the
confusion matrix. Populations the learner does not know are counted as
such, not an error.

Outputs: the predicted population is a column "predicted" (its name) and
"confidence" in CSV and Parquet; in FCS, PREDICTED codes named by the
keywords DICA_PREDICTEDk and CONFIDENCE; in an AnnData store,
obs["predicted"] (categorical) and obs["confidence"].

Real targets: a model fitted with --classifier krr --target COLUMNS
predicts values. Each target T is a column predicted_T (CSV, Parquet; an
AnnData store's obs["predicted_T"]) or the parameter PREDICTED_T ($PnS
"predicted T", float32) in FCS, with no confidence. The summary gives per
sample the mean of each predicted target and, when the data holds the true
targets (--target T), the RMSE and R^2 (over the sample's cells, around
its own mean).

Examples:

  # One hand-gated sample (sample2), the others gated by the learner:
  dica fit --data 'sample*.csv' --labels sample2.csv=labels2.csv \
      --labels-ignore 0 --transform log1p --classifier svm --out ref.dica
  dica predict --model ref.dica --data sample9.csv --out s9_gated.fcs
  dica predict --model ref.dica --data 'sample*.csv' --labels 'labels*.csv' \
      --labels-ignore 0 --out all.csv --summary counts.csv
` + dataHelp

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("predict", predictUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	df.registerModel(fs)
	var modelPath, out, summary string
	var minConf float64
	var quiet, inputs bool
	fs.StringVar(&modelPath, "model", "", "model `file` written by dica fit --classifier")
	fs.StringVar(&out, "out", "", "output `file`: .csv, .fcs, .parquet or a .zarr store; - for CSV on stdout")
	fs.Float64Var(&minConf, "min-confidence", 0, "leave cells below this `confidence` (0 to 1) unassigned")
	fs.StringVar(&summary, "summary", "", "write the per-sample summary to this `file` (.csv or .json) instead of the standard output")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&inputs, "write-transformed", false, "also write the model's inputs after preprocessing (columns NAME_t)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if modelPath == "" || out == "" {
		return usageErr("--model and --out are required")
	}
	if !(minConf >= 0 && minConf <= 1) {
		return usageErr("--min-confidence %g: want a number from 0 to 1", minConf)
	}
	format, ferr := output.FormatOf(out)
	if err := checkOut(format, out, modelPath); err != nil {
		return err
	}
	if ferr != nil {
		return usageErr("--out %s", strings.TrimPrefix(ferr.Error(), "output: "))
	}
	switch strings.ToLower(filepath.Ext(summary)) {
	case "", ".csv", ".json":
	default:
		return usageErr("--summary %s: want a .csv or .json file", summary)
	}
	if summary != "" {
		if err := checkOutputs([]string{summary, out}, modelPath); err != nil {
			return err
		}
	}
	m, err := loadModel(ctx, modelPath)
	if err != nil {
		return err
	}
	cl := m.Classifier()
	if cl == nil {
		return usageErr("%s: %v", modelPath, strings.TrimPrefix(dica.ErrNoClassifier.Error(), "dica: "))
	}
	if cl.Kind == classify.KRR && minConf > 0 {
		return usageErr("--min-confidence applies to a classifier; %s carries a %s learner of real targets, which has no confidence", modelPath, cl.Kind)
	}
	df.markSet(fs)
	if err := df.fromModel(m, "model", stderr); err != nil {
		return err
	}
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	ins := append(append([]string(nil), in.files...), in.labels...)
	ins = append(ins, modelPath)
	if err := checkOut(format, out, ins...); err != nil {
		return err
	}
	if summary != "" {
		if err := checkOutputs([]string{summary}, ins...); err != nil {
			return err
		}
	} else if out != "-" {
		if err := checkOutputs([]string{"-"}, ins...); err != nil {
			return err
		}
	}
	// Labels for a regressor, targets for a classifier, or other targets
	// than the regressor's cannot be compared with its predictions.
	sc := in.src.Schema()
	if err := cl.CheckTruth(sc.Labelled, sc.Targets); err != nil {
		return usageErr("%s", strings.TrimPrefix(err.Error(), "classify: "))
	}
	warnInput(stderr, in)
	pr := newProgress(quiet)
	defer pr.done()
	pr.setTotal(in.src)
	sum, err := output.Write(ctx, in.Input, out, stdout, output.Options{Model: m, ModelPath: modelPath, Inputs: inputs, Predict: predictor(cl, minConf), Progress: pr.update})
	if err != nil {
		return err
	}
	pr.done()
	var rep summaryReport
	if cl.Kind == classify.KRR {
		rep = newRegressionReport(sum)
	} else {
		rep = newGatingReport(sum, minConf)
	}
	w, commit, abort, err := summaryWriter(summary, out, stdout, stderr)
	if err != nil {
		return err
	}
	defer abort()
	switch strings.ToLower(filepath.Ext(summary)) {
	case ".json":
		err = json.NewEncoder(w).Encode(rep)
	case ".csv":
		err = rep.writeCSV(w)
	default:
		err = rep.writeText(w)
	}
	if err != nil {
		return err
	}
	return commit()
}

// predictor returns the output's predictor of the model's learner cl: the
// population and confidence of each cell for an SVM (cells below minConf
// unassigned), the real targets for KRR.
func predictor(cl *classify.Model, minConf float64) *output.Predictor {
	var pred classify.Prediction
	run := func(z *mat.Dense) {
		r, _ := z.Dims()
		pred.Reset(cl, r)
		cl.PredictTo(&pred, z, minConf)
	}
	if cl.Kind == classify.KRR {
		return &output.Predictor{Targets: cl.Targets, Predict: func(z *mat.Dense, _ []int, _ []float64, values []float64) error {
			run(z)
			copy(values, pred.Values)
			return nil
		}}
	}
	return &output.Predictor{Populations: cl.Classes, Predict: func(z *mat.Dense, code []int, conf []float64, _ []float64) error {
		run(z)
		copy(code, pred.Class)
		copy(conf, pred.Confidence)
		return nil
	}}
}

// summaryReport is a summary of predictions, written as text, CSV or JSON.
type summaryReport interface {
	writeText(w io.Writer) error
	writeCSV(w io.Writer) error
}

// regressionReport is the summary of the predictions of real targets: per
// sample, the cells and the mean of each predicted target, and with the
// true targets the RMSE and R^2 of each.
type regressionReport struct {
	Targets []string           `json:"targets"`
	Samples []sampleRegression `json:"samples"`
	All     *sampleRegression  `json:"all"`
}

// sampleRegression is one sample's summary of predicted targets.
type sampleRegression struct {
	Sample  string          `json:"sample"`
	Cells   int64           `json:"cells"`
	Targets []targetSummary `json:"targets"`
	stats   *output.TargetStats
}

// targetSummary is the summary of one predicted target over a sample:
// the mean prediction and, with the true targets, the RMSE and R^2 (R^2
// is absent when the true target is constant over the sample).
type targetSummary struct {
	Target string   `json:"target"`
	Mean   float64  `json:"mean"`
	RMSE   *float64 `json:"rmse,omitempty"`
	R2     *float64 `json:"r2,omitempty"`
}

func newRegressionReport(s *output.Summary) *regressionReport {
	r := &regressionReport{Targets: s.Targets}
	all := &output.TargetStats{}
	for g, st := range s.Regression {
		if st == nil || st.Cells == 0 {
			continue
		}
		r.Samples = append(r.Samples, r.sample(s.Domains[g], st))
		all.Merge(st)
	}
	a := r.sample("all", all)
	r.All = &a
	return r
}

// sample returns the summary of the sums st.
func (r *regressionReport) sample(name string, st *output.TargetStats) sampleRegression {
	out := sampleRegression{Sample: name, Cells: st.Cells, stats: st}
	for t, target := range r.Targets {
		ts := targetSummary{Target: target}
		if st.Cells > 0 {
			ts.Mean = st.Mean[t]
		}
		if v := st.RMSE(t); !math.IsNaN(v) {
			ts.RMSE = &v
		}
		if v := st.R2(t); !math.IsNaN(v) {
			ts.R2 = &v
		}
		out.Targets = append(out.Targets, ts)
	}
	return out
}

// truth reports whether the report has the true targets.
func (r *regressionReport) truth() bool { return r.All != nil && r.All.stats.Truth }

// writeText writes the summary as a table: a row per sample and one for
// all, the mean of each predicted target and, with the true targets, its
// RMSE and R^2.
func (r *regressionReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "sample\tcells\t"
	for _, t := range r.Targets {
		head += "mean " + t + "\t"
		if r.truth() {
			head += "RMSE " + t + "\tR^2 " + t + "\t"
		}
	}
	fmt.Fprintln(tw, head)
	for _, s := range append(append([]sampleRegression(nil), r.Samples...), *r.All) {
		line := fmt.Sprintf("%s\t%d\t", s.Sample, s.Cells)
		for _, t := range s.Targets {
			line += fmt.Sprintf("%.6g\t", t.Mean)
			if r.truth() {
				line += optFloat(t.RMSE, 'g', 6, "-") + "\t" + optFloat(t.R2, 'f', 4, "-") + "\t"
			}
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// writeCSV writes the summary as CSV: sample, cells, and for each target
// T mean_T and, with the true targets, rmse_T and r2_T (empty when not
// defined).
func (r *regressionReport) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"sample", "cells"}
	for _, t := range r.Targets {
		head = append(head, "mean_"+t)
		if r.truth() {
			head = append(head, "rmse_"+t, "r2_"+t)
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, s := range append(append([]sampleRegression(nil), r.Samples...), *r.All) {
		row := []string{s.Sample, strconv.FormatInt(s.Cells, 10)}
		for _, t := range s.Targets {
			row = append(row, strconv.FormatFloat(t.Mean, 'g', -1, 64))
			if r.truth() {
				row = append(row, optFloat(t.RMSE, 'g', -1, ""), optFloat(t.R2, 'g', -1, ""))
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// optFloat formats *v, or returns none when v is nil.
func optFloat(v *float64, f byte, prec int, none string) string {
	if v == nil {
		return none
	}
	return strconv.FormatFloat(*v, f, prec, 64)
}

// summaryWriter returns where the summary goes: the file --summary names
// (atomically), else the standard output, or the standard error when the
// cells go to the standard output.
func summaryWriter(path, out string, stdout, stderr io.Writer) (io.Writer, func() error, func(), error) {
	if path == "" {
		w := stdout
		if out == "-" {
			w = stderr
		}
		return w, func() error { return nil }, func() {}, nil
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, f.Commit, f.Abort, nil
}

// gatingReport is the summary of a prediction: per sample, the cells of
// each predicted population, and with labels the accuracy, the F-measure
// and the confusion matrix.
type gatingReport struct {
	MinConfidence float64        `json:"min_confidence"`
	Populations   []string       `json:"populations"` // the predicted columns: the learner's populations, then "unassigned"
	Samples       []sampleGating `json:"samples"`
	All           *sampleGating  `json:"all,omitempty"`
	labels        []string       // the true labels, rows of the confusion matrices
	unassigned    int            // the column of unassigned cells
}

// sampleGating is one sample's summary.
type sampleGating struct {
	Sample string  `json:"sample"`
	Cells  int64   `json:"cells"`
	Counts []int64 `json:"counts"`
	// With labels: accuracy over the labelled cells, FlowCAP F-measure,
	// and the confusion matrix (rows: the true labels of Labels; columns:
	// Populations).
	Accuracy  *float64  `json:"accuracy,omitempty"`
	FMeasure  *float64  `json:"f_measure,omitempty"`
	Labels    []string  `json:"labels,omitempty"`
	Confusion [][]int64 `json:"confusion,omitempty"`
}

func newGatingReport(s *output.Summary, minConf float64) *gatingReport {
	r := &gatingReport{MinConfidence: minConf, Populations: s.Predicted, labels: s.Classes, unassigned: len(s.Predicted) - 1}
	np := len(s.Predicted)
	total := sampleGating{Sample: "all", Counts: make([]int64, np)}
	labelled := false
	var allConf [][]int64
	for g, counts := range s.Counts {
		if counts == nil {
			continue
		}
		sg := sampleGating{Sample: s.Domains[g], Counts: counts}
		for p, k := range counts {
			sg.Cells += k
			total.Counts[p] += k
		}
		total.Cells += sg.Cells
		if g < len(s.Confusion) && s.Confusion[g] != nil {
			labelled = true
			conf := padConfusion(s.Confusion[g], len(s.Classes), np)
			r.score(&sg, conf)
			for len(allConf) < len(conf) {
				allConf = append(allConf, make([]int64, np))
			}
			for l, row := range conf {
				for p, k := range row {
					allConf[l][p] += k
				}
			}
		}
		r.Samples = append(r.Samples, sg)
	}
	if labelled {
		r.score(&total, allConf)
	}
	r.All = &total
	return r
}

// padConfusion returns the confusion matrix with a row for each of the
// rows labels and np columns.
func padConfusion(c [][]int64, rows, np int) [][]int64 {
	out := make([][]int64, rows)
	for l := range out {
		out[l] = make([]int64, np)
		if l < len(c) {
			copy(out[l], c[l])
		}
	}
	return out
}

// score sets the accuracy, F-measure and confusion matrix of sg: a cell
// is right when its predicted population has its label's name.
func (r *gatingReport) score(sg *sampleGating, conf [][]int64) {
	var right, n int64
	ic := make([][]int, len(conf))
	for l, row := range conf {
		ic[l] = make([]int, len(row))
		for p, k := range row {
			ic[l][p] = int(k)
			n += k
			if p < len(r.Populations) && l < len(r.labels) && p != r.unassigned && r.Populations[p] == r.labels[l] {
				right += k
			}
		}
	}
	if n == 0 {
		return
	}
	acc := float64(right) / float64(n)
	f := eval.FMeasure(ic, r.unassigned)
	sg.Accuracy, sg.FMeasure, sg.Labels, sg.Confusion = &acc, &f, r.labels, conf
}

// writeText writes the summary as tables.
func (r *gatingReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "sample\tcells\t"
	for _, p := range r.Populations {
		head += p + "\t"
	}
	scored := r.All != nil && r.All.Accuracy != nil
	if scored {
		head += "accuracy\tF-measure\t"
	}
	fmt.Fprintln(tw, head)
	rows := append(append([]sampleGating(nil), r.Samples...), *r.All)
	for _, s := range rows {
		line := fmt.Sprintf("%s\t%d\t", s.Sample, s.Cells)
		for _, k := range s.Counts {
			line += fmt.Sprintf("%d (%.1f%%)\t", k, percent(k, s.Cells))
		}
		if scored {
			if s.Accuracy != nil {
				line += fmt.Sprintf("%.4f\t%.4f\t", *s.Accuracy, *s.FMeasure)
			} else {
				line += "-\t-\t"
			}
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !scored {
		return nil
	}
	fmt.Fprintf(w, "\nconfusion, all samples (rows: the true label; columns: the predicted population):\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\t"+strings.Join(r.Populations, "\t")+"\t")
	for l, row := range r.All.Confusion {
		line := r.labels[l] + "\t"
		for _, k := range row {
			line += strconv.FormatInt(k, 10) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// writeCSV writes the summary as CSV: a row per sample and one for all,
// the cells, the count and percentage of each population, and with labels
// the accuracy and F-measure.
func (r *gatingReport) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"sample", "cells"}
	for _, p := range r.Populations {
		head = append(head, p, p+" %")
	}
	scored := r.All != nil && r.All.Accuracy != nil
	if scored {
		head = append(head, "accuracy", "f_measure")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, s := range append(append([]sampleGating(nil), r.Samples...), *r.All) {
		row := []string{s.Sample, strconv.FormatInt(s.Cells, 10)}
		for _, k := range s.Counts {
			row = append(row, strconv.FormatInt(k, 10), strconv.FormatFloat(percent(k, s.Cells), 'f', 2, 64))
		}
		if scored {
			if s.Accuracy != nil {
				row = append(row, strconv.FormatFloat(*s.Accuracy, 'f', 6, 64), strconv.FormatFloat(*s.FMeasure, 'f', 6, 64))
			} else {
				row = append(row, "", "")
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func percent(k, n int64) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(k) / float64(n)
}
