package exact

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/lanczos"
)

// udicaPencil builds the eigenproblem of canonical UDICA as Fit does: n
// points in 5 dimensions from 10 domains (3 Gaussian classes, shifted per
// domain), the centered RBF kernel K (median heuristic), G = K / sqrt(n) and
// the Cholesky factor of D = K Q K + K + lambda I with lambda = 1e-3. The
// exact path's full-rank eigenproblem is the top of
// C = U^{-T} G G^T U^{-1}, D = U^T U.
func udicaPencil(n int, seed uint64) (*mat.Dense, *mat.Cholesky) {
	const dim, domains, classes, lambda = 5, 10, 3, 1e-3
	rng := rand.New(rand.NewPCG(seed, 17))
	centers := make([]float64, classes*dim)
	for i := range centers {
		centers[i] = 2 * rng.NormFloat64()
	}
	shift := make([]float64, domains*dim)
	for i := range shift {
		shift[i] = 0.5 * rng.NormFloat64()
	}
	x := mat.NewDense(n, dim, nil)
	dom := make([]int, n)
	for p := 0; p < n; p++ {
		i, c := p%domains, (p/domains)%classes
		dom[p] = i
		for j := 0; j < dim; j++ {
			x.Set(p, j, centers[c*dim+j]+shift[i*dim+j]+rng.NormFloat64())
		}
	}
	k := gram(kernel.RBF{Sigma: kernel.MedianSigma(x, kernel.DefaultMedianSample, seed)}, x)
	center(k)
	var kq, kqk mat.Dense
	kq.Mul(k, Q(dom, domains))
	kqk.Mul(&kq, k)
	d := mat.NewSymDense(n, nil)
	for p := 0; p < n; p++ {
		for q := p; q < n; q++ {
			v := 0.5*(kqk.At(p, q)+kqk.At(q, p)) + k.At(p, q)
			if p == q {
				v += lambda
			}
			d.SetSym(p, q, v)
		}
	}
	var chol mat.Cholesky
	if !gemm.CholeskyTo(&chol, d, runtime.GOMAXPROCS(0)) {
		panic("udicaPencil: D not positive definite")
	}
	k.Scale(1/math.Sqrt(float64(n)), k)
	return k, &chol
}

// explicitC forms C = U^{-T} G G^T U^{-1} densely (the reference).
func explicitC(g *mat.Dense, u blas64.Triangular) *mat.SymDense {
	w := mat.DenseCopyOf(g)
	blas64.Trsm(blas.Left, blas.Trans, 1, u, w.RawMatrix())
	var c mat.SymDense
	c.SymOuterK(1, w)
	return &c
}

// checkTop asserts that (vals, v) are the k largest eigenpairs of c: values
// against mat.EigenSym to tol relative to the largest, orthonormal columns,
// residuals ||C v - theta v|| <= tol ||C||.
func checkTop(t *testing.T, name string, c *mat.SymDense, vals []float64, v *mat.Dense, tol float64) {
	t.Helper()
	n := c.SymmetricDim()
	_, k := v.Dims()
	var es mat.EigenSym
	if !es.Factorize(c, false) {
		t.Fatal("EigenSym failed")
	}
	ref := es.Values(nil)
	normC := ref[n-1]
	if len(vals) != k {
		t.Fatalf("%s: %d values, want %d", name, len(vals), k)
	}
	for j := 0; j < k; j++ {
		if d := math.Abs(vals[j] - ref[n-1-j]); d > tol*normC {
			t.Errorf("%s: value %d = %.15g, dense %.15g (diff %.3g)", name, j, vals[j], ref[n-1-j], d)
		}
	}
	var vtv, cv mat.Dense
	vtv.Mul(v.T(), v)
	cv.Mul(c, v)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if d := math.Abs(vtv.At(i, j) - want); d > 1e-12*math.Sqrt(float64(n)) {
				t.Errorf("%s: (V^T V - I)[%d,%d] = %.3g", name, i, j, d)
			}
		}
		var r float64
		for p := 0; p < n; p++ {
			e := cv.At(p, i) - vals[i]*v.At(p, i)
			r += e * e
		}
		if r = math.Sqrt(r); r > tol*normC {
			t.Errorf("%s: residual %d = %.3g > %.3g", name, i, r, tol*normC)
		}
	}
}

