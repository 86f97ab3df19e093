package mixing

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DistributionalVariance returns the distributional variance of the groups
// of points of x (Muandet et al. 2013, Section 3: V_H = tr(KQ)) under the
// Gaussian kernel k(x, y) = exp(-||x - y||^2 / (2 sigma^2)):
//
//	V = (1/N) sum_i ||mu_i - mu_bar||^2 = (1/N) sum_i G_ii - (1/N^2) sum_ij G_ij,
//
// where mu_i is the mean embedding of group i, mu_bar the unweighted mean of
// the N group means, and G_ij = S_ij / (n_i n_j) with S_ij the sum of
// k(x, y) over x in group i and y in group j. Only groups with points count
// in N. It is 0 when all groups have the same points, and at most 1 - 1/N
// (the kernel values lie in (0, 1]). It needs between 2 and MaxCells finite points, at
// least 2 groups with points and sigma > 0.
func DistributionalVariance(ctx context.Context, x *mat.Dense, groups []int, sigma float64) (float64, error) {
	n, err := checkPoints(x, MaxCells)
	if err != nil {
		return 0, err
	}
	ng, err := checkLabels(groups, n, "group")
	if err != nil {
		return 0, err
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return 0, fmt.Errorf("mixing: sigma %v; want a finite value > 0", sigma)
	}
	sizes := counts(groups, ng)
	if nonEmpty(sizes) < 2 {
		return 0, errors.New("mixing: the distributional variance needs at least 2 groups with points")
	}
	p := &pass{x: x, groups: groups, ngroups: ng, gamma: 1 / (2 * sigma * sigma)}
	if err := p.run(ctx); err != nil {
		return 0, err
	}
	return variance(p.kern, groups, sizes), nil
}

// variance computes tr(KQ) from each point's kernel sums over the points of
// each group.
func variance(sums []float64, groups, sizes []int) float64 {
	ng := len(sizes)
	s := make([]float64, ng*ng)
	for i, g := range groups {
		row := s[g*ng : (g+1)*ng]
		for h, v := range sums[i*ng : (i+1)*ng] {
			row[h] += v
		}
	}
	var diag, all float64
	for g, ni := range sizes {
		if ni == 0 {
			continue
		}
		for h, nj := range sizes {
			if nj == 0 {
				continue
			}
			v := s[g*ng+h] / (float64(ni) * float64(nj))
			all += v
			if g == h {
				diag += v
			}
		}
	}
	N := float64(nonEmpty(sizes))
	return diag/N - all/(N*N)
}

// LinearDistributionalVariance returns the distributional variance of the
// groups of points of x under the linear kernel k(x, y) = x'y, that is
// (1/N) sum_i ||m_i - m_bar||^2 with m_i the mean of the points of group i
// and m_bar the unweighted mean of the N group means (groups without points
// do not count). On a DICA model's projections of its training data it is
// the model's ProjectedVariance. It costs O(n d).
func LinearDistributionalVariance(x *mat.Dense, groups []int) (float64, error) {
	n, err := checkPoints(x, math.MaxInt)
	if err != nil {
		return 0, err
	}
	ng, err := checkLabels(groups, n, "group")
	if err != nil {
		return 0, err
	}
	sizes := counts(groups, ng)
	if nonEmpty(sizes) < 1 {
		return 0, errors.New("mixing: no group with points")
	}
	_, d := x.Dims()
	means := make([]float64, ng*d)
	for i, g := range groups {
		m := means[g*d : (g+1)*d]
		for j, v := range x.RawRowView(i) {
			m[j] += v
		}
	}
	bar := make([]float64, d)
	for g, c := range sizes {
		if c == 0 {
			continue
		}
		m := means[g*d : (g+1)*d]
		for j := range m {
			m[j] /= float64(c)
			bar[j] += m[j]
		}
	}
	N := float64(nonEmpty(sizes))
	for j := range bar {
		bar[j] /= N
	}
	var v float64
	for g, c := range sizes {
		if c == 0 {
			continue
		}
		for j, m := range means[g*d : (g+1)*d] {
			v += (m - bar[j]) * (m - bar[j])
		}
	}
	return v / N, nil
}
