package krr

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

func TestAddGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ rows, p, stride int }{{1, 1, 1}, {3, 2, 2}, {13, 5, 7}, {16, 11, 11}, {9, 3, 4}} {
		a := make([]float64, tc.rows*tc.stride)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		c := make([]float64, tc.p*tc.p)
		for i := range c {
			c[i] = float64(i)
		}
		want := blas64.Symmetric{Uplo: blas.Upper, N: tc.p, Stride: tc.p, Data: append([]float64(nil), c...)}
		blas64.Syrk(blas.Trans, 1, blas64.General{Rows: tc.rows, Cols: tc.p, Stride: tc.stride, Data: a}, 1, want)
		addGram(c, tc.p, a, tc.rows, tc.stride)
		for j := range tc.p {
			for k := j; k < tc.p; k++ {
				if d := c[j*tc.p+k] - want.Data[j*tc.p+k]; math.Abs(d) > 1e-12 {
					t.Errorf("%+v: c[%d,%d] off by %g", tc, j, k, d)
				}
			}
		}
	}
}
