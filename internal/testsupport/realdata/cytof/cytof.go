// Package cytof loads the multicenter16_cytof benchmark of the real data
// (16 CyTOF samples of 8 markers, one CSV file per sample without a header,
// gated populations 1 to 4 and 0 for ungated cells in row-aligned label
// files) through package csvio, for tests and benchmarks.
package cytof

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/realdata"
)

// Load reads the given samples (numbered 1 to 16), one domain per sample
// named "sampleK" in the order given, with asinh(x/5) applied to every
// marker. With labelled set it reads the labels too and keeps the labelled
// cells only (label 0 is dropped). It skips tb when the data are absent and
// fails it on a read error.
func Load(tb testing.TB, labelled bool, samples ...int) *dataset.Dataset {
	tb.Helper()
	dir := realdata.Dir(tb, "multicenter16_cytof")
	var files, labels []string
	for _, s := range samples {
		files = append(files, filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)))
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)))
	}
	o := csvio.Options{Header: csvio.NoHeader, Transform: func(row []float64) {
		for j, v := range row {
			row[j] = math.Asinh(v / 5)
		}
	}}
	if labelled {
		o.LabelFiles, o.LabelsIgnore = labels, []string{"0"}
	}
	src, err := csvio.NewSource(files, o)
	if err != nil {
		tb.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

// Populations returns the population of each cell of a labelled data set
// from Load, 0 to 3 for labels 1 to 4.
func Populations(tb testing.TB, ds *dataset.Dataset) []int {
	tb.Helper()
	pop := make([]int, len(ds.Label))
	for i, c := range ds.Label {
		l, err := strconv.Atoi(ds.ClassNames[c])
		if err != nil || l < 1 || l > 4 {
			tb.Fatalf("cell %d: label %q is not a population 1 to 4", i+1, ds.ClassNames[c])
		}
		pop[i] = l - 1
	}
	return pop
}
