package output

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/toy"
)

// toyFiles writes the toy classification data as one CSV file per domain
// with a header and a label column, and returns the data glob.
func toyFiles(t *testing.T, dir string) string {
	t.Helper()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 4})
	for g, name := range ds.DomainNames {
		f, err := os.Create(filepath.Join(dir, "s_"+name+".csv"))
		require.NoError(t, err)
		w := csv.NewWriter(f)
		head := []string{"population"}
		for j := range ds.D() {
			head = append(head, fmt.Sprintf("CD%d", j+1))
		}
		w.Write(head)
		for i := range ds.N() {
			if ds.Domain[i] != g {
				continue
			}
			row := []string{ds.ClassNames[ds.Label[i]]}
			for _, v := range ds.X.RawRowView(i) {
				row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
			}
			w.Write(row)
		}
		w.Flush()
		require.NoError(t, f.Close())
	}
	return filepath.Join(dir, "s_*.csv")
}

// TestPredictedColumns writes predictions in every format: the population
// each cell's first component gives (a stand-in classifier), "unassigned"
// below the confidence cut, the same in every format, and the summary's
// counts per sample and confusion matrix.
func TestPredictedColumns(t *testing.T) {
	dir := t.TempDir()
	data := toyFiles(t, dir)
	in, err := ingest.Open([]string{data}, ingest.Options{Label: "population"})
	require.NoError(t, err)
	m, err := dica.Fit(context.Background(), in.Source, dica.Config{Method: dica.DICA, Rank: 30, Sigma: 1, Preprocessing: in.Pipeline})
	require.NoError(t, err)
	pops := m.Summary.Classes
	rule := func(z0 float64) (int, float64) {
		switch {
		case z0 < -0.05:
			return 0, 0.9
		case z0 > 0.05:
			return 1, 0.8
		}
		return -1, 0.2
	}
	pr := &Predictor{Populations: pops, Predict: func(z *mat.Dense, code []int, conf []float64, _ []float64) error {
		for i := range code {
			code[i], conf[i] = rule(z.At(i, 0))
		}
		return nil
	}}
	var want []string
	var sums []*Summary
	for _, ext := range []string{"csv", "parquet", "fcs", "zarr"} {
		in, err := ingest.OpenFor(m.Preprocessing(), []string{data}, ingest.Options{Label: "population"})
		require.NoError(t, err)
		out := filepath.Join(dir, "p."+ext)
		s, err := Write(context.Background(), in, out, nil, Options{Model: m, Predict: pr})
		require.NoError(t, err)
		sums = append(sums, s)
		var got []string
		switch ext {
		case "csv":
			f, err := os.Open(out)
			require.NoError(t, err)
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			require.NoError(t, err)
			head := rows[0]
			require.Equal(t, []string{"predicted", "confidence"}, head[len(head)-2:])
			for _, r := range rows[1:] {
				z0, err := strconv.ParseFloat(r[len(head)-4], 64) // DICA1 (of 2)
				require.NoError(t, err)
				p, c := rule(z0)
				name := Unassigned
				if p >= 0 {
					name = pops[p]
				}
				require.Equal(t, name, r[len(head)-2])
				require.Equal(t, strconv.FormatFloat(c, 'g', 6, 64), r[len(head)-1])
				got = append(got, r[len(head)-2])
			}
			want = got
		case "parquet":
			src, err := parquetio.NewSource([]string{out}, parquetio.Options{Label: "predicted", Features: []string{"confidence"}})
			require.NoError(t, err)
			got = readLabels(t, src)
		case "fcs":
			f, err := fcs.Open(out)
			require.NoError(t, err)
			x, err := f.ReadAll(fcs.EventOptions{})
			require.NoError(t, err)
			names := map[int]string{}
			for k := range pr.predictedNames() {
				v, ok := f.Keyword(fmt.Sprintf("DICA_PREDICTED%d", k+1))
				require.True(t, ok)
				names[k+1] = v
			}
			col := len(f.Names()) - 2
			require.Equal(t, "PREDICTED", f.Names()[col])
			r, _ := x.Dims()
			for i := range r {
				got = append(got, names[int(x.At(i, col))])
			}
			f.Close()
		case "zarr":
			src, err := anndata.NewSource(out, anndata.Options{Label: "obs:predicted"})
			require.NoError(t, err)
			got = readLabels(t, src)
		}
		require.Equal(t, want, got, ext)
	}
	// The summary: per sample, the cells of each predicted population; per
	// label, the confusion matrix.
	s := sums[0]
	require.Equal(t, append(append([]string(nil), pops...), Unassigned), s.Predicted)
	var total int64
	for g := range s.Counts {
		var n, nc int64
		for p, k := range s.Counts[g] {
			n += k
			for l := range s.Confusion[g] {
				nc += s.Confusion[g][l][p]
			}
		}
		require.Equal(t, n, nc)
		total += n
	}
	require.Equal(t, s.Cells, total)
	for _, o := range sums[1:] {
		require.Equal(t, s.Counts, o.Counts)
		require.Equal(t, s.Confusion, o.Confusion)
	}
}

// readLabels reads the label of every row of a source.
func readLabels(t *testing.T, src dataset.Source) []string {
	t.Helper()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	var out []string
	var b dataset.Block
	for {
		n, err := r.Read(&b, 500)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		for i := range n {
			out = append(out, r.Classes()[b.Label[i]])
		}
	}
}
