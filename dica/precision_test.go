package dica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// TestPrecision32 fits every method, with and without the ridge, on class
// labels and real targets, with Nystrom RBF and Laplacian maps (float32
// kernel rows and Gram sum) and random Fourier features (float32 Gram sum
// only), at Precision 32 and 64, with narrow kernels (well-conditioned
// maps, so the pass runs in float32): the leading eigenvalues and the
// projections of the float32 fit agree with the float64 fit's within the
// bounds below, the two fits differ (the float32 path ran), and the
// float32 fit does not depend on the number of workers. With a wide kernel
// (the median heuristic) the pass stays float64: the same bits as at
// Precision 64.
//
// The bounds: the float32 rounding (about 1e-7 relative in kernel rows and
// 1e-6 in the Gram sums of these 2,000 cells) moves the leading
// eigenvalues by about 1e-6 relative (up to 1e-4 with the ridge, which
// weighs the directions of the Gram sum C below about 1e-6 of its
// largest).
func TestPrecision32(t *testing.T) {
	cls := toy.Classification(toy.Options{Domains: 8, MeanSize: 250, Seed: 3})
	reg := toy.Regression(toy.Options{Domains: 8, MeanSize: 250, Seed: 4})
	for _, tc := range []struct {
		name   string
		ds     *dataset.Dataset
		cfg    Config
		rows32 bool
	}{
		{"dica", cls, Config{Method: DICA, Rank: 150, Sigma: 1}, true},
		{"dica/lambda", cls, Config{Method: DICA, Rank: 150, Sigma: 1, Lambda: 0.1}, true},
		{"udica", cls, Config{Method: UDICA, Rank: 150, Sigma: 1}, true},
		{"kpca", cls, Config{Method: KPCA, Rank: 150, Sigma: 1}, true},
		{"coir", cls, Config{Method: COIR, Rank: 150, Sigma: 1}, true},
		{"dica/targets", reg, Config{Method: DICA, Rank: 120, Sigma: 1}, true},
		{"dica/targets/lambda", reg, Config{Method: DICA, Rank: 120, Sigma: 1, Lambda: 0.01}, true},
		{"udica/laplacian", cls, Config{Method: UDICA, Rank: 150, Kernel: kernel.Laplacian{Sigma: 1}}, true},
		{"dica/laplacian-l1", cls, Config{Method: DICA, Rank: 150, Kernel: kernel.Laplacian{Sigma: 1, L1: true}}, true},
		{"udica/rff", cls, Config{Method: UDICA, Rank: 150, Solver: RFF}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c64 := tc.cfg
			c64.Seed, c64.Components = 1, 3
			c32 := c64
			c32.Precision = 32
			m64 := fit(t, tc.ds, c64)
			m32 := fit(t, tc.ds, c32)
			require.Equal(t, 32, m32.Config().Precision)
			require.Equal(t, 64, m64.Config().Precision)
			require.True(t, m32.plan.SinglePrecision(), "the map is well conditioned: the pass must run in float32")
			require.False(t, m64.plan.SinglePrecision())
			require.Equal(t, tc.rows32, m32.plan.k32 != nil, "float32 kernel rows")
			require.False(t, mat.Equal(m64.W, m32.W), "the float32 fit equals the float64 fit: the float32 path did not run")
			// The components of eigenvalues above the rounding of the null
			// ones, up to the last gap.
			vals := make([]float64, len(m64.Eigenvalues))
			for j, v := range m64.Eigenvalues {
				if v > 1e-9*m64.Eigenvalues[0] {
					vals[j] = v
				}
			}
			k := gapCount(vals, 3)
			require.Greater(t, k, 0)
			tol, cosTol := 1e-5, 1e-8
			if tc.cfg.Lambda > 0 {
				tol, cosTol = 1e-4, 1e-6
			}
			val, cos := requireSameModel(t, tc.ds, m64, m32, k, tol, cosTol, 1e-2)
			t.Logf("%d components: eigenvalues %.2g relative, 1 - principal cosines %.2g", k, val, cos)
			// Any number of workers gives the same bits.
			c1 := c32
			c1.Workers = 1
			c1.BlockRows = 300
			c3 := c1
			c3.Workers = 3
			a, b := fit(t, tc.ds, c1), fit(t, tc.ds, c3)
			require.Equal(t, a.Eigenvalues, b.Eigenvalues)
			require.True(t, mat.Equal(a.W, b.W))
		})
	}
	t.Run("wide kernel", func(t *testing.T) {
		c64 := Config{Method: UDICA, Rank: 150, Seed: 1}
		c32 := c64
		c32.Precision = 32
		m64, m32 := fit(t, cls, c64), fit(t, cls, c32)
		require.False(t, m32.plan.SinglePrecision())
		require.Equal(t, m64.Eigenvalues, m32.Eigenvalues)
		require.True(t, mat.Equal(m64.W, m32.W))
	})
}

