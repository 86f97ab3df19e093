package dica

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/toy"
)

// unlabel returns a copy of ds (sharing X) in which every third point
// has no label (dataset.NoLabel), and with wholeDomain every point of the
// last domain too: labelled and unlabelled points in one fit, and a
// domain without a labelled point.
func unlabel(ds *dataset.Dataset, wholeDomain bool) *dataset.Dataset {
	out := *ds
	out.Label = make([]int, len(ds.Label))
	last := ds.NumDomains() - 1
	for p, c := range ds.Label {
		if p%3 == 2 || wholeDomain && ds.Domain[p] == last {
			c = dataset.NoLabel
		}
		out.Label[p] = c
	}
	return &out
}

// TestPartialLabelsNystromEqualsExact is TestNystromAllPointsEqualsExact
// with a third of the points unlabelled (and, in the "domain" cases, a
// whole domain without a labelled point): with every point a landmark the
// low-rank fit, whose label term comes from the class sums of the
// labelled points and whose domain and complexity terms come from every
// point, reproduces the exact n x n problem of package exact, whose output
// term is over the labelled points (docs/MATH.md, "Partial labels"):
// eigenvalues to 1e-8 relative, principal cosines of the training
// projections to 1 - 1e-8, and each component to 1e-6.
func TestPartialLabelsNystromEqualsExact(t *testing.T) {
	small := smallClass(1)
	big := toy.Classification(toy.Options{Domains: 4, MeanSize: 90, Seed: 8})
	type tc struct {
		name   string
		ds     *dataset.Dataset
		method Method
		lambda float64
	}
	var cases []tc
	for _, d := range []struct {
		name string
		ds   *dataset.Dataset
	}{
		{"third", unlabel(small, false)},
		{"third+domain", unlabel(small, true)},
		{"big/third", unlabel(big, false)},
	} {
		for _, m := range []Method{DICA, COIR, UDICA, KPCA} {
			for _, lam := range []float64{0, 0.1} {
				if d.name == "big/third" && (m == UDICA || m == KPCA) {
					continue // they ignore labels: TestPartialLabelsTerms
				}
				cases = append(cases, tc{fmt.Sprintf("%s/%v/lambda=%g", d.name, m, lam), d.ds, m, lam})
			}
		}
	}
	var worstVal, worstCos float64
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.ds.N()
			nl := len(c.ds.LabelledRows())
			require.Less(t, nl, n-n/4, "a third of the points unlabelled")
			base := Config{Method: c.method, Components: 5, Lambda: c.lambda, Sigma: 2, Seed: 3}
			me, em := exactFit(t, c.ds, base)
			lr := base
			lr.Solver = Nystrom
			lr.Rank = n
			if c.lambda == 0 {
				require.Greater(t, em.Jitter, 0.0)
				lr.Lambda = em.Jitter
			}
			ml := fit(t, c.ds, lr)
			if strings.HasPrefix(c.name, "big") {
				require.Greater(t, n, nystrom.EigenMax, "the pivoted Nystrom path")
			}
			require.Equal(t, int64(n), ml.Summary.N)
			if c.method.Supervised() {
				var sum int64
				for _, k := range ml.Summary.ClassCounts {
					sum += k
				}
				require.Equal(t, int64(nl), sum, "class counts are over the labelled points")
				require.Equal(t, me.Summary.ClassCounts, ml.Summary.ClassCounts)
			}
			require.Equal(t, me.Summary.DomainCounts, ml.Summary.DomainCounts)
			k := gapCount(me.Eigenvalues, me.Positive)
			require.Greater(t, k, 0)
			v, cs := requireSameModel(t, c.ds, me, ml, k, 1e-8, 1e-8, 1e-6)
			worstVal, worstCos = max(worstVal, v), max(worstCos, cs)
		})
	}
	t.Logf("worst relative eigenvalue difference %.2g, worst 1 - cosine %.2g", worstVal, worstCos)
}

