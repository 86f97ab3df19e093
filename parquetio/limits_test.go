package parquetio

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/sourcetest"
)

// writeSmall writes a Parquet file of rows rows of the columns domain, a,
// b (doubles) and z, in row groups of groupRows rows, and returns its
// bytes.
func writeSmall(t testing.TB, rows, groupRows int) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "small.parquet")
	w, err := Create(p, WriterOptions{Vars: []string{"a", "b"}, Components: []string{"z"}, RowGroupRows: groupRows, Compression: "none"})
	require.NoError(t, err)
	for done := 0; done < rows; {
		k := min(groupRows, rows-done)
		b := dataset.Block{Rows: k, D: 2, Domain: make([]int, k)}
		z := mat.NewDense(k, 1, nil)
		for i := 0; i < k; i++ {
			b.X = append(b.X, float64(done+i), -float64(done+i)/3)
			z.Set(i, 0, float64(i))
		}
		require.NoError(t, w.WriteBlock(&b, z, []string{"d0"}, nil))
		done += k
	}
	require.NoError(t, w.Commit())
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return data
}

// footer decodes the metadata of a Parquet file's bytes, and returns it
// with the bytes before it (the leading magic and the column chunks).
func footer(t testing.TB, data []byte) (*format.FileMetaData, []byte) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	md := new(format.FileMetaData)
	require.NoError(t, thrift.Unmarshal(new(thrift.CompactProtocol), data[len(data)-8-n:len(data)-8], md))
	return md, data[:len(data)-8-n]
}

// withFooter returns the file of body and the metadata md.
func withFooter(t testing.TB, body []byte, md *format.FileMetaData) []byte {
	t.Helper()
	foot, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	require.NoError(t, err)
	out := append(append([]byte{}, body...), foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	return append(out, "PAR1"...)
}

// amplified returns a file whose metadata repeats the row group of a
// small file k times: every row group reads the same column chunks.
func amplified(t testing.TB, k int) []byte {
	md, body := footer(t, writeSmall(t, 100, 1000))
	rg := md.RowGroups[0]
	md.RowGroups = nil
	for i := 0; i < k; i++ {
		md.RowGroups = append(md.RowGroups, rg)
	}
	md.NumRows = rg.NumRows * int64(k)
	return withFooter(t, body, md)
}

// TestHostileMetadata: metadata that declares many row groups over the
// same bytes, column chunks outside the file, or more column chunks or
// metadata bytes than the limits is refused with a message saying what to
// do, before the metadata is decoded when it is too large.
func TestHostileMetadata(t *testing.T) {
	good := writeSmall(t, 300, 100)
	md, body := footer(t, good)
	outside := *md
	outside.RowGroups = append([]format.RowGroup(nil), md.RowGroups...)
	outside.RowGroups[1].Columns = append([]format.ColumnChunk(nil), md.RowGroups[1].Columns...)
	outside.RowGroups[1].Columns[2].MetaData.TotalCompressedSize = 1 << 20
	negative := *md
	negative.RowGroups = append([]format.RowGroup(nil), md.RowGroups...)
	negative.RowGroups[2].NumRows = -5
	fsys := fstest.MapFS{
		"amp50k.parquet":  {Data: amplified(t, 50000)},
		"amp60k.parquet":  {Data: amplified(t, 60000)},
		"amp2.parquet":    {Data: amplified(t, 2)},
		"outside.parquet": {Data: withFooter(t, body, &outside)},
		"neg.parquet":     {Data: withFooter(t, body, &negative)},
		"good.parquet":    {Data: good},
	}
	for _, tc := range []struct {
		file string
		o    Options
		want string
	}{
		{"amp60k.parquet", Options{}, "bytes, over the limit of 16777216 bytes (MaxFooterBytes); write the file with fewer, larger row groups (pyarrow: pq.write_table(t, path, row_group_size=1000000)) or raise the limit"},
		{"amp50k.parquet", Options{}, "amp50k.parquet: 50000 row groups of 200000 column chunks in all, over the limit of 65536 column chunks (MaxColumnChunks), whose metadata would take about 256 MB; write the file with fewer, larger row groups (pyarrow: pq.write_table(t, path, row_group_size=1000000)) or raise the limit"},
		{"amp50k.parquet", Options{MaxColumnChunks: 1 << 20}, `amp50k.parquet: row group 0, column "domain" and row group 1, column "domain" share bytes [4, 82): column chunks that overlap are refused (a damaged file, or one made to be read many times over); write the file again`},
		{"amp2.parquet", Options{}, `amp2.parquet: row group 0, column "domain" and row group 1, column "domain" share bytes [4, 82)`},
		{"outside.parquet", Options{}, `outside.parquet: row group 1, column "b": a column chunk at bytes [3664, 1052240) outside the data of the file (bytes [4, 8598))`},
		{"neg.parquet", Options{}, "neg.parquet: not a readable Parquet file: invalid file metadata: row group 2 num_rows=-5 is negative"},
		{"good.parquet", Options{MaxFooterBytes: 100}, "good.parquet: metadata of"},
		{"good.parquet", Options{MaxColumnChunks: 11}, "good.parquet: 3 row groups of 12 column chunks in all, over the limit of 11"},
		{"good.parquet", Options{MaxColumnChunks: -1}, "parquetio: a negative limit"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := NewSourceFS(fsys, []string{tc.file}, tc.o)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			if tc.o.MaxColumnChunks == 0 {
				// Refused before decoding: the footer's bytes and little more.
				size := len(fsys[tc.file].Data)
				require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*size+4<<20))
			}
		})
	}
	// The limits at their edges read the file.
	n := int64(binary.LittleEndian.Uint32(good[len(good)-8:]))
	src, err := NewSourceFS(fsys, []string{"good.parquet"}, Options{MaxColumnChunks: 12, MaxFooterBytes: n})
	require.NoError(t, err)
	ds, err := dataset.Collect(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 300, ds.N())
	require.Equal(t, []float64{299, -299.0 / 3, 99}, ds.X.RawRowView(299))
}

