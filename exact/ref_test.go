package exact_test

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

// ref holds dense reference matrices of a fitted problem, formed
// independently of the package: H explicit, Q from exact.Q (checked against
// its closed form elsewhere), P by a dense inverse.
type ref struct {
	kc, a, d *mat.Dense
}

// centering returns H = I - 11^T/n.
func centering(n int) *mat.Dense {
	h := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.Set(i, j, -1/float64(n))
		}
		h.Set(i, i, 1-1/float64(n))
	}
	return h
}

// centered returns H M H.
func centered(m mat.Matrix) *mat.Dense {
	n, _ := m.Dims()
	h := centering(n)
	var t, out mat.Dense
	t.Mul(h, m)
	out.Mul(&t, h)
	return &out
}

// denseKernel evaluates k on all pairs with Eval (not Block).
func denseKernel(k kernel.Kernel, x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, k.Eval(x.RawRowView(i), x.RawRowView(j)))
		}
	}
	return g
}

// reference forms the canonical A and D of the model's problem densely:
// A = (1/n) K P K or (1/n) K^2, D = K Q K + K + lambda I (Q = 0 for KPCA,
// COIR), with K, L centered and P = L (L + n eps I)^{-1}. With class labels
// on some points only, the output term is over the n_L labelled points:
// A = (1/n_L) K[:, L] P_L K[L, :], with L_L their delta kernel centered
// over them and P_L = L_L (L_L + n_L eps I)^{-1}.
func reference(ds *dataset.Dataset, m *exact.Model) ref {
	n := ds.N()
	nf := float64(n)
	kc := centered(denseKernel(m.Kernel, ds.X))
	lambda := m.Options.Lambda
	if lambda == 0 {
		lambda = m.Jitter
	}
	var d mat.Dense
	d.Add(kc, diag(n, lambda))
	if m.Method == exact.DICA || m.Method == exact.UDICA {
		q := exact.Q(ds.Domain, ds.NumDomains())
		var t, kqk mat.Dense
		t.Mul(kc, q)
		kqk.Mul(&t, kc)
		d.Add(&d, &kqk)
	}
	var a mat.Dense
	if m.Method == exact.DICA || m.Method == exact.COIR {
		var l *mat.Dense
		rows := make([]int, 0, n) // the points of the output term
		if ds.Label != nil {
			var lab []int
			for p, c := range ds.Label {
				if c != dataset.NoLabel {
					rows, lab = append(rows, p), append(lab, c)
				}
			}
			l = mat.DenseCopyOf(kernel.Delta{}.Gram(lab))
		} else {
			for p := 0; p < n; p++ {
				rows = append(rows, p)
			}
			l = denseKernel(m.Options.OutputKernel, ds.Target)
		}
		nl := len(rows)
		lc := centered(l)
		var reg, inv, p, t mat.Dense
		reg.Add(lc, diag(nl, float64(nl)*m.Options.Epsilon))
		if err := inv.Inverse(&reg); err != nil {
			panic(err)
		}
		p.Mul(lc, &inv)
		kl := mat.NewDense(n, nl, nil) // K[:, L]
		for j, q := range rows {
			kl.SetCol(j, mat.Col(nil, q, kc))
		}
		t.Mul(kl, &p)
		a.Mul(&t, kl.T())
		a.Scale(1/float64(nl), &a)
	} else {
		a.Mul(kc, kc)
		a.Scale(1/nf, &a)
	}
	return ref{kc: kc, a: &a, d: &d}
}

func diag(n int, v float64) *mat.Dense {
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		d.Set(i, i, v)
	}
	return d
}

// norm2 returns the spectral norm of the symmetric matrix a.
func norm2(a *mat.Dense) float64 {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		panic("eig failed")
	}
	v := es.Values(nil)
	return math.Max(math.Abs(v[0]), math.Abs(v[n-1]))
}

// unlabel returns a copy of ds in which every third point and every point
// of the last domain have no label (dataset.NoLabel): labelled and
// unlabelled points, and a domain without a labelled point.
func unlabel(ds *dataset.Dataset) *dataset.Dataset {
	out := *ds
	out.Label = make([]int, len(ds.Label))
	last := ds.NumDomains() - 1
	for p, c := range ds.Label {
		if p%3 == 1 || ds.Domain[p] == last {
			c = dataset.NoLabel
		}
		out.Label[p] = c
	}
	return &out
}

// blobs returns a multi-domain classification data set: N domains of per
// points in d dimensions, class centers shared by all domains, a random shift
// per domain.
func blobs(seed uint64, N, per, d, classes int) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	centers := mat.NewDense(classes, d, nil)
	for c := 0; c < classes; c++ {
		for j := 0; j < d; j++ {
			centers.Set(c, j, 2*rng.NormFloat64())
		}
	}
	n := N * per
	x := mat.NewDense(n, d, nil)
	dom := make([]int, n)
	lab := make([]int, n)
	names := make([]string, N)
	cls := make([]string, classes)
	for c := range cls {
		cls[c] = string(rune('a' + c))
	}
	p := 0
	for i := 0; i < N; i++ {
		names[i] = string(rune('A' + i))
		shift := make([]float64, d)
		for j := range shift {
			shift[j] = 0.5 * rng.NormFloat64()
		}
		for s := 0; s < per; s++ {
			c := (s + i) % classes
			for j := 0; j < d; j++ {
				x.Set(p, j, centers.At(c, j)+shift[j]+rng.NormFloat64())
			}
			dom[p], lab[p] = i, c
			p++
		}
	}
	return &dataset.Dataset{X: x, Domain: dom, DomainNames: names, Label: lab, ClassNames: cls}
}
