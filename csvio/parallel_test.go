package csvio

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dicalab/dica/dataset"
)

// shape says how genFiles writes a data set.
type shape struct {
	files, rows, cols int
	header            bool
	crlf              bool // "\r\n" line endings in odd files
	labelFiles        bool
	partialLabels     bool // with labelFiles: the odd-numbered files have none
	labelCol          bool
	domainCol         bool // a text domain column
	target            bool // a target column
	names             int  // number of distinct domain and class names
	empty             bool // empty lines here and there
	bom               bool
	noFinalNewline    bool
	quotes            bool // quoted fields and spaces
	longField         int  // length of a text field in a skipped column
	gz                bool
	trailing          bool // lines end with the separator (some rows not)
}

// genFiles writes the files of sh and returns them with the options to read
// them.
func genFiles(rng *rand.Rand, sh shape) (fstest.MapFS, []string, Options) {
	fsys := fstest.MapFS{}
	var (
		files []string
		o     Options
	)
	o.Header = NoHeader
	if sh.header {
		o.Header = WithHeader
	}
	names := sh.names
	if names == 0 {
		names = 3
	}
	name := func(prefix string) string {
		return fmt.Sprintf("%s%d", prefix, rng.IntN(names))
	}
	ncol := sh.cols
	var hdr []string
	for j := range sh.cols {
		hdr = append(hdr, fmt.Sprintf("c%d", j))
	}
	if sh.domainCol {
		hdr = append(hdr, "dom")
		o.Domain = "dom"
		if !sh.header {
			o.Domain = strconv.Itoa(len(hdr))
		}
	}
	if sh.labelCol {
		hdr = append(hdr, "lab")
		o.Label = "lab"
		if !sh.header {
			o.Label = strconv.Itoa(len(hdr))
		}
	}
	if sh.target {
		hdr = append(hdr, "y")
		o.Target = []string{"y"}
		if !sh.header {
			o.Target = []string{strconv.Itoa(len(hdr))}
		}
	}
	if sh.longField > 0 {
		hdr = append(hdr, "note")
		if sh.header {
			o.Features = hdr[:ncol]
		} else {
			for j := range ncol {
				o.Features = append(o.Features, strconv.Itoa(j+1))
			}
		}
	}
	if sh.labelFiles || sh.labelCol {
		o.LabelsIgnore = []string{"c0"}
	}
	for i := range sh.files {
		var b, l strings.Builder
		nl := "\n"
		if sh.crlf && i%2 == 1 {
			nl = "\r\n"
		}
		if sh.bom {
			b.WriteString("\uFEFF")
		}
		if sh.header {
			b.WriteString(strings.Join(hdr, ","))
			if sh.trailing {
				b.WriteByte(',')
			}
			b.WriteString(nl)
		}
		for p := range sh.rows {
			if sh.empty && rng.IntN(7) == 0 {
				b.WriteString(nl)
				if rng.IntN(2) == 0 {
					b.WriteString(nl)
				}
			}
			if sh.empty && rng.IntN(7) == 0 {
				l.WriteString(nl)
			}
			var f []string
			for range sh.cols {
				switch {
				case rng.IntN(6) == 0:
					f = append(f, "0")
				case rng.IntN(8) == 0:
					f = append(f, randomFinite(rng))
				default:
					f = append(f, strconv.FormatFloat(math.Exp(rng.NormFloat64()*2+3), 'g', 5, 64))
				}
			}
			if sh.domainCol {
				f = append(f, name("d"))
			}
			lab := name("c")
			if sh.labelCol {
				f = append(f, lab)
			}
			if sh.target {
				f = append(f, strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64))
			}
			if sh.longField > 0 {
				f = append(f, strings.Repeat("x", rng.IntN(sh.longField)))
			}
			if sh.quotes {
				for j := range f {
					switch rng.IntN(8) {
					case 0:
						f[j] = `"` + f[j] + `"`
					case 1:
						f[j] = " " + f[j] + "\t"
					}
				}
			}
			b.WriteString(strings.Join(f, ","))
			if sh.trailing && (p == 0 || rng.IntN(10) > 0) {
				b.WriteString([]string{",", ", ", `,""`}[rng.IntN(3)])
			}
			if p < sh.rows-1 || !sh.noFinalNewline {
				b.WriteString(nl)
			}
			if sh.labelFiles {
				if sh.quotes && rng.IntN(5) == 0 {
					lab = `"` + lab + `"`
				}
				l.WriteString(lab + nl)
			}
		}
		data := []byte(b.String())
		fname := fmt.Sprintf("s%d.csv", i+1)
		if sh.gz {
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
			fname += ".gz"
		}
		fsys[fname] = &fstest.MapFile{Data: data}
		files = append(files, fname)
		if sh.labelFiles && sh.partialLabels && i%2 == 0 {
			o.LabelFiles = append(o.LabelFiles, "") // s1, s3, ... have no labels
		} else if sh.labelFiles {
			lname := fmt.Sprintf("l%d.csv", i+1)
			fsys[lname] = &fstest.MapFile{Data: []byte(l.String())}
			o.LabelFiles = append(o.LabelFiles, lname)
		}
	}
	return fsys, files, o
}

