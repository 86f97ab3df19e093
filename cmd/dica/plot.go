package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/figure"
	"github.com/dicalab/dica/internal/atomicfile"
)

const plotUsage = `Usage: dica plot --model MODEL --data FILES --out FIG.png|FIG.svg [flags]
       dica plot --kind predicted --model MODEL --data NEW --reference REF \
           --reference-labels LABELS --out FIG.png
       dica plot --projected OUT.csv --out FIG.png
       dica plot --model MODEL --out spectrum.png
       dica plot --eval EVAL.json --out scores.png

Draw what a projection does to the cells, before trusting it. The picture
is PNG or SVG, by the --out extension.

Kinds of picture (--kind; the default follows the inputs: eval with --eval,
spectrum with a model and no cells, projection otherwise):

  projection  the cells on two components (--axes): a large panel colored by
              population (by value with --target), and beside it one small
              panel per sample, the sample's cells over those of all samples
              in gray, so a sample that lies apart shows; with --baseline,
              the same under a baseline below
  pairs       a grid of the first --pairs components: below the diagonal by
              population, above by sample (up to 10 samples), each sample's
              density on the diagonal, so shifts between samples show
  samples     one larger panel per sample, all with the same axes, the
              sample's cells over those of all samples in gray; samples the
              model was not fitted on are marked unseen
  unseen      do unseen samples mix with the others? the cells of the
              samples the model was not fitted on (or those named by
              --unseen), each sample in its color, over the other samples'
              cells in gray, and above them every cell by population
  predicted   how the model's classifier (dica fit --classifier svm) gates
              new samples: a first panel of the reference's cells by their
              hand-gated populations (--reference and --reference-labels;
              or, without --reference, the samples of --data that have
              labels), then one panel per new sample, its cells by the
              population predicted for them (unassigned cells, below
              --min-confidence, in gray); with labels for a new sample, its
              title says how many drawn cells are predicted as gated. A
              model of --method input is drawn on the principal components
              of the drawn cells' inputs (axes "input PC1", ...)
  spectrum    the model's eigenvalues, the components it returns marked
  eval        the score of each method on each test sample, with the mean
              and standard deviation, from 'dica eval --json' output

Each population has one color in every picture of a model, from its place
among the model's populations in natural order (1, 2, ..., 10), safe for
color-blind readers; no panel colors more than 10 samples.

The cells come from a model and the data (the same data flags as fit and
transform; the model's columns are used), or from the CSV written by
'dica transform' (--projected: its component columns DICA1.., KPCA1.., and
its domain and label columns). Large inputs are subsampled: at most --cells
cells of each sample, drawn uniformly at random with --seed; the picture
says how many.

Baselines (--baseline, with --model and --data): kpca fits kernel PCA with
the model's kernel and rank to the plotted cells; pca projects them on the
first principal components of their inputs.

Examples:

  dica plot --model cytof.dica --data 'sample*.csv' --labels 'labels*.csv' \
      --labels-ignore 0 --transform log1p --baseline kpca --out cytof.png
  dica plot --kind samples --model cytof.dica --data 'sample*.csv' \
      --labels 'labels*.csv' --labels-ignore 0 --transform log1p \
      --out samples.png
  dica plot --kind unseen --model cytof.dica --data 'sample*.csv' \
      --labels 'labels*.csv' --labels-ignore 0 --transform log1p \
      --unseen sample15,sample16 --out unseen.png
  dica plot --kind predicted --model ref.dica --data sample9.csv,sample15.csv \
      --reference sample2.csv --reference-labels labels2.csv \
      --labels-ignore 0 --out gated.png
  dica plot --projected s9.csv --kind pairs --out s9_pairs.svg
  dica eval --json ... > eval.json && dica plot --eval eval.json --out eval.png
` + dataHelp

// plotKinds are the values of --kind.
var plotKinds = []string{"projection", "pairs", "samples", "unseen", "predicted", "spectrum", "eval"}

// plotSettings are the flags of dica plot besides the data flags.
type plotSettings struct {
	modelPath, evalPath, out string
	projected                listFlag
	kind, baseline, axes     string
	unseen                   string
	pairs, cells             int
	seed                     uint64
	width, height, dpi       int
	title                    string
	quiet                    bool
	// reference and referenceLabels: the hand-gated cells of --kind
	// predicted; minConf its minimum confidence.
	reference, referenceLabels listFlag
	minConf                    float64
}

