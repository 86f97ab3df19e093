package exact_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

func TestParse(t *testing.T) {
	for _, m := range []exact.Method{exact.DICA, exact.UDICA, exact.KPCA, exact.COIR} {
		got, err := exact.ParseMethod(strings.ToUpper(m.String()))
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %v, %v", m.String(), got, err)
		}
	}
	for _, f := range []exact.Form{exact.Canonical, exact.Paper} {
		got, err := exact.ParseForm(f.String())
		if err != nil || got != f {
			t.Errorf("ParseForm(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := exact.ParseMethod("lda"); err == nil || !strings.Contains(err.Error(), `"lda"`) {
		t.Errorf("ParseMethod(lda): error %v", err)
	}
	if _, err := exact.ParseForm("x"); err == nil {
		t.Error("ParseForm(x): no error")
	}
	if s := exact.Method(9).String(); s != "Method(9)" {
		t.Errorf("Method(9).String() = %q", s)
	}
	if s := exact.Paper.String(); s != "paper" {
		t.Errorf("Paper.String() = %q", s)
	}
}

func TestQEntries(t *testing.T) {
	domains := []int{0, 0, 1, 1, 1, 2, 0, 2}
	size := []float64{3, 3, 2}
	const N = 3
	q := exact.Q(domains, N)
	for p, i := range domains {
		for r, j := range domains {
			want := -1 / (N * N * size[i] * size[j])
			if i == j {
				want = (N - 1) / (N * N * size[i] * size[i])
			}
			if got := q.At(p, r); math.Abs(got-want) > 1e-15 {
				t.Errorf("Q[%d,%d] = %g, want %g", p, r, got, want)
			}
		}
	}
	// Q 1 = 0 and rank N-1.
	for p := range domains {
		if s := floats.Sum(mat.Row(nil, p, q)); math.Abs(s) > 1e-15 {
			t.Errorf("row %d of Q sums to %g", p, s)
		}
	}
}

// TestDistributionalVariance checks tr(KQ) three ways: with a linear kernel,
// against (1/N) sum_i ||mu_i - mu_bar||^2 computed from the explicit domain
// means in input space; with an RBF kernel, against the trace of K times the
// dense Q, and against the same formula from Gram block sums.
func TestDistributionalVariance(t *testing.T) {
	ds := blobs(3, 4, 13, 3, 2)
	ds.Domain[0] = 3 // unequal sizes
	n, N := ds.N(), ds.NumDomains()

	// Linear kernel: mean embeddings are the domain means.
	lin := denseKernel(kernel.Linear{}, ds.X)
	means := mat.NewDense(N, ds.D(), nil)
	size := ds.DomainSizes()
	for p := 0; p < n; p++ {
		for j := 0; j < ds.D(); j++ {
			means.Set(ds.Domain[p], j, means.At(ds.Domain[p], j)+ds.X.At(p, j)/float64(size[ds.Domain[p]]))
		}
	}
	bar := make([]float64, ds.D())
	for i := 0; i < N; i++ {
		floats.AddScaled(bar, 1/float64(N), means.RawRowView(i))
	}
	var want float64
	for i := 0; i < N; i++ {
		d := floats.Distance(means.RawRowView(i), bar, 2)
		want += d * d / float64(N)
	}
	got := exact.DistributionalVariance(sym(lin), ds.Domain, N)
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("linear: DistributionalVariance = %.15g, want %.15g", got, want)
	}

	// RBF: tr(K Q) with the dense Q, and the block-sum formula by hand.
	k := denseKernel(kernel.RBF{Sigma: 1.5}, ds.X)
	var kq mat.Dense
	kq.Mul(k, exact.Q(ds.Domain, N))
	trace := mat.Trace(&kq)
	blocks := mat.NewDense(N, N, nil)
	for p := 0; p < n; p++ {
		for r := 0; r < n; r++ {
			i, j := ds.Domain[p], ds.Domain[r]
			blocks.Set(i, j, blocks.At(i, j)+k.At(p, r)/float64(size[i]*size[j]))
		}
	}
	var byHand float64 // (1/N) sum_i <mu_i - bar, mu_i - bar>
	for i := 0; i < N; i++ {
		v := blocks.At(i, i)
		for j := 0; j < N; j++ {
			v -= 2 * blocks.At(i, j) / float64(N)
			for l := 0; l < N; l++ {
				v += blocks.At(j, l) / float64(N*N)
			}
		}
		byHand += v / float64(N)
	}
	got = exact.DistributionalVariance(sym(k), ds.Domain, N)
	if math.Abs(got-trace) > 1e-12*trace || math.Abs(got-byHand) > 1e-12*trace {
		t.Errorf("rbf: DistributionalVariance = %.15g, tr(KQ) = %.15g, by hand %.15g", got, trace, byHand)
	}
	if got <= 0 {
		t.Errorf("distributional variance %g of shifted domains should be positive", got)
	}
}

