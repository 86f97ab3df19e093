package dica

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Part identifies the data that one pass of Plan.Accumulate summarized: a
// digest of the cells (their input and target values and the names of their
// domains, as a multiset, so it does not depend on the order of the rows or
// on how the pass was split among goroutines) and their number. Statistics
// carry the parts they were accumulated from; Merge refuses statistics that
// hold a part already merged, so a shard given twice (under two file names,
// say) is not counted twice.
type Part struct {
	Digest [16]byte
	N      int64
}

// String returns the number of cells and the first bytes of the digest.
func (p Part) String() string {
	return fmt.Sprintf("%d cells, digest %s", p.N, hex.EncodeToString(p.Digest[:6]))
}

// DuplicateError is returned by Stats.Merge when the statistics to merge
// hold a Part that is already merged.
type DuplicateError struct{ Part Part }

func (e *DuplicateError) Error() string {
	if e == nil {
		return "dica: statistics summarize data already merged"
	}
	return fmt.Sprintf("dica: these statistics summarize data already merged (%v): each shard must be merged once", e.Part)
}

// Parts returns the parts of data the statistics summarize (nil for
// statistics built with Plan.NewStats and AddBlock, and for files written by
// versions of dica that did not record them).
func (s *Stats) Parts() []Part {
	if s == nil {
		return nil
	}
	return slices.Clone(s.parts)
}

// rowHash hashes the bits of a row's inputs and targets. Sums of row hashes
// over a domain identify its multiset of rows.
func rowHash(x, y []float64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range x {
		h = bits.RotateLeft64(h^math.Float64bits(v), 27) * 0xff51afd7ed558ccd
	}
	for _, v := range y {
		h = bits.RotateLeft64(h^math.Float64bits(v), 31) * 0xc4ceb9fe1a85ec53
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// part returns the Part of accumulated sums: a SHA-256 of the domains'
// names, counts and row-hash sums, in name order.
func (a *accum) part(domains []string) Part {
	idx := make([]int, len(domains))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return strings.Compare(domains[i], domains[j]) })
	h := sha256.New()
	var buf [8]byte
	for _, i := range idx {
		var c int64
		var hs uint64
		if i < len(a.domCount) {
			c = a.domCount[i]
		}
		if i < len(a.domHash) {
			hs = a.domHash[i]
		}
		if c == 0 {
			continue
		}
		binary.LittleEndian.PutUint64(buf[:], uint64(len(domains[i])))
		h.Write(buf[:])
		h.Write([]byte(domains[i]))
		binary.LittleEndian.PutUint64(buf[:], uint64(c))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], hs)
		h.Write(buf[:])
	}
	var p Part
	copy(p.Digest[:], h.Sum(nil))
	p.N = a.n
	return p
}

// planDiff lists the settings in which two plans differ, as "setting: a vs
// b", for a refusal to merge their statistics.
func planDiff(a, b *Plan) []string {
	var out []string
	diff := func(name string, x, y any) {
		xs, ys := fmt.Sprint(x), fmt.Sprint(y)
		if xs != ys {
			out = append(out, fmt.Sprintf("%s: %s vs %s", name, xs, ys))
		}
	}
	ca, cb := a.Config, b.Config
	diff("method", ca.Method, cb.Method)
	diff("components", ca.Components, cb.Components)
	diff("lambda", ca.Lambda, cb.Lambda)
	diff("epsilon", ca.Epsilon, cb.Epsilon)
	diff("kernel", kernelString(ca.Kernel), kernelString(cb.Kernel))
	diff("output kernel", kernelString(ca.OutputKernel), kernelString(cb.OutputKernel))
	diff("solver", ca.Solver, cb.Solver)
	diff("rank", ca.Rank, cb.Rank)
	diff("landmarks", ca.Landmarks, cb.Landmarks)
	diff("orthogonal", ca.Orthogonal, cb.Orthogonal)
	diff("rcond", ca.RCond, cb.RCond)
	diff("output rank", ca.OutputRank, cb.OutputRank)
	diff("form", ca.Form, cb.Form)
	diff("seed", ca.Seed, cb.Seed)
	diff("features", strings.Join(a.Schema.Features, ","), strings.Join(b.Schema.Features, ","))
	diff("labelled", a.Schema.Labelled, b.Schema.Labelled)
	diff("targets", strings.Join(a.Schema.Targets, ","), strings.Join(b.Schema.Targets, ","))
	diff("preprocessing", ca.Preprocessing.String(), cb.Preprocessing.String())
	if len(out) == 0 {
		var ea, eb encoder
		a.in.encode(&ea)
		b.in.encode(&eb)
		if !slices.Equal(ea.b, eb.b) {
			out = append(out, "landmarks: the shards chose different landmarks (give every shard the same sample data)")
		} else {
			out = append(out, "output landmarks: the shards chose different landmarks on the targets (give every shard the same sample data)")
		}
	}
	return out
}

func kernelString(k any) string {
	if k == nil {
		return "median heuristic"
	}
	return fmt.Sprint(k)
}