// register defines the flags on fs.
func (f *plotSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&f.modelPath, "model", "", "model `file` written by dica fit")
	fs.Var(&f.projected, "projected", "CSV `files` written by dica transform (globs; repeatable)")
	fs.StringVar(&f.evalPath, "eval", "", "JSON `file` written by dica eval --json (- for standard input)")
	fs.StringVar(&f.out, "out", "", "picture `file`: .png or .svg")
	fs.StringVar(&f.kind, "kind", "", "`kind` of picture: "+strings.Join(plotKinds, ", ")+" (default: from the inputs)")
	fs.StringVar(&f.baseline, "baseline", "none", "`baseline` drawn beside the projection: none, kpca or pca")
	fs.StringVar(&f.axes, "axes", "1,2", "the two `components` on the axes, 1-based")
	fs.StringVar(&f.unseen, "unseen", "", "--kind unseen: the `samples` to hold apart, comma-separated names or globs (default: those the model was not fitted on)")
	fs.IntVar(&f.pairs, "pairs", 3, "number of `components` of the pairs grid")
	fs.IntVar(&f.cells, "cells", 5000, "largest number of `cells` drawn per sample, drawn at random")
	fs.Uint64Var(&f.seed, "seed", 1, "random `seed` of the subsample and of the drawing order")
	fs.IntVar(&f.width, "width", 0, "width in `pixels` (default: from the kind of picture)")
	fs.IntVar(&f.height, "height", 0, "height in `pixels` (default: from the kind of picture)")
	fs.IntVar(&f.dpi, "dpi", figure.DefaultDPI, "`dots` per inch of a PNG: higher makes the text and dots smaller in pixels")
	fs.StringVar(&f.title, "title", "", "the picture's `title` (default: says what is drawn)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.Var(&f.reference, "reference", "--kind predicted: the hand-gated reference sample's data `files` (default: the samples of --data with labels)")
	fs.Var(&f.referenceLabels, "reference-labels", "--kind predicted: the reference's row-aligned label `files`, one per --reference file (or --label COLUMN)")
	fs.Float64Var(&f.minConf, "min-confidence", 0, "--kind predicted: leave cells below this `confidence` (0 to 1) unassigned")
}

// runPlot runs dica plot: it checks the command line, draws the picture
// the flags ask for and writes it atomically to --out.
func runPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plot", plotUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	var f plotSettings
	f.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}

	// Check the command line before any work.
	if f.out == "" {
		return usageErr("--out is required: the picture file (.png or .svg)")
	}
	format, err := figure.FormatOf(f.out)
	if err != nil {
		return usageErr("--out %q: the name must end in .png or .svg", f.out)
	}
	hasData := len(df.data)+len(pos) > 0
	if err := f.checkKind(hasData); err != nil {
		return err
	}
	o, err := f.options(format)
	if err != nil {
		return err
	}
	inputs, err := plotInputs(&df, pos, f.projected, f.modelPath, f.evalPath)
	if err != nil {
		return err
	}
	for _, l := range []struct {
		pats listFlag
		flag string
	}{{f.reference, "--reference"}, {f.referenceLabels, "--reference-labels"}} {
		files, err := expand(l.pats, l.flag)
		if err != nil {
			return err
		}
		inputs = append(inputs, files...)
	}
	if err := atomicfile.CheckOutput(f.out, inputs...); err != nil {
		return usageErr("--out: %v", err)
	}

	var m *dica.Model
	if f.modelPath != "" {
		if m, err = loadModel(ctx, f.modelPath); err != nil {
			return err
		}
	}
	var fig *figure.Figure
	switch f.kind {
	case "eval":
		fig, err = evalFigure(f.evalPath, os.Stdin, o)
	case "spectrum":
		fig, err = spectrumFigure(m, o)
	case "predicted":
		var d *predictedDrawing
		if d, err = f.predictedPicture(ctx, fs, &df, pos, m, stderr, o); err == nil {
			fig = d.fig
		}
	default:
		fig, err = f.cellsPicture(ctx, fs, &df, pos, m, stderr, o)
	}
	if err != nil {
		return err
	}
	out, err := atomicfile.Create(f.out)
	if err != nil {
		return err
	}
	defer out.Abort()
	if err := fig.Write(out, format); err != nil {
		return err
	}
	return out.Commit()
}

