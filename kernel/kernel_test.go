package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/randmat"
)

// randPoints returns n points of R^d with normal coordinates of standard
// deviation scale, drawn row by row.
func randPoints(rng *rand.Rand, n, d int, scale float64) *mat.Dense {
	x := randmat.Normal(rng, n, d)
	x.Scale(scale, x)
	return x
}

// TestBlockMatchesEval checks every kernel's Block against its Eval (math.Exp,
// explicit loops) on shapes that exercise the vector widths and the tails.
func TestBlockMatchesEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sh := range []struct{ r, s, d int }{{1, 1, 1}, {3, 5, 2}, {7, 9, 8}, {16, 33, 5}, {5, 64, 50}, {2, 13, 130}} {
		for _, scale := range []float64{0.3, 1, 30} {
			x := randPoints(rng, sh.r, sh.d, scale)
			z := randPoints(rng, sh.s, sh.d, scale)
			// A duplicate point: the distance must be exactly 0.
			if sh.s > 1 {
				z.SetRow(1, x.RawRowView(0))
			}
			for _, k := range []Kernel{RBF{Sigma: 1.3}, RBF{Sigma: 0.05}, Laplacian{Sigma: 2}, Laplacian{Sigma: 0.7, L1: true}, Linear{}} {
				var got mat.Dense
				k.Block(&got, x, z)
				for i := range sh.r {
					for j := range sh.s {
						xi, zj := x.RawRowView(i), z.RawRowView(j)
						want := k.Eval(xi, zj)
						if _, ok := k.(Linear); !ok {
							// An independent reference: math.Exp of the
							// explicitly computed distance.
							var d2, d1 float64
							for c := range xi {
								d2 += (xi[c] - zj[c]) * (xi[c] - zj[c])
								d1 += math.Abs(xi[c] - zj[c])
							}
							switch k := k.(type) {
							case RBF:
								want = math.Exp(-d2 / (2 * k.Sigma * k.Sigma))
							case Laplacian:
								if k.L1 {
									want = math.Exp(-d1 / k.Sigma)
								} else {
									want = math.Exp(-math.Sqrt(d2) / k.Sigma)
								}
							}
						}
						g := got.At(i, j)
						// exp has condition number |arg|: rounding of the
						// argument is amplified by it.
						tol := 1e-14 * math.Abs(want)
						if _, ok := k.(Linear); ok {
							// Dot products: relative to sum |x_c z_c|.
							var a float64
							for c := range xi {
								a += math.Abs(xi[c] * zj[c])
							}
							tol = 1e-14 * a
						}
						if _, lin := k.(Linear); !lin && want > 0 && want < 1 {
							// The distance is a sum of d terms.
							tol = (4 + math.Abs(math.Log(want))*(2+float64(sh.d)/2)) * 2.3e-16 * want
						}
						if math.Abs(g-want) > tol+1e-300 {
							t.Fatalf("%v %dx%dx%d scale %g: K[%d,%d] = %.17g, want %.17g", k, sh.r, sh.s, sh.d, scale, i, j, g, want)
						}
					}
				}
				if sh.s > 1 && k.String() != "linear" && got.At(0, 1) != 1 {
					t.Errorf("%v: k(x, x) = %.17g, want exactly 1", k, got.At(0, 1))
				}
			}
			var sq mat.Dense
			SqDistBlock(&sq, x, z)
			for i := range sh.r {
				for j := range sh.s {
					want := SqDist(x.RawRowView(i), z.RawRowView(j))
					if g := sq.At(i, j); math.Abs(g-want) > 1e-14*want {
						t.Fatalf("SqDistBlock[%d,%d] = %g, want %g", i, j, g, want)
					}
				}
			}
		}
	}
}

