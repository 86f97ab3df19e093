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
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/figure"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/kernel"
)

const plotUsage = `Usage: dica plot --model MODEL --data FILES --out FIG.png|FIG.svg [flags]
       dica plot --projected OUT.csv --out FIG.png
       dica plot --model MODEL --out spectrum.png
       dica plot --eval EVAL.json --out scores.png

Draw what a projection does to the cells, before trusting it. The picture
is PNG or SVG, by the --out extension.

Kinds of picture (--kind; the default follows the inputs: eval with --eval,
spectrum with a model and no cells, projection otherwise):

  projection  the cells on two components (--axes), colored by population
              (when the cells have labels; by value with --target) and by
              sample; with --baseline, the same cells under a baseline
              beside them
  pairs       a grid of the first --pairs components: below the diagonal by
              population, above by sample, each sample's density on the
              diagonal, so shifts between samples show
  samples     one small panel per sample, all with the same axes, the
              sample's cells over those of all samples in gray; samples the
              model was not fitted on are marked unseen
  unseen      the layout of Figure 2 of the DICA paper: the cells of the
              training samples (top) and of the unseen samples (bottom)
  spectrum    the model's eigenvalues, the components it returns marked
  eval        the score of each method on each test sample, with the mean
              and standard deviation, from 'dica eval --json' output

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
      --labels 'labels*.csv' --labels-ignore 0 --transform log1p --out samples.png
  dica plot --projected s9.csv --kind pairs --out s9_pairs.svg
  dica eval --json ... > eval.json && dica plot --eval eval.json --out eval.png
` + dataHelp

// plotKinds are the values of --kind.
var plotKinds = []string{"projection", "pairs", "samples", "unseen", "spectrum", "eval"}

