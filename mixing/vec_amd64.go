//go:build amd64 && !noasm

package mixing

// addAVX sets dst[i] += src[i] for i < len(src) rounded down to a multiple
// of 4.
//
//go:noescape
func addAVX(dst, src []float64)

// laneSumAVX stores in s[l] the sum of v[j] over j = l mod 4, j < len(v)
// rounded down to a multiple of 4, added in increasing j (one vector
// register of 4 partial sums).
//
//go:noescape
func laneSumAVX(s *[sumLanes]float64, v []float64)

// candidatesAVX stores in idx, in increasing order, the indices j < len(d2)
// rounded down to a multiple of 4 with d2[j] <= t, and returns their
// number. It writes 4 indices at a time, so it may write idx up to the
// number of indices it scanned.
//
//go:noescape
func candidatesAVX(idx []int32, d2 []float64, t float64) int

// candidateIndices stores in idx, in increasing order, the indices j with
// d2[j] <= t and returns their number; idx must be at least as long as
// d2.
func candidateIndices(idx []int32, d2 []float64, t float64) int {
	if !hasAVX {
		return candidateIndicesGo(idx, d2, t)
	}
	n4 := len(d2) &^ 3
	m := candidatesAVX(idx[:n4], d2[:n4], t)
	for j := n4; j < len(d2); j++ {
		idx[m] = int32(j)
		m += b2i(d2[j] <= t)
	}
	return m
}

// scaleAVX sets dst[i] = a src[i] for i < len(src) rounded down to a
// multiple of 4.
//
//go:noescape
func scaleAVX(dst, src []float64, a float64)

// scale sets dst[j] = a src[j]; dst must be at least as long as src.
func scale(dst, src []float64, a float64) {
	dst = dst[:len(src)]
	j := 0
	if hasAVX {
		j = len(src) &^ 3
		scaleAVX(dst[:j], src[:j], a)
	}
	for ; j < len(src); j++ {
		dst[j] = a * src[j]
	}
}

// addTo sets dst[j] += src[j]; dst must be at least as long as src.
func addTo(dst, src []float64) {
	dst = dst[:len(src)]
	j := 0
	if hasAVX {
		j = len(src) &^ 3
		addAVX(dst[:j], src[:j])
	}
	for ; j < len(src); j++ {
		dst[j] += src[j]
	}
}

// laneSum returns the sum of v in sumLanes partial sums: v[j] adds to
// partial sum j mod sumLanes for j < len(v) rounded down to a multiple of
// sumLanes, the rest to partial sum 0, and the result is (s0 + s1) +
// (s2 + s3), bit for bit as laneSumGo.
func laneSum(v []float64) float64 {
	if !hasAVX {
		return laneSumGo(v)
	}
	var s [sumLanes]float64
	j := len(v) &^ (sumLanes - 1)
	laneSumAVX(&s, v[:j])
	for ; j < len(v); j++ {
		s[0] += v[j]
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}
