package dica_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// Example fits supervised DICA with Nystrom features to the toy
// classification data (3 classes, 4 domains), projects the points, and
// saves and reloads the model.
func Example() {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 50, Seed: 1})
	cfg := dica.Config{
		Method:     dica.DICA,
		Components: 4,
		Rank:       50, // Nystrom landmarks
		Sigma:      2,
		Seed:       1,
	}
	m, err := dica.Fit(context.Background(), ds.Source(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	// With 3 classes and the delta output kernel at most 2 components
	// carry signal; the other eigenvalues are reported as null.
	fmt.Printf("%d points, %d domains, %d classes\n", m.Summary.N, len(m.Summary.Domains), len(m.Summary.Classes))
	fmt.Printf("components: %d (null: %d)\n", m.Components(), m.Null())
	fmt.Printf("eigenvalues: %.4f %.4f\n", m.Eigenvalues[0], m.Eigenvalues[1])

	z, err := m.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		log.Fatal(err)
	}
	r, k := z.Dims()
	fmt.Printf("projection: %d x %d\n", r, k)

	dir, err := os.MkdirTemp("", "dica-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.dica")
	if err := m.Save(path); err != nil {
		log.Fatal(err)
	}
	back, err := dica.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	z2, err := back.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("loaded model projects identically:", slices.Equal(z.RawMatrix().Data, z2.RawMatrix().Data))
	// Output:
	// 206 points, 4 domains, 3 classes
	// components: 2 (null: 2)
	// eigenvalues: 0.0289 0.0229
	// projection: 206 x 2
	// loaded model projects identically: true
}

// One pass over the data, then a sweep of the ridge lambda: each SolveWith
// is a small m x m solve on the same statistics, and gives the model Fit
// would give with that lambda.
func ExampleStats_SolveWith() {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 50, Seed: 1})
	ctx := context.Background()
	// Lambda > 0 in the plan's configuration makes the pass accumulate the
	// Gram sum that every lambda > 0 needs.
	p, err := dica.NewPlan(ctx, ds.Source(), dica.Config{Method: dica.DICA, Rank: 50, Sigma: 2, Seed: 1, Lambda: 1})
	if err != nil {
		log.Fatal(err)
	}
	st, err := p.Accumulate(ctx, ds.Source())
	if err != nil {
		log.Fatal(err)
	}
	for _, lambda := range []float64{0, 0.01, 1} {
		cfg := st.Plan().Config
		cfg.Lambda = lambda
		m, err := st.SolveWith(cfg)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("lambda %-4v top eigenvalue %.4f\n", lambda, m.Eigenvalues[0])
	}
	// Output:
	// lambda 0    top eigenvalue 0.0289
	// lambda 0.01 top eigenvalue 0.0289
	// lambda 1    top eigenvalue 0.0264
}
