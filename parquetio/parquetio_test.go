package parquetio

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	apq "github.com/apache/arrow-go/v18/parquet"
	acompress "github.com/apache/arrow-go/v18/parquet/compress"
	afile "github.com/apache/arrow-go/v18/parquet/file"
	aschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/tabletest"
)

var channels = tabletest.Channels

// fixture is this package's CSV fixture (see tabletest.WriteCSV).
var fixture = tabletest.CSV{Seed: 3, Stream: 5, PopStep: 5}

// arrowTable reads a whole file with the Apache Arrow Go implementation of
// Parquet (not the one this package ships): column names in order, and
// each column's values as float64 or string.
func arrowTable(t testing.TB, path string) (names []string, nums map[string][]float64, strs map[string][]string, rowGroups int) {
	t.Helper()
	r, err := afile.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer r.Close()
	sc := r.MetaData().Schema
	nums, strs = map[string][]float64{}, map[string][]string{}
	for j := 0; j < sc.NumColumns(); j++ {
		names = append(names, sc.Column(j).Name())
	}
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := r.RowGroup(g)
		for j := 0; j < sc.NumColumns(); j++ {
			cr, err := rg.Column(j)
			require.NoError(t, err)
			switch cr := cr.(type) {
			case *afile.Float64ColumnChunkReader:
				buf := make([]float64, 1000)
				for cr.HasNext() {
					n, _, err := cr.ReadBatch(int64(len(buf)), buf, nil, nil)
					require.NoError(t, err)
					nums[names[j]] = append(nums[names[j]], buf[:n]...)
				}
			case *afile.ByteArrayColumnChunkReader:
				buf := make([]apq.ByteArray, 1000)
				for cr.HasNext() {
					n, _, err := cr.ReadBatch(int64(len(buf)), buf, nil, nil)
					require.NoError(t, err)
					for _, b := range buf[:n] {
						strs[names[j]] = append(strs[names[j]], string(b))
					}
				}
			default:
				t.Fatalf("column %s: unexpected reader %T", names[j], cr)
			}
		}
	}
	return names, nums, strs, r.NumRowGroups()
}

// TestRoundTripCSV: CSV -> Parquet (this package) -> Apache Arrow's reader
// gives the CSV's values bit for bit, the columns in order, the domains and
// labels of every row; and this package's Source reads the file back to the
// same values.
func TestRoundTripCSV(t *testing.T) {
	dir := t.TempDir()
	files := tabletest.WriteCSV(t, dir, 1500, fixture)
	src, err := csvio.NewSource(files, csvio.Options{Label: "pop"})
	require.NoError(t, err)
	want, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	n := want.N()
	for _, tc := range []struct {
		name string
		o    WriterOptions
		rg   int // row groups expected
	}{
		{"snappy", WriterOptions{Vars: channels, Components: []string{"DICA1", "DICA2"}, Metadata: map[string]string{"dica.method": "dica"}}, 1},
		{"zstd, row groups of 1000", WriterOptions{Vars: channels, Components: []string{"DICA1", "DICA2"}, Compression: "zstd", RowGroupRows: 1000}, 5},
		{"gzip", WriterOptions{Vars: channels, Components: []string{"DICA1", "DICA2"}, Compression: "gzip", RowGroupRows: 100}, 47},
		{"none", WriterOptions{Vars: channels, Components: []string{"DICA1", "DICA2"}, Compression: "none"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.parquet")
			tabletest.Transform(t, src, Create, out, tc.o, 100)
			names, nums, strs, rg := arrowTable(t, out)
			require.Equal(t, append([]string{"domain", "label"}, append(channels, "DICA1", "DICA2")...), names)
			require.Equal(t, tc.rg, rg)
			for j, c := range channels {
				var col []float64
				for i := 0; i < n; i++ {
					col = append(col, want.X.At(i, j))
				}
				require.True(t, tabletest.SameBits(col, nums[c]), "column %s", c)
			}
			for i := 0; i < n; i++ {
				z := tabletest.Project(want.X.RawRowView(i))
				require.Equal(t, math.Float64bits(z[0]), math.Float64bits(nums["DICA1"][i]))
				require.Equal(t, math.Float64bits(z[1]), math.Float64bits(nums["DICA2"][i]))
				require.Equal(t, want.DomainNames[want.Domain[i]], strs["domain"][i])
				require.Equal(t, want.ClassNames[want.Label[i]], strs["label"][i])
			}
			// This package reads it back too.
			back, err := NewSource([]string{out}, Options{Domain: "domain", Label: "label", Features: channels})
			require.NoError(t, err)
			require.Equal(t, n, back.Len())
			ds, err := dataset.Collect(context.Background(), back)
			require.NoError(t, err)
			require.True(t, tabletest.SameBits(want.X.RawMatrix().Data, ds.X.RawMatrix().Data))
			require.Equal(t, want.Domain, ds.Domain)
			require.Equal(t, want.DomainNames, ds.DomainNames)
			require.Equal(t, want.Label, ds.Label)
			require.Equal(t, want.ClassNames, ds.ClassNames)
		})
	}
}