// TestReportedVariances checks Model.InputVariance against tr(K Q) with the
// dense Q, and Model.ProjectedVariance against the distributional variance of
// the training projections computed by brute force from their domain means.
func TestReportedVariances(t *testing.T) {
	ds := blobs(5, 4, 20, 3, 3)
	ds.Domain[0] = 2 // unequal sizes
	N := ds.NumDomains()
	size := ds.DomainSizes()
	for _, form := range []exact.Form{exact.Canonical, exact.Paper} {
		for _, method := range []exact.Method{exact.DICA, exact.UDICA, exact.KPCA, exact.COIR} {
			m := fit(t, ds, exact.Options{Method: method, Form: form, Components: 3, Lambda: 1e-3, Epsilon: 1e-2})
			var kq mat.Dense
			kq.Mul(centered(denseKernel(m.Kernel, ds.X)), exact.Q(ds.Domain, N))
			if want := mat.Trace(&kq); !(want > 0) || math.Abs(m.InputVariance-want) > 1e-10*want {
				t.Errorf("%v %v: InputVariance %.15g, tr(KQ) %.15g", form, method, m.InputVariance, want)
			}
			z := m.TrainProjection()
			means := mat.NewDense(N, m.Positive, nil)
			for p := 0; p < ds.N(); p++ {
				for j := 0; j < m.Positive; j++ {
					i := ds.Domain[p]
					means.Set(i, j, means.At(i, j)+z.At(p, j)/float64(size[i]))
				}
			}
			var want float64
			for j := 0; j < m.Positive; j++ {
				col := mat.Col(nil, j, means)
				bar := floats.Sum(col) / float64(N)
				for _, v := range col {
					want += (v - bar) * (v - bar) / float64(N)
				}
			}
			if !(want > 0) || math.Abs(m.ProjectedVariance-want) > 1e-9*want {
				t.Errorf("%v %v: ProjectedVariance %.15g, brute force %.15g", form, method, m.ProjectedVariance, want)
			}
		}
	}
	// One domain: both are 0.
	one := blobs(5, 1, 30, 3, 2)
	m := fit(t, one, exact.Options{Method: exact.KPCA, Components: 2})
	if m.InputVariance != 0 || m.ProjectedVariance != 0 {
		t.Errorf("one domain: variances %g, %g, want 0", m.InputVariance, m.ProjectedVariance)
	}
}

func sym(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, a.At(i, j))
		}
	}
	return s
}

func fit(t testing.TB, ds *dataset.Dataset, o exact.Options) *exact.Model {
	t.Helper()
	m, err := exact.Fit(context.Background(), ds, o)
	if err != nil {
		t.Fatalf("Fit(%v, %v): %v", o.Method, o.Form, err)
	}
	return m
}

func relClose(a, b []float64, tol float64) (int, bool) {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(math.Abs(b[i]), math.Abs(b[0])*1e-6) {
			return i, false
		}
	}
	return -1, true
}