// checkKind chooses the kind of picture when --kind is not given (eval
// with --eval, spectrum with a model and no cells, projection otherwise)
// and checks that the inputs (hasData: --data or positional files) and the
// baseline fit it: one source of cells or scores, and what the kind needs.
func (f *plotSettings) checkKind(hasData bool) error {
	sources := 0
	for _, b := range []bool{hasData, len(f.projected) > 0, f.evalPath != ""} {
		if b {
			sources++
		}
	}
	if sources > 1 {
		return usageErr("give one of --data (with --model), --projected or --eval")
	}
	if f.kind == "" {
		switch {
		case len(f.reference) > 0:
			f.kind = "predicted"
		case f.evalPath != "":
			f.kind = "eval"
		case f.modelPath != "" && !hasData && len(f.projected) == 0:
			f.kind = "spectrum"
		default:
			f.kind = "projection"
		}
	}
	if !slices.Contains(plotKinds, f.kind) {
		return usageErr("--kind %q: want one of %s", f.kind, strings.Join(plotKinds, ", "))
	}
	switch f.kind {
	case "eval":
		if f.evalPath == "" {
			return usageErr("--kind eval needs --eval FILE (the output of dica eval --json)")
		}
	case "predicted":
		if f.modelPath == "" || !hasData {
			return usageErr("--kind predicted needs --model FILE (fitted with --classifier svm) and --data FILES, the new samples")
		}
	case "spectrum":
		if f.modelPath == "" {
			return usageErr("--kind spectrum needs --model FILE")
		}
		if sources > 0 {
			return usageErr("--kind spectrum draws the model's eigenvalues: give --model only")
		}
	default:
		if f.evalPath != "" {
			return usageErr("--eval draws --kind eval")
		}
		if hasData && f.modelPath == "" {
			return usageErr("--data needs --model (the cells are projected with it); or give --projected with the output of dica transform")
		}
		if !hasData && len(f.projected) == 0 {
			return usageErr("no cells: give --model and --data, or --projected FILES")
		}
	}
	if f.unseen != "" && f.kind != "unseen" {
		return usageErr("--unseen applies to --kind unseen")
	}
	if f.kind != "predicted" && (len(f.reference) > 0 || len(f.referenceLabels) > 0 || f.minConf != 0) {
		return usageErr("--reference, --reference-labels and --min-confidence apply to --kind predicted")
	}
	if len(f.referenceLabels) > 0 && len(f.reference) == 0 {
		return usageErr("--reference-labels goes with --reference, the reference's data files")
	}
	if !(f.minConf >= 0 && f.minConf <= 1) {
		return usageErr("--min-confidence %g: want a number from 0 to 1", f.minConf)
	}
	if f.baseline != "none" && f.baseline != "kpca" && f.baseline != "pca" {
		return usageErr("--baseline %q: want none, kpca or pca", f.baseline)
	}
	if f.baseline != "none" {
		if f.kind != "projection" && f.kind != "unseen" {
			return usageErr("--baseline applies to --kind projection and unseen")
		}
		if !hasData {
			return usageErr("--baseline needs the cells' inputs: give --model and --data")
		}
	}
	return nil
}

// options checks the flags of the drawing (axes, pairs, cells, dpi and
// size) and returns the figure's options for a picture in format.
func (f *plotSettings) options(format figure.Format) (figure.Options, error) {
	ax, err := parseAxes(f.axes)
	if err != nil {
		return figure.Options{}, err
	}
	if f.pairs < 2 {
		return figure.Options{}, usageErr("--pairs %d: need at least 2 components", f.pairs)
	}
	if f.cells < 1 || f.cells > maxPlotCells {
		return figure.Options{}, usageErr("--cells %d: want 1 to %s cells per sample", f.cells, commas(maxPlotCells))
	}
	if f.dpi < 10 || f.dpi > 2400 {
		return figure.Options{}, usageErr("--dpi %d: want 10 to 2400", f.dpi)
	}
	if f.width < 0 || f.height < 0 || f.width > 20000 || f.height > 20000 {
		return figure.Options{}, usageErr("--width and --height: want 1 to 20000 pixels")
	}
	o := figure.Options{Title: f.title, X: ax[0], Y: ax[1], Components: f.pairs, Seed: f.seed, DPI: f.dpi}
	pxToPt := func(px int) vg.Length {
		d := float64(f.dpi)
		if format == figure.SVG {
			d = 96 // an SVG's size is in CSS pixels of 1/96 inch
		}
		return vg.Length(float64(px) / d * 72)
	}
	o.Width, o.Height = pxToPt(f.width), pxToPt(f.height)
	return o, nil
}

