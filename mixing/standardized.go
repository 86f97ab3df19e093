package mixing

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

// StandardizedVariance returns the distributional variance of the groups of
// the rows of z on their first k columns (all of them when z has fewer),
// each standardized to mean 0 and standard deviation 1, under a Gaussian
// kernel whose bandwidth is the median heuristic on 1000 rows (seed 1):
// the measure of the paper's Figure 2 (Muandet et al. 2013, Section 5.1)
// that `go run ./bench toy` and `dica demo` report. groups[i] in
// [0, ngroups) is the group of row i. It forms the n x n kernel matrix: it
// is meant for the toy data's few thousand points (DistributionalVariance
// streams).
func StandardizedVariance(z *mat.Dense, groups []int, ngroups, k int) (float64, error) {
	if z == nil || z.IsEmpty() {
		return 0, fmt.Errorf("mixing: StandardizedVariance of no points")
	}
	n, c := z.Dims()
	if len(groups) != n || k < 1 {
		return 0, fmt.Errorf("mixing: StandardizedVariance of %d rows with %d groups and k = %d", n, len(groups), k)
	}
	for i, g := range groups {
		if g < 0 || g >= ngroups {
			return 0, fmt.Errorf("mixing: StandardizedVariance: row %d (0-based) is in group %d, outside [0, %d)", i, g, ngroups)
		}
	}
	k = min(k, c)
	zs := mat.NewDense(n, k, nil)
	for j := 0; j < k; j++ {
		col := mat.Col(nil, j, z)
		mean, sd := stat.MeanStdDev(col, nil)
		if sd == 0 {
			sd = 1
		}
		for i := range col {
			col[i] = (col[i] - mean) / sd
		}
		zs.SetCol(j, col)
	}
	sigma := kernel.MedianSigma(zs, 1000, 1)
	var g mat.Dense
	kernel.RBF{Sigma: sigma}.Block(&g, zs, zs)
	r := g.RawMatrix()
	return exact.DistributionalVariance(mat.NewSymDense(r.Rows, r.Data), groups, ngroups), nil
}
