package dicabeam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/toy"
)

// TestReadFilesParquet: Parquet files (one domain each, a label column with
// an ignored value) fit on the pipeline, through ReadFiles and FitFiles, to
// the model of the in-process Source.
func TestReadFilesParquet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 120, Seed: 9})
	var files []string
	vars := make([]string, ds.D())
	for j := range vars {
		vars[j] = fmt.Sprintf("m%d", j+1)
	}
	for g, name := range ds.DomainNames {
		f := filepath.Join(dir, name+".parquet")
		w, err := parquetio.Create(f, parquetio.WriterOptions{Vars: vars, RowGroupRows: 50})
		require.NoError(t, err)
		var b dataset.Block
		k := 0
		for p := range ds.N() {
			if ds.Domain[p] != g {
				continue
			}
			label := ds.Label[p]
			if k%7 == 3 {
				label = len(ds.ClassNames) // the ignored class
			}
			b = dataset.Block{Rows: 1, D: ds.D(), X: ds.X.RawRowView(p), Domain: []int{0}, Label: []int{label}}
			require.NoError(t, w.WriteBlock(&b, nil, []string{name}, append(append([]string(nil), ds.ClassNames...), "ungated")))
			k++
		}
		require.NoError(t, w.Commit())
		files = append(files, f)
	}
	o := FileOptions{Files: files, Options: ingest.Options{Label: "label", LabelsIgnore: []string{"ungated"}}}
	src, err := o.Source()
	require.NoError(t, err)
	require.Equal(t, vars, src.Schema().Features)
	cfg := dica.Config{Method: dica.DICA, Rank: 40, Components: 2, Seed: 13}
	want, err := dica.Fit(ctx, src, cfg)
	require.NoError(t, err)

	requireFilesFit(t, o, src, cfg, want)

	// Options of other kinds of files are errors.
	_, err = FileOptions{Files: files, Options: ingest.Options{Compensate: true}}.Source()
	require.ErrorContains(t, err, "applies to FCS files")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.csv"), []byte("1,2\n"), 0o644))
	_, err = FileOptions{Files: append(files, filepath.Join(dir, "x.csv"))}.Source()
	require.ErrorContains(t, err, "mix kinds")
}
