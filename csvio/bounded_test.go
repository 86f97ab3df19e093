package csvio

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/dicalab/dica/dataset"
)

// endlessFS serves files made of a prefix and then n bytes of one value
// without a line end, produced as they are read (gzip-compressed on the fly
// for names ending in ".gz"); served counts the bytes produced after the
// prefixes.
type endlessFS struct {
	files  map[string]endless
	served atomic.Int64
}

type endless struct {
	prefix string
	n      int64
	fill   byte
}

func (e *endlessFS) Open(name string) (fs.File, error) {
	f, ok := e.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	var r io.Reader = io.MultiReader(strings.NewReader(f.prefix), &repeatReader{n: f.n, b: f.fill, served: &e.served})
	if !strings.HasSuffix(name, ".gz") {
		return &endlessFile{name: name, size: int64(len(f.prefix)) + f.n, r: r, close: func() error { return nil }}, nil
	}
	pr, pw := io.Pipe()
	go func() {
		w := gzip.NewWriter(pw)
		_, err := io.Copy(w, r)
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	return &endlessFile{name: name, size: -1, r: pr, close: func() error { return pr.CloseWithError(errors.New("closed")) }}, nil
}

type repeatReader struct {
	n      int64
	b      byte
	served *atomic.Int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= int64(k)
	r.served.Add(int64(k))
	return k, nil
}

type endlessFile struct {
	name  string
	size  int64
	r     io.Reader
	close func() error
}

func (f *endlessFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *endlessFile) Close() error               { return f.close() }
func (f *endlessFile) Stat() (fs.FileInfo, error) { return fileInfo{f.name, f.size}, nil }

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// cleanMessage checks that msg is short, valid UTF-8 and free of control
// characters.
func cleanMessage(t *testing.T, msg string, max int) {
	t.Helper()
	if len(msg) > max {
		t.Errorf("message of %d bytes (at most %d): %.200s...", len(msg), max, msg)
	}
	if !isClean(msg) {
		t.Errorf("message with control or invalid bytes: %q", msg)
	}
}

func isClean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// twoGB is the length of the files without line ends of the tests.
const twoGB = 2 << 30

// passes are the ways to read a Source to its end (or first error).
var passes = []struct {
	name    string
	workers int
	read    func(src *Source) error
}{
	{"sequential", -1, collect},
	{"parallel", 2, collect},
	{"skim", 2, func(src *Source) error {
		_, err := src.Skim(context.Background(), func(i int64) bool { return i%2 == 0 }, func(x, y []float64) error { return nil })
		return err
	}},
}

func collect(src *Source) error {
	_, err := dataset.Collect(context.Background(), src)
	return err
}

// TestEndlessLine reads files of 2 GB without a line end, in every path:
// the first row of NewSourceFS, the passes, a label file, gzip input. Each
// must stop after reading about the limit, with a short error at the right
// line, having allocated a few megabytes.
func TestEndlessLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]endless
		data   string // the data file
		labels string // its label file, if any
		want   string // the error
	}{
		{"first row", map[string]endless{"z.csv": {n: twoGB, fill: 'x'}}, "z.csv", "",
			`z.csv:1: line longer than 1048576 bytes, the limit (MaxLineBytes); it starts "xxxxxxxxxxxxxxxxxxxxxxxx"...: is this a CSV file?`},
		{"binary first row", map[string]endless{"z.csv": {prefix: "\x1b[2J\a", n: twoGB, fill: 0xff}}, "z.csv", "",
			`z.csv:1: line longer than 1048576 bytes, the limit (MaxLineBytes); it starts "\x1b[2J\a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"...: is this a CSV file?`},
		{"later row", map[string]endless{"z.csv": {prefix: "1,2\n3,4\n", n: twoGB, fill: '5'}}, "z.csv", "",
			`z.csv:3: line longer than 1048576 bytes`},
		{"label file", map[string]endless{"z.csv": {prefix: "1,2\n3,4\n5,6\n"}, "l.csv": {prefix: "a\n", n: twoGB, fill: 0}}, "z.csv", "l.csv",
			`l.csv:2: line longer than 1048576 bytes, the limit (MaxLineBytes); it starts "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"...`},
		{"gzip", map[string]endless{"z.csv.gz": {prefix: "1,2\n", n: twoGB, fill: '0'}}, "z.csv.gz", "",
			`z.csv.gz:2: line longer than 1048576 bytes`},
		{"gzip first row", map[string]endless{"z.csv.gz": {n: twoGB, fill: '0'}}, "z.csv.gz", "",
			`z.csv.gz:1: line longer than 1048576 bytes`},
	} {
		for _, p := range passes {
			t.Run(tc.name+"/"+p.name, func(t *testing.T) {
				fsys := &endlessFS{files: tc.files}
				o := Options{}
				if tc.labels != "" {
					o.LabelFiles = []string{tc.labels}
				}
				var err error
				alloc := allocated(func() {
					var src *Source
					if src, err = NewSourceFS(fsys, []string{tc.data}, o); err != nil {
						return
					}
					src.workers = p.workers
					err = p.read(src)
				})
				if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("error %v\nwant %s", err, tc.want)
				}
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Errorf("%T, want a *ParseError", err)
				}
				cleanMessage(t, err.Error(), 1024)
				// The compressor of a ".gz" file runs ahead of the reader
				// by a few deflate blocks of zeros.
				if n := fsys.served.Load(); n > 32<<20 || n > 4<<20 && !strings.HasSuffix(tc.data, ".gz") {
					t.Errorf("read %d bytes of the line, want about the limit", n)
				}
				if alloc > 8<<20 {
					t.Errorf("allocated %d bytes", alloc)
				}
				t.Logf("read %d bytes, allocated %d", fsys.served.Load(), alloc)
			})
		}
	}
}

