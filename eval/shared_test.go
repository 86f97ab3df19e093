package eval

import (
	"bytes"
	"context"
	"testing"

	"github.com/dicalab/dica/dica"
)

// TestSharedPass checks that the inner fits sharing one pass per bandwidth
// (Stats.SolveWith) give the models separate fits give, file bytes and all,
// and the same errors.
func TestSharedPass(t *testing.T) {
	ds := shifted(3, 2)
	e := &evaluator{ds: ds, o: Options{Solver: dica.Nystrom, Rank: 40, Seed: 1}}
	ctx := context.Background()
	fits := []Params{}
	for _, s := range []float64{0, 1.5, -1} {
		for _, l := range []float64{0, 0.1, 1} {
			for _, ep := range []float64{0, 1e-2} {
				fits = append(fits, Params{Sigma: s, Lambda: l, Epsilon: ep})
			}
		}
	}
	for _, name := range []string{"dica", "udica", "coir", "kpca"} {
		ps := newPasses(fits)
		failed := 0
		for _, fp := range fits {
			want, werr := e.fit(ctx, name, fp, 2, ds)
			got, gerr := e.fitShared(ctx, name, fp, 2, ds, ps)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("%s %+v: error %v, separate fit %v", name, fp, gerr, werr)
			}
			if werr != nil {
				failed++
				continue
			}
			wb, _ := want.model.MarshalBinary()
			gb, _ := got.model.MarshalBinary()
			if !bytes.Equal(wb, gb) {
				t.Errorf("%s %+v: the shared pass gives another model", name, fp)
			}
		}
		if failed != 6 {
			t.Errorf("%s: %d failed fits, want the 6 of sigma -1", name, failed)
		}
		if len(ps.stats) != 3 {
			t.Errorf("%s: %d passes for 3 bandwidths", name, len(ps.stats))
		}
	}
}
