package dicabeam

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

// TestMain runs the pipelines of the tests on Prism, in process (loopback
// workers, no Docker).
func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// beamFit fits the cells on the runner and projects them with the Beam
// Transform step; it returns the model and the projections by key.
func beamFit(t *testing.T, cells beam.PCollection, s beam.Scope, p *beam.Pipeline, o Options) (*dica.Model, map[int64][]float64) {
	t.Helper()
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "model.dica")
	projPath := filepath.Join(dir, "z.csv")
	model, err := Fit(s, cells, o)
	require.NoError(t, err)
	WriteModel(s, modelPath, model)
	z := Transform(s, model, cells, 0, false)
	textio.Write(s, projPath, beam.ParDo(s, FormatProjection, z))
	require.NoError(t, ptest.Run(p))
	m, err := dica.Load(modelPath)
	require.NoError(t, err)
	return m, readProjections(t, projPath)
}

func readProjections(t *testing.T, path string) map[int64][]float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[int64][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		k, err := strconv.ParseInt(fields[0], 10, 64)
		require.NoError(t, err)
		var z []float64
		for _, s := range fields[3:] {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			z = append(z, v)
		}
		out[k] = z
	}
	require.NoError(t, sc.Err())
	return out
}

// requireSameModel checks the Beam model against the in-process one:
// eigenvalues to tol relative, and the projections of the points x (by the
// Beam model in process, and by the Beam Transform step, z[keys[i]] for row
// i, keys[i] = i when keys is nil) to tol times the largest projection.
func requireSameModel(t *testing.T, want, got *dica.Model, x *mat.Dense, keys []int64, z map[int64][]float64, tol float64) {
	t.Helper()
	require.Equal(t, want.Summary.N, got.Summary.N)
	require.Equal(t, want.Summary.Domains, got.Summary.Domains, "domains in order of first appearance")
	require.Equal(t, want.Summary.DomainCounts, got.Summary.DomainCounts)
	require.Equal(t, want.Positive, got.Positive)
	require.Equal(t, len(want.Eigenvalues), len(got.Eigenvalues))
	require.Equal(t, want.Config().Kernel, got.Config().Kernel, "kernel (the plans differ)")
	worstEig := 0.0
	for j := 0; j < want.Positive; j++ {
		require.InEpsilon(t, want.Eigenvalues[j], got.Eigenvalues[j], tol, "eigenvalue %d", j)
		worstEig = math.Max(worstEig, math.Abs(want.Eigenvalues[j]-got.Eigenvalues[j])/want.Eigenvalues[j])
	}
	if x == nil {
		t.Logf("%d points, %d components: eigenvalues agree to %.1e relative", want.Summary.N, want.Positive, worstEig)
		return
	}
	// x holds cells as the readers deliver them: preprocessed.
	zw, err := want.Transform(x, dica.TransformOptions{Preprocessed: true})
	require.NoError(t, err)
	zg, err := got.Transform(x, dica.TransformOptions{Preprocessed: true})
	require.NoError(t, err)
	scale := mat.Norm(zw, math.Inf(1))
	var diff mat.Dense
	diff.Sub(zw, zg)
	zdiff := mat.Norm(&diff, math.Inf(1)) / scale
	require.LessOrEqual(t, zdiff, tol, "projections")
	t.Logf("%d points, %d components: eigenvalues agree to %.1e relative, projections to %.1e", want.Summary.N, want.Positive, worstEig, zdiff)
	if z != nil {
		r, k := zw.Dims()
		require.Len(t, z, r)
		worst := 0.0
		for i := 0; i < r; i++ {
			key := int64(i)
			if keys != nil {
				key = keys[i]
			}
			zi, ok := z[key]
			require.True(t, ok, "no projection of row %d", i)
			require.Len(t, zi, k)
			for j := range zi {
				worst = math.Max(worst, math.Abs(zi[j]-zw.At(i, j)))
			}
		}
		require.LessOrEqual(t, worst/scale, tol, "projections of the Transform step")
	}
}

