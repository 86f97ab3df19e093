package lanczos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Which selects the end of the spectrum to compute.
type Which int

const (
	// Largest asks for the k algebraically largest eigenvalues.
	Largest Which = iota
	// Smallest asks for the k algebraically smallest eigenvalues.
	Smallest
)

// Status tells how a solve ended.
type Status int

const (
	// Converged: all k requested pairs converged and passed the explicit
	// residual check.
	Converged Status = iota
	// ReachableSpaceExhausted: the operator vanishes on the orthogonal
	// complement of an invariant subspace found by the solver (an exactly
	// low-rank operator), and fewer than k pairs with nonzero eigenvalues
	// exist. All pairs with nonzero eigenvalues are returned; the null space
	// (eigenvalue 0, any basis of it would do) is not. Also returned, with
	// all n pairs, when K > n.
	ReachableSpaceExhausted
	// BudgetExceeded: the matvec budget ran out; the best available pairs
	// are returned, of which Result.Converged met the tolerance.
	BudgetExceeded
	// ResidualCheckFailed: the Ritz estimates converged but some explicit
	// residual exceeded the accepted level (loss of accuracy).
	ResidualCheckFailed
)

// String returns the name of the status.
func (s Status) String() string {
	switch s {
	case Converged:
		return "Converged"
	case ReachableSpaceExhausted:
		return "ReachableSpaceExhausted"
	case BudgetExceeded:
		return "BudgetExceeded"
	case ResidualCheckFailed:
		return "ResidualCheckFailed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// DefaultTol is the relative tolerance used when Settings.Tol is zero.
const DefaultTol = 1e-10

// Settings configures a solve. The zero value of every field except K
// selects a documented default; the defaults are multiplicity-safe.
type Settings struct {
	// K is the number of eigenpairs wanted (required, >= 1).
	K int
	// Which selects the largest (default) or smallest eigenvalues.
	Which Which
	// Guard is the number of extra (guard) pairs computed beyond K and
	// not returned. 0 means the default max(2, K/2); a negative value
	// means no guard pairs.
	Guard int
	// NCV is the dimension of the Krylov basis. 0 means
	// max(2 (K + Guard) + 1, 60), capped at n. It must exceed K + Guard.
	// The solver stores about 2 NCV vectors of length n (4 NCV for
	// GenSymBInv): the basis and its image under A, which gives explicit
	// residuals without extra matvecs.
	//
	// The floor of 60 (scipy and ARPACK use max(2 K + 1, 20)) pays for the
	// multiplicity safety: with a basis of 2 K + 1 the K locked pairs leave
	// no room for the soft deflation set that makes the certified check
	// cheap, and restarts keep few vectors (docs/LANCZOS.md, "Basis size",
	// compares the two on every problem of the suite). Set NCV = 2 K + 1
	// when memory is tight.
	NCV int
	// Tol is the relative tolerance: a Ritz pair (theta, x) is accepted
	// when its residual estimate satisfies
	//   ||A x - theta B x|| <= Tol * max(|theta|, eps^(2/3) ||A||_est),
	// which is ARPACK's test with the absolute floor eps^(2/3) made relative
	// to the running estimate of ||A|| so that zero eigenvalues of low-rank
	// operators converge. 0 means DefaultTol (1e-10); values below machine
	// epsilon are raised to it.
	Tol float64
	// MaxMatvecs bounds the number of operator applications. 0 means
	// max(10 n, 1000).
	MaxMatvecs int
	// Seed seeds the random start and reseeding vectors (PCG). The same
	// seed and inputs give bit-identical results.
	Seed uint64
	// Start, if not nil, is the start vector (len n, not all zero). It is
	// not modified.
	Start []float64
	// NoDeflatedCheck disables the final deflated restart: after
	// convergence the solver normally restarts once from a fresh random
	// vector orthogonal to all converged pairs and iterates until a copy of
	// a wanted eigenvalue missed by the Krylov space would have shown, to
	// catch copies of repeated eigenvalues.
	NoDeflatedCheck bool
	// CheckMiss bounds the probability that the deflated check misses a
	// copy of a wanted eigenvalue (for a random start vector; see the
	// package documentation, "Multiplicity safety"). 0 means
	// DefaultCheckMiss (1e-2); it must lie in [0, 1). Each halving of it
	// costs about one more Lanczos step of the check per factor by which a
	// step separates the wanted values from the rest of the spectrum.
	CheckMiss float64
}

// DefaultCheckMiss is the miss probability of the deflated check used when
// Settings.CheckMiss is zero.
const DefaultCheckMiss = 1e-2

// Result is the outcome of a solve.
type Result struct {
	// Values are the eigenvalues, largest first for Largest and smallest
	// first for Smallest.
	Values []float64
	// Vectors holds the eigenvectors in its columns (n x len(Values)). They
	// are orthonormal (B-orthonormal for generalized problems).
	Vectors *mat.Dense
	// Residuals are the explicit residual norms ||A x_i - theta_i B x_i||,
	// computed from stored operator products (no extra matvecs).
	Residuals []float64
	// Matvecs counts applications of A; Restarts counts thick restarts.
	Matvecs, Restarts int
	// Converged counts the returned pairs that met the tolerance.
	Converged int
	// Status tells how the solve ended.
	Status Status
	// NormA is the solver's estimate of ||A|| (of B^{-1} A for generalized
	// problems in the B inner product), and Tol the tolerance used.
	NormA, Tol float64
}

// Sym computes K eigenpairs at one end of the spectrum of the symmetric
// operator A by thick-restart (Krylov-Schur) Lanczos with full two-pass
// classical Gram-Schmidt reorthogonalization (DGKS test, eta = 1/sqrt 2),
// locking of converged pairs, guard pairs and a final deflated restart
// (Stewart 2001; Wu and Simon 2000; see the package documentation and
// docs/LANCZOS.md).
//
// Errors are returned for invalid settings and NaN or Inf produced by the
// operator; ctx is checked every few iterations.
func Sym(ctx context.Context, a Operator, s Settings) (*Result, error) {
	if err := checkOp(a, "A"); err != nil {
		return nil, err
	}
	n := a.Dim()
	op := func(w, _, v []float64) { a.Apply(w, v) }
	e, err := newEngine(ctx, n, s, op, nil)
	if err != nil {
		return nil, err
	}
	return e.solve()
}

// opFunc computes w = Op v and, in B-inner-product mode, aw = A v (= B w).
type opFunc func(w, aw, v []float64)

const eta = 0.7071067811865476 // DGKS reorthogonalization threshold

type engine struct {
	ctx    context.Context
	n, m   int
	k, kc  int // returned, computed (k + guard)
	kreq   int // Settings.K
	neg    bool
	tol    float64
	maxMV  int
	check  bool
	rng    *rand.Rand
	start  []float64
	op     opFunc
	b      Operator // nil: Euclidean inner product
	bmode  bool
	matvec int
	rest   int
	normA  float64

	v, bv, w, av []float64 // rows of length n; bv, av alias v, w without B
	t            []float64 // m x m projected matrix
	reseed       []bool
	nlock        int
	phase        int   // 0: main iteration, 1: deflated check
	nsoft        int   // rows after the locked ones deflated softly in the check
	sel          []int // rows of the returned pairs, set by finish
	lockVal      []float64
	lockConv     []bool
	f, bf, h, h2 []float64
	part         []float64 // chunk partial sums of projectPar

	// Certificate of the deflated check (see certStart): the points x_p
	// (the distinct wanted locked values) and, for each basis row i of the
	// check, the values p_i(x_p) of the polynomial with v_i = p_i(A') z.
	cpts []float64
	cpx  []float64 // (m+1) x len(cpts)
	cexp []float64 // column p of cpx is scaled by 10^-cexp[p]
	cok  bool
	miss float64 // Settings.CheckMiss
}

func newEngine(ctx context.Context, n int, s Settings, op opFunc, b Operator) (*engine, error) {
	if n < 1 {
		return nil, fmt.Errorf("lanczos: operator dimension %d < 1", n)
	}
	if s.K < 1 {
		return nil, fmt.Errorf("lanczos: Settings.K = %d, want >= 1", s.K)
	}
	if s.Which != Largest && s.Which != Smallest {
		return nil, fmt.Errorf("lanczos: invalid Settings.Which %d", s.Which)
	}
	if math.IsNaN(s.Tol) || s.Tol < 0 {
		return nil, fmt.Errorf("lanczos: invalid Settings.Tol %v", s.Tol)
	}
	if math.IsNaN(s.CheckMiss) || s.CheckMiss < 0 || s.CheckMiss >= 1 {
		return nil, fmt.Errorf("lanczos: invalid Settings.CheckMiss %v, want [0, 1)", s.CheckMiss)
	}
	if s.MaxMatvecs < 0 {
		return nil, fmt.Errorf("lanczos: Settings.MaxMatvecs = %d < 0", s.MaxMatvecs)
	}
	if s.Start != nil && len(s.Start) != n {
		return nil, fmt.Errorf("lanczos: Settings.Start has length %d, operator dimension is %d", len(s.Start), n)
	}
	k := min(s.K, n)
	g := s.Guard
	if g == 0 {
		g = max(2, k/2)
	}
	g = max(g, 0)
	kc := min(k+g, n)
	m := s.NCV
	if m == 0 {
		m = max(2*kc+1, 60)
	} else if m < 0 || (m <= kc && m < n) {
		return nil, fmt.Errorf("lanczos: Settings.NCV = %d, want > K + Guard = %d", s.NCV, kc)
	}
	m = min(m, n)
	tol := s.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	tol = max(tol, eps)
	maxMV := s.MaxMatvecs
	if maxMV == 0 {
		maxMV = max(10*n, 1000)
	}
	e := &engine{
		ctx: ctx, n: n, m: m, k: k, kc: kc, kreq: s.K, neg: s.Which == Smallest,
		tol: tol, maxMV: maxMV, check: !s.NoDeflatedCheck,
		rng:   rand.New(rand.NewPCG(s.Seed, 0x6c616e637a6f73)),
		start: s.Start, b: b, bmode: b != nil, miss: s.CheckMiss,
	}
	if e.miss == 0 {
		e.miss = DefaultCheckMiss
	}
	e.op = op
	if e.neg {
		e.op = negated(op)
	}
	e.alloc()
	return e, nil
}

// negated returns the operator -Op (and -A in B mode): the smallest
// eigenvalues of Op are the largest of -Op.
func negated(op opFunc) opFunc {
	return func(w, aw, v []float64) {
		op(w, aw, v)
		for i := range w {
			w[i] = -w[i]
		}
		if aw != nil {
			for i := range aw {
				aw[i] = -aw[i]
			}
		}
	}
}

// alloc allocates the basis (NCV+1 rows of length n), its image under the
// operator, their B counterparts in B mode, and the projected problem.
func (e *engine) alloc() {
	n, m := e.n, e.m
	e.v = make([]float64, (m+1)*n)
	e.w = make([]float64, m*n)
	if e.bmode {
		e.bv = make([]float64, (m+1)*n)
		e.av = make([]float64, m*n)
		e.bf = make([]float64, n)
	} else {
		e.bv = e.v
		e.av = e.w
	}
	e.f = make([]float64, n)
	if !e.bmode {
		e.bf = e.f
	}
	e.t = make([]float64, m*m)
	e.reseed = make([]bool, m+1)
	e.h = make([]float64, m+1)
	e.h2 = make([]float64, m+1)
}

const eps = 0x1p-52

var eps23 = math.Pow(eps, 2.0/3)

func (e *engine) row(a []float64, i int) []float64 { return a[i*e.n : (i+1)*e.n] }

func (e *engine) scale(theta float64) float64 {
	return max(math.Abs(theta), eps23*e.normA)
}

// breakTol is the relative breakdown threshold eps sqrt(n) ||A||_est.
func (e *engine) breakTol() float64 {
	return eps * math.Sqrt(float64(e.n)) * e.normA
}

// orth orthogonalizes (f, bf) against rows [0, j) of V in the inner product
// with two-pass classical Gram-Schmidt and the DGKS test. It returns the
// norm before and after; the coefficients are accumulated in e.h[:j].
func (e *engine) orth(j int, norm0 float64) float64 {
	bl := blas64.Implementation()
	n := e.n
	h := e.h[:j]
	norm := norm0
	for pass := 0; pass < 2; pass++ {
		c := e.h2[:j]
		if n >= parMinN {
			e.projectPar(j, c)
		} else {
			bl.Dgemv(blas.NoTrans, j, n, 1, e.bv[:j*n], n, e.f, 1, 0, c, 1)
			bl.Dgemv(blas.Trans, j, n, -1, e.v[:j*n], n, c, 1, 1, e.f, 1)
			if e.bmode {
				bl.Dgemv(blas.Trans, j, n, -1, e.bv[:j*n], n, c, 1, 1, e.bf, 1)
			}
		}
		if pass == 0 {
			copy(h, c)
		} else {
			for i := range h {
				h[i] += c[i]
			}
		}
		prev := norm
		norm = math.Sqrt(max(bl.Ddot(n, e.f, 1, e.bf, 1), 0))
		if norm > eta*prev {
			break
		}
	}
	return norm
}

// parMinN is the dimension from which a Gram-Schmidt pass runs on column
// chunks of parChunk in parallel. The chunk partial sums are added in chunk
// order, so the result does not depend on the number of goroutines.
const (
	parMinN  = 1 << 15
	parChunk = 1 << 13
)

// projectPar computes c = BV[:j] f and f -= V[:j]^T c (and bf -= BV[:j]^T c)
// on column chunks in parallel.
func (e *engine) projectPar(j int, c []float64) {
	n := e.n
	nc := (n + parChunk - 1) / parChunk
	if len(e.part) < nc*j {
		e.part = make([]float64, nc*e.m+nc)
	}
	part := e.part[:nc*j]
	parallel(nc, func(ch int) {
		off := ch * parChunk
		w := min(parChunk, n-off)
		blas64.Implementation().Dgemv(blas.NoTrans, j, w, 1, e.bv[off:], n, e.f[off:off+w], 1, 0, part[ch*j:(ch+1)*j], 1)
	})
	for i := range c {
		c[i] = 0
	}
	for ch := 0; ch < nc; ch++ {
		for i := range c {
			c[i] += part[ch*j+i]
		}
	}
	parallel(nc, func(ch int) {
		off := ch * parChunk
		w := min(parChunk, n-off)
		bl := blas64.Implementation()
		bl.Dgemv(blas.Trans, j, w, -1, e.v[off:], n, c, 1, 1, e.f[off:off+w], 1)
		if e.bmode {
			bl.Dgemv(blas.Trans, j, w, -1, e.bv[off:], n, c, 1, 1, e.bf[off:off+w], 1)
		}
	})
}

// parallel runs f(0), ..., f(nt-1) on up to GOMAXPROCS goroutines.
func parallel(nt int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), nt)
	if workers <= 1 {
		for i := 0; i < nt; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= nt {
				return
			}
			f(i)
		}
	}
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
}

