package parquetio

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	apq "github.com/apache/arrow-go/v18/parquet"
	afile "github.com/apache/arrow-go/v18/parquet/file"
	aschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// columnsFixture is a table of every kind of column, as dica writes its
// outputs: the domain, the label, the source file and row number of each
// cell, two channels, a component and a confidence. The names of the Text
// columns grow over the rows (as a dataset.Reader's do). Values include
// signed zeros, subnormals and extremes, to be kept bit for bit.
type columnsFixture struct {
	n                 int
	domain, label     []int    // codes
	domains, classes  []string // all names, in order of first use
	file              []int
	files             []string
	event             []int64
	floats            []float64 // n x 4: CD3, CD19, DICA1, confidence
	firstDom, firstCl []int     // the number of names known after row i
}

var fixtureColumns = []Column{
	{"domain", Text}, {"CD3", Float64}, {"label", Text}, {"event", Int64},
	{"CD19", Float64}, {"file", Text}, {"DICA1", Float64}, {"confidence", Float64},
}

func newColumnsFixture(n int) *columnsFixture {
	rng := rand.New(rand.NewPCG(5, 6))
	f := &columnsFixture{n: n, files: []string{"a.csv", "b.csv"}}
	special := []float64{0, math.Copysign(0, -1), 5e-324, -math.MaxFloat64, math.MaxFloat64, 1.0 / 3}
	for i := 0; i < n; i++ {
		// Domain "d0", "d1", ... appear one after another; labels at random.
		g := min(i/(n/5+1), rng.IntN(i/(n/5+1)+1))
		for len(f.domains) <= g {
			f.domains = append(f.domains, "d"+strconv.Itoa(len(f.domains)))
		}
		c := rng.IntN(len(f.classes) + 1)
		if c == len(f.classes) {
			f.classes = append(f.classes, "pop"+strconv.Itoa(c))
		}
		f.domain, f.label = append(f.domain, g), append(f.label, c)
		f.firstDom, f.firstCl = append(f.firstDom, len(f.domains)), append(f.firstCl, len(f.classes))
		f.file = append(f.file, i%2)
		f.event = append(f.event, int64(i/2+1)+int64(i%3)<<40)
		for j := 0; j < 4; j++ {
			v := rng.NormFloat64() * 1e3
			if rng.IntN(10) == 0 {
				v = special[rng.IntN(len(special))]
			}
			f.floats = append(f.floats, v)
		}
	}
	return f
}

// rows returns rows [lo, hi) as a batch, with the names known by then.
func (f *columnsFixture) rows(lo, hi int) *Rows {
	nd, nc := 0, 0
	if hi > 0 {
		nd, nc = f.firstDom[hi-1], f.firstCl[hi-1]
	}
	return &Rows{N: hi - lo,
		Codes:  [][]int{f.domain[lo:hi], f.label[lo:hi], f.file[lo:hi]},
		Names:  [][]string{f.domains[:nd], f.classes[:nc], f.files},
		Ints:   [][]int64{f.event[lo:hi]},
		Floats: f.floats[lo*4 : hi*4]}
}

// arrowColumns reads a file with Apache Arrow's reader: for each column its
// physical and logical type, and its values (float64, int64 or string);
// and the rows of each row group, and the footer's created_by.
type arrowFile struct {
	names     []string
	physical  map[string]apq.Type
	logical   map[string]aschema.LogicalType
	floats    map[string][]float64
	ints      map[string][]int64
	strs      map[string][]string
	groupRows []int64
	createdBy string
	meta      map[string]string
}

