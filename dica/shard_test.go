package dica

import (
	"context"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
)

func TestPlanBinaryRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
	}{
		{"nystrom-dica", smallClass(1), Config{Method: DICA, Rank: 30, Seed: 3}},
		{"kmeans-udica", smallClass(2), Config{Method: UDICA, Rank: 20, Landmarks: KMeansLandmarks, Seed: 4}},
		{"rff-regression", smallReg(3), Config{Method: DICA, Solver: RFF, Rank: 40, Seed: 5}},
		{"nystrom-regression", smallReg(4), Config{Method: DICA, Rank: 25, Seed: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(ctx, tc.ds.Source(), tc.cfg)
			require.NoError(t, err)
			b, err := p.MarshalBinary()
			require.NoError(t, err)
			var q Plan
			require.NoError(t, q.UnmarshalBinary(b))
			require.Equal(t, p.Fingerprint(), q.Fingerprint())
			require.Equal(t, p.Schema, q.Schema)
			// The decoded plan accumulates the same statistics.
			s1, err := p.Accumulate(ctx, tc.ds.Source())
			require.NoError(t, err)
			s2, err := q.Accumulate(ctx, tc.ds.Source())
			require.NoError(t, err)
			b1, _ := s1.MarshalBinary()
			b2, _ := s2.MarshalBinary()
			require.Equal(t, b1, b2)
			// Corruption and truncation are errors.
			for _, cut := range []int{0, 7, len(b) / 2, len(b) - 1} {
				require.Error(t, new(Plan).UnmarshalBinary(b[:cut]), "cut at %d", cut)
			}
			bad := append([]byte(nil), b...)
			bad[len(bad)/2] ^= 1
			require.ErrorContains(t, new(Plan).UnmarshalBinary(bad), "checksum")
			st, _ := s1.MarshalBinary()
			require.ErrorContains(t, new(Plan).UnmarshalBinary(st), "not a plan")
		})
	}
}

// addBlocks feeds the source's blocks of the given size to fresh statistics.
func addBlocks(t *testing.T, p *Plan, src dataset.Source, rows int) *Stats {
	t.Helper()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	s := p.NewStats()
	var b dataset.Block
	for {
		_, err := r.Read(&b, rows)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.NoError(t, s.AddBlock(&b, r.Domains(), r.Classes()))
	}
	return s
}

func TestAddBlockEqualsAccumulate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
		tol  float64
	}{
		{"dica", smallClass(11), Config{Method: DICA, Rank: 30, Sigma: 1.5, Seed: 3}, 1e-11},
		{"udica", smallClass(12), Config{Method: UDICA, Rank: 30, Seed: 3}, 1e-11},
		// The default OutputRank (30 landmarks on 1-D targets, a nearly
		// singular K_rr): the output features are mapped point by point, so
		// T_y = K_rr^{-1/2} never amplifies the rounding of sums.
		{"regression", smallReg(13), Config{Method: DICA, Rank: 30, Seed: 3}, 1e-11},
		{"lambda", smallClass(14), Config{Method: DICA, Rank: 30, Lambda: 0.1, Seed: 3}, 1e-11},
		{"partial labels", unlabel(smallClass(15), true), Config{Method: DICA, Rank: 30, Sigma: 1.5, Seed: 3}, 1e-11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(ctx, tc.ds.Source(), tc.cfg)
			require.NoError(t, err)
			whole, err := p.Accumulate(ctx, tc.ds.Source())
			require.NoError(t, err)
			mw, err := whole.Solve()
			require.NoError(t, err)
			for _, rows := range []int{1, 7, 1000} {
				s := addBlocks(t, p, tc.ds.Source(), rows)
				require.Equal(t, whole.N(), s.N())
				// Names come in order of first use, the memory source's
				// reader lists them all: compare counts by name.
				require.Equal(t, countsByName(whole.Domains, whole.DomainCounts()), countsByName(s.Domains, s.DomainCounts()))
				require.Equal(t, countsByName(whole.Classes, whole.ClassCounts()), countsByName(s.Classes, s.ClassCounts()))
				ms, err := s.Solve()
				require.NoError(t, err)
				require.Equal(t, mw.Positive, ms.Positive)
				for j, g := range mw.Eigenvalues[:mw.Positive] {
					require.InEpsilon(t, g, ms.Eigenvalues[j], tc.tol, "%d rows per block, eigenvalue %d", rows, j)
				}
			}
		})
	}
}

func countsByName(names []string, counts []int64) map[string]int64 {
	m := map[string]int64{}
	for i, n := range names {
		m[n] = counts[i]
	}
	return m
}