// randomOrth fills row i of V (and BV) with a random vector orthogonal to
// rows [0, i) and normalizes it. It reports false when nothing is left.
func (e *engine) randomOrth(i int) (bool, error) {
	for i := range e.f {
		e.f[i] = e.rng.NormFloat64()
	}
	return e.setRow(i, true)
}

// setRow orthogonalizes e.f against rows [0, i), normalizes it and stores it
// in row i. With fresh set, e.f holds a new vector whose B image is not yet
// known.
func (e *engine) setRow(i int, fresh bool) (bool, error) {
	bl := blas64.Implementation()
	n := e.n
	if e.bmode && fresh {
		e.b.Apply(e.bf, e.f)
	}
	norm0 := math.Sqrt(max(bl.Ddot(n, e.f, 1, e.bf, 1), 0))
	if math.IsNaN(norm0) || math.IsInf(norm0, 0) {
		return false, errors.New("lanczos: NaN or Inf in start vector or B product")
	}
	if norm0 == 0 {
		return false, nil
	}
	norm := norm0
	if i > 0 {
		for range 2 {
			norm = e.orth(i, norm)
		}
	}
	if norm <= 1e3*eps*math.Sqrt(float64(n))*norm0 || norm == 0 {
		return false, nil
	}
	e.normalizeInto(i, norm)
	return true, nil
}

