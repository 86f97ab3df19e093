package parquetio

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apq "github.com/apache/arrow-go/v18/parquet"
	afile "github.com/apache/arrow-go/v18/parquet/file"
	ametadata "github.com/apache/arrow-go/v18/parquet/metadata"
	aschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// parquetGoKeyValues reads the key-value metadata with parquet-go's
// decoder of the whole footer: the reference KeyValues is checked against.
func parquetGoKeyValues(t testing.TB, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	require.NoError(t, err)
	m := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		m[kv.Key] = kv.Value
	}
	return m
}

// writeArrowMeta writes a one-column file with Apache Arrow's writer and
// the key-value pairs given (none: no metadata).
func writeArrowMeta(t testing.TB, path string, kv [][2]string) {
	t.Helper()
	root, err := aschema.NewGroupNode("schema", apq.Repetitions.Required, aschema.FieldList{aschema.NewFloat64Node("x", apq.Repetitions.Required, -1)}, -1)
	require.NoError(t, err)
	f, err := os.Create(path)
	require.NoError(t, err)
	opts := []afile.WriteOption{}
	if kv != nil {
		md := ametadata.NewKeyValueMetadata()
		for _, p := range kv {
			require.NoError(t, md.Append(p[0], p[1]))
		}
		opts = append(opts, afile.WithWriteMetadata(md))
	}
	w := afile.NewParquetWriter(f, root, opts...)
	rg := w.AppendRowGroup()
	cw, err := rg.NextColumn()
	require.NoError(t, err)
	_, err = cw.(*afile.Float64ColumnChunkWriter).WriteBatch([]float64{1, 2, 3}, nil, nil)
	require.NoError(t, err)
	require.NoError(t, cw.Close())
	require.NoError(t, rg.Close())
	require.NoError(t, w.Close())
}

// TestKeyValues: the metadata a Writer records, and that of files Apache
// Arrow writes, read back as written and as parquet-go's full decoder of the
// footer reads it.
func TestKeyValues(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	meta := map[string]string{
		"dica.method": "dica", "dica.sigma": "1.5", "dica.layout": `{"columns":[{"name":"domain","role":"domain"}]}`,
		"empty": "", "ünïcode ключ": "значение ✓", "big": big, "": "no key name",
	}
	for _, tc := range []struct {
		name string
		o    WriterOptions
	}{
		{"columns", WriterOptions{Columns: []Column{{"g", Text}, {"x", Float64}}, Metadata: meta}},
		{"vars", WriterOptions{Vars: []string{"x"}, Metadata: meta}},
		{"none", WriterOptions{Vars: []string{"x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".parquet")
			w, err := Create(p, tc.o)
			require.NoError(t, err)
			if tc.o.Columns != nil {
				require.NoError(t, w.Write(&Rows{N: 1, Codes: [][]int{{0}}, Names: [][]string{{"a"}}, Ints: [][]int64{}, Floats: []float64{1}}))
			}
			require.NoError(t, w.Commit())
			got, err := KeyValues(p)
			require.NoError(t, err)
			want := tc.o.Metadata
			if want == nil {
				want = map[string]string{}
			}
			require.Equal(t, want, got)
			require.Equal(t, parquetGoKeyValues(t, p), got)
		})
	}
	// Arrow's writer: a key given twice (the last value is returned), and
	// no metadata at all.
	p := filepath.Join(dir, "arrow.parquet")
	writeArrowMeta(t, p, [][2]string{{"a", "1"}, {"b", "x y"}, {"a", "2"}})
	got, err := KeyValues(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "2", "b": "x y"}, got)
	writeArrowMeta(t, p, nil)
	got, err = KeyValues(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{}, got)
}

// footerFile returns a file of a footer: PAR1, some bytes, the footer, its
// length and PAR1.
func footerFile(footer []byte) []byte {
	b := append([]byte("PAR1"), footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, "PAR1"...)
}

