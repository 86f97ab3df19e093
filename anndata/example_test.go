package anndata_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
)

// Cells written as they stream (here one block), then read back by their
// obs columns.
func Example() {
	dir, err := os.MkdirTemp("", "anndata-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store := filepath.Join(dir, "cells.zarr")

	w, err := anndata.Create(store, anndata.WriterOptions{
		Vars: []string{"CD3", "CD19"}, Components: 1,
		Uns: &anndata.Uns{Method: "dica", Sigma: 1, Rank: 500},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	b := &dataset.Block{Rows: 4, D: 2, X: []float64{5.1, 0.2, 4.8, 0.1, 0.3, 6.2, 0.4, 5.9},
		Domain: []int{0, 0, 1, 1}, Label: []int{0, 0, 1, 1}}
	z := mat.NewDense(4, 1, []float64{0.9, 0.8, -1.1, -1.0})
	if err := w.WriteBlock(b, z, []string{"patient1", "patient2"}, []string{"T", "B"}); err != nil {
		log.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		log.Fatal(err)
	}

	src, err := anndata.NewSource(store, anndata.Options{Domain: "obs:domain", Label: "obs:label"})
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
	// Output:
	// patient1 T [5.1 0.2]
	// patient1 T [4.8 0.1]
	// patient2 B [0.3 6.2]
	// patient2 B [0.4 5.9]
}
