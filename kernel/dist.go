package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Modes of distBlock.
const (
	modeSqDist  = iota // dst = ||x - z||^2
	modeExp            // dst = exp(g ||x - z||^2)
	modeExpSqrt        // dst = exp(g ||x - z||)
)

// distBlock stores f(||x_i - z_j||^2) in dst (r x s) for the rows x_i of X and
// z_j of Z, with f selected by mode.
func distBlock(dst *mat.Dense, x, z mat.Matrix, g float64, mode int) {
	xd, zd := dense(x), dense(z)
	r, d := xd.Dims()
	s, dz := zd.Dims()
	if d != dz {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", d, dz))
	}
	reuse(dst, r, s)
	if r == 0 || s == 0 {
		return
	}
	// Z^T, d x s, contiguous: row k holds coordinate k of every z_j.
	zt := make([]float64, d*s)
	zr := zd.RawMatrix()
	for j := range s {
		zj := zr.Data[j*zr.Stride : j*zr.Stride+d]
		for k, v := range zj {
			zt[k*s+j] = v
		}
	}
	for i := range r {
		distRow(dst.RawRowView(i)[:s], xd.RawRowView(i)[:d], zt, g, mode)
	}
}

// distRow computes one row of distBlock.
func distRow(row, x, zt []float64, g float64, mode int) {
	s := len(row)
	clear(row)
	for k, a := range x {
		zk := zt[k*s : k*s+s]
		for j, v := range zk {
			t := a - v
			row[j] += t * t
		}
	}
	switch mode {
	case modeExp:
		expScale(row, g)
	case modeExpSqrt:
		for j, v := range row {
			row[j] = math.Sqrt(v)
		}
		expScale(row, g)
	}
}