// TestOneDomain: with one domain K Q K = 0, so DICA equals COIR and UDICA
// equals KPCA; KPCA has the closed form gamma_j = s_j^2 / (n (s_j + lambda))
// with s_j the eigenvalues of the centered kernel matrix.
func TestOneDomain(t *testing.T) {
	ds := blobs(5, 1, 120, 3, 3)
	base := exact.Options{Components: 6, Lambda: 1e-3, Epsilon: 1e-3, Kernel: kernel.RBF{Sigma: 2}}
	with := func(m exact.Method) exact.Options { o := base; o.Method = m; return o }
	dica, coir := fit(t, ds, with(exact.DICA)), fit(t, ds, with(exact.COIR))
	if i, ok := relClose(dica.Eigenvalues[:dica.Positive], coir.Eigenvalues[:coir.Positive], 1e-10); !ok || dica.Positive != coir.Positive || dica.Positive != 2 {
		t.Errorf("one domain: DICA %v (%d positive) != COIR %v (%d positive) at %d", dica.Eigenvalues, dica.Positive, coir.Eigenvalues, coir.Positive, i)
	}
	udica, kpca := fit(t, ds, with(exact.UDICA)), fit(t, ds, with(exact.KPCA))
	if i, ok := relClose(udica.Eigenvalues, kpca.Eigenvalues, 1e-10); !ok {
		t.Errorf("one domain: UDICA %v != KPCA %v at %d", udica.Eigenvalues, kpca.Eigenvalues, i)
	}
	kc := centered(denseKernel(base.Kernel, ds.X))
	var es mat.EigenSym
	es.Factorize(sym(kc), false)
	s := es.Values(nil)
	n := float64(ds.N())
	want := make([]float64, base.Components)
	for j := range want {
		sj := s[len(s)-1-j]
		want[j] = sj * sj / (n * (sj + base.Lambda))
	}
	if i, ok := relClose(kpca.Eigenvalues, want, 1e-10); !ok {
		t.Errorf("KPCA eigenvalues %v, closed form %v (first mismatch %d)", kpca.Eigenvalues, want, i)
	}
	// Two domains: the domain term lowers the UDICA eigenvalues below KPCA's.
	ds2 := blobs(5, 2, 60, 3, 3)
	u2, k2 := fit(t, ds2, with(exact.UDICA)), fit(t, ds2, with(exact.KPCA))
	if !(u2.Eigenvalues[0] < k2.Eigenvalues[0]*(1-1e-6)) {
		t.Errorf("two shifted domains: UDICA gamma_1 %g not below KPCA %g", u2.Eigenvalues[0], k2.Eigenvalues[0])
	}
}

// TestGeneralizedResiduals checks every returned pair against the densely
// formed problem: ||A b - gamma D b|| <= 1e-9 ||A|| ||b||, and B^T D B = I.
func TestGeneralizedResiduals(t *testing.T) {
	cls := blobs(7, 4, 40, 3, 3)
	reg := toy.Regression(toy.Options{Domains: 3, MeanSize: 50, Seed: 7})
	for _, tc := range []struct {
		name   string
		ds     *dataset.Dataset
		method exact.Method
		lambda float64
	}{
		{"dica-labels", cls, exact.DICA, 1e-3},
		{"dica-labels-lambda0", cls, exact.DICA, 0},
		{"coir-labels", cls, exact.COIR, 1e-2},
		{"udica", cls, exact.UDICA, 1e-3},
		{"kpca", cls, exact.KPCA, 1e-3},
		{"dica-targets", reg, exact.DICA, 1e-3},
		{"coir-targets", reg, exact.COIR, 1e-3},
		{"dica-partial-labels", unlabel(cls), exact.DICA, 1e-3},
		{"dica-partial-labels-lambda0", unlabel(cls), exact.DICA, 0},
		{"coir-partial-labels", unlabel(cls), exact.COIR, 1e-2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fit(t, tc.ds, exact.Options{Method: tc.method, Components: 5, Lambda: tc.lambda, Epsilon: 1e-3, Seed: 1})
			r := reference(tc.ds, m)
			na := norm2(r.a)
			_, k := m.B.Dims()
			for j := 0; j < k; j++ {
				b := m.B.ColView(j)
				var ab, db mat.VecDense
				ab.MulVec(r.a, b)
				db.MulVec(r.d, b)
				ab.AddScaledVec(&ab, -m.Eigenvalues[j], &db)
				if res := mat.Norm(&ab, 2); res > 1e-9*na*mat.Norm(b, 2) {
					t.Errorf("pair %d (gamma %.6g): residual %.3g > 1e-9 ||A|| ||b|| = %.3g", j, m.Eigenvalues[j], res, 1e-9*na*mat.Norm(b, 2))
				}
			}
			var db, btdb mat.Dense
			db.Mul(r.d, m.B)
			btdb.Mul(m.B.T(), &db)
			// With Lambda = 0 the jitter (1e-8 relative) makes D ill-conditioned
			// (cond ~ 1e8), and the null-space completion vectors b = U^{-1} v
			// are D-orthonormal only to about eps * cond ~ 1e-8..1e-7; the
			// positive components stay at 1e-9.
			tol := 1e-9
			if tc.lambda == 0 {
				tol = 1e-6
				pos := m.Positive
				sub := btdb.Slice(0, pos, 0, pos)
				if !mat.EqualApprox(sub, diag(pos, 1), 1e-9) {
					t.Errorf("positive block of B^T D B != I:\n%v", mat.Formatted(sub))
				}
			}
			if !mat.EqualApprox(&btdb, diag(k, 1), tol) {
				t.Errorf("B^T D B != I:\n%v", mat.Formatted(&btdb))
			}
			for j := 1; j < k; j++ {
				if m.Eigenvalues[j] > m.Eigenvalues[j-1] {
					t.Errorf("eigenvalues not descending: %v", m.Eigenvalues)
				}
			}
			// Training projection is K_c B.
			var kb mat.Dense
			kb.Mul(r.kc, m.B)
			if !mat.EqualApprox(&kb, m.TrainProjection(), 1e-9*mat.Norm(&kb, math.Inf(1))) {
				t.Error("TrainProjection != K_c B")
			}
		})
	}
}

