package svm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
)

// Problem is a training set prepared once for several trainings on it: a
// path of costs C, warm starts, the classes of a one-vs-rest model. The
// inputs are checked once and kept by columns with the bias feature
// appended, with their Gram matrix and per-class sums, so that each
// training of the Primal solver costs a few passes over the data per Newton
// iteration. A Problem is safe for concurrent use; it keeps reading the
// rows of x (the Dual solver, and the Primal solver for its sums over the
// rows whose margins change), so x must not change while the Problem is in
// use.
type Problem struct {
	x       *mat.Dense
	y       []int
	nclass  int
	n, d, p int
	bias    float64 // B, or <= 0 without a bias feature
	present []bool
	count   []int // the number of rows of each class
	// cols holds the p columns of X~ = [X, B], n values each.
	cols []float64
	// sums holds, per class, sum_{y_i = k} x~_i; total sums every row.
	sums  [][]float64
	total []float64

	gramOnce sync.Once
	gram     []float64 // p x p, X~^T X~ (both triangles)

	// labels holds, per class, the labels y_i in {-1, +1} of its machine
	// (made on first use).
	labelsMu sync.Mutex
	labels   [][]float64
}

// primalScratch holds the per-row buffers of one solvePrimal.
type primalScratch struct {
	z, dz            []float64
	line             *lineScratch
	chg, plus, minus []int
	in               []bool
	block, outer     []float64 // rows gathered for addOuters, and their sum (padded for gemm.SyrkPadded)
	row              []float64 // one row x~_i
	sy               []float64 // the signs of the rows of block
	terms            []uint64  // the terms of marginsTerms
}

// primalPool holds the buffers of solvePrimal, shared by all problems:
// a grid trains many problems of about the same size.
var primalPool sync.Pool

// getScratch returns buffers for the n rows and p columns of the problem,
// with z and in zeroed; putScratch gives them back.
func (pb *Problem) getScratch() *primalScratch {
	n, p := pb.n, pb.p
	sc, _ := primalPool.Get().(*primalScratch)
	ld, lo := gemm.SyrkPad(p), gemm.SyrkPaddedLen(p)
	if sc == nil || cap(sc.z) < n || cap(sc.block) < outerBlock*ld || cap(sc.outer) < lo || cap(sc.row) < p || cap(sc.terms) < 2*p {
		sc = &primalScratch{z: make([]float64, n), dz: make([]float64, n),
			line: newLineScratch(n), chg: make([]int, 0, n), in: make([]bool, n),
			plus: make([]int, 0, n), minus: make([]int, 0, n),
			block: make([]float64, outerBlock*ld), outer: make([]float64, lo), row: make([]float64, p), sy: make([]float64, outerBlock),
			terms: make([]uint64, 0, 2*p)}
	}
	sc.z, sc.dz, sc.in = sc.z[:n], sc.dz[:n], sc.in[:n]
	l := sc.line
	l.cand, l.br, l.bt, l.bab = l.cand[:n], l.br[:n], l.bt[:n], l.bab[:2*n]
	sc.chg, sc.plus, sc.minus = sc.chg[:0], sc.plus[:0], sc.minus[:0]
	sc.block, sc.outer, sc.row = sc.block[:outerBlock*ld], sc.outer[:lo], sc.row[:p]
	clear(sc.z)
	clear(sc.in)
	return sc
}

// putScratch returns the buffers of getScratch to the pool.
func putScratch(sc *primalScratch) { primalPool.Put(sc) }

// classLabels returns the labels in {-1, +1} of the machine of class k.
func (pb *Problem) classLabels(k int) []float64 {
	pb.labelsMu.Lock()
	defer pb.labelsMu.Unlock()
	if pb.labels == nil {
		pb.labels = make([][]float64, pb.nclass)
	}
	if pb.labels[k] == nil {
		yk := make([]float64, pb.n)
		for i, l := range pb.y {
			if l == k {
				yk[i] = 1
			} else {
				yk[i] = -1
			}
		}
		pb.labels[k] = yk
	}
	return pb.labels[k]
}

