package kernel

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// scratchPool holds the transposed-Z buffers of distBlock, so that a
// streaming pass calling it once per chunk of rows does not allocate.
var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

// Modes of distBlock.
const (
	modeSqDist  = iota // dst = ||x - z||^2
	modeExp            // dst = exp(g ||x - z||^2)
	modeExpSqrt        // dst = exp(g ||x - z||)
	modeExpL1          // dst = exp(g ||x - z||_1)
)

// Points is a fixed set of points prepared once for repeated block
// evaluation against them, such as the landmarks of a Nystrom map: their
// coordinates are stored transposed (and, for the vector code, padded to a
// multiple of 4 points), the layout the fused distance kernels read, so
// that BlockPoints does not transpose them again at every call as Block
// does. A Points is immutable and safe for concurrent use.
type Points struct {
	z        *mat.Dense
	zt       []float64 // d x sp
	s, sp, d int
	zt32     []float32 // d x sp32: the coordinates rounded to float32
	sp32     int       // s rounded up to a multiple of 8
}

// NewPoints prepares the rows of z (NewPoints keeps its own copy).
func NewPoints(z mat.Matrix) *Points {
	zd := dense(z)
	s, d := zd.Dims()
	p := &Points{z: mat.DenseCopyOf(zd), s: s, sp: s, d: d}
	if hasAVX2FMA {
		p.sp = (s + 3) &^ 3
	}
	p.zt = make([]float64, d*p.sp)
	transpose(p.zt, zd, p.sp)
	p.sp32 = (s + 7) &^ 7
	p.zt32 = make([]float32, d*p.sp32)
	for k := range d {
		for j := range s {
			p.zt32[k*p.sp32+j] = float32(p.zt[k*p.sp+j])
		}
	}
	return p
}

// Len returns the number of points.
func (p *Points) Len() int { return p.s }

// Dense returns the points, one per row (the copy NewPoints made: it must
// not be modified).
func (p *Points) Dense() *mat.Dense { return p.z }

// Prepared is implemented by the kernels (RBF and Laplacian) whose block
// evaluation can use Points.
type Prepared interface {
	Kernel
	// BlockPoints stores K(X, P) in dst (r x p.Len()), exactly as
	// Block(dst, x, p.Dense()) does.
	BlockPoints(dst *mat.Dense, x mat.Matrix, p *Points)
}

// transpose stores Z^T in zt (d rows of stride sp), with zeros in the
// padding columns s..sp-1.
func transpose(zt []float64, zd *mat.Dense, sp int) {
	s, d := zd.Dims()
	for k := range d {
		clear(zt[k*sp+s : (k+1)*sp])
	}
	zr := zd.RawMatrix()
	for j := range s {
		zj := zr.Data[j*zr.Stride : j*zr.Stride+d]
		for k, v := range zj {
			zt[k*sp+j] = v
		}
	}
}

// distBlock stores f(||x_i - z_j||^2) (or f(||x_i - z_j||_1)) in dst (r x s)
// for the rows x_i of X and z_j of Z, with f selected by mode.
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
	// Z^T, d x sp, contiguous: row k holds coordinate k of every z_j. The
	// vector code works on blocks of 4 columns, so with it the columns are
	// padded (with zeros) to a multiple of 4 and each row is computed into a
	// buffer when s is not a multiple of 4.
	sp := s
	if hasAVX2FMA {
		sp = (s + 3) &^ 3
	}
	scratch := scratchPool.Get().(*[]float64)
	defer scratchPool.Put(scratch)
	if cap(*scratch) < d*sp+sp {
		*scratch = make([]float64, d*sp+sp)
	}
	zt := (*scratch)[:d*sp]
	transpose(zt, zd, sp)
	distRows(dst, xd, zt, s, sp, (*scratch)[d*sp:d*sp+sp], g, mode)
}

// distBlockPoints is distBlock against prepared points.
func distBlockPoints(dst *mat.Dense, x mat.Matrix, p *Points, g float64, mode int) {
	xd := dense(x)
	r, d := xd.Dims()
	if d != p.d {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", d, p.d))
	}
	reuse(dst, r, p.s)
	if r == 0 || p.s == 0 {
		return
	}
	var buf []float64
	if p.sp != p.s {
		scratch := scratchPool.Get().(*[]float64)
		defer scratchPool.Put(scratch)
		if cap(*scratch) < p.sp {
			*scratch = make([]float64, p.sp)
		}
		buf = (*scratch)[:p.sp]
	}
	distRows(dst, xd, p.zt, p.s, p.sp, buf, g, mode)
}

// distRows computes the rows of distBlock from Z^T (zt, d rows of stride
// sp, s points); buf (sp values) holds a row when sp != s.
func distRows(dst, xd *mat.Dense, zt []float64, s, sp int, buf []float64, g float64, mode int) {
	r, d := xd.Dims()
	if d == 0 {
		// Zero-dimensional points are all at distance 0.
		v := 0.0
		if mode != modeSqDist {
			v = 1
		}
		for i := range r {
			row := dst.RawRowView(i)[:s]
			for j := range row {
				row[j] = v
			}
		}
		return
	}
	if sp == s {
		buf = nil
	}
	for i := range r {
		row := dst.RawRowView(i)[:s]
		xi := xd.RawRowView(i)[:d]
		if !hasAVX2FMA {
			distRow(row, xi, zt, sp, g, mode)
			continue
		}
		out := row
		if buf != nil {
			out = buf
		}
		j := 0
		if mode == modeExp && distRowAVX2(out[:sp], xi, zt, sp, g, modeSqDist) == sp {
			// Two steps over the row, which stays in the core's L1
			// cache: the squared distances, summed as the fused kernel
			// sums them, then exp(g s) block after block, whose long
			// dependency chains overlap better than between the
			// distance loops of the fused kernel (BenchmarkBlockPoints).
			// A block EXP4 cannot handle ends the fast path; the fused
			// loop computes the rest of the row from that block, as it
			// would have done from the start.
			j = expScaleAVX2(out[:sp], g)
		}
		for j < sp {
			j += distRowAVX2(out[j:], xi, zt[j:], sp, g, mode)
			if j < sp {
				// A block with a subnormal, infinite or NaN result.
				distRow(out[j:j+4], xi, zt[j:], sp, g, mode)
				j += 4
			}
		}
		if buf != nil {
			copy(row, buf[:s])
		}
	}
}

// distRow computes len(row) entries of a row of distBlock: row[j] is
// f(sum_k (x_k - zt[k*stride + j])^2) (or f(sum_k |x_k - zt[k*stride + j]|)).
func distRow(row, x, zt []float64, stride int, g float64, mode int) {
	s := len(row)
	clear(row)
	if mode == modeExpL1 {
		for k, a := range x {
			zk := zt[k*stride : k*stride+s]
			for j, v := range zk {
				row[j] += math.Abs(a - v)
			}
		}
		expScale(row, g)
		return
	}
	for k, a := range x {
		zk := zt[k*stride : k*stride+s]
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
