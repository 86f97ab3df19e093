package gemm

import "fmt"

// SyrkPad returns the row stride of the padded operands of SyrkPadded for
// n columns: n rounded up to a multiple of 12.
func SyrkPad(n int) int { return (n + nr - 1) / nr * nr }

// SyrkPaddedLen returns the length of the padded matrix s of SyrkPadded
// for n columns: n rounded up to a multiple of 4 rows of SyrkPad(n) values.
func SyrkPaddedLen(n int) int { return (n + mr - 1) / mr * mr * SyrkPad(n) }

// SyrkPadded is Syrk on operands already laid out as the micro-kernel
// reads them, for callers that gather their rows themselves and would
// otherwise have Syrk copy them again. With ld = SyrkPad(n), f holds r
// rows of ld values of which the first n are a row of A (the other ld-n
// are read but do not affect the result, whatever their values), and s
// holds SyrkPaddedLen(n) values of which s[i*ld+j], i <= j < n, is the
// upper triangle of C. It adds A^T A to that triangle:
//
//	C[i][j] += sum_{k<r} A[k][i] * A[k][j], 0 <= i <= j < n,
//
// with the arithmetic of Syrk, so that the bits are those of Syrk on the
// same A and C. The other elements of s are scratch: they are overwritten
// with unspecified values. It panics if f or s is too short.
func SyrkPadded(s, f []float64, r, n int) {
	native.syrkPadded(s, f, r, n)
}

func (im impl) syrkPadded(s, f []float64, r, n int) {
	if r < 0 || n < 0 {
		panic(fmt.Sprintf("gemm: SyrkPadded: negative dimension r = %d, n = %d", r, n))
	}
	ld := SyrkPad(n)
	if len(f) < r*ld {
		panic(fmt.Sprintf("gemm: SyrkPadded: len(f) = %d, want at least %d rows of %d", len(f), r, ld))
	}
	if len(s) < SyrkPaddedLen(n) {
		panic(fmt.Sprintf("gemm: SyrkPadded: len(s) = %d, want at least %d", len(s), SyrkPaddedLen(n)))
	}
	if n == 0 || r == 0 {
		return
	}
	// The blocks and tiles of syrkSmall, on f and s in place of its
	// padded copies.
	for p0 := 0; p0 < r; p0 += kc {
		kb := min(kc, r-p0)
		fp := f[p0*ld:]
		for j0 := 0; j0 < n; j0 += nr {
			for i0 := 0; i0 < min(n, j0+nr); i0 += mr {
				im.kern(kb, fp[i0:], ld, fp[j0:], ld, s[i0*ld+j0:], ld, 1)
			}
		}
	}
}