// TestKeyValuesErrors: what is not a Parquet footer, or one too large, is
// an error before anything of its size is allocated: a footer over the
// limit is not read, lengths of lists and strings are checked against the
// bytes left, nesting is bounded.
func TestKeyValuesErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	w, err := Create(good, WriterOptions{Vars: []string{"x"}, Metadata: map[string]string{"k": "v"}})
	require.NoError(t, err)
	require.NoError(t, w.Commit())
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))

	m, err := keyValues(bytes.NewReader(b), int64(len(b)), n)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k": "v"}, m)
	_, err = keyValues(bytes.NewReader(b), int64(len(b)), n-1)
	require.ErrorContains(t, err, "over the limit")

	// A list of 2^31 key-value structs in a footer of a few bytes; a
	// string longer than the footer; structs nested 100 deep (field 1 of
	// each); a truncated varint; a field of an unknown type.
	huge := []byte{0x59, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00}
	long := []byte{0x59, 0x1c, 0x18, 0xff, 0xff, 0x03, 'a', 0x00, 0x00}
	deep := append(bytes.Repeat([]byte{0x1c}, 100), bytes.Repeat([]byte{0x00}, 101)...)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"short", []byte("PAR1PAR1"), "8 bytes; not a Parquet file"},
		{"not parquet", []byte("domain,x\na,1\nb,2\n"), "not a Parquet file (no PAR1 at its end)"},
		{"encrypted", append(b[:len(b)-4:len(b)-4], "PARE"...), "encrypted"},
		{"footer longer than the file", append(binary.LittleEndian.AppendUint32([]byte("PAR1----"), 1000), "PAR1"...), "metadata of 1000 bytes in a file of 16 bytes"},
		{"footer over the limit", append(binary.LittleEndian.AppendUint32([]byte("PAR1"), DefaultMaxFooterBytes+1), "PAR1"...), "over the limit of 16 MiB"},
		{"huge list", footerFile(huge), "a list of 2147483648 elements with 1 bytes left"},
		{"long string", footerFile(long), "a string of 65535 bytes with 3 left"},
		{"deep", footerFile(deep), "nested over 64 deep"},
		{"truncated", footerFile([]byte{0x16, 0xff}), "bad varint"},
		{"cut", footerFile([]byte{0x15, 0x02}), "truncated"},
		{"unknown type", footerFile([]byte{0x1e, 0x00}), "unknown type 14"},
		{"key value of another type", footerFile([]byte{0x59, 0x15, 0x02, 0x00}), "key_value_metadata is a list of type 5"},
		{"no key", footerFile([]byte{0x59, 0x1c, 0x28, 0x01, 'v', 0x00, 0x00}), "key-value pair 0: no key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.parquet")
			require.NoError(t, os.WriteFile(p, tc.file, 0o666))
			_, err := KeyValues(p)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, p)
		})
	}
	// A pair without a value maps to "", fields unknown to KeyValue and
	// FileMetaData are skipped.
	p := filepath.Join(dir, "novalue.parquet")
	ok := []byte{
		0x15, 0x04, // field 1 (version), i32: 2
		0x48, 0x02, 0xaa, 0xbb, // field 5, binary (not the list): skipped
		0x09, 0x0a, 0x1c, // field 5 (id in full), a list of 1 struct
		0x18, 0x01, 'k', // field 1 (key), binary: "k"
		0x36, 0x00, // field 4, i64: skipped
		0x00,                 // end of the KeyValue
		0x18, 0x02, 'c', 'b', // field 6 (created_by)
		0x00,
	}
	require.NoError(t, os.WriteFile(p, footerFile(ok), 0o666))
	m, err = KeyValues(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k": ""}, m)
	_, err = KeyValues(filepath.Join(dir, "missing.parquet"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = KeyValues(dir)
	require.ErrorContains(t, err, "not a regular file")
}

// FuzzKeyValues: KeyValues never panics on any footer, and reads what
// parquet-go's full decoder reads of a footer both accept.
func FuzzKeyValues(f *testing.F) {
	for _, kv := range []map[string]string{nil, {"k": "v"}, {"dica.method": "dica", "": "x", "e": ""}} {
		p := filepath.Join(f.TempDir(), "seed.parquet")
		w, err := Create(p, WriterOptions{Vars: []string{"x"}, Metadata: kv})
		require.NoError(f, err)
		require.NoError(f, w.Commit())
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		n := binary.LittleEndian.Uint32(b[len(b)-8:])
		f.Add(b[len(b)-8-int(n) : len(b)-8])
	}
	f.Fuzz(func(t *testing.T, footer []byte) {
		b := footerFile(footer)
		m, err := keyValues(bytes.NewReader(b), int64(len(b)), DefaultMaxFooterBytes)
		if err != nil {
			return
		}
		var ref map[string]string
		if catch(func() error {
			pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
			if err != nil {
				return err
			}
			ref = map[string]string{}
			for _, kv := range pf.Metadata().KeyValueMetadata {
				ref[kv.Key] = kv.Value
			}
			return nil
		}) != nil {
			return
		}
		require.Equal(t, ref, m)
	})
}
