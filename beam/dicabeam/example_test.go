package dicabeam_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/dicalab/dica/beam/dicabeam"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// Example fits DICA on a pipeline run by Prism in this process and checks
// the model against the in-process fit of the same cells.
func Example() {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 80, Seed: 1})
	cfg := dica.Config{Method: dica.DICA, Rank: 50, Seed: 7}

	cells, err := dicabeam.Cells(ctx, ds.Source()) // keys in stream order
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "dicabeam-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.dica")

	p, s := beam.NewPipelineWithRoot()
	model, err := dicabeam.Fit(s, beam.CreateList(s, cells), dicabeam.Options{Config: cfg, Schema: ds.Source().Schema()})
	if err != nil {
		panic(err)
	}
	dicabeam.WriteModel(s, path, model)
	if _, err := prism.Execute(ctx, p); err != nil {
		panic(err)
	}

	got, err := dica.Load(path)
	if err != nil {
		panic(err)
	}
	want, err := dica.Fit(ctx, ds.Source(), cfg)
	if err != nil {
		panic(err)
	}
	same := true
	for j := range want.Positive {
		same = same && math.Abs(got.Eigenvalues[j]-want.Eigenvalues[j]) <= 1e-10*want.Eigenvalues[j]
	}
	fmt.Println("cells:", got.Summary.N, "components:", got.Positive, "same as dica.Fit:", same)
	// Output: cells: 326 components: 2 same as dica.Fit: true
}