// TestVectorMatchesScalar compares the vector row kernel (when the CPU has
// it) with the scalar one, including rows with subnormal results (handled
// block-wise by the scalar code), underflow to 0, and ragged widths.
func TestVectorMatchesScalar(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2+FMA: Block uses the scalar code only")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sh := range []struct{ r, s, d int }{{4, 4, 1}, {3, 7, 3}, {5, 100, 8}, {2, 37, 13}} {
		x := randPoints(rng, sh.r, sh.d, 1)
		z := randPoints(rng, sh.s, sh.d, 1)
		for _, c := range []struct {
			g    float64
			mode int
		}{{0, modeSqDist}, {-0.5, modeExp}, {-300, modeExp}, {-80, modeExpSqrt}, {-1, modeExpSqrt}, {-0.7, modeExpL1}, {-250, modeExpL1}} {
			var got mat.Dense
			distBlock(&got, x, z, c.g, c.mode)
			for i := range sh.r {
				// Scalar reference: Z^T unpadded, the whole row at once.
				zt := make([]float64, sh.d*sh.s)
				for j := range sh.s {
					for k := range sh.d {
						zt[k*sh.s+j] = z.At(j, k)
					}
				}
				want := make([]float64, sh.s)
				distRow(want, x.RawRowView(i), zt, sh.s, c.g, c.mode)
				for j, w := range want {
					g := got.At(i, j)
					if w == 0 && g == 0 {
						continue
					}
					arg := math.Abs(math.Log(w))
					if c.mode == modeSqDist {
						arg = 0
					}
					if math.Abs(g-w) > (4+arg*(2+float64(sh.d)/2))*2.3e-16*w {
						t.Fatalf("%dx%dx%d g %g mode %d: [%d,%d] vector %.17g, scalar %.17g", sh.r, sh.s, sh.d, c.g, c.mode, i, j, g, w)
					}
				}
			}
		}
	}
}

// TestBlockSpecialValues: subnormal results (exp of -746 < arg < -707, done
// by the scalar fallback inside a vector row), underflow to 0, NaN inputs.
func TestBlockSpecialValues(t *testing.T) {
	base := []float64{0, 1, math.Sqrt(710), math.Sqrt(720), math.Sqrt(744), math.Sqrt(746.5), 30, 2, math.NaN(), 3, 0.5, 4}
	// Every rotation, so that each special value falls in every lane of
	// the first and second 4-column block of the 8-column vector loop.
	for rot := range base {
		zs := append(append([]float64{}, base[rot:]...), base[:rot]...)
		testSpecialValues(t, zs)
	}
}

func testSpecialValues(t *testing.T, zs []float64) {
	t.Helper()
	z := mat.NewDense(len(zs), 1, zs)
	x := mat.NewDense(2, 1, []float64{0, 0.5})
	k := RBF{Sigma: 1 / math.Sqrt2} // k = exp(-d^2)
	var got mat.Dense
	k.Block(&got, x, z)
	for i := range 2 {
		for j, zj := range zs {
			d := x.At(i, 0) - zj
			want := math.Exp(-d * d)
			g := got.At(i, j)
			switch {
			case math.IsNaN(want):
				if !math.IsNaN(g) {
					t.Errorf("K[%d,%d] = %g, want NaN", i, j, g)
				}
			case want < 0x1p-1022:
				// Subnormal: compare in absolute terms (1 ulp of the
				// result's exponent range).
				if math.Abs(g-want) > 1e-16*0x1p-1022+want*1e-12 {
					t.Errorf("K[%d,%d] = %g, want %g", i, j, g, want)
				}
			default:
				if math.Abs(g-want) > 2e-13*want {
					t.Errorf("K[%d,%d] = %.17g, want %.17g", i, j, g, want)
				}
			}
			if zj == math.Sqrt(720) && i == 0 && g == 0 {
				t.Errorf("exp(-720) = 0, want a subnormal")
			}
			if zj == math.Sqrt(746.5) && i == 0 && g != 0 {
				t.Errorf("exp(-746.5) = %g, want 0", g)
			}
		}
	}
}