// cellsPicture draws the cells: projected by the model m from the data the
// flags name, or read from dica transform's output (--projected); either
// way subsampled per sample.
func (f *plotSettings) cellsPicture(ctx context.Context, fs *flag.FlagSet, df *dataFlags, pos []string, m *dica.Model, stderr io.Writer, o figure.Options) (*figure.Figure, error) {
	pr := newProgress(f.quiet)
	so := figure.SampleOptions{PerDomain: f.cells, Seed: f.seed, MaxCells: maxPlotCells}
	var s *figure.Sample
	var err error
	if len(df.data)+len(pos) > 0 {
		var src dataset.Source
		df.markSet(fs)
		if src, err = modelSource(df, m, pos, stderr); err != nil {
			return nil, err
		}
		pr.setTotal(src)
		so.Progress = func(rows int64) { pr.update("project", rows) }
		s, err = figure.SampleModel(ctx, m, src, so)
	} else {
		so.Progress = func(rows int64) { pr.update("read", rows) }
		s, err = projectedSample(ctx, f.projected, splitList(df.labelsIgnore), so)
	}
	pr.done()
	var many *figure.TooManyCellsError
	switch {
	case errors.As(err, &many):
		return nil, fmt.Errorf("%v: lower --cells", err)
	case errors.Is(err, figure.ErrNoCells):
		return nil, errors.New("no cells to draw: the data is empty (or every cell was left out by --labels-ignore)")
	case err != nil:
		return nil, err
	}
	return cellsFigure(ctx, f.kind, m, s, f.baseline, splitList(f.unseen), o)
}

// parseAxes parses --axes "I,J" into 0-based components.
func parseAxes(s string) ([2]int, error) {
	parts := splitList(s)
	var ax [2]int
	if len(parts) != 2 {
		return ax, usageErr("--axes %q: want two components such as 1,2", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return ax, usageErr("--axes %q: %q is not a component number (1, 2, ...)", s, p)
		}
		ax[i] = v - 1
	}
	if ax[0] == ax[1] {
		return ax, usageErr("--axes %q: want two different components", s)
	}
	return ax, nil
}

// plotInputs lists the files the command reads, so that --out is never one
// of them.
func plotInputs(df *dataFlags, pos, projected []string, model, eval string) ([]string, error) {
	in := []string{model, eval}
	if len(df.data)+len(pos) > 0 {
		pats, err := expandDirs(append(append([]string(nil), df.data...), pos...))
		if err != nil {
			return nil, err
		}
		files, err := expand(pats, "--data")
		if err != nil {
			return nil, err
		}
		in = append(in, files...)
	}
	for _, l := range []struct {
		pats []string
		flag string
	}{{df.labels, "--labels"}, {projected, "--projected"}} {
		files, err := expand(l.pats, l.flag)
		if err != nil {
			return nil, err
		}
		in = append(in, files...)
	}
	return in, nil
}

// modelSource opens the data named by the flags as the model reads it: the
// model's channels, with the preprocessing it records (dica transform's
// rules: a flag that contradicts the model is an error).
func modelSource(df *dataFlags, m *dica.Model, pos []string, stderr io.Writer) (dataset.Source, error) {
	if err := df.fromModel(m, "model", stderr); err != nil {
		return nil, err
	}
	in, err := df.open(pos)
	if err != nil {
		return nil, err
	}
	warnInput(stderr, in)
	return in.src, nil
}

// maxPlotCells bounds the cells a picture holds (all samples together):
// --cells times the number of samples may not exceed it.
const maxPlotCells = figure.MaxSampleCells

// componentColumn matches the component columns of a transform output.
var componentColumn = regexp.MustCompile(`^(DICA|UDICA|KPCA|COIR)([0-9]+)$`)

// projectedSample reads the components, domains and labels of transform
// outputs (CSV with a header) and keeps at most per cells of each domain.
func projectedSample(ctx context.Context, patterns []string, ignore []string, so figure.SampleOptions) (*figure.Sample, error) {
	files, err := expand(patterns, "--projected")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(f, ".gz"))); ext != ".csv" {
			return nil, usageErr("--projected %s: want the CSV output of dica transform (FCS outputs: project again with --model and --data)", f)
		}
	}
	head, err := csvio.NewSource(files, csvio.Options{Header: csvio.WithHeader})
	if err != nil {
		return nil, fmt.Errorf("--projected: %w", err)
	}
	cols := head.Schema().Features
	var comps []string
	method := ""
	o := csvio.Options{Header: csvio.WithHeader}
	for _, c := range cols {
		switch c {
		case "domain":
			o.Domain = c
			continue
		case "label":
			o.Label = c
			continue
		}
		mm := componentColumn.FindStringSubmatch(c)
		if mm == nil {
			continue
		}
		if method == "" {
			method = mm[1]
		}
		if mm[1] == method && mm[2] == strconv.Itoa(len(comps)+1) {
			comps = append(comps, c)
		}
	}
	if len(comps) == 0 {
		return nil, fmt.Errorf("--projected %s: no component columns (DICA1, KPCA1, UDICA1 or COIR1 ...) in its header; give the CSV output of dica transform", files[0])
	}
	o.Features = comps
	if o.Label != "" {
		o.LabelsIgnore = ignore
	}
	src, err := csvio.NewSource(files, o)
	if err != nil {
		return nil, fmt.Errorf("--projected: %w", err)
	}
	out, err := figure.SampleComponents(ctx, src, method, so)
	if err != nil {
		return nil, err
	}
	out.From = filepath.Base(files[0])
	if len(files) > 1 {
		out.From += fmt.Sprintf(" and %d more", len(files)-1)
	}
	return out, nil
}

