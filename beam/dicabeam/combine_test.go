package dicabeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/toy"
)

func init() { beam.RegisterFunction(decodeKeyedPart) }

// decodeKeyedPart decodes a test element: a varint key, then a Part.
func decodeKeyedPart(b []byte) (int, Part, error) {
	k, n := binary.Varint(b)
	if n <= 0 {
		return 0, Part{}, fmt.Errorf("bad key")
	}
	p, err := decodePart(b[n:])
	return int(k), p, err
}

// planAndCells returns the plan of cfg on src as the side input accumFn
// reads, and the cells of src.
func planAndCells(t *testing.T, src dataset.Source, cfg dica.Config) (func(*[]byte) bool, []Cell) {
	t.Helper()
	ctx := context.Background()
	plan, err := dica.NewPlan(ctx, src, cfg)
	require.NoError(t, err)
	pb, err := plan.MarshalBinary()
	require.NoError(t, err)
	cells, err := Cells(ctx, src)
	require.NoError(t, err)
	return func(b *[]byte) bool { *b = pb; return true }, cells
}

// TestCombinePartsOfBundles runs the keyed combine, the gather and the solve
// on the runner with the parts of three bundles (Prism gives a small test
// input one bundle, so the bundles are made here by the pipeline's own
// accumFn): the runner must add the small statistics and every Gram chunk of
// the three, and the model must equal dica.Fit's.
func TestCombinePartsOfBundles(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  dica.Config
		reg  bool
	}{
		{"dica", dica.Config{Method: dica.DICA, Rank: 60, Components: 4, Seed: 3}, false},
		{"dica-regression-ridge", dica.Config{Method: dica.DICA, Rank: 50, Components: 3, Lambda: 1e-3, Seed: 8}, true},
		{"udica", dica.Config{Method: dica.UDICA, Rank: 60, Components: 5, Seed: 5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := toy.Options{Domains: 5, MeanSize: 120, Seed: 11}
			ds := toy.Classification(o)
			if tc.reg {
				ds = toy.Regression(o)
			}
			src := ds.Source()
			want, err := dica.Fit(ctx, src, tc.cfg)
			require.NoError(t, err)
			side, cells := planAndCells(t, src, tc.cfg)

			// Three bundles of unequal size, emitted last first: the
			// domains must still come out in order of first appearance.
			n := len(cells)
			cuts := []int{0, n / 5, n / 2, n}
			var elems [][]byte
			perKey := map[int]int{}
			for b := len(cuts) - 2; b >= 0; b-- {
				f := &accumFn{BlockRows: 50, GramParts: 7, Workers: 1}
				f.StartBundle(side, nil)
				for _, c := range cells[cuts[b]:cuts[b+1]] {
					require.NoError(t, f.ProcessElement(c, side, nil))
				}
				require.NoError(t, f.FinishBundle(side, func(k int, p Part) {
					e, err := encodePart(p)
					require.NoError(t, err)
					elems = append(elems, append(binary.AppendVarint(nil, int64(k)), e...))
					perKey[k]++
				}))
			}
			wantKeys := 1
			if tc.cfg.Method == dica.UDICA || tc.cfg.Lambda > 0 {
				wantKeys += 7
			}
			require.Len(t, perKey, wantKeys)
			for k, c := range perKey {
				require.Equal(t, 3, c, "parts of key %d", k)
			}

			p, s := beam.NewPipelineWithRoot()
			parts := beam.ParDo(s, decodeKeyedPart, beam.CreateList(s, elems))
			path := filepath.Join(t.TempDir(), "model.dica")
			WriteModel(s, path, Solve(s, CombineParts(s, parts)))
			require.NoError(t, ptest.Run(p))
			got, err := dica.Load(path)
			require.NoError(t, err)
			requireSameModel(t, want, got, ds.X, nil, nil, 1e-10)
		})
	}
}

// TestBundleDeterministic: with several goroutines per bundle, a bundle's
// parts are the same bytes however the goroutines are scheduled (block i
// goes to goroutine i mod Workers, the merge is in goroutine order).
func TestBundleDeterministic(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 300, Seed: 12})
	src := ds.Source()
	cfg := dica.Config{Method: dica.UDICA, Rank: 40, Components: 3, Seed: 2}
	side, cells := planAndCells(t, src, cfg)
	var first [][]byte
	for run := 0; run < 8; run++ {
		f := &accumFn{BlockRows: 16, GramParts: 3, Workers: 4}
		f.StartBundle(side, nil)
		for _, c := range cells {
			require.NoError(t, f.ProcessElement(c, side, nil))
		}
		var got [][]byte
		require.NoError(t, f.FinishBundle(side, func(k int, p Part) {
			e, err := encodePart(p)
			require.NoError(t, err)
			got = append(got, e)
		}))
		if run == 0 {
			first = got
			continue
		}
		require.Equal(t, first, got, "run %d", run)
	}
}
