package dataset

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Sample reads a pass of src and returns at most max of the rows a
// learner can train on as a Dataset: its labelled rows (Block.Label >= 0)
// with their domains and classes, or for real targets all rows with their
// targets. It keeps all of them when there are no more than max, else the
// rows whose seeded hash of their index in the stream is smallest (a
// bottom-k sample: each labelled row has the same chance, the result
// depends on seed and the data only, not on how the stream is blocked), in
// stream order. Domains and classes are named as the reader names them;
// those without a sampled row are dropped (Compact). It returns an error
// when src has neither labels nor targets, or no labelled row.
//
// A Sampler draws the same sample from a pass that another reader makes.
func Sample(ctx context.Context, src Source, max int, seed uint64) (*Dataset, error) {
	if src == nil || ctx == nil {
		return nil, errors.New("dataset: Sample needs a context and a source")
	}
	s, err := NewSampler(src.Schema(), max, seed)
	if err != nil {
		return nil, err
	}
	r, err := s.Tee(src).Open(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b Block
	for {
		if _, err := r.Read(&b, 4096); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return s.Dataset()
}

// A Sampler draws the sample of Sample (the same rows for the same seed
// and max) from the first pass over a source that reaches its end, made
// by whoever reads the source Tee returns: a fit, for instance, so that
// the sample costs no pass of its own. It is safe for concurrent use.
type Sampler struct {
	sc   Schema
	max  int
	seed uint64

	mu   sync.Mutex
	ds   *Dataset // the sample of the first pass that ended
	err  error    // or its error
	done bool
}

// ErrNoPass is returned by Sampler.Dataset when no pass over the source
// has reached its end.
var ErrNoPass = errors.New("dataset: the sampler has seen no whole pass")

// NewSampler returns a sampler of at most max rows of a source with schema
// sc, seeded by seed. It returns an error when max < 1 or the schema has
// neither labels nor targets.
func NewSampler(sc Schema, max int, seed uint64) (*Sampler, error) {
	if max < 1 {
		return nil, fmt.Errorf("dataset: Sample of at most %d rows", max)
	}
	if !sc.Labelled && len(sc.Targets) == 0 {
		return nil, errors.New("dataset: the data has no class labels and no targets")
	}
	return &Sampler{sc: sc, max: max, seed: seed}, nil
}

// Dataset returns the sample of the first pass that reached the end of
// the stream, as Sample returns it, or ErrNoPass.
func (s *Sampler) Dataset() (*Dataset, error) {
	if s == nil {
		return nil, errors.New("dataset: nil Sampler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		return nil, ErrNoPass
	}
	return s.ds, s.err
}

// Tee returns src with every pass opened through it, until one reaches
// the end of the stream, offered to the sampler. Blocks are read as src
// gives them. The returned source implements Skimmer and PassBytes when
// src does (a Skim pass decodes few rows and is not sampled); it does not
// forward other optional interfaces (Sizer, RowAccess), so it hides the
// length of a source that knows it: sample such a source with Sample. A
// nil Sampler returns src.
func (s *Sampler) Tee(src Source) Source {
	if s == nil {
		return src
	}
	t := &teeSource{src: src, s: s}
	sk, isSk := src.(Skimmer)
	pb, isPB := src.(passByter)
	switch {
	case isSk && isPB:
		return struct {
			*teeSource
			Skimmer
			passByter
		}{t, sk, pb}
	case isSk:
		return struct {
			*teeSource
			Skimmer
		}{t, sk}
	case isPB:
		return struct {
			*teeSource
			passByter
		}{t, pb}
	}
	return t
}

// passByter is implemented by sources that bound the memory of a pass.
type passByter interface{ PassBytes() int64 }

// teeSource is a source whose passes feed a sampler.
type teeSource struct {
	src Source
	s   *Sampler
}

func (t *teeSource) Schema() Schema { return t.src.Schema() }

func (t *teeSource) Open(ctx context.Context) (Reader, error) {
	r, err := t.src.Open(ctx)
	if err != nil {
		return nil, err
	}
	t.s.mu.Lock()
	done := t.s.done
	t.s.mu.Unlock()
	if done {
		return r, nil
	}
	return &teeReader{Reader: r, s: t.s, d: t.src.Schema().D(), t: len(t.src.Schema().Targets), seed: mix64(t.s.seed)}, nil
}

// teeReader is one pass that feeds a sampler: its rows kept so far.
type teeReader struct {
	Reader
	s     *Sampler
	d, t  int
	seed  uint64 // mix64 of the sampler's seed
	h     bottomK
	index int64
	ended bool
}

func (r *teeReader) Read(b *Block, max int) (int, error) {
	n, err := r.Reader.Read(b, max)
	if r.ended {
		return n, err
	}
	s := r.s
	for i := 0; i < n; i++ {
		idx := r.index + int64(i)
		if s.sc.Labelled && b.Label[i] < 0 {
			continue
		}
		key := mix64(uint64(idx) ^ r.seed)
		if r.h.Len() == s.max && key >= r.h[0].key {
			continue
		}
		row := sampled{key: key, index: idx, x: slices.Clone(b.Row(i)), dom: b.Domain[i], lab: NoLabel}
		if s.sc.Labelled {
			row.lab = b.Label[i]
		}
		if r.t > 0 {
			row.y = slices.Clone(b.Target[i*r.t : (i+1)*r.t])
		}
		if r.h.Len() == s.max {
			heap.Pop(&r.h)
		}
		heap.Push(&r.h, row)
	}
	r.index += int64(n)
	if errors.Is(err, io.EOF) {
		r.ended = true
		ds, derr := r.dataset()
		r.h = nil
		s.mu.Lock()
		if !s.done {
			s.ds, s.err, s.done = ds, derr, true
		}
		s.mu.Unlock()
	}
	return n, err
}

// dataset returns the pass's sample in stream order.
func (r *teeReader) dataset() (*Dataset, error) {
	if r.h.Len() == 0 {
		return nil, errors.New("dataset: no labelled row")
	}
	sc := r.s.sc
	rows := []sampled(r.h)
	slices.SortFunc(rows, func(a, b sampled) int { return cmp.Compare(a.index, b.index) })
	x := mat.NewDense(len(rows), r.d, nil)
	ds := &Dataset{X: x, Features: sc.Features, Domain: make([]int, len(rows)), DomainNames: slices.Clone(r.Domains())}
	if sc.Labelled {
		ds.Label, ds.ClassNames = make([]int, len(rows)), slices.Clone(r.Classes())
	}
	if r.t > 0 {
		ds.Target, ds.TargetNames = mat.NewDense(len(rows), r.t, nil), sc.Targets
	}
	for i, s := range rows {
		x.SetRow(i, s.x)
		ds.Domain[i] = s.dom
		if sc.Labelled {
			ds.Label[i] = s.lab
		}
		if r.t > 0 {
			ds.Target.SetRow(i, s.y)
		}
	}
	ds.Compact()
	return ds, ds.Validate()
}

// sampled is a row kept by a Sampler.
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