// TestSparseFile reads a real sparse file of 2 GB of zero bytes (with and
// without a first line) through NewSource and every pass.
func TestSparseFile(t *testing.T) {
	dir := t.TempDir()
	for _, prefix := range []string{"", "1,2\n"} {
		name := filepath.Join(dir, fmt.Sprintf("z%d.csv", len(prefix)))
		if err := os.WriteFile(name, []byte(prefix), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, twoGB); err != nil {
			t.Skipf("no sparse file: %v", err)
		}
		want := fmt.Sprintf(`%s:1: line longer than 1048576 bytes, the limit (MaxLineBytes); it starts "\x00\x00`, name)
		if prefix != "" {
			want = strings.Replace(want, ":1:", ":2:", 1)
		}
		for _, p := range passes {
			var err error
			alloc := allocated(func() {
				var src *Source
				if src, err = NewSource([]string{name}, Options{}); err != nil {
					return
				}
				src.workers = p.workers
				err = p.read(src)
			})
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("%q, %s: error %v\nwant %s", prefix, p.name, err, want)
			}
			cleanMessage(t, err.Error(), 1024)
			if alloc > 8<<20 {
				t.Errorf("%q, %s: allocated %d bytes", prefix, p.name, alloc)
			}
		}
	}
}

// TestMaxLineBytes checks the limit to the byte: a line of MaxLineBytes
// bytes is read, one more is an error at that line, whatever the line end,
// the line's place (first row, later row, label file) and the pass.
func TestMaxLineBytes(t *testing.T) {
	ends := []string{"\n", "\r\n", ""}
	for _, max := range []int{1, 3, 64} {
		for _, n := range []int{max, max + 1} {
			for _, end := range ends {
				line := strings.Repeat("7", n)
				cases := []struct {
					place    string
					data     string
					labels   string
					file     string
					line     int
					newError bool // the error comes from NewSource
				}{
					{"first", line + end + "1\n2", "", "d.csv", 1, true},
					{"later", "1\n" + line + end, "", "d.csv", 2, false},
				}
				if end != "" {
					cases = append(cases, struct {
						place    string
						data     string
						labels   string
						file     string
						line     int
						newError bool
					}{"label", "1\n2\n3\n", "a\n" + line + end + "c\n", "l.csv", 2, false})
				}
				for _, c := range cases {
					if c.place == "first" && end == "" {
						continue
					}
					fsys := fstest.MapFS{"d.csv": {Data: []byte(c.data)}, "l.csv": {Data: []byte(c.labels)}}
					o := Options{MaxLineBytes: max, Header: NoHeader}
					if c.labels != "" {
						o.LabelFiles = []string{"l.csv"}
					}
					for _, p := range append(passes, struct {
						name    string
						workers int
						read    func(src *Source) error
					}{"parallel, 1-byte chunks", 3, collect}) {
						where := fmt.Sprintf("max %d, line of %d bytes ending %q, %s, %s", max, n, end, c.place, p.name)
						src, err := NewSourceFS(fsys, []string{"d.csv"}, o)
						if err == nil {
							src.workers = p.workers
							if p.name == "parallel, 1-byte chunks" {
								src.chunkSize = 1
							}
							err = p.read(src)
						}
						if n <= max {
							if err != nil {
								t.Errorf("%s: %v", where, err)
							}
							continue
						}
						var pe *ParseError
						if !errors.As(err, &pe) || pe.File != c.file || pe.Line != c.line || !strings.HasPrefix(pe.Msg, fmt.Sprintf("line longer than %d bytes", max)) {
							t.Errorf("%s: error %v, want a long line at %s:%d", where, err, c.file, c.line)
						}
					}
				}
			}
		}
	}
	if _, err := NewSourceFS(fstest.MapFS{"d.csv": {Data: []byte("1\n")}}, []string{"d.csv"}, Options{MaxLineBytes: -1}); err == nil ||
		err.Error() != "csvio: MaxLineBytes -1: want a positive number of bytes, or 0 for the default (1048576)" {
		t.Errorf("negative MaxLineBytes: %v", err)
	}
}

