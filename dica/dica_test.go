package dica

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/toy"
)

func smallClass(seed uint64) *dataset.Dataset {
	return toy.Classification(toy.Options{Domains: 4, MeanSize: 30, Seed: seed})
}

func smallReg(seed uint64) *dataset.Dataset {
	return toy.Regression(toy.Options{Domains: 4, MeanSize: 30, Seed: seed})
}

func fit(t *testing.T, ds *dataset.Dataset, cfg Config) *Model {
	t.Helper()
	m, err := Fit(context.Background(), ds.Source(), cfg)
	require.NoError(t, err)
	return m
}

// trainProjection projects the training points.
func trainProjection(t *testing.T, m *Model, ds *dataset.Dataset) *mat.Dense {
	t.Helper()
	z, err := m.Transform(ds.X, TransformOptions{})
	require.NoError(t, err)
	return z
}

// gapCount returns the number of leading eigenvalues, at most k, after which
// the spectrum has a relative gap of at least 1e-3 (so the subspace is well
// defined).
func gapCount(vals []float64, k int) int {
	best := 0
	for j := 1; j <= min(k, len(vals)); j++ {
		if vals[j-1] <= 0 {
			break
		}
		if j == len(vals) || vals[j] <= 0 || vals[j-1]/vals[j] > 1+1e-3 {
			best = j
		}
	}
	return best
}

// exactFit runs the exact path as Fit does (package exact, then FromExact)
// and also returns the exact model, for its jitter.
func exactFit(t *testing.T, ds *dataset.Dataset, cfg Config) (*Model, *exact.Model) {
	t.Helper()
	em, err := exact.Fit(context.Background(), ds, exact.Options{
		Method: cfg.Method, Components: cfg.Components, Lambda: cfg.Lambda, Epsilon: cfg.withDefaults().Epsilon,
		Kernel: kernel.RBF{Sigma: cfg.Sigma}, OutputKernel: kernel.RBF{Sigma: cfg.SigmaY}, Seed: cfg.Seed,
	})
	require.NoError(t, err)
	cfg.Solver = Exact
	m, err := FromExact(em, ds, cfg)
	require.NoError(t, err)
	return m, em
}

// requireSameModel checks the leading k eigenvalues to tol relative, the
// principal cosines of the training projections onto them to 1 - cosTol,
// and the columns (normalizations) to colTol relative, up to sign.
func requireSameModel(t *testing.T, ds *dataset.Dataset, a, b *Model, k int, tol, cosTol, colTol float64) (worstVal, worstCos float64) {
	t.Helper()
	n := ds.N()
	for j := 0; j < k; j++ {
		require.InEpsilon(t, a.Eigenvalues[j], b.Eigenvalues[j], tol, "eigenvalue %d: %v vs %v", j, a.Eigenvalues[j], b.Eigenvalues[j])
		worstVal = max(worstVal, math.Abs(a.Eigenvalues[j]-b.Eigenvalues[j])/math.Abs(a.Eigenvalues[j]))
	}
	za := trainProjection(t, a, ds).Slice(0, n, 0, k).(*mat.Dense)
	zb := trainProjection(t, b, ds).Slice(0, n, 0, k).(*mat.Dense)
	for j, cos := range approx.PrincipalCosines(za, zb) {
		require.GreaterOrEqual(t, cos, 1-cosTol, "principal cosine %d", j)
		worstCos = max(worstCos, 1-cos)
	}
	for j := 0; j < k; j++ {
		x, y := mat.Col(nil, j, za), mat.Col(nil, j, zb)
		s := math.Copysign(1, dot(x, y))
		var num, den float64
		for i := range x {
			num += (x[i] - s*y[i]) * (x[i] - s*y[i])
			den += x[i] * x[i]
		}
		require.Less(t, math.Sqrt(num/den), colTol, "component %d", j)
	}
	return worstVal, worstCos
}

