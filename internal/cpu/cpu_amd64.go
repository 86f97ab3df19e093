//go:build amd64 && !noasm

package cpu

// AVX2FMA reports whether the CPU and OS support AVX2 and FMA (CPUID leaf 1
// ECX: FMA bit 12, OSXSAVE bit 27, AVX bit 28; XCR0 bits 1-2: the OS saves
// the YMM state; leaf 7 EBX bit 5: AVX2). It is a constant of the machine,
// computed once; do not modify it.
var AVX2FMA = func() bool {
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

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)