// randomFinite returns a finite number in one of the many forms that
// strconv accepts.
func randomFinite(rng *rand.Rand) string {
	s := randomDecimal(rng)
	for !finite(s) {
		s = randomDecimal(rng)
	}
	return s
}

// withWorkers returns a Source reading files like src, with the given
// parallel pass settings.
func withWorkers(t *testing.T, fsys fstest.MapFS, files []string, o Options, workers, chunk int) *Source {
	t.Helper()
	src, err := NewSourceFS(fsys, files, o)
	if err != nil {
		t.Fatal(err)
	}
	src.workers, src.chunkSize = workers, chunk
	return src
}

// errString describes an error with its type and position.
func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("ParseError{%q %d %d %q}", pe.File, pe.Line, pe.Column, pe.Msg)
	}
	return fmt.Sprintf("%T %v", err, err)
}

// lockstep reads passes of want and got with blocks of max rows, comparing
// every Read: rows, bits of the values, domains, classes, targets, the names
// seen so far and the errors. It returns the rows read and the final error.
func lockstep(t *testing.T, want, got dataset.Source, max int) (int, error) {
	t.Helper()
	ctx := context.Background()
	rw, err := want.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	rg, err := got.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rg.Close()
	var bw, bg dataset.Block
	rows := 0
	for step := 0; ; step++ {
		nw, ew := rw.Read(&bw, max)
		ng, eg := rg.Read(&bg, max)
		if nw != ng || errString(ew) != errString(eg) {
			t.Fatalf("Read %d (after %d rows): %d rows, error %s; want %d, %s", step, rows, ng, errString(eg), nw, errString(ew))
		}
		if !slices.Equal(rg.Domains(), rw.Domains()) || !slices.Equal(rg.Classes(), rw.Classes()) {
			t.Fatalf("Read %d: domains %q classes %q; want %q %q", step, rg.Domains(), rg.Classes(), rw.Domains(), rw.Classes())
		}
		if ew != nil {
			return rows, ew
		}
		if bg.Rows != nw || bg.D != bw.D || bg.T != bw.T {
			t.Fatalf("Read %d: block %d x %d (%d targets), want %d x %d (%d)", step, bg.Rows, bg.D, bg.T, bw.Rows, bw.D, bw.T)
		}
		for i, v := range bw.X[:nw*bw.D] {
			if math.Float64bits(bg.X[i]) != math.Float64bits(v) {
				t.Fatalf("Read %d: value %d = %v, want %v", step, i, bg.X[i], v)
			}
		}
		for i, v := range bw.Target[:nw*bw.T] {
			if math.Float64bits(bg.Target[i]) != math.Float64bits(v) {
				t.Fatalf("Read %d: target %d = %v, want %v", step, i, bg.Target[i], v)
			}
		}
		if !slices.Equal(bg.Domain[:nw], bw.Domain[:nw]) {
			t.Fatalf("Read %d: domains %v, want %v", step, bg.Domain[:nw], bw.Domain[:nw])
		}
		if (bg.Label == nil) != (bw.Label == nil) || bw.Label != nil && !slices.Equal(bg.Label[:nw], bw.Label[:nw]) {
			t.Fatalf("Read %d: classes %v, want %v", step, bg.Label, bw.Label)
		}
		if !bw.HasOrigins() || !bg.HasOrigins() || !slices.Equal(bg.File[:nw], bw.File[:nw]) || !slices.Equal(bg.Event[:nw], bw.Event[:nw]) {
			t.Fatalf("Read %d: files %v events %v, want %v %v", step, bg.File, bg.Event, bw.File, bw.Event)
		}
		rows += nw
	}
}