// TestDeltaPositive: with the delta kernel on c classes, rank(HLH) = c - 1,
// so exactly c - 1 eigenvalues are positive. The count is checked against
// the dense reference problem too.
func TestDeltaPositive(t *testing.T) {
	for _, c := range []int{2, 3, 4} {
		for _, method := range []exact.Method{exact.DICA, exact.COIR} {
			ds := blobs(uint64(10+c), 3, 30, 4, c)
			// The paper form: exactly c - 1 positive, the rest exactly 0
			// (its non-symmetric solve used to report rounding, amplified
			// by cond(D), as a c-th positive eigenvalue at small lambda).
			for _, lambda := range []float64{0, 1e-3} {
				pm := fit(t, ds, exact.Options{Method: method, Form: exact.Paper, Components: c + 2, Lambda: lambda, Epsilon: 1e-2})
				if pm.Positive != c-1 {
					t.Errorf("paper %v, %d classes, lambda %g: %d positive components, want %d (eigenvalues %v)", method, c, lambda, pm.Positive, c-1, pm.Eigenvalues)
				}
				for j := pm.Positive; j < len(pm.Eigenvalues); j++ {
					if pm.Eigenvalues[j] != 0 {
						t.Errorf("paper %v, %d classes, lambda %g: eigenvalue %d = %g, want 0", method, c, lambda, j, pm.Eigenvalues[j])
					}
				}
			}
			m := fit(t, ds, exact.Options{Method: method, Components: c + 2, Lambda: 1e-3, Epsilon: 1e-2})
			if m.Positive != c-1 {
				t.Errorf("%v, %d classes: %d positive components, want %d (eigenvalues %v)", method, c, m.Positive, c-1, m.Eigenvalues)
			}
			for j := m.Positive; j < len(m.Eigenvalues); j++ {
				if m.Eigenvalues[j] != 0 {
					t.Errorf("%v, %d classes: eigenvalue %d = %g, want 0", method, c, j, m.Eigenvalues[j])
				}
			}
			vals, b := m.Components()
			if len(vals) != c-1 || b.RawMatrix().Cols != c-1 {
				t.Errorf("Components() returned %d values, %d columns; want %d", len(vals), b.RawMatrix().Cols, c-1)
			}
			// Dense reference: eigenvalues of D^{-1/2} A D^{-1/2}.
			r := reference(ds, m)
			ref := denseGenEig(r.a, r.d)
			pos := 0
			for _, v := range ref {
				if v > 1e-10*ref[0] {
					pos++
				}
			}
			if pos != c-1 {
				t.Errorf("%v, %d classes: dense reference has %d positive eigenvalues", method, c, pos)
			}
			if i, ok := relClose(m.Eigenvalues[:m.Positive], ref[:m.Positive], 1e-8); !ok {
				t.Errorf("%v, %d classes: eigenvalues %v, dense reference %v (at %d)", method, c, m.Eigenvalues, ref[:c+2], i)
			}
		}
	}
}

// denseGenEig returns the eigenvalues of A b = gamma D b, largest first,
// via the dense symmetric D^{-1/2} A D^{-1/2} (D by its eigendecomposition).
func denseGenEig(a, d *mat.Dense) []float64 {
	n, _ := d.Dims()
	var es mat.EigenSym
	es.Factorize(sym(d), true)
	s := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	w := mat.NewDense(n, n, nil) // V S^{-1/2}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			w.Set(i, j, v.At(i, j)/math.Sqrt(s[j]))
		}
	}
	var t, c mat.Dense
	t.Mul(a, w)
	c.Mul(w.T(), &t)
	var ec mat.EigenSym
	ec.Factorize(sym(&c), false)
	vals := ec.Values(nil)
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		vals[i], vals[j] = vals[j], vals[i]
	}
	return vals
}

