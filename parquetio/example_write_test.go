package parquetio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/parquetio"
)

// Cells written with columns of every kind: each cell's source file and
// row number (so that it joins back to its file), a channel and a
// component; then read back, and the footer's metadata.
func ExampleWriter_Write() {
	dir, err := os.MkdirTemp("", "parquetio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cols := []parquetio.Column{
		{Name: "file", Kind: parquetio.Text},
		{Name: "row", Kind: parquetio.Int64},
		{Name: "CD3", Kind: parquetio.Float64},
		{Name: "DICA1", Kind: parquetio.Float64},
	}
	w, err := parquetio.Create(filepath.Join(dir, "cells.parquet"), parquetio.WriterOptions{Columns: cols, Metadata: map[string]string{"dica.method": "dica"}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	err = w.Write(&parquetio.Rows{
		N:      4,
		Codes:  [][]int{{0, 0, 1, 1}},
		Names:  [][]string{{"sample1.csv", "sample2.csv"}},
		Ints:   [][]int64{{1, 2, 1, 3}},
		Floats: []float64{5.1, 0.9, 4.8, 0.8, 0.3, -1.1, 0.4, -1.0}, // CD3, DICA1 of each row
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		log.Fatal(err)
	}

	src, err := parquetio.NewSource([]string{w.Path()}, parquetio.Options{Domain: "file", Label: "row", Features: []string{"CD3", "DICA1"}})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < ds.N(); i++ {
		fmt.Println(ds.DomainNames[ds.Domain[i]], ds.ClassNames[ds.Label[i]], ds.X.RawRowView(i))
	}
	kv, err := parquetio.KeyValues(w.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(kv)
	// Output:
	// sample1.csv 1 [5.1 0.9]
	// sample1.csv 2 [4.8 0.8]
	// sample2.csv 1 [0.3 -1.1]
	// sample2.csv 3 [0.4 -1]
	// map[dica.method:dica]
}
