// Package toy generates the synthetic multi-domain data of the DICA paper
// (Muandet, Balduzzi & Schölkopf, ICML 2013, Section 5.1) and a
// classification variant, for tests, examples and the demo.
//
// Everything is drawn from seeded PCG generators (math/rand/v2): the same
// Options give the same data, bit for bit. The quantities shared by all
// domains (the regression coefficients b1, b2, c; the class rule) depend
// only on the seed and the dimension; domain i is drawn from its own stream,
// so training domains do not change when more test domains are requested,
// and test domains come from the same generator as the training ones.
package toy

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dicalab/dica/dataset"
)

// Defaults used for zero fields of Options.
const (
	DefaultDomains  = 10
	DefaultMeanSize = 200
	DefaultDim      = 5
	DefaultClasses  = 3
)

// WishartScale and WishartDOF are the parameters of the Wishart distribution
// W(WishartScale * I, WishartDOF) from which each regression domain's
// covariance is drawn, as in the paper (W(0.2 I_5, 10)). Its mean is
// WishartDOF * WishartScale * I = 2 I.
const (
	WishartScale = 0.2
	WishartDOF   = 10
)

// Options configures the generators. Zero fields take the defaults above.
// Invalid values (see Validate) make the generators panic: callers that take
// options from users should call Validate first.
type Options struct {
	// Domains is the number of (training) domains N.
	Domains int
	// MeanSize is the Poisson mean of the domain sizes: n_i ~ Poisson(MeanSize),
	// raised to 2 if smaller (every domain needs at least 2 points).
	MeanSize float64
	// Dim is the input dimension d.
	Dim int
	// Classes is the number of classes c of Classification (at least 2).
	Classes int
	// Seed seeds every random draw.
	Seed uint64
}

// Validate returns an error for negative or non-finite fields and for
// Classes = 1.
func (o Options) Validate() error {
	switch {
	case o.Domains < 0:
		return fmt.Errorf("toy: Domains = %d; need >= 0 (0 means %d)", o.Domains, DefaultDomains)
	case o.MeanSize < 0 || math.IsNaN(o.MeanSize) || math.IsInf(o.MeanSize, 0):
		return fmt.Errorf("toy: MeanSize = %v; need a finite value >= 0 (0 means %d)", o.MeanSize, DefaultMeanSize)
	case o.Dim < 0:
		return fmt.Errorf("toy: Dim = %d; need >= 0 (0 means %d)", o.Dim, DefaultDim)
	case o.Classes < 0 || o.Classes == 1:
		return fmt.Errorf("toy: Classes = %d; need 0 (meaning %d) or at least 2", o.Classes, DefaultClasses)
	}
	return nil
}

func (o Options) resolve() Options {
	if err := o.Validate(); err != nil {
		panic(err.Error())
	}
	if o.Domains == 0 {
		o.Domains = DefaultDomains
	}
	if o.MeanSize == 0 {
		o.MeanSize = DefaultMeanSize
	}
	if o.Dim == 0 {
		o.Dim = DefaultDim
	}
	if o.Classes == 0 {
		o.Classes = DefaultClasses
	}
	return o
}

// Stream identifiers: the shared parameters and each domain have their own
// PCG stream, so that adding domains does not change earlier ones.
const (
	streamShared = 0x5eed_0000_0000_0001
	streamDomain = 0xd0a1_0000_0000_0000
)

func sharedRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, streamShared)) }

func domainSource(seed uint64, i int) *rand.PCG {
	return rand.NewPCG(seed, streamDomain+uint64(i))
}

// Regression returns the paper's toy regression data: o.Domains domains
// named "d1".."dN"; domain i has n_i ~ Poisson(MeanSize) points
// x ~ N(0, Sigma_i) in R^d with Sigma_i ~ W(0.2 I_d, 10); the real target is
//
//	y = sign(b1'x + e1) * log|b2'x + c + e2|,  e1, e2 ~ N(0, 1),
//
// with b1, b2 ~ N(0, I_d) and c ~ N(0, 1) drawn once from the seed and shared
// by all domains. Target is n x 1, named "y".
func Regression(o Options) *dataset.Dataset {
	o = o.resolve()
	return regression(o, 0, o.Domains)
}

