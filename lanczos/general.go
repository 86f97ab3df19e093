package lanczos

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// GenSymChol solves the generalized symmetric-definite problem
// A x = lambda B x for a dense symmetric positive definite B by the Cholesky
// transform (ARPACK's advice, Spectra's preferred mode): with B = L L^T,
// Lanczos runs on C = L^{-1} A L^{-T} and x = L^{-T} z. The returned vectors
// are B-orthonormal, X^T B X = I; Residuals are ||A x - lambda B x||.
// One matvec is one application of A plus two triangular solves.
func GenSymChol(ctx context.Context, a Operator, b mat.Symmetric, s Settings) (*Result, error) {
	if err := checkOp(a, "A"); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("lanczos: nil matrix B")
	}
	n := a.Dim()
	if b.SymmetricDim() != n {
		return nil, fmt.Errorf("lanczos: B is %d x %d, A has dimension %d", b.SymmetricDim(), b.SymmetricDim(), n)
	}
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		return nil, errors.New("lanczos: B is not positive definite (Cholesky failed)")
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := lt.RawTriangular()
	bl := blas64.Implementation()
	tmp := make([]float64, n)
	op := func(w, _, v []float64) {
		copy(tmp, v)
		bl.Dtrsv(l.Uplo, blas.Trans, l.Diag, n, l.Data, l.Stride, tmp, 1)
		a.Apply(w, tmp)
		bl.Dtrsv(l.Uplo, blas.NoTrans, l.Diag, n, l.Data, l.Stride, w, 1)
	}
	// x = L^{-T} z; A x - lambda B x = L (C z - lambda z).
	return solveBack(ctx, n, s, op,
		func(x []float64) { bl.Dtrsv(l.Uplo, blas.Trans, l.Diag, n, l.Data, l.Stride, x, 1) },
		func(r []float64) { bl.Dtrmv(l.Uplo, blas.NoTrans, l.Diag, n, l.Data, l.Stride, r, 1) })
}

// solveBack solves the standard problem C z = lambda z of the operator op
// and maps the result back with transformBack.
func solveBack(ctx context.Context, n int, s Settings, op opFunc, toX, toRes func([]float64)) (*Result, error) {
	e, err := newEngine(ctx, n, s, op, nil)
	if err != nil {
		return nil, err
	}
	res, err := e.solve()
	if err != nil {
		return nil, err
	}
	e.transformBack(res, toX, toRes)
	return res, nil
}

// transformBack maps the returned vectors z of a transformed standard
// problem C z = lambda z to x = toX(z) and recomputes the residuals as
// ||toRes(C z - lambda z)||, using the stored products C z.
func (e *engine) transformBack(res *Result, toX, toRes func([]float64)) {
	n := e.n
	x := make([]float64, n)
	for c, i := range e.sel {
		z, cz := e.row(e.v, i), e.row(e.w, i)
		lam := res.Values[c]
		for l := range x {
			if e.neg {
				x[l] = -cz[l] - lam*z[l]
			} else {
				x[l] = cz[l] - lam*z[l]
			}
		}
		toRes(x)
		res.Residuals[c] = blas64.Implementation().Dnrm2(n, x, 1)
		copy(x, z)
		toX(x)
		for l := 0; l < n; l++ {
			res.Vectors.Set(l, c, x[l])
		}
	}
}

// GenSymBInv solves A x = lambda B x by Lanczos in the B inner product on the
// B-self-adjoint operator B^{-1} A, given B and B^{-1} as operators (for
// DICA's B = lambda I + low rank, B^{-1} comes from the Woodbury identity).
// Each step applies A and B^{-1} once and B once (to keep the basis exactly
// B-normalized); Matvecs counts applications of A. The returned vectors are
// B-orthonormal; Residuals are ||A x - lambda B x||.
func GenSymBInv(ctx context.Context, a, b, binv Operator, s Settings) (*Result, error) {
	for _, o := range []struct {
		op   Operator
		name string
	}{{a, "A"}, {b, "B"}, {binv, "B^-1"}} {
		if err := checkOp(o.op, o.name); err != nil {
			return nil, err
		}
	}
	n := a.Dim()
	if b.Dim() != n || binv.Dim() != n {
		return nil, fmt.Errorf("lanczos: dimensions A %d, B %d, B^-1 %d differ", n, b.Dim(), binv.Dim())
	}
	op := func(w, aw, v []float64) {
		a.Apply(aw, v)
		binv.Apply(w, aw)
	}
	e, err := newEngine(ctx, n, s, op, b)
	if err != nil {
		return nil, err
	}
	return e.solve()
}

