package mixing

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkMeasure times every measure on n points in 8 dimensions from 4
// domains and 4 classes (one pass over the n^2 pairs), the domains
// interleaved (point i in domain i mod 4) or in runs (the first quarter of
// the points in domain 0, and so on, as the evaluation's mixing sample).
func BenchmarkMeasure(b *testing.B) {
	for _, n := range []int{2000, 5000, 20000} {
		x, g, c := randomPoints(n, 8, 4, 0.5, 1)
		runs := make([]int, n)
		for i := range runs {
			runs[i] = i * 4 / n
		}
		for _, order := range []struct {
			name string
			g    []int
		}{{"interleaved", g}, {"runs", runs}} {
			b.Run(fmt.Sprintf("%d/%s", n, order.name), func(b *testing.B) {
				for range b.N {
					if _, err := Measure(context.Background(), x, order.g, c, Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