func readArrowFile(t testing.TB, path string) *arrowFile {
	t.Helper()
	r, err := afile.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer r.Close()
	md := r.MetaData()
	a := &arrowFile{physical: map[string]apq.Type{}, logical: map[string]aschema.LogicalType{}, floats: map[string][]float64{},
		ints: map[string][]int64{}, strs: map[string][]string{}, createdBy: md.GetCreatedBy(), meta: map[string]string{}}
	for _, kv := range md.KeyValueMetadata() {
		a.meta[kv.Key] = kv.GetValue()
	}
	sc := md.Schema
	for j := 0; j < sc.NumColumns(); j++ {
		c := sc.Column(j)
		a.names = append(a.names, c.Name())
		a.physical[c.Name()], a.logical[c.Name()] = c.PhysicalType(), c.LogicalType()
		require.Equal(t, int16(0), c.MaxDefinitionLevel(), "column %s is required", c.Name())
	}
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := r.RowGroup(g)
		a.groupRows = append(a.groupRows, rg.NumRows())
		for j, name := range a.names {
			cr, err := rg.Column(j)
			require.NoError(t, err)
			switch cr := cr.(type) {
			case *afile.Float64ColumnChunkReader:
				buf := make([]float64, 1000)
				for cr.HasNext() {
					n, _, err := cr.ReadBatch(int64(len(buf)), buf, nil, nil)
					require.NoError(t, err)
					a.floats[name] = append(a.floats[name], buf[:n]...)
				}
			case *afile.Int64ColumnChunkReader:
				buf := make([]int64, 1000)
				for cr.HasNext() {
					n, _, err := cr.ReadBatch(int64(len(buf)), buf, nil, nil)
					require.NoError(t, err)
					a.ints[name] = append(a.ints[name], buf[:n]...)
				}
			case *afile.ByteArrayColumnChunkReader:
				buf := make([]apq.ByteArray, 1000)
				for cr.HasNext() {
					n, _, err := cr.ReadBatch(int64(len(buf)), buf, nil, nil)
					require.NoError(t, err)
					for _, b := range buf[:n] {
						a.strs[name] = append(a.strs[name], string(b))
					}
				}
			default:
				t.Fatalf("column %s: unexpected reader %T", name, cr)
			}
		}
	}
	return a
}

// TestWriteColumns: a file laid out by Columns and written by Write in
// batches of any size (none, one row, many row groups at once) has exactly
// those columns, in order, with the Parquet types of their kinds; Apache
// Arrow's reader and this package's Source read back every value bit for
// bit; row groups hold RowGroupRows rows whatever the batches.
func TestWriteColumns(t *testing.T) {
	const n = 2345
	f := newColumnsFixture(n)
	for _, tc := range []struct {
		name    string
		batches []int // batch sizes, cycled
		group   int
		comp    string
	}{
		{"one batch", []int{n}, 0, ""},
		{"batches of 1, 0, 37, 700 in groups of 500", []int{1, 0, 37, 700}, 500, "zstd"},
		{"batches of 3 in groups of 1000", []int{3}, 1000, "none"},
		{"groups of 1", []int{n}, 1, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cells.parquet")
			w, err := Create(path, WriterOptions{Columns: fixtureColumns, RowGroupRows: tc.group, Compression: tc.comp,
				Metadata: map[string]string{"dica.layout": `{"columns":8}`}})
			require.NoError(t, err)
			defer w.Abort()
			for lo, k := 0, 0; lo < n; k++ {
				hi := min(n, lo+tc.batches[k%len(tc.batches)])
				require.NoError(t, w.Write(f.rows(lo, hi)))
				lo = hi
			}
			require.Equal(t, int64(n), w.Rows())
			require.NoError(t, w.Commit())

			a := readArrowFile(t, path)
			require.Equal(t, []string{"domain", "CD3", "label", "event", "CD19", "file", "DICA1", "confidence"}, a.names)
			for _, c := range fixtureColumns {
				switch c.Kind {
				case Text:
					require.Equal(t, apq.Types.ByteArray, a.physical[c.Name], c.Name)
					require.True(t, a.logical[c.Name].Equals(aschema.StringLogicalType{}), "%s: %v", c.Name, a.logical[c.Name])
				case Int64:
					require.Equal(t, apq.Types.Int64, a.physical[c.Name], c.Name)
					require.True(t, a.logical[c.Name].Equals(aschema.NewIntLogicalType(64, true)), "%s: %v", c.Name, a.logical[c.Name])
				case Float64:
					require.Equal(t, apq.Types.Double, a.physical[c.Name], c.Name)
					require.True(t, a.logical[c.Name].Equals(aschema.NoLogicalType{}), "%s: %v", c.Name, a.logical[c.Name])
				}
			}
			group := tc.group
			if group == 0 {
				group = DefaultRowGroupRows
			}
			var wantGroups []int64
			for lo := 0; lo < n; lo += group {
				wantGroups = append(wantGroups, int64(min(group, n-lo)))
			}
			require.Equal(t, wantGroups, a.groupRows)
			require.Equal(t, "dica "+moduleVersion(), a.createdBy)
			require.Equal(t, map[string]string{"dica.layout": `{"columns":8}`}, a.meta)
			for i := 0; i < n; i++ {
				require.Equal(t, f.domains[f.domain[i]], a.strs["domain"][i], "row %d", i)
				require.Equal(t, f.classes[f.label[i]], a.strs["label"][i], "row %d", i)
				require.Equal(t, f.files[f.file[i]], a.strs["file"][i], "row %d", i)
				require.Equal(t, f.event[i], a.ints["event"][i], "row %d", i)
				for j, c := range []string{"CD3", "CD19", "DICA1", "confidence"} {
					require.Equal(t, math.Float64bits(f.floats[i*4+j]), math.Float64bits(a.floats[c][i]), "row %d, %s", i, c)
				}
			}

			// The project's reader: the domain and label columns by name,
			// the floats and the int64 column as features.
			src, err := NewSource([]string{path}, Options{Domain: "domain", Label: "label", Features: []string{"confidence", "CD3", "CD19", "DICA1", "event"}})
			require.NoError(t, err)
			ds, err := dataset.Collect(context.Background(), src)
			require.NoError(t, err)
			require.Equal(t, n, ds.N())
			require.Equal(t, f.domains, ds.DomainNames)
			require.Equal(t, f.domain, ds.Domain)
			for i := 0; i < n; i++ {
				require.Equal(t, f.classes[f.label[i]], ds.ClassNames[ds.Label[i]], "row %d", i)
				want := []float64{f.floats[i*4+3], f.floats[i*4], f.floats[i*4+1], f.floats[i*4+2], float64(f.event[i])}
				for j, v := range want {
					require.Equal(t, math.Float64bits(v), math.Float64bits(ds.X.At(i, j)), "row %d, feature %d", i, j)
				}
			}
			// The int64 column as the label: its decimal text.
			src, err = NewSource([]string{path}, Options{Domain: "file", Label: "event", Features: []string{"CD3"}})
			require.NoError(t, err)
			ds, err = dataset.Collect(context.Background(), src)
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				require.Equal(t, strconv.FormatInt(f.event[i], 10), ds.ClassNames[ds.Label[i]], "row %d", i)
				require.Equal(t, f.files[f.file[i]], ds.DomainNames[ds.Domain[i]], "row %d", i)
			}
		})
	}
}