// arrowFile writes a Parquet file with Apache Arrow's implementation: a
// string sample column, a string label with nulls in optional rows or an
// int64 label, float64, float32, int32 and int64 feature columns (one
// optional), small pages and row groups.
type arrowCols struct {
	sample []string
	label  []string
	f64    []float64
	f32    []float32
	i32    []int32
	i64    []int64
	opt    []float64 // optional column; NaN marks a null
}

func writeArrow(t testing.TB, path string, c arrowCols, codec acompress.Compression, rowGroup int) {
	t.Helper()
	str := func(name string) aschema.Node {
		n, err := aschema.NewPrimitiveNodeLogical(name, apq.Repetitions.Required, aschema.StringLogicalType{}, apq.Types.ByteArray, 0, -1)
		require.NoError(t, err)
		return n
	}
	fields := aschema.FieldList{
		str("sample"), str("label"),
		aschema.NewFloat64Node("f64", apq.Repetitions.Required, -1),
		aschema.NewFloat32Node("f32", apq.Repetitions.Required, -1),
		aschema.NewInt32Node("i32", apq.Repetitions.Required, -1),
		aschema.NewInt64Node("i64", apq.Repetitions.Required, -1),
		aschema.NewFloat64Node("opt", apq.Repetitions.Optional, -1),
	}
	root, err := aschema.NewGroupNode("schema", apq.Repetitions.Required, fields, -1)
	require.NoError(t, err)
	f, err := os.Create(path)
	require.NoError(t, err)
	props := apq.NewWriterProperties(apq.WithCompression(codec), apq.WithDataPageSize(512), apq.WithDictionaryDefault(true))
	w := afile.NewParquetWriter(f, root, afile.WithWriterProps(props))
	n := len(c.f64)
	for lo := 0; lo < n; lo += rowGroup {
		hi := min(n, lo+rowGroup)
		rg := w.AppendRowGroup()
		next := func() afile.ColumnChunkWriter {
			cw, err := rg.NextColumn()
			require.NoError(t, err)
			return cw
		}
		bs := func(v []string) []apq.ByteArray {
			var out []apq.ByteArray
			for _, s := range v {
				out = append(out, apq.ByteArray(s))
			}
			return out
		}
		for _, v := range [][]string{c.sample[lo:hi], c.label[lo:hi]} {
			cw := next()
			_, err := cw.(*afile.ByteArrayColumnChunkWriter).WriteBatch(bs(v), nil, nil)
			require.NoError(t, err)
			require.NoError(t, cw.Close())
		}
		cw := next()
		_, err = cw.(*afile.Float64ColumnChunkWriter).WriteBatch(c.f64[lo:hi], nil, nil)
		require.NoError(t, err)
		require.NoError(t, cw.Close())
		cw = next()
		_, err = cw.(*afile.Float32ColumnChunkWriter).WriteBatch(c.f32[lo:hi], nil, nil)
		require.NoError(t, err)
		require.NoError(t, cw.Close())
		cw = next()
		_, err = cw.(*afile.Int32ColumnChunkWriter).WriteBatch(c.i32[lo:hi], nil, nil)
		require.NoError(t, err)
		require.NoError(t, cw.Close())
		cw = next()
		_, err = cw.(*afile.Int64ColumnChunkWriter).WriteBatch(c.i64[lo:hi], nil, nil)
		require.NoError(t, err)
		require.NoError(t, cw.Close())
		cw = next()
		var vals []float64
		var def []int16
		for _, v := range c.opt[lo:hi] {
			if math.IsNaN(v) {
				def = append(def, 0)
				continue
			}
			def = append(def, 1)
			vals = append(vals, v)
		}
		_, err = cw.(*afile.Float64ColumnChunkWriter).WriteBatch(vals, def, nil)
		require.NoError(t, err)
		require.NoError(t, cw.Close())
		require.NoError(t, rg.Close())
	}
	require.NoError(t, w.Close())
}

