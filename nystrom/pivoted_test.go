package nystrom

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// TestPivotedAgreesWithEigen checks that above EigenMax landmarks the pivoted
// Cholesky map gives the same Phi Phi^T as the eigendecomposition path, and
// that near-duplicate landmarks are dropped without blowing up.
func TestPivotedAgreesWithEigen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, d := EigenMax+100, 6
	z := mat.NewDense(m, d, nil)
	for i := range m {
		for j := range d {
			z.Set(i, j, 3*rng.NormFloat64())
		}
	}
	// Make the last 50 landmarks near-duplicates of the first 50.
	for i := m - 50; i < m; i++ {
		for j := range d {
			z.Set(i, j, z.At(i-(m-50), j)+1e-9*rng.NormFloat64())
		}
	}
	k := kernel.RBF{Sigma: 1}
	start := time.Now()
	piv, err := New(k, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pivoted New at m = %d: %v, rank %d", m, time.Since(start), piv.EffectiveRank())
	if piv.EffectiveRank() > m-50 {
		t.Errorf("rank %d: the 50 near-duplicates were not dropped", piv.EffectiveRank())
	}
	// Reference: the eigen path on the same landmarks.
	ref, err := newEigenForTest(k, z)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(200, d, nil)
	for i := range 200 {
		for j := range d {
			x.Set(i, j, 3*rng.NormFloat64())
		}
	}
	var fp, fe, gp, ge mat.Dense
	piv.Map(&fp, x)
	ref.Map(&fe, x)
	gp.Mul(&fp, fp.T())
	ge.Mul(&fe, fe.T())
	var kx mat.Dense
	k.Block(&kx, x, x)
	var diff mat.Dense
	diff.Sub(&gp, &ge)
	rel := mat.Norm(&diff, 2) / mat.Norm(&ge, 2)
	if rel > 1e-6 {
		t.Errorf("Phi Phi^T differs from the eigen path by %.3g relative", rel)
	}
	for i := range 200 {
		if n := gp.At(i, i); n > kx.At(i, i)*(1+1e-9) || math.IsNaN(n) {
			t.Fatalf("||phi(x_%d)||^2 = %v > k(x, x) = %v", i, n, kx.At(i, i))
		}
	}
	// Landmarks themselves are reproduced exactly.
	var fz mat.Dense
	piv.Map(&fz, z.Slice(0, 20, 0, d).(*mat.Dense))
	var gz mat.Dense
	gz.Mul(&fz, fz.T())
	var kz mat.Dense
	k.Block(&kz, z.Slice(0, 20, 0, d), z.Slice(0, 20, 0, d))
	diff.Reset()
	diff.Sub(&gz, &kz)
	if e := mat.Norm(&diff, 2) / mat.Norm(&kz, 2); e > 1e-8 {
		t.Errorf("K on landmarks reproduced to %.3g only", e)
	}
}

// newEigenForTest builds the eigendecomposition map whatever m is.
func newEigenForTest(k kernel.Kernel, z *mat.Dense) (*Map, error) {
	m, _ := z.Dims()
	var kmm mat.Dense
	k.Block(&kmm, z, z)
	sym := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, (kmm.At(i, j)+kmm.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	eig.Factorize(sym, true)
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var cols []int
	for i, v := range vals {
		if v >= DefaultRCond*vals[m-1] {
			cols = append(cols, i)
		}
	}
	t := mat.NewDense(m, len(cols), nil)
	for c, src := range cols {
		for i := range m {
			t.Set(i, c, vecs.At(i, src)/math.Sqrt(vals[src]))
		}
	}
	return &Map{k: k, landmarks: mat.DenseCopyOf(z), rcond: DefaultRCond, values: vals[:len(cols)], t: t}, nil
}

// TestWellConditionedFastPath checks the plain Cholesky path New takes for
// well-conditioned landmarks above EigenMax: it is taken, it gives the
// Phi Phi^T of the eigendecomposition and of the pivoted factorization, and
// ill-conditioned landmarks are left to the pivoted factorization.
func TestWellConditionedFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, d := EigenMax+60, 6
	z := mat.NewDense(m, d, nil)
	for i := range m {
		for j := range d {
			z.Set(i, j, 3*rng.NormFloat64())
		}
	}
	k := kernel.RBF{Sigma: 1}
	var kb mat.Dense
	k.Block(&kb, z, z)
	kmm := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			kmm.SetSym(i, j, kb.At(i, j))
		}
	}
	if _, piv, ok := wellConditioned(kmm, DefaultRCond); !ok || len(piv) != m {
		t.Fatalf("well-conditioned landmarks: fast path not taken")
	}
	fast, err := New(k, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	diag := make([]float64, m)
	for i := range diag {
		diag[i] = kmm.At(i, i)
	}
	slow, err := pivotedMap(k, mat.DenseCopyOf(z), kmm, DefaultRCond, diag, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newEigenForTest(k, z)
	if err != nil {
		t.Fatal(err)
	}
	if fast.EffectiveRank() != m || slow.EffectiveRank() != m {
		t.Errorf("ranks %d (fast), %d (pivoted), want %d", fast.EffectiveRank(), slow.EffectiveRank(), m)
	}
	x := mat.NewDense(150, d, nil)
	for i := range 150 {
		for j := range d {
			x.Set(i, j, 3*rng.NormFloat64())
		}
	}
	gram := func(mp *Map) *mat.Dense {
		var f, g mat.Dense
		mp.Map(&f, x)
		g.Mul(&f, f.T())
		return &g
	}
	gf, gs, ge := gram(fast), gram(slow), gram(ref)
	for name, g := range map[string]*mat.Dense{"pivoted": gs, "eigen": ge} {
		var diff mat.Dense
		diff.Sub(gf, g)
		if rel := mat.Norm(&diff, 2) / mat.Norm(g, 2); rel > 1e-9 {
			t.Errorf("fast path Phi Phi^T differs from the %s path by %.3g relative", name, rel)
		}
	}
	// Near-duplicates: lambda_min far below the cutoff, no fast path.
	z.SetRow(1, z.RawRowView(0))
	z.Set(1, 0, z.At(0, 0)+1e-7)
	k.Block(&kb, z, z)
	for i := range m {
		for j := i; j < m; j++ {
			kmm.SetSym(i, j, kb.At(i, j))
		}
	}
	if _, _, ok := wellConditioned(kmm, DefaultRCond); ok {
		t.Error("near-duplicate landmarks took the fast path")
	}
}
