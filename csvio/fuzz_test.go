package csvio

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/realdata"
)

// csvSeeds are small CSV files at the parsers' corner cases (header or
// not, quotes, BOM, separators, empty and ragged lines, bad numbers), the
// seeds of the fuzzers of this package.
var csvSeeds = []string{
	"1,2,3\n4,5,6\n",
	"a,b\n1,2\r\n3,4",
	"\"x\",\"y\"\n\"1\",2\n3,\"4\"\n",
	"\uFEFF\"x\",\"y\"\n\"1\",2\n\n3,\"4\"\n",
	"1,2\n\n3,4\n",
	"1.5e3,-2\n.5,5.\n",
	"1,NaN\n",
	"1,\"2\n",
	"1,2\n3,\"4\n5,6\n",
	"\uFEFFa;b\n1;2\n",
	"1, 2 ,3\n4,5,6,\n",
	"0x1p3,1e400\n",
	"1,2,A\n3,4,B\n5,6,A\n",
	"1,x\n2,y\n3,x\n4,z\n",
	"1,2,\n3,4,\n",
	"1,2,\n3,4\n5,6,\n",
	"a,b,\n1,2,\n3,4\n",
	"1,2\n3,4,5\n",
	"1,2\n333333,4\n5,6\r\n",
}

// FuzzCSV reads arbitrary bytes as a CSV file, with and without a header and
// labels in the last column: it must not panic or hang, and when it succeeds
// the rows must be those of a plain split of the lines with strconv.
func FuzzCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(3))
		f.Add([]byte(s), uint8(16+32*2))
	}
	// A few lines of the real files, if present.
	for _, p := range []string{"multicenter16_cytof/sample7.csv", "gvhd_mclust/GvHD.pos.csv"} {
		path, err := realdata.Find(p)
		if err != nil {
			continue
		}
		if fh, err := os.Open(path); err == nil {
			var b bytes.Buffer
			sc := bufio.NewScanner(fh)
			for i := 0; i < 5 && sc.Scan(); i++ {
				b.Write(sc.Bytes())
				b.WriteByte('\n')
			}
			fh.Close()
			f.Add(b.Bytes(), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		o := Options{Header: HeaderMode(mode % 3)}
		if mode&4 != 0 {
			o.Comma = ';'
		}
		if mode&16 != 0 {
			o.MaxLineBytes = 1 + int(mode>>5) // 1 to 8 bytes
		}
		fsys := fstest.MapFS{"f.csv": {Data: data}}
		// A whole pass, rows discarded, may allocate at most a fixed amount
		// (chunk buffers of the parallel parser, names) plus a multiple of
		// the input: nothing in a CSV file can justify more.
		if got, limit := passAlloc(fsys, o), uint64(16<<20+32*len(data)); got > limit {
			t.Fatalf("a pass over %d bytes allocated %d bytes (limit %d)", len(data), got, limit)
		}
		src, err := NewSourceFS(fsys, []string{"f.csv"}, o)
		if err != nil {
			return
		}
		r, err := src.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var (
			b    dataset.Block
			rows [][]float64
		)
		for {
			n, err := r.Read(&b, 3)
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			for i := range n {
				rows = append(rows, append([]float64(nil), b.Row(i)...))
			}
		}
		// No line longer than the limit was read.
		if o.MaxLineBytes > 0 {
			for _, line := range bytes.Split(data, []byte("\n")) {
				if line = bytes.TrimSuffix(line, []byte("\r")); len(line) > o.MaxLineBytes {
					t.Fatalf("line %q longer than %d bytes read without error", line, o.MaxLineBytes)
				}
			}
		}
		// Reference: the non-empty lines, split and parsed with strconv; an
		// empty field after the columns of the first row (without its own
		// empty last field) is the end of a line that ends with the
		// separator.
		var want [][]float64
		data = bytes.TrimPrefix(data, bom)
		lines := bytes.Split(data, []byte("\n"))
		first := true
		ncol := 0
		for _, line := range lines {
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) == 0 {
				continue
			}
			fields, kind := splitLine(line, src.comma)
			if kind != errNone {
				t.Fatalf("line %q read without error", line)
			}
			if first {
				ncol = len(fields)
				if ncol > 1 && fields[ncol-1] == "" {
					ncol--
				}
			}
			if len(fields) == ncol+1 && fields[ncol] == "" {
				fields = fields[:ncol]
			}
			if first && src.HasHeader() {
				first = false
				continue
			}
			first = false
			row := make([]float64, len(fields))
			for j, s := range fields {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || !decimalRE.MatchString(s) {
					t.Fatalf("field %q of line %q read without error", s, line)
				}
				row[j] = v
			}
			want = append(want, row)
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rows), len(want))
		}
		for i := range want {
			if len(rows[i]) != len(want[i]) {
				t.Fatalf("row %d: %v, want %v", i, rows[i], want[i])
			}
			for j := range want[i] {
				if math.Float64bits(rows[i][j]) != math.Float64bits(want[i][j]) {
					t.Fatalf("row %d: %v, want %v", i, rows[i], want[i])
				}
			}
		}
	})
}

// passAlloc returns the bytes allocated by opening fsys's f.csv and reading
// it to the end (or to its first error).
func passAlloc(fsys fstest.MapFS, o Options) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	func() {
		src, err := NewSourceFS(fsys, []string{"f.csv"}, o)
		if err != nil {
			return
		}
		r, err := src.Open(context.Background())
		if err != nil {
			return
		}
		defer r.Close()
		var b dataset.Block
		for {
			if _, err := r.Read(&b, 3); err != nil {
				return
			}
		}
	}()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
