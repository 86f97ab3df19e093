//go:build !amd64 || noasm

package mixing

import "math"

// sqrtSlice stores in dst[i] math.Sqrt(src[i]) for i < len(src); dst must
// be at least as long as src.
func sqrtSlice(dst, src []float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = math.Sqrt(x)
	}
}
