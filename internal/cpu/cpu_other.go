//go:build !amd64 || noasm

package cpu

// AVX2FMA is false: the assembly kernels are amd64 only (or disabled by the
// noasm build tag).
var AVX2FMA = false
