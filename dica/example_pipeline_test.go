package dica_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/preprocess"
	"github.com/dicalab/dica/toy"
)

// ExampleModel_Preprocessing fits on log(1+|x|) of raw intensities, records
// that preprocessing in the model, and projects new raw cells: the model
// applies log1p itself.
func ExampleModel_Preprocessing() {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 50, Seed: 1})
	// Raw intensities whose log1p are the toy data's values.
	r, d := ds.X.Dims()
	raw := mat.NewDense(r, d, nil)
	raw.Apply(func(_, _ int, v float64) float64 { return math.Expm1(v) }, ds.X)

	pre := mat.DenseCopyOf(raw)
	preprocess.Channels{F: preprocess.Log1pAbs{}}.Apply(pre.RawMatrix().Data, d)
	train := *ds
	train.X = pre
	m, err := dica.Fit(context.Background(), train.Source(), dica.Config{
		Method: dica.DICA, Rank: 50, Sigma: 2, Seed: 1,
		Preprocessing: &preprocess.Pipeline{Format: "csv", Transform: "log1p"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Preprocessing())

	zRaw, err := m.Transform(raw, dica.TransformOptions{})
	if err != nil {
		log.Fatal(err)
	}
	zPre, err := m.Transform(pre, dica.TransformOptions{Preprocessed: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("raw cells, preprocessed by the model, project alike:", mat.Equal(zRaw, zPre))
	// Output:
	// csv; 5 channels x1, x2, x3, x4, x5; log1p on all channels
	// raw cells, preprocessed by the model, project alike: true
}
