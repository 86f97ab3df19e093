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

	"github.com/dicalab/dica/internal/escape"
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

// DomainPart identifies the cells of one domain in one source file
// (Block.File; all of the domain's cells for sources that do not say) that
// one pass of Plan.Accumulate summarized: the part (the pass), the
// domain's name, the number of its cells and a digest of them, the sum of
// a 64-bit hash of each cell's input and target values (so it does not
// depend on the order of the cells or on how the pass was split, and not
// on the domain's name).
type DomainPart struct {
	Part   Part
	Domain string
	N      int64
	Digest uint64
}

// String names the domain, its number of cells and its digest.
func (d DomainPart) String() string {
	return fmt.Sprintf("domain %s (%d cells, digest %016x)", escape.String(d.Domain, 0), d.N, d.Digest)
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

// Overlap is one domain whose cells two shards both hold: Merged is its
// DomainPart in the statistics merged so far, New the one in the
// statistics to merge (the same cells: the same number and digest, under
// the same or another domain name).
type Overlap struct{ Merged, New DomainPart }

// OverlapError is returned by Stats.Merge when the statistics to merge
// hold the cells of a domain that are already merged: shards of samples 1
// and 2 and of samples 2 and 3, say. Overlaps lists every such domain.
type OverlapError struct{ Overlaps []Overlap }

func (e *OverlapError) Error() string {
	if e == nil || len(e.Overlaps) == 0 {
		return "dica: these statistics hold cells already merged: each cell must be merged once"
	}
	o := e.Overlaps[0]
	var more string
	if k := len(e.Overlaps) - 1; k > 0 {
		more = fmt.Sprintf(", and %d more domain(s)", k)
	}
	return fmt.Sprintf("dica: these statistics (%v) hold cells already merged: %v is also in the statistics of %v%s: each cell must be merged once",
		o.New.Part, o.New, o.Merged.Part, more)
}

// LegacyError is returned by Stats.Merge for statistics read from a file
// of a dica that did not record which cells each domain holds (statistics
// format version 3 or older): their overlap with other shards cannot be
// checked, so they do not merge. Such a file still solves on its own.
// Merged reports that the statistics merged into are the old ones (else
// those to merge are).
type LegacyError struct {
	Version uint32
	Merged  bool
}

func (e *LegacyError) Error() string {
	var v uint32
	if e != nil {
		v = e.Version
	}
	return fmt.Sprintf("dica: statistics of format version %d do not record which cells each domain holds, so whether they overlap other shards cannot be checked: accumulate the shard again with this dica (such a file still solves on its own)", v)
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

// DomainParts returns the cells of each domain in each source file of each
// part the statistics summarize, in the order of the parts, within a part
// of the domains' first appearance and within a domain of the files (nil
// when Parts is nil).
func (s *Stats) DomainParts() []DomainPart {
	if s == nil {
		return nil
	}
	return slices.Clone(s.cells)
}

// checkOverlap returns a *LegacyError when s or o (both with a plan) come
// from a file that records no domain parts, a *DuplicateError when o holds
// a part that s holds, and an *OverlapError when o holds the cells of a
// domain that s holds. Statistics of AddBlock record no parts and are not
// checked: their caller partitions the data.
func (s *Stats) checkOverlap(o *Stats) error {
	if s.legacy != 0 {
		return &LegacyError{Version: s.legacy, Merged: true}
	}
	if o.legacy != 0 {
		return &LegacyError{Version: o.legacy}
	}
	for _, p := range o.parts {
		if slices.Contains(s.parts, p) {
			return &DuplicateError{Part: p}
		}
	}
	if len(o.cells) == 0 || len(s.cells) == 0 {
		return nil
	}
	type key struct {
		n int64
		h uint64
	}
	have := make(map[key]int, len(s.cells))
	for i, c := range s.cells {
		if _, ok := have[key{c.N, c.Digest}]; !ok {
			have[key{c.N, c.Digest}] = i
		}
	}
	var e OverlapError
	for _, c := range o.cells {
		if i, ok := have[key{c.N, c.Digest}]; ok {
			e.Overlaps = append(e.Overlaps, Overlap{Merged: s.cells[i], New: c})
		}
	}
	if len(e.Overlaps) > 0 {
		return &e
	}
	return nil
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

// part returns the Part of accumulated sums (a SHA-256 of the domains'
// names, counts and row-hash sums, in name order) and the DomainPart of
// each domain with cells, in domain order.
func (a *accum) part(domains []string) (Part, []DomainPart) {
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
	// A domain's cells, file by file: a shard that holds the cells of a
	// domain in one file is caught beside one that holds the whole domain
	// from several files.
	byDomain := map[int][]fileDomain{}
	for k := range a.fileHash {
		byDomain[k.domain] = append(byDomain[k.domain], k)
	}
	var cells []DomainPart
	for i, name := range domains {
		if i >= len(a.domCount) || a.domCount[i] == 0 {
			continue
		}
		if ks := byDomain[i]; len(ks) > 0 {
			slices.SortFunc(ks, func(x, y fileDomain) int { return x.file - y.file })
			for _, k := range ks {
				if v := a.fileHash[k]; v.n > 0 {
					cells = append(cells, DomainPart{Part: p, Domain: name, N: v.n, Digest: v.h})
				}
			}
			continue
		}
		var hs uint64
		if i < len(a.domHash) {
			hs = a.domHash[i]
		}
		cells = append(cells, DomainPart{Part: p, Domain: name, N: a.domCount[i], Digest: hs})
	}
	return p, cells
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
