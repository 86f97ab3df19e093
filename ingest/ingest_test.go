package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/preprocess"
)

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// rows reads a pass of src: the rows, the domain and label names of each
// row, and the origins.
type rowsRead struct {
	x       [][]float64
	domains []string
	labels  []string
	files   []int
	events  []int64
}

func readRows(t *testing.T, src dataset.Source) rowsRead {
	t.Helper()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	var out rowsRead
	var b dataset.Block
	for {
		n, err := r.Read(&b, 3)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		for i := 0; i < n; i++ {
			out.x = append(out.x, slices.Clone(b.Row(i)))
			out.domains = append(out.domains, r.Domains()[b.Domain[i]])
			switch {
			case b.Label == nil:
			case b.Label[i] == dataset.NoLabel:
				out.labels = append(out.labels, "")
			default:
				out.labels = append(out.labels, r.Classes()[b.Label[i]])
			}
			require.True(t, b.HasOrigins())
			out.files = append(out.files, b.File[i])
			out.events = append(out.events, b.Event[i])
		}
	}
}

// TestOpenCSV checks the rows and the recorded preprocessing of CSV files
// without a header, with label files and a transform on some channels.
func TestOpenCSV(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s1.csv", "1,2,3\n4,5,6\n7,8,9\n")
	writeFile(t, dir, "s2.csv", "10,20,30\n40,50,60\n")
	writeFile(t, dir, "l1.csv", "a\n0\nb\n")
	writeFile(t, dir, "l2.csv", "b\na\n")
	in, err := Open([]string{filepath.Join(dir, "s*.csv")}, Options{LabelFiles: []string{filepath.Join(dir, "l*.csv")},
		LabelsIgnore: []string{"0"}, Transform: "log1p", TransformChannels: []string{"V1", "3"}})
	require.NoError(t, err)
	require.Equal(t, CSV, in.Kind)
	p := in.Pipeline
	require.Equal(t, "csv", p.Format)
	require.True(t, p.Unnamed)
	require.Equal(t, []preprocess.Channel{{Name: "V1", Index: 1}, {Name: "V2", Index: 2}, {Name: "V3", Index: 3}}, p.Channels)
	require.Equal(t, "log1p", p.Transform)
	require.Equal(t, []string{"V1", "V3"}, p.TransformChannels)
	got := readRows(t, in.Source)
	l := math.Log1p
	require.Equal(t, [][]float64{{l(1), 2, l(3)}, {l(7), 8, l(9)}, {l(10), 20, l(30)}, {l(40), 50, l(60)}}, got.x)
	require.Equal(t, []string{"s1", "s1", "s2", "s2"}, got.domains)
	require.Equal(t, []string{"a", "b", "b", "a"}, got.labels)
	require.Equal(t, []int{0, 0, 1, 1}, got.files)
	require.Equal(t, []int64{1, 3, 1, 2}, got.events)
}