// TestCanonicalVsPaper: the paper form's eigenvalues are n times the
// canonical ones exactly for UDICA and KPCA (same symmetric pencil) and for
// COIR (D = K + lambda I commutes with K, so D^{-1} P K^2 has the spectrum
// of K D^{-1} P K = D^{-1} K P K), and approximately for DICA with a real
// target: there D^{-1} does not commute with K and the two problems differ
// (about 1e-4 relative on the paper's toy data, docs/MATH.md, "2. Two
// eigenproblems"; 1.5e-3 here on 238 points; we allow 1e-2).
func TestCanonicalVsPaper(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 4, MeanSize: 60, Seed: 21})
	n := float64(ds.N())
	for _, tc := range []struct {
		method exact.Method
		k      int
		tol    float64
	}{
		{exact.UDICA, 5, 1e-9},
		{exact.KPCA, 5, 1e-9},
		{exact.DICA, 3, 1e-2},
		{exact.COIR, 3, 1e-9},
	} {
		o := exact.Options{Method: tc.method, Components: tc.k, Lambda: 1e-3, Epsilon: 1e-3, Seed: 2}
		can := fit(t, ds, o)
		o.Form = exact.Paper
		pap := fit(t, ds, o)
		scaled := make([]float64, tc.k)
		for j := range scaled {
			scaled[j] = pap.Eigenvalues[j] / n
		}
		t.Logf("%v: canonical %v, paper/n %v", tc.method, can.Eigenvalues, scaled)
		if i, ok := relClose(scaled, can.Eigenvalues, tc.tol); !ok {
			t.Errorf("%v: paper/n %v vs canonical %v differ at %d beyond %g", tc.method, scaled, can.Eigenvalues, i, tc.tol)
		}
		// Paper coefficients: unit-norm eigenvectors divided by sqrt(mu).
		for j := 0; j < pap.Positive; j++ {
			if nb := mat.Norm(pap.B.ColView(j), 2); math.Abs(nb*math.Sqrt(pap.Eigenvalues[j])-1) > 1e-9 {
				t.Errorf("%v paper: ||b_%d|| sqrt(mu) = %g, want 1", tc.method, j, nb*math.Sqrt(pap.Eigenvalues[j]))
			}
		}
	}
}

// TestPaperEigenvectors checks the paper form's pairs against the literal
// dense non-symmetric matrix M = D^{-1} P K^2 (no 1/n): M b = mu b, and the
// eigenvalues are the top ones by magnitude of the dense mat.Eigen of M (real
// parts), as dica.m takes them.
func TestPaperEigenvectors(t *testing.T) {
	ds := blobs(8, 3, 30, 3, 3)
	for _, method := range []exact.Method{exact.DICA, exact.UDICA, exact.KPCA, exact.COIR} {
		m := fit(t, ds, exact.Options{Method: method, Form: exact.Paper, Components: 3, Lambda: 1e-2, Epsilon: 1e-2})
		r := reference(ds, m)
		var dinv, mm mat.Dense
		if err := dinv.Inverse(r.d); err != nil {
			t.Fatal(err)
		}
		num := paperNumerator(ds, m)
		mm.Mul(&dinv, num)
		var eg mat.Eigen
		if !eg.Factorize(&mm, mat.EigenNone) {
			t.Fatal("dense mat.Eigen failed")
		}
		dense := eg.Values(nil)
		sort.Slice(dense, func(i, j int) bool { return cmplx.Abs(dense[i]) > cmplx.Abs(dense[j]) })
		for j := 0; j < m.Positive; j++ {
			if want := real(dense[j]); math.Abs(m.Eigenvalues[j]-want) > 1e-9*math.Abs(real(dense[0])) {
				t.Errorf("%v paper eigenvalue %d = %.12g, dense mat.Eigen of M %.12g", method, j, m.Eigenvalues[j], want)
			}
		}
		if method.Supervised() && m.Positive != 2 {
			t.Errorf("%v paper: %d positive with 3 classes, want 2", method, m.Positive)
		}
		for j := 0; j < m.Positive; j++ {
			b := m.B.ColView(j)
			var mb mat.VecDense
			mb.MulVec(&mm, b)
			mb.AddScaledVec(&mb, -m.Eigenvalues[j], b)
			if res := mat.Norm(&mb, 2); res > 1e-8*m.Eigenvalues[0]*mat.Norm(b, 2) {
				t.Errorf("%v paper pair %d: ||M b - mu b|| = %g", method, j, res)
			}
		}
	}
}

