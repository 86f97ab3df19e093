package toy_test

import (
	"fmt"

	"github.com/dicalab/dica/toy"
)

func Example() {
	train, test := toy.RegressionSplit(toy.Options{Seed: 1}, 2)
	fmt.Println(train.NumDomains(), "training domains of", train.D(), "dimensions, first", train.DomainNames[0])
	fmt.Println(test.NumDomains(), "unseen test domains, first", test.DomainNames[0])
	r, c := train.Target.Dims()
	fmt.Println("target rows match points:", r == train.N(), "columns:", c)

	cls := toy.Classification(toy.Options{Domains: 4, Classes: 3, Seed: 1})
	fmt.Println(cls.NumClasses(), "classes:", cls.ClassNames)
	// Output:
	// 10 training domains of 5 dimensions, first d1
	// 2 unseen test domains, first d11
	// target rows match points: true columns: 1
	// 3 classes: [c1 c2 c3]
}