// cellsFigure draws the projected cells. The populations take their
// colors from the model's populations (so that each has one color in every
// picture of the model); unseen names the samples --kind unseen holds
// apart (names or globs; none: the samples the model was not fitted on).
func cellsFigure(ctx context.Context, kind string, m *dica.Model, s *figure.Sample, baseline string, unseen []string, o figure.Options) (*figure.Figure, error) {
	var palette *figure.Palette
	if m != nil && len(m.Summary.Classes) > 0 {
		palette = figure.NewPalette(m.Summary.Classes)
	}
	c := s.Cells(palette)
	main := figure.View{Name: s.Method, Title: s.Method, Z: s.Z}
	if s.From != "" {
		main.Title += " (" + s.From + ")"
	}
	// trained marks the samples the model was fitted on (nil: not known).
	var trained []bool
	if m != nil {
		main.Title = figure.ModelTitle(m)
		trained = make([]bool, len(s.Domains))
		for g, d := range s.Domains {
			trained[g] = slices.Contains(m.Summary.Domains, d)
		}
		c.Unseen = make([]bool, len(s.Domains))
		for g := range c.Unseen {
			c.Unseen[g] = !trained[g]
		}
	}
	var notes []string
	if kind == "unseen" {
		note, err := holdApart(&c, s.Domains, trained, unseen, m)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	_, k := s.Z.Dims()
	if need := max(o.X, o.Y) + 1; kind != "pairs" && k < need {
		return nil, usageErr("--axes: the projection has %d components, component %d was asked for", k, need)
	}
	if kind == "pairs" && k < 2 {
		return nil, fmt.Errorf("the projection has %d component: a pairs grid needs 2", k)
	}
	if kind == "pairs" {
		o.Components = min(o.Components, k)
	}
	views := []figure.View{main}
	if baseline != "none" {
		// The baseline sees the samples the model was fitted on.
		var fit []bool
		if trained != nil && slices.Contains(trained, false) {
			fit = make([]bool, len(s.Domain))
			for i, g := range s.Domain {
				fit[i] = trained[g]
			}
		}
		need := max(o.X, o.Y) + 1
		var (
			v    figure.View
			note string
			err  error
		)
		if baseline == "pca" {
			v, note, err = figure.PCABaseline(s, fit, need)
		} else {
			v, note, err = figure.KPCABaseline(ctx, m, s, fit, need)
		}
		if err != nil {
			return nil, fmt.Errorf("--baseline %s: %w", baseline, err)
		}
		views = append(views, v)
		notes = append(notes, note)
	}
	var (
		fig *figure.Figure
		err error
	)
	switch kind {
	case "projection":
		fig, err = figure.Projection(c, views, o)
	case "pairs":
		fig, err = figure.Pairs(c, main, o)
	case "samples":
		fig, err = figure.Samples(c, main, o)
	case "unseen":
		fig, err = figure.TrainingAndUnseen(c, views, o)
	}
	if err != nil {
		return nil, err
	}
	fig.Notes = append(append([]string{s.Note()}, notes...), fig.Notes...)
	return fig, nil
}

// holdApart marks in c the samples --kind unseen holds apart: those named
// by patterns (names or globs), else those the model was not fitted on
// (trained false). Named samples the model was fitted on, or any named
// sample when the model is not known, are called "chosen", not unseen, and
// the returned note says why.
func holdApart(c *figure.Cells, domains []string, trained []bool, patterns []string, m *dica.Model) (string, error) {
	if len(patterns) == 0 {
		if m == nil {
			return "", usageErr("--kind unseen without --model: name the samples to hold apart with --unseen, such as --unseen %s", capList(domains[max(0, len(domains)-2):], 2))
		}
		if !slices.Contains(c.Unseen, true) {
			return "", usageErr("--kind unseen: the model was fitted on every sample given (%s): name the samples to hold apart with --unseen, such as --unseen %s",
				capList(domains, 10), capList(domains[max(0, len(domains)-2):], 2))
		}
		return "", nil
	}
	c.Unseen = make([]bool, len(domains))
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return "", usageErr("--unseen %q: %v", p, err)
		}
		found := false
		for g, d := range domains {
			if ok, _ := path.Match(p, d); ok {
				c.Unseen[g], found = true, true
			}
		}
		if !found {
			return "", usageErr("--unseen %q: no such sample in the data (its samples: %s)", p, capList(domains, 10))
		}
	}
	if !slices.Contains(c.Unseen, false) {
		return "", usageErr("--unseen names every sample of the data: leave some to compare with")
	}
	var seen []string
	for g, d := range domains {
		if c.Unseen[g] && (trained == nil || trained[g]) {
			seen = append(seen, d)
		}
	}
	if len(seen) == 0 {
		return "", nil
	}
	c.UnseenTerm = "chosen"
	if trained == nil {
		return "Which samples the model was fitted on is not known here: the chosen samples show where they lie among the others.", nil
	}
	return fmt.Sprintf("The model was fitted on %s too: the picture shows where the chosen samples lie among the others, not how the model does on samples it has not seen.", nameList(seen)), nil
}

