package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// randSlice returns n uniform values in [-1, 1).
func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*rng.Float64() - 1
	}
	return s
}

func absSlice(s []float64) []float64 {
	t := make([]float64, len(s))
	for i, v := range s {
		t[i] = math.Abs(v)
	}
	return t
}

func general(r, c, stride int, data []float64) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: stride, Data: data}
}

func upperSym(n, stride int, data []float64) blas64.Symmetric {
	return blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: stride, Data: data}
}

func lowerSym(n, stride int, data []float64) blas64.Symmetric {
	return blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: stride, Data: data}
}

func tr(x bool) blas.Transpose {
	if x {
		return blas.Trans
	}
	return blas.NoTrans
}

// transposed returns the n x n matrix a (leading dimension ld) transposed,
// with the same leading dimension.
func transposed(a []float64, n, ld int) []float64 {
	t := make([]float64, len(a))
	for i := range t {
		t[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t[j*ld+i] = a[i*ld+j]
		}
	}
	return t
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestKernelMulAdd checks the kernels for amd64 CPUs without FMA against
// the reference ones (equal up to rounding).
func TestKernelMulAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const k, ldc = 100, 13
	a, b := randSlice(rng, k*mr), randSlice(rng, k*nr)
	c0 := randSlice(rng, (mr-1)*ldc+nr)
	c1 := append([]float64(nil), c0...)
	c2 := append([]float64(nil), c0...)
	kernGo(k, a, mr, b, nr, c1, ldc, -2)
	kernGoMulAdd(k, a, mr, b, nr, c2, ldc, -2)
	for i := range c1 {
		if math.Abs(c1[i]-c2[i]) > 1e-12*(1+math.Abs(c1[i])) {
			t.Fatalf("kernGoMulAdd: c[%d] = %v, want %v", i, c2[i], c1[i])
		}
	}
	const n, ldx = 20, trsmRows
	l := randSlice(rng, n*n)
	rinv := make([]float64, n)
	for j := range rinv {
		rinv[j] = 1 / (2 + math.Abs(l[j*n+j]))
	}
	x0 := randSlice(rng, n*ldx)
	x1 := append([]float64(nil), x0...)
	x2 := append([]float64(nil), x0...)
	trsmKernGo(n, l, n, x1, ldx, rinv)
	trsmKernGoMulAdd(n, l, n, x2, ldx, rinv)
	for i := range x1 {
		if math.Abs(x1[i]-x2[i]) > 1e-12*(1+math.Abs(x1[i])) {
			t.Fatalf("trsmKernGoMulAdd: x[%d] = %v, want %v", i, x2[i], x1[i])
		}
	}
}

func TestKernelAsmMatchesGo(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2+FMA: only the Go kernel is used")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 2, 3, 7, 256} {
		a := randSlice(rng, k*mr)
		b := randSlice(rng, k*nr)
		const ldc = 15
		c0 := randSlice(rng, (mr-1)*ldc+nr)
		c1 := append([]float64(nil), c0...)
		c2 := append([]float64(nil), c0...)
		native.kern(k, a, mr, b, nr, c1, ldc, -0.75)
		kernGo(k, a, mr, b, nr, c2, ldc, -0.75)
		if !sameBits(c1, c2) {
			t.Errorf("k=%d: assembly and Go kernels differ", k)
		}
		// Strided operands: every other group of mr (nr) values.
		if k > 0 {
			as := make([]float64, 2*k*mr)
			bs := make([]float64, (2*k-1)*nr+nr)
			for p := 0; p < k; p++ {
				copy(as[2*p*mr:], a[p*mr:(p+1)*mr])
				copy(bs[2*p*nr:], b[p*nr:(p+1)*nr])
			}
			c3 := append([]float64(nil), c0...)
			native.kern(k, as, 2*mr, bs, 2*nr, c3, ldc, -0.75)
			if !sameBits(c1, c3) {
				t.Errorf("k=%d: strided kernel differs from packed", k)
			}
		}
		// Reference with plain sums.
		for i := 0; i < mr; i++ {
			for j := 0; j < nr; j++ {
				var s, sa float64
				for p := 0; p < k; p++ {
					s += a[p*mr+i] * b[p*nr+j]
					sa += math.Abs(a[p*mr+i] * b[p*nr+j])
				}
				want := c0[i*ldc+j] - 0.75*s
				if d := math.Abs(c1[i*ldc+j] - want); d > 1e-14*(sa+1) {
					t.Errorf("k=%d: C[%d][%d] = %v, want %v", k, i, j, c1[i*ldc+j], want)
				}
			}
		}
		// Elements between the tile rows are untouched.
		for i := 0; i < mr-1; i++ {
			for j := nr; j < ldc; j++ {
				if c1[i*ldc+j] != c0[i*ldc+j] {
					t.Errorf("k=%d: kernel wrote outside the tile at (%d,%d)", k, i, j)
				}
			}
		}
	}
}