// TestLineReaderBounded checks that the line reader's buffer stays within
// the limit on a line without end.
func TestLineReaderBounded(t *testing.T) {
	for _, size := range []int{16, 1000} {
		var l lineReader
		l.reset(io.MultiReader(strings.NewReader("ab\n"), &repeatReader{n: 1 << 20, b: 'x', served: new(atomic.Int64)}), size, 100)
		if line, ok := l.next(); !ok || string(line) != "ab" {
			t.Fatalf("first line %q, %v", line, ok)
		}
		if line, ok := l.next(); ok {
			t.Fatalf("long line read: %d bytes", len(line))
		}
		var e *longLineError
		if !errors.As(l.err, &e) || e.line != 2 || e.max != 100 {
			t.Errorf("error %v", l.err)
		}
		if cap(l.buf) > max(size, 102) {
			t.Errorf("buffer of %d bytes, first size %d, limit 100", cap(l.buf), size)
		}
		if _, ok := l.next(); ok {
			t.Error("a line after the error")
		}
	}
}

// TestTrailingSeparator reads files whose lines end with the separator.
func TestTrailingSeparator(t *testing.T) {
	fsys := mapFS(
		"trail.csv", "1,2,3,\n4,5,6,\n7,8,9,\n",
		"header.csv", "CD4,CD8,\n1,2,\n3,4,\n",
		"rows.csv", "CD4,CD8\n1,2,\n3,4\n5,6, \n",
		"mixed1.csv", "1,2,\r\n3,4,\r\n",
		"mixed2.csv", "5,6\n7,8,\"\"\n",
		"semi.csv", "1;2;\n3;4;\n",
		"gap.csv", "1,,3\n4,5,6\n",
		"named.csv", "a,b,\n1,2,\n",
		"tab.tsv", "1\t2\t\n3\t4\t\n",
		"one.csv", "1,\n2,\n",
	)
	for _, tc := range []struct {
		files    []string
		o        Options
		header   bool
		features []string
		x        []float64
		err      string
	}{
		{[]string{"trail.csv"}, Options{}, false, []string{"V1", "V2", "V3"}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, ""},
		{[]string{"header.csv"}, Options{}, true, []string{"CD4", "CD8"}, []float64{1, 2, 3, 4}, ""},
		{[]string{"rows.csv"}, Options{}, true, []string{"CD4", "CD8"}, []float64{1, 2, 3, 4, 5, 6}, ""},
		{[]string{"mixed1.csv", "mixed2.csv"}, Options{}, false, []string{"V1", "V2"}, []float64{1, 2, 3, 4, 5, 6, 7, 8}, ""},
		{[]string{"mixed2.csv", "mixed1.csv"}, Options{}, false, []string{"V1", "V2"}, []float64{5, 6, 7, 8, 1, 2, 3, 4}, ""},
		{[]string{"semi.csv"}, Options{Comma: ';'}, false, []string{"V1", "V2"}, []float64{1, 2, 3, 4}, ""},
		{[]string{"tab.tsv"}, Options{Comma: '\t'}, false, []string{"V1", "V2"}, []float64{1, 2, 3, 4}, ""},
		{[]string{"one.csv"}, Options{}, false, []string{"V1"}, []float64{1, 2}, ""},
		{[]string{"trail.csv"}, Options{Header: WithHeader}, true, []string{"1", "2", "3"}, []float64{4, 5, 6, 7, 8, 9}, ""},
		{[]string{"trail.csv"}, Options{Features: []string{"V3", "1"}}, false, []string{"V3", "V1"}, []float64{3, 1, 6, 4, 9, 7}, ""},
		{[]string{"trail.csv"}, Options{Features: []string{"V4"}}, false, nil, nil, `csvio: no column "V4" in trail.csv; available: V1 to V3 or 1 to 3 (no header)`},
		{[]string{"named.csv"}, Options{Header: NoHeader}, false, nil, nil, `named.csv:1: column 1: cannot parse "a" as a number (line 1 is read as data: the files have no header)`},
		// An empty field is no evidence of a header: "1,,3" is data.
		{[]string{"gap.csv"}, Options{}, false, nil, nil, `gap.csv:1: column 2: cannot parse "" as a number`},
	} {
		src, err := NewSourceFS(fsys, tc.files, tc.o)
		var ds *dataset.Dataset
		if err == nil {
			if src.HasHeader() != tc.header {
				t.Errorf("%q: HasHeader %v", tc.files, src.HasHeader())
			}
			for _, p := range passes[:2] {
				src.workers = p.workers
				ds, err = dataset.Collect(context.Background(), src)
				if err != nil {
					break
				}
				if !equalStrings(ds.Features, tc.features) || !equalFloats(ds.X.RawMatrix().Data, tc.x) {
					t.Errorf("%q %+v, %s: features %q, values %v; want %q, %v", tc.files, tc.o, p.name, ds.Features, ds.X.RawMatrix().Data, tc.features, tc.x)
				}
			}
		}
		if got := fmt.Sprint(err); tc.err == "" && err != nil || tc.err != "" && got != tc.err {
			t.Errorf("%q %+v: error %v, want %q", tc.files, tc.o, err, tc.err)
		}
	}
}