// normalizeInto stores e.f / ||e.f||_B in row i of V and its B image in row
// i of BV; in B mode the B image is recomputed explicitly.
func (e *engine) normalizeInto(i int, norm float64) {
	bl := blas64.Implementation()
	n := e.n
	vi := e.row(e.v, i)
	if e.bmode {
		e.b.Apply(e.bf, e.f)
		norm = math.Sqrt(max(bl.Ddot(n, e.f, 1, e.bf, 1), 0))
		bi := e.row(e.bv, i)
		for l := range vi {
			vi[l] = e.f[l] / norm
			bi[l] = e.bf[l] / norm
		}
		return
	}
	for l := range vi {
		vi[l] = e.f[l] / norm
	}
}

func (e *engine) tset(i, j int, x float64) {
	e.t[i*e.m+j] = x
	e.t[j*e.m+i] = x
}

func (e *engine) clearT(from int) {
	m := e.m
	for i := 0; i < m; i++ {
		for j := from; j < m; j++ {
			e.t[i*m+j] = 0
			e.t[j*m+i] = 0
		}
	}
}

// ritz holds a Rayleigh-Ritz solution of the active block, ordered with the
// largest value first.
type ritz struct {
	na    int
	theta []float64
	y     *mat.Dense // na x na, column i for theta[i]
	est   []float64
}