// settings of the parallel pass compared with the sequential one: chunks
// of 64 bytes put chunk boundaries everywhere.
var parSettings = []struct{ workers, chunk int }{{1, 64}, {2, 64}, {3, 200}, {4, 4096}, {2, 0}}

func TestParallelMatchesSequential(t *testing.T) {
	for k, sh := range []shape{
		{files: 3, rows: 300, cols: 8, labelFiles: true},
		{files: 2, rows: 200, cols: 5, header: true, crlf: true, labelFiles: true, empty: true, quotes: true, bom: true},
		{files: 2, rows: 250, cols: 3, header: true, domainCol: true, labelCol: true, names: 4, quotes: true},
		{files: 1, rows: 400, cols: 2, domainCol: true, labelCol: true, names: 40, empty: true, crlf: true},
		{files: 3, rows: 150, cols: 4, gz: true, labelFiles: true, noFinalNewline: true, crlf: true},
		{files: 2, rows: 100, cols: 3, header: true, target: true, noFinalNewline: true, empty: true},
		{files: 2, rows: 60, cols: 2, longField: 3000, labelFiles: true, bom: true, quotes: true},
		{files: 4, rows: 1, cols: 1, noFinalNewline: true},
		{files: 2, rows: 3000, cols: 8, labelFiles: true, names: 5},
		{files: 3, rows: 200, cols: 3, trailing: true, labelFiles: true, crlf: true},
		{files: 2, rows: 200, cols: 3, trailing: true, header: true, domainCol: true, labelCol: true, quotes: true, empty: true},
		{files: 3, rows: 300, cols: 4, labelFiles: true, partialLabels: true, empty: true},
		{files: 4, rows: 250, cols: 3, header: true, labelFiles: true, partialLabels: true, crlf: true, quotes: true},
	} {
		rng := rand.New(rand.NewPCG(uint64(k), 99))
		fsys, files, o := genFiles(rng, sh)
		if k%2 == 0 {
			o.Transform = func(x []float64) {
				for j := range x {
					x[j] = math.Log1p(math.Abs(x[j]))
				}
			}
		}
		seq := withWorkers(t, fsys, files, o, -1, 0)
		for _, ps := range parSettings {
			par := withWorkers(t, fsys, files, o, ps.workers, ps.chunk)
			for _, max := range []int{1, 7, 4096} {
				t.Run(fmt.Sprintf("shape%d/w%d/chunk%d/max%d", k, ps.workers, ps.chunk, max), func(t *testing.T) {
					rows, err := lockstep(t, seq, par, max)
					if err != io.EOF {
						t.Fatalf("error %v", err)
					}
					if all := sh.files * sh.rows; rows == 0 || rows > all || o.LabelsIgnore == nil && rows != all {
						t.Errorf("%d rows of %d", rows, all)
					}
				})
			}
		}
	}
}

