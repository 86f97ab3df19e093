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

// Settings of the symmetric sweep: the number of points whose pairs with
// the points after them one worker takes at a time (a multiple of
// passBlock; the chunks, and so the order in which their sums are added,
// do not depend on the number of workers), and the largest number of
// groups for which the sums use the symmetry (each chunk in flight holds
// two sums per group of its points for every later point: with 16 groups
// and n points, 256 n bytes, as much as a worker's block of distances;
// at most two chunks per worker are in flight).
const (
	symChunk     = 4 * passBlock
	symMaxGroups = 16
)

// pass computes, for every point, in one sweep over all pairs: its k
// nearest other points, its sums of Euclidean distances to the points of
// each group, and its sums of exp(-gamma d^2) over the points of each group
// (the point itself included). Each neighbour list is computed by one
// worker from the whole data. The sums, when there are at most
// symMaxGroups groups, use the symmetry: the row of point i evaluates the
// pairs (i, j > i) only, adds them to its own sums and, for the points j,
// to column sums of its chunk of symChunk points, which are added to the
// totals in chunk order. The results do not depend on the number of
// workers.
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
	// sym is set for the symmetric sweep.
	sym bool

	nbIdx  []int     // n*k: neighbours of row i, nearest first
	nbDist []float64 // n*k: their Euclidean distances
	dist   []float64 // n*ngroups: sums of distances by group
	kern   []float64 // n*ngroups: sums of exp(-gamma d^2) by group
}

