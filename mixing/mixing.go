// Package mixing measures how well cells from different domains (samples,
// batches, instruments) are mixed in a space, and how well cell populations
// stay apart: the numbers that say whether a projection removed a batch
// effect without blurring the biology.
//
// Four measures are provided, each computed exactly on the points given
// (callers subsample large data first; see MaxCells):
//
//   - the distributional variance of the domains (Muandet, Balduzzi &
//     Schölkopf, ICML 2013, Section 3): the spread of the domains' mean
//     embeddings under a kernel, (1/N) sum_i ||mu_i - mu_bar||^2.
//     DistributionalVariance uses a Gaussian kernel (bench toy and dica
//     demo use it on standardized components with the median-heuristic
//     bandwidth); LinearDistributionalVariance uses the linear kernel, the
//     convention of dica.Model.ProjectedVariance. Lower is better mixing.
//   - iLISI and cLISI (Korsunsky et al., Fast, sensitive and accurate
//     integration of single-cell data with Harmony, Nature Methods 2019):
//     the local inverse Simpson index 1 / sum_c p_c^2 of a cell, where p_c
//     is the weighted fraction of category c among the cell's nearest
//     neighbours, the weights being calibrated so that the neighbourhood
//     has a given perplexity (30 by default). With domains as categories
//     (iLISI) it is the effective number of domains around a cell: 1 when
//     the domains are apart, the number of domains when they are perfectly
//     mixed (at most about the perplexity). With populations as categories
//     (cLISI) 1 means the populations stay pure. See LISI for the exact
//     definition.
//   - the silhouette of the domain labels (Rousseeuw 1987): for each cell,
//     (b - a) / max(a, b) with a its mean distance to the other cells of
//     its domain and b the smallest mean distance to the cells of another
//     domain. Near 1 the domains form separate clusters, near 0 or below
//     they overlap. Lower is better mixing.
//
// Every measure makes O(n^2 d) distance computations for n points in d
// dimensions, in row blocks on all cores (runtime.GOMAXPROCS); results do
// not depend on the number of cores. Measure computes all of them in one
// pass, which evaluates the square root and the kernel value of each pair
// of points once when there are at most 16 domains.
package mixing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// DefaultPerplexity is the perplexity of the LISI neighbourhoods, as in
// Harmony's published code.
const DefaultPerplexity = 30

// MaxCells is the largest number of points the exact computations accept:
// at 50,000 points in 10 dimensions one pass computes 2.5e9 distances, about
// 10 s on two cores. Subsample larger data first.
const MaxCells = 50000

// Options configures Measure.
type Options struct {
	// Perplexity is the perplexity of the LISI neighbourhoods
	// (DefaultPerplexity); the neighbours are the 3 * Perplexity - 1
	// nearest other points (all others when there are fewer).
	Perplexity float64
	// Squared weighs LISI neighbours by exp(-beta d^2) (a Gaussian kernel)
	// instead of exp(-beta d), d the Euclidean distance, of the published
	// implementations (see LISI).
	Squared bool
	// Sigma is the bandwidth of the Gaussian kernel of the distributional
	// variance; 0 is the median heuristic (kernel.MedianSigma on at most
	// 1000 points sampled with Seed).
	Sigma float64
	// Seed seeds the sample of the median heuristic.
	Seed uint64
}

// Report holds the mixing measures of a set of points.
type Report struct {
	// Cells is the number of points, Domains the number of domains with
	// points.
	Cells   int `json:"cells"`
	Domains int `json:"domains"`
	// Perplexity and Neighbors are those of the LISI neighbourhoods.
	Perplexity float64 `json:"perplexity"`
	Neighbors  int     `json:"neighbors"`
	// ILISI is the mean over points of the LISI of the domain labels (1 to
	// Domains; higher is better mixing).
	ILISI float64 `json:"ilisi"`
	// CLISI is the mean LISI of the class labels (1: pure populations;
	// lower is better). It is NaN, and omitted from JSON, without classes.
	CLISI float64 `json:"-"`
	// Silhouette is the mean over points of the silhouette of the domain
	// labels, DomainSilhouette its mean over the points of each domain (in
	// the order of the domain indices, NaN for a domain without points).
	Silhouette       float64   `json:"silhouette"`
	DomainSilhouette []float64 `json:"-"`
	// DistributionalVariance is tr(KQ) of the domains under the Gaussian
	// kernel of bandwidth Sigma.
	DistributionalVariance float64 `json:"distributional_variance"`
	Sigma                  float64 `json:"dv_sigma"`
}

