//go:build amd64 && !noasm

package rff

import "github.com/dicalab/dica/internal/cpu"

// hasAVX2FMA reports whether the assembly kernels can run (see internal/cpu).
var hasAVX2FMA = cpu.AVX2FMA

//go:noescape
func sincosAVX2(sin, cos, x []float64, scale float64) int

//go:noescape
func projAVX2(proj, x, wt []float64, stride int)