func (e *engine) rayleighRitz(a, mEff int, betaLast float64) (*ritz, error) {
	na := mEff - a
	// Couplings of the active rows to the residual direction (row mEff):
	// the arrow column right after a restart, the last beta otherwise.
	cv := make([]float64, na)
	if mEff < e.m {
		for l := range cv {
			cv[l] = e.t[(a+l)*e.m+mEff]
		}
	} else {
		cv[na-1] = betaLast
	}
	s := mat.NewSymDense(na, nil)
	for i := 0; i < na; i++ {
		for j := i; j < na; j++ {
			s.SetSym(i, j, e.t[(a+i)*e.m+a+j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, errors.New("lanczos: projected eigenproblem failed to converge")
	}
	vals := es.Values(nil)
	var yv mat.Dense
	es.VectorsTo(&yv)
	r := &ritz{na: na, theta: make([]float64, na), y: mat.NewDense(na, na, nil), est: make([]float64, na)}
	for i := 0; i < na; i++ {
		src := na - 1 - i
		r.theta[i] = vals[src]
		for l := 0; l < na; l++ {
			r.y.Set(l, i, yv.At(l, src))
		}
		var d float64
		for l, c := range cv {
			d += c * r.y.At(l, i)
		}
		r.est[i] = math.Abs(d)
		if math.IsNaN(r.theta[i]) {
			return nil, errors.New("lanczos: NaN in projected matrix (operator produced NaN or Inf?)")
		}
	}
	e.normA = max(e.normA, math.Abs(r.theta[0]), math.Abs(r.theta[na-1]))
	return r, nil
}

// transform replaces rows [a, a+len(sel)) of the basis arrays by the Ritz
// vectors Y[:, sel] combined from rows [a, a+na).
func (e *engine) transform(r *ritz, a int, sel []int) {
	n := e.n
	q := len(sel)
	ys := make([]float64, q*r.na) // q x na, row i = Y[:, sel[i]]
	for i, c := range sel {
		for l := 0; l < r.na; l++ {
			ys[i*r.na+l] = r.y.At(l, c)
		}
	}
	tmp := make([]float64, q*n)
	bl := blas64.Implementation()
	arrays := [][]float64{e.v, e.w}
	if e.bmode {
		arrays = append(arrays, e.bv, e.av)
	}
	for _, arr := range arrays {
		bl.Dgemm(blas.NoTrans, blas.NoTrans, q, n, r.na, 1, ys, r.na, arr[a*n:(a+r.na)*n], n, 0, tmp, n)
		copy(arr[a*n:(a+q)*n], tmp)
	}
}

func (e *engine) copyRow(dst, src int) {
	copy(e.row(e.v, dst), e.row(e.v, src))
	if e.bmode {
		copy(e.row(e.bv, dst), e.row(e.bv, src))
	}
	e.reseed[dst] = e.reseed[src]
}

// rank returns the number of locked values strictly greater than x.
func (e *engine) rank(x float64) int {
	c := 0
	for _, l := range e.lockVal {
		if l > x {
			c++
		}
	}
	return c
}

// kthLocked returns the k-th largest locked value.
func (e *engine) kthLocked(k int) float64 {
	s := append([]float64(nil), e.lockVal...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	if k > len(s) {
		return math.Inf(-1)
	}
	return s[k-1]
}

// The engine's actions: what decide and expand tell solve to do next.
const (
	actExpand  = iota // keep expanding the basis
	actRestart        // basis full: thick restart
	actDone           // finish
	actCheck          // main iteration converged: deflated restart
	actLockOne        // deflated restart found a converged copy: lock it
	actFound          // deflated restart found an unconverged wanted value
)

// solve runs the engine from the start vector to the result. It alternates
// two states: expanding the basis of the active block by Lanczos steps
// (expand) until an action other than actExpand is due, and carrying out
// that action (a thick restart, the start of the deflated check, locking a
// copy the check found, or resuming the main iteration), each of which sets
// the row the next expansion starts from.
func (e *engine) solve() (*Result, error) {
	if err := e.startVector(); err != nil {
		return nil, err
	}
	nb := 0
	for {
		s, err := e.expand(nb)
		if err != nil {
			return nil, err
		}
		switch s.act {
		case actDone:
			if e.phase == 1 && s.status == Converged {
				s.r = nil // the deflated space holds nothing wanted
			}
			return e.finish(s.r, s.status)
		case actCheck:
			nb, err = e.beginCheck(s)
		case actLockOne:
			nb, err = e.lockCopy(s)
		case actFound:
			nb = e.resumeMain(s)
		default:
			nb = e.thickRestart(s)
		}
		if err == errFull {
			return e.finish(nil, s.status)
		}
		if err != nil {
			return nil, err
		}
		e.rest++
	}
}

// startVector puts the normalized start vector (Settings.Start, or a random
// one) in row 0.
func (e *engine) startVector() error {
	if e.start == nil {
		_, err := e.randomOrth(0)
		return err
	}
	copy(e.f, e.start)
	for _, x := range e.f {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return errors.New("lanczos: Settings.Start contains NaN or Inf")
		}
	}
	ok, err := e.setRow(0, true)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("lanczos: Settings.Start is zero")
	}
	return nil
}

// sweep is the outcome of one expansion of the active block.
type sweep struct {
	a        int     // first row of the active block (nlock + nsoft)
	act      int     // the action due; never actExpand
	status   Status  // how the solve ends when act is actDone
	r        *ritz   // the last Rayleigh-Ritz solution of the active block (nil if none)
	lockSel  []int   // Ritz pairs of r that converged among the wanted and guard ones
	unconv   int     // wanted and guard pairs of r not yet converged
	betaLast float64 // coupling of the last row to the residual when the basis is full
}

// expand extends the active block from row nb by Lanczos steps, solving
// the projected problem after each and applying the convergence tests
// (decide), until the basis is full, the budget is spent, the iteration
// ends, or decide asks for another action.
func (e *engine) expand(nb int) (sweep, error) {
	s := sweep{a: e.nlock + e.nsoft, act: actExpand, status: Converged}
	a, m := s.a, e.m
	var err error
	for j := nb; s.act == actExpand; {
		if j == m {
			s.act = actRestart
			break
		}
		if e.matvec%8 == 0 && e.ctx != nil {
			if err := e.ctx.Err(); err != nil {
				return s, err
			}
		}
		if e.matvec >= e.maxMV {
			s.status, s.act = BudgetExceeded, actDone
			if j > a {
				if s.r, err = e.rayleighRitz(a, j, 0); err != nil {
					return s, err
				}
			}
			break
		}
		beta, end, err := e.step(a, j)
		if err != nil {
			return s, err
		}
		if end != stepOn {
			s.act = actDone
			if end == stepExhausted {
				s.status = ReachableSpaceExhausted
			}
		}
		if j+1 < m {
			e.tset(j, j+1, beta)
		} else {
			s.betaLast = beta
		}
		if e.phase == 1 && e.cok {
			e.certStep(a, j, beta)
		}
		j++
		if s.r, err = e.rayleighRitz(a, j, s.betaLast); err != nil {
			return s, err
		}
		if s.act == actExpand {
			s.act, s.lockSel, s.unconv = e.decide(s.r, j-a)
		}
	}
	return s, nil
}

// How a Lanczos step ends.
const (
	stepOn        = iota // the next basis vector is in row j+1
	stepFull             // the basis spans the whole space: nothing to add
	stepExhausted        // A vanishes on the complement of the basis
)

// step is one Lanczos step on row j of the active block starting at row a:
// it applies the operator to v_j, subtracts the known couplings and alpha,
// reorthogonalizes fully, sets the diagonal entry of the projected matrix,
// and puts the next basis vector (or, after a breakdown, a random one
// orthogonal to the basis) in row j+1. It returns beta, the coupling of
// v_j to row j+1 (0 after a breakdown or when the space is full).
func (e *engine) step(a, j int) (beta float64, end int, err error) {
	if err := e.apply(j); err != nil {
		return 0, stepOn, err
	}
	bl := blas64.Implementation()
	n, m := e.n, e.m
	vj := e.row(e.v, j)
	// Lanczos recurrence: subtract the known couplings (the previous beta,
	// or the arrow after a restart) and alpha, then reorthogonalize fully.
	for i := a; i < j; i++ {
		if c := e.t[i*m+j]; c != 0 {
			bl.Daxpy(n, -c, e.row(e.v, i), 1, e.f, 1)
			if e.bmode {
				bl.Daxpy(n, -c, e.row(e.bv, i), 1, e.bf, 1)
			}
		}
	}
	alpha := bl.Ddot(n, e.row(e.bv, j), 1, e.f, 1)
	bl.Daxpy(n, -alpha, vj, 1, e.f, 1)
	if e.bmode {
		bl.Daxpy(n, -alpha, e.row(e.bv, j), 1, e.bf, 1)
	}
	norm1 := math.Sqrt(max(bl.Ddot(n, e.f, 1, e.bf, 1), 0))
	beta = e.orth(j+1, norm1)
	e.t[j*m+j] = alpha + e.h[j]
	if j+1 >= n {
		return 0, stepFull, nil
	}
	if beta <= e.breakTol() {
		// Breakdown: the basis spans an invariant subspace.
		if e.reseed[j] {
			// v_j was itself a fresh random vector: A vanishes on
			// the complement of the invariant subspace found so far.
			return 0, stepExhausted, nil
		}
		ok, err := e.randomOrth(j + 1)
		if err != nil {
			return 0, stepOn, err
		}
		e.reseed[j+1] = true
		if !ok {
			return 0, stepFull, nil
		}
		return 0, stepOn, nil
	}
	e.normalizeInto(j+1, beta)
	e.reseed[j+1] = false
	return beta, stepOn, nil
}

// apply computes w_j = Op v_j (and A v_j in B mode) into row j of W (and
// AV), copies it to the residual vector f (and its B image to bf), counts
// the matvec and updates the estimate of ||A||.
func (e *engine) apply(j int) error {
	vj := e.row(e.v, j)
	wj := e.row(e.w, j)
	if e.bmode {
		aj := e.row(e.av, j)
		e.op(wj, aj, vj)
		copy(e.bf, aj)
	} else {
		e.op(wj, nil, vj)
	}
	e.matvec++
	copy(e.f, wj)
	norm0 := math.Sqrt(max(blas64.Implementation().Ddot(e.n, e.f, 1, e.bf, 1), 0))
	if math.IsNaN(norm0) || math.IsInf(norm0, 0) {
		return fmt.Errorf("lanczos: operator produced NaN or Inf at matvec %d", e.matvec)
	}
	e.normA = max(e.normA, norm0)
	return nil
}

// beginCheck starts the deflated check once the main iteration has
// converged: it locks what converged, keeps the leading unconverged Ritz
// vectors as a soft deflation set (they shift the top of the deflated
// spectrum away from the k-th value, which makes the check cheaper; a copy
// missed by the Krylov space is orthogonal to them as well), and restarts
// from a fresh random vector. It returns the row the check expands from.
func (e *engine) beginCheck(s sweep) (int, error) {
	e.phase = 1
	nl := len(s.lockSel)
	ns := min(s.r.na-nl, (e.m-s.a-nl)/2-minCheckSteps)
	sel := leading(s.lockSel, s.r.na, nl+ns)
	if err := e.lockFresh(s.r, s.a, sel, nl); err != nil {
		return 0, err
	}
	e.certStart()
	return e.nlock + e.nsoft, nil
}

// lockCopy locks the converged copy the check found (the top Ritz pair),
// drops the soft set and starts the check again from a fresh vector.
func (e *engine) lockCopy(s sweep) (int, error) {
	e.transform(s.r, s.a, []int{0})
	e.moveDown(s.a, 1)
	e.nsoft = 0
	e.lockVal = append(e.lockVal, s.r.theta[0])
	e.lockConv = append(e.lockConv, true)
	e.nlock++
	if err := e.fresh(); err != nil {
		return 0, err
	}
	e.certStart()
	return e.nlock, nil
}

// resumeMain handles a wanted value the check found unconverged: it drops
// the soft set and resumes the main iteration from the value's Ritz vector.
func (e *engine) resumeMain(s sweep) int {
	e.transform(s.r, s.a, []int{0})
	e.moveDown(s.a, 1)
	e.nsoft = 0
	e.phase = 0
	e.clearT(e.nlock)
	e.reseed[e.nlock] = false
	return e.nlock
}

// thickRestart restarts a full basis: it locks the converged wanted pairs,
// keeps the leading unconverged ones (the unconverged wanted and guard
// pairs plus keepFrac of the rest, at most keepMax of the active block)
// and the residual direction, and returns the row expansion resumes from.
func (e *engine) thickRestart(s sweep) int {
	r, a, m := s.r, s.a, e.m
	na := r.na
	q := len(s.lockSel)
	avail := na - q
	p := s.unconv + int(keepFrac*float64(avail-s.unconv))
	p = min(p, m-a-q-2, avail)
	p = max(p, min(s.unconv, m-a-q-1))
	// At most half of the active basis beyond the unconverged wanted
	// pairs (guard pairs included): a small NCV must leave room to
	// expand (ARPACK keeps nev + min(nconv, np/2) for the same
	// reason).
	p = min(p, max(int(keepMax*float64(avail)), e.k-e.nlock-q, 1), m-a-q-1)
	sel := leading(s.lockSel, na, q+p)
	p = len(sel) - q
	e.transform(r, a, sel)
	c := a + q + p
	e.copyRow(c, m)
	e.clearT(a)
	for idx, i := range sel {
		row := a + idx
		e.t[row*m+row] = r.theta[i]
		if idx < q {
			e.lockVal = append(e.lockVal, r.theta[i])
			e.lockConv = append(e.lockConv, true)
		} else {
			e.tset(row, c, s.betaLast*r.y.At(na-1, i))
		}
	}
	e.nlock += q
	if e.phase == 1 && e.cok {
		e.certRestart(r, a, sel, c)
	}
	return c
}

// leading returns the Ritz pairs to keep: those of lockSel, then the
// leading others among the na pairs until there are total of them.
func leading(lockSel []int, na, total int) []int {
	isLock := make(map[int]bool, len(lockSel))
	for _, i := range lockSel {
		isLock[i] = true
	}
	sel := append([]int(nil), lockSel...)
	for i := 0; i < na && len(sel) < total; i++ {
		if !isLock[i] {
			sel = append(sel, i)
		}
	}
	return sel
}

// decide applies the convergence tests to the current Rayleigh-Ritz
// solution of an active block of size steps.
func (e *engine) decide(r *ritz, steps int) (act int, lockSel []int, unconv int) {
	na := r.na
	conv := func(i int) bool { return r.est[i] <= e.tol*e.scale(r.theta[i]) }
	if e.phase == 1 {
		thk := e.kthLocked(e.k)
		top := r.theta[0]
		switch {
		case conv(0) && top >= thk-e.tol*e.scale(thk):
			// A converged copy (or a missed larger value).
			return actLockOne, nil, 0
		case top > thk:
			return actFound, nil, 0
		case e.cok && top < thk-e.tol*e.scale(thk) && e.certMiss(steps) <= e.miss:
			// Certified: a copy would have shown with probability
			// at least 1 - miss.
			return actDone, nil, 0
		case !e.cok && (conv(0) || (steps >= minCheckSteps && r.est[0] <= checkRatio*(thk-top))):
			// Fallback when a breakdown cut the check's Krylov
			// sequence: the top deflated Ritz value is localized
			// below the k-th value.
			return actDone, nil, 0
		default:
			return actExpand, nil, 1
		}
	}
	wantedUnconv := 0
	for i := 0; i < na; i++ {
		rk := e.rank(r.theta[i]) + i
		if rk >= e.kc {
			break
		}
		if conv(i) {
			lockSel = append(lockSel, i)
		} else {
			unconv++
			if rk < e.k {
				wantedUnconv++
			}
		}
	}
	if wantedUnconv == 0 {
		if !e.check || e.nlock+len(lockSel)+2 > e.m || e.nlock+len(lockSel) >= e.n {
			return actDone, nil, 0
		}
		return actCheck, lockSel, 0
	}
	return actExpand, lockSel, unconv
}

// minCheckSteps is the least number of Lanczos steps of the deflated
// restart before its top Ritz value may be declared settled when the
// certificate is unavailable (a breakdown cut the check's sequence); it also
// sets the room left for the check next to the soft deflation set.
const minCheckSteps = 5

// keepFrac is the fraction of the non-wanted part of the basis kept at a
// thick restart, on top of the unconverged wanted and guard pairs.
const keepFrac = 0.3

// keepMax caps the part of the active basis kept at a thick restart, unless
// more unconverged wanted pairs remain, so that a small basis keeps room to
// expand. It binds only for small NCV (TestSmallNCV holds NCV = 2 K + 1 to
// ARPACK's counts with it).
const keepMax = 0.5

// checkRatio: without the certificate, the deflated restart ends when the
// residual estimate of its top Ritz value is below checkRatio times the
// distance from that value to the k-th converged eigenvalue (the Ritz value is
// then localized well below it).
const checkRatio = 0.3

// lockFresh transforms the Ritz pairs sel of the active block starting at
// row a into rows a, a+1, ...; the first nl of them are locked, the rest
// become the soft deflation set. The rest of the active block is discarded
// and a fresh random vector, orthogonal to all of these, goes in the next
// row.
func (e *engine) lockFresh(r *ritz, a int, sel []int, nl int) error {
	if a != e.nlock || e.nsoft != 0 {
		panic("lanczos: internal error: lockFresh with a soft set")
	}
	if len(sel) > 0 {
		e.transform(r, a, sel)
	}
	for _, i := range sel[:nl] {
		e.lockVal = append(e.lockVal, r.theta[i])
		e.lockConv = append(e.lockConv, true)
	}
	e.nlock += nl
	e.nsoft = len(sel) - nl
	return e.fresh()
}

// fresh clears the projected matrix after the locked and soft rows and puts
// a random vector orthogonal to them in the next row.
func (e *engine) fresh() error {
	e.clearT(e.nlock)
	next := e.nlock + e.nsoft
	ok, err := e.randomOrth(next)
	if err != nil {
		return err
	}
	e.reseed[next] = true
	if !ok {
		return errFull
	}
	return nil
}

// moveDown moves rows [from, from+count) of the basis arrays to rows
// [nlock, nlock+count), over the soft deflation set.
func (e *engine) moveDown(from, count int) {
	if from == e.nlock {
		return
	}
	n := e.n
	arrays := [][]float64{e.v, e.w}
	if e.bmode {
		arrays = append(arrays, e.bv, e.av)
	}
	for _, arr := range arrays {
		copy(arr[e.nlock*n:(e.nlock+count)*n], arr[from*n:(from+count)*n])
	}
}

var errFull = errors.New("lanczos: no room for a fresh vector")

// finish locks the active Ritz pairs (if any), selects the returned pairs
// and computes explicit residuals.
func (e *engine) finish(r *ritz, status Status) (*Result, error) {
	if r != nil {
		e.lockActive(r)
	}
	idx, status := e.selectReturned(status)
	n, nk := e.n, len(idx)
	e.sel = idx
	res := &Result{
		Values:    make([]float64, nk),
		Residuals: make([]float64, nk),
		Matvecs:   e.matvec,
		Restarts:  e.rest,
		Status:    status,
		NormA:     e.normA,
		Tol:       e.tol,
	}
	if nk > 0 {
		res.Vectors = mat.NewDense(n, nk, nil)
	}
	d := make([]float64, n)
	failed := false
	for c, i := range idx {
		th := e.lockVal[i]
		vi, wi := e.row(e.v, i), e.row(e.av, i)
		bvi := e.row(e.bv, i)
		for l := range d {
			d[l] = wi[l] - th*bvi[l]
		}
		rn := blas64.Implementation().Dnrm2(n, d, 1)
		if e.neg {
			th = -th
		}
		res.Values[c] = th
		res.Residuals[c] = rn
		for l := 0; l < n; l++ {
			res.Vectors.Set(l, c, vi[l])
		}
		if e.lockConv[i] {
			res.Converged++
			if rn > e.accept(e.lockVal[i]) {
				failed = true
			}
		}
	}
	if status == Converged && res.Converged < e.k && len(idx) >= e.k {
		status = BudgetExceeded
	}
	if failed && status == Converged {
		status = ResidualCheckFailed
	}
	if status == Converged && nk < e.kreq {
		status = ReachableSpaceExhausted // K > n
	}
	res.Status = status
	return res, nil
}

// lockActive locks all Ritz pairs of the active block, converged or not.
func (e *engine) lockActive(r *ritz) {
	a := e.nlock + e.nsoft
	sel := make([]int, r.na)
	for i := range sel {
		sel[i] = i
	}
	e.transform(r, a, sel)
	e.moveDown(a, r.na)
	for i := 0; i < r.na; i++ {
		e.lockVal = append(e.lockVal, r.theta[i])
		e.lockConv = append(e.lockConv, r.est[i] <= e.tol*e.scale(r.theta[i]))
	}
	e.nlock += r.na
}

// selectReturned returns the rows of the locked pairs to return, largest
// value first, at most K of them; when the reachable space is exhausted it
// leaves out the null space (values at the breakdown level) and reports
// Converged if K pairs remain.
func (e *engine) selectReturned(status Status) ([]int, Status) {
	idx := make([]int, e.nlock)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return e.lockVal[idx[x]] > e.lockVal[idx[y]] })
	if status == ReachableSpaceExhausted {
		zero := 1e3 * e.breakTol()
		kept := idx[:0]
		for _, i := range idx {
			if math.Abs(e.lockVal[i]) > zero {
				kept = append(kept, i)
			}
		}
		idx = kept
		if len(idx) >= e.k {
			status = Converged
		}
	}
	if len(idx) > e.k {
		idx = idx[:e.k]
	}
	return idx, status
}

