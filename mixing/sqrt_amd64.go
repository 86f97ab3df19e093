//go:build amd64 && !noasm

package mixing

import (
	"math"

	"github.com/dicalab/dica/internal/cpu"
)

// hasAVX reports whether sqrtAVX can run (AVX2 with FMA implies AVX).
var hasAVX = cpu.AVX2FMA

// sqrtAVX stores in dst[i] the square root of src[i] for i < len(src)
// rounded down to a multiple of 4 (VSQRTPD: correctly rounded, as
// math.Sqrt).
//
//go:noescape
func sqrtAVX(dst, src []float64)

// sqrtSlice stores in dst[i] math.Sqrt(src[i]) for i < len(src), bit for
// bit; dst must be at least as long as src.
func sqrtSlice(dst, src []float64) {
	dst = dst[:len(src)]
	i := 0
	if hasAVX {
		i = len(src) &^ 3
		sqrtAVX(dst[:i], src[:i])
	}
	for ; i < len(src); i++ {
		dst[i] = math.Sqrt(src[i])
	}
}
