package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"
)

// u32 is the unit roundoff of float32.
const u32 = 0x1p-24

// ulp32 returns the spacing of float32 values at |v| (v a normal float32
// magnitude).
func ulp32(v float64) float64 {
	f := float32(math.Abs(v))
	return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
}

// TestExp32Accuracy measures the float32 exps (the vector one when the CPU
// has it, and the portable one) against math.Exp over the whole float32
// range, with the boundaries of the fast path, the flush to zero below
// -87, overflow, infinities and NaN.
func TestExp32Accuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var xs []float32
	for x := -90.0; x <= 89; x += 0.00371 {
		xs = append(xs, float32(x))
	}
	for range 300000 {
		xs = append(xs, float32(-87*rng.Float64()), float32(88*rng.Float64()), float32(1e-3*rng.NormFloat64()))
	}
	// Next to the rounding boundaries of k = round(x / ln 2).
	for k := -125; k <= 126; k++ {
		c := float32((float64(k) + 0.5) * math.Ln2)
		xs = append(xs, c, math.Nextafter32(c, 0), math.Nextafter32(c, -1000), float32(float64(k)*math.Ln2))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-45, -87, math.Nextafter32(-87, 0), math.Nextafter32(-87, -100),
		88, math.Nextafter32(88, 0), math.Nextafter32(88, 100), 88.72, 88.73, 89, -103, -104, -1e30, 1e30, -inf, inf, float32(math.NaN()))
	// Fill the length to a multiple of 8 with ordinary values, so that
	// every special value is in a vector block.
	for len(xs)%8 != 0 {
		xs = append(xs, 0.5)
	}
	vec := make([]float32, len(xs))
	expSlice32(vec, xs)
	sca := make([]float32, len(xs))
	exp32Scalar(sca, xs)
	for _, c := range []struct {
		name  string
		got   []float32
		bound float64
	}{{"expSlice32", vec, 1.5}, {"exp32Scalar", sca, 0.501}} {
		var worst, worstX float64
		for i, x := range xs {
			g, want := float64(c.got[i]), math.Exp(float64(x))
			switch {
			case math.IsNaN(want):
				if !math.IsNaN(g) {
					t.Fatalf("%s: exp(%v) = %v, want NaN", c.name, x, g)
				}
			case x < exp32Lo:
				if g != 0 {
					t.Fatalf("%s: exp(%v) = %v, want 0 (flushed)", c.name, x, g)
				}
			case want > math.MaxFloat32:
				if !math.IsInf(g, 1) {
					t.Fatalf("%s: exp(%v) = %v, want +Inf", c.name, x, g)
				}
			default:
				if e := math.Abs(g-want) / ulp32(want); e > worst {
					worst, worstX = e, float64(x)
				}
			}
		}
		t.Logf("%s, %d points: max error %.3f ulp (float32) at x = %v", c.name, len(xs), worst, worstX)
		if worst > c.bound {
			t.Errorf("%s: max error %.3f ulp at x = %v, want <= %g", c.name, worst, worstX, c.bound)
		}
	}
	if hasAVX2FMA {
		// The vector code must have done the work: a block of ordinary
		// values is not sent to the scalar code.
		if n := exp32AVX2(vec[:64], xs[:64]); n != 64 {
			t.Errorf("exp32AVX2 did %d of 64 ordinary values", n)
		}
	}
}

// ref32 is the reference of a float32 kernel entry: the float64 kernel of
// the float32-rounded coordinates, and the argument g s of its exp.
func ref32(x, z []float64, g float64, mode int) (k, arg float64) {
	var s float64
	for c := range x {
		t := float64(float32(x[c])) - float64(float32(z[c]))
		if mode == modeExpL1 {
			s += math.Abs(t)
		} else {
			s += t * t
		}
	}
	if mode == modeExpSqrt {
		s = math.Sqrt(s)
	}
	return math.Exp(g * s), g * s
}