// TestParallelErrors checks that the parallel pass stops at the same error,
// after the same rows, as the sequential one, and at the expected place.
func TestParallelErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	// Three files of 200 rows of 4 columns, with label files.
	fsys, files, o := genFiles(rng, shape{files: 3, rows: 200, cols: 4, labelFiles: true})
	// lineOf returns the offset of the start of line n (1-based) of s.
	lineOf := func(s []byte, n int) int {
		off := 0
		for range n - 1 {
			off += bytes.IndexByte(s[off:], '\n') + 1
		}
		return off
	}
	replaceLine := func(name string, n int, line string) {
		s := fsys[name].Data
		a := lineOf(s, n)
		b := a + bytes.IndexByte(s[a:], '\n')
		fsys[name] = &fstest.MapFile{Data: slices.Concat(s[:a], []byte(line), s[b:])}
	}
	clone := func(fsys fstest.MapFS) fstest.MapFS {
		c := fstest.MapFS{}
		for k, v := range fsys {
			c[k] = &fstest.MapFile{Data: slices.Clone(v.Data)}
		}
		return c
	}
	base := clone(fsys)
	var gzBad bytes.Buffer
	w := gzip.NewWriter(&gzBad)
	w.Write(base["s2.csv"].Data)
	w.Close()
	// A line of 81 bytes, over the limit of 80 (the lines of the files
	// have at most 72).
	long := "1.5,2.5,3.5," + strings.Repeat("4", 69)
	limit := func(o *Options) { o.MaxLineBytes = len(long) - 1 }
	for _, tc := range []struct {
		name  string
		edit  func()
		files []string
		o     func(*Options)
		want  string
		after func() // changes the files once the sources are made
	}{
		{"bad number in a late chunk", func() { replaceLine("s2.csv", 150, "1,2,x1.5,4") }, nil, nil,
			`ParseError{"s2.csv" 150 3 "cannot parse \"x1.5\" as a number"}`, nil},
		{"short row", func() { replaceLine("s3.csv", 7, "1,2,3") }, nil, nil,
			`ParseError{"s3.csv" 7 0 "3 fields, want 4"}`, nil},
		{"long row", func() { replaceLine("s1.csv", 200, "1,2,3,4,5") }, nil, nil,
			`ParseError{"s1.csv" 200 0 "5 fields, want 4"}`, nil},
		{"quote", func() { replaceLine("s2.csv", 99, `1,"2,3,4`) }, nil, nil,
			`ParseError{"s2.csv" 99 2 "quoted field not closed on its line"}`, nil},
		{"label file shorter", func() { replaceLine("l2.csv", 200, "") }, nil, nil,
			`*errors.errorString l2.csv has 199 lines but s2.csv has 200 rows`, nil},
		{"label file much shorter", func() {
			s := fsys["l3.csv"].Data
			fsys["l3.csv"] = &fstest.MapFile{Data: s[:lineOf(s, 11)]}
		}, nil, nil, `*errors.errorString l3.csv has 10 lines but s3.csv has 200 rows`, nil},
		{"label file longer", func() {
			fsys["l1.csv"] = &fstest.MapFile{Data: append(slices.Clone(fsys["l1.csv"].Data), "c1\n\nc2\n"...)}
		}, nil, nil, `*errors.errorString l1.csv has 202 lines but s1.csv has 200 rows`, nil},
		{"empty label", func() { replaceLine("l2.csv", 50, `""`) }, nil, nil,
			`ParseError{"l2.csv" 50 0 "empty label"}`, nil},
		{"missing file", nil, nil, nil, `*fmt.wrapError csvio: open s3.csv: file does not exist`,
			func() { delete(fsys, "s3.csv") }},
		{"missing label file", nil, nil, nil, `*fmt.wrapError csvio: open l2.csv: file does not exist`,
			func() { delete(fsys, "l2.csv") }},
		{"transform", func() {
			replaceLine("s1.csv", 150, "-7.25,1,2,3")
			replaceLine("l1.csv", 150, "new")
			replaceLine("s1.csv", 160, "-7.25,1,2,3") // ignored
			replaceLine("l1.csv", 160, "c0")
		}, nil, func(o *Options) {
			o.Transform = func(x []float64) {
				if x[0] == -7.25 {
					x[2] = math.Inf(-1)
				}
			}
		}, `ParseError{"s1.csv" 150 3 "transform gives -Inf"}`, nil},
		{"long line", func() { replaceLine("s2.csv", 150, long) }, nil, limit,
			`ParseError{"s2.csv" 150 0 "line longer than 80 bytes, the limit (MaxLineBytes); it starts \"1.5,2.5,3.5,444444444444\"...`, nil},
		{"long line where the labels end", func() {
			replaceLine("s2.csv", 150, long)
			s := fsys["l2.csv"].Data
			fsys["l2.csv"] = &fstest.MapFile{Data: s[:lineOf(s, 150)]}
		}, nil, limit, `ParseError{"s2.csv" 150 0 "line longer than 80 bytes`, nil},
		{"long line after the labels end", func() {
			replaceLine("s2.csv", 150, long)
			s := fsys["l2.csv"].Data
			fsys["l2.csv"] = &fstest.MapFile{Data: s[:lineOf(s, 100)]}
		}, nil, limit, `ParseError{"s2.csv" 150 0 "line longer than 80 bytes`, nil},
		{"long last line", func() {
			s := fsys["s3.csv"].Data
			fsys["s3.csv"] = &fstest.MapFile{Data: append(s[:lineOf(s, 200)], long...)}
		}, nil, limit, `ParseError{"s3.csv" 200 0 "line longer than 80 bytes`, nil},
		{"long label", func() { replaceLine("l3.csv", 20, strings.Repeat("c", 81)) }, nil, limit,
			`ParseError{"l3.csv" 20 0 "line longer than 80 bytes, the limit (MaxLineBytes); it starts \"cccccccccccccccccccccccc\"...`, nil},
		{"long label and long line", func() {
			replaceLine("l3.csv", 20, strings.Repeat("c", 81))
			replaceLine("s3.csv", 20, long)
		}, nil, limit, `ParseError{"s3.csv" 20 0 "line longer than 80 bytes`, nil},
		{"long label after the lines", func() {
			fsys["l1.csv"] = &fstest.MapFile{Data: append(slices.Clone(fsys["l1.csv"].Data), strings.Repeat("c", 90)...)}
		}, nil, limit, `ParseError{"l1.csv" 201 0 "line longer than 80 bytes`, nil},
		{"corrupt gzip", func() {
			b := slices.Clone(gzBad.Bytes())
			b[len(b)/2] ^= 0xff
			fsys["s2.csv.gz"] = &fstest.MapFile{Data: b}
		}, []string{"s1.csv", "s2.csv.gz"}, func(o *Options) { o.LabelFiles = []string{"l1.csv", "l2.csv"} },
			`*fmt.wrapError csvio: s2.csv.gz: flate: corrupt input`, nil},
	} {
		fsys = clone(base)
		if tc.edit != nil {
			tc.edit()
		}
		f, opt := files, o
		opt.LabelFiles = slices.Clone(o.LabelFiles)
		if tc.files != nil {
			f = tc.files
		}
		if tc.o != nil {
			tc.o(&opt)
		}
		seq := withWorkers(t, fsys, f, opt, -1, 0)
		var pars []*Source
		for _, ps := range parSettings {
			pars = append(pars, withWorkers(t, fsys, f, opt, ps.workers, ps.chunk))
		}
		if tc.after != nil {
			tc.after()
		}
		for i, ps := range parSettings {
			for _, max := range []int{1, 64} {
				t.Run(fmt.Sprintf("%s/w%d/chunk%d/max%d", tc.name, ps.workers, ps.chunk, max), func(t *testing.T) {
					rows, err := lockstep(t, seq, pars[i], max)
					if got := errString(err); !strings.HasPrefix(got, tc.want) {
						t.Errorf("error %s\nwant  %s", got, tc.want)
					}
					if rows == 0 && max == 1 {
						t.Errorf("no rows before the error")
					}
				})
			}
		}
	}
}