// RegressionSplit returns Regression(o) as train, and test domains unseen
// in training, named "d(N+1)".."d(N+test)", drawn from the same generator
// (same b1, b2, c).
func RegressionSplit(o Options, test int) (train, testSet *dataset.Dataset) {
	o = o.resolve()
	if test < 1 {
		panic(fmt.Sprintf("toy: %d test domains", test))
	}
	return regression(o, 0, o.Domains), regression(o, o.Domains, test)
}

// Classification returns multi-domain classification data with o.Classes
// classes. A latent point z ~ N(0, I_d) is labelled by a rule shared by all
// domains: the angle of (u1'z, u2'z), for two fixed orthonormal directions
// u1, u2 drawn from the seed, falls in one of c equal sectors (c = 2: the
// sign of u1'z; c = 4: the sign pattern of u1'z and u2'z). Domain i observes
// x = s_i .* z + m_i, with its own per-dimension scale
// s_ij = exp(0.3 g), g ~ N(0, 1), and shift m_i ~ N(0, I_d): the class rule
// is shared, the batch effect is not. Domain sizes are as in Regression.
func Classification(o Options) *dataset.Dataset {
	o = o.resolve()
	return classification(o, 0, o.Domains)
}

// ClassificationSplit returns Classification(o) as train, and test domains
// unseen in training, named "d(N+1)".."d(N+test)", with the same class rule.
func ClassificationSplit(o Options, test int) (train, testSet *dataset.Dataset) {
	o = o.resolve()
	if test < 1 {
		panic(fmt.Sprintf("toy: %d test domains", test))
	}
	return classification(o, 0, o.Domains), classification(o, o.Domains, test)
}

// regParams are the regression coefficients shared by all domains.
type regParams struct {
	b1, b2 []float64
	c      float64
}

func newRegParams(o Options, rng *rand.Rand) regParams {
	p := regParams{b1: make([]float64, o.Dim), b2: make([]float64, o.Dim)}
	for j := range p.b1 {
		p.b1[j] = rng.NormFloat64()
	}
	for j := range p.b2 {
		p.b2[j] = rng.NormFloat64()
	}
	p.c = rng.NormFloat64()
	return p
}

// regDomain holds what is drawn for one regression domain.
type regDomain struct {
	n int
	// g (d x WishartDOF) has N(0, WishartScale) entries; Sigma = G G^T.
	g   *mat.Dense
	rng *rand.Rand
}

func drawSize(src *rand.PCG, mean float64) int {
	n := int(distuv.Poisson{Lambda: mean, Src: src}.Rand())
	return max(n, 2)
}

func newRegDomain(o Options, i int) regDomain {
	src := domainSource(o.Seed, i)
	n := drawSize(src, o.MeanSize)
	rng := rand.New(src)
	g := mat.NewDense(o.Dim, WishartDOF, nil)
	s := math.Sqrt(WishartScale)
	for r := 0; r < o.Dim; r++ {
		for c := 0; c < WishartDOF; c++ {
			g.Set(r, c, s*rng.NormFloat64())
		}
	}
	return regDomain{n: n, g: g, rng: rng}
}

// sigma returns the domain's covariance G G^T, a draw from W(0.2 I, 10).
func (d regDomain) sigma() *mat.SymDense {
	r, _ := d.g.Dims()
	s := mat.NewSymDense(r, nil)
	s.SymOuterK(1, d.g)
	return s
}