// NewProblem checks the rows of x (n x d) and the labels y in
// 0..nclass-1 and prepares them for Problem.Train with the bias feature
// bias (as Options.Bias: 0 means DefaultBias, a negative value no bias
// feature). Errors are those of Train.
func NewProblem(x *mat.Dense, y []int, nclass int, bias float64) (*Problem, error) {
	o, err := Options{Bias: bias}.withDefaults()
	if err != nil {
		return nil, err
	}
	n, d, err := checkShape(x, len(y))
	if err != nil {
		return nil, err
	}
	p := d
	if o.Bias > 0 {
		p++
	}
	// The columns of X~, checking each value on the way.
	cols := make([]float64, p*n)
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, notFinite(i, j, v)
			}
			cols[j*n+i] = v
		}
	}
	if o.Bias > 0 {
		bc := cols[d*n : (d+1)*n]
		for i := range bc {
			bc[i] = o.Bias
		}
	}
	if nclass < 2 {
		return nil, fmt.Errorf("svm: nclass = %d, want at least 2", nclass)
	}
	present := make([]bool, nclass)
	count := make([]int, nclass)
	npresent := 0
	for i, l := range y {
		if l < 0 || l >= nclass {
			return nil, fmt.Errorf("svm: label y[%d] = %d out of range [0, %d)", i, l, nclass)
		}
		if !present[l] {
			present[l] = true
			npresent++
		}
		count[l]++
	}
	if npresent < 2 {
		return nil, fmt.Errorf("svm: only %d class present in %d labels, need at least 2", npresent, n)
	}
	pb := &Problem{x: x, y: y, nclass: nclass, n: n, d: d, p: p, bias: o.Bias, present: present, count: count, cols: cols}
	pb.sums = make([][]float64, nclass)
	for k := range pb.sums {
		pb.sums[k] = make([]float64, p)
	}
	pb.total = make([]float64, p)
	for j := range p {
		col := pb.col(j)
		for i, v := range col {
			pb.sums[y[i]][j] += v
		}
		pb.total[j] = floats.Sum(col)
	}
	return pb, nil
}

// col returns column j of X~.
func (pb *Problem) col(j int) []float64 { return pb.cols[j*pb.n : (j+1)*pb.n] }

// gramMatrix returns X~^T X~ (p x p, both triangles), computed once.
func (pb *Problem) gramMatrix() []float64 {
	pb.gramOnce.Do(func() {
		p := pb.p
		pb.gram = make([]float64, p*p)
		for a := range p {
			ca := pb.col(a)
			for b := a; b < p; b++ {
				v := floats.Dot(ca, pb.col(b))
				pb.gram[a*p+b], pb.gram[b*p+a] = v, v
			}
		}
	})
	return pb.gram
}

// Dims returns the number of rows n and of features d of the problem.
func (pb *Problem) Dims() (n, d int) { return pb.n, pb.d }

