package mixing

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/mat"
)

// Silhouette returns the silhouette of each point of x for the given
// groups (indices from 0; Rousseeuw 1987): with a the mean Euclidean
// distance from the point to the other points of its group and b the
// smallest mean distance to the points of another group,
//
//	s = (b - a) / max(a, b),
//
// and s = 0 for a point alone in its group or when a = b = 0 (the
// convention of scikit-learn's silhouette_samples). The mean over all
// points is the silhouette score. It needs between 2 and MaxCells finite
// points and at least 2 groups with points.
func Silhouette(ctx context.Context, x *mat.Dense, groups []int) ([]float64, error) {
	n, err := checkPoints(x, MaxCells)
	if err != nil {
		return nil, err
	}
	ng, err := checkLabels(groups, n, "group")
	if err != nil {
		return nil, err
	}
	sizes := counts(groups, ng)
	if nonEmpty(sizes) < 2 {
		return nil, errors.New("mixing: the silhouette needs at least 2 groups with points")
	}
	p := &pass{x: x, groups: groups, ngroups: ng, distSums: true}
	if err := p.run(ctx); err != nil {
		return nil, err
	}
	return silhouettes(p.dist, groups, sizes), nil
}

// silhouettes computes the silhouettes from each point's sums of distances
// to the points of each group (itself excluded).
func silhouettes(sums []float64, groups, sizes []int) []float64 {
	ng := len(sizes)
	out := make([]float64, len(groups))
	for i, g := range groups {
		if sizes[g] < 2 {
			continue
		}
		s := sums[i*ng : (i+1)*ng]
		a := s[g] / float64(sizes[g]-1)
		b := -1.0
		for h, m := range sizes {
			if h == g || m == 0 {
				continue
			}
			if v := s[h] / float64(m); b < 0 || v < b {
				b = v
			}
		}
		if den := max(a, b); den > 0 {
			out[i] = (b - a) / den
		}
	}
	return out
}
