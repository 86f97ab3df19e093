package dica

import (
	"context"
	"errors"
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
