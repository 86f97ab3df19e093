package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

func TestDemoSmall(t *testing.T) {
	rows, err := demo(context.Background(), 1, 25)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	// The KPCA row against the exact package directly: its eigenvalues, and
	// the training domains' distributional variance of its first two
	// standardized components under an RBF kernel, from the Gram blocks.
	train, _ := toy.RegressionSplit(toy.Options{Seed: 1, MeanSize: 25}, 3)
	em, err := exact.Fit(context.Background(), train, exact.Options{Method: exact.KPCA, Components: 3, Lambda: 1e-3, Seed: 1})
	require.NoError(t, err)
	for j := 0; j < 3; j++ {
		require.InEpsilon(t, em.Eigenvalues[j], rows[0].vals[j], 1e-10)
	}
	z := em.TrainProjection()
	n := train.N()
	zs := mat.NewDense(n, 2, nil)
	for j := 0; j < 2; j++ {
		col := mat.Col(nil, j, z)
		var mean, ss float64
		for _, v := range col {
			mean += v / float64(n)
		}
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / float64(n-1))
		for i, v := range col {
			zs.Set(i, j, (v-mean)/sd)
		}
	}
	rbf := kernel.RBF{Sigma: kernel.MedianSigma(zs, 1000, 1)}
	N := train.NumDomains()
	size := train.DomainSizes()
	blocks := make([]float64, N*N) // <mu_i, mu_j>
	for p := 0; p < n; p++ {
		for q := 0; q < n; q++ {
			i, j := train.Domain[p], train.Domain[q]
			blocks[i*N+j] += rbf.Eval(zs.RawRowView(p), zs.RawRowView(q)) / float64(size[i]*size[j])
		}
	}
	var dv float64 // (1/N) sum_i ||mu_i - mu_bar||^2
	for i := 0; i < N; i++ {
		v := blocks[i*N+i]
		for j := 0; j < N; j++ {
			v -= 2 * blocks[i*N+j] / float64(N)
			for l := 0; l < N; l++ {
				v += blocks[j*N+l] / float64(N*N)
			}
		}
		dv += v / float64(N)
	}
	require.InEpsilon(t, dv, rows[0].dvTrain, 1e-6)

	// The printed table, with 6 decimals in every number but the seconds,
	// and what it says follow from the rows.
	out, errs, code := runCmd(t, "demo", "--size", "25")
	require.Equal(t, 0, code, errs)
	for _, r := range rows {
		require.Regexp(t, fmt.Sprintf("(?m)^ +%s +%.6f +%.6f +%.6f +%.6f +%.6f +[0-9]+\\.[0-9]{2}$", r.method, r.vals[0], r.vals[1], r.vals[2], r.dvTrain, r.dvTest), out)
	}
	for _, want := range []string{"gamma_1..3: the eigenvalues", "DV: the distributional variance", "The paper's claim"} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "holds here")
	rel := func(a, b demoRow) float64 { return 100 * (a.dvTest - b.dvTest) / b.dvTest }
	u, d := rel(rows[1], rows[0]), rel(rows[3], rows[2])
	word := func(v float64) string {
		if v > 0 {
			return "higher"
		}
		return "lower"
	}
	require.Contains(t, out, fmt.Sprintf("UDICA's is %.2f%% %s than KPCA's", math.Abs(u), word(u)))
	require.Contains(t, out, fmt.Sprintf("DICA's is %.2f%% %s than COIR's", math.Abs(d), word(d)))
	require.Equal(t, math.Abs(u) < 1 && math.Abs(d) < 1, strings.Contains(out, "neither\nshows nor refutes the claim"), out)
	_, errs, code = runCmd(t, "demo", "extra.csv")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "takes no files")
}

// TestDemoVerdict: what the demo says about the paper's claim, for
// differences below 1% (no effect) and above (one draw, in which
// direction).
func TestDemoVerdict(t *testing.T) {
	rows := func(kpca, udica, coir, dica float64) []demoRow {
		return []demoRow{{method: "kpca", dvTest: kpca}, {method: "udica", dvTest: udica}, {method: "coir", dvTest: coir}, {method: "dica", dvTest: dica}}
	}
	for _, tc := range []struct {
		rows []demoRow
		want []string
	}{
		{rows(0.004110, 0.004116, 0.025878, 0.025869), []string{"UDICA's is 0.15% higher than KPCA's\nand DICA's is 0.03% lower than COIR's", "not an effect", "neither\nshows nor refutes the claim"}},
		{rows(0.01, 0.008, 0.02, 0.018), []string{"UDICA's is 20.00% lower", "DICA's is 10.00% lower", "Both go the way the paper claims, on one draw", "--seed"}},
		{rows(0.01, 0.012, 0.02, 0.018), []string{"Only one goes the way the paper claims"}},
		{rows(0.01, 0.012, 0.02, 0.022), []string{"Neither goes the way the paper claims"}},
	} {
		got := demoVerdict(tc.rows)
		for _, w := range tc.want {
			require.Contains(t, got, w)
		}
		for _, line := range strings.Split(got, "\n") {
			require.LessOrEqual(t, len(line), 86, line)
		}
	}
}