// TestOpenForCSV checks how files are matched to a model's channels: by
// name (whatever their order in the file), by position for files or models
// without names, with a warning, and a header of other names is an error
// listing both unless ByPosition.
func TestOpenForCSV(t *testing.T) {
	dir := t.TempDir()
	named := &preprocess.Pipeline{Format: "csv", Transform: "log1p",
		Channels: []preprocess.Channel{{Name: "CD3", Index: 1}, {Name: "CD4", Index: 2}}}
	unnamed := &preprocess.Pipeline{Format: "csv", Unnamed: true,
		Channels: []preprocess.Channel{{Name: "V1", Index: 1}, {Name: "V2", Index: 2}}}
	reordered := writeFile(t, dir, "r.csv", "CD4,x,CD3\n1,0,2\n3,0,4\n")
	other := writeFile(t, dir, "o.csv", "A,B\n1,2\n3,4\n")
	bare := writeFile(t, dir, "b.csv", "1,2\n3,4\n")
	l := math.Log1p
	for _, c := range []struct {
		name    string
		p       *preprocess.Pipeline
		file    string
		o       Options
		want    [][]float64
		warning string
		err     string
	}{
		{"by name", named, reordered, Options{}, [][]float64{{l(2), l(1)}, {l(4), l(3)}}, "", ""},
		{"other names", named, other, Options{}, nil, "", `has no channel "CD3", "CD4": the model reads "CD3", "CD4", the file has "A", "B"`},
		{"by position", named, other, Options{ByPosition: true}, [][]float64{{l(1), l(2)}, {l(3), l(4)}}, "by position", ""},
		{"headerless data", named, bare, Options{}, [][]float64{{l(1), l(2)}, {l(3), l(4)}}, "has no header: its columns 1, 2 are taken as the model's channels", ""},
		{"unnamed model", unnamed, other, Options{}, [][]float64{{1, 2}, {3, 4}}, "fitted on CSV files without a header", ""},
		{"unnamed both", unnamed, bare, Options{}, [][]float64{{1, 2}, {3, 4}}, "", ""},
		{"preprocessed", named, reordered, Options{Preprocessed: true}, [][]float64{{2, 1}, {4, 3}}, "", ""},
		{"contradicting transform", named, reordered, Options{Transform: "asinh:5"}, nil, "", "Transform: contradicts the model, fitted with the transform log1p"},
		{"the same transform", named, reordered, Options{Transform: "log1p"}, [][]float64{{l(2), l(1)}, {l(4), l(3)}}, "", ""},
		{"other channels", named, reordered, Options{Channels: []string{"CD4", "CD3"}}, nil, "", `Channels: the model reads the channels "CD3", "CD4"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := OpenFor(c.p, []string{c.file}, c.o)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Same(t, c.p, in.Pipeline)
			require.Equal(t, c.want, readRows(t, in.Source).x)
			w := strings.Join(in.Warnings(), "\n")
			if c.warning == "" {
				require.Empty(t, w)
			} else {
				require.Contains(t, w, c.warning)
			}
		})
	}
}

// TestOpenForFCS checks that an FCS model reads new files' channels by
// their references, applies its own transform, and refuses a file whose
// detector carries another marker.
func TestOpenForFCS(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, labels []string) string {
		ev := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
		var ps []fcs.Param
		for j, lb := range labels {
			ps = append(ps, fcs.Param{Name: []string{"FL1-H", "FL2-H", "FL3-H"}[j], Label: lb})
		}
		p := filepath.Join(dir, name)
		require.NoError(t, fcs.WriteFile(p, &fcs.DataSet{Params: ps, Events: ev}))
		return p
	}
	a := write("a.fcs", []string{"CD4", "CD8", "CD3"})
	b := write("b.fcs", []string{"CD4", "CD8", "CD19"})
	in, err := Open([]string{a}, Options{Channels: []string{"FL3-H", "CD4"}, Transform: "asinh:2"})
	require.NoError(t, err)
	p := in.Pipeline
	require.Equal(t, []preprocess.Channel{{Name: "FL3-H", Ref: "FL3-H", Index: 3, PnN: "FL3-H", PnS: "CD3"}, {Name: "CD4", Ref: "CD4", Index: 1, PnN: "FL1-H", PnS: "CD4"}}, p.Channels)
	again, err := OpenFor(p, []string{a}, Options{})
	require.NoError(t, err)
	as := math.Asinh
	require.Equal(t, [][]float64{{as(1.5), as(0.5)}, {as(3), as(2)}}, readRows(t, again.Source).x)
	_, err = OpenFor(p, []string{b}, Options{})
	require.ErrorContains(t, err, `channel "FL3-H" is "CD19" in `)
	require.ErrorContains(t, err, `and was "CD3" in the model's training files`)
	in, err = OpenFor(p, []string{b}, Options{ByPosition: true})
	require.NoError(t, err)
	require.Contains(t, strings.Join(in.Warnings(), "\n"), "taken as the model's FL3-H as asked")
}

// TestExpand checks the expansion of data arguments: a folder's FCS files
// (links to them too) in natural order, and a pipe refused.
func TestExpand(t *testing.T) {
	dir := t.TempDir()
	ev := mat.NewDense(1, 1, []float64{1})
	var names []string
	for _, n := range []string{"p10.fcs", "p2.fcs"} {
		p := filepath.Join(dir, n)
		require.NoError(t, fcs.WriteFile(p, &fcs.DataSet{Params: []fcs.Param{{Name: "A"}}, Events: ev}))
		names = append(names, p)
	}
	other := t.TempDir()
	require.NoError(t, os.Symlink(names[0], filepath.Join(dir, "p1.fcs")))
	require.NoError(t, os.Symlink(names[1], filepath.Join(other, "link")))
	writeFile(t, dir, "notes.txt", "not FCS")
	files, kind, err := Expand([]string{dir})
	require.NoError(t, err)
	require.Equal(t, FCS, kind)
	require.Equal(t, []string{filepath.Join(dir, "p1.fcs"), filepath.Join(dir, "p2.fcs"), filepath.Join(dir, "p10.fcs")}, files)

	fifo := filepath.Join(dir, "cells.csv")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, _, err = Expand([]string{fifo})
	require.ErrorContains(t, err, "is a pipe: dica reads its data more than once")
	_, _, err = Expand([]string{filepath.Join(dir, "*.nothing")})
	var oe *dataset.OptionError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "Files", oe.Option)
}

// TestOptionErrors checks that wrong options are *dataset.OptionError
// values naming the option.
func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	csv := writeFile(t, dir, "a.csv", "1,2\n3,4\n")
	for _, c := range []struct {
		o      Options
		option string
	}{
		{Options{Transform: "sqrt"}, "Transform"},
		{Options{TransformChannels: []string{"V1"}}, "TransformChannels"},
		{Options{Transform: "log1p", TransformChannels: []string{"V9"}}, "TransformChannels"},
		{Options{Compensate: true}, "Compensate"},
		{Options{LabelFiles: []string{filepath.Join(dir, "none*.csv")}}, "LabelFiles"},
	} {
		_, err := Open([]string{csv}, c.o)
		var oe *dataset.OptionError
		require.ErrorAs(t, err, &oe, fmt.Sprintf("%+v", c.o))
		require.Equal(t, c.option, oe.Option, "%v", err)
	}
}

// TestTableLayoutErrors: a Parquet file or AnnData store whose layout
// cannot be read is named once in the error (it was named twice).
func TestTableLayoutErrors(t *testing.T) {
	dir := t.TempDir()
	foot := binary.LittleEndian.AppendUint32([]byte("PAR1 some column chunks "), 20<<20)
	pq := writeFile(t, dir, "big.parquet", string(append(foot, "PAR1"...)))
	store := filepath.Join(dir, "bad.zarr")
	require.NoError(t, os.Mkdir(store, 0o755))
	writeFile(t, store, ".zgroup", `{"zarr_format": 2}`)
	writeFile(t, store, ".zattrs", `{"encoding-type": "other"}`)
	for _, c := range []struct{ path, want string }{
		{pq, "metadata of 20971520 bytes, over the limit"},
		{store, `encoding-type "other"`},
	} {
		_, err := Open([]string{c.path}, Options{})
		require.ErrorContains(t, err, c.want)
		require.Equal(t, 1, strings.Count(err.Error(), filepath.Base(c.path)), "%v", err)
	}
}
