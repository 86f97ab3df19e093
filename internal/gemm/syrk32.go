package gemm

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Single-precision Gram sums with float64 accumulation.

const (
	// nr32 is the number of columns of the float32 micro-tile (mr x nr32):
	// three vectors of 8 float32, the float64 tile's register budget.
	nr32 = 24
	// kc32 is the number of rows of A summed in float32 before their sum
	// is added to the float64 C.
	kc32 = 128
)

// Syrk32 adds A^T A, A in float32, to the upper triangle of the float64
// matrix C: for 0 <= i <= j < n,
//
//	C[i][j] += float64(acc_b[i][j]) for each block b of 128 rows of A in turn,
//	acc_b[i][j] = fma32(A[k][i], A[k][j], acc_b[i][j]) over the rows k of the block in increasing order,
//
// where A is r x n, C is n x n and fma32 is the single-precision fused
// multiply-add (one rounding to float32). Within a block the sum is
// float32 (relative error about sqrt(128) 2^-24 for terms of one sign);
// across blocks it is float64, so the error does not grow with r. This is
// Syrk with float32 arithmetic inside blocks, at twice its arithmetic rate
// on AVX2. The strictly lower triangle of C is neither read nor written.
// The computation is single-threaded (call it from several goroutines on
// distinct C buffers for parallelism), uses 128 n float32 of scratch from a
// pool, and its result is a deterministic function of the inputs, the same
// bits on every machine (the portable kernel computes fma32 exactly). It
// panics on inconsistent shapes.
func Syrk32(a blas32.General, c blas64.Symmetric) {
	native.syrk32(a, c)
}

// packPool holds the packing buffers of Syrk32.
var packPool = sync.Pool{New: func() any { return new([]float32) }}

func (im impl) syrk32(a blas32.General, c blas64.Symmetric) {
	if !isUpper(c.Uplo) {
		panic("gemm: Syrk32: only an upper triangle is implemented")
	}
	r, m := a.Rows, a.Cols
	check32("A", a.Data, a.Stride, r, m)
	checkMatrix("C", c.Data, c.Stride, c.N, c.N)
	if c.N != m {
		panic(fmt.Sprintf("gemm: Syrk32: A has %d columns, C is %d x %d", m, c.N, c.N))
	}
	if r == 0 || m == 0 {
		return
	}
	panels := (m + nr32 - 1) / nr32
	buf := packPool.Get().(*[]float32)
	defer packPool.Put(buf)
	if cap(*buf) < panels*nr32*kc32 {
		*buf = make([]float32, panels*nr32*kc32)
	}
	ldc := c.Stride
	var tmp [mr * nr32]float64
	for p0 := 0; p0 < r; p0 += kc32 {
		kb := min(kc32, r-p0)
		bp := (*buf)[:panels*nr32*kb]
		pack32(bp, a, p0, kb)
		for jq := range panels {
			j0 := jq * nr32
			nj := min(nr32, m-j0)
			b := bp[jq*kb*nr32 : (jq+1)*kb*nr32]
			// Rows of C up to the panel's last column (upper triangle).
			for ti := 0; ti < min(m, j0+nj); ti += mr {
				mi := min(mr, m-ti)
				q := ti / nr32
				ap := bp[q*kb*nr32+ti-q*nr32 : (q+1)*kb*nr32]
				if mi == mr && nj == nr32 && j0 >= ti+mr-1 {
					im.kern32(kb, ap, nr32, b, nr32, c.Data[ti*ldc+j0:], ldc)
					continue
				}
				clear(tmp[:])
				im.kern32(kb, ap, nr32, b, nr32, tmp[:], nr32)
				for i := range mi {
					ci := c.Data[(ti+i)*ldc+j0 : (ti+i)*ldc+j0+nj]
					for j := max(0, ti+i-j0); j < nj; j++ {
						ci[j] += tmp[i*nr32+j]
					}
				}
			}
		}
	}
}

// pack32 packs rows p0..p0+kb of a into panels of nr32 columns:
// dst[q*kb*nr32 + p*nr32 + j] = a[p0+p][q*nr32+j], zero past the last
// column.
func pack32(dst []float32, a blas32.General, p0, kb int) {
	m := a.Cols
	full := m / nr32
	for p := range kb {
		src := a.Data[(p0+p)*a.Stride : (p0+p)*a.Stride+m]
		for q := range full {
			copy(dst[q*kb*nr32+p*nr32:q*kb*nr32+p*nr32+nr32], src[q*nr32:q*nr32+nr32])
		}
		if rest := m - full*nr32; rest > 0 {
			d := dst[full*kb*nr32+p*nr32 : full*kb*nr32+p*nr32+nr32]
			copy(d, src[full*nr32:])
			clear(d[rest:])
		}
	}
}

// check32 panics if a does not hold an r x c row-major float32 matrix with
// leading dimension ld.
func check32(name string, a []float32, ld, r, c int) {
	if r < 0 || c < 0 {
		panic(fmt.Sprintf("gemm: negative dimension of %s: %d x %d", name, r, c))
	}
	if ld < max(1, c) {
		panic(fmt.Sprintf("gemm: leading dimension of %s %d < %d columns", name, ld, c))
	}
	if r > 0 && c > 0 && len(a) < (r-1)*ld+c {
		panic(fmt.Sprintf("gemm: %s has %d elements, need %d for %d x %d with stride %d", name, len(a), (r-1)*ld+c, r, c, ld))
	}
}

// AddShifted32 adds float64(src[i]) + shift[i], rounded to float64, into
// dst[i] for i < len(src) (on AVX2 sixteen elements per step). When out is
// not nil, it also stores that shifted value rounded to float32 in out[i];
// out may be src. It panics if dst, shift or a non-nil out is shorter than
// src.
func AddShifted32(dst []float64, src []float32, shift []float64, out []float32) {
	native.addShifted32To(dst, src, shift, out)
}

func (im impl) addShifted32To(dst []float64, src []float32, shift []float64, out []float32) {
	if len(dst) < len(src) || len(shift) < len(src) || out != nil && len(out) < len(src) {
		panic("gemm: AddShifted32: dst, shift or out shorter than src")
	}
	n := len(src) &^ 15
	if n > 0 {
		im.addShifted32(dst, src[:n], shift, out)
	}
	var rest []float32
	if out != nil {
		rest = out[n:]
	}
	addShifted32Go(dst[n:], src[n:], shift[n:], rest)
}

// addShifted32Go is the portable kernel of AddShifted32.
func addShifted32Go(dst []float64, src []float32, shift []float64, out []float32) {
	dst, shift = dst[:len(src)], shift[:len(src)]
	for i, v := range src {
		t := float64(v) + shift[i]
		dst[i] += t
		if out != nil {
			out[i] = float32(t)
		}
	}
}
