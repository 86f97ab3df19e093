package anndata

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/dataset"
)

// readStrings reads a whole 1-d string array of a store.
func readStrings(t testing.TB, store, name string) []string {
	t.Helper()
	a, err := zarr.OpenArray(os.DirFS(store), name, name, zarr.Limits{})
	require.NoError(t, err)
	require.Len(t, a.Shape, 1)
	var out []string
	for ci := int64(0); ci < a.NumChunks(0); ci++ {
		c, err := a.ReadChunk(zarr.Limits{}, ci)
		require.NoError(t, err)
		m := min(a.Chunks[0], a.Shape[0]-ci*a.Chunks[0])
		out = append(out, c.Strings[:m]...)
	}
	return out
}

// readAttrs reads the attributes of a group or array of a store.
func readAttrs(t testing.TB, store, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store, name, ".zattrs"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// cellsFixture is a stream of cells from two source files, each file a
// domain, with labels, the rows' origins (rows left out between them, as
// LabelsIgnore does), a predicted population whose names grow over the
// stream and a confidence.
type cellsFixture struct {
	n           int
	x           []float64 // n x 3
	domain      []int
	label       []int
	file        []int
	event       []int64
	pop         []int
	pops        []string // all population names, in order of first use
	popsKnown   []int    // the number of population names known after cell i
	conf        []float64
	sources     []string
	domains     []string
	classes     []string
	vars        []string
	components  int
	projections *mat.Dense // n x 2
}

func newCellsFixture(n int) *cellsFixture {
	rng := rand.New(rand.NewPCG(11, 12))
	f := &cellsFixture{n: n, sources: []string{"sample1", "sample2"}, domains: []string{"sample1", "sample2"},
		classes: []string{"T cell", "B cell"}, vars: []string{"CD3", "CD19", "CD45"}, components: 2,
		projections: mat.NewDense(n, 2, nil)}
	next := []int64{0, 0}
	for i := 0; i < n; i++ {
		g := rng.IntN(2)
		next[g] += 1 + int64(rng.IntN(2))
		f.domain, f.file, f.event = append(f.domain, g), append(f.file, g), append(f.event, next[g])
		f.label = append(f.label, rng.IntN(2))
		p := rng.IntN(len(f.pops) + 1)
		if p == len(f.pops) {
			f.pops = append(f.pops, "pop"+strconv.Itoa(p))
		}
		f.pop, f.popsKnown = append(f.pop, p), append(f.popsKnown, len(f.pops))
		f.conf = append(f.conf, rng.Float64())
		for j := 0; j < 3; j++ {
			f.x = append(f.x, rng.NormFloat64()*100)
		}
		f.projections.Set(i, 0, rng.NormFloat64())
		f.projections.Set(i, 1, rng.NormFloat64())
	}
	return f
}

// cells returns cells [lo, hi) with origins or not.
func (f *cellsFixture) cells(lo, hi int, origins bool) *Cells {
	b := &dataset.Block{Rows: hi - lo, D: 3, X: f.x[lo*3 : hi*3], Domain: f.domain[lo:hi], Label: f.label[lo:hi]}
	if origins {
		b.File, b.Event = f.file[lo:hi], f.event[lo:hi]
	}
	known := 0
	if hi > 0 {
		known = f.popsKnown[hi-1]
	}
	c := &Cells{Block: b, Domains: f.domains, Classes: f.classes,
		Obs: []ObsValues{{Codes: f.pop[lo:hi], Names: f.pops[:known]}, {Values: f.conf[lo:hi]}}}
	if hi > lo {
		c.Components = f.projections.Slice(lo, hi, 0, 2).(*mat.Dense)
	}
	return c
}

const (
	testLayout = `{"columns":[{"name":"CD3","role":"raw"},{"name":"population","role":"predicted"}]}`
	testPrep   = `{"transform":"asinh","cofactor":5}`
)

func (f *cellsFixture) options() WriterOptions {
	return WriterOptions{Vars: f.vars, Components: 2, ChunkRows: 64, Sources: f.sources,
		Obs:        []ObsColumn{{Name: "population", Categorical: true}, {Name: "confidence"}},
		VarColumns: []VarColumn{{Name: "preprocessing", Values: []string{"asinh", "asinh", "none"}}, {Name: "role", Values: []string{"raw", "raw", "input"}}},
		Uns:        &Uns{Method: "dica", Sigma: 2, Digest: "sha256:ab", Layout: testLayout, Preprocessing: testPrep}}
}

// write writes the fixture's cells in blocks of the sizes given (cycled).
func (f *cellsFixture) write(t testing.TB, store string, o WriterOptions, origins bool, blocks []int) {
	t.Helper()
	w, err := Create(store, o)
	require.NoError(t, err)
	defer w.Abort()
	for lo, k := 0, 0; lo < f.n; k++ {
		hi := min(f.n, lo+blocks[k%len(blocks)])
		require.NoError(t, w.WriteCells(f.cells(lo, hi, origins)))
		lo = hi
	}
	require.NoError(t, w.Commit())
}

// TestWriteCells: a store written by WriteCells names each cell by its
// source file and row ("sample1:10"), holds the extra categorical and
// numeric obs columns after domain and label, the var columns and the uns
// strings; the project's reader and ReadDicaUns read back the values
// written, bit for bit.
func TestWriteCells(t *testing.T) {
	const n = 1000
	f := newCellsFixture(n)
	store := filepath.Join(t.TempDir(), "cells.zarr")
	f.write(t, store, f.options(), true, []int{1, 0, 77, 300})

	names := readStrings(t, store, "obs/_index")
	require.Len(t, names, n)
	for i := 0; i < n; i++ {
		require.Equal(t, f.sources[f.file[i]]+":"+strconv.FormatInt(f.event[i], 10), names[i], "cell %d", i)
	}
	require.Equal(t, []any{"domain", "label", "population", "confidence"}, readAttrs(t, store, "obs")["column-order"])
	require.Equal(t, f.pops, readStrings(t, store, "obs/population/categories"))
	require.Equal(t, "categorical", readAttrs(t, store, "obs/population")["encoding-type"])
	require.Equal(t, []any{"preprocessing", "role"}, readAttrs(t, store, "var")["column-order"])
	require.Equal(t, []string{"asinh", "asinh", "none"}, readStrings(t, store, "var/preprocessing"))
	require.Equal(t, []string{"raw", "raw", "input"}, readStrings(t, store, "var/role"))
	require.Equal(t, f.vars, readStrings(t, store, "var/_index"))

	// The project's reader: the population as the label, the confidence
	// as a target, X and the domains.
	src, err := NewSource(store, Options{Domain: "domain", Label: "population"})
	require.NoError(t, err)
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, n, ds.N())
	for i := 0; i < n; i++ {
		require.Equal(t, f.domains[f.domain[i]], ds.DomainNames[ds.Domain[i]], "cell %d", i)
		require.Equal(t, f.pops[f.pop[i]], ds.ClassNames[ds.Label[i]], "cell %d", i)
		for j := 0; j < 3; j++ {
			require.Equal(t, math.Float64bits(f.x[i*3+j]), math.Float64bits(ds.X.At(i, j)), "cell %d", i)
		}
	}
	src, err = NewSource(store, Options{Target: []string{"confidence"}, Features: []string{"CD45"}})
	require.NoError(t, err)
	ds, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		require.Equal(t, math.Float64bits(f.conf[i]), math.Float64bits(ds.Target.At(i, 0)), "cell %d", i)
		require.Equal(t, f.x[i*3+2], ds.X.At(i, 0))
	}
	z, shape := readArray(t, store, "obsm/X_dica")
	require.Equal(t, []int64{n, 2}, shape)
	require.Equal(t, f.projections.RawMatrix().Data, z)

	uns, err := ReadDicaUns(store)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"method": "dica", "digest": "sha256:ab", "layout": testLayout, "preprocessing": testPrep}, uns)
}