// capList joins at most max names, and says how many more there are.
func capList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ","), len(names)-max)
}

// nameList joins names with commas and spaces, "and" before the last.
func nameList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// spectrumFigure draws the model's eigenvalues.
func spectrumFigure(m *dica.Model, o figure.Options) (*figure.Figure, error) {
	vals := m.Eigenvalues
	if len(vals) == 0 {
		return nil, errors.New("the model has no eigenvalues")
	}
	f, err := figure.Spectrum(vals, m.Positive, dica.NullTol*vals[0], o)
	if err != nil {
		return nil, err
	}
	if o.Title == "" {
		f.Title = "Eigenvalues of " + figure.ModelTitle(m)
	}
	if c := len(m.Summary.Classes); m.Config().Method.Supervised() && c > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("With %d populations, %s has at most %d components with a positive eigenvalue (populations - 1).",
			c, strings.ToUpper(m.Config().Method.String()), c-1))
	}
	return f, nil
}

// maxEvalBytes bounds the JSON read by --eval.
const maxEvalBytes = 64 << 20

// evalFile holds the keys of 'dica eval --json' output that the picture
// uses; other keys are ignored.
type evalFile struct {
	Task    string `json:"task"`
	Metric  string `json:"metric"`
	Solver  string `json:"solver"`
	Rank    int    `json:"rank"`
	Methods []struct {
		Method string `json:"method"`
		Splits []struct {
			Train []string `json:"train"`
			Test  []string `json:"test"`
		} `json:"splits"`
		Scores []struct {
			Domain string  `json:"domain"`
			Score  float64 `json:"score"`
		} `json:"scores"`
		Mean float64 `json:"mean"`
		SD   float64 `json:"sd"`
	} `json:"methods"`
}

// evalScores reads an eval JSON into per-method, per-test-sample scores.
// A sample tested in several splits gets the mean of its scores.
func evalScores(r io.Reader, name string) (figure.Scores, *evalFile, error) {
	var s figure.Scores
	data, err := io.ReadAll(io.LimitReader(r, maxEvalBytes+1))
	if err != nil {
		return s, nil, fmt.Errorf("--eval %s: %w", name, err)
	}
	if len(data) > maxEvalBytes {
		return s, nil, fmt.Errorf("--eval %s: larger than %d MB; want the output of dica eval --json", name, maxEvalBytes>>20)
	}
	var e evalFile
	if err := json.Unmarshal(data, &e); err != nil {
		return s, nil, fmt.Errorf("--eval %s: not the JSON of dica eval --json: %v", name, err)
	}
	if len(e.Methods) == 0 {
		return s, nil, fmt.Errorf("--eval %s: no methods; want the output of dica eval --json", name)
	}
	s.Metric = e.Metric
	if e.Metric == "accuracy" {
		s.Min, s.Max = 0, 1
	}
	index := map[string]int{}
	for _, m := range e.Methods {
		for _, d := range m.Scores {
			if _, ok := index[d.Domain]; !ok {
				index[d.Domain] = len(s.Domains)
				s.Domains = append(s.Domains, d.Domain)
			}
		}
	}
	if len(s.Domains) == 0 {
		return s, nil, fmt.Errorf("--eval %s: no scores", name)
	}
	for _, m := range e.Methods {
		sum := make([]float64, len(s.Domains))
		cnt := make([]float64, len(s.Domains))
		for _, d := range m.Scores {
			if math.IsNaN(d.Score) || math.IsInf(d.Score, 0) {
				return s, nil, fmt.Errorf("--eval %s: method %s, sample %s: score %v", name, m.Method, d.Domain, d.Score)
			}
			sum[index[d.Domain]] += d.Score
			cnt[index[d.Domain]]++
		}
		row := make([]float64, len(s.Domains))
		for j := range row {
			row[j] = math.NaN()
			if cnt[j] > 0 {
				row[j] = sum[j] / cnt[j]
			}
		}
		s.Methods = append(s.Methods, m.Method)
		s.Score = append(s.Score, row)
	}
	return s, &e, nil
}