// paperNumerator returns P K^2 (DICA, COIR) or K^2, centered, densely.
func paperNumerator(ds *dataset.Dataset, m *exact.Model) *mat.Dense {
	n := ds.N()
	kc := centered(denseKernel(m.Kernel, ds.X))
	var k2 mat.Dense
	k2.Mul(kc, kc)
	if !m.Method.Supervised() {
		return &k2
	}
	lc := centered(mat.DenseCopyOf(kernel.Delta{}.Gram(ds.Label)))
	var reg, inv, p, out mat.Dense
	reg.Add(lc, diag(n, float64(n)*m.Options.Epsilon))
	inv.Inverse(&reg)
	p.Mul(lc, &inv)
	out.Mul(&p, &k2)
	return &out
}

// TestPermutation: permuting the training points leaves the eigenvalues
// and the projections of new points unchanged (up to the sign of each
// component). With n <= 1000 the median heuristic uses all points.
func TestPermutation(t *testing.T) {
	cls := blobs(9, 3, 40, 3, 3)
	reg := toy.Regression(toy.Options{Domains: 3, MeanSize: 40, Seed: 9})
	test := blobs(99, 1, 20, 3, 3).X
	regTest := toy.Regression(toy.Options{Domains: 1, MeanSize: 20, Seed: 99}).X
	type tcase struct {
		name string
		ds   *dataset.Dataset
		x    *mat.Dense
		o    exact.Options
	}
	var cases []tcase
	for _, method := range []exact.Method{exact.DICA, exact.UDICA, exact.KPCA, exact.COIR} {
		for _, form := range []exact.Form{exact.Canonical, exact.Paper} {
			o := exact.Options{Method: method, Form: form, Components: 2, Lambda: 1e-3, Epsilon: 1e-2}
			cases = append(cases, tcase{fmt.Sprintf("labels/%v/%v", method, form), cls, test, o})
		}
	}
	for _, form := range []exact.Form{exact.Canonical, exact.Paper} {
		o := exact.Options{Method: exact.DICA, Form: form, Components: 3, Lambda: 1e-3, Epsilon: 1e-3}
		cases = append(cases, tcase{fmt.Sprintf("targets/dica/%v", form), reg, regTest, o})
	}
	for _, tc := range cases {
		perm := rand.New(rand.NewPCG(1, 2)).Perm(tc.ds.N())
		a, b := fit(t, tc.ds, tc.o), fit(t, tc.ds.Subset(perm), tc.o)
		if i, ok := relClose(a.Eigenvalues, b.Eigenvalues, 1e-9); !ok {
			t.Errorf("%s: eigenvalues %v vs permuted %v (at %d)", tc.name, a.Eigenvalues, b.Eigenvalues, i)
		}
		za, err := a.Transform(tc.x, exact.TransformOptions{})
		if err != nil {
			t.Fatal(err)
		}
		zb, _ := b.Transform(tc.x, exact.TransformOptions{})
		_, k := za.Dims()
		for j := 0; j < k; j++ {
			ca, cb := mat.Col(nil, j, za), mat.Col(nil, j, zb)
			if floats.Dot(ca, cb) < 0 {
				floats.Scale(-1, cb)
			}
			if d := floats.Distance(ca, cb, math.Inf(1)); d > 1e-7*floats.Norm(ca, math.Inf(1)) {
				t.Errorf("%s component %d: projections differ by %g after permutation", tc.name, j, d)
			}
		}
	}
}