func arrowData(n int) arrowCols {
	rng := rand.New(rand.NewPCG(9, 9))
	var c arrowCols
	for i := 0; i < n; i++ {
		c.sample = append(c.sample, []string{"p1", "p2", "p10"}[rng.IntN(3)])
		c.label = append(c.label, []string{"T cell", "B cell", "ungated"}[rng.IntN(3)])
		c.f64 = append(c.f64, rng.NormFloat64()*1e3)
		c.f32 = append(c.f32, float32(rng.NormFloat64()))
		c.i32 = append(c.i32, int32(rng.IntN(1<<20)-1<<19))
		c.i64 = append(c.i64, int64(rng.Uint64()>>12)-1<<51)
		c.opt = append(c.opt, float64(i))
	}
	return c
}

// TestReadArrowFile: files written by Apache Arrow's implementation (other
// compressions, dictionary-encoded strings, float32 and integer columns,
// an optional column, many pages and row groups) read back exactly, over
// several files, with one domain per file or a domain column.
func TestReadArrowFile(t *testing.T) {
	dir := t.TempDir()
	c := arrowData(3000)
	var files []string
	for k, codec := range []acompress.Compression{acompress.Codecs.Snappy, acompress.Codecs.Zstd, acompress.Codecs.Gzip, acompress.Codecs.Uncompressed} {
		p := filepath.Join(dir, "part-"+strconv.Itoa(k)+".parquet")
		writeArrow(t, p, c, codec, 700)
		files = append(files, p)
	}
	src, err := NewSource(files, Options{Label: "label", LabelsIgnore: []string{"ungated"}})
	require.NoError(t, err)
	require.Equal(t, []string{"f64", "f32", "i32", "i64", "opt"}, src.Schema().Features, "default: the numeric columns")
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, []string{"part-0", "part-1", "part-2", "part-3"}, ds.DomainNames)
	k := 0
	for f := range files {
		for i := 0; i < 3000; i++ {
			if c.label[i] == "ungated" {
				continue
			}
			require.Equal(t, []float64{c.f64[i], float64(c.f32[i]), float64(c.i32[i]), float64(c.i64[i]), c.opt[i]}, ds.X.RawRowView(k), "file %d row %d", f, i)
			require.Equal(t, f, ds.Domain[k])
			require.Equal(t, c.label[i], ds.ClassNames[ds.Label[k]])
			k++
		}
	}
	require.Equal(t, k, ds.N())
	require.Equal(t, k, src.Len())

	// A domain column, an integer column as the label, a target.
	src, err = NewSource(files[:1], Options{Domain: "sample", Label: "i32", Features: []string{"i64", "f64"}})
	require.NoError(t, err)
	ds, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	for i := 0; i < 3000; i++ {
		require.Equal(t, c.sample[i], ds.DomainNames[ds.Domain[i]])
		require.Equal(t, strconv.Itoa(int(c.i32[i])), ds.ClassNames[ds.Label[i]])
		require.Equal(t, []float64{float64(c.i64[i]), c.f64[i]}, ds.X.RawRowView(i))
	}
	src, err = NewSource(files[1:2], Options{Domain: "sample", Target: []string{"f32"}, Features: []string{"f64"}})
	require.NoError(t, err)
	ds, err = dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	for i := 0; i < 3000; i++ {
		require.Equal(t, float64(c.f32[i]), ds.Target.At(i, 0))
	}
}