// With a matvec budget too small to converge, the solver returns k
// unconverged pairs (status BudgetExceeded): the old acceptance rule
// (len(Values) == k) took them. lanczosTopWith must fall back to the dense
// path and return the right pairs; with the default budget it must not.
func TestLanczosTopFallback(t *testing.T) {
	const n, k = 160, 6
	g, chol := udicaPencil(n, 3)
	u := chol.RawU().(*mat.TriDense).RawTriangular()
	c := explicitC(g, u)
	s := lanczos.Settings{K: k, Tol: 1e-12, Seed: 1, MaxMatvecs: 12}

	// Precondition: the starved solve hands back k inaccurate values.
	res, err := lanczos.Sym(context.Background(), lanczos.Dense(c), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lanczos.BudgetExceeded || len(res.Values) != k || res.Converged == k {
		t.Fatalf("starved solve: status %v, %d values, %d converged; the test needs BudgetExceeded with %d values", res.Status, len(res.Values), res.Converged, k)
	}

	vals, v, dense, ok := lanczosTopWith(context.Background(), g, u, s)
	if !ok || !dense {
		t.Fatalf("starved solve: ok %v, dense fallback %v, want true, true", ok, dense)
	}
	checkTop(t, "fallback", c, vals, v, 1e-12)

	vals, v, dense, ok = lanczosTopWith(context.Background(), g, u, lanczos.Settings{K: k, Tol: 1e-12, Seed: 1})
	if !ok || dense {
		t.Fatalf("default budget: ok %v, dense fallback %v, want true, false", ok, dense)
	}
	checkTop(t, "Lanczos", c, vals, v, 1e-11)
}

// A numerator of rank 3 asked for k = 6: the solver reports
// ReachableSpaceExhausted with the 3 nonzero pairs; lanczosTop returns them,
// three zero values and an orthonormal completion, without the dense path.
func TestLanczosTopExhausted(t *testing.T) {
	const n, r, rank, k = 120, 80, 3, 6
	rng := rand.New(rand.NewPCG(9, 9))
	a := mat.NewDense(n, rank, nil)
	b := mat.NewDense(rank, r, nil)
	for i := range a.RawMatrix().Data {
		a.RawMatrix().Data[i] = rng.NormFloat64()
	}
	for i := range b.RawMatrix().Data {
		b.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var g mat.Dense
	g.Mul(a, b) // n x r, r > n/2 as on the exact path, rank 3
	x := mat.NewDense(n, n, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	d := mat.NewSymDense(n, nil)
	d.SymOuterK(1.0/n, x)
	for i := 0; i < n; i++ {
		d.SetSym(i, i, d.At(i, i)+1)
	}
	var chol mat.Cholesky
	if !chol.Factorize(d) {
		t.Fatal("D not PD")
	}
	u := chol.RawU().(*mat.TriDense).RawTriangular()
	vals, v, dense, ok := lanczosTopWith(context.Background(), &g, u, lanczos.Settings{K: k, Tol: 1e-12, Seed: 4})
	if !ok || dense {
		t.Fatalf("ok %v, dense fallback %v, want true, false", ok, dense)
	}
	for j := rank; j < k; j++ {
		if vals[j] != 0 {
			t.Errorf("value %d = %g, want 0 (filled)", j, vals[j])
		}
	}
	checkTop(t, "rank 3", explicitC(&g, u), vals, v, 1e-11)
}

// BenchmarkSymDefEigPaths measures the crossover behind LanczosMin: the k
// largest eigenpairs of the canonical UDICA pencil (udicaPencil) by the
// dense path (C formed, mat.EigenSym with vectors) and by lanczosTop
// (matrix-free, tolerance 1e-12), for n around LanczosMin.
func BenchmarkSymDefEigPaths(b *testing.B) {
	for _, k := range []int{5, 10} {
		for _, n := range []int{40, 60, 80, 100, 150, 200, 300, 450, 600} {
			g, chol := udicaPencil(n, 1)
			u := chol.RawU().(*mat.TriDense).RawTriangular()
			b.Run(fmt.Sprintf("k=%d/n=%d/dense", k, n), func(b *testing.B) {
				for b.Loop() {
					if _, _, ok := denseTop(g, u, k); !ok {
						b.Fatal("dense path failed")
					}
				}
			})
			b.Run(fmt.Sprintf("k=%d/n=%d/lanczos", k, n), func(b *testing.B) {
				for b.Loop() {
					if _, _, dense, ok := lanczosTopWith(context.Background(), g, u, lanczos.Settings{K: k, Tol: 1e-12, Seed: 1}); !ok || dense {
						b.Fatal("Lanczos path failed or fell back")
					}
				}
			})
		}
	}
}
