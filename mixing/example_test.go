package mixing_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/mixing"
)

// Two domains of 300 cells drawn from one distribution are well mixed: the
// effective number of domains around a cell (iLISI) is close to 2, their
// silhouette close to 0. Shifting the second domain by 6 standard
// deviations separates them: iLISI 1, a silhouette well above 0.
func ExampleMeasure() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(600, 2, nil)
	domains := make([]int, 600)
	for i := range 600 {
		domains[i] = i % 2
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
	}
	mixed, err := mixing.Measure(context.Background(), x, domains, nil, mixing.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for i, d := range domains {
		x.Set(i, 0, x.At(i, 0)+6*float64(d))
	}
	apart, err := mixing.Measure(context.Background(), x, domains, nil, mixing.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("mixed: iLISI %.2f, silhouette %.3f\n", mixed.ILISI, mixed.Silhouette)
	fmt.Printf("apart: iLISI %.2f, silhouette %.3f\n", apart.ILISI, apart.Silhouette)
	// Output:
	// mixed: iLISI 1.92, silhouette -0.002
	// apart: iLISI 1.00, silhouette 0.703
}
