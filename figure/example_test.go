package figure_test

import (
	"bytes"
	"fmt"
	"image/png"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/figure"
)

// A reservoir keeps at most 3 rows of each domain of a stream, uniformly at
// random, in one pass.
func ExampleReservoir() {
	r := figure.NewReservoir(3, 1)
	kept := map[int][]int{}
	stream := []int{0, 0, 1, 0, 0, 0, 1, 0, 0} // the domain of each row
	rows := map[int]int{}
	for _, g := range stream {
		if slot, ok := r.Offer(g); ok {
			if slot == len(kept[g]) {
				kept[g] = append(kept[g], 0)
			}
			kept[g][slot] = rows[g]
		}
		rows[g]++
	}
	fmt.Println("rows seen per domain:", r.Seen())
	fmt.Println("kept of domain 0:", len(kept[0]), "of domain 1:", len(kept[1]))
	// Output:
	// rows seen per domain: [7 2]
	// kept of domain 0: 3 of domain 1: 2
}

// Projection draws cells of two samples: all of them colored by
// population, and each sample in a small panel of its own; Write renders
// the figure as PNG.
func ExampleProjection() {
	z := mat.NewDense(4, 2, []float64{
		0, 0,
		1, 0.5,
		0.2, 1,
		1.1, 1.4,
	})
	cells := figure.Cells{
		Domain: []int{0, 0, 1, 1}, DomainNames: []string{"patient1", "patient2"},
		Label: []int{0, 1, 0, 1}, ClassNames: []string{"B", "T"},
	}
	f, err := figure.Projection(cells, []figure.View{{Name: "DICA", Title: "DICA", Z: z}}, figure.Options{Width: 400, Height: 300})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("panels:", f.Panels[0][0].Title, "|", f.Panels[0][2].Title, "|", f.Panels[0][3].Title)
	var buf bytes.Buffer
	if err := f.Write(&buf, figure.PNG); err != nil {
		fmt.Println(err)
		return
	}
	img, err := png.Decode(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(img.Bounds().Dx(), "x", img.Bounds().Dy(), "pixels")
	// Output:
	// panels: DICA: populations | patient1 | patient2
	// 533 x 400 pixels
}
