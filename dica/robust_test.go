package dica

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/lanczos"
	"github.com/dicalab/dica/toy"
)

// myKernel is a user-defined kernel the file formats cannot describe.
type myKernel struct{}

func (myKernel) Eval(x, z []float64) float64 { return kernel.RBF{Sigma: 1}.Eval(x, z) }
func (myKernel) Block(dst *mat.Dense, x, z mat.Matrix) {
	kernel.RBF{Sigma: 1}.Block(dst, x, z)
}
func (myKernel) String() string { return "mine" }

// TestBadConfig checks that configurations a user can get wrong are errors,
// not panics, from Fit and NewPlan alike.
func TestBadConfig(t *testing.T) {
	ctx := context.Background()
	cls, reg := smallClass(14), smallReg(14)
	cases := []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
		want string
	}{
		{"kernel pointer", cls, Config{Method: DICA, Rank: 10, Kernel: &kernel.RBF{Sigma: 1}}, "pass the value kernel.RBF, not a pointer"},
		{"user kernel", cls, Config{Method: DICA, Rank: 10, Kernel: myKernel{}}, "kernel dica.myKernel (mine) is not supported"},
		{"user kernel exact", cls, Config{Method: DICA, Solver: Exact, Kernel: myKernel{}}, "is not supported"},
		{"output kernel pointer", reg, Config{Method: DICA, Rank: 10, OutputKernel: &kernel.Laplacian{Sigma: 1}}, "(output kernel)"},
		{"user output kernel", reg, Config{Method: DICA, Rank: 10, OutputKernel: myKernel{}}, "(output kernel)"},
		{"kernel sigma", cls, Config{Method: DICA, Rank: 10, Kernel: kernel.RBF{Sigma: -1}}, "sigma = -1"},
		{"kernel sigma nan", cls, Config{Method: DICA, Rank: 10, Kernel: kernel.Laplacian{Sigma: math.NaN()}}, "sigma = NaN"},
		{"rcond nan rff", cls, Config{Method: DICA, Solver: RFF, Rank: 10, RCond: math.NaN()}, "rcond = NaN"},
		{"rcond negative", cls, Config{Method: DICA, Rank: 10, RCond: -1}, "need 0 < rcond < 1 (or 0 for the default 1e-10)"},
		{"rcond one", cls, Config{Method: DICA, Rank: 10, RCond: 1}, "rcond = 1"},
		{"orthogonal nystrom", cls, Config{Method: DICA, Rank: 10, Orthogonal: true}, "orthogonal random features need the rff solver, not nystrom"},
		{"orthogonal exact", cls, Config{Method: DICA, Solver: Exact, Orthogonal: true}, "not exact"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Fit(ctx, c.ds.Source(), c.cfg)
			require.ErrorContains(t, err, c.want)
			if c.cfg.Solver != Exact {
				_, err = NewPlan(ctx, c.ds.Source(), c.cfg)
				require.ErrorContains(t, err, c.want)
			}
		})
	}
	// FromExact with a kernel of its own: an error, not a panic.
	em, err := exact.Fit(ctx, cls, exact.Options{Method: UDICA, Components: 2, Kernel: myKernel{}})
	require.NoError(t, err)
	_, err = FromExact(em, cls, Config{Method: UDICA, Components: 2})
	require.ErrorContains(t, err, "is not supported")
	// Orthogonal features with the rff solver are fine.
	_, err = Fit(ctx, cls.Source(), Config{Method: DICA, Solver: RFF, Rank: 10, Orthogonal: true, Seed: 1})
	require.NoError(t, err)
}

// TestZeroStats checks the zero Stats: it adopts a copy of what is merged
// into it, merging it into statistics is a no-op, and the methods that need
// a plan return errors.
func TestZeroStats(t *testing.T) {
	ctx := context.Background()
	ds := smallClass(5)
	p, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 20, Lambda: 0.1, Seed: 1})
	require.NoError(t, err)
	a, err := p.Accumulate(ctx, ds.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7}).Source())
	require.NoError(t, err)
	whole, err := p.Accumulate(ctx, ds.Source())
	require.NoError(t, err)
	aBytes, err := a.MarshalBinary()
	require.NoError(t, err)

	var z Stats
	_, err = z.Solve()
	require.ErrorContains(t, err, "without a plan")
	_, err = z.MarshalBinary()
	require.ErrorContains(t, err, "without a plan")
	require.ErrorContains(t, z.AddBlock(&dataset.Block{Rows: 1}, nil, nil), "without a plan")
	require.ErrorContains(t, z.JoinGram(nil), "without a plan")

	var total Stats
	require.NoError(t, total.Merge(&z)) // empty + empty
	require.NoError(t, total.Merge(a))
	require.NoError(t, total.Merge(whole))
	// a was copied, not shared.
	b, err := a.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, aBytes, b)
	require.Equal(t, a.N()+whole.N(), total.N())
	n := whole.N()
	require.NoError(t, whole.Merge(&z)) // no-op
	require.Equal(t, n, whole.N())
}

