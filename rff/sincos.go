package rff

import "math"

// sincosScaled sets sin[i] = scale sin(x[i]) and cos[i] = scale cos(x[i]).
// With AVX2 and FMA it works 4 lanes at a time (sincosAVX2; its accuracy is
// stated in the package documentation); blocks with |x| > 2^20 or NaN and
// the tail use math.Sincos.
func sincosScaled(sin, cos, x []float64, scale float64) {
	sin, cos = sin[:len(x)], cos[:len(x)]
	i := 0
	if hasAVX2FMA {
		n4 := len(x) &^ 3
		for i < n4 {
			i += sincosAVX2(sin[i:n4], cos[i:n4], x[i:n4], scale)
			if i < n4 {
				// A block with |x| > 2^20 or NaN.
				sincosScalar(sin[i:i+4], cos[i:i+4], x[i:i+4], scale)
				i += 4
			}
		}
	}
	sincosScalar(sin[i:], cos[i:], x[i:], scale)
}

func sincosScalar(sin, cos, x []float64, scale float64) {
	for i, v := range x {
		s, c := math.Sincos(v)
		sin[i], cos[i] = scale*s, scale*c
	}
}
