package dataset

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Sample reads a pass of src and returns at most max of the rows a
// learner can train on as a Dataset: its labelled rows (Block.Label >= 0)
// with their domains and classes, or for real targets all rows with their
// targets. It keeps all of them when there are no more than max, else the
// rows
// whose seeded hash of their index in the stream is smallest (a bottom-k
// sample: each labelled row has the same chance, the result depends on
// seed and the data only, not on how the stream is blocked), in stream
// order. Domains and classes are named as the reader names them; those
// without a sampled row are dropped (Compact). It returns an error when
// src has neither labels nor targets, or no labelled row.
func Sample(ctx context.Context, src Source, max int, seed uint64) (*Dataset, error) {
	if src == nil || ctx == nil {
		return nil, errors.New("dataset: Sample needs a context and a source")
	}
	if max < 1 {
		return nil, fmt.Errorf("dataset: Sample of at most %d rows", max)
	}
	sc := src.Schema()
	t := len(sc.Targets)
	if !sc.Labelled && t == 0 {
		return nil, errors.New("dataset: the data has no class labels and no targets")
	}
	r, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d := sc.D()
	h := &bottomK{}
	var b Block
	var index int64
	for {
		n, err := r.Read(&b, 4096)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			idx := index + int64(i)
			if sc.Labelled && b.Label[i] < 0 {
				continue
			}
			key := mix64(uint64(idx) ^ mix64(seed))
			if h.Len() == max && key >= (*h)[0].key {
				continue
			}
			row := sampled{key: key, index: idx, x: slices.Clone(b.Row(i)), dom: b.Domain[i], lab: NoLabel}
			if sc.Labelled {
				row.lab = b.Label[i]
			}
			if t > 0 {
				row.y = slices.Clone(b.Target[i*t : (i+1)*t])
			}
			if h.Len() == max {
				heap.Pop(h)
			}
			heap.Push(h, row)
		}
		index += int64(n)
	}
	if h.Len() == 0 {
		return nil, errors.New("dataset: no labelled row")
	}
	rows := []sampled(*h)
	slices.SortFunc(rows, func(a, b sampled) int {
		switch {
		case a.index < b.index:
			return -1
		case a.index > b.index:
			return 1
		}
		return 0
	})
	x := mat.NewDense(len(rows), d, nil)
	ds := &Dataset{X: x, Features: sc.Features, Domain: make([]int, len(rows)), DomainNames: slices.Clone(r.Domains())}
	if sc.Labelled {
		ds.Label, ds.ClassNames = make([]int, len(rows)), slices.Clone(r.Classes())
	}
	if t > 0 {
		ds.Target, ds.TargetNames = mat.NewDense(len(rows), t, nil), sc.Targets
	}
	for i, s := range rows {
		x.SetRow(i, s.x)
		ds.Domain[i] = s.dom
		if sc.Labelled {
			ds.Label[i] = s.lab
		}
		if t > 0 {
			ds.Target.SetRow(i, s.y)
		}
	}
	ds.Compact()
	return ds, ds.Validate()
}

// sampled is a row kept by SampleLabelled.
type sampled struct {
	key      uint64
	index    int64
	x, y     []float64
	dom, lab int
}

// bottomK is a max-heap on key: the row with the largest key is first.
type bottomK []sampled

func (h bottomK) Len() int           { return len(h) }
func (h bottomK) Less(i, j int) bool { return h[i].key > h[j].key }
func (h bottomK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *bottomK) Push(x any)        { *h = append(*h, x.(sampled)) }
func (h *bottomK) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mix64 is the finalizer of SplitMix64: a bijection of 64-bit words whose
// output bits depend on every input bit.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
