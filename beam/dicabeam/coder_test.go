package dicabeam

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

func TestCellCoders(t *testing.T) {
	for _, c := range []Cell{
		{},
		{Key: -5, Domain: "d1", Label: "CD4+ T", Features: []float64{1, -0.5, math.Inf(1), 3e300}},
		{Key: 1 << 50, Domain: "é", Features: []float64{0}, Targets: []float64{2.5, -1}},
	} {
		b := encodeCell(c)
		back, err := decodeCell(b)
		require.NoError(t, err)
		require.Equal(t, c, back)
		for cut := 0; cut < len(b); cut++ {
			_, err := decodeCell(b[:cut])
			require.Error(t, err, "cell cut at %d of %d bytes", cut, len(b))
		}
		_, err = decodeCell(append(b, 0))
		require.Error(t, err)
		p := Projection{Key: c.Key, Domain: c.Domain, Label: c.Label, Z: c.Features}
		pb, err := decodeProjection(encodeProjection(p))
		require.NoError(t, err)
		require.Equal(t, p, pb)
	}
}

func TestCoreCoders(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 40, Seed: 3})
	plan, err := dica.NewPlan(ctx, ds.Source(), dica.Config{Method: dica.UDICA, Rank: 12, Seed: 1})
	require.NoError(t, err)
	st, err := plan.Accumulate(ctx, ds.Source())
	require.NoError(t, err)
	m, err := st.Solve()
	require.NoError(t, err)
	want, _ := st.MarshalBinary()
	parts := st.SplitGram(3)
	b, err := encodeStats(st)
	require.NoError(t, err)
	st2, err := decodeStats(b)
	require.NoError(t, err)
	for _, g := range parts {
		gb, err := encodeGram(g)
		require.NoError(t, err)
		g2, err := decodeGram(gb)
		require.NoError(t, err)
		require.Equal(t, g, g2)
	}
	// Gathered small statistics and Gram parts, through their coders, solve
	// to the same model.
	g := Gathered{Parts: []Part{{Gram: parts[2]}, {Stats: st2}, {Gram: parts[0]}, {Gram: parts[1]}}}
	gb, err := encodeGathered(g)
	require.NoError(t, err)
	g2, err := decodeGathered(gb)
	require.NoError(t, err)
	mg, err := g2.Solve()
	require.NoError(t, err)
	require.Equal(t, []string{"d1", "d2", "d3"}, mg.Summary.Domains, "domains in natural order")
	require.Equal(t, m.Positive, mg.Positive)
	for j := range m.Positive {
		require.InEpsilon(t, m.Eigenvalues[j], mg.Eigenvalues[j], 1e-12)
	}
	_, err = decodeGathered(gb[:len(gb)-1])
	require.Error(t, err)
	_, err = Gathered{Parts: g.Parts[:3]}.Solve()
	require.ErrorContains(t, err, "no part")
	_, err = Gathered{Parts: []Part{{Gram: parts[0]}}}.Solve()
	require.ErrorContains(t, err, "no cells")
	_, err = Part{Stats: st2}.add(Part{Gram: parts[0]})
	require.Error(t, err)
	st2, err = decodeStats(b)
	require.NoError(t, err)
	require.NoError(t, st2.JoinGram(parts))
	got, _ := st2.MarshalBinary()
	require.Equal(t, want, got, "split, coded and joined statistics are the same bytes")
	mb, err := encodeModel(m)
	require.NoError(t, err)
	m2, err := decodeModel(mb)
	require.NoError(t, err)
	require.Equal(t, m.Eigenvalues, m2.Eigenvalues)
	// Empty accumulators code as empty bytes.
	for _, f := range []func() ([]byte, error){
		func() ([]byte, error) { return encodeStats(nil) },
		func() ([]byte, error) { return encodeGram(nil) },
		func() ([]byte, error) { return encodeModel(nil) },
	} {
		b, err := f()
		require.NoError(t, err)
		require.Empty(t, b)
	}
	s0, err := decodeStats(nil)
	require.NoError(t, err)
	require.Nil(t, s0)
	_, err = decodeStats(b[:len(b)/2])
	require.Error(t, err)
}