// evalFigure draws an eval JSON (path, or stdin for "-").
func evalFigure(path string, stdin io.Reader, o figure.Options) (*figure.Figure, error) {
	r := stdin
	name := "(standard input)"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--eval: %w", err)
		}
		defer f.Close()
		r, name = f, path
	}
	s, e, err := evalScores(r, name)
	if err != nil {
		return nil, err
	}
	fig, err := figure.EvalScores(s, o)
	if err != nil {
		return nil, err
	}
	if o.Title == "" {
		fig.Title = strings.ToUpper(s.Metric[:min(1, len(s.Metric))]) + s.Metric[min(1, len(s.Metric)):] + " of each method on each test sample"
		if e.Solver != "" {
			fig.Title += ", solver " + e.Solver
			if e.Rank > 0 {
				fig.Title += fmt.Sprintf(" rank %d", e.Rank)
			}
		}
	}
	if sp := e.Methods[0].Splits; len(sp) == 1 {
		fig.Notes = append(fig.Notes, "Trained on "+strings.Join(sp[0].Train, ", ")+".")
	} else if len(sp) > 1 {
		fig.Notes = append(fig.Notes, fmt.Sprintf("%d splits: each test sample trained on the others.", len(sp)))
	}
	return fig, nil
}

// predictedDrawing is a picture of --kind predicted and what it draws:
// the cells (the reference's first when --reference names it) and their
// predictions.
type predictedDrawing struct {
	fig    *figure.Figure
	gating *figure.Gating
	sample *figure.Sample
}

// predictedPicture draws --kind predicted: the cells of the reference
// (--reference, or the samples of the data that have labels) by their
// labels, and those of each new sample by the population the model's
// classifier predicts for them.
func (f *plotSettings) predictedPicture(ctx context.Context, fs *flag.FlagSet, df *dataFlags, pos []string, m *dica.Model, stderr io.Writer, o figure.Options) (*predictedDrawing, error) {
	cl := m.Classifier()
	switch {
	case cl == nil:
		return nil, usageErr("%s: %v", f.modelPath, strings.TrimPrefix(dica.ErrNoClassifier.Error(), "dica: "))
	case cl.Kind != classify.SVM:
		return nil, usageErr("%s carries a %s learner of real targets: --kind predicted draws populations; draw the targets with --kind projection --target %s", f.modelPath, cl.Kind, strings.Join(cl.Targets, ","))
	}
	df.markSet(fs)
	pr := newProgress(f.quiet)
	defer pr.done()
	so := figure.SampleOptions{PerDomain: f.cells, Seed: f.seed, MaxCells: maxPlotCells}
	draw := func(d *dataFlags, extra []string, what string) (*figure.Sample, error) {
		src, err := modelSource(d, m, extra, stderr)
		if err != nil {
			return nil, err
		}
		pr.setTotal(src)
		so.Progress = func(rows int64) { pr.update("project", rows) }
		s, err := figure.SampleModel(ctx, m, src, so)
		var many *figure.TooManyCellsError
		switch {
		case errors.As(err, &many):
			return nil, fmt.Errorf("%v: lower --cells", err)
		case errors.Is(err, figure.ErrNoCells):
			return nil, fmt.Errorf("no cells to draw in %s: the data is empty (or every cell was left out by --labels-ignore)", what)
		}
		return s, err
	}
	dd := *df
	if len(dd.labels) == 0 && dd.label == "" {
		// --labels-ignore is the reference's: the new samples have no
		// labels.
		dd.labelsIgnore = ""
	}
	s, err := draw(&dd, pos, "--data")
	if err != nil {
		return nil, err
	}
	// ref marks the reference samples: those of --reference, first, or
	// the samples of the data with labelled cells.
	var ref []bool
	if len(f.reference) > 0 {
		rd := *df
		rd.data, rd.labels = f.reference, f.referenceLabels
		n, _ := s.Z.Dims()
		so.MaxCells = max(1, so.MaxCells-n) // both together
		rs, err := draw(&rd, nil, "--reference")
		if err != nil {
			return nil, err
		}
		if rs.Label == nil || !slices.ContainsFunc(rs.Label, func(l int) bool { return l >= 0 }) {
			return nil, usageErr("--reference has no labels: give the hand gates with --reference-labels FILES (or --label COLUMN)")
		}
		s = joinSamples(rs, s)
		ref = make([]bool, len(s.Domains))
		for g := range rs.Domains {
			ref[g] = true
		}
	} else {
		ref = make([]bool, len(s.Domains))
		for i, l := range s.Label {
			if l >= 0 {
				ref[s.Domain[i]] = true
			}
		}
		switch {
		case !slices.Contains(ref, true):
			return nil, usageErr("--kind predicted: no reference: give the hand-gated sample with --reference FILE --reference-labels LABELS, or its labels among --data with --labels DATA=LABELS")
		case !slices.Contains(ref, false):
			return nil, usageErr("--kind predicted: every sample of --data has labels, so none is left to predict: name the hand-gated reference with --reference FILE --reference-labels LABELS and the samples to gate with --data (their --labels then score the predictions)")
		}
	}
	pred, err := m.PredictWith(s.X, dica.PredictOptions{Preprocessed: true, MinConfidence: f.minConf})
	if err != nil {
		return nil, err
	}

	need := max(o.X, o.Y) + 1
	var v figure.View
	var notes []string
	if m.Config().Method == dica.Input {
		// No projection: the principal components of the inputs.
		if v, _, err = figure.PCABaseline(s, nil, need); err != nil {
			return nil, fmt.Errorf("--axes: %w", err)
		}
		v.Name, v.Title = "input PC", "input (no projection)"
		notes = append(notes, fmt.Sprintf("The model projects nothing (--method input): the axes are the principal components of the preprocessed inputs of the %s cells drawn.", commas(int64(s.Z.RawMatrix().Rows))))
	} else {
		if _, k := s.Z.Dims(); k < need {
			return nil, usageErr("--axes: the projection has %d components, component %d was asked for", k, need)
		}
		v = figure.View{Name: s.Method, Title: figure.ModelTitle(m), Z: s.Z}
	}
	inputs := fmt.Sprintf("the first %d %s components", cl.Dim(), s.Method)
	if m.Config().Method == dica.Input {
		inputs = fmt.Sprintf("the %d preprocessed inputs", cl.Dim())
	}
	notes = append(notes, fmt.Sprintf("The classifier: a linear SVM (C = %g) on %s, trained on %s labelled cells.", cl.Params.C, inputs, commas(int64(cl.TrainCells))))

	palette := figure.NewPalette(append(slices.Clone(m.Summary.Classes), cl.Classes...))
	g := &figure.Gating{Cells: s.Cells(palette), Reference: ref, Predicted: pred.Class, Populations: cl.Classes, MinConfidence: f.minConf}
	g.Value, g.ValueName = nil, ""
	fig, err := figure.Gated(*g, v, o)
	if err != nil {
		return nil, err
	}
	fig.Notes = append(append([]string{s.Note()}, notes...), fig.Notes...)
	return &predictedDrawing{fig: fig, gating: g, sample: s}, nil
}

