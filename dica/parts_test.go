package dica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dicalab/dica/toy"
)

// TestPartsIdentifyData checks that the part of an Accumulate pass depends
// on the cells only (not on workers or block size), that other cells give
// another part, and that Merge refuses a part it already holds: a copy of
// a shard (the same bytes under another name) and statistics merged with
// themselves.
func TestPartsIdentifyData(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 80, Seed: 5})
	cfg := Config{Method: DICA, Rank: 30, Sigma: 1}
	p, err := NewPlan(ctx, ds.Source(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var first Part
	for i, v := range []struct{ workers, block int }{{1, 1024}, {3, 7}, {2, 64}} {
		q := *p
		q.Config.Workers, q.Config.BlockRows = v.workers, v.block
		st, err := q.Accumulate(ctx, ds.Source())
		if err != nil {
			t.Fatal(err)
		}
		parts := st.Parts()
		if len(parts) != 1 || parts[0].N != int64(ds.N()) {
			t.Fatalf("parts %v", parts)
		}
		if i == 0 {
			first = parts[0]
		} else if parts[0] != first {
			t.Errorf("workers %d, block %d: part %v, want %v", v.workers, v.block, parts[0], first)
		}
	}
	// Two halves of the data: two other parts; merged, they hold both.
	var lo, hi []int
	for i := 0; i < ds.N(); i++ {
		if i%2 == 0 {
			lo = append(lo, i)
		} else {
			hi = append(hi, i)
		}
	}
	a, err := p.Accumulate(ctx, ds.Subset(lo).Source())
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Accumulate(ctx, ds.Subset(hi).Source())
	if err != nil {
		t.Fatal(err)
	}
	if a.Parts()[0] == b.Parts()[0] || a.Parts()[0] == first {
		t.Fatalf("different cells, same part")
	}
	bb, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var total Stats
	if err := total.Merge(a); err != nil {
		t.Fatal(err)
	}
	var copy1, copy2 Stats
	if err := copy1.UnmarshalBinary(bb); err != nil {
		t.Fatal(err)
	}
	if err := copy2.UnmarshalBinary(bb); err != nil {
		t.Fatal(err)
	}
	if err := total.Merge(&copy1); err != nil {
		t.Fatal(err)
	}
	err = total.Merge(&copy2)
	var dup *DuplicateError
	if !errors.As(err, &dup) || dup.Part != b.Parts()[0] {
		t.Fatalf("merging a copy of a shard: %v, want a DuplicateError for %v", err, b.Parts()[0])
	}
	if total.N() != int64(ds.N()) {
		t.Errorf("after the refused merge N = %d, want %d", total.N(), ds.N())
	}
	if len(total.Parts()) != 2 {
		t.Errorf("merged parts: %v", total.Parts())
	}
	if err := a.Merge(a); err == nil || !strings.Contains(err.Error(), "themselves") {
		t.Errorf("merging statistics with themselves: %v", err)
	}
	// The merged statistics, round-tripped, keep their parts.
	tb, err := total.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := back.UnmarshalBinary(tb); err != nil {
		t.Fatal(err)
	}
	if len(back.Parts()) != 2 || back.Parts()[1] != b.Parts()[0] {
		t.Errorf("parts after a round trip: %v", back.Parts())
	}
}

// TestPlanDiff names every setting in which two plans differ.
func TestPlanDiff(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 50, Seed: 6})
	mk := func(c Config) *Stats {
		p, err := NewPlan(ctx, ds.Source(), c)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Accumulate(ctx, ds.Source())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a := mk(Config{Method: DICA, Rank: 20, Sigma: 1, Lambda: 0.1})
	b := mk(Config{Method: DICA, Rank: 30, Sigma: 2, Lambda: 0.1, Seed: 3})
	err := a.Merge(b)
	if err == nil {
		t.Fatal("merged statistics of different plans")
	}
	for _, want := range []string{"rank: 20 vs 30", "kernel: rbf(sigma=1) vs rbf(sigma=2)", "seed: 1 vs 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not say %q", err, want)
		}
	}
	// Same settings, landmarks drawn from other data.
	c := Config{Method: DICA, Rank: 20, Sigma: 1, Lambda: 0.1}
	half := ds.Subset(func() []int {
		var r []int
		for i := 0; i < ds.N(); i += 2 {
			r = append(r, i)
		}
		return r
	}())
	p2, err := NewPlan(ctx, half.Source(), c)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := p2.Accumulate(ctx, ds.Source())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(st2); err == nil || !strings.Contains(err.Error(), "landmarks: the shards chose different landmarks") {
		t.Errorf("different landmarks: %v", err)
	}
}

