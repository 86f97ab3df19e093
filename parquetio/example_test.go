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

// Cells written as they stream (here one block) with their components,
// then read back with a domain column and the channels as features.
func Example() {
	dir, err := os.MkdirTemp("", "parquetio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cells.parquet")

	w, err := parquetio.Create(path, parquetio.WriterOptions{Vars: []string{"CD3", "CD19"}, Components: []string{"DICA1"}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	b := &dataset.Block{Rows: 4, D: 2, X: []float64{5.1, 0.2, 4.8, 0.1, 0.3, 6.2, 0.4, 5.9}, Domain: []int{0, 0, 1, 1}}
	z := mat.NewDense(4, 1, []float64{0.9, 0.8, -1.1, -1.0})
	if err := w.WriteBlock(b, z, []string{"patient1", "patient2"}, nil); err != nil {
		log.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		log.Fatal(err)
	}

	src, err := parquetio.NewSource([]string{path}, parquetio.Options{Domain: "domain", Features: []string{"CD3", "CD19"}})
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
