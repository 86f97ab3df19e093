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
