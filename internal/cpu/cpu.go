// Package cpu reports the instruction-set extensions the project's assembly
// kernels need (kernel, rff and internal/gemm use AVX2 with FMA, with pure-Go
// fallbacks elsewhere). It reads them from golang.org/x/sys/cpu, which also
// checks that the operating system saves the AVX registers.
package cpu
