package dica

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
)

// filesSource is an in-memory source of rows from several files whose
// reads cut the stream at given sizes, across file boundaries, as a
// multi-file CSV or Parquet reader may.
type filesSource struct {
	schema  dataset.Schema
	x, y    [][]float64
	dom     []string
	lab     []string
	file    []int
	reads   []int // the sizes of the reads, in turn; nil: as many rows as asked
	noFiles bool  // say nothing of the rows' files
}

// only returns the source of the rows of file f.
func (s *filesSource) only(f int) *filesSource {
	o := &filesSource{schema: s.schema}
	for i, g := range s.file {
		if g == f {
			o.x, o.dom, o.file = append(o.x, s.x[i]), append(o.dom, s.dom[i]), append(o.file, 0)
			if s.lab != nil {
				o.lab = append(o.lab, s.lab[i])
			}
			if s.y != nil {
				o.y = append(o.y, s.y[i])
			}
		}
	}
	return o
}

func (s *filesSource) Schema() dataset.Schema { return s.schema }

func (s *filesSource) Open(context.Context) (dataset.Reader, error) {
	return &filesReader{s: s}, nil
}

type filesReader struct {
	s         *filesSource
	pos, read int
	doms, cls dataset.Index
}

func (r *filesReader) Read(b *dataset.Block, max int) (int, error) {
	s := r.s
	if r.pos == len(s.x) {
		return 0, io.EOF
	}
	n := min(max, len(s.x)-r.pos)
	if len(s.reads) > 0 {
		n = min(n, s.reads[r.read%len(s.reads)])
		r.read++
	}
	t := len(s.schema.Targets)
	b.Reset(n, s.schema.D(), s.schema.Labelled, t)
	if !s.noFiles {
		b.ResetOrigins(n)
	}
	for i := range n {
		p := r.pos + i
		copy(b.Row(i), s.x[p])
		b.Domain[i] = r.doms.ID(s.dom[p])
		if s.schema.Labelled {
			b.Label[i] = r.cls.ID(s.lab[p])
		}
		if t > 0 {
			copy(b.Target[i*t:(i+1)*t], s.y[p])
		}
		if !s.noFiles {
			b.File[i], b.Event[i] = s.file[p], int64(p+1)
		}
	}
	b.Rows = n
	r.pos += n
	return n, nil
}

func (r *filesReader) Domains() []string { return r.doms.Names() }
func (r *filesReader) Classes() []string {
	if !r.s.schema.Labelled {
		return nil
	}
	return r.cls.Names()
}
func (r *filesReader) Close() error { return nil }

// newFilesSource returns rows of 3 features in files of the given sizes;
// the domains and classes are columns, so a domain's cells lie in several
// files; with targets the rows carry one real target instead of a label.
func newFilesSource(sizes []int, targets bool, seed uint64) *filesSource {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &filesSource{schema: dataset.Schema{Features: []string{"a", "b", "c"}, Labelled: !targets}}
	if targets {
		s.schema.Targets = []string{"y"}
	}
	for f, n := range sizes {
		for range n {
			g := rng.IntN(4)
			x := []float64{rng.NormFloat64() + float64(g)/3, rng.NormFloat64() * 2, rng.ExpFloat64()}
			s.x, s.dom, s.file = append(s.x, x), append(s.dom, fmt.Sprint("d", g)), append(s.file, f)
			if targets {
				s.y = append(s.y, []float64{x[0] - x[1] + 0.1*rng.NormFloat64()})
			} else {
				s.lab = append(s.lab, fmt.Sprint("c", rng.IntN(3)))
			}
		}
	}
	return s
}

// sumBits returns every sum of the statistics, as bits, domains and
// classes by name.
func sumBits(s *Stats) map[string][]uint64 {
	out := map[string][]uint64{"n": {uint64(s.acc.n)}}
	bitsOf := func(v []float64) []uint64 {
		b := make([]uint64, len(v))
		for i, x := range v {
			b[i] = math.Float64bits(x)
		}
		return b
	}
	for i, name := range s.Domains {
		if i < len(s.acc.domCount) && s.acc.domCount[i] > 0 {
			out["domain "+name] = append([]uint64{uint64(s.acc.domCount[i])}, bitsOf(s.acc.domSum[i])...)
		}
	}
	for i, name := range s.Classes {
		if i < len(s.acc.clsCount) && s.acc.clsCount[i] > 0 {
			out["class "+name] = append([]uint64{uint64(s.acc.clsCount[i])}, bitsOf(s.acc.clsSum[i])...)
		}
	}
	out["psi"] = bitsOf(s.acc.sumPsi)
	out["psipsi"] = bitsOf(s.acc.sumPsiPsi)
	out["phipsi"] = bitsOf(s.acc.sumPhiPsi)
	out["gram"] = bitsOf(s.acc.gramSum)
	return out
}

