package anndata

import (
	"bufio"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/internal/testsupport/realdata"
	"github.com/dicalab/dica/parquetio"
)

// BenchmarkCyTOF projects the 693,643 labelled cells of the shared CyTOF
// set (16 samples, log1p, DICA at rank 500, sigma 1) with one model and
// writes them as CSV (the command's format), as an AnnData store and as
// Parquet, reporting the cells per second of each (fit excluded).
//
//	go test -run '^$' -bench CyTOF -benchtime 1x ./anndata
func BenchmarkCyTOF(b *testing.B) {
	dir := realdata.Dir(b, "multicenter16_cytof")
	files, err := csvio.Glob([]string{filepath.Join(dir, "sample*.csv")})
	if err != nil {
		b.Fatal(err)
	}
	labels, err := csvio.Glob([]string{filepath.Join(dir, "labels*.csv")})
	if err != nil {
		b.Fatal(err)
	}
	src, err := csvio.NewSource(files, csvio.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}, Transform: func(x []float64) {
		for j := range x {
			x[j] = math.Log1p(math.Abs(x[j]))
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	m, err := dica.Fit(ctx, src, dica.Config{Method: dica.DICA, Rank: 500, Sigma: 1})
	if err != nil {
		b.Fatal(err)
	}
	k := m.Positive
	comps := make([]string, k)
	for j := range comps {
		comps[j] = "DICA" + strconv.Itoa(j+1)
	}
	vars := src.Schema().Features
	out := b.TempDir()
	for it := 0; it < b.N; it++ {
		var n int64
		// CSV, as dica transform writes it.
		t0 := time.Now()
		f, err := atomicfile.Create(filepath.Join(out, "cytof.csv"))
		if err != nil {
			b.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		bw.WriteString("domain,label," + strings.Join(vars, ",") + "," + strings.Join(comps, ",") + "\n")
		var buf []byte
		err = m.TransformStream(ctx, src, 4096, func(blk *dataset.Block, z *mat.Dense, domains, classes []string) error {
			for i := 0; i < blk.Rows; i++ {
				buf = append(append(append(buf[:0], domains[blk.Domain[i]]...), ','), classes[blk.Label[i]]...)
				for _, v := range blk.Row(i) {
					buf = strconv.AppendFloat(append(buf, ','), v, 'g', -1, 64)
				}
				for _, v := range z.RawRowView(i) {
					buf = strconv.AppendFloat(append(buf, ','), v, 'g', 10, 64)
				}
				bw.Write(append(buf, '\n'))
			}
			n += int64(blk.Rows)
			return nil
		})
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = f.Commit()
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "csv-cells/s")

		// AnnData store.
		t0 = time.Now()
		store := filepath.Join(out, "cytof.zarr")
		w, err := Create(store, WriterOptions{Vars: vars, Components: k, Uns: &Uns{Method: "dica", Sigma: 1, Rank: 500, Eigenvalues: m.Eigenvalues[:k]}})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.TransformStream(ctx, src, 4096, w.WriteBlock); err != nil {
			b.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "zarr-cells/s")

		// Parquet.
		t0 = time.Now()
		pw, err := parquetio.Create(filepath.Join(out, "cytof.parquet"), parquetio.WriterOptions{Vars: vars, Components: comps})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.TransformStream(ctx, src, 4096, pw.WriteBlock); err != nil {
			b.Fatal(err)
		}
		if err := pw.Commit(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "parquet-cells/s")
		b.ReportMetric(float64(n), "cells")
	}
	for _, name := range []string{"cytof.csv", "cytof.parquet"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err == nil {
			b.Logf("%s: %.1f MB", name, float64(fi.Size())/1e6)
		}
	}
	if _, err := exec.LookPath(python); err == nil {
		o, err := exec.Command(python, "-c", `import sys, anndata; a = anndata.read_zarr(sys.argv[1]); print(a.n_obs, a.n_vars, a.obsm["X_dica"].shape, a.obs["domain"].nunique(), dict(a.obs["label"].value_counts()))`, filepath.Join(out, "cytof.zarr")).CombinedOutput()
		b.Logf("anndata.read_zarr: %s (%v)", strings.TrimSpace(lastLine(o)), err)
	}
}
