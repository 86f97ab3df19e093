package dataset

import (
	"context"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSample checks that Sample keeps the labelled rows
// only, all of them under the limit, and otherwise the max rows of
// smallest hash, in stream order, the same for every seed run.
func TestSample(t *testing.T) {
	n := 1000
	x := mat.NewDense(n, 1, nil)
	dom, lab := make([]int, n), make([]int, n)
	for i := range n {
		x.Set(i, 0, float64(i))
		dom[i] = i / 250
		lab[i] = i % 3
		if i%5 == 0 {
			lab[i] = NoLabel
		}
	}
	ds := &Dataset{X: x, Domain: dom, DomainNames: []string{"a", "b", "c", "d"}, Label: lab, ClassNames: []string{"p", "q", "r"}}
	ctx := context.Background()
	all, err := Sample(ctx, ds.Source(), n, 1)
	if err != nil {
		t.Fatal(err)
	}
	if all.N() != 800 {
		t.Fatalf("%d rows, want the 800 labelled", all.N())
	}
	for i := range all.N() {
		v := int(all.X.At(i, 0))
		if v%5 == 0 || all.ClassNames[all.Label[i]] != ds.ClassNames[v%3] || all.DomainNames[all.Domain[i]] != ds.DomainNames[v/250] {
			t.Fatalf("row %d holds row %d of the source with the wrong label or domain", i, v)
		}
	}
	// Under a limit: the rows of smallest hash, by brute force.
	type kv struct {
		key uint64
		v   int
	}
	var keys []kv
	for i := range n {
		if i%5 != 0 {
			keys = append(keys, kv{mix64(uint64(i) ^ mix64(7)), i})
		}
	}
	slices.SortFunc(keys, func(a, b kv) int {
		if a.key < b.key {
			return -1
		}
		return 1
	})
	var want []float64
	for _, k := range keys[:100] {
		want = append(want, float64(k.v))
	}
	slices.Sort(want)
	got, err := Sample(ctx, ds.Source(), 100, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.X.RawMatrix().Data, want) {
		t.Errorf("sample %v\nwant %v", got.X.RawMatrix().Data, want)
	}
	if _, err := Sample(ctx, (&Dataset{X: x, Domain: dom, DomainNames: ds.DomainNames}).Source(), 10, 1); err == nil {
		t.Error("no error without labels")
	}
}