func TestSyrk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ r, m, padF, padC int }{
		{1, 1, 0, 0}, {3, 1, 1, 0}, {1, 3, 0, 2}, {7, 13, 3, 1}, {13, 7, 0, 0},
		{64, 64, 0, 0}, {65, 65, 1, 3}, {300, 127, 0, 5}, {257, 25, 2, 0},
		{513, 100, 0, 0}, {100, 500, 0, 0}, {600, 513, 7, 1}, {40, smallSyrk, 0, 0},
		{40, smallSyrk + 1, 1, 0},
	} {
		r, m := tc.r, tc.m
		ldf, ldc := m+tc.padF, m+tc.padC
		f := randSlice(rng, r*ldf)
		c0 := randSlice(rng, m*ldc)
		// Poison the strictly lower triangle: it must stay untouched.
		for i := 0; i < m; i++ {
			for j := 0; j < i; j++ {
				c0[i*ldc+j] = math.NaN()
			}
		}
		c := append([]float64(nil), c0...)
		Syrk(blas.Trans, general(r, m, ldf, f), upperSym(m, ldc, c))

		ref := append([]float64(nil), c0...)
		blas64.Syrk(blas.Trans, 1, general(r, m, ldf, f), 1,
			blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: ldc, Data: ref})
		bound := make([]float64, m*ldc)
		blas64.Syrk(blas.Trans, 1, general(r, m, ldf, absSlice(f)), 0,
			blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: ldc, Data: bound})
		tol := 1e-13 * math.Sqrt(float64(r))
		bad := 0
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				got, want := c[i*ldc+j], ref[i*ldc+j]
				if j < i {
					if !math.IsNaN(got) {
						t.Fatalf("r=%d m=%d: lower C[%d][%d] written", r, m, i, j)
					}
					continue
				}
				if math.Abs(got-want) > tol*(bound[i*ldc+j]+math.Abs(c0[i*ldc+j])) {
					bad++
					if bad < 4 {
						t.Errorf("r=%d m=%d: C[%d][%d] = %v, want %v", r, m, i, j, got, want)
					}
				}
			}
		}
		// Padding columns of C untouched.
		for i := 0; i < m; i++ {
			for j := m; j < ldc; j++ {
				if c[i*ldc+j] != c0[i*ldc+j] {
					t.Fatalf("r=%d m=%d: padding C[%d][%d] written", r, m, i, j)
				}
			}
		}
		// The portable kernel gives the same bits, and so do both paths
		// (padded rows for small m, packed panels for large m).
		cg := append([]float64(nil), c0...)
		goImpl.syrk(blas.Trans, general(r, m, ldf, f), upperSym(m, ldc, cg))
		if !sameBitsNaN(c, cg) {
			t.Errorf("r=%d m=%d: Go and native kernels differ", r, m)
		}
		cs := append([]float64(nil), c0...)
		native.syrkSmall(cs, ldc, f, ldf, r, m)
		cp := append([]float64(nil), c0...)
		native.syrkPacked(cp, ldc, f, ldf, r, m)
		if !sameBitsNaN(cs, c) || !sameBitsNaN(cp, c) {
			t.Errorf("r=%d m=%d: small and packed paths differ", r, m)
		}
	}
}

