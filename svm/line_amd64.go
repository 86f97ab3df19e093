//go:build amd64 && !noasm

package svm

import "github.com/dicalab/dica/internal/cpu"

// hasAVX2 reports whether the assembly kernels of the package can run.
var hasAVX2 = cpu.AVX2FMA

// signedFirstAVX2 is the loop of signedFirst over the rows
// 0..len(z)&^3 - 1, four at a time; it returns the counts nb and nc.
// dz and y must be as long as z, br and cand at least as long.
//
//go:noescape
func signedFirstAVX2(z, dz []float64, y []int, k int, br, cand []int) (nb, nc int)

// stepAVX2 is the loop of stepMemberships over the rows
// 0..len(z)&^3 - 1, four at a time; it returns the number of rows listed
// in ch and the number of active rows. dz and in must be as long as z, ch
// at least as long.
//
//go:noescape
func stepAVX2(z, dz []float64, mt float64, in []bool, ch []int) (nc, active int)

// marginsAVX2 is the loop of marginsTerms over the rows
// 0..len(dz)&^3 - 1, four at a time.
//
//go:noescape
func marginsAVX2(dz, cols []float64, terms []uint64)

// predict4AVX2 is Predict's loop for four classes (the weights w
// interleaved by feature, the intercepts b) over the len(pred) rows of x,
// d values each and stride apart, four classes in one register; rows with
// a NaN decision value get -1, and it returns their number.
//
//go:noescape
func predict4AVX2(x []float64, stride, d int, w, b []float64, pred []int) (nan int)

// addRowsAVX2 adds sy_i row_i to v for each of the len(sy) rows of 12
// values in rows, in order. v must hold 12 values, rows 12 len(sy).
//
//go:noescape
func addRowsAVX2(v, rows, sy []float64)

// sumCompactAVX2 is sumCompactGo with the pairs (g1, g2) and (e1, e2)
// each in one register. len(bab) must be 2 len(bt).
//
//go:noescape
func sumCompactAVX2(bt, bab []float64, lo, hi, t float64) (k int, e1, e2, g1, g2 float64)

// listAVX2 is listGo with (e1, e2) in one register. The indices of idx
// must lie in z and dz, bt and bab hold len(idx) and 2 len(idx) values.
//
//go:noescape
func listAVX2(idx []int, z, dz []float64, c2, t float64, bt, bab []float64) (e1, e2 float64)

// splitCandAVX2 is splitCandGo. The indices of cand must lie in z and
// dz; br must be as long as cand.
//
//go:noescape
func splitCandAVX2(cand, br []int, z, dz []float64, hi float64) (nb, k int)
