package dicabeam

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

func TestSamplerIsBottomK(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 4, MeanSize: 150, Seed: 5})
	cells, err := Cells(context.Background(), ds.Source())
	require.NoError(t, err)
	const k, seed = 100, 42
	// Brute force: the k smallest hashes, ordered by key.
	type kh struct {
		key int64
		h   uint64
	}
	all := make([]kh, len(cells))
	for i := range cells {
		all[i] = kh{cells[i].Key, Hash(seed, &cells[i])}
	}
	slices.SortFunc(all, func(a, b kh) int {
		if a.h < b.h {
			return -1
		}
		return 1
	})
	var want []int64
	for _, x := range all[:k] {
		want = append(want, x.key)
	}
	slices.Sort(want)
	keys := func(cs []Cell) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.Key)
		}
		return out
	}
	// In order, shuffled, and split into accumulators that are merged (as
	// bundles would be), through the coder: always the same sample.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 4 {
		order := rng.Perm(len(cells))
		if trial == 0 {
			for i := range order {
				order[i] = i
			}
		}
		fn := &sampleFn{K: k, Seed: seed}
		parts := make([]sampleAcc, 1+trial*3)
		for i, j := range order {
			q := i % len(parts)
			parts[q] = fn.AddInput(parts[q], cells[j])
		}
		acc := fn.CreateAccumulator()
		for _, p := range parts {
			back, err := decodeSample(encodeSample(p))
			require.NoError(t, err)
			acc = fn.MergeAccumulators(acc, back)
		}
		out := fn.ExtractOutput(acc)
		var got []Cell
		for _, it := range out.Items {
			got = append(got, it.C)
		}
		require.Equal(t, want, keys(got), "trial %d", trial)
	}
	s := NewSampler(k, seed)
	for _, c := range cells {
		s.Add(c)
	}
	require.Equal(t, want, keys(s.Cells()))
	// Another seed, another sample.
	s2 := NewSampler(k, seed+1)
	for _, c := range cells {
		s2.Add(c)
	}
	require.NotEqual(t, want, keys(s2.Cells()))
}

// TestPlanFromSampleEqualsNewPlan: a sample holding every cell in stream
// order gives the plan of dica.NewPlan on the stream, bit for bit.
func TestPlanFromSampleEqualsNewPlan(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		reg  bool
		cfg  dica.Config
	}{
		{"nystrom", false, dica.Config{Method: dica.DICA, Rank: 30, Seed: 1}},
		{"kmeans", false, dica.Config{Method: dica.UDICA, Rank: 20, Landmarks: dica.KMeansLandmarks, Seed: 2}},
		{"regression", true, dica.Config{Method: dica.DICA, Rank: 25, Seed: 3}},
		{"rff", false, dica.Config{Method: dica.DICA, Solver: dica.RFF, Rank: 40, Seed: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := toy.Options{Domains: 3, MeanSize: 60, Seed: 9}
			ds := toy.Classification(o)
			if tc.reg {
				ds = toy.Regression(o)
			}
			src := ds.Source()
			want, err := dica.NewPlan(ctx, src, tc.cfg)
			require.NoError(t, err)
			cells, err := Cells(ctx, src)
			require.NoError(t, err)
			s := NewSampler(sampleSize(tc.cfg), tc.cfg.Seed)
			for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(len(cells)) {
				s.Add(cells[i])
			}
			got, err := PlanFromSample(ctx, s.Cells(), src.Schema(), tc.cfg)
			require.NoError(t, err)
			require.Equal(t, want.Fingerprint(), got.Fingerprint())
			// A sample of part of the data gives another plan.
			part, err := PlanFromSample(ctx, s.Cells()[:len(cells)-1], src.Schema(), tc.cfg)
			require.NoError(t, err)
			if tc.cfg.Solver != dica.RFF || tc.reg {
				require.NotEqual(t, want.Fingerprint(), part.Fingerprint())
			}
		})
	}
	_, err := PlanFromSample(ctx, nil, toy.Classification(toy.Options{Seed: 1}).Source().Schema(), dica.Config{})
	require.ErrorContains(t, err, "no cells")
}

func TestConfigSpecRoundTrip(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 2})
	cfg := dica.Config{Method: dica.UDICA, Components: 3, Lambda: 0.25, Epsilon: 1e-3,
		Kernel: kernel.Laplacian{Sigma: 0.7, L1: true}, OutputKernel: kernel.RBF{Sigma: 0.1}, Sigma: 1.5, SigmaY: 0.3,
		Rank: 7, Landmarks: dica.GivenLandmarks, LandmarkPoints: mat.DenseCopyOf(ds.X.Slice(0, 7, 0, ds.D())),
		Seed: 1<<63 + 5, Sample: 99, OutputRank: 4, LloydIters: 2, RCond: 1e-9, Orthogonal: true, BlockRows: 17}
	spec, err := newConfigSpec(cfg)
	require.NoError(t, err)
	// Through JSON, as Beam serializes DoFns.
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	var back configSpec
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, cfg, back.config())
	_, err = newConfigSpec(dica.Config{Solver: dica.Exact})
	require.ErrorContains(t, err, "exact")
}