// TestWriteCellsNames: without Sources, or with blocks that do not say
// where their rows came from, the cells are named "domain:k"; WriteBlock
// is WriteCells without extra columns.
func TestWriteCellsNames(t *testing.T) {
	const n = 300
	f := newCellsFixture(n)
	per := map[int]int{}
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, f.domains[f.domain[i]]+":"+strconv.Itoa(per[f.domain[i]]))
		per[f.domain[i]]++
	}
	dir := t.TempDir()
	o := f.options()
	o.Sources = nil
	f.write(t, filepath.Join(dir, "nosources.zarr"), o, true, []int{100})
	require.Equal(t, want, readStrings(t, filepath.Join(dir, "nosources.zarr"), "obs/_index"))
	f.write(t, filepath.Join(dir, "noorigins.zarr"), f.options(), false, []int{64})
	require.Equal(t, want, readStrings(t, filepath.Join(dir, "noorigins.zarr"), "obs/_index"))

	// WriteBlock with Sources and origins.
	store := filepath.Join(dir, "block.zarr")
	w, err := Create(store, WriterOptions{Vars: f.vars, Sources: []string{"a.fcs", "b.fcs"}})
	require.NoError(t, err)
	b := &dataset.Block{Rows: 3, D: 3, X: f.x[:9], Domain: []int{0, 1, 0}, File: []int{1, 0, 1}, Event: []int64{7, 1, 1 << 40}}
	require.NoError(t, w.WriteBlock(b, nil, []string{"d0", "d1"}, nil))
	require.NoError(t, w.Commit())
	require.Equal(t, []string{"b.fcs:7", "a.fcs:1", "b.fcs:1099511627776"}, readStrings(t, store, "obs/_index"))
	require.Equal(t, []any{"domain"}, readAttrs(t, store, "obs")["column-order"])
	require.Equal(t, []any{}, readAttrs(t, store, "var")["column-order"])
	uns, err := ReadDicaUns(store)
	require.NoError(t, err)
	require.Nil(t, uns, "no uns/dica")
}