// TestWriteBlockAndWriteAgree: the layout of Vars and Components written by
// WriteBlock is the layout of Columns (domain, label, channels, components)
// written by Write: the two files are the same, byte for byte.
func TestWriteBlockAndWriteAgree(t *testing.T) {
	blk, z := benchBlock()
	dir := t.TempDir()
	vars, comps := benchNames("c", benchVars), benchNames("DICA", benchComps)
	w1, err := Create(filepath.Join(dir, "block.parquet"), WriterOptions{Vars: vars, Components: comps, RowGroupRows: 1000})
	require.NoError(t, err)
	cols := []Column{{"domain", Text}, {"label", Text}}
	for _, c := range append(append([]string{}, vars...), comps...) {
		cols = append(cols, Column{c, Float64})
	}
	w2, err := Create(filepath.Join(dir, "rows.parquet"), WriterOptions{Columns: cols, RowGroupRows: 1000})
	require.NoError(t, err)
	nf := benchVars + benchComps
	r := &Rows{N: benchRows, Codes: [][]int{blk.Domain, blk.Label}, Names: [][]string{benchDomains, benchClasses}, Floats: make([]float64, benchRows*nf)}
	for i := 0; i < benchRows; i++ {
		copy(r.Floats[i*nf:], blk.Row(i))
		copy(r.Floats[i*nf+benchVars:], z.RawRowView(i))
	}
	for k := 0; k < 3; k++ {
		require.NoError(t, w1.WriteBlock(blk, z, benchDomains, benchClasses))
		require.NoError(t, w2.Write(r))
	}
	require.NoError(t, w1.Commit())
	require.NoError(t, w2.Commit())
	b1, err := os.ReadFile(w1.Path())
	require.NoError(t, err)
	b2, err := os.ReadFile(w2.Path())
	require.NoError(t, err)
	require.Equal(t, b1, b2)
}

