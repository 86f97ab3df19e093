//go:build !amd64 || noasm

package svm

// hasAVX2 is false: the assembly kernels are amd64 only (or disabled by
// the noasm build tag).
const hasAVX2 = false

func signedFirstAVX2(z, dz []float64, y []int, k int, br, cand []int) (nb, nc int) { return 0, 0 }

func stepAVX2(z, dz []float64, mt float64, in []bool, ch []int) (nc, active int) { return 0, 0 }

func marginsAVX2(dz, cols []float64, terms []uint64) {}

func predict4AVX2(x []float64, stride, d int, w, b []float64, pred []int) (nan int) { return 0 }

func addRowsAVX2(v, rows, sy []float64) {}

func sumCompactAVX2(bt, bab []float64, lo, hi, t float64) (k int, e1, e2, g1, g2 float64) {
	return 0, 0, 0, 0, 0
}

func listAVX2(idx []int, z, dz []float64, c2, t float64, bt, bab []float64) (e1, e2 float64) {
	return 0, 0
}

func splitCandAVX2(cand, br []int, z, dz []float64, hi float64) (nb, k int) { return 0, 0 }
