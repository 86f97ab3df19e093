package mixing

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Neighbors holds the K nearest other points of each of N points.
type Neighbors struct {
	// K is the number of neighbours of each point.
	K int
	// Index[i*K+t] is the t-th nearest neighbour of point i (t from 0), in
	// order of increasing distance, ties by increasing index; a point is
	// never its own neighbour, even when another point coincides with it.
	Index []int
	// Dist[i*K+t] is the Euclidean distance to that neighbour.
	Dist []float64
}

// Len returns the number of points.
func (nb *Neighbors) Len() int {
	if nb == nil || nb.K == 0 {
		return 0
	}
	return len(nb.Index) / nb.K
}

// NearestNeighbors returns the k nearest other points of each row of x
// (Euclidean distance), found exactly: every distance is computed, in row
// blocks on all cores, summed from coordinate differences so that equal
// points are at distance 0. The result does not depend on the number of
// cores. x must hold between 2 and MaxCells finite points, and 1 <= k < n.
func NearestNeighbors(ctx context.Context, x *mat.Dense, k int) (*Neighbors, error) {
	n, err := checkPoints(x, MaxCells)
	if err != nil {
		return nil, err
	}
	if k < 1 || k >= n {
		return nil, fmt.Errorf("mixing: %d neighbours of %d points; want 1 to %d", k, n, n-1)
	}
	p := &pass{x: x, k: k}
	if err := p.run(ctx); err != nil {
		return nil, err
	}
	return p.neighbors(), nil
}

func (nb *Neighbors) check(n int) error {
	if nb == nil || nb.K < 1 || len(nb.Index) != nb.Len()*nb.K || len(nb.Dist) != len(nb.Index) || nb.Len() == 0 {
		return errors.New("mixing: no neighbour lists (nil, empty or inconsistent Neighbors)")
	}
	if nb.Len() != n {
		return fmt.Errorf("mixing: neighbour lists of %d points but %d labels", nb.Len(), n)
	}
	for i, j := range nb.Index {
		if j < 0 || j >= n {
			return fmt.Errorf("mixing: neighbour %d of point %d is %d, outside [0, %d)", i%nb.K, i/nb.K, j, n)
		}
	}
	return nil
}