func TestFitEqualsInProcess(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		ds      *dataset.Dataset
		cfg     dica.Config
		workers int
	}{
		// The plan is drawn on the pipeline: median-heuristic bandwidths,
		// uniform landmarks, from every cell (fewer than Config.Sample).
		{"dica-classification", toy.Classification(toy.Options{Domains: 5, MeanSize: 120, Seed: 1}),
			dica.Config{Method: dica.DICA, Rank: 60, Components: 4, Seed: 3}, 2},
		// Regression with the default output rank: the output features are
		// summed around the plan's shift, so the solve sees the same sums
		// whatever the bundles and blocks.
		{"dica-regression", toy.Regression(toy.Options{Domains: 5, MeanSize: 120, Seed: 2}),
			dica.Config{Method: dica.DICA, Rank: 60, Components: 4, Seed: 4}, 1},
		// lambda > 0 needs the Gram sum for DICA too.
		{"dica-regression-ridge", toy.Regression(toy.Options{Domains: 4, MeanSize: 150, Seed: 7}),
			dica.Config{Method: dica.DICA, Rank: 50, Components: 3, Lambda: 1e-3, Seed: 8}, 2},
		// UDICA needs the Gram sum: the keyed combine of its row chunks.
		{"udica", toy.Classification(toy.Options{Domains: 5, MeanSize: 120, Seed: 3}),
			dica.Config{Method: dica.UDICA, Rank: 60, Components: 5, Landmarks: dica.KMeansLandmarks, Seed: 5}, 3},
		{"udica-rff", toy.Classification(toy.Options{Domains: 5, MeanSize: 120, Seed: 4}),
			dica.Config{Method: dica.UDICA, Solver: dica.RFF, Rank: 60, Components: 5, Seed: 6}, 1},
		// RFF with a given bandwidth: the plan comes from the seed when the
		// pipeline is built, without a sampling step.
		{"dica-rff-sigma", toy.Classification(toy.Options{Domains: 4, MeanSize: 120, Seed: 5}),
			dica.Config{Method: dica.DICA, Solver: dica.RFF, Sigma: 1.5, Rank: 80, Components: 3, Seed: 7}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.ds.Source()
			want, err := dica.Fit(ctx, src, tc.cfg)
			require.NoError(t, err)
			cells, err := Cells(ctx, src)
			require.NoError(t, err)
			p, s := beam.NewPipelineWithRoot()
			col := beam.CreateList(s, cells)
			// Small blocks and few Gram parts so that several blocks (on
			// tc.workers goroutines) and keys are combined. Prism runs this
			// input as one bundle; TestCombinePartsOfBundles has the
			// runner add the parts of several.
			got, z := beamFit(t, col, s, p, Options{Config: tc.cfg, Schema: src.Schema(), BlockRows: 50, GramParts: 7, Workers: tc.workers})
			requireSameModel(t, want, got, tc.ds.X, nil, z, 1e-10)
		})
	}
}

// TestFixedPlan: a configuration that needs no sample gets its plan when
// the pipeline is built (the same as dica.NewPlan's), one that needs a sample
// does not.
func TestFixedPlan(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 2, MeanSize: 20, Seed: 1})
	sc := ds.Source().Schema()
	o := Options{Config: dica.Config{Solver: dica.RFF, Sigma: 2, Rank: 30, Seed: 3}, Schema: sc}
	require.NoError(t, o.fixPlan())
	require.NotNil(t, o.Plan)
	want, err := dica.NewPlan(context.Background(), ds.Source(), o.Config)
	require.NoError(t, err)
	require.Equal(t, want.Fingerprint(), o.Plan.Fingerprint())

	o = Options{Config: dica.Config{Solver: dica.RFF, Rank: 30, Seed: 3}, Schema: sc}
	require.NoError(t, o.fixPlan())
	require.Nil(t, o.Plan, "the median heuristic needs a sample")
}
