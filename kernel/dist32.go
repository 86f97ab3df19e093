package kernel

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"
)

// Single-precision kernel rows.
//
// BlockPoints32 evaluates K(X, P) in float32: the coordinates of x and of
// the points are rounded to float32, each distance is summed in float32
// with one fused multiply-add per coordinate, and the exponential is a
// float32 exp. On amd64 CPUs with AVX2 and FMA the rows are computed 8
// columns at a time (twice the columns of the float64 kernel per
// instruction), the exp being Cephes' expf polynomial after a reduction by
// ln 2; elsewhere the sums are float32 and the exponential is the float64
// exp rounded to float32. The two paths may differ in the last bits.
//
// Accuracy of an entry k = exp(g s), s the squared (or L1, or Euclidean)
// distance and g = -1/(2 sigma^2) (or -1/sigma): the float32 rounding of
// the coordinates and of the d-term sum changes g s by at most about
// (d + 2) 2^-24 |g s| plus the rounding of the coordinates' differences,
// and the exp adds at most 2 ulp (TestExp32Accuracy, TestBlockPoints32);
// an entry below exp(-87) (about 1.6e-38, the float32 normal range) is
// flushed to 0, an absolute error below 1.7e-38.

// exp32Lo is the argument below which a float32 kernel entry is 0: exp(x)
// for x < exp32Lo is below 1.7e-38, at the bottom of the float32 normal
// range, and the vector exp would need a subnormal result there.
const exp32Lo = -87

// Prepared32 is implemented by the kernels (RBF and Laplacian) that
// evaluate blocks against Points in single precision.
type Prepared32 interface {
	Prepared
	// BlockPoints32 stores K(X, P) in dst (r x p.Len()), in float32: see
	// RBF.BlockPoints32.
	BlockPoints32(dst blas32.General, x mat.Matrix, p *Points)
}

// BlockPoints32 stores K(X, P) in dst (r x p.Len(), row-major with
// dst.Stride >= p.Len()) in single precision: the coordinates are rounded
// to float32, each squared distance is summed in float32 and the
// exponential evaluated in float32 (within 2 ulp), entries below exp(-87)
// are 0. It panics if x and the points differ in dimension or dst has the
// wrong shape.
func (k RBF) BlockPoints32(dst blas32.General, x mat.Matrix, p *Points) {
	distBlockPoints32(dst, x, p, -1/(2*k.Sigma*k.Sigma), modeExp)
}

// BlockPoints32 stores K(X, P) in dst in single precision, as
// RBF.BlockPoints32 does (the distance's square root, or the L1 distance,
// in float32).
func (k Laplacian) BlockPoints32(dst blas32.General, x mat.Matrix, p *Points) {
	if k.L1 {
		distBlockPoints32(dst, x, p, -1/k.Sigma, modeExpL1)
		return
	}
	distBlockPoints32(dst, x, p, -1/k.Sigma, modeExpSqrt)
}

var (
	_ Prepared32 = RBF{}
	_ Prepared32 = Laplacian{}
)

// scratch32Pool holds the buffers of distBlockPoints32: a row of x in
// float32 and a row of output padded to a multiple of 8.
var scratch32Pool = sync.Pool{New: func() any { return new([]float32) }}