// sameBitsNaN is sameBits treating all NaNs as equal.
func sameBitsNaN(a, b []float64) bool {
	for i := range a {
		if math.IsNaN(a[i]) && math.IsNaN(b[i]) {
			continue
		}
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func TestGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ m, n, k int }{
		{1, 1, 1}, {3, 7, 13}, {13, 3, 1}, {64, 65, 127}, {127, 13, 300},
		{200, 97, 513}, {5, 300, 40},
	} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				m, n, k := tc.m, tc.n, tc.k
				ar, ac := m, k
				if tA {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+1, bc+2, n+3
				a := randSlice(rng, ar*lda)
				b := randSlice(rng, br*ldb)
				c0 := randSlice(rng, m*ldc)
				const alpha = -1.5
				ref := append([]float64(nil), c0...)
				blas64.Gemm(tr(tA), tr(tB), alpha, general(ar, ac, lda, a), general(br, bc, ldb, b), 1, general(m, n, ldc, ref))
				bound := make([]float64, m*ldc)
				blas64.Gemm(tr(tA), tr(tB), math.Abs(alpha), general(ar, ac, lda, absSlice(a)), general(br, bc, ldb, absSlice(b)), 0, general(m, n, ldc, bound))
				var first []float64
				for _, workers := range []int{1, 2, 3} {
					c := append([]float64(nil), c0...)
					Gemm(tr(tA), tr(tB), alpha, general(ar, ac, lda, a), general(br, bc, ldb, b), general(m, n, ldc, c), workers)
					name := fmt.Sprintf("%dx%dx%d tA=%v tB=%v workers=%d", m, n, k, tA, tB, workers)
					// op(B) packed once, used twice: each product the
					// bits of Gemm's.
					pb := PackB(tr(tB), general(br, bc, ldb, b))
					for range 2 {
						cp := append([]float64(nil), c0...)
						GemmPacked(tr(tA), alpha, general(ar, ac, lda, a), pb, general(m, n, ldc, cp), workers)
						if !sameBits(cp, c) {
							t.Errorf("%s: GemmPacked differs from Gemm", name)
						}
					}
					if workers == 1 {
						first = c
						tol := 1e-13 * math.Sqrt(float64(k))
						for i := range c {
							if math.Abs(c[i]-ref[i]) > tol*(bound[i]+math.Abs(c0[i])) {
								t.Fatalf("%s: C[%d] = %v, want %v", name, i, c[i], ref[i])
							}
						}
						cg := append([]float64(nil), c0...)
						goImpl.gemm(tr(tA), tr(tB), alpha, general(ar, ac, lda, a), general(br, bc, ldb, b), general(m, n, ldc, cg), 1)
						if !sameBits(c, cg) {
							t.Errorf("%s: Go and native kernels differ", name)
						}
					} else if !sameBits(c, first) {
						t.Errorf("%s: differs from workers=1", name)
					}
				}
			}
		}
	}
}

// spd returns a well-conditioned random n x n SPD matrix G G^T / n + I
// with leading dimension ld, and the matrix as a gonum SymDense.
func spd(rng *rand.Rand, n, ld int) ([]float64, *mat.SymDense) {
	g := randSlice(rng, n*n)
	a := make([]float64, n*ld)
	blas64.Syrk(blas.NoTrans, 1/float64(n), general(n, n, n, g), 0,
		blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: ld, Data: a})
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		a[i*ld+i]++
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, a[i*ld+j])
		}
	}
	return a, sym
}