// Train trains a one-vs-rest linear SVM on the problem, as Train does on
// its inputs: the same problem, the same errors. o.Bias must be 0 or the
// problem's bias. With o.Init set, the Primal solver starts each machine
// from Init's weights instead of zero (see Options.Init).
func (pb *Problem) Train(ctx context.Context, o Options) (*Model, error) {
	if pb == nil || pb.n == 0 {
		return nil, errors.New("svm: empty problem (use NewProblem)")
	}
	o, err := pb.resolve(o)
	if err != nil {
		return nil, err
	}
	nclass, d := pb.nclass, pb.d
	m := &Model{
		NClass:    nclass,
		Dim:       d,
		W:         mat.NewDense(nclass, d, nil),
		Intercept: make([]float64, nclass),
		Present:   pb.present,
		Machines:  make([]*Binary, nclass),
	}
	var classes []int
	if nclass == 2 {
		classes = []int{1}
	} else {
		for k, p := range pb.present {
			if p {
				classes = append(classes, k)
			}
		}
	}
	errs := make([]error, len(classes))
	var wg sync.WaitGroup
	for ci, k := range classes {
		wg.Go(func() {
			var yk []float64
			if o.Solver != Primal {
				yk = pb.classLabels(k)
			}
			b, err := pb.machine(ctx, yk, k, uint64(k), o)
			if err != nil {
				errs[ci] = err
				return
			}
			m.Machines[k] = b
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for k := range nclass {
		if b := m.Machines[k]; b != nil {
			m.W.SetRow(k, b.W)
			m.Intercept[k] = b.Intercept
		} else if !pb.present[k] {
			m.Intercept[k] = math.Inf(-1)
		}
	}
	if nclass == 2 {
		b := m.Machines[1]
		for j, w := range b.W {
			m.W.Set(0, j, -w)
		}
		m.Intercept[0] = -b.Intercept
	}
	return m, nil
}

// resolve applies the defaults to o and checks it against the problem: the
// bias, the solver (Auto resolved) and the warm start.
func (pb *Problem) resolve(o Options) (Options, error) {
	if o.Bias == 0 {
		o.Bias = pb.bias
	}
	if o.Bias != pb.bias && !(o.Bias < 0 && pb.bias < 0) {
		return o, fmt.Errorf("svm: bias %g differs from the problem's %g", o.Bias, pb.bias)
	}
	o, err := o.withDefaults()
	if err != nil {
		return o, err
	}
	if o.Solver == Auto {
		o.Solver = Dual
		if o.Loss == SquaredHinge && pb.d <= AutoPrimalMaxDim {
			o.Solver = Primal
		}
	}
	if o.Init != nil {
		if o.Solver != Primal {
			return o, fmt.Errorf("svm: a warm start (Options.Init) needs the primal solver, not %v", o.Solver)
		}
		if o.Init.NClass != pb.nclass || o.Init.Dim > pb.d || o.Init.W == nil || len(o.Init.Intercept) != pb.nclass {
			return o, fmt.Errorf("svm: the warm start is a model of %d classes and %d features; want %d classes and at most %d features", o.Init.NClass, o.Init.Dim, pb.nclass, pb.d)
		}
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
		if o.Solver == Primal {
			o.Tol = DefaultPrimalTol
		}
	}
	return o, nil
}

// machine trains the binary machine of class k with the resolved options
// o: the rows of class k are positive, the others negative. The Dual
// solver takes these labels in y (in {-1, +1}), and stream is its random
// stream; the Primal solver ignores y.
func (pb *Problem) machine(ctx context.Context, y []float64, k int, stream uint64, o Options) (*Binary, error) {
	if o.Solver == Primal {
		return pb.solvePrimal(ctx, k, o)
	}
	return solveDual(ctx, pb.x, y, o, stream)
}

// initWeights returns the starting weights [w, w_B] of machine k: zero, or
// those of o.Init (its weights padded with zeros to d features, and the
// weight of the bias feature from its intercept).
func (pb *Problem) initWeights(k int, o Options) []float64 {
	w := make([]float64, pb.p)
	in := o.Init
	if in == nil || in.Machines == nil || k >= len(in.Machines) || in.Machines[k] == nil {
		return w
	}
	copy(w, in.W.RawRowView(k)[:in.Dim])
	if pb.bias > 0 {
		if b := in.Intercept[k]; !math.IsInf(b, 0) && !math.IsNaN(b) {
			w[pb.d] = b / pb.bias
		}
	}
	return w
}

// solvePrimal minimizes f(w) = 1/2 w'w + C sum_i max(0, 1 - y_i w'x~_i)^2
// for machine k (y_i = 1 for the rows of class k, -1 for the others) by
// the generalized Newton method (Mangasarian 2002; Keerthi and DeCoste
// 2005): with I = {i : y_i w'x~_i < 1},
//
//	grad f = w - 2C sum_{i in I} (1 - y_i w'x~_i) y_i x~_i,
//	H      = I + 2C sum_{i in I} x~_i x~_i',
//
// the step s = H^{-1} grad and w <- w - t s with t the exact minimizer of
// the convex piecewise-quadratic f(w - t s) (lineSearch). It starts from
// o.Init's weights or zero and stops when ||grad f(w)|| <= Tol *
// max(1, min(#pos, #neg)) / n * ||grad f(0)|| (LIBLINEAR's rule for -s 2,
// which LIBLINEAR also applies to warm starts). The sums over I,
// S = sum_{i in I} x~_i x~_i' and v = sum_{i in I} y_i x~_i, are kept from
// one iteration to the next and updated with the rows that enter or leave
// I; since y_i (1 - y_i w'x~_i) = y_i - w'x~_i, they give the gradient
// w - 2C (v - S w) without a pass over the rows.
func (pb *Problem) solvePrimal(ctx context.Context, k int, o Options) (*Binary, error) {
	n, p := pb.n, pb.p
	c2 := 2 * o.C
	npos := pb.count[k]
	// grad f(0) = -2C sum_i y_i x~_i = -2C (2 sum_{y_i = 1} x~_i - sum_i x~_i).
	var g0 float64
	for j := range p {
		v := c2 * (2*pb.sums[k][j] - pb.total[j])
		g0 += v * v
	}
	g0 = math.Sqrt(g0)
	eps := o.Tol * math.Max(1, float64(min(npos, n-npos))) / float64(n)

	w := pb.initWeights(k, o)
	cold := floats.Norm(w, 2) == 0
	sc := pb.getScratch()
	defer putScratch(sc)
	z := sc.z         // y_i w'x~_i
	dz := sc.dz       // y_i s'x~_i
	in := sc.in       // the rows summed in sum
	changed := sc.chg // the rows whose membership differs from in
	g := make([]float64, p)
	sum := make([]float64, p*p) // sum_{in} x~_i x~_i' (upper triangle)
	v := make([]float64, p)     // sum_{in} y_i x~_i
	vall := make([]float64, p)  // sum_i y_i x~_i
	for j := range p {
		vall[j] = 2*pb.sums[k][j] - pb.total[j]
	}
	h := mat.NewSymDense(p, nil)
	active := n
	if !cold {
		pb.margins(z, w, k)
		active = pb.memberships(z, in, &changed)
	}
	var chol mat.Cholesky
	var sv mat.VecDense
	res := &Binary{}
	it := 0
	for ; it < o.MaxEpochs; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The sums over I: the Gram matrix and sum_i y_i x~_i at a cold
		// start (every row is in I), else the cheapest of the previous sums
		// updated with the rows whose membership changed, the sums over I,
		// and the sums over all rows less those over the rows not in I.
		switch {
		case it == 0 && cold:
			copy(sum, pb.gramMatrix())
			copy(v, vall)
			for i := range in {
				in[i] = true
			}
		case it > 0 && len(changed) <= min(active, n-active):
			// The lists without branches, which would be mispredicted
			// about as often as not.
			plus, minus := sc.plus[:len(changed)], sc.minus[:len(changed)]
			np, nm := 0, 0
			for _, i := range changed {
				a := !in[i]
				in[i] = a
				plus[np], minus[nm] = i, i
				np += b2i(a)
				nm += b2i(!a)
			}
			pb.addOuters(sum, v, plus[:np], k, 1, sc)
			pb.addOuters(sum, v, minus[:nm], k, -1, sc)
		case active <= n-active:
			clear(sum)
			clear(v)
			plus, np := sc.plus[:n], 0
			for i, zi := range z {
				a := zi < 1
				in[i] = a
				plus[np] = i
				np += b2i(a)
			}
			pb.addOuters(sum, v, plus[:np], k, 1, sc)
		default:
			copy(sum, pb.gramMatrix())
			copy(v, vall)
			minus, nm := sc.minus[:n], 0
			for i, zi := range z {
				a := zi < 1
				in[i] = a
				minus[nm] = i
				nm += b2i(!a)
			}
			pb.addOuters(sum, v, minus[:nm], k, -1, sc)
		}
		// Gradient: w - 2C sum_{i in I} (1 - z_i) y_i x~_i
		// = w - 2C (v - S w), with v = sum_{i in I} y_i x~_i and
		// S = sum_{i in I} x~_i x~_i', since y_i z_i = w'x~_i.
		for a := range p {
			row := sum[a*p : a*p+p]
			var sw float64
			for b := range a {
				sw += sum[b*p+a] * w[b]
			}
			for b := a; b < p; b++ {
				sw += row[b] * w[b]
			}
			g[a] = w[a] - c2*(v[a]-sw)
		}
		if floats.Norm(g, 2) <= eps*g0 {
			res.Converged = true
			break
		}
		for a := range p {
			for b := a; b < p; b++ {
				v := c2 * sum[a*p+b]
				if a == b {
					v++
				}
				h.SetSym(a, b, v)
			}
		}
		if !chol.Factorize(h) {
			return nil, errors.New("svm: generalized Hessian is not positive definite")
		}
		if err := chol.SolveVecTo(&sv, mat.NewVecDense(p, g)); err != nil {
			return nil, err
		}
		s := sv.RawVector().Data
		// dz_i = y_i s'x~_i, with the line search's first pass over the
		// rows.
		nb, nc := pb.marginsLine(dz, s, z, k, sc)
		// The sums of the line search over I: 2C sum (1 - z_i) dz_i =
		// s'(w - g) and 2C sum dz_i^2 = 2C s' sum s.
		var a0, quad float64
		for a, sa := range s {
			a0 += sa * (w[a] - g[a])
			row := sum[a*p : a*p+p]
			q := row[a] * sa
			for b := a + 1; b < p; b++ {
				q += 2 * row[b] * s[b]
			}
			quad += sa * q
		}
		t, _, _ := lineSearchFrom(w, s, z, dz, c2, a0, c2*quad, sc.line, nb, nc)
		floats.AddScaled(w, -t, s)
		active = pb.stepMemberships(z, dz, -t, in, &changed)
	}
	res.Epochs = it
	res.W = w[:pb.d:pb.d]
	if pb.bias > 0 {
		res.Intercept = w[pb.d] * pb.bias
	}
	if o.KeepAlpha {
		res.Alpha = make([]float64, n)
		for i := range n {
			res.Alpha[i] = c2 * math.Max(0, 1-z[i])
		}
	}
	return res, nil
}

// memberships lists in changed the rows whose membership of
// I = {i : z_i < 1} differs from in, and returns the size of I.
func (pb *Problem) memberships(z []float64, in []bool, changed *[]int) int {
	ch := (*changed)[:0]
	active := 0
	for i, zi := range z {
		act := zi < 1
		active += b2i(act)
		if act != in[i] {
			ch = append(ch, i)
		}
	}
	*changed = ch
	return active
}

// stepMemberships is memberships after the step z_i += mt dz_i, in the
// same pass over the rows (four rows at a time in assembly where the CPU
// allows). The rows that changed are listed without a branch, which would
// be mispredicted about as often as rows change.
func (pb *Problem) stepMemberships(z, dz []float64, mt float64, in []bool, changed *[]int) int {
	ch := (*changed)[:len(z)]
	nc, active := 0, 0
	dz, in = dz[:len(z)], in[:len(z)]
	i := 0
	if hasAVX2 {
		i = len(z) &^ 3
		nc, active = stepAVX2(z[:i], dz[:i], mt, in[:i], ch)
	}
	for ; i < len(z); i++ {
		zi := z[i] + mt*dz[i]
		z[i] = zi
		act := zi < 1
		active += b2i(act)
		ch[nc] = i
		nc += b2i(act != in[i])
	}
	*changed = ch[:nc]
	return active
}

// addScaled adds a x to v (len(v) = len(x)), as floats.AddScaled for
// short vectors, without its call.
func addScaled(v []float64, a float64, x []float64) {
	v = v[:len(x)]
	for j, xj := range x {
		v[j] += a * xj
	}
}

// negBit returns the sign bit of y_i for machine k: 0 for the rows of
// class k (y_i = 1), the sign bit for the others (y_i = -1). Flipping it
// is multiplying by y_i, exactly.
func negBit(label, k int) uint64 { return uint64(b2i(label != k)) << 63 }

// margins stores y_i w'x~_i in dst for every row, for machine k.
func (pb *Problem) margins(dst, w []float64, k int) {
	clear(dst)
	for j, wj := range w {
		if wj != 0 {
			floats.AddScaled(dst, wj, pb.col(j))
		}
	}
	y := pb.y[:len(dst)]
	for i, v := range dst {
		dst[i] = math.Float64frombits(math.Float64bits(v) ^ negBit(y[i], k))
	}
}

// marginsLine is margins(dz, s, k) together with the first pass of the
// line search over the rows (lineFirst): the labels' signs are applied
// in that pass (signedFirst). It returns the counts of lineFirst.
func (pb *Problem) marginsLine(dz, s, z []float64, k int, sc *primalScratch) (nb, nc int) {
	pb.marginsTerms(dz, s, sc)
	return signedFirst(z, dz, pb.y, k, sc.line)
}

// marginsTerms stores X~ s in dst: for each row the products s_j x~_ij
// over the j with s_j != 0 summed in increasing j from zero, each product
// rounded and then added, the bits of clearing dst and adding
// floats.AddScaled(dst, s_j, column j) for those j in turn (four rows at
// a time in assembly where the CPU allows).
func (pb *Problem) marginsTerms(dst, s []float64, sc *primalScratch) {
	n := pb.n
	dst = dst[:n]
	i := 0
	if hasAVX2 {
		terms := sc.terms[:0]
		for j, sj := range s {
			if sj != 0 {
				terms = append(terms, uint64(j*n*8), math.Float64bits(sj))
			}
		}
		sc.terms = terms
		i = n &^ 3
		marginsAVX2(dst[:i], pb.cols, terms)
	}
	for ; i < n; i++ {
		var acc float64
		for j, sj := range s {
			if sj != 0 {
				acc += sj * pb.cols[j*n+i]
			}
		}
		dst[i] = acc
	}
}

// signedFirst multiplies dz_i by the label y_i of machine k (1 for class
// k, else -1) and makes the first pass of the line search (lineFirst) with
// the result, in one pass; it returns the counts of lineFirst.
func signedFirst(z, dz []float64, y []int, k int, sc *lineScratch) (nb, nc int) {
	n := len(z)
	dz, y = dz[:n], y[:n]
	br, cand := sc.br[:n], sc.cand[:n]
	i := 0
	if hasAVX2 {
		i = n &^ 3
		nb, nc = signedFirstAVX2(z[:i], dz[:i], y[:i], k, br, cand)
	}
	for j := i; j < n; j++ {
		dz[j] = math.Float64frombits(math.Float64bits(dz[j]) ^ negBit(y[j], k))
	}
	return firstTerms(z, dz, br, cand, i, nb, nc)
}

// outerBlock is the number of rows gathered per SYRK update in addOuters;
// below outerMin rows the outer products are added one by one.
const (
	outerBlock = 256
	outerMin   = 32
)

// addOuters adds sign sum_{i in rows} x~_i x~_i' to the upper triangle of
// the p x p matrix sum, and sign sum_{i in rows} y_i x~_i to v (y_i the
// label of machine k), in the same pass over the rows: by SYRK on blocks of
// rows gathered as its kernel reads them (gemm.SyrkPadded, the bits of
// gemm.Syrk on the blocks) for many rows, one outer product at a time for
// few.
func (pb *Problem) addOuters(sum, v []float64, rows []int, k int, sign float64, sc *primalScratch) {
	p := pb.p
	v = v[:p]
	// sign y_i, for y_i = +-1.
	sy := func(i int) float64 {
		return math.Float64frombits(math.Float64bits(sign) ^ negBit(pb.y[i], k))
	}
	if len(rows) < outerMin {
		r := sc.row
		for _, i := range rows {
			pb.rowTo(r, i)
			addOuter(sum, r, sign)
			addScaled(v, sy(i), r)
		}
		return
	}
	ld := gemm.SyrkPad(p)
	outer := sc.outer[:gemm.SyrkPaddedLen(p)]
	clear(outer)
	xs, stride, d := pb.x.RawMatrix().Data, pb.x.RawMatrix().Stride, pb.d
	// Up to 12 columns, the sums of v stay in registers over a block of
	// rows in assembly where the CPU allows, in a padded copy of v.
	asm := hasAVX2 && ld == 12
	var vpad [12]float64
	copy(vpad[:], v)
	sys := sc.sy[:outerBlock]
	for lo := 0; lo < len(rows); lo += outerBlock {
		hi := min(lo+outerBlock, len(rows))
		for j, i := range rows[lo:hi] {
			r := sc.block[j*ld : j*ld+p]
			// The row x~_i, in a loop rather than copy's call for these
			// few values.
			for c, xc := range xs[i*stride : i*stride+d] {
				r[c] = xc
			}
			if pb.bias > 0 {
				r[d] = pb.bias
			}
			if asm {
				sys[j] = sy(i)
			} else {
				addScaled(v, sy(i), r)
			}
		}
		if asm {
			addRowsAVX2(vpad[:], sc.block[:(hi-lo)*12], sys[:hi-lo])
		}
		gemm.SyrkPadded(outer, sc.block, hi-lo, p)
	}
	if asm {
		copy(v, vpad[:p])
	}
	for a := range p {
		for b := a; b < p; b++ {
			sum[a*p+b] += sign * outer[a*ld+b]
		}
	}
}

// rowTo stores the row x~_i = [x_i, B] in dst (p values).
func (pb *Problem) rowTo(dst []float64, i int) {
	copy(dst, pb.x.RawRowView(i))
	if pb.bias > 0 {
		dst[pb.d] = pb.bias
	}
}

// addOuter adds sign x x' to the upper triangle of the p x p matrix sum.
func addOuter(sum, x []float64, sign float64) {
	p := len(x)
	for a, xa := range x {
		v := sign * xa
		row := sum[a*p+a : a*p+p]
		xs := x[a:p]
		for j := range row {
			row[j] += v * xs[j]
		}
	}
}