func equalStrings(a, b []string) bool { return fmt.Sprintf("%q", a) == fmt.Sprintf("%q", b) }
func equalFloats(a, b []float64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestMessagesQuoteSafely checks that errors quote at most about 80 bytes
// of a file, with control characters and invalid UTF-8 escaped.
func TestMessagesQuoteSafely(t *testing.T) {
	long := strings.Repeat("x", 10000)
	nasty := "\x1b[2J\a\xff\x00\u009b"
	var wide strings.Builder
	for j := range 500 {
		if j > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, "%s%d", strings.Repeat("n\x07", 100), j)
	}
	var many strings.Builder // 100 distinct labels
	for i := range 100 {
		fmt.Fprintf(&many, "label\x1b%d\n", i)
	}
	fsys := fstest.MapFS{
		"long.csv":    {Data: []byte("1,2\n3," + long + "\n")},
		"nasty.csv":   {Data: []byte("1,2\n3," + nasty + "\n")},
		"h1.csv":      {Data: []byte("h1," + nasty + long + "\n1,2\n")},
		"h2.csv":      {Data: []byte("h1,zz\n1,2\n")},
		"wide.csv":    {Data: []byte(wide.String() + "\n")},
		"trail.csv":   {Data: []byte("1,2,\n3,4," + nasty + long + "\n")},
		"data100.csv": {Data: []byte(strings.Repeat("1,2\n", 100))},
		"lab100.csv":  {Data: []byte(many.String())},
		"lines.csv":   {Data: []byte("1,2\n" + nasty + long + "\n")},
	}
	for _, tc := range []struct {
		files []string
		o     Options
		want  string // a part of the message
	}{
		{[]string{"long.csv"}, Options{}, `long.csv:2: column 2: cannot parse "` + long[:80] + `"... (9920 more bytes) as a number`},
		{[]string{"nasty.csv"}, Options{}, `nasty.csv:2: column 2: cannot parse "\x1b[2J\a\xff\x00\u009b" as a number`},
		{[]string{"h1.csv", "h2.csv"}, Options{}, `csvio: h2.csv: header differs from that of h1.csv in column 2: "zz" against "\x1b[2J\a\xff\x00\u009b` + long[:23] + `"... (9977 more bytes)`},
		{[]string{"wide.csv"}, Options{Features: []string{"CD4\a"}}, `csvio: no column "CD4\a" in wide.csv; available: "` + strings.Repeat(`n\a`, 16) + `"... (169 more bytes), "`},
		{[]string{"trail.csv"}, Options{}, `trail.csv:2: column 3: value "\x1b[2J\a\xff\x00\u009bxxxxx`},
		{[]string{"data100.csv"}, Options{LabelFiles: []string{"lab100.csv"}, LabelsIgnore: []string{"O\a"}},
			`csvio: LabelsIgnore: value "O\a" matches no label (labels seen: "label\x1b0", "label\x1b1", "label\x1b2", `},
		{[]string{"lines.csv"}, Options{MaxLineBytes: 100}, `lines.csv:2: line longer than 100 bytes, the limit (MaxLineBytes); it starts "\x1b[2J\a\xff\x00\u009bxxxxxxxxxxxxxxx"...`},
	} {
		src, err := NewSourceFS(fsys, tc.files, tc.o)
		if err == nil {
			err = collect(src)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v\nwant %s", tc.files, err, tc.want)
			continue
		}
		cleanMessage(t, err.Error(), 2000)
	}
}

