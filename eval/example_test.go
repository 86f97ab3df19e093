package eval_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/toy"
)

// Train on four domains of the toy classification data, test on two unseen
// ones; sigma is chosen by leave-one-group-of-domains-out cross-validation
// on the four training domains.
func ExampleRun() {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 100, Classes: 2, Seed: 1})
	res, err := eval.Run(context.Background(), ds, []int{0, 1, 2, 3}, []int{4, 5}, eval.Options{
		Methods: []string{"input", "dica"},
		Rank:    50,
		Grid:    eval.Grid{Sigma: []float64{1, 4}, Components: []int{1}},
		Seed:    1,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Methods {
		s := m.Splits[0]
		fmt.Printf("%-5s %-40s", m.Method, eval.ParamString(m.Method, s.Params, false))
		for _, d := range m.Scores {
			fmt.Printf(" %s %.3f", d.Domain, d.Score)
		}
		fmt.Printf("  mean %.3f\n", m.Mean)
	}
	// Output:
	// input C=1                                      d5 0.917 d6 0.903  mean 0.910
	// dica  sigma=4 lambda=0 epsilon=0.0001 k=1 C=1  d5 0.826 d6 0.761  mean 0.793
}

// The paper's protocol: repeated random draws of training domains, every
// other domain tested; the same seed gives the same draws.
func ExampleRandomSplits() {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 50, Classes: 2, Seed: 1})
	splits, err := eval.RandomSplits(ds, 4, 3, 7)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range splits {
		fmt.Println("train", s.Train, "test", s.Test)
	}
	// Output:
	// train [0 1 3 5] test [2 4]
	// train [0 2 3 5] test [1 4]
	// train [2 3 4 5] test [0 1]
}