// TestOverflow: data whose features overflow float64 in the statistics
// (a value of 1e200 under a linear kernel) is an error naming the overflow
// for every method, not a panic in the eigensolver (as it was); under an RBF
// kernel the same data fits.
func TestOverflow(t *testing.T) {
	for _, m := range []Method{DICA, UDICA, KPCA, COIR} {
		ds := smallClass(3)
		ds.X.Set(0, 0, 1e200)
		_, err := Fit(context.Background(), ds.Source(), Config{Method: m, Rank: 6, Kernel: kernel.Linear{}, Seed: 1})
		require.ErrorContains(t, err, "overflow", "%v", m)
		_, err = Fit(context.Background(), ds.Source(), Config{Method: m, Rank: 6, Sigma: 1, Seed: 1})
		require.NoError(t, err, "%v", m)
	}
}

// TestMergeAssociative checks (a+b)+c against a+(b+c) for shards with
// different domains and classes, on every statistic (counts exactly, sums to
// 1e-12 relative), through the binary encoding.
func TestMergeAssociative(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
	}{
		{"class", smallClass(21), Config{Method: DICA, Rank: 25, Lambda: 0.1, Seed: 2}},
		{"regression", smallReg(22), Config{Method: DICA, Rank: 25, Lambda: 0.1, Seed: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := c.ds
			p, err := NewPlan(ctx, ds.Source(), c.cfg)
			require.NoError(t, err)
			// Shards by domain: a = domains 0, 1; b = 1, 2; c = 2, 3 (and the
			// rows are split unevenly), so the merges meet new names in
			// different orders.
			var ra, rb, rc []int
			for i := 0; i < ds.N(); i++ {
				switch g := ds.Domain[i]; {
				case g == 0 || g == 1 && i%3 == 0:
					ra = append(ra, i)
				case g == 1 || g == 2 && i%2 == 0:
					rb = append(rb, i)
				default:
					rc = append(rc, i)
				}
			}
			acc := func(rows []int) *Stats {
				st, err := p.Accumulate(ctx, ds.Subset(rows).Source())
				require.NoError(t, err)
				return st
			}
			copyOf := func(s *Stats) *Stats {
				b, err := s.MarshalBinary()
				require.NoError(t, err)
				var o Stats
				require.NoError(t, o.UnmarshalBinary(b))
				return &o
			}
			a, b, cc := acc(ra), acc(rb), acc(rc)
			left := copyOf(a)
			require.NoError(t, left.Merge(b))
			require.NoError(t, left.Merge(cc))
			bc := copyOf(b)
			require.NoError(t, bc.Merge(cc))
			right := copyOf(a)
			require.NoError(t, right.Merge(bc))
			require.Equal(t, left.N(), right.N())
			require.Equal(t, countsByName(left.Domains, left.DomainCounts()), countsByName(right.Domains, right.DomainCounts()))
			require.Equal(t, countsByName(left.Classes, left.ClassCounts()), countsByName(right.Classes, right.ClassCounts()))
			rowsByName := func(names []string, rows [][]float64) map[string][]float64 {
				m := map[string][]float64{}
				for i, n := range names {
					m[n] = rows[i]
				}
				return m
			}
			close := func(x, y []float64, what string) {
				require.Equal(t, len(x), len(y), what)
				var scale float64
				for _, v := range x {
					scale = max(scale, math.Abs(v))
				}
				for i := range x {
					require.LessOrEqual(t, math.Abs(x[i]-y[i]), 1e-12*scale, "%s[%d]", what, i)
				}
			}
			ld, rd := rowsByName(left.Domains, left.acc.domSum), rowsByName(right.Domains, right.acc.domSum)
			for name, v := range ld {
				close(v, rd[name], "domain sum "+name)
			}
			lc, rcl := rowsByName(left.Classes, left.acc.clsSum), rowsByName(right.Classes, right.acc.clsSum)
			for name, v := range lc {
				close(v, rcl[name], "class sum "+name)
			}
			close(left.acc.gramSum, right.acc.gramSum, "Gram sum")
			close(left.acc.sumPsi, right.acc.sumPsi, "sum psi")
			close(left.acc.sumPsiPsi, right.acc.sumPsiPsi, "sum psi psi^T")
			close(left.acc.sumPhiPsi, right.acc.sumPhiPsi, "sum phi psi^T")
			// And the models agree.
			ml, err := left.Solve()
			require.NoError(t, err)
			mr, err := right.Solve()
			require.NoError(t, err)
			// (The smallest of the 10 eigenvalues are 1e-6 of the largest:
			// the sums' 1e-12 becomes 2e-12 there.)
			requireAgree(t, ds.X, ml, mr, 1e-10, "(a+b)+c vs a+(b+c)")
		})
	}
}

