package gemm

import "math"

//go:generate go run gen_muladd.go

// The portable kernels. kern_muladd.go holds their copies with x*y + z in
// place of math.FMA(x, y, z), generated from this file by gen_muladd.go.

// kernGo is the portable micro-kernel (see impl.kern). It walks the tile
// in 2 x 4 sub-blocks with the accumulators in local variables (eight
// independent FMA chains); the order of the terms of each element is that
// of the assembly kernel.
func kernGo(k int, a []float64, sa int, b []float64, sb int, c []float64, ldc int, alpha float64) {
	if k == 0 {
		return
	}
	_ = a[(k-1)*sa+mr-1]
	_ = b[(k-1)*sb+nr-1]
	for i := 0; i < mr; i += 2 {
		for j := 0; j < nr; j += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float64
			pa, pb := i, j
			for p := 0; p < k; p++ {
				a0, a1 := a[pa], a[pa+1]
				bp := b[pb : pb+4 : pb+4]
				b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
				c00 = math.FMA(a0, b0, c00)
				c01 = math.FMA(a0, b1, c01)
				c02 = math.FMA(a0, b2, c02)
				c03 = math.FMA(a0, b3, c03)
				c10 = math.FMA(a1, b0, c10)
				c11 = math.FMA(a1, b1, c11)
				c12 = math.FMA(a1, b2, c12)
				c13 = math.FMA(a1, b3, c13)
				pa += sa
				pb += sb
			}
			r0 := c[i*ldc+j : i*ldc+j+4 : i*ldc+j+4]
			r0[0] = math.FMA(alpha, c00, r0[0])
			r0[1] = math.FMA(alpha, c01, r0[1])
			r0[2] = math.FMA(alpha, c02, r0[2])
			r0[3] = math.FMA(alpha, c03, r0[3])
			r1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4 : (i+1)*ldc+j+4]
			r1[0] = math.FMA(alpha, c10, r1[0])
			r1[1] = math.FMA(alpha, c11, r1[1])
			r1[2] = math.FMA(alpha, c12, r1[2])
			r1[3] = math.FMA(alpha, c13, r1[3])
		}
	}
}

// trsmKernGo is the portable trsm kernel (see impl.trsmKern).
func trsmKernGo(n int, l []float64, ldl int, x []float64, ldx int, rinv []float64) {
	for j := 0; j < n; j++ {
		xj := x[j*ldx : j*ldx+trsmRows]
		lj := l[j*ldl : j*ldl+j]
		for p, v := range lj {
			xp := x[p*ldx : p*ldx+trsmRows]
			for i := range xj {
				xj[i] = math.FMA(-v, xp[i], xj[i])
			}
		}
		for i := range xj {
			xj[i] *= rinv[j]
		}
	}
}
