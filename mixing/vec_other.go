//go:build !amd64 || noasm

package mixing

// addTo sets dst[j] += src[j]; dst must be at least as long as src.
func addTo(dst, src []float64) {
	dst = dst[:len(src)]
	for j, v := range src {
		dst[j] += v
	}
}

// scale sets dst[j] = a src[j]; dst must be at least as long as src.
func scale(dst, src []float64, a float64) {
	dst = dst[:len(src)]
	for j, v := range src {
		dst[j] = a * v
	}
}

// laneSum returns the sum of v in sumLanes partial sums (laneSumGo).
func laneSum(v []float64) float64 { return laneSumGo(v) }

// candidateIndices stores in idx, in increasing order, the indices j with
// d2[j] <= t and returns their number (candidateIndicesGo).
func candidateIndices(idx []int32, d2 []float64, t float64) int {
	return candidateIndicesGo(idx, d2, t)
}