// TestWriteErrors: what a caller can get wrong in Create and Write is an
// error saying what and where (the row of the file, 0-based, and the
// column); nothing of a bad batch is
// written, the writer then refuses more, and Commit leaves the destination
// as it was.
func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o.parquet")
	require.NoError(t, os.WriteFile(p, []byte("previous"), 0o666))
	for _, tc := range []struct {
		name string
		o    WriterOptions
		want string
	}{
		{"columns and vars", WriterOptions{Columns: []Column{{"a", Float64}}, Vars: []string{"b"}}, "Columns with Vars or Components"},
		{"columns and components", WriterOptions{Columns: []Column{{"a", Float64}}, Components: []string{"b"}}, "Columns with Vars or Components"},
		{"empty columns", WriterOptions{Columns: []Column{}}, "Columns is empty"},
		{"no name", WriterOptions{Columns: []Column{{"a", Float64}, {"", Text}}}, "column 2 of WriterOptions.Columns has no name"},
		{"no kind", WriterOptions{Columns: []Column{{"a", 0}}}, `column "a": kind ColumnKind(0)`},
		{"twice", WriterOptions{Columns: []Column{{"a", Float64}, {"a", Text}}}, `"a" appears twice`},
	} {
		_, err := Create(p, tc.o)
		require.ErrorContains(t, err, tc.want, tc.name)
	}

	cols := []Column{{"g", Text}, {"x", Float64}, {"id", Int64}, {"y", Float64}}
	good := func() *Rows {
		return &Rows{N: 2, Codes: [][]int{{0, 1}}, Names: [][]string{{"a", "b"}}, Ints: [][]int64{{7, 8}}, Floats: []float64{1, 2, 3, 4}}
	}
	for _, tc := range []struct {
		name string
		edit func(r *Rows)
		want string
	}{
		{"negative N", func(r *Rows) { r.N = -1 }, "Rows.N is -1"},
		{"no codes", func(r *Rows) { r.Codes = nil }, "rows with 0 code and 1 name lists and 1 integer columns; the file has 1 text and 1 int64 columns"},
		{"no ints", func(r *Rows) { r.Ints = nil }, "0 integer columns"},
		{"floats short", func(r *Rows) { r.Floats = r.Floats[:3] }, "3 float values for 2 rows; the file has 2 float64 columns, want 4 values"},
		{"codes short", func(r *Rows) { r.Codes[0] = r.Codes[0][:1] }, `column "g": 1 codes for 2 rows`},
		{"ints long", func(r *Rows) { r.Ints[0] = append(r.Ints[0], 9) }, `column "id": 3 values for 2 rows`},
		{"code too large", func(r *Rows) { r.Codes[0][1] = 2 }, `row 3 (0-based), column "g": code 2 out of range of 2 names`},
		{"negative code", func(r *Rows) { r.Codes[0][0] = -1 }, `row 2 (0-based), column "g": code -1 out of range of 2 names`},
		{"NaN", func(r *Rows) { r.Floats[3] = math.NaN() }, `row 3 (0-based), column "y": value NaN is not finite`},
		{"first in row order", func(r *Rows) { r.Floats[3], r.Floats[2] = math.Inf(-1), math.Inf(1) }, `row 3 (0-based), column "x": value +Inf is not finite`},
		{"first row wins", func(r *Rows) { r.Floats[1], r.Codes[0][1] = math.Inf(1), 5 }, `row 2 (0-based), column "y": value +Inf is not finite`},
		{"code before float in a row", func(r *Rows) { r.Floats[2], r.Codes[0][1] = math.NaN(), 5 }, `row 3 (0-based), column "g": code 5`},
		{"nil", nil, "nil rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(p, WriterOptions{Columns: cols})
			require.NoError(t, err)
			defer w.Abort()
			require.NoError(t, w.Write(good()))
			var r *Rows
			if tc.edit != nil {
				r = good()
				tc.edit(r)
			}
			err = w.Write(r)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, int64(2), w.Rows(), "nothing of a bad batch is written")
			require.ErrorIs(t, w.Write(good()), err, "the writer keeps its error")
			require.ErrorIs(t, w.Commit(), err)
			got, _ := os.ReadFile(p)
			require.Equal(t, "previous", string(got))
		})
	}

	// The names may grow but not change.
	w, err := Create(p, WriterOptions{Columns: cols})
	require.NoError(t, err)
	require.NoError(t, w.Write(good()))
	r := good()
	r.Names[0] = []string{"a", "b", "c"}
	r.Codes[0] = []int{2, 0}
	require.NoError(t, w.Write(r))
	r.Names[0] = []string{"a", "c"}
	r.Codes[0] = []int{0, 0}
	require.ErrorContains(t, w.Write(r), `column "g": the names changed between batches (they may only grow)`)
	w.Abort()

	// Write and WriteBlock each take their own layout.
	w, err = Create(p, WriterOptions{Columns: cols})
	require.NoError(t, err)
	require.ErrorContains(t, w.WriteBlock(&dataset.Block{Rows: 1, D: 1, X: []float64{1}, Domain: []int{0}}, nil, []string{"a"}, nil), "use Write")
	w.Abort()
	w, err = Create(p, WriterOptions{Vars: []string{"x"}})
	require.NoError(t, err)
	require.ErrorContains(t, w.Write(good()), "use WriteBlock")
	require.ErrorContains(t, w.Commit(), "use WriteBlock")
	blk := &dataset.Block{Rows: 2, D: 1, X: []float64{1, 2}, Domain: []int{0, 0}}
	w, err = Create(p, WriterOptions{Vars: []string{"x"}})
	require.NoError(t, err)
	require.NoError(t, w.WriteBlock(blk, nil, []string{"a", "b"}, nil))
	require.ErrorContains(t, w.WriteBlock(blk, nil, []string{"b"}, nil), `column "domain": the names changed between batches`)
	w.Abort()
	w, err = Create(p, WriterOptions{Vars: []string{"x"}})
	require.NoError(t, err)
	blk.Domain[1] = 1
	require.ErrorContains(t, w.WriteBlock(blk, nil, []string{"a"}, nil), `row 1 (0-based), column "domain": code 1 out of range of 1 names`)
	w.Abort()
	got, _ := os.ReadFile(p)
	require.Equal(t, "previous", string(got))

	// A file with Columns and no rows is valid.
	w, err = Create(p, WriterOptions{Columns: cols})
	require.NoError(t, err)
	require.NoError(t, w.Write(&Rows{Codes: [][]int{nil}, Names: [][]string{nil}, Ints: [][]int64{nil}}))
	require.NoError(t, w.Commit())
	a := readArrowFile(t, p)
	require.Equal(t, []string{"g", "x", "id", "y"}, a.names)
	require.Empty(t, a.floats["x"])
	ents, _ := os.ReadDir(dir)
	require.Len(t, ents, 1, "no temporary file left")
}