// resealed returns data (a sealed file) with its version set to v and a
// valid checksum.
func resealed(data []byte, v uint32) []byte {
	n := binary.LittleEndian.Uint64(data[12:])
	return seal(string(data[:8]), v, data[headerLen:headerLen+int(n)])
}

// requireDamageIsError cuts data at every byte and corrupts every byte
// (one at a time), and checks that decode returns a clear error and never
// panics; it also checks a future version and, when old > 0, an older one.
func requireDamageIsError(t *testing.T, data []byte, what string, decode func([]byte) error, old, newest uint32) {
	t.Helper()
	for cut := 0; cut < len(data); cut++ {
		err := decode(data[:cut])
		require.Error(t, err, "cut at %d of %d", cut, len(data))
		msg := err.Error()
		require.True(t, strings.Contains(msg, "truncated") || strings.Contains(msg, "not a "+what+" file"),
			"cut at %d: unclear error %q", cut, msg)
	}
	for pos := 0; pos < len(data); pos++ {
		c := append([]byte(nil), data...)
		c[pos] ^= 0x10
		err := decode(c)
		require.Error(t, err, "corrupted byte %d of %d", pos, len(data))
		require.Contains(t, err.Error(), "dica: ", "corrupted byte %d", pos)
	}
	v := binary.LittleEndian.Uint32(data[8:])
	require.ErrorContains(t, decode(resealed(data, newest+1)), "newer than this program's")
	if old > 0 {
		require.ErrorContains(t, decode(resealed(data, old)), "from an older dica")
	}
	require.NoError(t, decode(resealed(data, v)))
}

// TestBinaryDamage: Stats, Plan and GramPart files cut at every byte,
// corrupted at every byte, of a future version or (statistics) of the
// older version whose sums meant something else, are clear errors.
func TestBinaryDamage(t *testing.T) {
	ctx := context.Background()
	ds := smallReg(31)
	p, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 4, OutputRank: 3, Lambda: 0.1, Seed: 1})
	require.NoError(t, err)
	st, err := p.Accumulate(ctx, ds.Source())
	require.NoError(t, err)
	pb, err := p.MarshalBinary()
	require.NoError(t, err)
	requireDamageIsError(t, pb, "plan", func(b []byte) error { return new(Plan).UnmarshalBinary(b) }, 0, planVersion)
	sb, err := st.MarshalBinary()
	require.NoError(t, err)
	requireDamageIsError(t, sb, "statistics", func(b []byte) error { return new(Stats).UnmarshalBinary(b) }, 1, statsVersion)
	gp := st.SplitGram(2)
	gb, err := gp[1].MarshalBinary()
	require.NoError(t, err)
	requireDamageIsError(t, gb, "Gram part", func(b []byte) error { return new(GramPart).UnmarshalBinary(b) }, 1, gramVersion)
	// A plan is not statistics, and the other way round.
	require.ErrorContains(t, new(Stats).UnmarshalBinary(pb), "not a statistics file")
	require.ErrorContains(t, new(Plan).UnmarshalBinary(sb), "not a plan file")
}

