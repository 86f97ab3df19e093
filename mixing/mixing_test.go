package mixing

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// randomPoints returns n points in d dimensions: groups of shifted Gaussian
// clouds (group g shifted by shift*g along the first axis), the group of
// each point, and a class of each point (the sign of the second coordinate).
func randomPoints(n, d, groups int, shift float64, seed uint64) (*mat.Dense, []int, []int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := mat.NewDense(n, d, nil)
	g := make([]int, n)
	c := make([]int, n)
	for i := range n {
		g[i] = i % groups
		for j := range d {
			x.Set(i, j, rng.NormFloat64())
		}
		x.Set(i, 0, x.At(i, 0)+shift*float64(g[i]))
		if x.At(i, 1) > 0 {
			c[i] = 1
		}
	}
	return x, g, c
}

// bruteNeighbors returns, for each point, the k nearest other points by a
// full sort of all distances (ties by index) and their distances.
func bruteNeighbors(x *mat.Dense, k int) ([][]int, [][]float64) {
	n, _ := x.Dims()
	idx := make([][]int, n)
	dist := make([][]float64, n)
	for i := range n {
		type cand struct {
			d float64
			j int
		}
		var cs []cand
		for j := range n {
			if j == i {
				continue
			}
			var s float64
			for t := range x.RawRowView(i) {
				v := x.At(i, t) - x.At(j, t)
				s += v * v
			}
			cs = append(cs, cand{math.Sqrt(s), j})
		}
		sort.Slice(cs, func(a, b int) bool { return cs[a].d < cs[b].d || cs[a].d == cs[b].d && cs[a].j < cs[b].j })
		for _, c := range cs[:k] {
			idx[i] = append(idx[i], c.j)
			dist[i] = append(dist[i], c.d)
		}
	}
	return idx, dist
}