// TestReaderErrors: what is wrong with a file is an error naming the file,
// the row and the column; sizes are checked before reading.
func TestReaderErrors(t *testing.T) {
	dir := t.TempDir()
	c := arrowData(500)
	c.opt[321] = math.NaN() // a null
	withNull := filepath.Join(dir, "null.parquet")
	writeArrow(t, withNull, c, acompress.Codecs.Snappy, 200)
	c = arrowData(500)
	c.f64[77] = math.Inf(1)
	withInf := filepath.Join(dir, "inf.parquet")
	writeArrow(t, withInf, c, acompress.Codecs.Snappy, 1000)
	good := filepath.Join(dir, "good.parquet")
	writeArrow(t, good, arrowData(500), acompress.Codecs.Snappy, 1000)
	notPQ := filepath.Join(dir, "x.parquet")
	require.NoError(t, os.WriteFile(notPQ, []byte("domain,x\na,1\n"), 0o666))
	b, _ := os.ReadFile(good)
	cut := filepath.Join(dir, "cut.parquet")
	require.NoError(t, os.WriteFile(cut, append(append([]byte{}, b[:len(b)/2]...), b[len(b)-8:]...), 0o666))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o777))
	twin := filepath.Join(sub, "good.parquet")
	require.NoError(t, os.WriteFile(twin, b, 0o666))

	read := func(files []string, o Options) error {
		src, err := NewSource(files, o)
		if err != nil {
			return err
		}
		_, err = dataset.Collect(context.Background(), src)
		return err
	}
	for _, tc := range []struct {
		name  string
		files []string
		o     Options
		want  string
	}{
		{"null", []string{withNull}, Options{}, "null.parquet: row 321 (0-based), column \"opt\": no value (null)"},
		{"inf", []string{withInf}, Options{}, "inf.parquet: row 77 (0-based), column \"f64\": value +Inf is not finite"},
		{"not parquet", []string{notPQ}, Options{}, "x.parquet: not a Parquet file (no PAR1 at its end)"},
		{"cut", []string{cut}, Options{}, "cut.parquet"},
		{"missing column", []string{good}, Options{Features: []string{"CD45"}}, `no column "CD45" (columns: "sample", "label", "f64", "f32", "i32", "i64", "opt")`},
		{"string feature", []string{good}, Options{Features: []string{"label"}}, `column "label" holds`},
		{"two roles", []string{good}, Options{Domain: "sample", Label: "sample"}, `the column "sample" is both the domain and the label`},
		{"feature and label", []string{good}, Options{Label: "f64", Features: []string{"f64"}}, `both a feature and the label`},
		{"same domain", []string{good, twin}, Options{}, `would both be the domain "good"`},
		{"page over limit", []string{good}, Options{MaxPageBytes: 256}, "over the limit of 256 bytes; rewrite the file with smaller pages"},
		{"no files", nil, Options{}, "no files"},
		{"label and target", []string{good}, Options{Label: "label", Target: []string{"f64"}}, "both a label and targets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := read(tc.files, tc.o)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, read([]string{good}, Options{Domain: "sample", Label: "label"}))
}

// TestWriter: errors for what a caller can get wrong; Abort leaves the
// destination as it was; an empty output is a valid file.
func TestWriter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o.parquet")
	require.NoError(t, os.WriteFile(p, []byte("previous"), 0o666))
	_, err := Create(p, WriterOptions{})
	require.ErrorContains(t, err, "Vars is empty")
	_, err = Create(p, WriterOptions{Vars: []string{"a", "domain"}})
	require.ErrorContains(t, err, `"domain" appears twice`)
	_, err = Create(p, WriterOptions{Vars: []string{"a"}, Compression: "lz5"})
	require.ErrorContains(t, err, `compression "lz5"`)
	w, err := Create(p, WriterOptions{Vars: []string{"a", "b"}, Components: []string{"z"}})
	require.NoError(t, err)
	blk := &dataset.Block{Rows: 1, D: 2, X: []float64{1, math.NaN()}, Domain: []int{0}}
	require.ErrorContains(t, w.WriteBlock(blk, mat.NewDense(1, 1, nil), []string{"d"}, nil), `row 0 (0-based), column "b": value NaN is not finite`)
	require.Error(t, w.Commit())
	got, _ := os.ReadFile(p)
	require.Equal(t, "previous", string(got))
	w, err = Create(p, WriterOptions{Vars: []string{"a"}})
	require.NoError(t, err)
	require.NoError(t, w.Commit())
	names, _, _, _ := arrowTable(t, p)
	require.Equal(t, []string{"domain", "a"}, names)
	ents, _ := os.ReadDir(dir)
	require.Len(t, ents, 1, "no temporary file left")
}