func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 7, 13, 64, 65, 127, 193, 385, 513} {
		ld := n + 2
		a0, sym := spd(rng, n, ld)
		// The strictly upper triangle must be neither read nor written.
		for i := 0; i < n; i++ {
			for j := i + 1; j < ld; j++ {
				a0[i*ld+j] = math.NaN()
			}
		}
		var chol mat.Cholesky
		if !chol.Factorize(sym) {
			t.Fatalf("n=%d: gonum says not PD", n)
		}
		var lref mat.TriDense
		chol.LTo(&lref)
		var first []float64
		for _, workers := range []int{1, 2, 3} {
			a := append([]float64(nil), a0...)
			if _, ok := Potrf(lowerSym(n, ld, a), workers); !ok {
				t.Fatalf("n=%d workers=%d: Cholesky failed", n, workers)
			}
			if workers > 1 {
				if !sameBitsNaN(a, first) {
					t.Errorf("n=%d: workers=%d differs from workers=1", n, workers)
				}
				continue
			}
			first = a
			tol := 1e-13 * math.Sqrt(float64(n))
			for i := 0; i < n; i++ {
				for j := 0; j < ld; j++ {
					got := a[i*ld+j]
					if j > i {
						if !math.IsNaN(got) {
							t.Fatalf("n=%d: upper A[%d][%d] written", n, i, j)
						}
						continue
					}
					want := lref.At(i, j)
					if math.Abs(got-want) > tol*math.Sqrt(sym.At(i, i)) {
						t.Fatalf("n=%d: L[%d][%d] = %v, want %v", n, i, j, got, want)
					}
				}
			}
		}
		if n <= 200 {
			ag := append([]float64(nil), a0...)
			goImpl.cholesky(lowerSym(n, ld, ag), 2)
			if !sameBitsNaN(ag, first) {
				t.Errorf("n=%d: Go and native kernels differ", n)
			}
		}
	}
}

// TestPotrfUpper checks that the upper layout A = U^T U gives U = L^T bit
// for bit, for any number of workers, without touching the strictly lower
// triangle.
func TestPotrfUpper(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{1, 5, 33, 64, 193, 400} {
		ld := n + 3
		a0, _ := spd(rng, n, ld)
		l := append([]float64(nil), a0...)
		if _, ok := Potrf(lowerSym(n, ld, l), 1); !ok {
			t.Fatalf("n=%d: lower factorization failed", n)
		}
		want := transposed(l, n, ld)
		for _, im := range []impl{native, goImpl} {
			for _, workers := range []int{1, 2, 3} {
				u := transposed(a0, n, ld)
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						u[i*ld+j] = math.NaN() // must be neither read nor written
					}
				}
				ut, ok := im.cholesky(upperSym(n, ld, u), workers)
				if !ok || ut.Uplo != blas.Upper || ut.N != n || &ut.Data[0] != &u[0] {
					t.Fatalf("n=%d workers=%d: upper factorization failed or returned another matrix", n, workers)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < ld; j++ {
						got := u[i*ld+j]
						if j < i || j >= n {
							if !math.IsNaN(got) && j < n {
								t.Fatalf("n=%d: lower A[%d][%d] written", n, i, j)
							}
							continue
						}
						if math.Float64bits(got) != math.Float64bits(want[i*ld+j]) {
							t.Fatalf("n=%d workers=%d: U[%d][%d] = %v, want L[%d][%d] = %v", n, workers, i, j, got, j, i, want[i*ld+j])
						}
					}
				}
			}
		}
	}
}

// symOnly hides the raw storage of a SymDense.
type symOnly struct{ mat.Symmetric }

