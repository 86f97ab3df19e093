package eval

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dicalab/dica/dataset"
)

// The one-reference-sample protocol (DeepCyTOF: Li et al., "Gating mass
// cytometry data by deep learning", Bioinformatics 33:3423-3430, 2017):
// one sample is gated by hand, a classifier is trained on its cells alone
// and every other sample is gated by it. ReferenceSplit makes its split,
// ChooseReference its choice of the reference sample, and Evaluate with
// Options.Transductive fits the domain-invariant projections on every
// sample's unlabelled cells, as the protocol allows.

// ReferenceDistances returns, for each domain of ds, the mean over the
// other candidate domains h of the Frobenius norm ||C_g - C_h||_F of the
// difference of their covariance matrices: C_g is the sample covariance
// (denominator n_g - 1) of the inputs ds.X of domain g, as ds holds them
// (after any preprocessing transform). The candidates are the domains with
// at least 2 cells, and, when ds has class labels, at least one labelled
// cell; the other domains get NaN. It returns an error for a nil or
// invalid data set, fewer than 2 candidates, or a cancelled ctx.
func ReferenceDistances(ctx context.Context, ds *dataset.Dataset) ([]float64, error) {
	if ds == nil {
		return nil, errors.New("eval: nil data set")
	}
	if ctx == nil {
		return nil, errors.New("eval: nil context")
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	byDomain := make([][]int, len(ds.DomainNames))
	labelled := make([]bool, len(ds.DomainNames))
	for p, g := range ds.Domain {
		byDomain[g] = append(byDomain[g], p)
		if ds.Label == nil || ds.Label[p] >= 0 {
			labelled[g] = true
		}
	}
	d := ds.D()
	covs := make([][]float64, len(byDomain))
	var cands []int
	for g, rows := range byDomain {
		if len(rows) < 2 || !labelled[g] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		covs[g] = covariance(ds, rows, d)
		cands = append(cands, g)
	}
	if len(cands) < 2 {
		return nil, fmt.Errorf("eval: %d domain(s) with at least 2 labelled cells; choosing a reference needs 2", len(cands))
	}
	out := make([]float64, len(byDomain))
	for g := range out {
		out[g] = math.NaN()
	}
	for _, g := range cands {
		var sum float64
		for _, h := range cands {
			if h == g {
				continue
			}
			var ss float64
			for i, v := range covs[g] {
				diff := v - covs[h][i]
				ss += diff * diff
			}
			sum += math.Sqrt(ss)
		}
		out[g] = sum / float64(len(cands)-1)
	}
	return out, nil
}

// covariance returns the d x d sample covariance of the inputs of the rows
// (at least 2), row-major: the mean first, then the centered products.
func covariance(ds *dataset.Dataset, rows []int, d int) []float64 {
	mean := make([]float64, d)
	for _, p := range rows {
		for j, v := range ds.X.RawRowView(p) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(rows))
	}
	c := make([]float64, d*d)
	x := make([]float64, d)
	for _, p := range rows {
		for j, v := range ds.X.RawRowView(p) {
			x[j] = v - mean[j]
		}
		for i, xi := range x {
			row := c[i*d : i*d+i+1]
			for j := range row {
				row[j] += xi * x[j]
			}
		}
	}
	for i := range d {
		for j := 0; j <= i; j++ {
			v := c[i*d+j] / float64(len(rows)-1)
			c[i*d+j], c[j*d+i] = v, v
		}
	}
	return c
}

// ChooseReference returns the reference domain of the one-reference-sample
// protocol: the candidate domain whose covariance is closest on average to
// the others' (the smallest of ReferenceDistances, the first on ties), the
// choice of DeepCyTOF, and the distances. Errors are those of
// ReferenceDistances.
func ChooseReference(ctx context.Context, ds *dataset.Dataset) (int, []float64, error) {
	dist, err := ReferenceDistances(ctx, ds)
	if err != nil {
		return -1, nil, err
	}
	best := -1
	for g, v := range dist {
		if !math.IsNaN(v) && (best < 0 || v < dist[best]) {
			best = g
		}
	}
	return best, dist, nil
}

// ReferenceSplit returns the split of the one-reference-sample protocol:
// the domain ref (an index into ds.DomainNames) is the only training
// domain, and every other domain with a labelled cell is a test domain, in
// increasing index order (a domain without one is never scored). It
// returns an error when ref is out of range or has no labelled cell, or
// when no other domain has one.
func ReferenceSplit(ds *dataset.Dataset, ref int) (Split, error) {
	if ds == nil {
		return Split{}, errors.New("eval: nil data set")
	}
	if err := ds.Validate(); err != nil {
		return Split{}, fmt.Errorf("eval: %w", err)
	}
	if ref < 0 || ref >= len(ds.DomainNames) {
		return Split{}, fmt.Errorf("eval: reference domain index %d out of range [0, %d)", ref, len(ds.DomainNames))
	}
	labelled := make([]bool, len(ds.DomainNames))
	for p, g := range ds.Domain {
		if ds.Label == nil || ds.Label[p] >= 0 {
			labelled[g] = true
		}
	}
	if !labelled[ref] {
		return Split{}, fmt.Errorf("eval: reference domain %q has no labelled cell", ds.DomainNames[ref])
	}
	s := Split{Train: []int{ref}}
	for g, ok := range labelled {
		if ok && g != ref {
			s.Test = append(s.Test, g)
		}
	}
	if len(s.Test) == 0 {
		return Split{}, fmt.Errorf("eval: no domain besides the reference %q has a labelled cell to test", ds.DomainNames[ref])
	}
	return s, nil
}
