package exact

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/lanczos"
)

// zeroTol is the relative threshold below which an eigenvalue counts as zero:
// gamma_j is positive when gamma_j > zeroTol * gamma_max.
const zeroTol = 1e-10

// symDefEig solves the symmetric-definite problem A b = gamma D b for the k
// largest eigenvalues, where A = G G^T (G n x r) and D = U^T U is given by
// its Cholesky factor. It returns the eigenvalues, largest first, and
// B (n x k) with B^T D B = I.
//
// With W = U^{-T} G, the problem is equivalent to the standard symmetric
// problem (W W^T) v = gamma v, b = U^{-1} v. When r <= n/2 the nonzero pairs
// come exactly from the thin r x r problem W^T W u = gamma u, v = W u /
// sqrt(gamma); the remaining eigenvalues are zero and their vectors are a
// seeded orthonormal completion. Otherwise, from LanczosMin points on, the
// k largest pairs of W W^T come from the thick-restart Lanczos solver of
// package lanczos applied matrix-free; below it W W^T is formed and
// decomposed densely (mat.EigenSym).
func symDefEig(ctx context.Context, g *mat.Dense, chol *mat.Cholesky, k int, seed uint64) ([]float64, *mat.Dense, bool) {
	n, r := g.Dims()
	u := chol.RawU().(*mat.TriDense).RawTriangular()

	var vals []float64
	var v *mat.Dense
	if 2*r > n && n >= LanczosMin && 4*k <= n {
		// Full-rank numerator (UDICA, KPCA): Lanczos on the operator
		// x -> U^{-T} G G^T U^{-1} x, four O(n^2) products per step and no
		// O(n^3) work beyond the Cholesky factorization.
		var ok bool
		vals, v, ok = lanczosTop(ctx, g, u, k, seed)
		if !ok {
			return nil, nil, false
		}
		blas64.Trsm(blas.Left, blas.NoTrans, 1, u, v.RawMatrix())
		return vals, v, true
	}
	w := mat.DenseCopyOf(g)
	// W = U^{-T} G.
	blas64.Trsm(blas.Left, blas.Trans, 1, u, w.RawMatrix())
	if 2*r <= n {
		var gram mat.SymDense
		gram.SymOuterK(1, w.T())
		var es mat.EigenSym
		if !es.Factorize(&gram, true) {
			return nil, nil, false
		}
		ev := es.Values(nil) // ascending
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		gmax := ev[len(ev)-1]
		v = mat.NewDense(n, k, nil)
		vals = make([]float64, k)
		m := 0
		col := make([]float64, n)
		for j := r - 1; j >= 0 && m < k; j-- {
			if !(ev[j] > zeroTol*gmax) || gmax <= 0 {
				break
			}
			// v = W u / sqrt(gamma) is a unit vector.
			blas64.Gemv(blas.NoTrans, 1/math.Sqrt(ev[j]), w.RawMatrix(),
				blas64.Vector{N: r, Inc: vecs.RawMatrix().Stride, Data: vecs.RawMatrix().Data[j:]},
				0, blas64.Vector{N: n, Inc: 1, Data: col})
			v.SetCol(m, col)
			vals[m] = ev[j]
			m++
		}
		complete(v, m, seed)
	} else {
		var c mat.SymDense
		c.SymOuterK(1, w)
		var es mat.EigenSym
		if !es.Factorize(&c, true) {
			return nil, nil, false
		}
		ev := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		v = mat.NewDense(n, k, nil)
		vals = make([]float64, k)
		for m := 0; m < k; m++ {
			j := n - 1 - m
			vals[m] = ev[j]
			for p := 0; p < n; p++ {
				v.Set(p, m, vecs.At(p, j))
			}
		}
	}
	// B = U^{-1} V.
	blas64.Trsm(blas.Left, blas.NoTrans, 1, u, v.RawMatrix())
	return vals, v, true
}

// complete fills columns m.. of v (whose first m columns are orthonormal)
// with seeded random unit vectors orthogonal to all previous columns
// (classical Gram-Schmidt, two passes).
func complete(v *mat.Dense, m int, seed uint64) {
	n, k := v.Dims()
	if m >= k {
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0xc0a1e7e))
	x := make([]float64, n)
	for j := m; j < k; j++ {
		for {
			for p := range x {
				x[p] = rng.NormFloat64()
			}
			for pass := 0; pass < 2; pass++ {
				for i := 0; i < j; i++ {
					var d float64
					for p := range x {
						d += v.At(p, i) * x[p]
					}
					for p := range x {
						x[p] -= d * v.At(p, i)
					}
				}
			}
			var s float64
			for _, a := range x {
				s += a * a
			}
			if s = math.Sqrt(s); s > 1e-8 {
				for p := range x {
					x[p] /= s
				}
				v.SetCol(j, x)
				break
			}
		}
	}
}

