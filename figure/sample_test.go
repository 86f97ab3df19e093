package figure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// sampleData is 4 domains of labelled toy cells and a DICA model fitted to
// them.
func sampleData(t *testing.T) (*dataset.Dataset, *dica.Model) {
	t.Helper()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 60, Seed: 3})
	m, err := dica.Fit(context.Background(), ds.Source(), dica.Config{Method: dica.DICA, Solver: dica.Exact, Components: 2, Lambda: 0.1, Seed: 1})
	require.NoError(t, err)
	return ds, m
}

// TestSampleModel checks the cells kept against the model's projection of
// every row: coordinates, inputs, domain and population of each, at most
// PerDomain per domain, in stream order, seeded.
func TestSampleModel(t *testing.T) {
	ctx := context.Background()
	ds, m := sampleData(t)
	zAll, err := m.Transform(ds.X, dica.TransformOptions{})
	require.NoError(t, err)
	const per = 25
	var calls int
	s, err := SampleModel(ctx, m, ds.Source(), SampleOptions{PerDomain: per, Seed: 3, Progress: func(int64) { calls++ }})
	require.NoError(t, err)
	require.Positive(t, calls)
	require.Equal(t, ds.DomainNames, s.Domains)
	require.Equal(t, "DICA", s.Method)
	n, k := s.Z.Dims()
	require.Equal(t, m.Positive, k)
	got := make([]int, ds.NumDomains())
	for i := 0; i < n; i++ {
		r := int(s.Row[i])
		require.Equal(t, zAll.RawRowView(r), s.Z.RawRowView(i), "row %d", r)
		require.Equal(t, ds.X.RawRowView(r), s.X.RawRowView(i))
		require.Equal(t, ds.DomainNames[ds.Domain[r]], s.Domains[s.Domain[i]])
		require.Equal(t, ds.ClassNames[ds.Label[r]], s.Classes[s.Label[i]])
		got[s.Domain[i]]++
		if i > 0 && s.Domain[i] == s.Domain[i-1] {
			require.Less(t, s.Row[i-1], s.Row[i], "stream order within a domain")
		}
	}
	for g, size := range ds.DomainSizes() {
		require.Equal(t, min(per, size), got[g])
		require.EqualValues(t, size, s.Total[g])
	}
	require.Equal(t, fmt.Sprintf("%d of %d cells drawn: at most 25 per sample, drawn at random (seed 3).", n, ds.N()), s.Note())
	again, err := SampleModel(ctx, m, ds.Source(), SampleOptions{PerDomain: per, Seed: 3})
	require.NoError(t, err)
	require.Equal(t, s.Row, again.Row)
	other, err := SampleModel(ctx, m, ds.Source(), SampleOptions{PerDomain: per, Seed: 4})
	require.NoError(t, err)
	require.NotEqual(t, s.Row, other.Row)

	// Every cell when the domains are small enough.
	all, err := SampleModel(ctx, m, ds.Source(), SampleOptions{PerDomain: 1000})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("All %d cells.", ds.N()), all.Note())

	// The components read back: the same cells, no inputs.
	zds, err := dataset.New(zAll, func() []string {
		out := make([]string, ds.N())
		for i, g := range ds.Domain {
			out[i] = ds.DomainNames[g]
		}
		return out
	}())
	require.NoError(t, err)
	c, err := SampleComponents(ctx, zds.Source(), "DICA", SampleOptions{PerDomain: per, Seed: 3})
	require.NoError(t, err)
	require.Equal(t, s.Row, c.Row)
	require.Equal(t, s.Z, c.Z)
	require.Nil(t, c.X)

	_, err = SampleModel(ctx, m, ds.Source(), SampleOptions{})
	require.ErrorContains(t, err, "0 cells per domain")
	_, err = SampleModel(ctx, nil, ds.Source(), SampleOptions{PerDomain: 1})
	require.ErrorContains(t, err, "needs a model")
	_, err = SampleComponents(ctx, nil, "X", SampleOptions{PerDomain: 1})
	require.ErrorContains(t, err, "needs a source")
}