func TestAddBlockNames(t *testing.T) {
	ds := smallClass(21)
	p, err := NewPlan(context.Background(), ds.Source(), Config{Method: DICA, Rank: 10, Seed: 1})
	require.NoError(t, err)
	s := p.NewStats()
	d := ds.D()
	b := dataset.Block{Rows: 2, D: d, X: make([]float64, 2*d), Domain: []int{2, 2}, Label: []int{1, 0}}
	// Only the names the rows use are added, in order of use.
	require.NoError(t, s.AddBlock(&b, []string{"a", "b", "c"}, []string{"x", "y"}))
	require.Equal(t, []string{"c"}, s.Domains)
	require.Equal(t, []string{"y", "x"}, s.Classes)
	require.Equal(t, []int64{1, 1}, s.ClassCounts())
	b.Domain = []int{0, 1}
	require.NoError(t, s.AddBlock(&b, []string{"c", "a"}, []string{"x", "y"}))
	require.Equal(t, []string{"c", "a"}, s.Domains)
	require.Equal(t, []int64{3, 1}, s.DomainCounts())
	require.Equal(t, []int64{2, 2}, s.ClassCounts())
	// Errors: a domain number without a name, a missing label, a bad shape,
	// a value that is not finite.
	b.Domain = []int{0, 3}
	require.ErrorContains(t, s.AddBlock(&b, []string{"c", "a"}, []string{"x", "y"}), "domain number")
	b.Domain = []int{0, 0}
	nl := b
	nl.Label = nil
	require.ErrorContains(t, s.AddBlock(&nl, []string{"c"}, nil), "no class labels")
	bd := b
	bd.D = d + 1
	require.ErrorContains(t, s.AddBlock(&bd, []string{"c"}, []string{"x", "y"}), "inputs")
	b.X[1] = math.NaN()
	require.ErrorContains(t, s.AddBlock(&b, []string{"c"}, []string{"x", "y"}), "not finite")
}

func TestGramRows(t *testing.T) {
	for _, tc := range []struct{ dim, parts, want int }{
		{1, 4, 1}, {5, 1, 1}, {5, 5, 5}, {5, 9, 5}, {100, 8, 8}, {500, 16, 16},
	} {
		b := GramRows(tc.dim, tc.parts)
		require.Len(t, b, tc.want+1, "dim %d parts %d: %v", tc.dim, tc.parts, b)
		require.Equal(t, 0, b[0])
		require.Equal(t, tc.dim, b[len(b)-1])
		total, most := 0, 0
		for k := 0; k+1 < len(b); k++ {
			require.Less(t, b[k], b[k+1])
			n := triLen(tc.dim, b[k], b[k+1]-b[k])
			// Brute-force count of the upper-triangle entries.
			bf := 0
			for i := b[k]; i < b[k+1]; i++ {
				bf += tc.dim - i
			}
			require.Equal(t, bf, n)
			total += n
			most = max(most, n)
		}
		require.Equal(t, tc.dim*(tc.dim+1)/2, total)
		if tc.dim >= 100 {
			// Balanced: no chunk much above its share.
			require.Less(t, float64(most), 1.2*float64(total)/float64(tc.want))
		}
	}
}

func TestSplitJoinGram(t *testing.T) {
	ctx := context.Background()
	ds := smallClass(31)
	cfg := Config{Method: UDICA, Rank: 30, Seed: 9}
	p, err := NewPlan(ctx, ds.Source(), cfg)
	require.NoError(t, err)
	whole, err := p.Accumulate(ctx, ds.Source())
	require.NoError(t, err)
	mw, err := whole.Solve()
	require.NoError(t, err)
	n := ds.N()
	for _, parts := range []int{1, 4, 30} {
		// Three shards, each split; the small statistics merged and the
		// parts added per row chunk, both through the binary encodings.
		var small *Stats
		var sums []*GramPart
		for sh := 0; sh < 3; sh++ {
			var rows []int
			for i := sh; i < n; i += 3 {
				rows = append(rows, i)
			}
			st, err := p.Accumulate(ctx, ds.Subset(rows).Source())
			require.NoError(t, err)
			gp := st.SplitGram(parts)
			require.False(t, st.HasGram())
			require.Len(t, gp, min(parts, 30))
			b, _ := st.MarshalBinary()
			var back Stats
			require.NoError(t, back.UnmarshalBinary(b))
			if small == nil {
				small = &back
			} else {
				require.NoError(t, small.Merge(&back))
			}
			for k, g := range gp {
				gb, _ := g.MarshalBinary()
				var g2 GramPart
				require.NoError(t, g2.UnmarshalBinary(gb))
				if sh == 0 {
					sums = append(sums, &g2)
				} else {
					require.NoError(t, sums[k].Add(&g2))
				}
			}
		}
		_, err := small.Solve()
		require.ErrorContains(t, err, "lack the Gram sum")
		require.ErrorContains(t, small.Merge(whole), "with and without")
		if len(sums) > 1 {
			require.ErrorContains(t, small.JoinGram(sums[1:]), "in no part")
			require.ErrorContains(t, small.JoinGram(append(sums, sums[0])), "two parts")
			require.Error(t, sums[0].Add(sums[1]))
		}
		require.NoError(t, small.JoinGram(sums))
		require.True(t, small.HasGram())
		require.ErrorContains(t, small.JoinGram(sums), "already")
		ms, err := small.Solve()
		require.NoError(t, err)
		require.Equal(t, mw.Positive, ms.Positive)
		for j, g := range mw.Eigenvalues[:mw.Positive] {
			require.InEpsilon(t, g, ms.Eigenvalues[j], 1e-10, "%d parts, eigenvalue %d", parts, j)
		}
	}
	// DICA with lambda = 0 has no Gram sum to split.
	p2, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 10, Seed: 1})
	require.NoError(t, err)
	s2, err := p2.Accumulate(ctx, ds.Source())
	require.NoError(t, err)
	require.Nil(t, s2.SplitGram(4))
	require.ErrorContains(t, s2.JoinGram(nil), "needs no Gram sum")
	// A corrupted part is an error.
	gp := whole.SplitGram(2)
	b, _ := gp[0].MarshalBinary()
	require.Error(t, new(GramPart).UnmarshalBinary(b[:len(b)-3]))
}
