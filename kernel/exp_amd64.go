//go:build amd64 && !noasm

package kernel

import "github.com/dicalab/dica/internal/cpu"

// hasAVX2FMA reports whether the assembly kernels can run (see internal/cpu).
var hasAVX2FMA = cpu.AVX2FMA

//go:noescape
func expAVX2(dst, src []float64) int

//go:noescape
func expScaleAVX2(v []float64, gamma float64) int

//go:noescape
func distRowAVX2(row, x, zt []float64, stride int, gamma float64, mode int) int

//go:noescape
func exp32AVX2(dst, src []float32) int

//go:noescape
func distRow32AVX2(row, x, zt []float32, stride int, gamma float32, mode int) int