// TestWriteCellsErrors: what a caller can get wrong about the extra
// columns, the sources and the uns texts is an error saying what, before
// anything is written; the destination is left as it was.
func TestWriteCellsErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "e.zarr")
	vars := []string{"a", "b"}
	for _, tc := range []struct {
		name string
		o    WriterOptions
		want string
	}{
		{"obs slash", WriterOptions{Obs: []ObsColumn{{Name: "a/b"}}}, `obs column "a/b": want a name without '/'`},
		{"obs empty", WriterOptions{Obs: []ObsColumn{{Name: ""}}}, `obs column "": want a name`},
		{"obs domain", WriterOptions{Obs: []ObsColumn{{Name: "domain"}}}, `obs column "domain": the name is taken`},
		{"obs twice", WriterOptions{Obs: []ObsColumn{{Name: "p"}, {Name: "p", Categorical: true}}}, `obs column "p": the name is taken`},
		{"obs target", WriterOptions{Obs: []ObsColumn{{Name: "age"}}, Targets: []string{"age"}}, `obs column "age" is also a target`},
		{"var count", WriterOptions{VarColumns: []VarColumn{{Name: "p", Values: []string{"x"}}}}, `var column "p" has 1 values for 2 channels`},
		{"var index", WriterOptions{VarColumns: []VarColumn{{Name: "_index", Values: []string{"x", "y"}}}}, `var column "_index": the name is taken`},
		{"var twice", WriterOptions{VarColumns: []VarColumn{{Name: "p", Values: []string{"x", "y"}}, {Name: "p", Values: []string{"x", "y"}}}}, `var column "p": the name is taken`},
		{"var dot", WriterOptions{VarColumns: []VarColumn{{Name: ".p", Values: []string{"x", "y"}}}}, `var column ".p"`},
		{"layout", WriterOptions{Uns: &Uns{Layout: "{columns"}}, "Uns.Layout is not valid JSON"},
		{"preprocessing", WriterOptions{Uns: &Uns{Preprocessing: "[1,"}}, "Uns.Preprocessing is not valid JSON"},
	} {
		tc.o.Vars = vars
		_, err := Create(p, tc.o)
		require.ErrorContains(t, err, tc.want, tc.name)
	}

	o := WriterOptions{Vars: vars, Sources: []string{"s1", "s2"}, Obs: []ObsColumn{{Name: "pop", Categorical: true}, {Name: "conf"}}}
	good := func() *Cells {
		return &Cells{Block: &dataset.Block{Rows: 2, D: 2, X: []float64{1, 2, 3, 4}, Domain: []int{0, 0}, File: []int{0, 1}, Event: []int64{1, 1}},
			Domains: []string{"d"}, Obs: []ObsValues{{Codes: []int{0, 1}, Names: []string{"T", "B"}}, {Values: []float64{0.5, 1}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(c *Cells) *Cells
		want string
	}{
		{"nil", func(*Cells) *Cells { return nil }, "nil cells"},
		{"nil block", func(c *Cells) *Cells { c.Block = nil; return c }, "nil block"},
		{"no obs", func(c *Cells) *Cells { c.Obs = nil; return c }, "0 obs columns of values; the store has 2"},
		{"values for categorical", func(c *Cells) *Cells { c.Obs[0].Values = []float64{1, 2}; return c }, `obs column "pop" is categorical: want 2 Codes`},
		{"short codes", func(c *Cells) *Cells { c.Obs[0].Codes = c.Obs[0].Codes[:1]; return c }, `obs column "pop" is categorical: want 2 Codes (and Names), have 1 codes`},
		{"codes for numeric", func(c *Cells) *Cells { c.Obs[1].Codes = []int{0, 0}; return c }, `obs column "conf" is numeric: want 2 Values`},
		{"long values", func(c *Cells) *Cells { c.Obs[1].Values = []float64{1, 2, 3}; return c }, `obs column "conf" is numeric: want 2 Values, have 3 values`},
		{"code out of range", func(c *Cells) *Cells { c.Obs[0].Codes[1] = 2; return c }, `cell 3 (0-based), obs column "pop": code 2 out of range of 2 names`},
		{"negative code", func(c *Cells) *Cells { c.Obs[0].Codes[0] = -1; return c }, `cell 2 (0-based), obs column "pop": code -1`},
		{"NaN", func(c *Cells) *Cells { c.Obs[1].Values[1] = math.NaN(); return c }, `cell 3 (0-based), obs column "conf": value NaN is not finite`},
		{"names changed", func(c *Cells) *Cells { c.Obs[0].Names = []string{"B", "T"}; return c }, `the names of obs column "pop" changed between blocks`},
		{"file out of range", func(c *Cells) *Cells { c.Block.File[1] = 2; return c }, "cell 3 (0-based): file index 2 out of range of 2 Sources"},
		{"row 0", func(c *Cells) *Cells { c.Block.Event[0] = 0; return c }, "cell 2 (0-based): row number 0 in s1; rows count from 1"},
		{"no origins", func(c *Cells) *Cells { c.Block.File, c.Block.Event = nil, nil; return c }, "a block with origins false (Block.File and Event) after blocks with origins true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(p, o)
			require.NoError(t, err)
			defer w.Abort()
			require.NoError(t, w.WriteCells(good()))
			err = w.WriteCells(tc.edit(good()))
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, int64(2), w.Rows())
			require.ErrorIs(t, w.WriteCells(good()), err, "the writer keeps its error")
			require.Error(t, w.Commit())
			_, err = os.Stat(p)
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}
	// WriteBlock needs the values of the extra columns.
	w, err := Create(p, o)
	require.NoError(t, err)
	require.ErrorContains(t, w.WriteBlock(good().Block, nil, []string{"d"}, nil), "give their values to WriteCells")
	w.Abort()
	// The default target names too are checked against the obs columns.
	w, err = Create(p, WriterOptions{Vars: vars, Obs: []ObsColumn{{Name: "y1"}}})
	require.NoError(t, err)
	c := good()
	c.Obs = c.Obs[1:]
	c.Block.T, c.Block.Target = 1, []float64{1, 2}
	require.ErrorContains(t, w.WriteCells(c), `obs column "y1" is also a target`)
	w.Abort()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "no temporary folder left")
}

// TestReadDicaUns: the strings under uns/dica of stores of any writer
// (fixed-width or vlen-utf8 scalars; numbers, arrays and groups left out);
// what is not a store, too many entries or strings too large are errors
// before the strings are read.
func TestReadDicaUns(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "s.zarr")
	w, err := Create(store, WriterOptions{Vars: []string{"a"}, Uns: &Uns{Method: "kpca", Rank: 5, Eigenvalues: []float64{1, 2}, Layout: `{"é":"✓"}`}})
	require.NoError(t, err)
	require.NoError(t, w.Commit())
	m, err := ReadDicaUns(store)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"method": "kpca", "layout": `{"é":"✓"}`}, m)

	// Other entries: a vlen-utf8 scalar, a |S scalar, a group, an empty
	// string.
	st := zarr.NewStore(store, nil)
	vlen := filepath.Join(store, "uns", "dica", "note")
	require.NoError(t, os.MkdirAll(vlen, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(vlen, ".zarray"), []byte(`{"zarr_format":2,"shape":[],"chunks":[],"dtype":"|O","compressor":null,"fill_value":null,"order":"C","filters":[{"id":"vlen-utf8"}]}`), 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(vlen, "0"), []byte{1, 0, 0, 0, 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}, 0o666))
	bs := filepath.Join(store, "uns", "dica", "bytes")
	require.NoError(t, os.MkdirAll(bs, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(bs, ".zarray"), []byte(`{"zarr_format":2,"shape":[],"chunks":[],"dtype":"|S4","compressor":null,"fill_value":"","order":"C","filters":null}`), 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(bs, "0"), []byte("ab\x00\x00"), 0o666))
	require.NoError(t, st.Group("uns/dica/nested", nil))
	require.NoError(t, st.Scalar("uns/dica/nested/inner", "x", nil))
	require.NoError(t, st.Scalar("uns/dica/empty", "", nil))
	require.NoError(t, st.Close())
	m, err = ReadDicaUns(store)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"method": "kpca", "layout": `{"é":"✓"}`, "note": "hello", "bytes": "ab", "empty": ""}, m)

	// The strings take, decoded and in the order of their names, 4 (bytes)
	// + 4 (empty) + 36 (layout, 9 runes) + 16 (method) + 13 (note, vlen)
	// = 73 bytes: under a bound of 73 they are read; under 72 the vlen one
	// does not decode in what is left; under 59 the bound is met before
	// method is read; under 20 the layout's metadata is refused.
	fsys := os.DirFS(store)
	m, err = readDicaUns(fsys, zarr.Limits{MaxChunkBytes: 73})
	require.NoError(t, err)
	require.Len(t, m, 5)
	_, err = readDicaUns(fsys, zarr.Limits{MaxChunkBytes: 72})
	require.ErrorContains(t, err, "array uns/dica/note: chunk 0: chunk decodes to more than 12 bytes")
	_, err = readDicaUns(fsys, zarr.Limits{MaxChunkBytes: 59})
	require.ErrorContains(t, err, "uns/dica: the strings take over 59 bytes")
	_, err = readDicaUns(fsys, zarr.Limits{MaxChunkBytes: 20})
	require.ErrorContains(t, err, "over the limit")
	// A vlen scalar whose chunk claims more than it holds.
	require.NoError(t, os.WriteFile(filepath.Join(vlen, "0"), append([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}, make([]byte, 100)...), 0o666))
	_, err = ReadDicaUns(store)
	require.ErrorContains(t, err, "truncated vlen-utf8 chunk")
	require.NoError(t, os.RemoveAll(vlen))
	// Too many entries.
	for i := 0; i <= maxUnsEntries; i++ {
		require.NoError(t, os.Mkdir(filepath.Join(store, "uns", "dica", "e"+strconv.Itoa(i)), 0o777))
	}
	_, err = ReadDicaUns(store)
	require.ErrorContains(t, err, "holds over 1024 entries")

	_, err = ReadDicaUns(filepath.Join(dir, "missing.zarr"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.h5ad"), []byte("HDF"), 0o666))
	_, err = ReadDicaUns(filepath.Join(dir, "x.h5ad"))
	require.ErrorContains(t, err, "not an AnnData Zarr store")
	_, err = ReadDicaUns(filepath.Join(store, "obs"))
	require.ErrorContains(t, err, `encoding-type "dataframe"; not an AnnData store`)
}