// TestNystromAllPointsEqualsExact is the proof that the low-rank reduction
// is right: with every point a landmark, K = Phi Phi^T up to the cutoff
// RCond, and the reduced problem must reproduce the exact canonical n x n
// solution: eigenvalues to 1e-8 relative and principal-angle cosines of the
// leading components >= 1 - 1e-8.
//
// With lambda = 0 the exact path cannot factor the singular centered
// denominator and uses the ridge em.Jitter (exact.JitterScale tr(K)/n), so
// it is compared with a low-rank fit at Lambda = em.Jitter: the same
// problem. TestLambdaZeroClosedForm checks separately that the low-rank
// lambda = 0 closed form is the limit of small lambda.
func TestNystromAllPointsEqualsExact(t *testing.T) {
	cls := smallClass(1)
	reg := smallReg(2)
	type tc struct {
		name   string
		ds     *dataset.Dataset
		method Method
		lambda float64
	}
	var cases []tc
	// n > nystrom.EigenMax and > lanczosMin: the input (and output) maps
	// are pivoted Cholesky Nystrom maps, the exact path's n x n problems go
	// through Lanczos, and so do the low-rank full-numerator ones.
	big := toy.Classification(toy.Options{Domains: 4, MeanSize: 90, Seed: 8})
	bigReg := toy.Regression(toy.Options{Domains: 4, MeanSize: 75, Seed: 9})
	for _, m := range []Method{DICA, UDICA, KPCA, COIR} {
		for _, lam := range []float64{0, 0.1} {
			cases = append(cases, tc{fmt.Sprintf("big/%v/lambda=%g", m, lam), big, m, lam})
			if m == DICA {
				cases = append(cases, tc{fmt.Sprintf("bigreg/%v/lambda=%g", m, lam), bigReg, m, lam})
			}
		}
	}
	for _, m := range []Method{DICA, UDICA, KPCA, COIR} {
		for _, lam := range []float64{0, 0.1} {
			cases = append(cases, tc{fmt.Sprintf("class/%v/lambda=%g", m, lam), cls, m, lam})
			if m == DICA || m == COIR {
				cases = append(cases, tc{fmt.Sprintf("reg/%v/lambda=%g", m, lam), reg, m, lam})
			}
		}
	}
	var worstVal, worstCos float64
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.ds.N()
			base := Config{Method: c.method, Components: 5, Lambda: c.lambda, Sigma: 2, SigmaY: 1, Seed: 3}
			me, em := exactFit(t, c.ds, base)
			lr := base
			lr.Solver = Nystrom
			lr.Rank = n
			lr.OutputRank = n
			if c.lambda == 0 {
				require.Greater(t, em.Jitter, 0.0)
				lr.Lambda = em.Jitter
			}
			ml := fit(t, c.ds, lr)
			if strings.HasPrefix(c.name, "big") {
				require.Greater(t, n, nystrom.EigenMax, "the pivoted Nystrom path")
			}
			k := gapCount(me.Eigenvalues, me.Positive)
			require.Greater(t, k, 0)
			v, cs := requireSameModel(t, c.ds, me, ml, k, 1e-8, 1e-8, 1e-6)
			worstVal, worstCos = max(worstVal, v), max(worstCos, cs)
		})
	}
	t.Logf("worst relative eigenvalue difference %.2g, worst 1 - cosine %.2g", worstVal, worstCos)
}

