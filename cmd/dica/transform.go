package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
)

const transformUsage = `Usage: dica transform --model MODEL --data FILES --out OUT.csv|OUT.fcs

Project cells with a fitted model. The output has, for each cell, its domain
(and label, if the input has labels), the input channels, and the components
DICA1..DICAk. The output format follows the --out extension: .csv, or .fcs
(FCS 3.1, float32, readable by FlowJo, FlowKit and flowCore; with several
input domains a DOMAIN channel holds the domain number, 1-based, in the order
of the files).

Examples:

  dica transform --model cytof.dica --data sample16.csv --labels labels16.csv \
      --transform log1p --out sample16_dica.csv
  dica transform --model gvhd.dica --data new.fcs --transform asinh:150 --out new_dica.fcs

Use the same --transform and --compensate as for the fit. The input columns
default to the model's (--features for CSV, --channels for FCS).

Centering (--center): train (the default) subtracts the training cells' mean
feature, so each cell is projected on its own and a new sample keeps its
shift; batch subtracts the mean of all the cells given, and domain the mean
of each file's (or --domain's) own cells, which removes a new sample's
overall shift (transductive, as the authors' dica.m does; one cell alone
projects to 0). Models fitted with --form paper default to batch, as dica.m.
--scale divides component j by sqrt(gamma_j) (dica.m's scaling).
` + dataHelp