// TestParallelGOMAXPROCS reads the same data with GOMAXPROCS 1 (the
// sequential pass), 2 and 4.
func TestParallelGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	fsys, files, o := genFiles(rng, shape{files: 2, rows: 2000, cols: 6, labelFiles: true, names: 6, empty: true})
	ref := withWorkers(t, fsys, files, o, -1, 0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		src := withWorkers(t, fsys, files, o, 0, 1024)
		if rows, err := lockstep(t, ref, src, 100); err != io.EOF || rows == 0 {
			t.Errorf("GOMAXPROCS %d: %d rows, %v", procs, rows, err)
		}
	}
}

// settle waits until the number of goroutines is at most n, running the
// garbage collector (for dropped passes), and returns it.
func settle(n int) int {
	var g int
	for range 200 {
		if g = runtime.NumGoroutine(); g <= n {
			return g
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	return g
}

func TestParallelStop(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	fsys, files, o := genFiles(rng, shape{files: 3, rows: 3000, cols: 8, labelFiles: true})
	src := withWorkers(t, fsys, files, o, 3, 1024)
	base := runtime.NumGoroutine()
	var b dataset.Block
	for _, tc := range []struct {
		name string
		stop func(r dataset.Reader, cancel func()) error // stops and returns what Read gives after
	}{
		{"Close", func(r dataset.Reader, cancel func()) error {
			r.Close()
			_, err := r.Read(&b, 10)
			return err
		}},
		{"cancel", func(r dataset.Reader, cancel func()) error {
			cancel()
			_, err := r.Read(&b, 10)
			r.Close()
			return err
		}},
		{"cancel without Close", func(r dataset.Reader, cancel func()) error {
			cancel()
			_, err := r.Read(&b, 10)
			return err
		}},
		{"dropped", func(r dataset.Reader, cancel func()) error { return nil }},
		{"Close at the end", func(r dataset.Reader, cancel func()) error {
			for {
				if _, err := r.Read(&b, 1000); err != nil {
					r.Close()
					return err
				}
			}
		}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		r, err := src.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.(*preader); !ok {
			t.Fatalf("%T, want the parallel pass", r)
		}
		// Read a few rows, enough to fill the chunks in flight.
		for range 5 {
			if n, err := r.Read(&b, 7); n != 7 || err != nil {
				t.Fatalf("%s: Read: %d, %v", tc.name, n, err)
			}
		}
		time.Sleep(10 * time.Millisecond)
		if g := runtime.NumGoroutine(); g != base+4 {
			t.Errorf("%s: %d goroutines during the pass, want %d", tc.name, g, base+4)
		}
		err = tc.stop(r, cancel)
		switch tc.name {
		case "Close":
			if !errors.Is(err, errClosed) {
				t.Errorf("Read after Close: %v", err)
			}
		case "cancel", "cancel without Close":
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Read after cancel: %v", err)
			}
		case "Close at the end":
			if err != io.EOF {
				t.Errorf("end: %v", err)
			}
		}
		r = nil
		if g := settle(base); g > base {
			t.Errorf("%s: %d goroutines left, want %d", tc.name, g, base)
		}
		cancel()
	}
}

// TestParallelCancelWhileReading cancels the context while Read is waiting
// for a slow file.
func TestParallelCancelWhileReading(t *testing.T) {
	base := runtime.NumGoroutine()
	rng := rand.New(rand.NewPCG(51, 52))
	fsys, files, o := genFiles(rng, shape{files: 1, rows: 100, cols: 3})
	src := withWorkers(t, fsys, files, o, 2, 64)
	slow := make(chan struct{})
	open := src.open
	src.open = func(name string) (io.ReadCloser, error) {
		f, err := open(name)
		return slowFile{f, slow}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := src.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	var b dataset.Block
	if _, err := r.Read(&b, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Read: %v", err)
	}
	close(slow)
	r.Close()
	if g := settle(base); g > base {
		t.Errorf("%d goroutines left, want %d", g, base)
	}
}

// slowFile blocks its reads until ready is closed.
type slowFile struct {
	io.ReadCloser
	ready chan struct{}
}

func (f slowFile) Read(p []byte) (int, error) {
	<-f.ready
	return f.ReadCloser.Read(p)
}

// FuzzParallel reads arbitrary bytes (a data file, and after a NUL byte a
// label file) with the sequential pass and with parallel ones with tiny
// chunks: every Read must give the same rows, names and errors.
func FuzzParallel(f *testing.F) {
	// Data files alone, then with label files after a NUL byte.
	for _, s := range append(slices.Clip(csvSeeds),
		"1,2\n\n3,4\n\x001\n0\n",
		"1,2\n3,4\n5,6\x00a\n\nb\n",
		"1,2\n3,4\n5,6\x00a\nb\n",
		"1,2\n3,4\x00a\nb\nc\n",
		"1,2\n3,4\n555555,6\n7,8\n\x001\n2\n3\n",
		"1,2\n3,4\n555555,6\n7,8\n\x001\n2\n",
		"1,2\n3,4\n5,6\n\x001\n222222\n3\n",
		"1,2\n3,4\n5,6\n7,8\x001\n0\n0\n0\n",
	) {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(2))
		f.Add([]byte(s), uint8(8))
		f.Add([]byte(s), uint8(16+32*3))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		data, lab, hasLab := bytes.Cut(in, []byte{0})
		fsys := fstest.MapFS{"f.csv": {Data: data}, "l.csv": {Data: lab}}
		o := Options{Header: HeaderMode(mode % 3)}
		if mode&4 != 0 {
			o.Comma = ';'
		}
		if hasLab {
			o.LabelFiles = []string{"l.csv"}
			o.LabelsIgnore = []string{"0"}
		} else if mode&8 != 0 {
			o.Domain = "2"
		}
		if mode&16 != 0 {
			o.MaxLineBytes = 1 + int(mode>>5) // 1 to 8 bytes
		}
		seq, err := NewSourceFS(fsys, []string{"f.csv"}, o)
		if err != nil {
			return
		}
		seq.workers = -1
		wantX, wantY, wantErr := readRows(t, seq)
		for _, ps := range []struct{ workers, chunk int }{{1, 1}, {2, 7}, {3, 64}} {
			par, err := NewSourceFS(fsys, []string{"f.csv"}, o)
			if err != nil {
				t.Fatal(err)
			}
			par.workers, par.chunkSize = ps.workers, ps.chunk
			lockstep(t, seq, par, 2)
			// Skimming every row decodes what Read hands out; it stops at
			// the same error unless that error is in a row of an ignored
			// label, which a skim does not check.
			_, x, y, n, err := skimRows(par, func(int64) bool { return true })
			switch {
			case wantErr == nil && err != nil:
				t.Fatalf("skim: %s", errString(err))
			case wantErr == nil:
				if n != int64(len(wantX)) {
					t.Fatalf("skim: %d rows, want %d", n, len(wantX))
				}
				for i := range wantX {
					if !sameBits(x[i], wantX[i]) || !sameBits(y[i], wantY[i]) {
						t.Fatalf("skim: row %d = %v, want %v", i, x[i], wantX[i])
					}
				}
			case !hasLab && errString(err) != errString(wantErr):
				t.Fatalf("skim: error %s, want %s", errString(err), errString(wantErr))
			}
		}
	})
}

// TestCountNonEmpty compares countNonEmpty with a count by lineReader on
// random texts of newlines, carriage returns, byte order marks and letters.
func TestCountNonEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	parts := []string{"\n", "\r", "\r\n", "\uFEFF", "a", "bc", " "}
	for i := range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		data := []byte(b.String())
		first := 1 + i%3
		var l lineReader
		l.reset(bytes.NewReader(data), 16, DefaultMaxLineBytes)
		want := 0
		for {
			line, ok := l.next()
			if !ok {
				break
			}
			if l.line == 1 && first == 1 {
				line = bytes.TrimPrefix(line, bom)
			}
			if len(line) > 0 {
				want++
			}
		}
		if got := countNonEmpty(data, first); got != want {
			t.Fatalf("countNonEmpty(%q, %d) = %d, want %d", data, first, got, want)
		}
		if got, want := newlinePair(data), bytes.Contains(data, []byte("\n\n")) || bytes.Contains(data, []byte("\n\r")); got != want {
			t.Fatalf("newlinePair(%q) = %v", data, got)
		}
	}
}

