package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

Use the same --transform, --channels and --compensate as for the fit.
` + dataHelp

func runTransform(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("transform", transformUsage, stderr)
	var df dataFlags
	df.register(fs, true)
	modelPath := fs.String("model", "", "model `file` written by dica fit")
	out := fs.String("out", "", "output `file` (.csv or .fcs); - for CSV on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *modelPath == "" || *out == "" {
		return usageErr("--model and --out are required")
	}
	m, err := dica.Load(*modelPath)
	if err != nil {
		return err
	}
	src, err := df.source(fs.Args())
	if err != nil {
		return err
	}
	pr := newProgress(*quiet)
	defer pr.done()
	switch strings.ToLower(filepath.Ext(*out)) {
	case ".fcs":
		return writeFCS(ctx, m, src, *out, pr)
	case ".csv", "":
		return writeCSV(ctx, m, src, *out, stdout, pr)
	default:
		return usageErr("--out %q: want a .csv or .fcs file", *out)
	}
}

func componentNames(k int) []string {
	s := make([]string, k)
	for j := range s {
		s[j] = "DICA" + strconv.Itoa(j+1)
	}
	return s
}

func writeCSV(ctx context.Context, m *dica.Model, src dataset.Source, path string, stdout io.Writer, pr *progress) (err error) {
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
	err = m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
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

// writeFCS writes the input channels and the components as FCS 3.1 float32
// (all cells are gathered first: FCS needs $TOT before the data).
func writeFCS(ctx context.Context, m *dica.Model, src dataset.Source, path string, pr *progress) error {
	sc := src.Schema()
	var (
		data    []float64
		rows    int64
		ndom    int
		doms    []string
		ncol    int
		withDom bool
	)
	err := m.TransformStream(ctx, src, 4096, func(b *dataset.Block, z *mat.Dense, domains, _ []string) error {
		_, k := z.Dims()
		ncol = b.D + k + 1
		for i := 0; i < b.Rows; i++ {
			data = append(data, b.Row(i)...)
			data = append(data, z.RawRowView(i)...)
			data = append(data, float64(b.Domain[i]+1))
		}
		doms = domains
		rows += int64(b.Rows)
		pr.update("transform", rows)
		return nil
	})
	if err != nil {
		return err
	}
	ndom = len(doms)
	withDom = ndom > 1
	if rows == 0 {
		return fmt.Errorf("no cells to write")
	}
	params := make([]fcs.Param, 0, ncol)
	for _, f := range sc.Features {
		params = append(params, fcs.Param{Name: f})
	}
	for _, c := range componentNames(m.Positive) {
		params = append(params, fcs.Param{Name: c, Label: "DICA component"})
	}
	ev := mat.NewDense(int(rows), ncol, data)
	if withDom {
		params = append(params, fcs.Param{Name: "DOMAIN", Label: "domain number"})
	} else {
		ev = mat.DenseCopyOf(ev.Slice(0, int(rows), 0, ncol-1))
	}
	kw := []fcs.Keyword{{Key: "DICA_MODEL_METHOD", Value: m.Config().Method.String()}}
	for i, d := range doms {
		kw = append(kw, fcs.Keyword{Key: fmt.Sprintf("DICA_DOMAIN%d", i+1), Value: d})
	}
	return fcs.WriteFile(path, &fcs.DataSet{Params: params, Events: ev, Keywords: kw})
}