func runTransform(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("transform", transformUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	modelPath := fs.String("model", "", "model `file` written by dica fit")
	out := fs.String("out", "", "output `file` (.csv or .fcs); - for CSV on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	center := fs.String("center", "", "centering: train, batch or domain (default: train; batch for --form paper models)")
	scale := fs.Bool("scale", false, "divide component j by sqrt(gamma_j)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *modelPath == "" || *out == "" {
		return usageErr("--model and --out are required")
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".fcs" && ext != ".csv" && ext != "" {
		return usageErr("--out %q: want a .csv or .fcs file", *out)
	}
	m, err := dica.Load(*modelPath)
	if err != nil {
		return err
	}
	paper := m.Config().Solver == dica.Exact && m.Config().Form == dica.Paper
	mode := *center
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
	if *scale && paper {
		return usageErr("--scale: a --form paper model's components are already scaled by 1/sqrt(gamma)")
	}
	df.defaults = m.Summary.Features
	src, err := df.source(pos)
	if err != nil {
		return err
	}
	pr := newProgress(*quiet)
	defer pr.done()
	pr.setTotal(src)
	p := &projector{m: m, mode: mode, scale: *scale}
	if err := p.prepare(ctx, src, pr); err != nil {
		return err
	}
	if ext == ".fcs" {
		return writeFCS(ctx, p, src, *out, pr)
	}
	return writeCSV(ctx, p, src, *out, stdout, pr)
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

// stream is TransformStream with the centering and scaling applied.
func (p *projector) stream(ctx context.Context, src dataset.Source, emit func(b *dataset.Block, z *mat.Dense, domains, classes []string) error) error {
	inv := make([]float64, p.m.Positive)
	for j := range inv {
		inv[j] = 1
		if p.scale {
			inv[j] = 1 / math.Sqrt(p.m.Eigenvalues[j])
		}
	}
	return p.m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		if p.shift != nil || p.scale {
			for i := 0; i < b.Rows; i++ {
				row := z.RawRowView(i)
				var c []float64
				if p.shift != nil {
					g := 0
					if p.mode == "domain" {
						g = b.Domain[i]
					}
					c = p.shift[g]
				}
				for j := range row {
					if c != nil {
						row[j] -= c[j]
					}
					row[j] *= inv[j]
				}
			}
		}
		return emit(b, z, domains, classes)
	})
}

func componentNames(k int) []string {
	s := make([]string, k)
	for j := range s {
		s[j] = "DICA" + strconv.Itoa(j+1)
	}
	return s
}

func writeCSV(ctx context.Context, p *projector, src dataset.Source, path string, stdout io.Writer, pr *progress) (err error) {
	m := p.m
	var w io.Writer = stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sc := src.Schema()
	cols := []string{"domain"}
	if sc.Labelled {
		cols = append(cols, "label")
	}
	cols = append(cols, sc.Features...)
	cols = append(cols, componentNames(m.Positive)...)
	bw.WriteString(strings.Join(cols, ",") + "\n")
	var rows int64
	var buf []byte
	err = p.stream(ctx, src, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
		for i := 0; i < b.Rows; i++ {
			buf = buf[:0]
			buf = append(buf, csvField(domains[b.Domain[i]])...)
			if b.Label != nil {
				buf = append(buf, ',')
				buf = append(buf, csvField(classes[b.Label[i]])...)
			}
			for _, v := range b.Row(i) {
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
			}
			for _, v := range z.RawRowView(i) {
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, v, 'g', 10, 64)
			}
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		rows += int64(b.Rows)
		pr.update("transform", rows)
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// writeFCS writes the input channels and the components as FCS 3.1 float32,
// streaming: a first pass counts the cells and finds each column's largest
// value ($TOT and $PnR come before the data in an FCS file), a second writes
// them, so no cell is held in memory. Input channels keep their $PnN and $PnS
// when the input is FCS.
func writeFCS(ctx context.Context, p *projector, src dataset.Source, path string, pr *progress) (err error) {
	m := p.m
	sc := src.Schema()
	var (
		rows int64
		doms []string
		mx   []float64
	)
	err = p.stream(ctx, src, func(b *dataset.Block, z *mat.Dense, domains, _ []string) error {
		if mx == nil {
			mx = make([]float64, b.D+m.Positive)
		}
		for i := 0; i < b.Rows; i++ {
			for j, v := range b.Row(i) {
				mx[j] = max(mx[j], v)
			}
			for j, v := range z.RawRowView(i) {
				mx[b.D+j] = max(mx[b.D+j], v)
			}
		}
		doms = domains
		rows += int64(b.Rows)
		pr.update("scan", rows)
		return nil
	})
	if err != nil {
		return err
	}
	if rows == 0 {
		return fmt.Errorf("no cells to write")
	}
	withDom := len(doms) > 1
	var in []fcs.Param
	if fs, ok := src.(*fcs.Source); ok {
		in = fs.Params()
	}
	params := make([]fcs.Param, 0, len(mx)+1)
	for j, f := range sc.Features {
		q := fcs.Param{Name: f}
		if j < len(in) {
			q = fcs.Param{Name: in[j].Name, Label: in[j].Label}
		}
		params = append(params, q)
	}
	for _, c := range componentNames(m.Positive) {
		params = append(params, fcs.Param{Name: c, Label: "DICA component"})
	}
	for j := range params {
		// $PnR: the smallest integer above the largest value (at least 1),
		// as fcs.Write chooses it, from the values as float32 stores them.
		params[j].Range = math.Max(1, math.Floor(float64(float32(mx[j])))+1)
	}
	if withDom {
		params = append(params, fcs.Param{Name: "DOMAIN", Label: "domain number", Range: float64(len(doms) + 1)})
	}
	kw := []fcs.Keyword{{Key: "DICA_MODEL_METHOD", Value: m.Config().Method.String()}}
	for i, d := range doms {
		kw = append(kw, fcs.Keyword{Key: fmt.Sprintf("DICA_DOMAIN%d", i+1), Value: d})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w, err := fcs.NewWriter(f, &fcs.DataSet{Params: params, Keywords: kw}, int(rows))
	if err != nil {
		return err
	}
	ev := make([]float64, len(params))
	rows = 0
	err = p.stream(ctx, src, func(b *dataset.Block, z *mat.Dense, _, _ []string) error {
		for i := 0; i < b.Rows; i++ {
			ev = append(append(ev[:0], b.Row(i)...), z.RawRowView(i)...)
			if withDom {
				ev = append(ev, float64(b.Domain[i]+1))
			}
			if err := w.WriteEvent(ev); err != nil {
				return err
			}
		}
		rows += int64(b.Rows)
		pr.update("transform", rows)
		return nil
	})
	if err != nil {
		return err
	}
	return w.Close()
}