// TestLambdaZeroClosedForm checks that the lambda = 0 closed form of the
// low-rank solve (no m x m decomposition for DICA/COIR) is the limit of the
// lambda > 0 reduction as lambda -> 0.
func TestLambdaZeroClosedForm(t *testing.T) {
	for _, c := range []struct {
		name   string
		ds     *dataset.Dataset
		method Method
	}{
		{"class/DICA", smallClass(1), DICA},
		{"class/COIR", smallClass(1), COIR},
		{"class/UDICA", smallClass(1), UDICA},
		{"class/KPCA", smallClass(1), KPCA},
		{"reg/DICA", smallReg(2), DICA},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := Config{Method: c.method, Components: 5, Sigma: 2, SigmaY: 1, Seed: 3, Rank: 60}
			m0 := fit(t, c.ds, base)
			tiny := base
			tiny.Lambda = 1e-12
			m1 := fit(t, c.ds, tiny)
			k := gapCount(m0.Eigenvalues, m0.Positive)
			require.Greater(t, k, 0)
			v, cs := requireSameModel(t, c.ds, m0, m1, k, 1e-8, 1e-8, 1e-6)
			t.Logf("lambda 0 vs 1e-12: eigenvalues %.2g, 1 - cosine %.2g", v, cs)
		})
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestErrorFallsWithRank checks that the eigenvalue error against the exact
// path falls as the number of Nystrom landmarks grows.
func TestErrorFallsWithRank(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 100, Seed: 4})
	base := Config{Method: UDICA, Components: 3, Sigma: 2, Seed: 5}
	ex := base
	ex.Solver = Exact
	me := fit(t, ds, ex)
	prev := math.Inf(1)
	for _, m := range []int{10, 25, 50, 100, 200} {
		cfg := base
		cfg.Rank = m
		ml := fit(t, ds, cfg)
		var e float64
		for j := 0; j < 3; j++ {
			e = max(e, math.Abs(ml.Eigenvalues[j]-me.Eigenvalues[j])/me.Eigenvalues[j])
		}
		t.Logf("m = %d: max relative eigenvalue error %.3g", m, e)
		require.Less(t, e, prev*1.05+1e-12, "error did not fall at m = %d", m)
		prev = e
	}
	require.Less(t, prev, 5e-3)
}

// shardCases are the configurations of the shard and block-size tests:
// classification and regression (RBF output kernel, default OutputRank),
// Nystrom and RFF, lambda = 0 and lambda > 0, and a wide input kernel
// (nearly constant kernel rows, the hardest case for the raw sums).
func shardCases() []struct {
	name string
	ds   *dataset.Dataset
	cfg  Config
} {
	cls, reg := smallClass(6), smallReg(6)
	wide := toy.Classification(toy.Options{Domains: 5, MeanSize: 100, Seed: 4})
	type c = struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
	}
	var out []c
	for _, solver := range []Solver{Nystrom, RFF} {
		for _, lam := range []float64{0, 0.01} {
			tag := fmt.Sprintf("%v/lambda=%g", solver, lam)
			out = append(out,
				c{"class/DICA/" + tag, cls, Config{Method: DICA, Solver: solver, Components: 3, Rank: 40, Sigma: 2, Lambda: lam, Seed: 7}},
				c{"class/UDICA/" + tag, cls, Config{Method: UDICA, Solver: solver, Components: 3, Rank: 40, Sigma: 2, Lambda: lam, Seed: 7}},
				c{"reg/DICA/" + tag, reg, Config{Method: DICA, Solver: solver, Components: 3, Rank: 40, Sigma: 2, Lambda: lam, Seed: 7}},
				c{"reg/COIR/" + tag, reg, Config{Method: COIR, Solver: solver, Components: 3, Rank: 40, Lambda: lam, Seed: 7}},
			)
		}
	}
	part := unlabel(cls, true) // a third of the points, and a domain, unlabelled
	return append(out,
		c{"partial/DICA/nystrom/lambda=0", part, Config{Method: DICA, Components: 3, Rank: 40, Sigma: 2, Seed: 7}},
		c{"partial/COIR/rff/lambda=0.01", part, Config{Method: COIR, Solver: RFF, Components: 3, Rank: 40, Sigma: 2, Lambda: 0.01, Seed: 7}},
		c{"wide/DICA/nystrom/lambda=0.01", wide, Config{Method: DICA, Components: 3, Rank: 200, Sigma: 20, Lambda: 0.01, Seed: 7}},
		c{"wide/UDICA/nystrom/lambda=0", wide, Config{Method: UDICA, Components: 3, Rank: 200, Sigma: 20, Seed: 7}},
		c{"wide/DICA/rff/lambda=0.01", wide, Config{Method: DICA, Solver: RFF, Components: 3, Rank: 200, Sigma: 20, Lambda: 0.01, Seed: 7}},
	)
}