// TestSamplerBound: the cells a sample holds are bounded, whatever the
// number of domains.
func TestSamplerBound(t *testing.T) {
	s := newSampler(SampleOptions{PerDomain: 10, Seed: 1, MaxCells: 25}, 1, 1, false, false)
	var b dataset.Block
	b.Reset(40, 1, false, 0)
	b.Rows = 40
	for i := range b.Domain {
		b.Domain[i] = i / 10 // 4 domains of 10 cells
	}
	err := s.add(&b, mat.NewDense(40, 1, nil), []string{"a", "b", "c", "d"}, nil)
	var many *TooManyCellsError
	require.True(t, errors.As(err, &many))
	require.Equal(t, TooManyCellsError{Limit: 25, Domains: 3, PerDomain: 10}, *many)
	require.EqualError(t, err, "figure: more than 25 cells to draw (3 samples so far, at most 10 each)")

	_, err = (&sampler{res: NewReservoir(1, 1)}).sample()
	require.ErrorIs(t, err, ErrNoCells)
}

// TestBaselines checks the PCA baseline against principal components
// computed here from an SVD of the centered inputs, and that the KPCA
// baseline is kernel PCA of the cells: its components have mean 0 over
// them and are uncorrelated.
func TestBaselines(t *testing.T) {
	ctx := context.Background()
	ds, m := sampleData(t)
	s, err := SampleModel(ctx, m, ds.Source(), SampleOptions{PerDomain: 40, Seed: 1})
	require.NoError(t, err)
	n, d := s.X.Dims()

	v, note, err := PCABaseline(s, nil, 2)
	require.NoError(t, err)
	require.Contains(t, note, fmt.Sprintf("of the plotted cells (%d cells)", n))
	require.Equal(t, "PC", v.Name)
	xc := mat.DenseCopyOf(s.X)
	for j := 0; j < d; j++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += xc.At(i, j) / float64(n)
		}
		for i := 0; i < n; i++ {
			xc.Set(i, j, xc.At(i, j)-mean)
		}
	}
	var svd mat.SVD
	require.True(t, svd.Factorize(xc, mat.SVDThin))
	var u mat.Dense
	svd.UTo(&u)
	sv := svd.Values(nil)
	_, k := v.Z.Dims()
	require.Equal(t, 3, k)
	for j := 0; j < k; j++ {
		sign := 1.0
		if u.At(0, j)*v.Z.At(0, j) < 0 {
			sign = -1
		}
		for i := 0; i < n; i++ {
			require.InDelta(t, sign*u.At(i, j)*sv[j], v.Z.At(i, j), 1e-9)
		}
	}

	// Fitted to some domains only: centered on their cells.
	fit := make([]bool, n)
	for i, g := range s.Domain {
		fit[i] = g != 3
	}
	v, note, err = PCABaseline(s, fit, 2)
	require.NoError(t, err)
	require.Contains(t, note, "of the training samples")
	var sumFit, nFit float64
	for i := 0; i < n; i++ {
		if fit[i] {
			sumFit, nFit = sumFit+v.Z.At(i, 0), nFit+1
		}
	}
	require.InDelta(t, 0, sumFit/nFit, 1e-12)

	v, _, err = KPCABaseline(ctx, m, s, nil, 2)
	require.NoError(t, err)
	require.Equal(t, "KPCA", v.Name)
	require.Equal(t, "KPCA baseline"+ModelTitle(m)[len("DICA"):], v.Title)
	_, k = v.Z.Dims()
	for a := 0; a < k; a++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += v.Z.At(i, a) / float64(n)
		}
		require.InDelta(t, 0, mean, 1e-9)
		for b := 0; b < a; b++ {
			var ab, aa, bb float64
			for i := 0; i < n; i++ {
				ab += v.Z.At(i, a) * v.Z.At(i, b)
				aa += v.Z.At(i, a) * v.Z.At(i, a)
				bb += v.Z.At(i, b) * v.Z.At(i, b)
			}
			require.InDelta(t, 0, ab/math.Sqrt(aa*bb), 1e-6, "components %d and %d", a+1, b+1)
		}
	}

	_, _, err = PCABaseline(s, nil, d+1)
	require.ErrorContains(t, err, fmt.Sprintf("the data has %d columns, %d components were asked for", d, d+1))
	_, _, err = PCABaseline(&Sample{}, nil, 2)
	require.ErrorContains(t, err, "inputs are not known")
	_, _, err = KPCABaseline(ctx, m, s, make([]bool, n), 2)
	require.ErrorContains(t, err, "0 cells to fit it to")
	require.Equal(t, "", ModelTitle(nil))
	require.Equal(t, "DICA, sigma = "+strconv.FormatFloat(m.Config().Kernel.(kernel.RBF).Sigma, 'g', 4, 64)+", exact", ModelTitle(m))
}