// TestCholeskyTo checks the mat.Cholesky against gonum's factorization and
// solve, its factor against Potrf bit for bit, and the reset on failure.
func TestCholeskyTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 7, 200, 450} {
		_, sym := spd(rng, n, n)
		var want mat.Cholesky
		if !want.Factorize(sym) {
			t.Fatalf("n=%d: gonum says not PD", n)
		}
		u := make([]float64, n*n)
		raw := sym.RawSymmetric()
		copy(u, raw.Data)
		if _, ok := Potrf(upperSym(n, n, u), 1); !ok {
			t.Fatalf("n=%d: Potrf failed", n)
		}
		for _, a := range []mat.Symmetric{sym, symOnly{sym}} {
			var chol mat.Cholesky
			if !CholeskyTo(&chol, a, 2) {
				t.Fatalf("n=%d: CholeskyTo failed", n)
			}
			got := chol.RawU().(*mat.TriDense).RawTriangular()
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					if math.Float64bits(got.Data[i*got.Stride+j]) != math.Float64bits(u[i*n+j]) {
						t.Fatalf("n=%d %T: U[%d][%d] = %v, Potrf gives %v", n, a, i, j, got.Data[i*got.Stride+j], u[i*n+j])
					}
					if d := math.Abs(got.Data[i*got.Stride+j] - want.RawU().At(i, j)); d > 1e-12 {
						t.Fatalf("n=%d: U[%d][%d] differs from gonum's by %g", n, i, j, d)
					}
				}
			}
			if rel := math.Abs(chol.LogDet()-want.LogDet()) / math.Abs(want.LogDet()+1); rel > 1e-12 {
				t.Errorf("n=%d: log det %v, gonum %v", n, chol.LogDet(), want.LogDet())
			}
			if c, w := chol.Cond(), want.Cond(); !(c > 0) || c > 10*w || w > 10*c {
				t.Errorf("n=%d: condition estimate %v, gonum's %v", n, c, w)
			}
			b := mat.NewDense(n, 3, randSlice(rng, 3*n))
			var x, xw mat.Dense
			if err := chol.SolveTo(&x, b); err != nil {
				t.Fatalf("n=%d: SolveTo: %v", n, err)
			}
			if err := want.SolveTo(&xw, b); err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(&x, &xw, 1e-12) {
				t.Errorf("n=%d: solutions differ from gonum's", n)
			}
		}
	}
	a := mat.NewSymDense(3, []float64{1, 2, 0, 2, 1, 0, 0, 0, 1})
	var chol mat.Cholesky
	if !CholeskyTo(&chol, mat.NewSymDense(1, []float64{4}), 1) || chol.IsEmpty() {
		t.Fatal("1 x 1: CholeskyTo failed")
	}
	if CholeskyTo(&chol, a, 1) {
		t.Error("indefinite matrix: CholeskyTo reported positive definite")
	}
	if !chol.IsEmpty() {
		t.Error("indefinite matrix: the Cholesky is not reset")
	}
}

func TestCholeskyNotPD(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 450
	a0, _ := spd(rng, n, n)
	for _, tc := range []struct {
		name string
		edit func(a []float64)
	}{
		{"negative pivot in third block", func(a []float64) { a[400*n+400] = -1 }},
		{"indefinite 2x2 at start", func(a []float64) { a[1*n+0] = 10 }},
		{"zero matrix", func(a []float64) { clear(a) }},
		{"NaN", func(a []float64) { a[300*n+7] = math.NaN() }},
		{"indefinite 2x2 minor in third block", func(a []float64) {
			a[420*n+419] = 2 * math.Sqrt(a[419*n+419]*a[420*n+420])
		}},
	} {
		a := append([]float64(nil), a0...)
		tc.edit(a)
		if _, ok := Potrf(lowerSym(n, n, a), 2); ok {
			t.Errorf("%s: Cholesky reported positive definite", tc.name)
		}
	}
	a := append([]float64(nil), a0...)
	if _, ok := Potrf(lowerSym(n, n, a), 2); !ok {
		t.Errorf("unedited matrix: Cholesky reported not positive definite")
	}
}

// lowerFactor returns a well-conditioned n x n lower-triangular factor
// (Cholesky factor of spd) with leading dimension ld, and NaN in the
// strictly upper triangle, which the solves must not read.
func lowerFactor(rng *rand.Rand, n, ld int) []float64 {
	a, _ := spd(rng, n, ld)
	if _, ok := Potrf(lowerSym(n, ld, a), 1); !ok {
		panic("not PD")
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < ld; j++ {
			a[i*ld+j] = math.NaN()
		}
	}
	return a
}

func TestTrsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct{ n, w int }{
		{1, 1}, {3, 7}, {13, 1}, {32, 32}, {33, 5}, {65, 64}, {127, 13}, {300, 65}, {513, 30}, {40, 97},
	} {
		n, w := tc.n, tc.w
		ldl := n + 1
		l := lowerFactor(rng, n, ldl)
		lg := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: ldl, Data: l}
		// The same triangle stored as U = L^T (NaN in the strictly lower
		// part, which must not be read).
		ug := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: ldl, Data: transposed(l, n, ldl)}
		for _, v := range []struct {
			name   string
			side   blas.Side
			trans  blas.Transpose
			utrans blas.Transpose // the same op(A) from ug
			rows   int
			cols   int
		}{
			{"LowerLeft", blas.Left, blas.NoTrans, blas.Trans, n, w},
			{"LowerTransLeft", blas.Left, blas.Trans, blas.NoTrans, n, w},
			{"LowerTransRight", blas.Right, blas.Trans, blas.NoTrans, w, n},
		} {
			ldb := v.cols + 2
			b0 := randSlice(rng, v.rows*ldb)
			ref := append([]float64(nil), b0...)
			blas64.Trsm(v.side, v.trans, 1, lg, general(v.rows, v.cols, ldb, ref))
			var maxRef float64
			for _, x := range ref {
				maxRef = max(maxRef, math.Abs(x))
			}
			solve := func(im impl, a blas64.Triangular, trans blas.Transpose, workers int) []float64 {
				b := append([]float64(nil), b0...)
				im.trsm(v.side, trans, a, general(v.rows, v.cols, ldb, b), workers)
				return b
			}
			var first []float64
			for _, workers := range []int{1, 2, 3} {
				b := solve(native, lg, v.trans, workers)
				name := fmt.Sprintf("%s n=%d w=%d workers=%d", v.name, n, w, workers)
				if !sameBits(solve(native, ug, v.utrans, workers), b) {
					t.Errorf("%s: the upper triangle U = L^T gives other bits", name)
				}
				if workers > 1 {
					if !sameBits(b, first) {
						t.Errorf("%s: differs from workers=1", name)
					}
					continue
				}
				first = b
				if !sameBits(b, solve(goImpl, lg, v.trans, 1)) {
					t.Errorf("%s: Go and native kernels differ", name)
				}
				tol := 1e-13 * math.Sqrt(float64(n)) * maxRef
				for i := range b {
					if math.Abs(b[i]-ref[i]) > tol {
						t.Fatalf("%s: X[%d] = %v, want %v", name, i, b[i], ref[i])
					}
				}
			}
		}
	}
}

func TestTrsmKernAsmMatchesGo(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2+FMA: only the Go kernel is used")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 2, 7, trsmBase} {
		const ldl, ldx = trsmBase + 3, trsmRows + 5
		l := randSlice(rng, n*ldl)
		rinv := make([]float64, n)
		for j := range rinv {
			rinv[j] = 1 / (1 + math.Abs(l[j*ldl+j]))
		}
		x0 := randSlice(rng, (n-1)*ldx+trsmRows)
		x1 := append([]float64(nil), x0...)
		x2 := append([]float64(nil), x0...)
		native.trsmKern(n, l, ldl, x1, ldx, rinv)
		trsmKernGo(n, l, ldl, x2, ldx, rinv)
		if !sameBits(x1, x2) {
			t.Errorf("n=%d: assembly and Go trsm kernels differ", n)
		}
		// Against plain substitution, column by column.
		for i := 0; i < trsmRows; i++ {
			x := make([]float64, n)
			for j := 0; j < n; j++ {
				s := x0[j*ldx+i]
				for p := 0; p < j; p++ {
					s -= l[j*ldl+p] * x[p]
				}
				x[j] = s * rinv[j]
				if got := x1[j*ldx+i]; math.Abs(got-x[j]) > 1e-12*(1+math.Abs(x[j])) {
					t.Fatalf("n=%d: x[%d][%d] = %v, want %v", n, j, i, got, x[j])
				}
			}
		}
		// The gaps between the rows of x are untouched.
		for j := 0; j < n-1; j++ {
			for i := trsmRows; i < ldx; i++ {
				if x1[j*ldx+i] != x0[j*ldx+i] {
					t.Fatalf("n=%d: kernel wrote outside x at (%d,%d)", n, j, i)
				}
			}
		}
	}
}