// accept is the explicit residual level accepted for a converged pair: the
// tolerance with a margin of 10 for the estimate, or the rounding level
// of an explicit residual, whichever is larger.
func (e *engine) accept(theta float64) float64 {
	return max(10*e.tol*e.scale(theta), 100*eps*math.Sqrt(float64(e.n))*e.normA)
}

// certStart begins the certificate of a deflated check whose Krylov
// sequence starts at the fresh row nlock+nsoft: z = p(A') z with p = 1.
func (e *engine) certStart() {
	vals := append([]float64(nil), e.lockVal...)
	sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
	vals = vals[:min(e.k, len(vals))]
	e.cpts = e.cpts[:0]
	for i, v := range vals {
		if i == 0 || v != vals[i-1] {
			e.cpts = append(e.cpts, v)
		}
	}
	np := len(e.cpts)
	if len(e.cpx) < (e.m+1)*np {
		e.cpx = make([]float64, (e.m+1)*e.k)
	}
	r0 := e.nlock + e.nsoft
	e.cexp = e.cexp[:0]
	for p := 0; p < np; p++ {
		e.cpx[r0*np+p] = 1
		e.cexp = append(e.cexp, 0)
	}
	e.cok = true
}

// certStep sets the polynomial values of the new row j+1 from the Lanczos
// step on row j: beta v_{j+1} = A' v_j - sum_{i in [a, j]} t_ij v_i.
func (e *engine) certStep(a, j int, beta float64) {
	if beta == 0 {
		e.cok = false // breakdown: reseeded, the sequence is cut
		return
	}
	np, m := len(e.cpts), e.m
	for p, x := range e.cpts {
		v := x * e.cpx[j*np+p]
		for i := a; i <= j; i++ {
			if c := e.t[i*m+j]; c != 0 {
				v -= c * e.cpx[i*np+p]
			}
		}
		v /= beta
		e.cpx[(j+1)*np+p] = v
		if math.Abs(v) > 1e100 {
			// Rescale the column; cexp keeps the exponent.
			for i := a; i <= j+1; i++ {
				e.cpx[i*np+p] *= 1e-100
			}
			e.cexp[p] += 100
		}
	}
}

