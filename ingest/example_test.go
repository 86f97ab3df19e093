package ingest_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
)

// The README's library example: fit a model to CSV files as the dica
// command does (dica fit --data 'sample*.csv' --labels 'labels*.csv'
// --labels-ignore 0 --transform log1p --sigma 1 --rank 50) and project a
// new cell given as the files hold it (the model applies log1p).
func Example() {
	dir, err := os.MkdirTemp("", "dica-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	writeSamples(dir) // sample1.csv .. sample3.csv, labels1.csv .. labels3.csv
	ctx := context.Background()

	in, err := ingest.Open([]string{filepath.Join(dir, "sample*.csv")}, ingest.Options{
		LabelFiles:   []string{filepath.Join(dir, "labels*.csv")}, // natural order: labels2 before labels10
		LabelsIgnore: []string{"0"},                               // ungated cells left out
		Transform:    "log1p",
	})
	if err != nil {
		log.Fatal(err)
	}
	model, err := dica.Fit(ctx, in.Source, dica.Config{
		Method: dica.DICA, Rank: 50, Sigma: 1,
		Preprocessing: in.Pipeline, // the model records, and applies to new cells, what ingest applied
	})
	if err != nil {
		log.Fatal(err)
	}
	raw := mat.NewDense(1, 3, []float64{30, 12, 7}) // a new cell, as the files hold it
	z, err := model.Transform(raw, dica.TransformOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("samples:", model.Summary.Domains)
	fmt.Println("populations:", model.Summary.Classes)
	fmt.Println("preprocessing:", model.Preprocessing())
	fmt.Printf("components: %d, |first|: %.2f\n", model.Positive, math.Abs(z.At(0, 0)))
	// Output:
	// samples: [sample1 sample2 sample3]
	// populations: [1 2 3]
	// preprocessing: csv; 3 unnamed channels (columns V1, V2, V3); log1p on all channels
	// components: 2, |first|: 0.22
}

// writeSamples writes three samples of 200 cells of three populations
// (some ungated, label 0) as headerless CSV files with label files.
func writeSamples(dir string) {
	rng := rand.New(rand.NewPCG(1, 2))
	for s := 1; s <= 3; s++ {
		var x, l []byte
		for i := 0; i < 200; i++ {
			c := 1 + i%3
			if i%10 == 9 {
				c = 0
			}
			for j := 0; j < 3; j++ {
				v := float64(10*c*(j+1)) * (1 + 0.1*float64(s)) * (1 + 0.2*rng.NormFloat64())
				x = fmt.Appendf(x, "%.2f", max(v, 0))
				if j < 2 {
					x = append(x, ',')
				}
			}
			x = append(x, '\n')
			l = fmt.Appendf(l, "%d\n", c)
		}
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)), x, 0o644))
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)), l, 0o644))
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Labelled and unlabelled samples in one fit (dica fit --data
// 'sample*.csv' --labels sample2.csv=labels2.csv): only sample2 is gated;
// the cells of every sample find the components and the domain term, and
// sample2's gated cells the label term. A pair names a data file by its
// base name or its path; the other files' cells have no label.
func ExampleOpen_labelPairs() {
	dir, err := os.MkdirTemp("", "dica-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	writeSamples(dir)
	in, err := ingest.Open([]string{filepath.Join(dir, "sample*.csv")}, ingest.Options{
		LabelFiles:   []string{"sample2.csv=" + filepath.Join(dir, "labels2.csv")},
		LabelsIgnore: []string{"0"}, // sample2's ungated cells left out; the other samples' cells kept
		Transform:    "log1p",
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, f := range in.LabelFiles { // "" for a data file without labels
		if f == "" {
			f = "(no labels)"
		}
		fmt.Printf("%s: %s\n", filepath.Base(in.Files[i]), filepath.Base(f))
	}
	model, err := dica.Fit(context.Background(), in.Source, dica.Config{
		Method: dica.DICA, Rank: 50, Sigma: 1, Preprocessing: in.Pipeline,
	})
	if err != nil {
		log.Fatal(err)
	}
	s := model.Summary
	fmt.Println("cells:", s.N, "per sample:", s.DomainCounts)
	fmt.Println("labelled cells per population:", s.Classes, s.ClassCounts)
	// Output:
	// sample1.csv: (no labels)
	// sample2.csv: labels2.csv
	// sample3.csv: (no labels)
	// cells: 580 per sample: [200 180 200]
	// labelled cells per population: [1 2 3] [60 60 60]
}