// TestVersionOf: the version in created_by is the module's, from the build
// information of the program, as the main module or a dependency (or its
// replacement), and "devel" when unknown.
func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.3.0"}}, "v0.3.0"},
		{debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "devel"},
		{debug.BuildInfo{Main: debug.Module{Path: modulePath}}, "devel"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}, Deps: []*debug.Module{
			{Path: "gonum.org/v1/gonum", Version: "v0.16.0"}, {Path: modulePath, Version: "v0.4.1-0.20260101000000-abcdef012345"}}}, "v0.4.1-0.20260101000000-abcdef012345"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}, Deps: []*debug.Module{
			{Path: modulePath, Version: "v0.3.0", Replace: &debug.Module{Path: "../dica"}}}}, "devel"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}}, "devel"},
	} {
		require.Equal(t, tc.want, versionOf(&tc.bi))
	}
	v := moduleVersion()
	require.True(t, v == "devel" || v[0] == 'v', v)
}

// TestWriteBlockLegacy: WriteBlock still writes its layout with the new
// created_by and metadata, read back by Arrow.
func TestWriteBlockLegacy(t *testing.T) {
	p := filepath.Join(t.TempDir(), "o.parquet")
	w, err := Create(p, WriterOptions{Vars: []string{"x", "y"}, Components: []string{"DICA1"}, Metadata: map[string]string{"k": "v"}})
	require.NoError(t, err)
	blk := &dataset.Block{Rows: 2, D: 2, X: []float64{1, 2, 3, 4}, Domain: []int{1, 0}, Label: []int{0, 0}}
	require.NoError(t, w.WriteBlock(blk, mat.NewDense(2, 1, []float64{-1, -2}), []string{"p", "q"}, []string{"T"}))
	require.NoError(t, w.Commit())
	a := readArrowFile(t, p)
	require.Equal(t, []string{"domain", "label", "x", "y", "DICA1"}, a.names)
	require.Equal(t, []string{"q", "p"}, a.strs["domain"])
	require.Equal(t, []string{"T", "T"}, a.strs["label"])
	require.Equal(t, []float64{1, 3}, a.floats["x"])
	require.Equal(t, []float64{2, 4}, a.floats["y"])
	require.Equal(t, []float64{-1, -2}, a.floats["DICA1"])
	require.Equal(t, "dica "+moduleVersion(), a.createdBy)
	require.Equal(t, map[string]string{"k": "v"}, a.meta)
}
