package mixing

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// passBlock is the number of query rows whose distances to all points are
// held at a time by one worker.
const passBlock = 32

// pass computes, for every point, in one sweep over all pairs: its k
// nearest other points, its sums of Euclidean distances to the points of
// each group, and its sums of exp(-gamma d^2) over the points of each group
// (the point itself included). Each row is computed by one worker from the
// whole data in a fixed order, so the results do not depend on the number
// of workers.
type pass struct {
	x       *mat.Dense
	k       int // neighbours to keep (0: none)
	groups  []int
	ngroups int
	// distSums asks for dist, gamma > 0 for kern.
	distSums bool
	gamma    float64

	// runs lists the maximal runs of consecutive points of one group
	// when they are long enough for runSums to pay (else nil).
	runs []groupRun

	nbIdx  []int     // n*k: neighbours of row i, nearest first
	nbDist []float64 // n*k: their Euclidean distances
	dist   []float64 // n*ngroups: sums of distances by group
	kern   []float64 // n*ngroups: sums of exp(-gamma d^2) by group
}

func (p *pass) run(ctx context.Context) error {
	if ctx == nil {
		return errors.New("mixing: nil context")
	}
	n, d := p.x.Dims()
	if p.k > 0 {
		p.nbIdx = make([]int, n*p.k)
		p.nbDist = make([]float64, n*p.k)
	}
	if p.distSums {
		p.dist = make([]float64, n*p.ngroups)
	}
	if p.gamma > 0 {
		p.kern = make([]float64, n*p.ngroups)
	}
	if p.distSums || p.gamma > 0 {
		p.runs = groupRuns(p.groups[:n])
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+passBlock-1)/passBlock))
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sq mat.Dense
			buf := make([]float64, n)
			cand := make([]nb, n)
			acc := make([]float64, sumLanes*p.ngroups)
			for ctx.Err() == nil {
				mu.Lock()
				lo := next
				next += passBlock
				mu.Unlock()
				if lo >= n {
					return
				}
				hi := min(lo+passBlock, n)
				sq.Reset()
				kernel.SqDistBlock(&sq, p.x.Slice(lo, hi, 0, d), p.x)
				for i := lo; i < hi; i++ {
					p.row(i, sq.RawRowView(i-lo), buf, cand, acc)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// row fills the results of point i from its squared distances d2 to all
// points; buf (n values), cand (n candidates) and acc (sumLanes ngroups
// values) are scratch. d2 is restored before row returns.
func (p *pass) row(i int, d2, buf []float64, cand []nb, acc []float64) {
	if p.k > 0 {
		// The k nearest are those of the candidates at most a threshold
		// away when at least k candidates are: the threshold is the
		// distance below which a strided sample of the points holds
		// about twice the share of k, so that few candidates lie beyond
		// the k nearest. Else every other point is a candidate. The
		// point itself is made the farthest while the candidates are
		// gathered.
		self := d2[i]
		d2[i] = math.Inf(1)
		m := 0
		if t, ok := sampleThreshold(d2, p.k, buf); ok {
			for j, v := range d2 {
				cand[m] = nb{d2: v, j: j}
				m += b2i(v <= t)
			}
		}
		if m < p.k {
			m = 0
			for j, v := range d2 {
				if j != i {
					cand[m] = nb{d2: v, j: j}
					m++
				}
			}
		}
		d2[i] = self
		sortFirst(cand[:m], p.k)
		for t, e := range cand[:p.k] {
			p.nbIdx[i*p.k+t] = e.j
			p.nbDist[i*p.k+t] = math.Sqrt(e.d2)
		}
	}
	if p.distSums {
		// The point itself is at distance 0 and adds nothing.
		sqrtSlice(buf, d2)
		p.sums(p.dist[i*p.ngroups:(i+1)*p.ngroups], buf, acc)
	}
	if p.gamma > 0 {
		for j, v := range d2 {
			buf[j] = -p.gamma * v
		}
		kernel.ExpSlice(buf, buf)
		p.sums(p.kern[i*p.ngroups:(i+1)*p.ngroups], buf, acc)
	}
}

// sumLanes is the number of partial sums per group in groupSums.
const sumLanes = 4

// groupSums stores in s[g] the sum of the values v[j] of the points j of
// group g. Point j adds to partial sum j mod sumLanes of its group, so
// that consecutive points of one group do not wait on each other's sum;
// the partial sums are added at the end. acc is scratch for sumLanes
// ngroups values.
func (p *pass) groupSums(s, v, acc []float64) {
	ng := p.ngroups
	clear(acc)
	a0, a1, a2, a3 := acc[:ng], acc[ng:2*ng], acc[2*ng:3*ng], acc[3*ng:4*ng]
	g := p.groups[:len(v)]
	j := 0
	for ; j+sumLanes <= len(v); j += sumLanes {
		a0[g[j]] += v[j]
		a1[g[j+1]] += v[j+1]
		a2[g[j+2]] += v[j+2]
		a3[g[j+3]] += v[j+3]
	}
	for ; j < len(v); j++ {
		a0[g[j]] += v[j]
	}
	for k := range s {
		s[k] = (a0[k] + a1[k]) + (a2[k] + a3[k])
	}
}

// groupRun is a run of consecutive points lo..hi-1 of group g.
type groupRun struct{ lo, hi, g int }

// minRunLength is the least mean length of the runs of points of one
// group for which runSums replaces groupSums.
const minRunLength = 16

// groupRuns returns the maximal runs of equal groups, or nil when their
// mean length is below minRunLength.
func groupRuns(groups []int) []groupRun {
	var runs []groupRun
	for lo := 0; lo < len(groups); {
		hi := lo + 1
		for hi < len(groups) && groups[hi] == groups[lo] {
			hi++
		}
		if (len(runs)+1)*minRunLength > len(groups) {
			return nil
		}
		runs = append(runs, groupRun{lo, hi, groups[lo]})
		lo = hi
	}
	return runs
}

// sums stores in s[g] the sum of the values v[j] of the points j of group
// g, as groupSums does (through runSums when the groups come in long
// runs).
func (p *pass) sums(s, v, acc []float64) {
	if p.runs != nil {
		p.runSums(s, v, acc)
		return
	}
	p.groupSums(s, v, acc)
}

// runSums computes the sums of groupSums, bit for bit, from the runs of
// equal groups: each partial sum (group g, lane l) adds the same values in
// the same order (point j < len(v) rounded down to a multiple of sumLanes
// to lane j mod sumLanes, the points after it to lane 0), but within a
// run the partial sums stay in registers instead of going through memory
// at every point.
func (p *pass) runSums(s, v, acc []float64) {
	ng := p.ngroups
	clear(acc)
	a0, a1, a2, a3 := acc[:ng], acc[ng:2*ng], acc[2*ng:3*ng], acc[3*ng:4*ng]
	main := len(v) &^ (sumLanes - 1)
	for _, r := range p.runs {
		g := r.g
		l := [sumLanes]float64{a0[g], a1[g], a2[g], a3[g]}
		j, hi := r.lo, min(r.hi, main)
		for ; j < hi && j%sumLanes != 0; j++ {
			l[j%sumLanes] += v[j]
		}
		s0, s1, s2, s3 := l[0], l[1], l[2], l[3]
		for ; j+sumLanes <= hi; j += sumLanes {
			w := v[j : j+sumLanes : j+sumLanes]
			s0 += w[0]
			s1 += w[1]
			s2 += w[2]
			s3 += w[3]
		}
		l = [sumLanes]float64{s0, s1, s2, s3}
		for ; j < hi; j++ {
			l[j%sumLanes] += v[j]
		}
		for ; j < r.hi; j++ {
			l[0] += v[j]
		}
		a0[g], a1[g], a2[g], a3[g] = l[0], l[1], l[2], l[3]
	}
	for k := range s {
		s[k] = (a0[k] + a1[k]) + (a2[k] + a3[k])
	}
}

// neighbors returns the neighbour lists of the pass.
func (p *pass) neighbors() *Neighbors {
	return &Neighbors{K: p.k, Index: p.nbIdx, Dist: p.nbDist}
}

// nb is a candidate neighbour: its squared distance and index.
type nb struct {
	d2 float64
	j  int
}

// less orders neighbours by distance, then by index.
func (a nb) less(b nb) bool { return a.d2 < b.d2 || a.d2 == b.d2 && a.j < b.j }

// cmpNb orders neighbours as less does, for slices.SortFunc.
func cmpNb(a, b nb) int {
	if a.less(b) {
		return -1
	}
	if b.less(a) {
		return 1
	}
	return 0
}

// sortFirst reorders s so that s[:k] holds its k smallest entries (by
// less) in increasing order: a quicksort that only sorts the parts
// holding positions below k, the median of three as pivot, an insertion
// sort for short parts, and slices.SortFunc when the pivots fail. The
// entries of s must be distinct by less (distinct indices).
func sortFirst(s []nb, k int) {
	sortFirstDepth(s, k, 2*bits.Len(uint(len(s))))
}

func sortFirstDepth(s []nb, k, depth int) {
	const short = 12
	for len(s) > short && k > 0 {
		if depth == 0 {
			slices.SortFunc(s, cmpNb)
			return
		}
		depth--
		// Order the first, middle and last entries so that the pivot,
		// the median of the three, sits in the middle (Hoare's scheme
		// with the pivot at the lower middle returns a split that
		// leaves both parts non-empty).
		mid, last := (len(s)-1)/2, len(s)-1
		if s[mid].less(s[0]) {
			s[0], s[mid] = s[mid], s[0]
		}
		if s[last].less(s[mid]) {
			s[mid], s[last] = s[last], s[mid]
			if s[mid].less(s[0]) {
				s[0], s[mid] = s[mid], s[0]
			}
		}
		pv := s[mid]
		i, j := -1, len(s)
		for {
			for i++; s[i].less(pv); i++ {
			}
			for j--; pv.less(s[j]); j-- {
			}
			if i >= j {
				break
			}
			s[i], s[j] = s[j], s[i]
		}
		// s[:j+1] <= pv <= s[j+1:].
		if j+1 >= k {
			s = s[:j+1]
			continue
		}
		sortFirstDepth(s[:j+1], j+1, depth)
		k -= j + 1
		s = s[j+1:]
	}
	if k <= 0 {
		return
	}
	for a := 1; a < len(s); a++ {
		e := s[a]
		b := a
		for ; b > 0 && e.less(s[b-1]); b-- {
			s[b] = s[b-1]
		}
		s[b] = e
	}
}

// Settings of sampleThreshold: the stride of its sample, and the least
// number of points per neighbour kept for it to be used.
const (
	thresholdStride   = 8
	thresholdMinRatio = 16
)

// sampleThreshold returns the q-th smallest of the squared distances d2[j]
// at j = 0, thresholdStride, 2 thresholdStride, ..., with q about
// twice k / thresholdStride, so that about 2 k of all the points lie at
// or below it; ok is false when there are too few points for the sample
// to pay. s is scratch for len(d2) values.
func sampleThreshold(d2 []float64, k int, s []float64) (t float64, ok bool) {
	if len(d2) < thresholdMinRatio*k {
		return 0, false
	}
	m := 0
	for j := 0; j < len(d2); j += thresholdStride {
		s[m] = d2[j]
		m++
	}
	q := 2*k/thresholdStride + 1
	if q >= m {
		return 0, false
	}
	return nth(s[:m], q-1), true
}

// nth returns the value at position q of s in increasing order (quickselect
// with a median-of-3 pivot, a sort after 64 rounds), reordering s. s must
// not hold NaNs.
func nth(s []float64, q int) float64 {
	lo, hi := 0, len(s)-1
	for round := 0; lo < hi; round++ {
		if round == 64 {
			// An input that defeats the pivot: sort.
			slices.Sort(s[lo : hi+1])
			return s[q]
		}
		mid := lo + (hi-lo)/2
		a, b, c := s[lo], s[mid], s[hi]
		pv := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for s[i] < pv {
				i++
			}
			for s[j] > pv {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case q <= j:
			hi = j
		case q >= i:
			lo = i
		default:
			return s[q]
		}
	}
	return s[q]
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var x int
	if b {
		x = 1
	}
	return x
}
