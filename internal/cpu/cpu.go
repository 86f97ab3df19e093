// Package cpu reports the instruction-set extensions the project's assembly
// kernels need (kernel, rff, svm, mixing, preprocess and internal/gemm use
// AVX2, some with FMA, with pure-Go fallbacks elsewhere). It reads them from golang.org/x/sys/cpu, which also
// checks that the operating system saves the AVX registers.
package cpu