// readers opens a sequential and a parallel pass's worth of sources.
func bothPasses(t *testing.T, fsys fstest.MapFS, files []string, o Options) []*Source {
	return []*Source{withWorkers(t, fsys, files, o, -1, 0), withWorkers(t, fsys, files, o, 2, 16), withWorkers(t, fsys, files, o, 3, 0)}
}

// TestLabelsIgnoreMatchesNothing checks that a LabelsIgnore value no row
// has is an error at the end of each complete pass, and only there.
func TestLabelsIgnoreMatchesNothing(t *testing.T) {
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("1,2\n3,4\n5,6\n")},
		"l1.csv": {Data: []byte("0\n1\n2\n")},
		"s2.csv": {Data: []byte("7,8\n9,10\n")},
		"l2.csv": {Data: []byte("3\n10\n")},
		"c.csv":  {Data: []byte("x,lab\n1,B\n2,A\n3,A\n")},
	}
	files, labels := []string{"s1.csv", "s2.csv"}, []string{"l1.csv", "l2.csv"}
	for _, tc := range []struct {
		files  []string
		o      Options
		want   string
		rows   int // rows read before the end
		skimOK bool
	}{
		{files, Options{LabelFiles: labels, LabelsIgnore: []string{"O"}},
			`csvio: LabelsIgnore: value "O" matches no label (labels seen: "0", "1", "2", "3", "10")`, 5, false},
		{files, Options{LabelFiles: labels, LabelsIgnore: []string{"x", "0", " O ", "x"}},
			`csvio: LabelsIgnore: values "x", "O" match no label (labels seen: "0", "1", "2", "3", "10")`, 4, false},
		{files, Options{LabelFiles: labels, LabelsIgnore: []string{"0", "10"}}, "", 3, true},
		{files, Options{LabelFiles: labels, LabelsIgnore: []string{"O", "10"}, AllowUnmatchedIgnore: true}, "", 4, true},
		{[]string{"c.csv"}, Options{Label: "lab", LabelsIgnore: []string{"a"}},
			`csvio: LabelsIgnore: value "a" matches no label (labels seen: "A", "B")`, 3, false},
	} {
		for _, src := range bothPasses(t, fsys, tc.files, tc.o) {
			for range 2 { // every pass
				r, err := src.Open(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var b dataset.Block
				rows := 0
				for {
					n, err2 := r.Read(&b, 2)
					if err2 != nil {
						err = err2
						break
					}
					rows += n
				}
				if n, again := r.Read(&b, 2); n != 0 || again != err {
					t.Errorf("Read after the end: %d, %v; want 0, %v", n, again, err)
				}
				r.Close()
				if rows != tc.rows {
					t.Errorf("%+v: %d rows before the end, want %d", tc.o, rows, tc.rows)
				}
				if tc.want == "" && err != io.EOF || tc.want != "" && fmt.Sprint(err) != tc.want {
					t.Errorf("%+v, workers %d: end %v\nwant %s", tc.o, src.workers, err, tc.want)
				}
			}
			_, err := src.Skim(context.Background(), func(int64) bool { return true }, func(x, y []float64) error { return nil })
			if tc.want == "" && err != nil || tc.want != "" && fmt.Sprint(err) != tc.want {
				t.Errorf("%+v, workers %d: Skim %v\nwant %s", tc.o, src.workers, err, tc.want)
			}
		}
	}
	if _, err := NewSourceFS(fsys, files, Options{LabelFiles: labels, LabelsIgnore: []string{" "}}); err == nil ||
		err.Error() != "csvio: LabelsIgnore has an empty value, which no label can have (an empty label is an error)" {
		t.Errorf("empty LabelsIgnore value: %v", err)
	}
}