// TestPartialLabelsTerms checks which term uses which points, against
// fits whose answer is known without the partial-label code:
//
//   - UDICA and KPCA ignore labels: their models of partly labelled data
//     are bit for bit those of the same data with every label;
//   - the label term of DICA and COIR is over the labelled points only:
//     their class counts are those of the labelled points, and the fit
//     differs from the fit with every point's true label;
//   - the domain term is over every point: DICA's model of data in which a
//     domain has no labelled point counts that domain and its points, and
//     differs from the model of the data without that domain.
func TestPartialLabelsTerms(t *testing.T) {
	ds := smallClass(5)
	part := unlabel(ds, true)
	cfg := Config{Components: 3, Rank: 60, Sigma: 2, Seed: 3}
	for _, m := range []Method{UDICA, KPCA} {
		c := cfg
		c.Method = m
		a, b := fit(t, ds, c), fit(t, part, c)
		ab, err := a.MarshalBinary()
		require.NoError(t, err)
		bb, err := b.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, ab, bb, "%v: labels change the model", m)
	}
	for _, m := range []Method{DICA, COIR} {
		c := cfg
		c.Method = m
		mp := fit(t, part, c)
		require.Equal(t, part.DomainSizes(), int64sToInts(mp.Summary.DomainCounts))
		require.Equal(t, part.ClassSizes(), int64sToInts(mp.Summary.ClassCounts))
		// A model file keeps the partial class counts.
		b, err := mp.MarshalBinary()
		require.NoError(t, err)
		var back Model
		require.NoError(t, back.UnmarshalBinary(b))
		require.Equal(t, mp.Summary, back.Summary)
		za, err := mp.Transform(part.X, TransformOptions{})
		require.NoError(t, err)
		zb, err := back.Transform(part.X, TransformOptions{})
		require.NoError(t, err)
		require.Equal(t, za.RawMatrix().Data, zb.RawMatrix().Data)
		// The true labels of the unlabelled points change the model.
		mt := fit(t, ds, c)
		require.NotEqual(t, mt.Eigenvalues, mp.Eigenvalues, "%v", m)
	}
	// Without the unlabelled domain, DICA's domain term has one domain
	// fewer: another model.
	c := cfg
	c.Method = DICA
	mp := fit(t, part, c)
	last := part.NumDomains() - 1
	var keep []int
	for p, g := range part.Domain {
		if g != last {
			keep = append(keep, p)
		}
	}
	sub := part.Subset(keep)
	sub.Compact()
	ms := fit(t, sub, c)
	require.Len(t, mp.Summary.Domains, part.NumDomains())
	require.Len(t, ms.Summary.Domains, part.NumDomains()-1)
	require.Equal(t, mp.Summary.ClassCounts, ms.Summary.ClassCounts, "the same labelled points")
	require.Greater(t, math.Abs(mp.Eigenvalues[0]-ms.Eigenvalues[0]), 1e-6*mp.Eigenvalues[0])
}

func int64sToInts(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// TestPartialLabelsErrors checks that a supervised fit of data with too
// few labelled classes says so, on both paths, and that a data set with no
// labelled point fits UDICA.
func TestPartialLabelsErrors(t *testing.T) {
	ds := smallClass(7)
	none := unlabel(ds, false)
	for p := range none.Label {
		if none.Label[p] != 0 {
			none.Label[p] = dataset.NoLabel
		}
	}
	for _, s := range []Solver{Nystrom, Exact} {
		_, err := Fit(context.Background(), none.Source(), Config{Method: DICA, Solver: s, Rank: 30, Sigma: 2})
		require.ErrorContains(t, err, "one class only", "%v", s)
	}
	for p := range none.Label {
		none.Label[p] = dataset.NoLabel
	}
	m := fit(t, none, Config{Method: UDICA, Rank: 30, Sigma: 2, Components: 2})
	require.Equal(t, int64(ds.N()), m.Summary.N)
	_, err := Fit(context.Background(), none.Source(), Config{Method: COIR, Rank: 30, Sigma: 2})
	require.ErrorContains(t, err, "one class only (0 class(es)")
}

// TestPartialLabelsLambdaZero checks, with a third of the points
// unlabelled, that the lambda = 0 closed form of DICA and COIR (no m x m
// decomposition) is the limit of the lambda > 0 solve, which
// TestPartialLabelsNystromEqualsExact compares with the exact path.
func TestPartialLabelsLambdaZero(t *testing.T) {
	for _, m := range []Method{DICA, COIR} {
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/domain=%v", m, whole), func(t *testing.T) {
				ds := unlabel(smallClass(1), whole)
				base := Config{Method: m, Components: 5, Sigma: 2, Seed: 3, Rank: 60}
				m0 := fit(t, ds, base)
				tiny := base
				tiny.Lambda = 1e-12
				m1 := fit(t, ds, tiny)
				k := gapCount(m0.Eigenvalues, m0.Positive)
				require.Greater(t, k, 0)
				v, cs := requireSameModel(t, ds, m0, m1, k, 1e-8, 1e-8, 1e-6)
				t.Logf("lambda 0 vs 1e-12: eigenvalues %.2g, 1 - cosine %.2g", v, cs)
			})
		}
	}
}

// TestPartialLabelsExactSolver fits partly labelled data whose classes
// are not in natural order with the Exact solver of Fit, which renumbers
// them (unlabelled points keep dataset.NoLabel), and compares the model
// with the low-rank fit at m = n.
func TestPartialLabelsExactSolver(t *testing.T) {
	ds := unlabel(smallClass(9), false)
	names := make([]string, ds.NumClasses())
	for j := range names {
		names[j] = fmt.Sprintf("pop%d", ds.NumClasses()-j) // pop3, pop2, pop1
	}
	ds.ClassNames = names
	want := ds.ClassSizes()
	lab := append([]int(nil), ds.Label...)
	cfg := Config{Method: DICA, Solver: Exact, Components: 3, Sigma: 2, Lambda: 0.1, Seed: 3}
	me := fit(t, ds, cfg)
	require.Equal(t, lab, ds.Label, "Fit changed the caller's labels")
	require.Equal(t, []string{"pop1", "pop2", "pop3"}, me.Summary.Classes)
	for j, c := range want {
		require.Equal(t, int64(c), me.Summary.ClassCounts[len(want)-1-j])
	}
	cfg.Solver, cfg.Rank = Nystrom, ds.N()
	ml := fit(t, ds, cfg)
	requireSameModel(t, ds, me, ml, gapCount(me.Eigenvalues, me.Positive), 1e-8, 1e-8, 1e-6)
}
