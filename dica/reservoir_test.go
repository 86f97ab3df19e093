package dica

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/toy"
)

// streamOnly hides a source's Sizer and RowAccess, as a file source.
type streamOnly struct{ dataset.Source }

// TestReservoirRowAccess checks that the sample drawn from the row indices
// of an in-memory source equals the one a pass over the same rows draws
// (the same generator calls), so in-memory and file data give the same plan.
func TestReservoirRowAccess(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 300, Seed: 4})
	for _, size := range []int{1, 17, 500, ds.N(), ds.N() + 10} {
		for _, withY := range []bool{false, true} {
			x1, y1, n1, err := reservoir(context.Background(), ds.Source(), size, 9, withY, nil)
			if err != nil {
				t.Fatal(err)
			}
			x2, y2, n2, err := reservoir(context.Background(), streamOnly{ds.Source()}, size, 9, withY, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n1 != n2 || n1 != int64(ds.N()) || !mat.Equal(x1, x2) || withY && !mat.Equal(y1, y2) {
				t.Errorf("size %d, targets %v: row-access sample differs from the streamed one", size, withY)
			}
			if r, _ := x1.Dims(); r != min(size, ds.N()) {
				t.Errorf("size %d: %d rows sampled", size, r)
			}
		}
	}
	// A non-finite sampled row is reported by its 1-based row number.
	bad := toy.Regression(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	bad.X.Set(7, 2, math.NaN())
	for _, src := range []dataset.Source{bad.Source(), streamOnly{bad.Source()}} {
		_, _, _, err := reservoir(context.Background(), src, bad.N(), 1, false, nil)
		if err == nil || !strings.Contains(err.Error(), "row 8, column 3") {
			t.Errorf("%T: %v", src, err)
		}
	}
}