// distBlockPoints32 stores f(g ||x_i - p_j||) in dst in float32, with f and
// the norm selected by mode (modeExp, modeExpSqrt or modeExpL1).
func distBlockPoints32(dst blas32.General, x mat.Matrix, p *Points, g float64, mode int) {
	xd := dense(x)
	r, d := xd.Dims()
	if d != p.d {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", d, p.d))
	}
	s := p.s
	if dst.Rows != r || dst.Cols != s {
		panic(fmt.Sprintf("kernel: destination is %d x %d, want %d x %d", dst.Rows, dst.Cols, r, s))
	}
	if r == 0 || s == 0 {
		return
	}
	if dst.Stride < s || len(dst.Data) < (r-1)*dst.Stride+s {
		panic(fmt.Sprintf("kernel: destination of %d values with stride %d is too short for %d x %d", len(dst.Data), dst.Stride, r, s))
	}
	scratch := scratch32Pool.Get().(*[]float32)
	defer scratch32Pool.Put(scratch)
	if cap(*scratch) < d+p.sp32 {
		*scratch = make([]float32, d+p.sp32)
	}
	xi := (*scratch)[:d]
	buf := (*scratch)[d : d+p.sp32]
	g32 := float32(g)
	for i := range r {
		row := dst.Data[i*dst.Stride : i*dst.Stride+s]
		if d == 0 {
			// Zero-dimensional points are all at distance 0.
			for j := range row {
				row[j] = 1
			}
			continue
		}
		for k, v := range xd.RawRowView(i)[:d] {
			xi[k] = float32(v)
		}
		if !hasAVX2FMA {
			distRow32(row, xi, p.zt32, p.sp32, g32, mode)
			continue
		}
		out := row
		if p.sp32 != s {
			out = buf
		}
		for j := 0; j < p.sp32; {
			j += distRow32AVX2(out[j:p.sp32], xi, p.zt32[j:], p.sp32, g32, mode)
			if j < p.sp32 {
				// A block with an overflowing or NaN result.
				distRow32(out[j:j+8], xi, p.zt32[j:], p.sp32, g32, mode)
				j += 8
			}
		}
		if p.sp32 != s {
			copy(row, buf[:s])
		}
	}
}

// distRow32 computes len(row) entries of a row of distBlockPoints32 in
// portable Go: row[j] = f(g * sum_k (x_k - zt[k*stride + j])^2) (or the sum
// of |x_k - zt[k*stride+j]|), the sums in float32 and f the float64 exp of
// the float32 argument rounded to float32, or 0 below exp32Lo.
func distRow32(row, x, zt []float32, stride int, g float32, mode int) {
	s := len(row)
	clear(row)
	for k, a := range x {
		zk := zt[k*stride : k*stride+s]
		if mode == modeExpL1 {
			for j, v := range zk {
				row[j] += float32(math.Abs(float64(a - v)))
			}
			continue
		}
		for j, v := range zk {
			t := a - v
			row[j] += t * t
		}
	}
	if mode == modeExpSqrt {
		for j, v := range row {
			row[j] = float32(math.Sqrt(float64(v)))
		}
	}
	var buf [64]float64
	for lo := 0; lo < s; lo += len(buf) {
		seg := row[lo:min(s, lo+len(buf))]
		b := buf[:len(seg)]
		for j, v := range seg {
			b[j] = float64(g * v)
		}
		expInto(b, b, 1)
		for j, v := range seg {
			if g*v < exp32Lo {
				seg[j] = 0
			} else {
				seg[j] = float32(b[j])
			}
		}
	}
}

// expSlice32 sets dst[i] = exp(src[i]) in float32, as the kernel rows of
// BlockPoints32 compute it: 0 below exp32Lo, within 2 ulp above. dst and
// src must be the same slice or not overlap; len(dst) >= len(src).
func expSlice32(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if hasAVX2FMA {
		n8 := len(src) &^ 7
		for i < n8 {
			i += exp32AVX2(dst[i:n8], src[i:n8])
			if i < n8 {
				exp32Scalar(dst[i:i+8], src[i:i+8])
				i += 8
			}
		}
	}
	exp32Scalar(dst[i:], src[i:])
}

// exp32Scalar is the portable exp of expSlice32.
func exp32Scalar(dst, src []float32) {
	for i, x := range src {
		if x < exp32Lo {
			dst[i] = 0
			continue
		}
		v := [1]float64{float64(x)}
		expInto(v[:], v[:], 1)
		dst[i] = float32(v[0])
	}
}
