package dica_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/toy"
)

// Example_predict fits DICA on ten gated domains of the toy
// classification data, trains the linear SVM the model carries (its cost
// chosen by the inner leave-domains-out cross-validation, its confidence
// calibrated on leave-domains-out folds), and predicts the populations of
// a new domain.
func Example_predict() {
	ctx := context.Background()
	gatedSet, newSet := toy.ClassificationSplit(toy.Options{Domains: 10, MeanSize: 200, Dim: 3, Classes: 3, Seed: 1}, 1)
	train := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}

	// The transformation, then the learner on its components.
	m, err := dica.Fit(ctx, gatedSet.Source(), dica.Config{Method: dica.DICA, Sigma: 2, Components: 2, Rank: 100})
	if err != nil {
		log.Fatal(err)
	}
	o := eval.Options{Methods: []string{"dica"}, Rank: 100, Seed: dica.DefaultSeed, MixingCells: -1,
		Grid: eval.Grid{Sigma: []float64{2}, Components: []int{2}, C: []float64{0.1, 1}}}
	choice, err := eval.Choose(ctx, gatedSet, train, o)
	if err != nil {
		log.Fatal(err)
	}
	final, err := eval.TrainOn(ctx, gatedSet, train, m, choice[0], o)
	if err != nil {
		log.Fatal(err)
	}
	cl, err := final.Classifier(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.SetClassifier(cl); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (C = %g) on %d cells, populations %v, calibrated on %d cells of %d folds\n",
		cl.Kind, cl.Params.C, cl.TrainCells, cl.Classes, cl.Calibration.Cells, cl.Calibration.Folds)

	// A new domain, cell by cell.
	labels, confidence, err := m.Predict(newSet.X)
	if err != nil {
		log.Fatal(err)
	}
	right := 0
	for i, l := range labels {
		if l == newSet.ClassNames[newSet.Label[i]] {
			right++
		}
	}
	for i := range 4 {
		fmt.Printf("cell %d: %s (confidence %.2f), gated %s\n", i+1, labels[i], confidence[i], newSet.ClassNames[newSet.Label[i]])
	}
	fmt.Printf("%d of %d cells right\n", right, len(labels))

	// Cells below a minimum confidence are left unassigned.
	p, err := m.PredictWith(newSet.X, dica.PredictOptions{MinConfidence: 0.6})
	if err != nil {
		log.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range p.Class {
		count[cl.Label(c)]++
	}
	fmt.Println("at confidence 0.6:", count)
	// Output:
	// svm (C = 0.1) on 2053 cells, populations [c1 c2 c3], calibrated on 2053 cells of 4 folds
	// cell 1: c2 (confidence 0.62), gated c3
	// cell 2: c2 (confidence 0.70), gated c3
	// cell 3: c2 (confidence 0.43), gated c3
	// cell 4: c3 (confidence 0.64), gated c3
	// 124 of 192 cells right
	// at confidence 0.6: map[c1:18 c2:102 c3:5 unassigned:67]
}