// TestPrecision32Conditioning shows why the pass runs in float32 only with
// well-conditioned maps: forced into float32 with a wide kernel (sigma = 4
// on the toy data, about the median heuristic's, where the landmarks'
// kernel matrix has a condition number near the 1e10 cutoff), UDICA finds
// spurious leading eigenvalues made of the rounding noise of the float32
// Gram sum, and float32 kernel rows alone (with a float64 Gram sum) move
// the eigenvalues by far more than with a narrow kernel; the bound of
// float32Safe rejects that map and accepts the narrow one (sigma = 1).
func TestPrecision32Conditioning(t *testing.T) {
	ctx := context.Background()
	all := toy.Regression(toy.Options{Domains: 10, MeanSize: 2000, Seed: 1})
	ds := all.Subset(kernel.SampleRows(all.N(), 1500, 5))
	for _, tc := range []struct {
		sigma float64
		m     int
		safe  bool
		// The eigenvalue error of the forced float32 pass is above
		// (safe: below) full, that of float32 rows alone above (below)
		// rows.
		full, rows float64
	}{{4, 200, false, 0.1, 1e-7}, {4, 500, false, 0.1, 1e-6}, {1, 200, true, 1e-5, 1e-7}, {1, 500, true, 1e-5, 1e-7}} {
		cfg := Config{Method: UDICA, Rank: tc.m, Sigma: tc.sigma, Seed: 1, Components: 10}
		m64 := fit(t, ds, cfg)
		cfg.Precision = 32
		p, err := NewPlan(ctx, ds.Source(), cfg)
		require.NoError(t, err)
		require.Equal(t, tc.safe, p.SinglePrecision(), "sigma %g", tc.sigma)
		var errs [2]float64
		for i, gram32 := range []bool{true, false} {
			// Force float32 rows, with a float32 or a float64 Gram sum.
			q := *p
			q.f32, q.k32, q.pts32 = gram32, kernel.RBF{Sigma: tc.sigma}, kernel.NewPoints(p.in.landmarks)
			st, err := q.Accumulate(ctx, ds.Source())
			require.NoError(t, err)
			m32, err := st.Solve()
			if !tc.safe && errors.Is(err, ErrNoSignal) {
				// The rounding noise of the float32 Gram sum is all the
				// fit sees: its variance comes out negative, and the fit
				// refuses it, which is the worst error there is.
				errs[i] = math.Inf(1)
				continue
			}
			require.NoError(t, err)
			for j := range 10 {
				errs[i] = math.Max(errs[i], math.Abs(m32.Eigenvalues[j]-m64.Eigenvalues[j])/m64.Eigenvalues[j])
			}
		}
		t.Logf("sigma %g, m = %d: forced float32, largest eigenvalue error %.3g; float32 rows alone %.3g", tc.sigma, tc.m, errs[0], errs[1])
		if tc.safe {
			require.Less(t, errs[0], tc.full)
			require.Less(t, errs[1], tc.rows)
		} else {
			require.Greater(t, errs[0], tc.full)
			require.Greater(t, errs[1], tc.rows)
		}
	}
}