// MarshalJSON writes the report with "clisi" when it is defined, and NaN
// domain silhouettes as null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	out := struct {
		plain
		CLISI            *float64   `json:"clisi,omitempty"`
		DomainSilhouette []*float64 `json:"domain_silhouette"`
	}{plain: plain(r)}
	if !math.IsNaN(r.CLISI) {
		out.CLISI = &r.CLISI
	}
	out.DomainSilhouette = make([]*float64, len(r.DomainSilhouette))
	for i := range r.DomainSilhouette {
		if !math.IsNaN(r.DomainSilhouette[i]) {
			out.DomainSilhouette[i] = &r.DomainSilhouette[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes (an absent "clisi" and null
// silhouettes become NaN); a nil Report is an error.
func (r *Report) UnmarshalJSON(b []byte) error {
	if r == nil {
		return errors.New("mixing: UnmarshalJSON into a nil Report")
	}
	type plain Report
	var in struct {
		plain
		CLISI            *float64   `json:"clisi"`
		DomainSilhouette []*float64 `json:"domain_silhouette"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*r = Report(in.plain)
	r.CLISI = math.NaN()
	if in.CLISI != nil {
		r.CLISI = *in.CLISI
	}
	r.DomainSilhouette = nil
	for _, v := range in.DomainSilhouette {
		if v == nil {
			r.DomainSilhouette = append(r.DomainSilhouette, math.NaN())
		} else {
			r.DomainSilhouette = append(r.DomainSilhouette, *v)
		}
	}
	return nil
}

// Measure computes every measure of the points x (one per row) with the
// given domain of each point and, when classes is not nil, its class
// (indices from 0). It needs at least 2 points and 2 domains with points.
func Measure(ctx context.Context, x *mat.Dense, domains, classes []int, o Options) (*Report, error) {
	n, err := checkPoints(x, MaxCells)
	if err != nil {
		return nil, err
	}
	ndom, err := checkLabels(domains, n, "domain")
	if err != nil {
		return nil, err
	}
	var nclass int
	if classes != nil {
		if nclass, err = checkLabels(classes, n, "class"); err != nil {
			return nil, err
		}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	sizes := counts(domains, ndom)
	if nonEmpty(sizes) < 2 {
		return nil, errors.New("mixing: the points come from fewer than 2 domains; mixing needs at least 2")
	}
	perp := o.Perplexity
	if perp == 0 {
		perp = DefaultPerplexity
	}
	sigma := o.Sigma
	if sigma == 0 {
		sigma = kernel.MedianSigma(x, 0, o.Seed)
	}
	p := &pass{x: x, k: neighbours(perp, n), groups: domains, ngroups: ndom, distSums: true, gamma: 1 / (2 * sigma * sigma)}
	if err := p.run(ctx); err != nil {
		return nil, err
	}
	r := &Report{Cells: n, Domains: nonEmpty(sizes), Perplexity: perp, Neighbors: p.k, Sigma: sigma, CLISI: math.NaN()}
	nb := p.neighbors()
	// iLISI and cLISI share the neighbours' weights (LISI computes them
	// for each labelling).
	ws := lisiWeights(nb, perp, o.Squared)
	r.ILISI = mean(lisiIndex(nb, ws, domains, ndom))
	if classes != nil {
		r.CLISI = mean(lisiIndex(nb, ws, classes, nclass))
	}
	sil := silhouettes(p.dist, domains, sizes)
	r.Silhouette = mean(sil)
	r.DomainSilhouette = groupMeans(sil, domains, ndom)
	r.DistributionalVariance = variance(p.kern, domains, sizes)
	return r, nil
}

func (o Options) check() error {
	if math.IsNaN(o.Perplexity) || math.IsInf(o.Perplexity, 0) || o.Perplexity < 0 || o.Perplexity > 0 && o.Perplexity < 1 {
		return fmt.Errorf("mixing: perplexity %v; want a finite value >= 1 (or 0 for %d)", o.Perplexity, DefaultPerplexity)
	}
	if math.IsNaN(o.Sigma) || math.IsInf(o.Sigma, 0) || o.Sigma < 0 {
		return fmt.Errorf("mixing: sigma %v; want a finite value > 0 (or 0 for the median heuristic)", o.Sigma)
	}
	return nil
}

// neighbours returns the number of neighbours of a perplexity among n
// points: 3 * perplexity - 1 (rounded down), at most n - 1 and at least 1.
func neighbours(perp float64, n int) int {
	k := int(math.Min(3*perp, float64(n))) - 1
	return max(1, min(k, n-1))
}

// checkPoints checks that x holds between 2 and limit finite points and
// returns their number.
func checkPoints(x *mat.Dense, limit int) (int, error) {
	if x == nil || x.IsEmpty() {
		return 0, errors.New("mixing: no points (nil or empty matrix)")
	}
	n, _ := x.Dims()
	if n < 2 {
		return 0, fmt.Errorf("mixing: %d point; need at least 2", n)
	}
	if n > limit {
		return 0, fmt.Errorf("mixing: %d points; the exact computation takes at most %d (subsample the points first)", n, limit)
	}
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("mixing: point %d, coordinate %d (1-based): %v is not finite", i+1, j+1, v)
			}
		}
	}
	return n, nil
}

// checkLabels checks that there is one label >= 0 per point and returns the
// number of categories (the largest label + 1).
func checkLabels(labels []int, n int, what string) (int, error) {
	if len(labels) != n {
		return 0, fmt.Errorf("mixing: %d points but %d %s labels", n, len(labels), what)
	}
	c := 0
	for i, l := range labels {
		if l < 0 {
			return 0, fmt.Errorf("mixing: point %d (1-based): %s label %d is negative", i+1, what, l)
		}
		c = max(c, l+1)
	}
	return c, nil
}

func counts(labels []int, c int) []int {
	s := make([]int, c)
	for _, l := range labels {
		s[l]++
	}
	return s
}

func nonEmpty(sizes []int) int {
	k := 0
	for _, s := range sizes {
		if s > 0 {
			k++
		}
	}
	return k
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// groupMeans returns the mean of v over the points of each group (NaN for
// an empty group).
func groupMeans(v []float64, groups []int, ngroups int) []float64 {
	sum := make([]float64, ngroups)
	cnt := make([]int, ngroups)
	for i, g := range groups {
		sum[g] += v[i]
		cnt[g]++
	}
	for g := range sum {
		if cnt[g] == 0 {
			sum[g] = math.NaN()
		} else {
			sum[g] /= float64(cnt[g])
		}
	}
	return sum
}
