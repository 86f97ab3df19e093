package gemm

import "math"

// The portable single-precision kernels.

// kern32Go is the portable float32 micro-kernel (see impl.kern32): the
// same arithmetic as the assembly kernel, every product-sum an exact
// fma32, so the two give the same bits.
func kern32Go(k int, a []float32, sa int, b []float32, sb int, c []float64, ldc int) {
	if k == 0 {
		return
	}
	_ = a[(k-1)*sa+mr-1]
	_ = b[(k-1)*sb+nr32-1]
	var acc [mr][nr32]float32
	for p := range k {
		ap := a[p*sa : p*sa+mr : p*sa+mr]
		bp := b[p*sb : p*sb+nr32 : p*sb+nr32]
		for i, av := range ap {
			row := &acc[i]
			for j, bv := range bp {
				row[j] = fma32(av, bv, row[j])
			}
		}
	}
	for i := range mr {
		ci := c[i*ldc : i*ldc+nr32 : i*ldc+nr32]
		for j, v := range acc[i] {
			ci[j] += float64(v)
		}
	}
}

// fma32 returns x*y + z rounded once to float32, as the FMA instruction
// computes it. The product of two float32 values is exact in float64; the
// sum is rounded to float64 with rounding to odd (the last bit set when
// the sum is inexact), which makes the final rounding to float32 that of
// the exact value (53 >= 2*24 + 2 bits; Boldo and Melquiond, "When double
// rounding is odd", 2005).
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y)
	zz := float64(z)
	s := p + zz
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: e = p + zz - s exactly.
	bp := s - zz
	e := (p - bp) + (zz - (s - bp))
	if e != 0 {
		if bits := math.Float64bits(s); bits&1 == 0 {
			// s is the even neighbour of the exact sum: take the odd one,
			// on the side of e.
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}
