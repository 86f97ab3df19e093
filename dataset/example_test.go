package dataset_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// Cells of two patients with their gated population; a patient with a single
// cell is rejected, since its distribution cannot be estimated.
func Example() {
	x := mat.NewDense(5, 2, []float64{
		1.0, 0.2,
		1.1, 0.1,
		0.2, 2.0,
		0.1, 2.2,
		0.9, 0.3,
	})
	ds, err := dataset.New(x, []string{"patient1", "patient1", "patient2", "patient2", "patient2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ds.SetLabels([]string{"T", "T", "B", "B", "T"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.DomainNames, ds.DomainSizes())
	fmt.Println(ds.ClassNames, ds.ClassSizes())

	_, err = dataset.New(x, []string{"p1", "p1", "p2", "p2", "p3"})
	fmt.Println(err)
	// Output:
	// [patient1 patient2] [2 3]
	// [T B] [3 2]
	// dataset: domain "p3" has 1 point(s); every domain needs at least 2
}
