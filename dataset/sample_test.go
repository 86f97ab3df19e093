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

// skimSource is a source that also skims and bounds its pass's bytes, as
// the file readers do.
type skimSource struct{ Source }

func (skimSource) Skim(context.Context, func(int64) bool, func(x, y []float64) error) (int64, error) {
	return 42, nil
}
func (skimSource) PassBytes() int64 { return 7 }

// TestSamplerTee checks that a Sampler fed by a pass that another reader
// makes through Tee, in blocks of any size, draws the rows Sample draws;
// that passes that stop early give ErrNoPass and later passes are not
// sampled once one has ended; and that Tee keeps Skimmer and PassBytes.
func TestSamplerTee(t *testing.T) {
	n := 1000
	x := mat.NewDense(n, 2, nil)
	dom, lab := make([]int, n), make([]int, n)
	for i := range n {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, float64(-i))
		dom[i] = i / 300
		lab[i] = i % 4
		if i%7 == 0 {
			lab[i] = NoLabel
		}
	}
	ds := &Dataset{X: x, Domain: dom, DomainNames: []string{"a", "b", "c", "d"}, Label: lab, ClassNames: []string{"p", "q", "r", "s"}}
	ctx := context.Background()
	want, err := Sample(ctx, ds.Source(), 150, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want.N() != 150 {
		t.Fatalf("Sample kept %d rows, want 150", want.N())
	}
	read := func(src Source, block, stop int) {
		r, err := src.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var b Block
		seen := 0
		for stop < 0 || seen < stop {
			k, err := r.Read(&b, block)
			seen += k
			if err != nil {
				return
			}
		}
	}
	for _, block := range []int{1, 13, 4096} {
		s, err := NewSampler(ds.Source().Schema(), 150, 3)
		if err != nil {
			t.Fatal(err)
		}
		src := s.Tee(ds.Source())
		read(src, block, 500) // stopped halfway: not a sample
		if _, err := s.Dataset(); err != ErrNoPass {
			t.Fatalf("block %d: after a partial pass, Dataset gives %v, want ErrNoPass", block, err)
		}
		read(src, block, -1)
		got, err := s.Dataset()
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got.X, want.X) || !slices.Equal(got.Label, want.Label) || !slices.Equal(got.Domain, want.Domain) ||
			!slices.Equal(got.ClassNames, want.ClassNames) || !slices.Equal(got.DomainNames, want.DomainNames) {
			t.Fatalf("block %d: the tee's sample differs from Sample's", block)
		}
		if _, ok := src.(*teeSource); !ok {
			t.Fatalf("block %d: Tee of a plain source is %T", block, src)
		}
	}
	s, _ := NewSampler(ds.Source().Schema(), 150, 3)
	src := s.Tee(skimSource{ds.Source()})
	sk, ok := src.(Skimmer)
	pb, ok2 := src.(interface{ PassBytes() int64 })
	if !ok || !ok2 {
		t.Fatalf("Tee dropped Skimmer (%v) or PassBytes (%v)", ok, ok2)
	}
	if k, _ := sk.Skim(ctx, nil, nil); k != 42 || pb.PassBytes() != 7 {
		t.Fatal("Tee's Skim or PassBytes is not the source's")
	}
	if _, err := NewSampler(Schema{Features: []string{"v"}}, 10, 1); err == nil {
		t.Error("NewSampler accepted a schema without labels or targets")
	}
	if _, err := NewSampler(ds.Source().Schema(), 0, 1); err == nil {
		t.Error("NewSampler accepted max = 0")
	}
	if _, err := (*Sampler)(nil).Dataset(); err == nil {
		t.Error("a nil Sampler gave a data set")
	}
}