// TestFooterCounts: the walk over the Thrift encoding counts the row
// groups and column chunks that decoding finds, on files written here and
// by Apache Arrow (statistics, key-value metadata, several row groups), and
// refuses cut or deeply nested encodings.
func TestFooterCounts(t *testing.T) {
	arrow := filepath.Join(t.TempDir(), "arrow.parquet")
	writeArrow(t, arrow, arrowData(500), 0, 64)
	theirs, err := os.ReadFile(arrow)
	require.NoError(t, err)
	for _, data := range [][]byte{writeSmall(t, 300, 100), writeSmall(t, 5, 100), theirs, amplified(t, 1000)} {
		md, _ := footer(t, data)
		n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		foot := data[len(data)-8-n : len(data)-8]
		groups, chunks, err := footerCounts(foot)
		require.NoError(t, err)
		want := 0
		for _, rg := range md.RowGroups {
			want += len(rg.Columns)
		}
		require.Equal(t, int64(len(md.RowGroups)), groups)
		require.Equal(t, int64(want), chunks)
		require.Greater(t, groups, int64(0))
		for _, cut := range []int{0, 1, len(foot) / 2, len(foot) - 1} {
			_, _, err := footerCounts(foot[:cut])
			require.Error(t, err, "cut at %d", cut)
		}
	}
	// A struct field nested 1000 deep.
	deep := make([]byte, 0, 2001)
	for i := 0; i < 1000; i++ {
		deep = append(deep, 0x1c) // field +1, struct
	}
	deep = append(deep, make([]byte, 1001)...)
	_, _, err = footerCounts(deep)
	require.Error(t, err)
	// A list that claims more elements than there are bytes.
	_, _, err = footerCounts([]byte{0x49, 0xfc, 0xff, 0xff, 0xff, 0x0f, 0})
	require.Error(t, err)
}

// TestPassBytes: PassBytes bounds what a pass over a file of one row group
// allocates, once the buffer pools are empty (which bounds the memory it
// holds; with more row groups, each allocates anew what the previous one
// released), and is not far above it: a file of large pages (written
// here) and one of many small dictionary-encoded pages (written by Arrow),
// with every column or two.
func TestPassBytes(t *testing.T) {
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.parquet")
	require.NoError(t, os.WriteFile(ours, writeSmall(t, 400_000, 400_000), 0o644))
	arrow := filepath.Join(dir, "arrow.parquet")
	writeArrow(t, arrow, arrowData(100_000), 0, 100_000)
	for _, tc := range []struct {
		file string
		o    Options
	}{
		{ours, Options{}},
		{ours, Options{Features: []string{"b"}, Domain: "domain"}},
		{arrow, Options{}},
		{arrow, Options{Features: []string{"f64", "i32"}, Label: "label"}},
	} {
		src, err := NewSource([]string{tc.file}, tc.o)
		require.NoError(t, err)
		got, bound := sourcetest.PassAlloc(t, src), src.PassBytes()
		t.Logf("%s %v: a pass allocates %.1f MB, PassBytes %.1f MB", filepath.Base(tc.file), tc.o.Features, float64(got)/1e6, float64(bound)/1e6)
		require.LessOrEqual(t, got, uint64(bound))
		require.Greater(t, float64(got), 0.25*float64(bound))
	}
}