// checkBlock32 checks a float32 block against ref32: the rounding of the
// d-term sum and of g, and the exp's 2 ulp, bound the relative error by
// (d + 4) u |g s| + 3 u (u = 2^-24); entries below exp(-87) are 0.
func checkBlock32(t *testing.T, name string, got blas32.General, x, z *mat.Dense, g float64, mode int) {
	t.Helper()
	r, d := x.Dims()
	s, _ := z.Dims()
	for i := range r {
		for j := range s {
			want, arg := ref32(x.RawRowView(i), z.RawRowView(j), g, mode)
			v := float64(got.Data[i*got.Stride+j])
			tol := want*((float64(d)+4)*u32*math.Abs(arg)+3*u32) + math.Exp(exp32Lo)
			if !(math.Abs(v-want) <= tol) {
				t.Fatalf("%s: d=%d g=%g mode %d: K[%d,%d] = %.9g, want %.9g (tol %.3g)", name, d, g, mode, i, j, v, want, tol)
			}
		}
	}
}

// TestBlockPoints32 checks the float32 kernel rows of RBF and both
// Laplacian kernels against the float64 reference of the rounded
// coordinates, on shapes that exercise the 8- and 16-column vector blocks
// and their tails, with the vector code and with the portable code.
func TestBlockPoints32(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, sh := range []struct{ r, s, d int }{{1, 1, 1}, {3, 7, 2}, {2, 8, 8}, {4, 9, 8}, {3, 16, 3}, {5, 17, 8}, {3, 24, 5}, {2, 501, 8}, {2, 40, 60}} {
		for _, scale := range []float64{0.3, 1, 8} {
			x := randPoints(rng, sh.r, sh.d, scale)
			z := randPoints(rng, sh.s, sh.d, scale)
			if sh.s > 1 {
				z.SetRow(1, x.RawRowView(0)) // distance 0: exactly 1
			}
			p := NewPoints(z)
			for _, c := range []struct {
				k    Prepared32
				g    float64
				mode int
			}{
				{RBF{Sigma: 1.3}, -1 / (2 * 1.3 * 1.3), modeExp},
				{RBF{Sigma: 0.2}, -1 / (2 * 0.2 * 0.2), modeExp},
				{Laplacian{Sigma: 2}, -0.5, modeExpSqrt},
				{Laplacian{Sigma: 0.7, L1: true}, -1 / 0.7, modeExpL1},
			} {
				got := blas32.General{Rows: sh.r, Cols: sh.s, Stride: sh.s + 3, Data: make([]float32, (sh.r-1)*(sh.s+3)+sh.s)}
				c.k.BlockPoints32(got, x, p)
				checkBlock32(t, c.k.String(), got, x, z, c.g, c.mode)
				if sh.s > 1 && got.Data[1] != 1 {
					t.Errorf("%v: K(x, x) = %v, want exactly 1", c.k, got.Data[1])
				}
				// The portable code, row by row.
				port := blas32.General{Rows: sh.r, Cols: sh.s, Stride: sh.s, Data: make([]float32, sh.r*sh.s)}
				for i := range sh.r {
					xi := make([]float32, sh.d)
					for k, v := range x.RawRowView(i) {
						xi[k] = float32(v)
					}
					distRow32(port.Data[i*sh.s:(i+1)*sh.s], xi, p.zt32, p.sp32, float32(c.g), c.mode)
				}
				checkBlock32(t, c.k.String()+" portable", port, x, z, c.g, c.mode)
			}
		}
	}
}

