//go:build !amd64 || noasm

package gemm

const hasAVX2FMA = false

// native is the implementation used by the exported functions.
var native = goImpl
