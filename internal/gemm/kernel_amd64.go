//go:build amd64 && !noasm

package gemm

// hasAVX2FMA reports whether the CPU and OS support AVX2 and FMA (CPUID
// leaf 1 ECX: FMA bit 12, OSXSAVE bit 27, AVX bit 28; XCR0 bits 1-2: the OS
// saves the YMM state; leaf 7 EBX bit 5: AVX2). It is a constant of the
// machine, computed once (the same test as package kernel).
var hasAVX2FMA = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}()

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

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

// native is the implementation used by the exported functions.
var native = func() impl {
	if hasAVX2FMA {
		return impl{kern: kernAVX2, trsmKern: trsmKernAVX2}
	}
	// math.FMA is emulated in software without the FMA instruction.
	return impl{kern: kernGoMulAdd, trsmKern: trsmKernGoMulAdd}
}()