// TestAccumulateFileOrder checks the reduction order of Accumulate: the
// statistics of a source of several files equal, bit for bit, the left
// fold (Merge into a zero Stats, in file order) of the statistics of each
// file accumulated alone, whatever the number of workers and however the
// source's reads cut the rows; and they differ from the sums of the same
// rows taken as one file, so the data are such that the order shows.
func TestAccumulateFileOrder(t *testing.T) {
	ctx := context.Background()
	sizes := []int{300, 1, 128, 517, 64}
	for _, tc := range []struct {
		name    string
		targets bool
		cfg     Config
	}{
		{"dica", false, Config{Method: DICA, Rank: 25, Sigma: 1.5, Seed: 3}},
		{"udica gram", false, Config{Method: UDICA, Rank: 25, Sigma: 1.5, Seed: 3}},
		{"regression", true, Config{Method: DICA, Rank: 25, Sigma: 1.5, Lambda: 0.1, Seed: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newFilesSource(sizes, tc.targets, 5)
			cfg := tc.cfg
			cfg.BlockRows, cfg.Workers = 64, 1
			p, err := NewPlan(ctx, src, cfg)
			require.NoError(t, err)

			var fold Stats
			for f := range sizes {
				st, err := p.Accumulate(ctx, src.only(f))
				require.NoError(t, err)
				require.NoError(t, fold.Merge(st))
			}
			want := sumBits(&fold)
			require.Equal(t, int64(len(src.x)), fold.N())

			for _, reads := range [][]int{nil, {37, 5, 200, 64, 1, 90}, {1000}} {
				for _, workers := range []int{1, 4} {
					s := *src
					s.reads = reads
					q := *p
					q.Config.Workers = workers
					got, err := q.Accumulate(ctx, &s)
					require.NoError(t, err)
					require.Equal(t, want, sumBits(got), "reads %v, %d workers", reads, workers)
				}
			}

			// The same rows as one file are summed in another order.
			flat := *src
			flat.noFiles = true
			one, err := p.Accumulate(ctx, &flat)
			require.NoError(t, err)
			key := "gram"
			if !p.Config.needsGram() {
				key = "domain d0"
			}
			require.NotEqual(t, want[key], sumBits(one)[key], "the order of the sums does not show in these data")
		})
	}
}

// TestFileBlocks checks the blocks the pass reads: at most BlockRows rows
// of one file, cut from each file's first row, every row once and in
// order, whatever the reads of the source.
func TestFileBlocks(t *testing.T) {
	ctx := context.Background()
	sizes := []int{10, 1, 0, 7, 16}
	src := newFilesSource(sizes, false, 9)
	for _, reads := range [][]int{nil, {3}, {5, 1, 11}, {100}} {
		s := *src
		s.reads = reads
		r0, err := s.Open(ctx)
		require.NoError(t, err)
		r := newFileBlocks(r0)
		var b dataset.Block
		var got [][2]int // file, rows of each block
		row := 0
		for {
			n, err := r.Read(&b, 4)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.Equal(t, n, b.Rows)
			require.True(t, b.HasOrigins())
			for i := range n {
				require.Equal(t, src.file[row], b.File[i], "row %d", row)
				require.Equal(t, int64(row+1), b.Event[i])
				require.Equal(t, src.x[row], b.Row(i))
				require.Equal(t, src.dom[row], r.Domains()[b.Domain[i]])
				require.Equal(t, src.lab[row], r.Classes()[b.Label[i]])
				row++
			}
			got = append(got, [2]int{b.File[0], n})
		}
		require.Equal(t, len(src.x), row)
		require.Equal(t, [][2]int{{0, 4}, {0, 4}, {0, 2}, {1, 1}, {3, 4}, {3, 3}, {4, 4}, {4, 4}, {4, 4}, {4, 4}}, got, "reads %v", reads)
		_, err = r.Read(&b, 4)
		require.ErrorIs(t, err, io.EOF)
	}
}

// BenchmarkAccumulateFiles measures the statistics pass (UDICA, m = 200,
// with the Gram sum) over 16 files of 6,250 cells of 3 features, read in
// blocks as large as asked (whole blocks, each file's last one running
// into the next file) and in reads of 997 cells (every block regrouped);
// it reports cells/s.
func BenchmarkAccumulateFiles(b *testing.B) {
	sizes := make([]int, 16)
	for i := range sizes {
		sizes[i] = 6250
	}
	src := newFilesSource(sizes, false, 3)
	ctx := context.Background()
	p, err := NewPlan(ctx, src, Config{Method: UDICA, Rank: 200, Sigma: 1.5, Seed: 1, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		reads []int
	}{{"whole", nil}, {"reads=997", []int{997}}} {
		b.Run(bc.name, func(b *testing.B) {
			s := *src
			s.reads = bc.reads
			for b.Loop() {
				if _, err := p.Accumulate(ctx, &s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(src.x)*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