// requireAgree checks that two models of the same plan agree: the same
// number of components, eigenvalues to tol relative, and projections of x
// to tol relative to the largest projected value of each component.
// It returns the worst relative eigenvalue difference.
func requireAgree(t *testing.T, x *mat.Dense, a, b *Model, tol float64, msg string) float64 {
	t.Helper()
	require.Equal(t, a.Positive, b.Positive, msg)
	require.Equal(t, len(a.Eigenvalues), len(b.Eigenvalues), msg)
	var worst float64
	for j, g := range a.Eigenvalues[:a.Positive] {
		d := math.Abs(g-b.Eigenvalues[j]) / math.Abs(g)
		require.LessOrEqual(t, d, tol, "%s: eigenvalue %d: %v vs %v", msg, j, g, b.Eigenvalues[j])
		worst = max(worst, d)
	}
	za, err := a.Transform(x, TransformOptions{})
	require.NoError(t, err)
	zb, err := b.Transform(x, TransformOptions{})
	require.NoError(t, err)
	r, k := za.Dims()
	for j := 0; j < k; j++ {
		var scale, diff float64
		for i := 0; i < r; i++ {
			scale = max(scale, math.Abs(za.At(i, j)))
			diff = max(diff, math.Abs(za.At(i, j)-zb.At(i, j)))
		}
		require.LessOrEqual(t, diff, tol*scale, "%s: projection %d", msg, j)
	}
	return worst
}

// TestShardsMerge checks that statistics of 1, 2 and 7 shards, each
// accumulated separately and sent through the binary encoding, merge into
// the model of the whole (eigenvalues and projections to 1e-10 relative),
// and that a merge across configurations fails.
func TestShardsMerge(t *testing.T) {
	ctx := context.Background()
	var worst float64
	for _, c := range shardCases() {
		t.Run(c.name, func(t *testing.T) {
			ds, cfg := c.ds, c.cfg
			p, err := NewPlan(ctx, ds.Source(), cfg)
			require.NoError(t, err)
			whole, err := p.Accumulate(ctx, ds.Source())
			require.NoError(t, err)
			mw, err := whole.Solve()
			require.NoError(t, err)
			require.Greater(t, mw.Positive, 0)
			n := ds.N()
			for _, shards := range []int{1, 2, 7} {
				var total Stats // the zero Stats adopts the first part
				for s := 0; s < shards; s++ {
					var rows []int
					for i := s; i < n; i += shards {
						rows = append(rows, i)
					}
					st, err := p.Accumulate(ctx, ds.Subset(rows).Source())
					require.NoError(t, err)
					// Round trip through the binary encoding, as separate
					// processes would.
					b, err := st.MarshalBinary()
					require.NoError(t, err)
					var back Stats
					require.NoError(t, back.UnmarshalBinary(b))
					require.NoError(t, total.Merge(&back))
				}
				require.Equal(t, whole.N(), total.N())
				ms, err := total.Solve()
				require.NoError(t, err)
				worst = max(worst, requireAgree(t, ds.X, mw, ms, 1e-10, fmt.Sprintf("%d shards", shards)))
			}
			other := cfg
			other.Seed = 8
			p2, err := NewPlan(ctx, ds.Source(), other)
			require.NoError(t, err)
			st2, err := p2.Accumulate(ctx, ds.Source())
			require.NoError(t, err)
			err = whole.Merge(st2)
			require.ErrorContains(t, err, "different configurations")
		})
	}
	t.Logf("worst relative eigenvalue difference between shards and the whole: %.2g", worst)
}