// GenSymLowRank solves A x = lambda B x for B = alpha I + V V^T (alpha > 0,
// V n x r, nil for B = alpha I) in closed form: with the thin
// eigendecomposition V V^T = U diag(s) U^T (from the r x r Gram matrix),
// B^{-1/2} = alpha^{-1/2} I + U diag((alpha+s)^{-1/2} - alpha^{-1/2}) U^T,
// Lanczos runs on C = B^{-1/2} A B^{-1/2} and x = B^{-1/2} z. The returned
// vectors are B-orthonormal; Residuals are ||A x - lambda B x||. One matvec
// is one application of A plus O(n r) work.
func GenSymLowRank(ctx context.Context, a Operator, alpha float64, v *mat.Dense, s Settings) (*Result, error) {
	if err := checkOp(a, "A"); err != nil {
		return nil, err
	}
	n := a.Dim()
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("lanczos: alpha = %v, want finite > 0", alpha)
	}
	u, sv, err := thinEig(v, n)
	if err != nil {
		return nil, err
	}
	half := func(pow float64) Operator { // alpha^pow I + U diag((alpha+s)^pow - alpha^pow) U^T
		if u == nil {
			c := math.Pow(alpha, pow)
			return Func(n, func(dst, x []float64) {
				for i := range x {
					dst[i] = c * x[i]
				}
			})
		}
		d := make([]float64, len(sv))
		for i, x := range sv {
			d[i] = math.Pow(alpha+x, pow) - math.Pow(alpha, pow)
		}
		return LowRank{Alpha: math.Pow(alpha, pow), U: u, S: d}
	}
	bmh := half(-0.5)
	bh := half(0.5)
	tmp := make([]float64, n)
	tmp2 := make([]float64, n)
	op := func(w, _, x []float64) {
		bmh.Apply(tmp, x)
		a.Apply(tmp2, tmp)
		bmh.Apply(w, tmp2)
	}
	return solveBack(ctx, n, s, op,
		func(x []float64) { bmh.Apply(tmp, x); copy(x, tmp) },
		func(r []float64) { bh.Apply(tmp, r); copy(r, tmp) })
}

// thinEig returns the thin eigendecomposition V V^T = U diag(s) U^T of the
// n x r matrix V through the r x r Gram matrix V^T V = P diag(s) P^T:
// U = V P diag(s)^{-1/2} for the eigenvalues s above r eps max(s). A nil V
// gives a nil U.
func thinEig(v *mat.Dense, n int) (*mat.Dense, []float64, error) {
	if v == nil {
		return nil, nil, nil
	}
	vr, vc := v.Dims()
	if vr != n {
		return nil, nil, fmt.Errorf("lanczos: V has %d rows, A has dimension %d", vr, n)
	}
	for i := 0; i < vr; i++ {
		for j := 0; j < vc; j++ {
			if x := v.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil, fmt.Errorf("lanczos: V[%d,%d] = %v", i, j, x)
			}
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, v.T())
	var es mat.EigenSym
	if !es.Factorize(&g, true) {
		return nil, nil, errors.New("lanczos: eigendecomposition of V^T V failed")
	}
	vals := es.Values(nil)
	var p mat.Dense
	es.VectorsTo(&p)
	smax := vals[len(vals)-1]
	var cols []int
	for j, x := range vals {
		if x > float64(vc)*eps*smax && x > 0 {
			cols = append(cols, j)
		}
	}
	if len(cols) == 0 {
		return nil, nil, nil
	}
	// U = V P_j / sqrt(s_j) for the nonzero s_j.
	pp := mat.NewDense(vc, len(cols), nil)
	var sv []float64
	for c, j := range cols {
		for i := 0; i < vc; i++ {
			pp.Set(i, c, p.At(i, j)/math.Sqrt(vals[j]))
		}
		sv = append(sv, vals[j])
	}
	u := mat.NewDense(n, len(cols), nil)
	u.Mul(v, pp)
	return u, sv, nil
}