// TestBlockPoints32Special: entries below exp(-87) are 0 in every lane of
// both vector blocks, entries between exp(-87) and the float64 underflow
// are normal float32 values, NaN coordinates give NaN, and a coordinate
// of +Inf gives 0 (as the float64 kernel does).
func TestBlockPoints32Special(t *testing.T) {
	base := []float64{0, 1, math.Sqrt(86.9), math.Sqrt(87.1), math.Sqrt(120), 30, 2, math.NaN(), 3, 0.5, math.Inf(1), 4, 5, 6, 7, 8, 9}
	k := RBF{Sigma: 1 / math.Sqrt2} // k = exp(-d^2)
	for rot := range base {
		zs := append(append([]float64{}, base[rot:]...), base[:rot]...)
		z := mat.NewDense(len(zs), 1, zs)
		x := mat.NewDense(2, 1, []float64{0, 0.25})
		got := blas32.General{Rows: 2, Cols: len(zs), Stride: len(zs), Data: make([]float32, 2*len(zs))}
		k.BlockPoints32(got, x, NewPoints(z))
		for i := range 2 {
			for j, zj := range zs {
				d := float64(float32(x.At(i, 0)) - float32(zj))
				arg := -d * d
				want := math.Exp(arg)
				g := float64(got.Data[i*len(zs)+j])
				switch {
				case math.IsNaN(want):
					if !math.IsNaN(g) {
						t.Errorf("rot %d: K[%d,%d] = %g, want NaN", rot, i, j, g)
					}
				case arg < exp32Lo:
					if g != 0 {
						t.Errorf("rot %d: K[%d,%d] = %g (arg %g), want 0", rot, i, j, g, arg)
					}
				default:
					if math.Abs(g-want) > want*(6*u32*math.Abs(arg)+3*u32) {
						t.Errorf("rot %d: K[%d,%d] = %.9g, want %.9g", rot, i, j, g, want)
					}
				}
			}
		}
	}
}

// TestBlockPoints32Float64: on data at the scale of log-transformed
// cytometry (coordinates from about -2 to 12), the float32 rows agree with
// the float64 Block within the bound that the rounding of the coordinates
// adds to checkBlock32's: |g| sum_k 2 |x_k - z_k| (|x_k| + |z_k|) u more
// in the exp's argument; and the shape checks panic.
func TestBlockPoints32Float64(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	x := randPoints(rng, 50, 8, 1)
	z := randPoints(rng, 70, 8, 1)
	for _, m := range []*mat.Dense{x, z} {
		r, c := m.Dims()
		for i := range r {
			for j := range c {
				m.Set(i, j, 5+2*m.At(i, j))
			}
		}
	}
	k := RBF{Sigma: 1}
	const g = -0.5
	var want mat.Dense
	k.Block(&want, x, z)
	got := blas32.General{Rows: 50, Cols: 70, Stride: 70, Data: make([]float32, 50*70)}
	p := NewPoints(z)
	k.BlockPoints32(got, x, p)
	worst := 0.0
	for i := range 50 {
		for j := range 70 {
			w := want.At(i, j)
			var s, coord float64
			for c, a := range x.RawRowView(i) {
				b := z.At(j, c)
				s += (a - b) * (a - b)
				coord += 2 * math.Abs(a-b) * (math.Abs(a) + math.Abs(b)) * u32
			}
			tol := w*(-g*coord+12*u32*(-g*s)+3*u32) + math.Exp(exp32Lo)
			e := math.Abs(float64(got.Data[i*70+j]) - w)
			if !(e <= tol) {
				t.Fatalf("K[%d,%d] = %.9g, float64 %.9g (tol %.3g)", i, j, got.Data[i*70+j], w, tol)
			}
			worst = math.Max(worst, e/tol)
		}
	}
	t.Logf("float32 rows vs float64 Block: largest error %.2f of its bound", worst)
	for _, f := range []func(){
		func() { k.BlockPoints32(blas32.General{Rows: 50, Cols: 69, Stride: 70, Data: got.Data}, x, p) },
		func() { k.BlockPoints32(blas32.General{Rows: 50, Cols: 70, Stride: 70, Data: got.Data[:100]}, x, p) },
		func() { k.BlockPoints32(got, x.Slice(0, 50, 0, 7), p) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic on a bad shape")
				}
			}()
			f()
		}()
	}
}