// TestEmptiedDomains checks EmptiedDomains: unknown before a complete pass,
// then the domains whose rows LabelsIgnore all dropped, with file domains
// and with a domain column, after sequential, parallel and concurrent
// passes.
func TestEmptiedDomains(t *testing.T) {
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("1,2\n3,4\n0,0\n")},
		"l1.csv": {Data: []byte("1\n0\n2\n")},
		"s2.csv": {Data: []byte("5,6\n7,8\n")},
		"l2.csv": {Data: []byte("0\n0\n")},
		"s3.csv": {Data: []byte("9,10\n11,12\n13,14\n")},
		"l3.csv": {Data: []byte("2\n1\n2\n")},
		"s4.csv": {Data: []byte("15,16\n")},
		"l4.csv": {Data: []byte("0\n")},
		"dom.csv": {Data: []byte("patient,x,cell\n" +
			"carol,1,T\nbob,2,junk\nalice,3,B\nbob10,4,junk\nbob2,5,junk\ncarol,6,junk\nalice,7,T\nbob2,8,junk\ncarol,9,B\n")},
	}
	for _, tc := range []struct {
		files []string
		o     Options
		want  []string
		doms  []string
	}{
		{[]string{"s1.csv", "s2.csv", "s3.csv", "s4.csv"}, Options{LabelFiles: []string{"l1.csv", "l2.csv", "l3.csv", "l4.csv"}, LabelsIgnore: []string{"0"}},
			[]string{"s2", "s4"}, []string{"s1", "s3"}},
		{[]string{"s1.csv", "s3.csv"}, Options{LabelFiles: []string{"l1.csv", "l3.csv"}, LabelsIgnore: []string{"0"}}, nil, []string{"s1", "s3"}},
		{[]string{"s1.csv", "s2.csv"}, Options{LabelFiles: []string{"l1.csv", "l2.csv"}}, nil, []string{"s1", "s2"}},
		{[]string{"dom.csv"}, Options{Domain: "patient", Label: "cell", LabelsIgnore: []string{"junk"}},
			[]string{"bob", "bob2", "bob10"}, []string{"carol", "alice"}},
	} {
		for _, src := range bothPasses(t, fsys, tc.files, tc.o) {
			if names, known := src.EmptiedDomains(); names != nil || known {
				t.Errorf("before a pass: %q, %v", names, known)
			}
			// A pass stopped early tells nothing.
			r, _ := src.Open(context.Background())
			var b dataset.Block
			r.Read(&b, 1)
			r.Close()
			if names, known := src.EmptiedDomains(); names != nil || known {
				t.Errorf("after a partial pass: %q, %v", names, known)
			}
			// Concurrent complete passes.
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					ds, err := dataset.Collect(context.Background(), src)
					if err == nil && !equalStrings(ds.DomainNames, tc.doms) {
						err = fmt.Errorf("domains %q, want %q", ds.DomainNames, tc.doms)
					}
					errs <- err
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Fatalf("%q: %v", tc.files, err)
				}
			}
			names, known := src.EmptiedDomains()
			if !known || !equalStrings(names, tc.want) {
				t.Errorf("%q %+v, workers %d: emptied %q, %v; want %q", tc.files, tc.o, src.workers, names, known, tc.want)
			}
			if names != nil {
				names[0] = "changed"
				if again, _ := src.EmptiedDomains(); again[0] == "changed" {
					t.Error("EmptiedDomains returns the Source's own slice")
				}
			}
		}
	}
}