// plotSettings are the flags of dica plot besides the data flags.
type plotSettings struct {
	modelPath, evalPath, out string
	projected                listFlag
	kind, baseline, axes     string
	pairs, cells             int
	seed                     uint64
	width, height, dpi       int
	title                    string
	quiet                    bool
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
	fs.IntVar(&f.pairs, "pairs", 3, "number of `components` of the pairs grid")
	fs.IntVar(&f.cells, "cells", 5000, "largest number of `cells` drawn per sample, drawn at random")
	fs.Uint64Var(&f.seed, "seed", 1, "random `seed` of the subsample and of the drawing order")
	fs.IntVar(&f.width, "width", 0, "width in `pixels` (default: from the kind of picture)")
	fs.IntVar(&f.height, "height", 0, "height in `pixels` (default: from the kind of picture)")
	fs.IntVar(&f.dpi, "dpi", figure.DefaultDPI, "`dots` per inch of a PNG: higher makes the text and dots smaller in pixels")
	fs.StringVar(&f.title, "title", "", "the picture's `title` (default: says what is drawn)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
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
	if err := atomicfile.CheckOutput(f.out, inputs...); err != nil {
		return usageErr("--out: %v", err)
	}

	var m *dica.Model
	if f.modelPath != "" {
		if m, err = dica.LoadContext(ctx, f.modelPath, dica.LoadOptions{}); err != nil {
			return err
		}
	}
	var fig *figure.Figure
	switch f.kind {
	case "eval":
		fig, err = evalFigure(f.evalPath, os.Stdin, o)
	case "spectrum":
		fig, err = spectrumFigure(m, o)
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
	var s *plotSample
	var err error
	if len(df.data)+len(pos) > 0 {
		var src dataset.Source
		df.markSet(fs)
		if src, err = modelSource(df, m, pos, stderr); err != nil {
			return nil, err
		}
		pr.setTotal(src)
		s, err = projectSample(ctx, m, src, f.cells, f.seed, pr)
	} else {
		s, err = projectedSample(ctx, f.projected, splitList(df.labelsIgnore), f.cells, f.seed, pr)
	}
	pr.done()
	if err != nil {
		return nil, err
	}
	return cellsFigure(ctx, f.kind, m, s, f.baseline, o)
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

// plotSample is the subsample of the cells that a picture draws: at most a
// given number of cells per sample, in stream order within each sample,
// the samples in their order of appearance.
type plotSample struct {
	// X holds the inputs of the kept cells (nil when they are not known:
	// a transform output), Z their components.
	X, Z *mat.Dense
	// Row is each kept cell's 0-based position in the stream.
	Row []int64
	// Domain indexes Domains; Label indexes Classes (nil: unlabelled).
	Domain  []int
	Label   []int
	Domains []string
	Classes []string
	// Value holds each kept cell's first regression target, ValueName
	// its name (nil and "" without targets).
	Value     []float64
	ValueName string
	// Total counts the cells of each domain in the stream.
	Total []int64
	// Method names the components ("DICA", "KPCA", ...); From names the
	// file they were read from (a transform output), if any. Per and Seed
	// are the subsample's size per domain and seed.
	Method string
	From   string
	Per    int
	Seed   uint64
}

// maxPlotCells bounds the cells a picture holds (all samples together):
// --cells times the number of samples may not exceed it.
const maxPlotCells = 2_000_000

// sampler collects a plotSample from a stream of blocks with a per-domain
// reservoir.
type sampler struct {
	res            *figure.Reservoir
	kept, limit    int
	d, k           int
	x, z           [][]float64 // per domain: Cap rows of d (x) or k (z) values
	row            [][]int64
	label          [][]int
	value          [][]float64 // per domain: the first target of each kept row
	domains        []string
	classes        []string
	pos            int64
	labelled, hasX bool
	hasValue       bool
}

func newSampler(per int, seed uint64, d, k int, labelled, hasX bool) *sampler {
	return &sampler{res: figure.NewReservoir(per, seed), d: d, k: k, labelled: labelled, hasX: hasX, limit: maxPlotCells}
}

// add offers the rows of a block, with z the components of its rows. It
// fails when the sample would hold more than maxPlotCells cells.
func (s *sampler) add(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	for i := 0; i < b.Rows; i++ {
		g := b.Domain[i]
		for len(s.row) <= g {
			s.row = append(s.row, nil)
			s.z = append(s.z, nil)
			s.x = append(s.x, nil)
			s.label = append(s.label, nil)
			s.value = append(s.value, nil)
		}
		slot, keep := s.res.Offer(g)
		pos := s.pos + int64(i)
		if !keep {
			continue
		}
		if slot == len(s.row[g]) {
			if s.kept++; s.kept > s.limit {
				return fmt.Errorf("more than %s cells to draw (%d samples so far, at most %s each): lower --cells", commas(int64(s.limit)), len(s.row), commas(int64(s.res.Cap)))
			}
			s.row[g] = append(s.row[g], pos)
			s.z[g] = append(s.z[g], make([]float64, s.k)...)
			if s.hasX {
				s.x[g] = append(s.x[g], make([]float64, s.d)...)
			}
			if s.labelled {
				s.label[g] = append(s.label[g], 0)
			}
			if s.hasValue {
				s.value[g] = append(s.value[g], 0)
			}
		}
		s.row[g][slot] = pos
		copy(s.z[g][slot*s.k:(slot+1)*s.k], z.RawRowView(i))
		if s.hasX {
			copy(s.x[g][slot*s.d:(slot+1)*s.d], b.Row(i))
		}
		if s.labelled {
			s.label[g][slot] = b.Label[i]
		}
		if s.hasValue {
			s.value[g][slot] = b.Target[i*b.T]
		}
	}
	s.pos += int64(b.Rows)
	s.domains, s.classes = slices.Clone(domains), slices.Clone(classes)
	return nil
}

// sample returns the kept cells, domain by domain, each domain's cells in
// stream order, and the classes in natural order ("2" before "10").
func (s *sampler) sample() (*plotSample, error) {
	n := 0
	for _, r := range s.row {
		n += len(r)
	}
	if n == 0 {
		return nil, errors.New("no cells to draw: the data is empty (or every cell was left out by --labels-ignore)")
	}
	out := &plotSample{
		Z: mat.NewDense(n, s.k, nil), Domains: s.domains, Total: s.res.Seen(),
		Per: s.res.Cap, Seed: s.res.Seed,
	}
	for len(out.Total) < len(s.domains) {
		out.Total = append(out.Total, 0)
	}
	if s.hasX {
		out.X = mat.NewDense(n, s.d, nil)
	}
	var remap []int
	if s.labelled {
		out.Classes = slices.Clone(s.classes)
		slices.SortStableFunc(out.Classes, csvio.NaturalCompare)
		remap = make([]int, len(s.classes))
		for i, c := range s.classes {
			remap[i] = slices.Index(out.Classes, c)
		}
		out.Label = make([]int, 0, n)
	}
	for g := range s.row {
		idx := make([]int, len(s.row[g]))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return s.row[g][idx[a]] < s.row[g][idx[b]] })
		for _, i := range idx {
			r := len(out.Row)
			out.Row = append(out.Row, s.row[g][i])
			out.Domain = append(out.Domain, g)
			out.Z.SetRow(r, s.z[g][i*s.k:(i+1)*s.k])
			if s.hasX {
				out.X.SetRow(r, s.x[g][i*s.d:(i+1)*s.d])
			}
			if s.labelled {
				out.Label = append(out.Label, remap[s.label[g][i]])
			}
			if s.hasValue {
				out.Value = append(out.Value, s.value[g][i])
			}
		}
	}
	return out, nil
}

// projectSample projects every cell of src with the model and keeps, for
// the picture, at most per cells of each domain, drawn uniformly at random
// (a reservoir per domain, seeded), with their inputs.
//
// The components are those dica transform writes by default: centered with
// the training mean, or, for a --form paper model, with the mean of all the
// cells given (dica.m's convention).
func projectSample(ctx context.Context, m *dica.Model, src dataset.Source, per int, seed uint64, pr *progress) (*plotSample, error) {
	sc := src.Schema()
	s := newSampler(per, seed, sc.D(), m.Positive, sc.Labelled, true)
	s.hasValue = len(sc.Targets) > 0
	batch := m.Config().Solver == dica.Exact && m.Config().Form == dica.Paper
	sums := make([]float64, m.Positive)
	var rows int64
	err := m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.add(b, z, domains, classes); err != nil {
			return err
		}
		if batch {
			for i := 0; i < b.Rows; i++ {
				for j, v := range z.RawRowView(i) {
					sums[j] += v
				}
			}
		}
		rows += int64(b.Rows)
		pr.update("project", rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := s.sample()
	if err != nil {
		return nil, err
	}
	if batch {
		n, _ := out.Z.Dims()
		for j := range sums {
			sums[j] /= float64(rows)
		}
		for i := 0; i < n; i++ {
			for j, v := range out.Z.RawRowView(i) {
				out.Z.Set(i, j, v-sums[j])
			}
		}
	}
	out.Method = strings.ToUpper(m.Config().Method.String())
	if s.hasValue {
		out.ValueName = sc.Targets[0]
	}
	return out, nil
}

// componentColumn matches the component columns of a transform output.
var componentColumn = regexp.MustCompile(`^(DICA|UDICA|KPCA|COIR)([0-9]+)$`)

// projectedSample reads the components, domains and labels of transform
// outputs (CSV with a header) and keeps at most per cells of each domain.
func projectedSample(ctx context.Context, patterns []string, ignore []string, per int, seed uint64, pr *progress) (*plotSample, error) {
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
	s := newSampler(per, seed, 0, len(comps), o.Label != "", false)
	rd, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var b dataset.Block
	var rows int64
	for {
		k, err := rd.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.add(&b, mat.NewDense(k, b.D, b.X[:k*b.D]), rd.Domains(), rd.Classes()); err != nil {
			return nil, err
		}
		rows += int64(k)
		pr.update("read", rows)
	}
	out, err := s.sample()
	if err != nil {
		return nil, err
	}
	out.Method = method
	out.From = filepath.Base(files[0])
	if len(files) > 1 {
		out.From += fmt.Sprintf(" and %d more", len(files)-1)
	}
	return out, nil
}

// modelTitle says what a model is: method, bandwidth and rank.
func modelTitle(m *dica.Model) string {
	c := m.Config()
	t := strings.ToUpper(c.Method.String())
	if k, ok := c.Kernel.(kernel.RBF); ok {
		t += fmt.Sprintf(", sigma = %.4g", k.Sigma)
	} else if c.Kernel != nil {
		t += ", kernel " + c.Kernel.String()
	}
	switch c.Solver {
	case dica.Nystrom:
		t += fmt.Sprintf(", rank %d", c.Rank)
	case dica.RFF:
		t += fmt.Sprintf(", %d random features", c.Rank)
	case dica.Exact:
		t += ", exact"
	}
	return t
}

// cellsFigure draws the projected cells.
func cellsFigure(ctx context.Context, kind string, m *dica.Model, s *plotSample, baseline string, o figure.Options) (*figure.Figure, error) {
	c := figure.Cells{
		Domain: s.Domain, DomainNames: s.Domains, Label: s.Label, ClassNames: s.Classes, Total: s.Total,
		Value: s.Value, ValueName: s.ValueName,
	}
	main := figure.View{Name: s.Method, Title: s.Method, Z: s.Z}
	if s.From != "" {
		main.Title += " (" + s.From + ")"
	}
	if m != nil {
		main.Title = modelTitle(m)
		trained := map[string]bool{}
		for _, d := range m.Summary.Domains {
			trained[d] = true
		}
		c.Unseen = make([]bool, len(s.Domains))
		for g, d := range s.Domains {
			c.Unseen[g] = !trained[d]
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
	var notes []string
	if baseline != "none" {
		// For the unseen layout, the baseline sees only the training
		// samples, as the model did.
		var fit []bool
		if kind == "unseen" && c.Unseen != nil {
			fit = make([]bool, len(s.Domain))
			for i, g := range s.Domain {
				fit[i] = !c.Unseen[g]
			}
		}
		v, note, err := baselineView(ctx, baseline, m, s, fit, max(o.X, o.Y)+1)
		if err != nil {
			return nil, err
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
		if c.Unseen == nil {
			return nil, usageErr("--kind unseen needs --model: the model says which samples it was fitted on")
		}
		if !slices.Contains(c.Unseen, true) || !slices.Contains(c.Unseen, false) {
			return nil, usageErr("--kind unseen needs both samples the model was fitted on and samples it was not (the model's samples: %s)", capList(m.Summary.Domains, 10))
		}
		fig, err = figure.TrainingAndUnseen(c, views, o)
	}
	if err != nil {
		return nil, err
	}
	n, _ := s.Z.Dims()
	var total int64
	for _, t := range s.Total {
		total += t
	}
	note := fmt.Sprintf("%s of %s cells drawn: at most %s per sample, drawn at random (seed %d).", commas(int64(n)), commas(total), commas(int64(s.Per)), s.Seed)
	if int64(n) == total {
		note = fmt.Sprintf("All %s cells.", commas(total))
	}
	fig.Notes = append(append([]string{note}, notes...), fig.Notes...)
	return fig, nil
}

// capList joins at most max names, and says how many more there are.
func capList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ","), len(names)-max)
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// baselineView projects the sampled cells with a baseline fitted to the
// cells for which fit is true (nil: all): kernel PCA with the model's
// kernel and rank, or the principal components of the inputs; at least
// need components. It also returns a note that says how it was fitted.
func baselineView(ctx context.Context, baseline string, m *dica.Model, s *plotSample, fit []bool, need int) (figure.View, string, error) {
	n, d := s.X.Dims()
	var rows []int
	for i := 0; i < n; i++ {
		if fit == nil || fit[i] {
			rows = append(rows, i)
		}
	}
	if len(rows) < 2 {
		return figure.View{}, "", fmt.Errorf("--baseline %s: %d cells to fit it to", baseline, len(rows))
	}
	xf := mat.NewDense(len(rows), d, nil)
	for r, i := range rows {
		xf.SetRow(r, s.X.RawRowView(i))
	}
	which := "the plotted cells"
	if fit != nil {
		which = "the plotted cells of the training samples"
	}
	comps := max(need, 3)
	if baseline == "pca" {
		return pcaView(xf, s.X, need, comps, which)
	}
	return kpcaView(ctx, m, s, rows, xf, need, comps, which)
}

// pcaView projects x (the plotted cells' inputs) on the first comps
// principal components (at least need) of xf (the cells the baseline is
// fitted to, described by which), centered at xf's means.
func pcaView(xf, x *mat.Dense, need, comps int, which string) (figure.View, string, error) {
	n, d := x.Dims()
	if d < need {
		return figure.View{}, "", fmt.Errorf("--baseline pca: the data has %d columns, %d components were asked for", d, need)
	}
	var pc stat.PC
	if ok := pc.PrincipalComponents(xf, nil); !ok {
		return figure.View{}, "", errors.New("--baseline pca: the principal components could not be computed")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	k := min(comps, d)
	v := mat.DenseCopyOf(vecs.Slice(0, d, 0, k))
	for j := 0; j < k; j++ {
		// The sign of a principal component is arbitrary: make the
		// largest loading positive, so pictures are reproducible.
		col := mat.Col(nil, j, v)
		big := 0
		for i := range col {
			if math.Abs(col[i]) > math.Abs(col[big]) {
				big = i
			}
		}
		if col[big] < 0 {
			for i := range col {
				v.Set(i, j, -col[i])
			}
		}
	}
	means := make([]float64, d)
	for j := range means {
		means[j] = stat.Mean(mat.Col(nil, j, xf), nil)
	}
	xc := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xc.Set(i, j, x.At(i, j)-means[j])
		}
	}
	var z mat.Dense
	z.Mul(xc, v)
	fitted, _ := xf.Dims()
	note := fmt.Sprintf("PCA baseline: the principal components of the inputs of %s (%s cells).", which, commas(int64(fitted)))
	return figure.View{Name: "PC", Title: "PCA baseline", Z: &z}, note, nil
}

// kpcaView fits kernel PCA with the model's kernel and rank (Nystrom at the
// default rank instead of the exact solver above 5000 cells, uniform
// landmarks instead of given ones) to the rows of the sample s that xf
// holds (described by which), keeping comps components, at least need,
// and projects every plotted cell with it.
func kpcaView(ctx context.Context, m *dica.Model, s *plotSample, rows []int, xf *mat.Dense, need, comps int, which string) (figure.View, string, error) {
	cfg := m.Config()
	c := dica.Config{
		Method: dica.KPCA, Kernel: cfg.Kernel, Solver: cfg.Solver, Rank: cfg.Rank,
		Landmarks: cfg.Landmarks, Seed: cfg.Seed, Components: comps,
	}
	const exactMax = 5000
	if c.Solver == dica.Exact && len(rows) > exactMax {
		c.Solver, c.Rank = dica.Nystrom, dica.DefaultRank
	}
	if c.Landmarks == dica.GivenLandmarks {
		c.Landmarks = dica.UniformLandmarks
	}
	if c.Solver != dica.Exact {
		c.Rank = min(c.Rank, len(rows))
	}
	names := make([]string, len(rows))
	for r, i := range rows {
		names[r] = s.Domains[s.Domain[i]]
	}
	ds, err := dataset.New(xf, names)
	if err != nil {
		return figure.View{}, "", err
	}
	km, err := dica.Fit(ctx, ds.Source(), c)
	if err != nil {
		return figure.View{}, "", fmt.Errorf("--baseline kpca: %w", err)
	}
	if km.Positive < need {
		return figure.View{}, "", fmt.Errorf("--baseline kpca: the fit has %d components, %d were asked for", km.Positive, need)
	}
	z, err := km.Transform(s.X, dica.TransformOptions{})
	if err != nil {
		return figure.View{}, "", fmt.Errorf("--baseline kpca: %w", err)
	}
	title := "KPCA baseline" + strings.TrimPrefix(modelTitle(km), "KPCA")
	note := fmt.Sprintf("KPCA baseline: kernel PCA with the model's kernel, fitted to %s (%s cells).", which, commas(int64(len(rows))))
	return figure.View{Name: "KPCA", Title: title, Z: z}, note, nil
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
		f.Title = "Eigenvalues of " + modelTitle(m)
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