// TestTransform checks the projection formulas against dense references:
// training points give K_c B; new points with training centering give
// B^T k_c(x) from the explicit formula, which for positive canonical
// components is B^T (k(x) - KColMean) since B^T 1 = 0; batch centering gives
// H_t K_t H B; Scale gives Z^T Z = n I for UDICA's training features.
func TestTransform(t *testing.T) {
	ds := blobs(11, 3, 30, 3, 3)
	x := blobs(12, 2, 10, 3, 3).X
	m := fit(t, ds, exact.Options{Method: exact.DICA, Components: 4, Lambda: 1e-3, Epsilon: 1e-2})
	n, k := m.B.Dims()
	tr, err := m.Transform(ds.X, exact.TransformOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Positive != 2 || k != 4 {
		t.Fatalf("%d positive of %d components, want 2 of 4 (3 classes)", m.Positive, k)
	}
	// bpos is B with the null-space columns zeroed: they carry no signal
	// and Transform returns 0 for them.
	bpos := mat.DenseCopyOf(m.B)
	for j := m.Positive; j < k; j++ {
		bpos.SetCol(j, make([]float64, n))
	}
	kc := centered(denseKernel(m.Kernel, ds.X))
	var want mat.Dense
	want.Mul(kc, bpos)
	if !mat.EqualApprox(tr, &want, 1e-10) {
		t.Error("Transform(training X) != K_c B")
	}
	// B^T 1 = 0 on the positive components.
	for j := 0; j < m.Positive; j++ {
		if s := floats.Sum(mat.Col(nil, j, m.B)); math.Abs(s) > 1e-9*floats.Norm(mat.Col(nil, j, m.B), 1) {
			t.Errorf("component %d: B^T 1 = %g, want 0", j, s)
		}
	}
	z, err := m.Transform(x, exact.TransformOptions{Center: exact.TrainCentering})
	if err != nil {
		t.Fatal(err)
	}
	t0, _ := x.Dims()
	for r := 0; r < t0; r++ {
		kx := make([]float64, n)
		for p := range kx {
			kx[p] = m.Kernel.Eval(x.RawRowView(r), ds.X.RawRowView(p))
		}
		rm := floats.Sum(kx) / float64(n)
		for j := 0; j < k; j++ {
			var full, short float64
			for p := range kx {
				full += bpos.At(p, j) * (kx[p] - rm - m.KColMean[p] + m.KMean)
				short += m.B.At(p, j) * (kx[p] - m.KColMean[p])
			}
			if math.Abs(z.At(r, j)-full) > 1e-10 {
				t.Errorf("row %d comp %d: z = %g, formula %g", r, j, z.At(r, j), full)
			}
			if j < m.Positive && math.Abs(z.At(r, j)-short) > 1e-8 {
				t.Errorf("row %d comp %d: z = %g, B^T (k(x) - KColMean) = %g", r, j, z.At(r, j), short)
			}
		}
	}
	// Batch centering: H_t K_t H B.
	kt := mat.NewDense(t0, n, nil)
	for r := 0; r < t0; r++ {
		for p := 0; p < n; p++ {
			kt.Set(r, p, m.Kernel.Eval(x.RawRowView(r), ds.X.RawRowView(p)))
		}
	}
	var a, b, zb mat.Dense
	a.Mul(centering(t0), kt)
	b.Mul(&a, centering(n))
	zb.Mul(&b, bpos)
	got, _ := m.Transform(x, exact.TransformOptions{Center: exact.BatchCentering})
	if !mat.EqualApprox(got, &zb, 1e-10) {
		t.Error("batch-centered Transform != H_t K_t H B")
	}
	one, _ := m.Transform(x.Slice(0, 1, 0, 3).(*mat.Dense), exact.TransformOptions{Center: exact.BatchCentering})
	if mat.Norm(one, math.Inf(1)) > 1e-12 {
		t.Errorf("a single batch-centered point should project to 0, got %v", mat.Formatted(one))
	}
	// Scale: UDICA training features have Z^T Z = n I (B^T K^2 B / n = Gamma).
	u := fit(t, ds, exact.Options{Method: exact.UDICA, Components: 3, Lambda: 1e-3})
	zs, _ := u.Transform(ds.X, exact.TransformOptions{Scale: true})
	var ztz mat.Dense
	ztz.Mul(zs.T(), zs)
	if !mat.EqualApprox(&ztz, diag(3, float64(n)), 1e-8*float64(n)) {
		t.Errorf("scaled UDICA features: Z^T Z =\n%v\nwant %d I", mat.Formatted(&ztz), n)
	}
	// The null-space components are 0, scaled or not, and the positive ones
	// are not.
	for _, o := range []exact.TransformOptions{{}, {Scale: true}, {Center: exact.BatchCentering}} {
		zz, _ := m.Transform(x, o)
		for j := 0; j < k; j++ {
			v := mat.Norm(zz.ColView(j), math.Inf(1))
			if j >= m.Positive && v != 0 {
				t.Errorf("%+v: null component %d is not 0 (%g)", o, j, v)
			}
			if j < m.Positive && !(v > 0) {
				t.Errorf("%+v: positive component %d is 0", o, j)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	good := blobs(13, 2, 10, 2, 2)
	unlabeled := &dataset.Dataset{X: good.X, Domain: good.Domain, DomainNames: good.DomainNames}
	oneClass := blobs(13, 2, 10, 2, 2)
	for p := range oneClass.Label {
		oneClass.Label[p] = 0
	}
	regSmall := toy.Regression(toy.Options{Domains: 2, MeanSize: 10, Dim: 2, Seed: 1})
	nan := blobs(13, 2, 10, 2, 2)
	nan.X.Set(3, 1, math.NaN())
	ok := exact.Options{Components: 2, Lambda: 1e-3, Epsilon: 1e-3}
	with := func(f func(*exact.Options)) exact.Options { o := ok; f(&o); return o }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		ds   *dataset.Dataset
		o    exact.Options
		want string
	}{
		{"nil data", nil, nil, ok, "nil data set"},
		{"nan input", nil, nan, ok, "row 3, column 1"},
		{"components 0", nil, good, with(func(o *exact.Options) { o.Components = 0 }), "Components = 0"},
		{"components > n", nil, good, with(func(o *exact.Options) { o.Components = 21 }), "exceeds the number of points 20"},
		{"negative lambda", nil, good, with(func(o *exact.Options) { o.Lambda = -1 }), "Lambda = -1"},
		{"nan lambda", nil, good, with(func(o *exact.Options) { o.Lambda = math.NaN() }), "Lambda = NaN"},
		{"epsilon 0", nil, good, with(func(o *exact.Options) { o.Epsilon = 0 }), "dica needs Epsilon > 0"},
		{"coir epsilon < 0", nil, good, with(func(o *exact.Options) { o.Method, o.Epsilon = exact.COIR, -1 }), "coir needs Epsilon > 0"},
		{"no labels", nil, unlabeled, ok, "needs class labels or real targets"},
		{"one class", nil, oneClass, ok, "one class only"},
		{"bad method", nil, good, with(func(o *exact.Options) { o.Method = 7 }), "unknown method Method(7)"},
		{"bad form", nil, good, with(func(o *exact.Options) { o.Form = -1 }), "unknown form Form(-1)"},
		{"cancelled", cancelled, good, ok, "context canceled"},
		{"bad kernel", nil, good, with(func(o *exact.Options) { o.Kernel = kernel.RBF{Sigma: 0} }), "kernel rbf(sigma=0) gives the non-finite value NaN"},
		{"bad output kernel", nil, regSmall, with(func(o *exact.Options) { o.OutputKernel = kernel.RBF{Sigma: 0} }), "output kernel rbf(sigma=0) gives the non-finite value NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			m, err := exact.Fit(ctx, tc.ds, tc.o)
			if err == nil || m != nil {
				t.Fatalf("got model %v, error %v; want error containing %q", m != nil, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
	// Unsupervised methods need neither labels nor Epsilon.
	if _, err := exact.Fit(context.Background(), unlabeled, exact.Options{Method: exact.UDICA, Components: 1, Lambda: 1e-3}); err != nil {
		t.Errorf("UDICA on unlabeled data: %v", err)
	}

	m := fit(t, good, ok)
	bad := mat.NewDense(2, 3, nil)
	nanX := mat.NewDense(2, 2, []float64{1, 2, math.Inf(1), 0})
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		o    exact.TransformOptions
		want string
	}{
		{"nil", nil, exact.TransformOptions{}, "no points"},
		{"columns", bad, exact.TransformOptions{}, "3 columns, the model was fitted on 2"},
		{"inf", nanX, exact.TransformOptions{}, "row 1, column 0"},
		{"centering", good.X, exact.TransformOptions{Center: 5}, "unknown centering 5"},
	} {
		if _, err := m.Transform(tc.x, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Transform %s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func Example() {
	// Three classes observed in six domains with per-domain shifts and
	// scales: with the delta kernel, DICA has c - 1 = 2 positive components.
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 40, Classes: 3, Seed: 1})
	m, err := exact.Fit(context.Background(), ds, exact.Options{
		Method: exact.DICA, Components: 4, Lambda: 1e-3, Epsilon: 1e-3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("components:", len(m.Eigenvalues), "positive:", m.Positive)
	fmt.Printf("eigenvalues: %.3g\n", m.Eigenvalues)
	z, _ := m.Transform(ds.X, exact.TransformOptions{})
	r, c := z.Dims()
	fmt.Println("features:", r == ds.N(), c)
	fmt.Println("null components are 0:", mat.Norm(z.Slice(0, r, 2, 4), 1) == 0)
	// Output:
	// components: 4 positive: 2
	// eigenvalues: [0.0277 0.0162 0 0]
	// features: true 4
	// null components are 0: true
}