// TestBlockRowsInvariance checks that the block size of the streaming pass
// changes the model by rounding only: eigenvalues and projections to 1e-10
// relative for BlockRows 1, 7 and 1024 and for one worker. Before the
// output features were mapped per point, BlockRows 7 against 1024 moved
// regression eigenvalues by 1e-5; before the raw sums were shifted, the
// wide kernel (sigma = 20, m = 200) moved by 5e-10: it is held to 1e-11.
func TestBlockRowsInvariance(t *testing.T) {
	var worst, worstWide float64
	for _, c := range shardCases() {
		t.Run(c.name, func(t *testing.T) {
			ref := c.cfg
			ref.BlockRows = 1024
			mr := fit(t, c.ds, ref)
			tol := 1e-10
			if strings.HasPrefix(c.name, "wide") {
				tol = 1e-11
			}
			for _, rows := range []int{1, 7, 64} {
				for _, workers := range []int{1, 2} {
					cfg := c.cfg
					cfg.BlockRows, cfg.Workers = rows, workers
					d := requireAgree(t, c.ds.X, mr, fit(t, c.ds, cfg), tol, fmt.Sprintf("%d rows per block, %d workers", rows, workers))
					if tol < 1e-10 {
						worstWide = max(worstWide, d)
					} else {
						worst = max(worst, d)
					}
				}
			}
		})
	}
	t.Logf("worst relative eigenvalue change with the block size: %.2g (wide kernel %.2g)", worst, worstWide)
}

// TestDeterministicAcrossWorkers checks bit-identical models for 1 and 2
// workers and GOMAXPROCS 1 and 2.
func TestDeterministicAcrossWorkers(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 300, Seed: 9})
	for _, solver := range []Solver{Nystrom, RFF} {
		var ref []byte
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			cfg := Config{Method: DICA, Solver: solver, Components: 3, Rank: 60, Lambda: 0.1, Seed: 10, BlockRows: 64}
			m := fit(t, ds, cfg)
			runtime.GOMAXPROCS(old)
			b, err := m.MarshalBinary()
			require.NoError(t, err)
			if ref == nil {
				ref = b
			} else {
				require.Equal(t, ref, b, "%v: model differs between GOMAXPROCS 1 and 2", solver)
			}
		}
	}
}

// TestSaveLoad checks that a loaded model transforms bit-identically and
// that damaged files are clear errors.
func TestSaveLoad(t *testing.T) {
	for _, solver := range []Solver{Nystrom, RFF, Exact} {
		t.Run(solver.String(), func(t *testing.T) {
			ds := smallClass(11)
			m := fit(t, ds, Config{Method: DICA, Solver: solver, Components: 3, Rank: 30, Lambda: 0.1, Seed: 12})
			path := t.TempDir() + "/m.dica"
			require.NoError(t, m.Save(path))
			back, err := Load(path)
			require.NoError(t, err)
			z1, err := m.Transform(ds.X, TransformOptions{})
			require.NoError(t, err)
			z2, err := back.Transform(ds.X, TransformOptions{})
			require.NoError(t, err)
			require.Equal(t, z1.RawMatrix().Data, z2.RawMatrix().Data)
			require.Equal(t, m.Eigenvalues, back.Eigenvalues)
			require.Equal(t, m.Summary, back.Summary)

			b, err := m.MarshalBinary()
			require.NoError(t, err)
			step := max(1, len(b)/400)
			for cut := 0; cut < len(b); cut += step {
				var x Model
				err := x.UnmarshalBinary(b[:cut])
				require.Error(t, err, "cut at %d of %d", cut, len(b))
			}
			for _, pos := range []int{9, 30, len(b) / 2, len(b) - 5} {
				c := append([]byte(nil), b...)
				c[pos] ^= 0x40
				var x Model
				require.Error(t, x.UnmarshalBinary(c), "corrupted byte %d", pos)
			}
			fut := append([]byte(nil), b...)
			fut[8] = 99
			var x Model
			err = x.UnmarshalBinary(fut)
			require.ErrorContains(t, err, "newer")
		})
	}
}

