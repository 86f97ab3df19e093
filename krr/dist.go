package krr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/kernel"
)

// DefaultRCond is the default relative eigenvalue cutoff of the exact
// domain features: eigenvalues of K1 below DefaultRCond times the largest
// are dropped.
const DefaultRCond = 1e-12

// DistOptions configures the domain kernel of Distributional.
type DistOptions struct {
	// Sigma is the bandwidth of the domain kernel
	// k1(P, Q) = exp(-||mu_P - mu_Q||^2 / (2 Sigma^2)); 0 means the median
	// distance between the training domains' mean embeddings.
	Sigma float64
	// RFF, when positive, is the number D of random Fourier features
	// psi(mu) = sqrt(2/D) cos(Omega'mu + b), Omega_jk ~ N(0, 1/Sigma^2),
	// b_k ~ U[0, 2 pi), drawn from rand.NewPCG(Seed, 0). When 0, psi is
	// exact on the training domains: psi(mu) = k1(mu, M) V_r L_r^{-1/2},
	// with M the training means and K1 = k1(M, M) = V L V', eigenvalues
	// below RCond * max dropped; then psi(mu_P)'psi(mu_Q) = k1(P, Q) for
	// every training domain Q and any P.
	RFF int
	// Seed seeds the random Fourier features.
	Seed uint64
	// RCond is the eigenvalue cutoff of the exact features; 0 means
	// DefaultRCond.
	RCond float64
}

// Distributional builds the features of the paper's distributional kernel
// (Muandet et al. 2013: the kernel on (distribution, point)
// pairs used for the classifiers and regressors trained after DICA),
//
//	k((P, x), (Q, x')) = k1(P, Q) k2(x, x'),
//
// with k1 an RBF kernel on the mean embeddings mu_P = E_P[phi_e(x)] under
// the embedding map phi_e and k2 approximated by the point map phi. With
// explicit features psi for k1 the product kernel is linear in
//
//	z(P, x) = psi(mu_P) (x) phi(x)   (Kronecker product, index a*m2 + b),
//
// since z(P, x)'z(Q, x') = psi(mu_P)'psi(mu_Q) phi(x)'phi(x'). Each domain's
// mean embedding is computed from that domain's own points, for training
// and test data alike (domain generalization: no test labels are used).
type Distributional struct {
	// Embed is the map phi_e whose domain means are the mean embeddings.
	Embed approx.Map
	// Point is the map phi of the point kernel k2.
	Point approx.Map
	// Sigma is the bandwidth of k1.
	Sigma float64
	// Means holds the mean embeddings of the training domains, one row per
	// domain in order of first appearance.
	Means *mat.Dense

	t     *mat.Dense // exact: N x r, V_r L_r^{-1/2}
	omega *mat.Dense // RFF: me x D
	phase []float64  // RFF: D
}