func TestNearestNeighbors(t *testing.T) {
	// Real-valued points, and integer points with many exact ties and
	// duplicates.
	xr, _, _ := randomPoints(300, 4, 3, 1, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	xi := mat.NewDense(200, 2, nil)
	for i := range 200 {
		xi.Set(i, 0, float64(rng.IntN(5)))
		xi.Set(i, 1, float64(rng.IntN(5)))
	}
	// Many points with ties (the candidates below a sampled threshold),
	// and points whose every thresholdStride-th lies in a cluster of its
	// own: the strided sample holds only the clustered points, and its
	// first threshold leaves fewer than k candidates around them (a
	// second one with 4 times more sampled points below it is used).
	xm := mat.NewDense(1200, 2, nil)
	for i := range 1200 {
		xm.Set(i, 0, float64(rng.IntN(9)))
		xm.Set(i, 1, float64(rng.IntN(9)))
	}
	xs := mat.NewDense(800, 2, nil)
	for i := range 800 {
		off := 0.0
		if i%thresholdStride != 0 {
			off = 50
		}
		xs.Set(i, 0, off+rng.NormFloat64())
		xs.Set(i, 1, rng.NormFloat64())
	}
	for _, c := range []struct {
		name string
		x    *mat.Dense
		k    int
	}{{"real", xr, 10}, {"real all", xr, 299}, {"ties", xi, 30}, {"one", xi, 1},
		{"many ties", xm, 40}, {"strided", xs, 30}} {
		nb, err := NearestNeighbors(context.Background(), c.x, c.k)
		if err != nil {
			t.Fatal(err)
		}
		idx, dist := bruteNeighbors(c.x, c.k)
		for i := range idx {
			for tt := range c.k {
				if got := nb.Index[i*c.k+tt]; got != idx[i][tt] {
					t.Fatalf("%s: point %d neighbour %d is %d, want %d", c.name, i, tt, got, idx[i][tt])
				}
				if got := nb.Dist[i*c.k+tt]; math.Abs(got-dist[i][tt]) > 1e-13*(1+dist[i][tt]) {
					t.Fatalf("%s: point %d neighbour %d at %v, want %v", c.name, i, tt, got, dist[i][tt])
				}
			}
		}
	}
}

// bruteLISI is the published algorithm (harmonypy's compute_lisi): the
// 3 * perplexity nearest points, the first (the point itself) dropped, and
// weights exp(-beta d) without any shift.
func bruteLISI(x *mat.Dense, labels []int, perp float64, squared bool) []float64 {
	n, _ := x.Dims()
	k := min(int(3*perp), n) - 1
	idx, dist := bruteNeighbors(x, k)
	out := make([]float64, n)
	logU := math.Log(perp)
	for i := range n {
		d := append([]float64(nil), dist[i]...)
		if squared {
			for t := range d {
				d[t] *= d[t]
			}
		}
		p := make([]float64, k)
		hcalc := func(beta float64) float64 {
			var sum, dot float64
			for t, v := range d {
				p[t] = math.Exp(-v * beta)
				sum += p[t]
			}
			for t, v := range d {
				dot += v * p[t]
				p[t] /= sum
			}
			return math.Log(sum) + beta*dot/sum
		}
		beta, bmin, bmax := 1.0, math.Inf(-1), math.Inf(1)
		hdiff := hcalc(beta) - logU
		for try := 0; try < 50 && math.Abs(hdiff) >= 1e-5; try++ {
			if hdiff > 0 {
				bmin = beta
				if math.IsInf(bmax, 0) {
					beta *= 2
				} else {
					beta = (beta + bmax) / 2
				}
			} else {
				bmax = beta
				if math.IsInf(bmin, 0) {
					beta /= 2
				} else {
					beta = (beta + bmin) / 2
				}
			}
			hdiff = hcalc(beta) - logU
		}
		frac := map[int]float64{}
		for t, j := range idx[i] {
			frac[labels[j]] += p[t]
		}
		var s float64
		for _, v := range frac {
			s += v * v
		}
		out[i] = 1 / s
	}
	return out
}

func TestLISIBruteForce(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, d, g int
		shift   float64
		perp    float64
		squared bool
	}{
		{"mixed", 400, 3, 4, 0.5, 30, false},
		{"apart", 300, 2, 3, 4, 30, false},
		{"perplexity 10", 250, 5, 5, 1, 10, false},
		{"squared", 300, 3, 3, 1, 15, true},
		{"few points", 40, 2, 2, 1, 30, false},
	} {
		x, g, _ := randomPoints(c.n, c.d, c.g, c.shift, 3)
		k := neighbours(c.perp, c.n)
		nb, err := NearestNeighbors(context.Background(), x, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LISI(nb, g, c.perp, c.squared)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteLISI(x, g, c.perp, c.squared)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6*want[i] {
				t.Fatalf("%s: point %d: LISI %v, want %v", c.name, i, got[i], want[i])
			}
			if got[i] < 1-1e-12 || got[i] > float64(c.g)+1e-12 {
				t.Fatalf("%s: point %d: LISI %v outside [1, %d]", c.name, i, got[i], c.g)
			}
		}
	}
}

// copies returns b domains that hold the same m points (one copy each), in
// d dimensions, and the domain of each point.
func copies(m, d, b int, seed uint64) (*mat.Dense, []int) {
	base, _, _ := randomPoints(m, d, 1, 0, seed)
	x := mat.NewDense(m*b, d, nil)
	g := make([]int, m*b)
	for c := range b {
		for i := range m {
			x.SetRow(c*m+i, base.RawRowView(i))
			g[c*m+i] = c
		}
	}
	return x, g
}

