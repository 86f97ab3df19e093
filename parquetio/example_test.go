package parquetio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/parquetio"
)

// Cells written as they stream, block by block, with their components,
// then read back with a domain column and the channels as features.
func Example() {
	dir, err := os.MkdirTemp("", "parquetio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, err := parquetio.Create(filepath.Join(dir, "cells.parquet"), parquetio.WriterOptions{Vars: []string{"CD3", "CD19"}, Components: []string{"DICA1"}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	// Two blocks of two cells, as a dataset.Reader hands them out, and the
	// components of each.
	blocks := []*dataset.Block{
		{Rows: 2, D: 2, X: []float64{5.1, 0.2, 4.8, 0.1}, Domain: []int{0, 0}},
		{Rows: 2, D: 2, X: []float64{0.3, 6.2, 0.4, 5.9}, Domain: []int{1, 1}},
	}
	z := []*mat.Dense{mat.NewDense(2, 1, []float64{0.9, 0.8}), mat.NewDense(2, 1, []float64{-1.1, -1.0})}
	for i, b := range blocks {
		if err := w.WriteBlock(b, z[i], []string{"patient1", "patient2"}, nil); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		log.Fatal(err)
	}

	src, err := parquetio.NewSource([]string{w.Path()}, parquetio.Options{Domain: "domain", Features: []string{"CD3", "CD19"}})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < ds.N(); i++ {
		fmt.Println(ds.DomainNames[ds.Domain[i]], ds.X.RawRowView(i))
	}
	// Output:
	// patient1 [5.1 0.2]
	// patient1 [4.8 0.1]
	// patient2 [0.3 6.2]
	// patient2 [0.4 5.9]
}