// lowerTri10 is the 10 x 10 lower triangle of s.
func lowerTri10(s []float64) blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: 10, Stride: 10, Data: s}
}

func TestPanics(t *testing.T) {
	s := make([]float64, 100)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Syrk ldf < m", func() { Syrk(blas.Trans, general(2, 10, 5, s), upperSym(10, 10, s)) }},
		{"Syrk C too short", func() { Syrk(blas.Trans, general(2, 10, 10, s), upperSym(10, 10, s[:50])) }},
		{"Syrk negative r", func() { Syrk(blas.Trans, general(-1, 10, 10, s), upperSym(10, 10, s)) }},
		{"Syrk C of another order", func() { Syrk(blas.Trans, general(2, 10, 10, s), upperSym(9, 10, s)) }},
		{"Syrk NoTrans", func() { Syrk(blas.NoTrans, general(2, 10, 10, s), upperSym(2, 10, s)) }},
		{"Syrk lower", func() { Syrk(blas.Trans, general(2, 10, 10, s), lowerSym(10, 10, s)) }},
		{"Gemm B too short", func() {
			Gemm(blas.NoTrans, blas.Trans, 1, general(3, 30, 30, s), general(4, 30, 30, s[:50]), general(3, 4, 4, s), 1)
		}},
		{"Gemm ldc < n", func() {
			Gemm(blas.NoTrans, blas.NoTrans, 1, general(2, 2, 2, s), general(2, 5, 5, s), general(2, 5, 4, s), 1)
		}},
		{"Gemm inner dimensions", func() {
			Gemm(blas.NoTrans, blas.NoTrans, 1, general(2, 3, 3, s), general(2, 5, 5, s), general(2, 5, 5, s), 1)
		}},
		{"Gemm bad transpose", func() {
			Gemm(blas.Transpose(0), blas.NoTrans, 1, general(2, 2, 2, s), general(2, 2, 2, s), general(2, 2, 2, s), 1)
		}},
		{"Potrf lda < n", func() { Potrf(lowerSym(10, 5, s), 1) }},
		{"Potrf short", func() { Potrf(lowerSym(10, 11, s), 1) }},
		{"Potrf bad uplo", func() { Potrf(blas64.Symmetric{Uplo: blas.All, N: 2, Stride: 2, Data: s}, 1) }},
		{"Trsm B short", func() { Trsm(blas.Left, blas.NoTrans, lowerTri10(s), general(10, 20, 20, s), 1) }},
		{"Trsm B rows", func() { Trsm(blas.Left, blas.NoTrans, lowerTri10(s), general(9, 2, 2, s), 1) }},
		{"Trsm unit diagonal", func() {
			Trsm(blas.Left, blas.NoTrans, blas64.Triangular{Uplo: blas.Lower, Diag: blas.Unit, N: 2, Stride: 2, Data: s}, general(2, 2, 2, s), 1)
		}},
		{"Trsm X L = B", func() { Trsm(blas.Right, blas.NoTrans, lowerTri10(s), general(2, 10, 10, s), 1) }},
		{"Trsm X U^T = B", func() {
			Trsm(blas.Right, blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: 10, Stride: 10, Data: s}, general(2, 10, 10, s), 1)
		}},
		{"Trsm bad side", func() { Trsm(blas.Side(0), blas.NoTrans, lowerTri10(s), general(10, 2, 2, s), 1) }},
		{"Add dst short", func() { Add(s[:2], s[:3]) }},
		{"TrsmRight ldb < n", func() { Trsm(blas.Right, blas.Trans, lowerTri10(s), general(3, 10, 5, s), 1) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// TestSyrkConcurrent runs Syrk from several goroutines on
// distinct buffers (as the streaming statistics do) and checks that each
// result equals the sequential one bit for bit.
func TestSyrkConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const g, r = 4, 300
	ms := [g]int{50, 200, 161, 37}
	fs, want, got := make([][]float64, g), make([][]float64, g), make([][]float64, g)
	for w, m := range ms {
		fs[w] = randSlice(rng, r*m)
		want[w] = make([]float64, m*m)
		got[w] = make([]float64, m*m)
		Syrk(blas.Trans, general(r, m, m, fs[w]), upperSym(m, m, want[w]))
		Syrk(blas.Trans, general(r, m, m, fs[w]), upperSym(m, m, want[w]))
	}
	var wg sync.WaitGroup
	for w, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Syrk(blas.Trans, general(r, m, m, fs[w]), upperSym(m, m, got[w]))
			Syrk(blas.Trans, general(r, m, m, fs[w]), upperSym(m, m, got[w]))
		}()
	}
	wg.Wait()
	for w := range ms {
		if !sameBits(got[w], want[w]) {
			t.Errorf("goroutine %d (m=%d): result differs from the sequential one", w, ms[w])
		}
	}
}

