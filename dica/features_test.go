package dica

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/toy"
)

// TestNewFamilyFeatures checks that the raw features NewFamilyFeatures
// keeps are those Plan.MapRaw computes, bit for bit, for a family without
// the Gram sum (the pass's rows in cache-sized chunks) and one with it
// (the rows kept whole and shifted in place), on several workers and
// blocks; that the models are those of NewFamily; and that nothing is
// kept at Precision 32.
func TestNewFamilyFeatures(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 500, Dim: 8, Classes: 4, Seed: 2})
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		methods []Method
	}{
		{"dica", []Method{DICA}},
		{"kpca,udica,dica", []Method{KPCA, UDICA, DICA}},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				var cfgs []Config
				for _, m := range c.methods {
					cfgs = append(cfgs, Config{Method: m, Components: 3, Rank: 150, Sigma: 2, Seed: 1, Workers: workers, BlockRows: 700})
				}
				fam, err := NewFamilyFeatures(ctx, ds.Source(), cfgs...)
				if err != nil {
					t.Fatal(err)
				}
				got := fam.Features()
				if got == nil {
					t.Fatal("no features kept")
				}
				var want mat.Dense
				if err := fam.Plan().MapRaw(&want, ds.X); err != nil {
					t.Fatal(err)
				}
				wr, gr := want.RawMatrix(), got.RawMatrix()
				if wr.Rows != gr.Rows || wr.Cols != gr.Cols {
					t.Fatalf("features are %d x %d, want %d x %d", gr.Rows, gr.Cols, wr.Rows, wr.Cols)
				}
				bad := 0
				for i := range wr.Rows {
					for j := range wr.Cols {
						if math.Float64bits(gr.Data[i*gr.Stride+j]) != math.Float64bits(wr.Data[i*wr.Stride+j]) {
							bad++
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d features differ from MapRaw's", bad, wr.Rows*wr.Cols)
				}
				plain, err := NewFamily(ctx, ds.Source(), cfgs...)
				if err != nil {
					t.Fatal(err)
				}
				for _, cfg := range cfgs {
					a, err := fam.Solve(cfg)
					if err != nil {
						t.Fatal(err)
					}
					b, err := plain.Solve(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if !mat.Equal(a.W, b.W) {
						t.Errorf("%v: the model differs from NewFamily's", cfg.Method)
					}
				}
			})
		}
	}
	t.Run("precision=32", func(t *testing.T) {
		fam, err := NewFamilyFeatures(ctx, ds.Source(), Config{Method: DICA, Rank: 100, Sigma: 1, Seed: 1, Precision: 32})
		if err != nil {
			t.Fatal(err)
		}
		if !fam.Plan().SinglePrecision() {
			t.Skip("the plan runs in float64")
		}
		if fam.Features() != nil {
			t.Error("features kept from a float32 pass")
		}
	})
	t.Run("no size", func(t *testing.T) {
		src := struct{ dataset.Source }{ds.Source()}
		if _, err := NewFamilyFeatures(ctx, src, Config{Method: DICA, Rank: 100, Sigma: 1, Seed: 1}); err == nil {
			t.Error("no error for a source without a number of rows")
		}
	})
}
