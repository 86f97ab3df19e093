package krr

// addGram adds A'A to the upper triangle of the p x p row-major c, where A
// holds rows row-major with the given stride. Rows are taken four at a time
// so that each element of c is loaded and stored once per four rows; on
// narrow matrices (p up to a few hundred) this is about twice as fast as
// blas64.Syrk, which makes one rank-1 update per row.
func addGram(c []float64, p int, a []float64, rows, stride int) {
	i := 0
	for ; i+4 <= rows; i += 4 {
		r0 := a[i*stride : i*stride+p]
		r1 := a[(i+1)*stride : (i+1)*stride+p]
		r2 := a[(i+2)*stride : (i+2)*stride+p]
		r3 := a[(i+3)*stride : (i+3)*stride+p]
		for j := range p {
			v0, v1, v2, v3 := r0[j], r1[j], r2[j], r3[j]
			s0 := r0[j:]
			s1, s2, s3 := r1[j:len(r1)], r2[j:len(r2)], r3[j:len(r3)]
			cr := c[j*p+j : (j+1)*p]
			s1, s2, s3, cr = s1[:len(s0)], s2[:len(s0)], s3[:len(s0)], cr[:len(s0)]
			for k, u := range s0 {
				cr[k] += v0*u + v1*s1[k] + v2*s2[k] + v3*s3[k]
			}
		}
	}
	for ; i < rows; i++ {
		r := a[i*stride : i*stride+p]
		for j, v := range r {
			cr := c[j*p+j : (j+1)*p]
			for k, u := range r[j:] {
				cr[k] += v * u
			}
		}
	}
}