// TestTopEigenFallback checks that topEigen accepts only converged Lanczos
// results (or an exhausted reachable space, whose missing pairs are zero),
// and otherwise falls back to the dense eigendecomposition.
func TestTopEigenFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, k := lanczosMin+20, 8
	x := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x.Set(i, j, rng.NormFloat64()*math.Pow(0.97, float64(j)))
		}
	}
	var a mat.SymDense
	a.SymOuterK(1, x)
	var es mat.EigenSym
	require.True(t, es.Factorize(&a, false))
	ref := es.Values(nil)

	type trace struct {
		path   string
		status lanczos.Status
		ran    bool
	}
	var got []trace
	eigenTrace = func(path string, st lanczos.Status, ran bool) { got = append(got, trace{path, st, ran}) }
	defer func() { eigenTrace, lanczosHook = nil, nil }()
	check := func(vals []float64) {
		for j := 0; j < k; j++ {
			require.InEpsilon(t, ref[n-1-j], vals[j], 1e-10, "eigenvalue %d", j)
		}
	}

	// Default settings: Lanczos converges and is used.
	vals, _ := topEigen(&a, k)
	check(vals)
	require.Equal(t, []trace{{"lanczos", lanczos.Converged, true}}, got)

	// A budget of 30 matrix-vector products: BudgetExceeded, dense fallback.
	got = nil
	lanczosHook = func(s *lanczos.Settings) { s.MaxMatvecs = 30 }
	vals, vecs := topEigen(&a, k)
	check(vals)
	require.Equal(t, []trace{{"dense", lanczos.BudgetExceeded, true}}, got)
	for j := 0; j < k; j++ {
		v := mat.NewVecDense(n, mat.Col(nil, j, vecs))
		var av mat.VecDense
		av.MulVec(&a, v)
		av.AddScaledVec(&av, -vals[j], v)
		require.Less(t, av.Norm(2), 1e-9*ref[n-1], "residual %d", j)
	}

	// Invalid settings (a Lanczos error): dense fallback too.
	got = nil
	lanczosHook = func(s *lanczos.Settings) { s.Tol = -1 }
	vals, _ = topEigen(&a, k)
	check(vals)
	require.Equal(t, []trace{{"dense", 0, false}}, got)

	// An exactly rank-3 matrix: the reachable space is exhausted, the
	// three nonzero pairs come from Lanczos and the rest are zero.
	got = nil
	lanczosHook = nil
	var low mat.SymDense
	low.SymOuterK(1, x.Slice(0, n, 0, 3))
	var es3 mat.EigenSym
	require.True(t, es3.Factorize(&low, false))
	ref3 := es3.Values(nil)
	vals, vecs = topEigen(&low, k)
	require.Len(t, got, 1)
	require.Equal(t, "lanczos", got[0].path)
	require.Equal(t, lanczos.ReachableSpaceExhausted, got[0].status)
	for j := 0; j < 3; j++ {
		require.InEpsilon(t, ref3[n-1-j], vals[j], 1e-10)
	}
	for j := 3; j < k; j++ {
		require.Zero(t, vals[j])
		require.Zero(t, mat.Norm(vecs.ColView(j), 2))
	}
}

// TestRFFErrorFallsWithRank checks that the eigenvalue error of random
// Fourier features (plain and orthogonal) against the exact path falls as
// m grows, on average over seeds, for UDICA and DICA; and that orthogonal
// features are better on average.
func TestRFFErrorFallsWithRank(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 80, Seed: 4})
	ranks := []int{24, 50, 100, 200, 400}
	const seeds = 16
	for _, method := range []Method{UDICA, DICA} {
		base := Config{Method: method, Components: 2, Sigma: 2}
		ex := base
		ex.Solver = Exact
		me := fit(t, ds, ex)
		k := min(2, me.Positive)
		mean := map[bool][]float64{}
		for _, orth := range []bool{false, true} {
			prev := math.Inf(1)
			for _, m := range ranks {
				var sum float64
				for s := uint64(0); s < seeds; s++ {
					cfg := base
					cfg.Solver, cfg.Rank, cfg.Orthogonal, cfg.Seed = RFF, m, orth, 100+s
					ml := fit(t, ds, cfg)
					var e float64
					for j := 0; j < k; j++ {
						e = max(e, math.Abs(ml.Eigenvalues[j]-me.Eigenvalues[j])/me.Eigenvalues[j])
					}
					sum += e
				}
				avg := sum / seeds
				mean[orth] = append(mean[orth], avg)
				require.Less(t, avg, prev, "%v, orthogonal %v: mean error did not fall at m = %d", method, orth, m)
				prev = avg
			}
			require.Less(t, mean[orth][len(ranks)-1], mean[orth][0]/3, "%v, orthogonal %v: m = 400 not 3x better than m = 24", method, orth)
		}
		var plain, orth float64
		for i := range ranks {
			plain += mean[false][i]
			orth += mean[true][i]
		}
		require.Less(t, orth, plain, "%v: orthogonal features not better on average", method)
		t.Logf("%v, mean max relative eigenvalue error over %d seeds at m = %v: rff %.3g, orthogonal %.3g", method, seeds, ranks, mean[false], mean[true])
	}
}

