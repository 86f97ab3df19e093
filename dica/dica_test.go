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

// TestNystromAllPointsEqualsExact is the proof that the low-rank reduction
// is right: with every point a landmark, K = Phi Phi^T exactly, and the
// reduced problem must reproduce the exact canonical n x n solution.
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
	// n > lanczosMin: the m x m and n x n full-rank problems go through
	// Lanczos on both sides.
	big := toy.Classification(toy.Options{Domains: 4, MeanSize: 90, Seed: 8})
	for _, m := range []Method{UDICA, KPCA} {
		for _, lam := range []float64{0, 0.1} {
			cases = append(cases, tc{fmt.Sprintf("big/%v/lambda=%g", m, lam), big, m, lam})
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
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.ds.N()
			base := Config{Method: c.method, Components: 5, Lambda: c.lambda, Sigma: 2, SigmaY: 1, Seed: 3}
			ex := base
			ex.Solver = Exact
			lr := base
			lr.Solver = Nystrom
			lr.Rank = n
			lr.OutputRank = n
			me := fit(t, c.ds, ex)
			ml := fit(t, c.ds, lr)
			k := gapCount(me.Eigenvalues, me.Positive)
			require.Greater(t, k, 0)
			// With lambda = 0 the exact path factors D with a ridge of
			// exact.JitterScale (1e-8) relative, which moves its eigenvalues
			// by that relative order; the low-rank path needs no ridge.
			tol := 1e-8
			if c.lambda == 0 {
				tol = 2 * exact.JitterScale
			}
			for j := 0; j < k; j++ {
				require.InEpsilon(t, me.Eigenvalues[j], ml.Eigenvalues[j], tol, "eigenvalue %d: exact %v low-rank %v", j, me.Eigenvalues[j], ml.Eigenvalues[j])
			}
			ze := trainProjection(t, me, c.ds).Slice(0, n, 0, k).(*mat.Dense)
			zl := trainProjection(t, ml, c.ds).Slice(0, n, 0, k).(*mat.Dense)
			for j, cos := range approx.PrincipalCosines(ze, zl) {
				require.GreaterOrEqual(t, cos, 1-1e-8, "principal cosine %d", j)
			}
			// The normalizations agree too: columns equal up to sign.
			for j := 0; j < k; j++ {
				a, b := mat.Col(nil, j, ze), mat.Col(nil, j, zl)
				s := math.Copysign(1, dot(a, b))
				var num, den float64
				for i := range a {
					num += (a[i] - s*b[i]) * (a[i] - s*b[i])
					den += a[i] * a[i]
				}
				require.Less(t, math.Sqrt(num/den), 1e-6, "component %d", j)
			}
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

// TestShardsMerge checks that statistics of 1, 2 and 7 shards merge into the
// model of the whole, and that a merge across configurations fails.
func TestShardsMerge(t *testing.T) {
	ctx := context.Background()
	for _, method := range []Method{DICA, UDICA} {
		ds := smallClass(6)
		cfg := Config{Method: method, Components: 3, Rank: 40, Sigma: 2, Lambda: 0.01, Seed: 7}
		p, err := NewPlan(ctx, ds.Source(), cfg)
		require.NoError(t, err)
		whole, err := p.Accumulate(ctx, ds.Source())
		require.NoError(t, err)
		mw, err := whole.Solve()
		require.NoError(t, err)
		n := ds.N()
		for _, shards := range []int{1, 2, 7} {
			var total *Stats
			for s := 0; s < shards; s++ {
				var rows []int
				for i := s; i < n; i += shards {
					rows = append(rows, i)
				}
				part := ds.Subset(rows)
				st, err := p.Accumulate(ctx, part.Source())
				require.NoError(t, err)
				// Round trip through the binary encoding, as separate
				// processes would.
				b, err := st.MarshalBinary()
				require.NoError(t, err)
				var back Stats
				require.NoError(t, back.UnmarshalBinary(b))
				if total == nil {
					total = &back
				} else {
					require.NoError(t, total.Merge(&back))
				}
			}
			ms, err := total.Solve()
			require.NoError(t, err)
			require.Equal(t, mw.Positive, ms.Positive)
			for j, g := range mw.Eigenvalues[:mw.Positive] {
				require.InEpsilon(t, g, ms.Eigenvalues[j], 1e-10, "%v, %d shards, eigenvalue %d", method, shards, j)
			}
			require.Equal(t, len(mw.Eigenvalues), len(ms.Eigenvalues))
		}
		other := cfg
		other.Seed = 8
		p2, err := NewPlan(ctx, ds.Source(), other)
		require.NoError(t, err)
		st2, err := p2.Accumulate(ctx, ds.Source())
		require.NoError(t, err)
		err = whole.Merge(st2)
		require.Error(t, err)
		require.Contains(t, err.Error(), "different configurations")
	}
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