// TestMergeRefusesOverlap merges shards of samples 1+2 and 2+3: the second
// is refused, naming sample 2 and the parts, and the total is left as it
// was; so is a shard holding sample 2's cells under another name. A sample
// split between two shards merges. Statistics of a version 3 file solve
// alone and do not merge.
func TestMergeRefusesOverlap(t *testing.T) {
	ctx := context.Background()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 60, Seed: 7})
	p, err := NewPlan(ctx, ds.Source(), Config{Method: DICA, Rank: 20, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(keep func(i, dom int) bool) []int {
		var r []int
		for i := 0; i < ds.N(); i++ {
			if keep(i, ds.Domain[i]) {
				r = append(r, i)
			}
		}
		return r
	}
	acc := func(r []int) *Stats {
		t.Helper()
		sub := ds.Subset(r)
		sub.Compact()
		if err := sub.Validate(); err != nil {
			t.Fatal(err)
		}
		st, err := p.Accumulate(ctx, sub.Source())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	name2 := ds.DomainNames[1]
	n2 := int64(ds.DomainSizes()[1])
	a := acc(rows(func(_, g int) bool { return g <= 1 }))
	b := acc(rows(func(_, g int) bool { return g >= 1 }))
	if got := a.DomainParts(); len(got) != 2 || got[1].Domain != name2 || got[1].N != n2 || got[1].Part != a.Parts()[0] {
		t.Fatalf("domain parts of the first shard: %v", got)
	}

	var total Stats
	if err := total.Merge(a); err != nil {
		t.Fatal(err)
	}
	err = total.Merge(b)
	var ov *OverlapError
	if !errors.As(err, &ov) || len(ov.Overlaps) != 1 {
		t.Fatalf("merging 2+3 into 1+2: %v, want an *OverlapError of one domain", err)
	}
	o := ov.Overlaps[0]
	if o.Merged.Domain != name2 || o.New.Domain != name2 || o.New.N != n2 || o.Merged.Part != a.Parts()[0] || o.New.Part != b.Parts()[0] {
		t.Errorf("overlap %+v", o)
	}
	want := fmt.Sprintf("dica: these statistics (%v) hold cells already merged: domain %q (%d cells, digest %016x) is also in the statistics of %v: each cell must be merged once",
		b.Parts()[0], name2, n2, o.New.Digest, a.Parts()[0])
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
	if total.N() != a.N() || len(total.Domains) != 2 || len(total.Parts()) != 1 || len(total.DomainParts()) != 2 {
		t.Errorf("the refused merge changed the total: N = %d, domains %v, parts %v", total.N(), total.Domains, total.Parts())
	}

	// Sample 2's cells under another name (a copied file) overlap too.
	renamed := ds.Subset(rows(func(_, g int) bool { return g >= 1 }))
	renamed.Compact()
	renamed.DomainNames = []string{name2 + " copy", ds.DomainNames[2]}
	rst, err := p.Accumulate(ctx, renamed.Source())
	if err != nil {
		t.Fatal(err)
	}
	if err := total.Merge(rst); !errors.As(err, &ov) || ov.Overlaps[0].New.Domain != name2+" copy" || ov.Overlaps[0].Merged.Domain != name2 {
		t.Errorf("a renamed copy of sample 2: %v", err)
	}

	// Sample 2 split between the shards (even and odd cells) merges, and
	// gives the statistics of all the data.
	c := acc(rows(func(i, g int) bool { return g == 0 || g == 1 && i%2 == 0 }))
	d := acc(rows(func(i, g int) bool { return g == 2 || g == 1 && i%2 == 1 }))
	var split Stats
	if err := split.Merge(c); err != nil {
		t.Fatal(err)
	}
	if err := split.Merge(d); err != nil {
		t.Fatalf("a sample split between shards: %v", err)
	}
	if split.N() != int64(ds.N()) || len(split.DomainParts()) != 4 {
		t.Errorf("split: N = %d, domain parts %v", split.N(), split.DomainParts())
	}
	// The merged statistics keep their domain parts through a file, and
	// still refuse the overlap.
	sb, err := split.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := back.UnmarshalBinary(sb); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.DomainParts(), split.DomainParts()) {
		t.Errorf("domain parts after a round trip: %v, want %v", back.DomainParts(), split.DomainParts())
	}
	if err := back.Merge(b); !errors.As(err, &ov) || len(ov.Overlaps) != 1 || ov.Overlaps[0].New.Domain != ds.DomainNames[2] {
		t.Errorf("merging 2+3 into the split statistics: %v", err)
	}

	// A version 3 file: the same bytes without the domain parts.
	ab, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	v3 := legacyStats(t, ab, a)
	var old Stats
	if err := old.UnmarshalBinary(v3); err != nil {
		t.Fatal(err)
	}
	if old.DomainParts() != nil || len(old.Parts()) != 1 {
		t.Fatalf("a version 3 file: parts %v, domain parts %v", old.Parts(), old.DomainParts())
	}
	var alone Stats
	if err := alone.Merge(&old); err != nil {
		t.Fatal(err)
	}
	if _, err := alone.Solve(); err != nil {
		t.Errorf("a version 3 file alone: %v", err)
	}
	var lg *LegacyError
	if err := alone.Merge(d); !errors.As(err, &lg) || lg.Version != 3 || !lg.Merged {
		t.Errorf("merging into a version 3 file: %v", err)
	}
	if err := split.Merge(&old); !errors.As(err, &lg) || lg.Merged || !strings.Contains(err.Error(), "format version 3 do not record which cells") {
		t.Errorf("merging a version 3 file: %v", err)
	}
	// It stays refused after a round trip through this version's format.
	ob, err := old.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var again Stats
	if err := again.UnmarshalBinary(ob); err != nil {
		t.Fatal(err)
	}
	if err := d.clonePtr().Merge(&again); !errors.As(err, &lg) {
		t.Errorf("a version 3 file saved again: %v", err)
	}
}

func (s *Stats) clonePtr() *Stats { c := s.clone(); return &c }

// legacyStats rewrites statistics b (of s) in format version 3: without
// the domain parts and the origin's version that end the payload.
func legacyStats(t *testing.T, b []byte, s *Stats) []byte {
	t.Helper()
	payload, _, err := unseal(b, statsMagic, "statistics", statsVersion)
	if err != nil {
		t.Fatal(err)
	}
	tail := 8 + 8
	for _, c := range s.cells {
		tail += 8 + 8 + len(c.Domain) + 8 + 8
	}
	// Version 3 plans lack the precision (8 bytes at the plan's end) and,
	// with a preprocessing, its Unnamed flag (8 bytes before it).
	var pe encoder
	s.plan.encode(&pe)
	cut := 8
	if s.plan.Config.Preprocessing != nil {
		cut += 8
	}
	plan3 := pe.b[:len(pe.b)-cut]
	rest := payload[len(pe.b) : len(payload)-tail]
	return seal(statsMagic, 3, append(append([]byte(nil), plan3...), rest...))
}