// TestConcurrentTransform runs Transform from several goroutines at once
// on Nystrom and RFF models and checks every result bit for bit against a
// sequential Transform with GOMAXPROCS = 1.
func TestConcurrentTransform(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 400, Seed: 17})
	n, d := ds.N(), ds.D()
	for _, solver := range []Solver{Nystrom, RFF} {
		t.Run(solver.String(), func(t *testing.T) {
			m := fit(t, ds, Config{Method: DICA, Solver: solver, Components: 2, Rank: 60, Lambda: 0.1, Seed: 3})
			old := runtime.GOMAXPROCS(1)
			ref, err := m.Transform(ds.X, TransformOptions{})
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			const G = 6
			results := make([]*mat.Dense, G)
			errs := make([]error, G)
			var wg sync.WaitGroup
			for g := 0; g < G; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Different offsets, so the 512-row blocks differ.
					lo := g * 37
					results[g], errs[g] = m.Transform(ds.X.Slice(lo, n, 0, d).(*mat.Dense), TransformOptions{})
				}()
			}
			wg.Wait()
			for g := 0; g < G; g++ {
				require.NoError(t, errs[g])
				lo := g * 37
				r, k := results[g].Dims()
				require.Equal(t, n-lo, r)
				for i := 0; i < r; i++ {
					for j := 0; j < k; j++ {
						require.Equal(t, math.Float64bits(ref.At(lo+i, j)), math.Float64bits(results[g].At(i, j)), "goroutine %d, row %d, component %d", g, lo+i, j)
					}
				}
			}
		})
	}
}

// TestDeterministicLarge checks bit-identical models for GOMAXPROCS 1 and
// 2 at a size that exercises the pivoted Nystrom map (m > 256) and the
// Lanczos eigensolver (feature dimension >= lanczosMin).
func TestDeterministicLarge(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 150, Dim: 8, Seed: 19})
	var paths []string
	eigenTrace = func(path string, _ lanczos.Status, _ bool) { paths = append(paths, path) }
	defer func() { eigenTrace = nil }()
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"nystrom/UDICA", Config{Method: UDICA, Components: 4, Rank: 320, Seed: 10, BlockRows: 50}},
		{"nystrom/UDICA/lambda", Config{Method: UDICA, Components: 4, Rank: 320, Lambda: 0.1, Seed: 10, BlockRows: 50}},
		{"nystrom/DICA/lambda", Config{Method: DICA, Components: 4, Rank: 320, Lambda: 0.1, Seed: 10, BlockRows: 50}},
		{"rff/KPCA", Config{Method: KPCA, Solver: RFF, Components: 4, Rank: 320, Seed: 10, BlockRows: 50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ref []byte
			for _, procs := range []int{1, 2} {
				paths = nil
				old := runtime.GOMAXPROCS(procs)
				m := fit(t, ds, c.cfg)
				runtime.GOMAXPROCS(old)
				require.GreaterOrEqual(t, m.Map().Dim(), lanczosMin, "feature dimension")
				if c.cfg.Method != DICA {
					require.Contains(t, paths, "lanczos", "the Lanczos path")
				}
				b, err := m.MarshalBinary()
				require.NoError(t, err)
				if ref == nil {
					ref = b
				} else {
					require.Equal(t, ref, b, "model differs between GOMAXPROCS 1 and 2")
				}
			}
		})
	}
}

// TestOutputShiftIsMeanFeature checks the derived shifts of a plan: the
// input shift is minus the mean kernel row of the landmarks, the output
// shift the mean output feature of the output landmarks (brute force).
func TestOutputShiftIsMeanFeature(t *testing.T) {
	ds := smallReg(41)
	p, err := NewPlan(context.Background(), ds.Source(), Config{Method: DICA, Rank: 12, OutputRank: 9, Seed: 2})
	require.NoError(t, err)
	lm := p.in.landmarks
	m, _ := lm.Dims()
	for j := 0; j < m; j++ {
		var s float64
		for i := 0; i < m; i++ {
			s += p.Config.Kernel.Eval(lm.RawRowView(i), lm.RawRowView(j))
		}
		require.InDelta(t, -s/float64(m), p.negInShift[j], 1e-14)
	}
	var feat mat.Dense
	p.outMap.Map(&feat, p.out.landmarks)
	r, c := feat.Dims()
	require.Len(t, p.outShift, c)
	for j := 0; j < c; j++ {
		var s float64
		for i := 0; i < r; i++ {
			s += feat.At(i, j)
		}
		require.InDelta(t, s/float64(r), p.outShift[j], 1e-9, fmt.Sprintf("feature %d", j))
	}
}