// sortByMagnitude returns the indices of vals ordered by decreasing
// magnitude (ties by index, for determinism).
func sortByMagnitude(vals []complex128) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return cmplxAbs(vals[idx[a]]) > cmplxAbs(vals[idx[b]])
	})
	return idx
}

func cmplxAbs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }

// LanczosMin is the size from which the full-rank eigenproblems of the exact
// path (UDICA, KPCA) use the Lanczos solver (lanczosTop) instead of the
// dense eigendecomposition of C = U^{-T} G G^T U^{-1} (C formed,
// mat.EigenSym with vectors): it lies above the size where the two paths
// cost the same for k <= 10, with a margin of about 2, as
// BenchmarkSymDefEigPaths measures on the canonical UDICA pencil.
const LanczosMin = 100

// lanczosTop returns the k largest eigenpairs of C = U^{-T} G G^T U^{-1}:
// the values, largest first, and orthonormal vectors in the columns of an
// n x k matrix. It runs the thick-restart Lanczos solver of package lanczos
// matrix-free (tolerance 1e-12, default multiplicity-safe settings) and
// accepts its result only when the status is lanczos.Converged, or
// lanczos.ReachableSpaceExhausted with every returned pair converged: C is
// positive semidefinite and the solver then returns all of its nonzero
// eigenvalues, so the missing pairs are zero and are filled as symDefEig
// fills the thin path (value 0, a seeded orthonormal completion). Any other
// outcome (matvec budget exhausted, a failed explicit residual check, an
// error) falls back to the dense path: C formed and decomposed by
// mat.EigenSym.
func lanczosTop(ctx context.Context, g *mat.Dense, u blas64.Triangular, k int, seed uint64) ([]float64, *mat.Dense, bool) {
	vals, v, _, ok := lanczosTopWith(ctx, g, u, lanczos.Settings{K: k, Tol: 1e-12, Seed: seed})
	return vals, v, ok
}

// lanczosTopWith is lanczosTop with the solver settings given (s.K pairs,
// s.Seed also seeds the completion); tests use it to force the fallback
// with a small s.MaxMatvecs. It also reports whether the dense fallback was
// taken.
func lanczosTopWith(ctx context.Context, g *mat.Dense, u blas64.Triangular, s lanczos.Settings) (vals []float64, v *mat.Dense, dense, ok bool) {
	n, r := g.Dims()
	k := s.K
	gr := g.RawMatrix()
	t := make([]float64, n)
	sv := make([]float64, r)
	op := lanczos.Func(n, func(dst, x []float64) {
		copy(t, x)
		blas64.Trsv(blas.NoTrans, u, blas64.Vector{N: n, Inc: 1, Data: t})
		blas64.Gemv(blas.Trans, 1, gr, blas64.Vector{N: n, Inc: 1, Data: t}, 0, blas64.Vector{N: r, Inc: 1, Data: sv})
		blas64.Gemv(blas.NoTrans, 1, gr, blas64.Vector{N: r, Inc: 1, Data: sv}, 0, blas64.Vector{N: n, Inc: 1, Data: dst})
		blas64.Trsv(blas.Trans, u, blas64.Vector{N: n, Inc: 1, Data: dst})
	})
	res, err := lanczos.Sym(ctx, op, s)
	if ctx.Err() != nil {
		return nil, nil, false, false // stopped: no dense fallback
	}
	if err == nil {
		m := len(res.Values)
		switch {
		case res.Status == lanczos.Converged && m == k && res.Converged == k:
			v = mat.NewDense(n, k, nil)
			v.Copy(res.Vectors)
			return res.Values, v, false, true
		case res.Status == lanczos.ReachableSpaceExhausted && m < k && res.Converged == m:
			v = mat.NewDense(n, k, nil)
			if m > 0 {
				v.Slice(0, n, 0, m).(*mat.Dense).Copy(res.Vectors)
			}
			vals = make([]float64, k)
			copy(vals, res.Values)
			complete(v, m, s.Seed)
			return vals, v, false, true
		}
	}
	vals, v, ok = denseTop(g, u, k)
	return vals, v, true, ok
}

// denseTop returns the k largest eigenpairs of C = U^{-T} G G^T U^{-1}
// from the dense eigendecomposition of C (mat.EigenSym), as symDefEig does
// below LanczosMin.
func denseTop(g *mat.Dense, u blas64.Triangular, k int) ([]float64, *mat.Dense, bool) {
	n, _ := g.Dims()
	w := mat.DenseCopyOf(g)
	blas64.Trsm(blas.Left, blas.Trans, 1, u, w.RawMatrix())
	var c mat.SymDense
	c.SymOuterK(1, w)
	var es mat.EigenSym
	if !es.Factorize(&c, true) {
		return nil, nil, false
	}
	ev := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	v := mat.NewDense(n, k, nil)
	vals := make([]float64, k)
	for m := 0; m < k; m++ {
		vals[m] = ev[n-1-m]
		v.Slice(0, n, m, m+1).(*mat.Dense).Copy(vecs.Slice(0, n, n-1-m, n-m))
	}
	return vals, v, true
}