// TestNilAndZero calls every exported function and method of the package
// with nil and zero values: each returns an error or a documented zero
// result, and none panics.
func TestNilAndZero(t *testing.T) {
	ctx := context.Background()
	good, err := NewSourceFS(fstest.MapFS{"a.csv": {Data: []byte("1,2\n3,4\n")}}, []string{"a.csv"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	keep := func(int64) bool { return true }
	put := func(x, y []float64) error { return nil }
	var nilSrc *Source
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		call func() (any, error)
		want string // the error, or "" for none
	}{
		{"NewSource(nil)", func() (any, error) { return NewSource(nil, Options{}) }, "csvio: no files"},
		{"NewSource([\"\"])", func() (any, error) { return NewSource([]string{""}, Options{}) }, "csvio: open : no such file or directory"},
		{"NewSourceFS(nil fs)", func() (any, error) { return NewSourceFS(nil, []string{"a.csv"}, Options{}) }, "csvio: nil file system"},
		{"NewSourceFS(nil files)", func() (any, error) { return NewSourceFS(fstest.MapFS{}, nil, Options{}) }, "csvio: no files"},
		{"ReadFile(\"\")", func() (any, error) { return ReadFile("", Options{}) }, "csvio: open : no such file or directory"},
		{"Glob(nil)", func() (any, error) { return Glob(nil) }, ""},
		{"Glob([\"[\"])", func() (any, error) { return Glob([]string{"["}) }, `csvio: pattern "[": syntax error in pattern`},
		{"NaturalCompare", func() (any, error) { return NaturalCompare("", ""), nil }, ""},
		{"nil Source.Schema", func() (any, error) { return nilSrc.Schema(), nil }, ""},
		{"nil Source.HasHeader", func() (any, error) { return nilSrc.HasHeader(), nil }, ""},
		{"nil Source.Files", func() (any, error) { return nilSrc.Files(), nil }, ""},
		{"nil Source.EmptiedDomains", func() (any, error) { n, k := nilSrc.EmptiedDomains(); return []any{n, k}, nil }, ""},
		{"nil Source.Open", func() (any, error) { return nilSrc.Open(ctx) }, errNotMade.Error()},
		{"nil Source.Skim", func() (any, error) { return nilSrc.Skim(ctx, keep, put) }, errNotMade.Error()},
		{"Source{}.Open", func() (any, error) { return new(Source).Open(ctx) }, errNotMade.Error()},
		{"Source{}.Skim", func() (any, error) { return new(Source).Skim(ctx, keep, put) }, errNotMade.Error()},
		{"Source{}.Schema", func() (any, error) { return new(Source).Schema(), nil }, ""},
		{"Source{}.Files", func() (any, error) { return new(Source).Files(), nil }, ""},
		{"Source{}.EmptiedDomains", func() (any, error) { n, k := new(Source).EmptiedDomains(); return []any{n, k}, nil }, ""},
		{"Open(nil ctx)", func() (any, error) { return good.Open(nilCtx) }, "csvio: nil context"},
		{"Skim(nil ctx)", func() (any, error) { return good.Skim(nilCtx, keep, put) }, "csvio: nil context"},
		{"Skim(nil keep)", func() (any, error) { return good.Skim(ctx, nil, put) }, "csvio: Skim with a nil keep or put function"},
		{"Skim(nil put)", func() (any, error) { return good.Skim(ctx, keep, nil) }, "csvio: Skim with a nil keep or put function"},
		{"nil ParseError.Error", func() (any, error) { return (*ParseError)(nil).Error(), nil }, ""},
		{"ParseError{}.Error", func() (any, error) { return (&ParseError{}).Error(), nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			_, err := tc.call()
			if fmt.Sprint(err) != tc.want && !(tc.want == "" && err == nil) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The readers of both passes: nil blocks, max < 1, after Close, twice
	// closed.
	for _, workers := range []int{-1, 2} {
		good.workers = workers
		r, err := good.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("workers %d: panic: %v", workers, p)
				}
			}()
			if _, err := r.Read(nil, 1); err == nil || err.Error() != "csvio: Read into a nil Block" {
				t.Errorf("Read(nil): %v", err)
			}
			var b dataset.Block
			for _, max := range []int{0, -1} {
				if _, err := r.Read(&b, max); err == nil || err.Error() != fmt.Sprintf("csvio: Read of at most %d rows; want at least 1", max) {
					t.Errorf("Read(max %d): %v", max, err)
				}
			}
			if n, err := r.Read(&b, 10); n != 2 || err != nil {
				t.Errorf("Read after bad arguments: %d, %v", n, err)
			}
			if r.Domains() == nil || r.Classes() != nil {
				t.Errorf("domains %q, classes %q", r.Domains(), r.Classes())
			}
			r.Close()
			r.Close()
			if _, err := r.Read(&b, 1); !errors.Is(err, errClosed) {
				t.Errorf("Read after Close: %v", err)
			}
		}()
	}
}

// mapFS returns a file system of the given name and contents pairs.
func mapFS(pairs ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i+1 < len(pairs); i += 2 {
		fsys[pairs[i]] = &fstest.MapFile{Data: []byte(pairs[i+1])}
	}
	return fsys
}
