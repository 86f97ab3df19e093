package preprocess

import "math"

// Vector transforms: Channels.Apply evaluates log(1+|x|) and asinh(x/C) on
// whole blocks with these, 4 values at a time on amd64 CPUs with AVX2. They
// replay the exact operations of math.Log1p and math.Asinh (and math.Log's
// amd64 code) without fused multiply-adds, so the results are bit-identical
// to the scalar functions' (TestVectorTransforms checks every value class:
// 0 ulp); values of the rare branches the vector code does not replay are
// computed by the math functions, 4 at a time. BenchmarkTransforms measures
// both against the scalar loops.

// log1pAbsSlice sets x[i] = math.Log1p(math.Abs(x[i])) for every i.
func log1pAbsSlice(x []float64) {
	i := 0
	if hasVector {
		n4 := len(x) &^ 3
		for i < n4 {
			i += log1pAbsAVX2(x[i:n4])
			if i < n4 {
				log1pAbsScalar(x[i : i+4])
				i += 4
			}
		}
	}
	log1pAbsScalar(x[i:])
}

func log1pAbsScalar(x []float64) {
	for i, v := range x {
		x[i] = math.Log1p(math.Abs(v))
	}
}

// asinhSlice sets x[i] = math.Asinh(x[i] * inv) for every i.
func asinhSlice(x []float64, inv float64) {
	i := 0
	if hasVector {
		n4 := len(x) &^ 3
		for i < n4 {
			i += asinhAVX2(x[i:n4], inv)
			if i < n4 {
				asinhScalar(x[i:i+4], inv)
				i += 4
			}
		}
	}
	asinhScalar(x[i:], inv)
}

func asinhScalar(x []float64, inv float64) {
	for i, v := range x {
		x[i] = math.Asinh(v * inv)
	}
}
