package mixing

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkMeasure times every measure on n points in 8 dimensions from 4
// domains and 4 classes (one pass over the n^2 pairs).
func BenchmarkMeasure(b *testing.B) {
	for _, n := range []int{2000, 5000, 20000} {
		x, g, c := randomPoints(n, 8, 4, 0.5, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				if _, err := Measure(context.Background(), x, g, c, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