// colSums holds the column sums of one chunk of the symmetric sweep: for
// each group h of the chunk's points, the sums over the chunk's points i
// of group h of the values of the pairs (i, j) for j > i, at
// [slot[h] (n - lo) + j - lo] of dist and kern.
type colSums struct {
	lo, hi     int
	slot       []int // by group: its row in dist and kern, or -1
	present    []int // the groups of the chunk's points
	dist, kern []float64
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
		p.sym = p.ngroups <= symMaxGroups
	}
	chunk := passBlock
	var colDist, colKern []float64 // ngroups x n: the column sums
	if p.sym {
		chunk = symChunk
		if p.distSums {
			colDist = make([]float64, p.ngroups*n)
		}
		if p.gamma > 0 {
			colKern = make([]float64, p.ngroups*n)
		}
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk))
	var (
		mu      sync.Mutex
		merged  = sync.NewCond(&mu)
		next    int
		pending = map[int]*colSums{} // finished chunks by lo, not yet added
		done    int                  // the chunks before it are added
		free    []*colSums
		wg      sync.WaitGroup
	)
	// submit adds the column sums of finished chunks to the totals in
	// chunk order, and waits while many chunks wait for an earlier one.
	submit := func(c *colSums) {
		mu.Lock()
		defer mu.Unlock()
		pending[c.lo] = c
		for {
			c, ok := pending[done]
			if !ok {
				break
			}
			delete(pending, done)
			c.addTo(colDist, colKern, n)
			free = append(free, c)
			done = c.hi
		}
		merged.Broadcast()
		for len(pending) >= workers && ctx.Err() == nil {
			merged.Wait()
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// Wake the workers that wait for this one's chunk
				// when it stops early.
				mu.Lock()
				merged.Broadcast()
				mu.Unlock()
			}()
			var sq mat.Dense
			buf := make([]float64, n)
			var cand []nb
			var candIdx []int32
			if p.k > 0 {
				cand = make([]nb, n)
				candIdx = make([]int32, n)
			}
			acc := make([]float64, sumLanes*p.ngroups)
			for ctx.Err() == nil {
				mu.Lock()
				lo := next
				next += chunk
				var c *colSums
				if p.sym && lo < n && len(free) > 0 {
					c, free = free[len(free)-1], free[:len(free)-1]
				}
				mu.Unlock()
				if lo >= n {
					return
				}
				hi := min(lo+chunk, n)
				if p.sym {
					c = p.newColSums(c, lo, hi, n)
				}
				for b := lo; b < hi && ctx.Err() == nil; b += passBlock {
					bh := min(b+passBlock, hi)
					sq.Reset()
					kernel.SqDistBlock(&sq, p.x.Slice(b, bh, 0, d), p.x)
					for i := b; i < bh; i++ {
						p.row(i, sq.RawRowView(i-b), buf, cand, candIdx, acc, c)
					}
				}
				if ctx.Err() != nil {
					return
				}
				if p.sym {
					submit(c)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.sym {
		ng := p.ngroups
		for i, g := range p.groups[:n] {
			if p.distSums {
				s := p.dist[i*ng : (i+1)*ng]
				for h := range s {
					s[h] += colDist[h*n+i]
				}
			}
			if p.gamma > 0 {
				s := p.kern[i*ng : (i+1)*ng]
				for h := range s {
					s[h] += colKern[h*n+i]
				}
				// The point itself, at kernel value 1.
				s[g]++
			}
		}
	}
	return nil
}

// newColSums returns column sums for the chunk lo..hi-1 of n points, set
// to zero, reusing c when it is not nil.
func (p *pass) newColSums(c *colSums, lo, hi, n int) *colSums {
	if c == nil {
		c = &colSums{slot: make([]int, p.ngroups)}
	}
	c.lo, c.hi = lo, hi
	for h := range c.slot {
		c.slot[h] = -1
	}
	c.present = c.present[:0]
	for _, g := range p.groups[lo:hi] {
		if c.slot[g] < 0 {
			c.slot[g] = len(c.present)
			c.present = append(c.present, g)
		}
	}
	size := len(c.present) * (n - lo)
	if p.distSums {
		c.dist = grow(c.dist, size)
	}
	if p.gamma > 0 {
		c.kern = grow(c.kern, size)
	}
	return c
}

// grow returns s resized to length m and cleared.
func grow(s []float64, m int) []float64 {
	if cap(s) < m {
		return make([]float64, m)
	}
	s = s[:m]
	clear(s)
	return s
}

// addTo adds the column sums to the totals dist and kern (ngroups x n).
func (c *colSums) addTo(dist, kern []float64, n int) {
	w := n - c.lo
	for r, h := range c.present {
		if dist != nil {
			addTo(dist[h*n+c.lo:(h+1)*n], c.dist[r*w:(r+1)*w])
		}
		if kern != nil {
			addTo(kern[h*n+c.lo:(h+1)*n], c.kern[r*w:(r+1)*w])
		}
	}
}

// row fills the results of point i from its squared distances d2 to all
// points; buf (n values), cand (n candidates), candIdx (n indices) and acc
// (sumLanes ngroups values) are scratch, c the column sums of i's chunk in the symmetric
// sweep (else nil). d2 is restored before row returns.
func (p *pass) row(i int, d2, buf []float64, cand []nb, candIdx []int32, acc []float64, c *colSums) {
	if p.k > 0 {
		p.neighborsOf(i, d2, buf, cand, candIdx)
	}
	if !p.distSums && p.gamma <= 0 {
		return
	}
	// The values of the pairs (i, j) from j = off on: all pairs, or in
	// the symmetric sweep those with j > i, whose values also go to the
	// column sums of the points j.
	off := 0
	var colDist, colKern []float64
	if c != nil {
		off = i + 1
		w := len(d2) - c.lo
		r := c.slot[p.groups[i]]
		if p.distSums {
			colDist = c.dist[r*w+off-c.lo : (r+1)*w]
		}
		if p.gamma > 0 {
			colKern = c.kern[r*w+off-c.lo : (r+1)*w]
		}
	}
	d2 = d2[off:]
	v := buf[:len(d2)]
	ng := p.ngroups
	if p.distSums {
		// The point itself is at distance 0 and adds nothing.
		sqrtSlice(v, d2)
		p.sums(p.dist[i*ng:(i+1)*ng], v, off, acc)
		if c != nil {
			addTo(colDist, v)
		}
	}
	if p.gamma > 0 {
		scale(v, d2, -p.gamma)
		kernel.ExpSlice(v, v)
		p.sums(p.kern[i*ng:(i+1)*ng], v, off, acc)
		if c != nil {
			addTo(colKern, v)
		}
	}
}

// neighborsOf fills the neighbour list of point i from its squared
// distances d2 to all points; buf (n values), cand (n candidates) and
// candIdx (n indices) are scratch. d2 is restored before neighborsOf returns.
func (p *pass) neighborsOf(i int, d2, buf []float64, cand []nb, candIdx []int32) {
	// The k nearest are those of the candidates at most a threshold away
	// when at least k candidates are. The threshold is the q-th smallest
	// distance of a strided sample, q about twice k / thresholdStride
	// (so that few candidates lie beyond the k nearest) and, if fewer
	// than k points lie at or below it, 4 times more. Else every other
	// point is a candidate. The point itself is made the farthest while
	// the candidates are gathered.
	self := d2[i]
	d2[i] = math.Inf(1)
	m := 0
	if len(d2) >= thresholdMinRatio*p.k {
		q := 2*p.k/thresholdStride + 1
		m = p.candidates(d2, sampleNth(d2, q, buf), cand, candIdx)
		if m < p.k {
			ns := distanceSample(d2, buf)
			if q *= 4; q < ns {
				m = p.candidates(d2, nth(buf[:ns], q-1), cand, candIdx)
			}
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

// sumLanes is the number of partial sums per group in groupSums and
// runSums.
const sumLanes = 4

// sums stores in s[g] the sum of the values v[t] of the points off + t of
// group g, through runSums when the groups come in long runs, else
// groupSums. acc is scratch for sumLanes ngroups values.
func (p *pass) sums(s, v []float64, off int, acc []float64) {
	if p.runs != nil {
		p.runSums(s, v, off)
		return
	}
	p.groupSums(s, v, p.groups[off:off+len(v)], acc)
}

// groupSums stores in s[g] the sum of the values v[j] with g[j] = g. Value
// j adds to partial sum j mod sumLanes of its group, so that consecutive
// values of one group do not wait on each other's sum; the partial sums
// are added at the end. acc is scratch for sumLanes len(s) values.
func (p *pass) groupSums(s, v []float64, g []int, acc []float64) {
	ng := len(s)
	clear(acc)
	a0, a1, a2, a3 := acc[:ng], acc[ng:2*ng], acc[2*ng:3*ng], acc[3*ng:4*ng]
	g = g[:len(v)]
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

// runSums computes the sums of groupSums from the runs of equal groups,
// for the values v of the points off to the last: the values of each run
// are summed in sumLanes partial sums, and the sums of the runs of a group
// added in order.
func (p *pass) runSums(s, v []float64, off int) {
	clear(s)
	r, _ := slices.BinarySearchFunc(p.runs, off, func(r groupRun, off int) int {
		if r.hi <= off {
			return -1
		}
		if r.lo > off {
			return 1
		}
		return 0
	})
	for _, run := range p.runs[r:] {
		s[run.g] += laneSum(v[max(run.lo, off)-off : run.hi-off])
	}
}

// laneSumGo returns the sum of v in sumLanes partial sums: v[j] adds to
// partial sum j mod sumLanes for j < len(v) rounded down to a multiple of
// sumLanes, the rest to partial sum 0, and the result is (s0 + s1) +
// (s2 + s3).
func laneSumGo(v []float64) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+sumLanes <= len(v); j += sumLanes {
		w := v[j : j+sumLanes : j+sumLanes]
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
	}
	for ; j < len(v); j++ {
		s0 += v[j]
	}
	return (s0 + s1) + (s2 + s3)
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

// Settings of the candidates' threshold: the stride of the sample of the
// distances (odd, so that it does not follow groups that alternate with a
// period of 2, 4 or 8 points), and the least number of points per
// neighbour kept for the sample to be used.
const (
	thresholdStride   = 13
	thresholdMinRatio = 16
)

// distanceSample stores in s the squared distances d2[j] at j = 0,
// thresholdStride, 2 thresholdStride, ... and returns their number. s is
// scratch for len(d2) values.
func distanceSample(d2 []float64, s []float64) int {
	m := 0
	for j := 0; j < len(d2); j += thresholdStride {
		s[m] = d2[j]
		m++
	}
	return m
}

// sampleNth returns the q-th smallest of the squared distances d2[j] at
// j = 0, thresholdStride, 2 thresholdStride, ... (the largest when there
// are fewer than q), keeping the q smallest so far in order in top
// (scratch for q values): most distances are larger than all q kept and
// cost one well-predicted comparison.
func sampleNth(d2 []float64, q int, top []float64) float64 {
	top = top[:q]
	m := 0
	for j := 0; j < len(d2); j += thresholdStride {
		v := d2[j]
		if m == q {
			if v >= top[q-1] {
				continue
			}
		} else {
			m++
		}
		p := m - 1
		for ; p > 0 && top[p-1] > v; p-- {
			top[p] = top[p-1]
		}
		top[p] = v
	}
	return top[m-1]
}

// candidates stores in cand the points j with d2[j] <= t in increasing
// order of j and returns their number; idx is scratch for len(d2)
// indices. The indices are found first (candidateIndices), then their
// distances gathered.
func (p *pass) candidates(d2 []float64, t float64, cand []nb, idx []int32) int {
	m := candidateIndices(idx, d2, t)
	for c, j := range idx[:m] {
		cand[c] = nb{d2: d2[j], j: int(j)}
	}
	return m
}

// candidateIndicesGo stores in idx, in increasing order, the indices j
// with d2[j] <= t and returns their number: a branch-free scan of the two
// halves of d2 at once (two independent counts). idx must be at least as
// long as d2.
func candidateIndicesGo(idx []int32, d2 []float64, t float64) int {
	n := len(d2)
	h := n / 2
	lo, hi := d2[:h], d2[h:2*h]
	a, b := idx[:h], idx[h:2*h]
	ma, mb := 0, 0
	for j := range lo {
		a[ma] = int32(j)
		ma += b2i(lo[j] <= t)
		b[mb] = int32(h + j)
		mb += b2i(hi[j] <= t)
	}
	m := ma + copy(idx[ma:], b[:mb])
	if n > 2*h {
		idx[m] = int32(n - 1)
		m += b2i(d2[n-1] <= t)
	}
	return m
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