// NewDistributional fits the domain features on training points x with
// domain labels domains (any int values; at least one domain). Embed may be
// nil, meaning Point. It returns an error for mismatched shapes, NaN or Inf
// inputs, or bad options.
func NewDistributional(embed, point approx.Map, x *mat.Dense, domains []int, o DistOptions) (*Distributional, error) {
	if point == nil {
		return nil, errors.New("krr: nil point map")
	}
	if embed == nil {
		embed = point
	}
	if o.RFF < 0 {
		return nil, fmt.Errorf("krr: RFF = %d, want >= 0", o.RFF)
	}
	if !(o.Sigma >= 0) || math.IsInf(o.Sigma, 1) {
		return nil, fmt.Errorf("krr: Sigma = %g, want finite Sigma >= 0 (0 for the median heuristic)", o.Sigma)
	}
	if !(o.RCond >= 0) {
		return nil, fmt.Errorf("krr: RCond = %g, want >= 0", o.RCond)
	}
	if o.RCond == 0 {
		o.RCond = DefaultRCond
	}
	_, means, err := MeanEmbeddings(embed, x, domains)
	if err != nil {
		return nil, err
	}
	d := &Distributional{Embed: embed, Point: point, Sigma: o.Sigma, Means: means}
	if d.Sigma == 0 {
		d.Sigma = kernel.MedianDistance(means)
	}
	ndom, me := means.Dims()
	if o.RFF > 0 {
		rng := rand.New(rand.NewPCG(o.Seed, 0))
		d.omega = mat.NewDense(me, o.RFF, nil)
		for i := range me {
			row := d.omega.RawRowView(i)
			for k := range row {
				row[k] = rng.NormFloat64() / d.Sigma
			}
		}
		d.phase = make([]float64, o.RFF)
		for k := range d.phase {
			d.phase[k] = 2 * math.Pi * rng.Float64()
		}
		return d, nil
	}
	k1 := mat.NewDense(ndom, ndom, nil)
	kernel.RBF{Sigma: d.Sigma}.Block(k1, means, means)
	sym := mat.NewSymDense(ndom, nil)
	for i := range ndom {
		for j := i; j < ndom; j++ {
			sym.SetSym(i, j, (k1.At(i, j)+k1.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("krr: eigendecomposition of the domain kernel matrix failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := vals[ndom-1]
	var keep []int
	for i := ndom - 1; i >= 0; i-- {
		if vals[i] > o.RCond*top {
			keep = append(keep, i)
		}
	}
	d.t = mat.NewDense(ndom, len(keep), nil)
	for c, i := range keep {
		s := 1 / math.Sqrt(vals[i])
		for r := range ndom {
			d.t.Set(r, c, vecs.At(r, i)*s)
		}
	}
	return d, nil
}

// DomainDim returns m1, the number of domain features psi.
func (d *Distributional) DomainDim() int {
	if d.omega != nil {
		return len(d.phase)
	}
	_, r := d.t.Dims()
	return r
}

// Dim returns m1 * m2, the number of product features.
func (d *Distributional) Dim() int { return d.DomainDim() * d.Point.Dim() }

// Psi returns the domain features psi(mu) (one row per row of means, which
// has the embedding dimension as columns). It returns an error if means is
// empty or has another number of columns than Means.
func (d *Distributional) Psi(means *mat.Dense) (*mat.Dense, error) {
	if means == nil || means.IsEmpty() {
		return nil, errors.New("krr: empty mean embeddings")
	}
	n, me := means.Dims()
	if _, want := d.Means.Dims(); me != want {
		return nil, fmt.Errorf("krr: means have %d columns, want %d", me, want)
	}
	if d.omega != nil {
		dd := len(d.phase)
		out := mat.NewDense(n, dd, nil)
		out.Mul(means, d.omega)
		s := math.Sqrt(2 / float64(dd))
		for i := range n {
			row := out.RawRowView(i)
			for k := range row {
				row[k] = s * math.Cos(row[k]+d.phase[k])
			}
		}
		return out, nil
	}
	ndom, _ := d.Means.Dims()
	kb := mat.NewDense(n, ndom, nil)
	kernel.RBF{Sigma: d.Sigma}.Block(kb, means, d.Means)
	var out mat.Dense
	out.Mul(kb, d.t)
	return &out, nil
}

// Features returns the product features z(P_i, x_i) of the rows of x, where
// P_i is the domain of row i given by domains (any int values) and each
// domain's mean embedding is the mean of Embed over that domain's rows of x.
// It returns an error for mismatched shapes or non-finite inputs.
func (d *Distributional) Features(x *mat.Dense, domains []int) (Features, error) {
	if _, c := x.Dims(); c != d.Point.InputDim() {
		return nil, fmt.Errorf("krr: input has %d columns, point map expects %d", c, d.Point.InputDim())
	}
	idx, means, err := meanEmbeddings(d.Embed, x, domains)
	if err != nil {
		return nil, err
	}
	psi, err := d.Psi(means)
	if err != nil {
		return nil, err
	}
	return &product{x: x, dom: idx, psi: psi, point: d.Point}, nil
}

// MeanEmbeddings returns the distinct domain labels in order of first
// appearance and the mean embeddings mu_P = (1/n_P) sum_{i in P} phi_e(x_i),
// one row per domain. It returns an error for mismatched shapes or non-finite
// inputs.
func MeanEmbeddings(embed approx.Map, x *mat.Dense, domains []int) (labels []int, means *mat.Dense, err error) {
	idx, means, err := meanEmbeddings(embed, x, domains)
	if err != nil {
		return nil, nil, err
	}
	ndom, _ := means.Dims()
	labels = make([]int, ndom)
	for i, l := range domains {
		labels[idx[i]] = l
	}
	return labels, means, nil
}

// meanEmbeddings returns the index of each row's domain (in order of first
// appearance) and the mean embeddings.
func meanEmbeddings(embed approx.Map, x *mat.Dense, domains []int) ([]int, *mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, nil, errors.New("krr: empty input matrix")
	}
	n, c := x.Dims()
	if n != len(domains) {
		return nil, nil, fmt.Errorf("krr: %d rows in x but %d domain labels", n, len(domains))
	}
	if c != embed.InputDim() {
		return nil, nil, fmt.Errorf("krr: input has %d columns, embedding map expects %d", c, embed.InputDim())
	}
	if err := checkFinite(x); err != nil {
		return nil, nil, err
	}
	idx := make([]int, n)
	pos := make(map[int]int)
	var counts []float64
	for i, l := range domains {
		p, ok := pos[l]
		if !ok {
			p = len(counts)
			pos[l] = p
			counts = append(counts, 0)
		}
		idx[i] = p
		counts[p]++
	}
	ndom, me := len(counts), embed.Dim()
	sums, err := reduceChunks(context.Background(), n, DefaultBlockRows, ndom*me, func() func(acc []float64, lo, hi int) error {
		var phi mat.Dense
		return func(acc []float64, lo, hi int) error {
			phi.Reset()
			embed.Map(&phi, x.Slice(lo, hi, 0, c).(*mat.Dense))
			for i := lo; i < hi; i++ {
				s := acc[idx[i]*me : (idx[i]+1)*me]
				for j, v := range phi.RawRowView(i - lo) {
					s[j] += v
				}
			}
			return nil
		}
	})
	if err != nil {
		return nil, nil, err
	}
	means := mat.NewDense(ndom, me, sums)
	for p := range ndom {
		row := means.RawRowView(p)
		for j := range row {
			row[j] /= counts[p]
		}
	}
	return idx, means, nil
}

// product is the Features of Distributional: row i is psi[dom[i]] (x) phi(x_i).
type product struct {
	x     *mat.Dense
	dom   []int
	psi   *mat.Dense // ndom x m1
	point approx.Map
}

func (p *product) Len() int { return len(p.dom) }
func (p *product) Dim() int { _, m1 := p.psi.Dims(); return m1 * p.point.Dim() }

func (p *product) Block(dst *mat.Dense, lo, hi int) {
	_, m1 := p.psi.Dims()
	m2 := p.point.Dim()
	if dst.IsEmpty() {
		dst.ReuseAs(hi-lo, m1*m2)
	} else if r, c := dst.Dims(); r != hi-lo || c != m1*m2 {
		panic(fmt.Sprintf("krr: destination is %d x %d, want %d x %d", r, c, hi-lo, m1*m2))
	}
	_, c := p.x.Dims()
	var phi mat.Dense
	p.point.Map(&phi, p.x.Slice(lo, hi, 0, c).(*mat.Dense))
	for i := lo; i < hi; i++ {
		psi := p.psi.RawRowView(p.dom[i])
		f := phi.RawRowView(i - lo)
		out := dst.RawRowView(i - lo)
		for a, s := range psi {
			seg := out[a*m2 : (a+1)*m2]
			for b, v := range f {
				seg[b] = s * v
			}
		}
	}
}

// normal forms Phi'Phi = sum_P (psi_P psi_P') (x) G_P and
// Phi'y = sum_P psi_P (x) h_P from the per-domain point Gram matrices
// G_P = sum_{i in P} phi(x_i) phi(x_i)' and h_P = sum_{i in P} y_i phi(x_i):
// O(n m2^2 + N (m1 m2)^2) instead of O(n (m1 m2)^2).
func (p *product) normal(ctx context.Context, y []float64, rows int) (*mat.SymDense, []float64, error) {
	ndom, m1 := p.psi.Dims()
	m2 := p.point.Dim()
	_, c := p.x.Dims()
	gsize := m2 * m2
	stride := gsize + m2 // per domain: G (upper) then h
	acc, err := reduceChunks(ctx, len(p.dom), rows, ndom*stride, func() func(acc []float64, lo, hi int) error {
		var phi mat.Dense
		return func(acc []float64, lo, hi int) error {
			phi.Reset()
			p.point.Map(&phi, p.x.Slice(lo, hi, 0, c).(*mat.Dense))
			raw := phi.RawMatrix()
			for i := range hi - lo {
				for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+m2] {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return fmt.Errorf("krr: point feature [%d, %d] = %g is not finite", lo+i, j, v)
					}
				}
			}
			// Runs of rows of the same domain get one SYRK each.
			for s := lo; s < hi; {
				e := s + 1
				for e < hi && p.dom[e] == p.dom[s] {
					e++
				}
				q := p.dom[s]
				sub := blas64.General{Rows: e - s, Cols: m2, Stride: raw.Stride, Data: raw.Data[(s-lo)*raw.Stride:]}
				gemm.Syrk(blas.Trans, sub, blas64.Symmetric{Uplo: blas.Upper, N: m2, Stride: m2, Data: acc[q*stride : q*stride+gsize]})
				blas64.Gemv(blas.Trans, 1, sub, blas64.Vector{N: e - s, Inc: 1, Data: y[s:e]}, 1,
					blas64.Vector{N: m2, Inc: 1, Data: acc[q*stride+gsize : (q+1)*stride]})
				s = e
			}
			return nil
		}
	})
	if err != nil {
		return nil, nil, err
	}
	m := m1 * m2
	a := mat.NewSymDense(m, nil)
	araw := a.RawSymmetric()
	b := make([]float64, m)
	for q := range ndom {
		psi := p.psi.RawRowView(q)
		g := acc[q*stride : q*stride+gsize]
		h := acc[q*stride+gsize : (q+1)*stride]
		for ai, sa := range psi {
			for bi, v := range h {
				b[ai*m2+bi] += sa * v
			}
			for aj := ai; aj < m1; aj++ {
				coef := sa * psi[aj]
				if coef == 0 {
					continue
				}
				for bi := range m2 {
					// Block (ai, aj) of A is coef * G; only the upper
					// triangle of A is stored, and G holds its upper
					// triangle, so read G symmetrically.
					row := araw.Data[(ai*m2+bi)*araw.Stride:]
					for bj := range m2 {
						col := aj*m2 + bj
						if col < ai*m2+bi {
							continue
						}
						gv := g[bi*m2+bj]
						if bj < bi {
							gv = g[bj*m2+bi]
						}
						row[col] += coef * gv
					}
				}
			}
		}
	}
	return a, b, nil
}
