//go:build amd64 && !noasm

package gemm

import "github.com/dicalab/dica/internal/cpu"

// hasAVX2FMA reports whether the assembly kernels can run (see internal/cpu).
var hasAVX2FMA = cpu.AVX2FMA

// kernAVX2 is the AVX2+FMA micro-kernel with the contract of kernGo:
// C[i][j] = fma(alpha, acc[i][j], C[i][j]) for the 4 x 12 tile at c with
// row stride ldc, acc[i][j] = sum_{p<k} a[p*sa+i]*b[p*sb+j] accumulated
// with one FMA per term in increasing p. The caller guarantees that all
// the elements addressed lie inside a, b and c (no bounds checks).
//
//go:noescape
func kernAVX2(k int, a []float64, sa int, b []float64, sb int, c []float64, ldc int, alpha float64)

// trsmKernAVX2 is the AVX2+FMA triangular-solve kernel with the contract
// of trsmKernGo. The caller guarantees that x holds n rows of 32 values
// with stride ldx, rinv n values and l n rows of stride ldl.
//
//go:noescape
func trsmKernAVX2(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64)

// addAVX2 adds src into dst, len(src) rounded down to a multiple of 16
// elements (the caller does the rest). len(dst) >= len(src).
//
//go:noescape
func addAVX2(dst, src []float64)

// addShiftedAVX2 adds src + shift into dst (src + shift rounded first),
// len(src) rounded down to a multiple of 16 elements (the caller does the
// rest); with out non-nil it also stores src + shift in out (which may be
// src). len(dst), len(shift) (and len(out)) >= len(src).
//
//go:noescape
func addShiftedAVX2(dst, src, shift, out []float64)

// kern32AVX2 is the AVX2+FMA single-precision micro-kernel with the
// contract of kern32Go: C[i][j] += float64(acc[i][j]) for the 4 x 24 tile
// at c with row stride ldc, acc[i][j] = sum_{p<k} a[p*sa+i]*b[p*sb+j] in
// float32 with one FMA per term in increasing p. The caller guarantees
// that all the elements addressed lie inside a, b and c.
//
//go:noescape
func kern32AVX2(k int, a []float32, sa int, b []float32, sb int, c []float64, ldc int)

// addShifted32AVX2 adds float64(src) + shift into dst (the sum rounded
// first), len(src) rounded down to a multiple of 16 elements; with out
// non-nil it also stores the sum rounded to float32 in out.
// len(dst), len(shift) (and len(out)) >= len(src).
//
//go:noescape
func addShifted32AVX2(dst []float64, src []float32, shift []float64, out []float32)

// native is the implementation used by the exported functions.
var native = func() impl {
	if hasAVX2FMA {
		return impl{kern: kernAVX2, trsmKern: trsmKernAVX2, add: addAVX2, addShifted: addShiftedAVX2,
			kern32: kern32AVX2, addShifted32: addShifted32AVX2}
	}
	// math.FMA is emulated in software without the FMA instruction; the
	// float32 kernel emulates fma32 exactly with float64 arithmetic.
	return impl{kern: kernGoMulAdd, trsmKern: trsmKernGoMulAdd, add: addGo, addShifted: addShiftedGo,
		kern32: kern32Go, addShifted32: addShifted32Go}
}()