func regression(o Options, first, count int) *dataset.Dataset {
	p := newRegParams(o, sharedRNG(o.Seed))
	var rows [][]float64
	var ys []float64
	var dom []int
	names := make([]string, count)
	z := make([]float64, WishartDOF)
	for i := 0; i < count; i++ {
		names[i] = fmt.Sprintf("d%d", first+i+1)
		d := newRegDomain(o, first+i)
		for k := 0; k < d.n; k++ {
			for j := range z {
				z[j] = d.rng.NormFloat64()
			}
			x := make([]float64, o.Dim)
			// x = G z has covariance G G^T = Sigma_i.
			for r := range x {
				x[r] = dot(d.g.RawRowView(r), z)
			}
			e1, e2 := d.rng.NormFloat64(), d.rng.NormFloat64()
			y := sign(dot(p.b1, x)+e1) * math.Log(math.Abs(dot(p.b2, x)+p.c+e2))
			rows = append(rows, x)
			ys = append(ys, y)
			dom = append(dom, i)
		}
	}
	ds := &dataset.Dataset{
		X:           stack(rows, o.Dim),
		Features:    featureNames(o.Dim),
		Domain:      dom,
		DomainNames: names,
		Target:      mat.NewDense(len(ys), 1, ys),
		TargetNames: []string{"y"},
	}
	if err := ds.Validate(); err != nil {
		panic("toy: internal error: " + err.Error())
	}
	return ds
}

// classRule labels latent points by the sector of their angle in the plane
// of two orthonormal directions.
type classRule struct {
	u1, u2  []float64
	classes int
}

func newClassRule(o Options) classRule {
	rng := sharedRNG(o.Seed)
	// Draw past the regression parameters so the rule does not reuse b1, b2.
	_ = newRegParams(o, rng)
	u1 := make([]float64, o.Dim)
	u2 := make([]float64, o.Dim)
	for j := range u1 {
		u1[j] = rng.NormFloat64()
	}
	for j := range u2 {
		u2[j] = rng.NormFloat64()
	}
	normalize(u1)
	if o.Dim > 1 {
		// Gram-Schmidt: u2 orthogonal to u1.
		a := dot(u1, u2)
		for j := range u2 {
			u2[j] -= a * u1[j]
		}
		normalize(u2)
	} else {
		u2[0] = 0
	}
	return classRule{u1: u1, u2: u2, classes: o.Classes}
}

// label returns the class of latent point z.
func (r classRule) label(z []float64) int {
	if r.classes == 2 {
		if dot(r.u1, z) >= 0 {
			return 1
		}
		return 0
	}
	th := math.Atan2(dot(r.u2, z), dot(r.u1, z)) // in (-pi, pi]
	c := int(math.Floor((th + math.Pi) / (2 * math.Pi) * float64(r.classes)))
	return min(max(c, 0), r.classes-1)
}

func classification(o Options, first, count int) *dataset.Dataset {
	rule := newClassRule(o)
	var rows [][]float64
	var lab, dom []int
	names := make([]string, count)
	z := make([]float64, o.Dim)
	for i := 0; i < count; i++ {
		names[i] = fmt.Sprintf("d%d", first+i+1)
		src := domainSource(o.Seed, first+i)
		n := drawSize(src, o.MeanSize)
		rng := rand.New(src)
		scale := make([]float64, o.Dim)
		shift := make([]float64, o.Dim)
		for j := range scale {
			scale[j] = math.Exp(0.3 * rng.NormFloat64())
			shift[j] = rng.NormFloat64()
		}
		for k := 0; k < n; k++ {
			for j := range z {
				z[j] = rng.NormFloat64()
			}
			x := make([]float64, o.Dim)
			for j := range x {
				x[j] = scale[j]*z[j] + shift[j]
			}
			rows = append(rows, x)
			lab = append(lab, rule.label(z))
			dom = append(dom, i)
		}
	}
	classes := make([]string, o.Classes)
	for c := range classes {
		classes[c] = fmt.Sprintf("c%d", c+1)
	}
	ds := &dataset.Dataset{
		X:           stack(rows, o.Dim),
		Features:    featureNames(o.Dim),
		Domain:      dom,
		DomainNames: names,
		Label:       lab,
		ClassNames:  classes,
	}
	if err := ds.Validate(); err != nil {
		panic("toy: internal error: " + err.Error())
	}
	return ds
}

func featureNames(d int) []string {
	f := make([]string, d)
	for j := range f {
		f[j] = fmt.Sprintf("x%d", j+1)
	}
	return f
}

func stack(rows [][]float64, d int) *mat.Dense {
	x := mat.NewDense(len(rows), d, nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	return x
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func normalize(a []float64) {
	s := math.Sqrt(dot(a, a))
	for i := range a {
		a[i] /= s
	}
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
