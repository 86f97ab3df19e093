package dica

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
)

// TestNaturalOrder checks that a model lists domains and classes in natural
// order (s2 before s10), whatever order the data meets them in, and that
// its eigenvalues are those of a fit on the same cells met in that order.
func TestNaturalOrder(t *testing.T) {
	ds := smallClass(7)
	// Names whose natural order is not their order of first appearance:
	// domain g becomes s(10-g), class c becomes p(10-3c).
	rename := func(ds *dataset.Dataset) *dataset.Dataset {
		out := *ds
		out.Domain, out.Label = slices.Clone(ds.Domain), slices.Clone(ds.Label)
		out.DomainNames = make([]string, len(ds.DomainNames))
		for g := range ds.DomainNames {
			out.DomainNames[g] = fmt.Sprintf("s%d", 10-g)
		}
		out.ClassNames = make([]string, len(ds.ClassNames))
		for c := range ds.ClassNames {
			out.ClassNames[c] = fmt.Sprintf("p%d", 10-3*c)
		}
		return &out
	}
	mixed := rename(ds)
	// The same cells, renumbered so that first appearance is natural order.
	sorted := rename(ds)
	naturalDataset(sorted)
	for _, solver := range []Solver{Nystrom, Exact} {
		for _, method := range []Method{DICA, UDICA} {
			t.Run(fmt.Sprintf("%v/%v", solver, method), func(t *testing.T) {
				cfg := Config{Method: method, Solver: solver, Rank: 40, Sigma: 1.5, Components: 3, Seed: 3}
				a := fit(t, mixed, cfg)
				b := fit(t, sorted, cfg)
				wantD := slices.Clone(mixed.DomainNames)
				slices.SortFunc(wantD, dataset.NaturalCompare)
				require.Equal(t, wantD, a.Summary.Domains)
				require.Equal(t, []string{"s7", "s8", "s9", "s10"}, a.Summary.Domains)
				require.Equal(t, b.Summary, a.Summary)
				if method == DICA {
					require.Equal(t, []string{"p4", "p7", "p10"}, a.Summary.Classes)
				}
				require.Equal(t, b.Positive, a.Positive)
				for j := range a.Positive {
					require.InEpsilon(t, b.Eigenvalues[j], a.Eigenvalues[j], 1e-12, "eigenvalue %d", j)
				}
			})
		}
	}
}

// TestDefaultSeed checks that the zero Seed is DefaultSeed: a library fit
// that sets no seed gives the model of the command's default.
func TestDefaultSeed(t *testing.T) {
	ds := smallClass(9)
	enc := func(seed uint64) []byte {
		b, err := fit(t, ds, Config{Method: DICA, Rank: 30, Seed: seed}).MarshalBinary()
		require.NoError(t, err)
		return b
	}
	require.Equal(t, enc(DefaultSeed), enc(0))
	require.NotEqual(t, enc(2), enc(0))
}
