package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// fusedRows is the row loop of distRows with the fused vector kernel
// alone (distance and exponential of each block in one call): the
// reference the two-step RBF rows must equal bit for bit.
func fusedRows(dst, xd *mat.Dense, zt []float64, s, sp int, g float64) {
	r, d := xd.Dims()
	buf := make([]float64, sp)
	for i := range r {
		xi := xd.RawRowView(i)[:d]
		for j := 0; j < sp; {
			j += distRowAVX2(buf[j:], xi, zt[j:], sp, g, modeExp)
			if j < sp {
				distRow(buf[j:j+4], xi, zt[j:], sp, g, modeExp)
				j += 4
			}
		}
		copy(dst.RawRowView(i)[:s], buf[:s])
	}
}

// TestRBFRowsMatchFused checks that the RBF rows (squared distances of a
// row, then their exponentials) equal the fused kernel's bit for bit, on
// widths with and without padding, both pairings of the 4-column blocks,
// and arguments in the range the vector exponential leaves to the scalar
// code (subnormal results, where the fused loop restarts and pairs the
// following blocks differently), plus NaN and infinite coordinates.
func TestRBFRowsMatchFused(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2+FMA: the rows are computed by the scalar code only")
	}
	rng := rand.New(rand.NewPCG(3, 24))
	slow := 0
	for _, sh := range []struct{ r, s, d int }{{3, 1, 1}, {9, 4, 2}, {9, 8, 3}, {17, 12, 8}, {17, 37, 8}, {33, 200, 8}, {9, 201, 9}, {5, 64, 30}} {
		x := mat.NewDense(sh.r, sh.d, nil)
		z := mat.NewDense(sh.s, sh.d, nil)
		for _, m := range []*mat.Dense{x, z} {
			raw := m.RawMatrix()
			for i := range raw.Data {
				raw.Data[i] = 10 * rng.Float64()
			}
		}
		x.Set(0, 0, math.NaN())
		if sh.r > 1 {
			x.Set(1, sh.d-1, math.Inf(1))
		}
		p := NewPoints(z)
		// g spreads g ||x - z||^2 over [-746, -707] for typical distances
		// (mean squared distance ~ 16.7 d), and past both ends.
		mean := 50.0 / 3 * float64(sh.d)
		for _, g := range []float64{-0.5, -707 / mean, -725 / mean, -746 / mean, -2000 / mean} {
			var got mat.Dense
			RBF{Sigma: math.Sqrt(-1 / (2 * g))}.BlockPoints(&got, x, p)
			gamma := -1 / (2 * math.Sqrt(-1/(2*g)) * math.Sqrt(-1/(2*g)))
			want := mat.NewDense(sh.r, sh.s, nil)
			fusedRows(want, x, p.zt, p.s, p.sp, gamma)
			for i := range sh.r {
				for j := range sh.s {
					a, b := got.At(i, j), want.At(i, j)
					if math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%dx%dx%d gamma %g: [%d,%d] = %v, fused kernel %v", sh.r, sh.s, sh.d, gamma, i, j, a, b)
					}
					if v := gamma * sqDistRef(x.RawRowView(i), z.RawRowView(j)); v >= -746 && v < -707 {
						slow++
					}
				}
			}
		}
	}
	if slow < 100 {
		t.Fatalf("only %d entries with a subnormal result: the test does not reach the scalar fallback", slow)
	}
}

func sqDistRef(x, z []float64) float64 {
	var s float64
	for k := range x {
		d := x[k] - z[k]
		s += d * d
	}
	return s
}
