package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// gemmRBF is the textbook block, the benchmark's reference point:
// ||x||^2 + ||z||^2 - 2 X Z^T by one gonum GEMM, then math.Exp.
func gemmRBF(dst *mat.Dense, x, z *mat.Dense, sigma float64) {
	r, _ := x.Dims()
	s, _ := z.Dims()
	out := dst.RawMatrix()
	blas64.Gemm(blas.NoTrans, blas.Trans, -2, x.RawMatrix(), z.RawMatrix(), 0, out)
	zn := make([]float64, s)
	for j := range zn {
		zn[j] = sqNorm(z.RawRowView(j))
	}
	g := -1 / (2 * sigma * sigma)
	for i := range r {
		xn := sqNorm(x.RawRowView(i))
		row := out.Data[i*out.Stride : i*out.Stride+s]
		for j, v := range row {
			row[j] = math.Exp(g * max(0, v+xn+zn[j]))
		}
	}
}

// BenchmarkRBFBlock measures one 1024 x 500 RBF block on 8-dimensional
// points (the shape of a Nystrom pass over cytometry data with m = 500;
// 256 x 200, the chunks of the eval grid's passes at m = 200, and other
// shapes),
// reporting nanoseconds per kernel entry: Block, BlockPoints against
// prepared points (what a Nystrom map calls), its single-precision
// BlockPoints32, and the references.
func BenchmarkRBFBlock(b *testing.B) {
	for _, sh := range []struct {
		name    string
		r, s, d int
	}{{"d=8,m=500", 1024, 500, 8}, {"d=8,m=200", 256, 200, 8}, {"d=30,m=500", 1024, 500, 30}, {"d=8,m=2000", 256, 2000, 8}} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := randPoints(rng, sh.r, sh.d, 1)
		z := randPoints(rng, sh.s, sh.d, 1)
		dst := mat.NewDense(sh.r, sh.s, nil)
		k := RBF{Sigma: 1}
		per := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sh.r*sh.s), "ns/entry")
		}
		b.Run(sh.name+"/Block", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				k.Block(dst, x, z)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		p := NewPoints(z)
		b.Run(sh.name+"/BlockPoints", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				k.BlockPoints(dst, x, p)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		dst32 := blas32.General{Rows: sh.r, Cols: sh.s, Stride: sh.s, Data: make([]float32, sh.r*sh.s)}
		b.Run(sh.name+"/BlockPoints32", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				k.BlockPoints32(dst32, x, p)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		b.Run(sh.name+"/Laplacian32", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				Laplacian{Sigma: 1}.BlockPoints32(dst32, x, p)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		b.Run(sh.name+"/gemm+math.Exp", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				gemmRBF(dst, x, z, 1)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		b.Run(sh.name+"/SqDistBlock", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				SqDistBlock(dst, x, z)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
		b.Run(sh.name+"/Laplacian", func(b *testing.B) {
			c := cputime.StartThread()
			for b.Loop() {
				Laplacian{Sigma: 1}.Block(dst, x, z)
			}
			per(b)
			c.Report(b, sh.r*sh.s, "entry")
		})
	}
}