// TestKnownAnswers checks the measures on constructed cases: identical
// copies of one cloud (perfect mixing), far apart clouds (no mixing), and
// many small domains (the perplexity limit).
func TestKnownAnswers(t *testing.T) {
	ctx := context.Background()
	// Perfect mixing: sites far apart, each holding m coincident points of
	// each of b domains, m*b = 90 = 3 * perplexity. The 89 neighbours of a
	// point are the other points of its site, all at distance 0, so their
	// weights are equal: m - 1 of its own domain and m of each other one,
	// and LISI = 89^2 / ((m-1)^2 + (b-1) m^2), within 0.2% of b.
	for _, b := range []int{2, 3, 5, 9} {
		m := 90 / b
		const sites = 4
		x := mat.NewDense(sites*m*b, 2, nil)
		g := make([]int, sites*m*b)
		for i := range g {
			site := i / (m * b)
			x.Set(i, 0, 1000*float64(site))
			x.Set(i, 1, -500*float64(site))
			g[i] = i % b
		}
		r, err := Measure(ctx, x, g, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := 89.0 * 89 / float64((m-1)*(m-1)+(b-1)*m*m)
		if math.Abs(r.ILISI-want) > 1e-12*want || math.Abs(r.ILISI-float64(b)) > 0.002*float64(b) {
			t.Errorf("%d domains mixed at every site: iLISI %v, want %v", b, r.ILISI, want)
		}
		if math.Abs(r.DistributionalVariance) > 1e-15 {
			t.Errorf("%d domains mixed at every site: distributional variance %v, want 0", b, r.DistributionalVariance)
		}
	}
	// Identical copies of one cloud: the silhouette is exactly -1/m (the
	// mean distance to another copy, S/m, against S/(m-1) to its own
	// domain), the distributional variance 0, and iLISI close to b: the
	// copy at distance 0 in every other domain makes a point's own domain
	// lighter than the others.
	for b := 2; b <= 4; b++ {
		const m = 400
		x, g := copies(m, 3, b, uint64(b))
		r, err := Measure(ctx, x, g, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.ILISI > float64(b) || r.ILISI < 0.9*float64(b) {
			t.Errorf("%d identical domains: iLISI %v, want a little below %d", b, r.ILISI, b)
		}
		if math.Abs(r.Silhouette+1.0/m) > 1e-12 {
			t.Errorf("%d identical domains: silhouette %v, want %v", b, r.Silhouette, -1.0/m)
		}
		if math.Abs(r.DistributionalVariance) > 1e-15 {
			t.Errorf("%d identical domains: distributional variance %v, want 0", b, r.DistributionalVariance)
		}
		if !math.IsNaN(r.CLISI) {
			t.Errorf("cLISI %v without classes", r.CLISI)
		}
	}

	// Far apart clouds, each larger than a neighbourhood: one domain and
	// one class around every point.
	x, g, _ := randomPoints(600, 3, 3, 100, 4)
	r, err := Measure(ctx, x, g, g, Options{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.ILISI != 1 || r.CLISI != 1 {
		t.Errorf("separated domains: iLISI %v cLISI %v, want 1 and 1", r.ILISI, r.CLISI)
	}
	if r.Silhouette < 0.95 {
		t.Errorf("separated domains: silhouette %v, want near 1", r.Silhouette)
	}
	for i, s := range r.DomainSilhouette {
		if s < 0.95 {
			t.Errorf("separated domains: domain %d silhouette %v", i, s)
		}
	}
	// Distinct far-apart clouds have mean embeddings orthogonal to machine
	// precision: G_ii = mean kernel within a domain, G_ij = 0, so V =
	// (1 - 1/N) mean_i G_ii.
	sizes := counts(g, 3)
	var gii float64
	for c := range 3 {
		var s float64
		for p := range g {
			for q := range g {
				if g[p] == c && g[q] == c {
					s += kernel.RBF{Sigma: r.Sigma}.Eval(x.RawRowView(p), x.RawRowView(q))
				}
			}
		}
		gii += s / float64(sizes[c]*sizes[c]) / 3
	}
	if want := (1 - 1.0/3) * gii; math.Abs(r.DistributionalVariance-want) > 1e-12 {
		t.Errorf("separated domains: distributional variance %v, want %v", r.DistributionalVariance, want)
	}

	// 400 domains of 2 points drawn from one distribution: nearly every
	// neighbour is in its own domain, so LISI is the inverse of the sum of
	// squared weights, exp(Renyi-2 entropy), which is at most exp(Shannon
	// entropy) = perplexity.
	x, g, _ = randomPoints(800, 2, 400, 0, 5)
	r, err = Measure(ctx, x, g, nil, Options{Perplexity: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.ILISI > 10*(1+1e-4) || r.ILISI < 5 {
		t.Errorf("400 domains, perplexity 10: iLISI %v, want at most 10 and near it", r.ILISI)
	}
}

// TestSilhouetteBruteForce compares the silhouettes with a direct
// computation of every pairwise distance, for groups interleaved (one of
// them a single point), in runs, and too many for the symmetric sweep.
func TestSilhouetteBruteForce(t *testing.T) {
	x, g, _ := randomPoints(301, 3, 4, 1.5, 6)
	g[0] = 4 // a group of one point
	runs := make([]int, len(g))
	many := make([]int, len(g))
	for i := range g {
		runs[i] = i * 3 / len(g)
		many[i] = i % (symMaxGroups + 3)
	}
	for _, c := range []struct {
		name string
		g    []int
	}{{"interleaved", g}, {"runs", runs}, {"many", many}} {
		got, err := Silhouette(context.Background(), x, c.g)
		if err != nil {
			t.Fatal(err)
		}
		g := c.g
		n := len(g)
		for i := range n {
			sum := map[int]float64{}
			cnt := map[int]int{}
			for j := range n {
				cnt[g[j]]++
				if j != i {
					sum[g[j]] += math.Sqrt(kernel.SqDist(x.RawRowView(i), x.RawRowView(j)))
				}
			}
			want := 0.0
			if cnt[g[i]] > 1 {
				a := sum[g[i]] / float64(cnt[g[i]]-1)
				b := math.Inf(1)
				for h, c := range cnt {
					if h != g[i] {
						b = math.Min(b, sum[h]/float64(c))
					}
				}
				want = (b - a) / math.Max(a, b)
			}
			if math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("%s: point %d: silhouette %v, want %v", c.name, i, got[i], want)
			}
		}
	}
}

// TestDistributionalVariance compares with exact.DistributionalVariance on
// the full kernel matrix, and with a direct computation from the mean
// embeddings' inner products.
func TestDistributionalVariance(t *testing.T) {
	x, g, _ := randomPoints(250, 3, 5, 0.7, 7)
	g[3] = 7 // groups 5 and 6 are empty: they must not count
	const sigma = 1.3
	got, err := DistributionalVariance(context.Background(), x, g, sigma)
	if err != nil {
		t.Fatal(err)
	}
	// Renumber the groups without gaps for exact.DistributionalVariance.
	remap := map[int]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 7: 5}
	gc := make([]int, len(g))
	for i, v := range g {
		gc[i] = remap[v]
	}
	var k mat.Dense
	kernel.RBF{Sigma: sigma}.Block(&k, x, x)
	r := k.RawMatrix()
	want := exact.DistributionalVariance(mat.NewSymDense(r.Rows, r.Data), gc, 6)
	if math.Abs(got-want) > 1e-13 {
		t.Errorf("distributional variance %v, exact package %v", got, want)
	}
	// (1/N) sum_i <mu_i, mu_i> - <mu_bar, mu_bar>.
	var diag, all float64
	for a := range 6 {
		for b := range 6 {
			var s float64
			var na, nb int
			for p := range gc {
				if gc[p] != a {
					continue
				}
				na++
				nb = 0
				for q := range gc {
					if gc[q] == b {
						nb++
						s += math.Exp(-kernel.SqDist(x.RawRowView(p), x.RawRowView(q)) / (2 * sigma * sigma))
					}
				}
			}
			v := s / float64(na*nb)
			all += v
			if a == b {
				diag += v
			}
		}
	}
	if direct := diag/6 - all/36; math.Abs(got-direct) > 1e-13 {
		t.Errorf("distributional variance %v, direct %v", got, direct)
	}
	// Groups in runs, and too many for the symmetric sweep.
	runs := make([]int, len(g))
	many := make([]int, len(g))
	for i := range g {
		runs[i] = i * 4 / len(g)
		many[i] = i % (symMaxGroups + 3)
	}
	for _, gg := range [][]int{runs, many} {
		ng := slices.Max(gg) + 1
		got, err := DistributionalVariance(context.Background(), x, gg, sigma)
		if err != nil {
			t.Fatal(err)
		}
		want := exact.DistributionalVariance(mat.NewSymDense(r.Rows, r.Data), gg, ng)
		if math.Abs(got-want) > 1e-13 || want < 1e-4 {
			t.Errorf("%d groups: distributional variance %v, exact package %v", ng, got, want)
		}
	}
}

// TestLinearVarianceIsProjectedVariance checks the linear distributional
// variance of a DICA model's projections of its training data against the
// variance the model reports, computed from its statistics.
func TestLinearVarianceIsProjectedVariance(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 60, Dim: 3, Classes: 3, Seed: 2})
	for _, m := range []dica.Method{dica.DICA, dica.UDICA, dica.KPCA} {
		model, err := dica.Fit(context.Background(), ds.Source(), dica.Config{Method: m, Rank: 40, Sigma: 1, Components: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		z, err := model.Transform(ds.X, dica.TransformOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := LinearDistributionalVariance(z, ds.Domain)
		if err != nil {
			t.Fatal(err)
		}
		if want := model.ProjectedVariance; math.Abs(got-want) > 1e-10*want || want <= 0 {
			t.Errorf("%v: linear distributional variance %v, model's projected variance %v", m, got, want)
		}
	}
}

// TestDeterministic checks that the results do not depend on the number of
// cores, bit for bit: with 1, 2 and 7 cores, for domains interleaved, in
// runs, and too many for the symmetric sweep.
func TestDeterministic(t *testing.T) {
	x, g, c := randomPoints(700, 4, 3, 0.8, 8)
	runs := make([]int, len(g))
	many := make([]int, len(g))
	for i := range g {
		runs[i] = i * 3 / len(g)
		many[i] = i % (symMaxGroups + 4)
	}
	run := func(procs int, g []int) *Report {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		r, err := Measure(context.Background(), x, g, c, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, g := range [][]int{runs, many, g} {
		ja, _ := json.Marshal(run(1, g))
		for _, procs := range []int{2, 7} {
			if jb, _ := json.Marshal(run(procs, g)); string(ja) != string(jb) {
				t.Errorf("1 core %s\n%d cores %s", ja, procs, jb)
			}
		}
	}
	a := run(1, g)
	ja, _ := json.Marshal(a)
	var back Report
	if err := json.Unmarshal(ja, &back); err != nil {
		t.Fatal(err)
	}
	if back.CLISI != a.CLISI || back.ILISI != a.ILISI || back.DomainSilhouette[2] != a.DomainSilhouette[2] {
		t.Errorf("JSON round trip: %+v, want %+v", back, a)
	}
	if !strings.Contains(string(ja), `"clisi":`) {
		t.Errorf("JSON without clisi: %s", ja)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	x, g, _ := randomPoints(20, 2, 2, 1, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	big := mat.NewDense(MaxCells+1, 1, nil)
	one := make([]int, 20)
	neg := append([]int(nil), g...)
	neg[5] = -1
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", func() error { _, err := Measure(ctx, nil, g, nil, Options{}); return err }(), "no points"},
		{"nan", func() error { _, err := Measure(ctx, nan, g, nil, Options{}); return err }(), "point 4, coordinate 2 (1-based): NaN is not finite"},
		{"too many", func() error { _, err := Measure(ctx, big, make([]int, MaxCells+1), nil, Options{}); return err }(), "at most 50000"},
		{"labels", func() error { _, err := Measure(ctx, x, g[:5], nil, Options{}); return err }(), "20 points but 5 domain labels"},
		{"negative", func() error { _, err := Measure(ctx, x, neg, nil, Options{}); return err }(), "domain label -1 is negative"},
		{"one domain", func() error { _, err := Measure(ctx, x, one, nil, Options{}); return err }(), "fewer than 2 domains"},
		{"perplexity", func() error { _, err := Measure(ctx, x, g, nil, Options{Perplexity: 0.5}); return err }(), "perplexity 0.5"},
		{"sigma", func() error { _, err := Measure(ctx, x, g, nil, Options{Sigma: math.Inf(1)}); return err }(), "sigma +Inf"},
		{"k", func() error { _, err := NearestNeighbors(ctx, x, 20); return err }(), "20 neighbours of 20 points"},
		{"nil neighbours", func() error { _, err := LISI(nil, g, 30, false); return err }(), "no neighbour lists"},
		{"silhouette one group", func() error { _, err := Silhouette(ctx, x, one); return err }(), "at least 2 groups"},
		{"dv sigma", func() error { _, err := DistributionalVariance(ctx, x, g, 0); return err }(), "sigma 0"},
		{"linear nil", func() error { _, err := LinearDistributionalVariance(nil, g); return err }(), "no points"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Measure(cctx, x, g, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
