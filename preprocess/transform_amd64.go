//go:build amd64 && !noasm

package preprocess

import "github.com/dicalab/dica/internal/cpu"

// hasVector reports whether the assembly transforms can run (they need
// AVX2; see internal/cpu).
var hasVector = cpu.AVX2FMA

//go:noescape
func log1pAbsAVX2(x []float64) int

//go:noescape
func asinhAVX2(x []float64, inv float64) int