// joinSamples returns the cells of a then those of b, each sample's
// domains kept apart (a's first), their classes merged in natural order.
// Both hold inputs and as many components.
func joinSamples(a, b *figure.Sample) *figure.Sample {
	na, k := a.Z.Dims()
	nb, _ := b.Z.Dims()
	_, d := a.X.Dims()
	out := &figure.Sample{
		Z: mat.NewDense(na+nb, k, nil), X: mat.NewDense(na+nb, d, nil),
		Domains: slices.Concat(a.Domains, b.Domains), Total: slices.Concat(a.Total, b.Total),
		Row: slices.Concat(a.Row, b.Row), Method: b.Method, PerDomain: b.PerDomain, Seed: b.Seed,
	}
	out.Z.Slice(0, na, 0, k).(*mat.Dense).Copy(a.Z)
	out.Z.Slice(na, na+nb, 0, k).(*mat.Dense).Copy(b.Z)
	out.X.Slice(0, na, 0, d).(*mat.Dense).Copy(a.X)
	out.X.Slice(na, na+nb, 0, d).(*mat.Dense).Copy(b.X)
	out.Domain = slices.Clone(a.Domain)
	for _, g := range b.Domain {
		out.Domain = append(out.Domain, g+len(a.Domains))
	}
	if a.Label == nil && b.Label == nil {
		return out
	}
	out.Classes = slices.Concat(a.Classes, b.Classes)
	slices.SortStableFunc(out.Classes, csvio.NaturalCompare)
	out.Classes = slices.Compact(out.Classes)
	for _, s := range []*figure.Sample{a, b} {
		n, _ := s.Z.Dims()
		for i := range n {
			l := -1
			if s.Label != nil && s.Label[i] >= 0 {
				l = slices.Index(out.Classes, s.Classes[s.Label[i]])
			}
			out.Label = append(out.Label, l)
		}
	}
	return out
}