// TestModelFileCutAtEveryByte cuts a small model at every byte.
func TestModelFileCutAtEveryByte(t *testing.T) {
	ds := smallClass(13)
	m := fit(t, ds, Config{Method: DICA, Components: 2, Rank: 5, Seed: 1})
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	for cut := 0; cut < len(b); cut++ {
		var x Model
		require.Error(t, x.UnmarshalBinary(b[:cut]), "cut at %d", cut)
	}
}

// TestPositiveComponents: a delta kernel with c classes gives exactly c - 1
// components.
func TestPositiveComponents(t *testing.T) {
	for _, c := range []int{2, 3, 4} {
		ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 60, Classes: c, Seed: uint64(c)})
		for _, lam := range []float64{0, 0.1} {
			m := fit(t, ds, Config{Method: DICA, Components: 6, Rank: 50, Lambda: lam, Seed: 2})
			require.Equal(t, c-1, m.Positive, "c = %d, lambda = %g: eigenvalues %v", c, lam, m.Eigenvalues)
			require.Equal(t, 6-(c-1), m.Null())
			z, err := m.Transform(ds.X, TransformOptions{})
			require.NoError(t, err)
			_, k := z.Dims()
			require.Equal(t, c-1, k)
		}
	}
}

// TestBadInput checks that user errors are errors with clear messages.
func TestBadInput(t *testing.T) {
	ds := smallClass(14)
	n := ds.N()
	nan := smallClass(14)
	nan.X.Set(5, 2, math.NaN())
	one := smallClass(14)
	for i := range one.Label {
		one.Label[i] = 0
	}
	single := smallClass(14)
	for i := range single.Domain {
		single.Domain[i] = 0
	}
	single.DomainNames = single.DomainNames[:1]
	dup := mat.NewDense(5, ds.D(), nil)
	for i := 0; i < 5; i++ {
		dup.SetRow(i, ds.X.RawRowView(0))
	}
	cases := []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
		want string
	}{
		{"m > n", ds, Config{Method: DICA, Rank: n + 1}, "landmarks but only"},
		{"m < 1", ds, Config{Method: DICA, Rank: -1}, "rank m"},
		{"odd rff", ds, Config{Method: DICA, Solver: RFF, Rank: 7}, "even"},
		{"duplicate landmarks", ds, Config{Method: DICA, Landmarks: GivenLandmarks, LandmarkPoints: dup}, "duplicate"},
		{"nan", nan, Config{Method: DICA, Rank: 10, Sigma: 1}, "row 6, column 3"},
		{"one class", one, Config{Method: DICA, Rank: 10}, "one class"},
		{"single domain", single, Config{Method: DICA, Rank: 10}, "domain"},
		{"negative lambda", ds, Config{Method: DICA, Lambda: -1}, "lambda"},
		{"components", ds, Config{Method: DICA, Components: -2}, "components"},
		{"paper low rank", ds, Config{Method: DICA, Form: Paper}, "paper form"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Fit(context.Background(), c.ds.Source(), c.cfg)
			require.Error(t, err)
			require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(c.want))
		})
	}
}

// TestCancel checks that a cancelled context stops a fit.
func TestCancel(t *testing.T) {
	ds := smallClass(15)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Fit(ctx, ds.Source(), Config{Method: DICA, Rank: 10})
	require.ErrorIs(t, err, context.Canceled)
}

// TestTransformSinglePoint: inductive projection of one point equals its row
// in a batch projection.
func TestTransformSinglePoint(t *testing.T) {
	ds := smallClass(16)
	m := fit(t, ds, Config{Method: UDICA, Components: 3, Rank: 40, Seed: 1})
	z, err := m.Transform(ds.X, TransformOptions{})
	require.NoError(t, err)
	for _, i := range []int{0, 7, ds.N() - 1} {
		zi, err := m.Transform(ds.X.Slice(i, i+1, 0, ds.D()).(*mat.Dense), TransformOptions{})
		require.NoError(t, err)
		for j := 0; j < 3; j++ {
			require.InDelta(t, z.At(i, j), zi.At(0, j), 1e-12)
		}
	}
}