// TestPrecisionFiles: models, statistics and plans of either precision are
// written in the versions that record it (model 3, statistics 4, plan 3),
// load back with it and with their fingerprint, re-encode to the same
// bytes, solve to the model Fit returns, and are clear errors when cut or
// corrupted. Statistics of the two precisions do not merge.
func TestPrecisionFiles(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 60, Seed: 5})
	version := func(b []byte) uint32 { return binary.LittleEndian.Uint32(b[8:]) }
	var stats [2]*Stats
	for i, prec := range []int{64, 32} {
		cfg := Config{Method: DICA, Rank: 20, Lambda: 0.1, Sigma: 1, Seed: 1, Precision: prec}
		p, err := NewPlan(ctx, ds.Source(), cfg)
		require.NoError(t, err)
		st, err := p.Accumulate(ctx, ds.Source())
		require.NoError(t, err)
		stats[i] = st
		m, err := st.Solve()
		require.NoError(t, err)
		mb, err := m.MarshalBinary()
		require.NoError(t, err)
		sb, err := st.MarshalBinary()
		require.NoError(t, err)
		pb, err := p.MarshalBinary()
		require.NoError(t, err)
		want := [3]uint32{4, 4, 3}
		require.Equal(t, want, [3]uint32{version(mb), version(sb), version(pb)}, "precision %d: model, statistics and plan versions", prec)

		var m2 Model
		require.NoError(t, m2.UnmarshalBinary(mb))
		require.Equal(t, prec, m2.Config().Precision)
		require.Equal(t, m.plan.Fingerprint(), m2.plan.Fingerprint())
		mb2, err := m2.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, mb, mb2)
		var s2 Stats
		require.NoError(t, s2.UnmarshalBinary(sb))
		require.Equal(t, prec, s2.Plan().Config.Precision)
		ms, err := s2.Solve()
		require.NoError(t, err)
		require.Equal(t, m.Eigenvalues, ms.Eigenvalues)
		var p2 Plan
		require.NoError(t, p2.UnmarshalBinary(pb))
		require.Equal(t, p.Fingerprint(), p2.Fingerprint())
		require.Equal(t, prec == 32, p2.SinglePrecision())
		fm := fit(t, ds, cfg)
		require.Equal(t, fm.Eigenvalues, m.Eigenvalues)
		if prec == 32 {
			requireDamageIsError(t, pb, "plan", func(b []byte) error { return new(Plan).UnmarshalBinary(b) }, 0, planVersion)
			requireDamageIsError(t, sb, "statistics", func(b []byte) error { return new(Stats).UnmarshalBinary(b) }, 1, statsVersion)
		}
	}
	require.NotEqual(t, stats[0].Plan().Fingerprint(), stats[1].Plan().Fingerprint())
	err := stats[0].Merge(stats[1])
	require.ErrorContains(t, err, "precision 64 and 32")
	// SolveWith keeps the precision of the statistics.
	cfg := stats[1].Plan().Config
	cfg.Lambda = 1
	m, err := stats[1].SolveWith(cfg)
	require.NoError(t, err)
	require.Equal(t, 32, m.Config().Precision)
	cfg.Precision = 64
	_, err = stats[1].SolveWith(cfg)
	require.Error(t, err)
}

// TestPrecisionCheck: precisions other than 32 and 64 are errors, and so
// is precision 32 with the exact solver.
func TestPrecisionCheck(t *testing.T) {
	ds := smallClass(1)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Method: DICA, Rank: 10, Precision: 16}, "precision = 16"},
		{Config{Method: DICA, Rank: 10, Precision: -1}, "precision = -1"},
		{Config{Method: DICA, Solver: Exact, Precision: 32}, "exact solver is float64 only"},
	} {
		_, err := Fit(context.Background(), ds.Source(), tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestCongruence checks T^T G T by internal/gemm against gonum's products
// on a rectangular T, for 1 and 3 workers (the same bits).
func TestCongruence(t *testing.T) {
	for _, sh := range []struct{ r, m int }{{1, 1}, {7, 5}, {40, 40}, {130, 97}} {
		tm := mat.NewDense(sh.r, sh.m, nil)
		g := mat.NewSymDense(sh.r, nil)
		for i := range sh.r {
			for j := range sh.m {
				tm.Set(i, j, math.Sin(float64(3*i+7*j+1)))
			}
			for j := i; j < sh.r; j++ {
				g.SetSym(i, j, math.Cos(float64(i*j+2)))
			}
		}
		var tg, want mat.Dense
		tg.Mul(tm.T(), g)
		want.Mul(&tg, tm)
		got := congruence(tm, g, 1)
		require.True(t, mat.EqualApprox(got, &want, 1e-12*float64(sh.r)), fmt.Sprintf("%d x %d", sh.r, sh.m))
		require.True(t, mat.Equal(got, congruence(tm, g, 3)))
	}
}