// TestNameTable numbers random names, short and long, more than the linear
// search holds, and compares with a map.
func TestNameTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	var nt nameTable
	for _, distinct := range []int{3, 16, 17, 40} {
		nt.reset()
		ref := map[string]int32{}
		for range 2000 {
			k := rng.IntN(distinct)
			s := strings.Repeat("x", k%10) + strconv.Itoa(k)
			want, seen := ref[s]
			if !seen {
				want = int32(len(ref))
				ref[s] = want
			}
			got, isNew := nt.id([]byte(s))
			if got != want || isNew == seen || string(nt.name(got)) != s {
				t.Fatalf("%d names: id(%q) = %d, %v; want %d, %v", distinct, s, got, isNew, want, !seen)
			}
		}
		if nt.len() != len(ref) {
			t.Errorf("%d names, want %d", nt.len(), len(ref))
		}
	}
	if pack([]byte("")) == pack([]byte("\x00")) || pack([]byte("a")) == pack([]byte("a\x00")) || pack([]byte("abcdefgh")) != noKey {
		t.Error("pack confuses names")
	}
}

// TestParallelBounded checks that a pass over many chunks uses at most
// 2*workers+1 of them, on two passes (the second with the chunks of the
// first).
func TestParallelBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	fsys, files, o := genFiles(rng, shape{files: 2, rows: 500, cols: 4, labelFiles: true})
	for _, workers := range []int{1, 3} {
		src := withWorkers(t, fsys, files, o, workers, 64)
		for pass := range 2 {
			r, err := src.Open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var b dataset.Block
			for {
				if _, err := r.Read(&b, 1); err != nil {
					break
				}
			}
			p := r.(*preader).p
			if p.made > 2*workers+1 || p.made < 2 {
				t.Errorf("%d workers, pass %d: %d chunks for about %d", workers, pass, p.made, len(fsys["s1.csv"].Data)/32)
			}
			r.Close()
		}
	}
}