// certRestart carries the polynomial values through a thick restart of the
// check: rows a.. become the Ritz vectors sel, row c the residual row m.
func (e *engine) certRestart(r *ritz, a int, sel []int, c int) {
	np := len(e.cpts)
	tmp := make([]float64, len(sel)*np)
	for idx, col := range sel {
		for p := 0; p < np; p++ {
			var v float64
			for l := 0; l < r.na; l++ {
				v += r.y.At(l, col) * e.cpx[(a+l)*np+p]
			}
			tmp[idx*np+p] = v
		}
	}
	copy(e.cpx[a*np:], tmp)
	copy(e.cpx[c*np:(c+1)*np], e.cpx[e.m*np:(e.m+1)*np])
}

// certMiss bounds the probability that the check has missed a copy of a
// wanted eigenvalue: for a copy u at x_p, orthogonal to the locked and soft
// vectors, every unit vector w = sum_i s_i v_i of the check's space has
// <u, w> = c sum_i s_i p_i(x_p) with c = <u, z>, so
// |c| <= 1 / ||p(x_p)||. A random z has c ~ N(0, 1/d), d the dimension of
// the deflated space, so P(|c| <= t) <= t sqrt(2 d / pi).
func (e *engine) certMiss(steps int) float64 {
	np := len(e.cpts)
	a := e.nlock + e.nsoft
	rows := steps + 1 // rows a .. a+steps
	d := float64(e.n - a)
	worst := 0.0
	for p := 0; p < np; p++ {
		var s float64
		for i := a; i < a+rows; i++ {
			x := e.cpx[i*np+p]
			s += x * x
		}
		worst = max(worst, math.Sqrt(2*d/math.Pi/s)*math.Pow(10, -e.cexp[p]))
	}
	return worst
}