// TestAdd checks Add against the scalar sum for lengths around the 16-wide
// blocks of the vector kernel, with dst longer than src.
// TestAddShifted checks AddShifted against shifting in place and adding,
// bit for bit, for every implementation and lengths around the 16-element
// blocks of the assembly.
func TestAddShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 500, 1001} {
		src := make([]float64, n)
		shift := make([]float64, n+2)
		dst := make([]float64, n+3)
		for i := range src {
			src[i] = 1 + rng.Float64()*1e-3 // a shift cancels most of it
			shift[i] = -1 - rng.Float64()*1e-3
		}
		for i := range dst {
			dst[i] = rng.NormFloat64() * 1e-4
		}
		want := slices.Clone(dst)
		shifted := slices.Clone(src)
		for i := range shifted {
			shifted[i] += shift[i]
		}
		for i, v := range shifted {
			want[i] += v
		}
		for _, im := range []impl{native, goImpl} {
			got := slices.Clone(dst)
			im.addShiftedTo(got, src, shift, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("n = %d: AddShifted differs from shift-then-add", n)
			}
			// With out: a separate buffer (its extra element untouched),
			// and src itself.
			got = slices.Clone(dst)
			out := make([]float64, n+1)
			out[n] = 7
			im.addShiftedTo(got, src, shift, out)
			if !slices.Equal(got, want) || !slices.Equal(out[:n], shifted) || out[n] != 7 {
				t.Fatalf("n = %d: AddShiftedOut differs from shift-then-add", n)
			}
			got = slices.Clone(dst)
			in := slices.Clone(src)
			im.addShiftedTo(got, in, shift, in)
			if !slices.Equal(got, want) || !slices.Equal(in, shifted) {
				t.Fatalf("n = %d: AddShiftedOut in place differs from shift-then-add", n)
			}
		}
	}
	for _, f := range []func(){
		func() { AddShifted(make([]float64, 3), make([]float64, 4), make([]float64, 4)) },
		func() { AddShifted(make([]float64, 4), make([]float64, 4), make([]float64, 3)) },
		func() { AddShiftedOut(make([]float64, 4), make([]float64, 4), make([]float64, 4), make([]float64, 3)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("AddShifted with a short dst or shift did not panic")
				}
			}()
			f()
		}()
	}
}

func TestAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 500, 1001} {
		src := make([]float64, n)
		dst := make([]float64, n+3)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		for i := range dst {
			dst[i] = rng.NormFloat64()
		}
		want := slices.Clone(dst)
		for i, v := range src {
			want[i] += v
		}
		for _, im := range []impl{native, goImpl} {
			got := slices.Clone(dst)
			im.addTo(got, src)
			if !slices.Equal(got, want) {
				t.Fatalf("n = %d: Add differs from the scalar sum", n)
			}
		}
	}
}
