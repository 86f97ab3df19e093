package csvio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
)

// readRows reads every row of src: inputs and targets, row after row.
func readRows(t *testing.T, src dataset.Source) (x, y [][]float64, err error) {
	t.Helper()
	r, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b dataset.Block
	for {
		k, err := r.Read(&b, 100)
		if err == io.EOF {
			return x, y, nil
		}
		if err != nil {
			return x, y, err
		}
		for i := range k {
			x = append(x, append([]float64(nil), b.Row(i)...))
			y = append(y, append([]float64(nil), b.Target[i*b.T:(i+1)*b.T]...))
		}
	}
}

// skimRows skims src keeping the rows keep selects; it returns the indices
// of the rows put, their values and the number of rows.
func skimRows(src *Source, keep func(int64) bool) (idx []int64, x, y [][]float64, n int64, err error) {
	var last int64 = -1
	n, err = src.Skim(context.Background(), func(i int64) bool {
		if i != last+1 {
			panic(fmt.Sprintf("keep(%d) after keep(%d)", i, last))
		}
		last = i
		return keep(i)
	}, func(xr, yr []float64) error {
		idx = append(idx, last)
		x = append(x, append([]float64(nil), xr...))
		y = append(y, append([]float64(nil), yr...))
		return nil
	})
	return idx, x, y, n, err
}

// TestSkimMatchesRead checks that Skim numbers the rows as Read hands them
// out and decodes the kept ones to the same bits, on the shapes of
// TestParallelMatchesSequential (headers, label files with ignored labels,
// empty lines, CRLF, byte order marks, quotes, gzip, a transform) with chunk
// boundaries everywhere.
func TestSkimMatchesRead(t *testing.T) {
	keeps := map[string]func(int64) bool{
		"all":    func(int64) bool { return true },
		"none":   func(int64) bool { return false },
		"third":  func(i int64) bool { return i%3 == 1 },
		"random": func(i int64) bool { return (uint64(i)*0x9e3779b97f4a7c15)>>60 < 3 },
	}
	for k, sh := range []shape{
		{files: 3, rows: 300, cols: 8, labelFiles: true},
		{files: 2, rows: 200, cols: 5, header: true, crlf: true, labelFiles: true, empty: true, quotes: true, bom: true},
		{files: 2, rows: 250, cols: 3, header: true, domainCol: true, labelCol: true, names: 4, quotes: true},
		{files: 1, rows: 400, cols: 2, domainCol: true, empty: true, crlf: true, bom: true},
		{files: 3, rows: 150, cols: 4, gz: true, labelFiles: true, noFinalNewline: true, crlf: true},
		{files: 2, rows: 100, cols: 3, header: true, target: true, noFinalNewline: true, empty: true},
		{files: 2, rows: 60, cols: 2, longField: 3000, labelFiles: true, bom: true, quotes: true},
		{files: 4, rows: 1, cols: 1, noFinalNewline: true},
		{files: 3, rows: 200, cols: 3, trailing: true, labelFiles: true, crlf: true},
		{files: 2, rows: 200, cols: 3, trailing: true, header: true, domainCol: true, quotes: true, empty: true},
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
		wantX, wantY, err := readRows(t, withWorkers(t, fsys, files, o, -1, 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range append(parSettings, struct{ workers, chunk int }{-1, 0}) {
			src := withWorkers(t, fsys, files, o, ps.workers, ps.chunk)
			for name, keep := range keeps {
				idx, x, y, n, err := skimRows(src, keep)
				where := fmt.Sprintf("shape %d, workers %d, chunk %d, keep %s", k, ps.workers, ps.chunk, name)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if n != int64(len(wantX)) {
					t.Fatalf("%s: %d rows, want %d", where, n, len(wantX))
				}
				want := 0
				for i := range n {
					if keep(i) {
						want++
					}
				}
				if len(idx) != want {
					t.Fatalf("%s: %d rows put, want %d", where, len(idx), want)
				}
				for p, i := range idx {
					if !sameBits(x[p], wantX[i]) || !sameBits(y[p], wantY[i]) {
						t.Fatalf("%s: row %d = %v %v, want %v %v", where, i, x[p], y[p], wantX[i], wantY[i])
					}
				}
			}
		}
	}
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestSkimErrors checks that a kept row's error is the one Read reports
// (file, line, column, message), that a row not kept is not checked, and
// that errors of the pass itself, of put and of the context come out.
func TestSkimErrors(t *testing.T) {
	// Line 1 is the header, line 4 is empty and line 5 has an ignored
	// label, so rows 0..4 are lines 2, 3, 6, 7, 8. Row 2 (line 6) has a bad
	// number in column 2; row 4 (line 8) gives -Inf under log.
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("a,b\n1,2\n3,4\n\n5,6\n7,x\n8,9\n0,1\n")},
		"l1.csv": {Data: []byte("p\np\nq\np\np\np\n")},
	}
	o := Options{LabelFiles: []string{"l1.csv"}, LabelsIgnore: []string{"q"}, Header: WithHeader,
		Transform: func(x []float64) {
			for j := range x {
				x[j] = math.Log(x[j])
			}
		}}
	src := withWorkers(t, fsys, []string{"s1.csv"}, o, 2, 8)
	_, _, readErr := readRows(t, src)
	var pe *ParseError
	if !errors.As(readErr, &pe) || pe.Line != 6 || pe.Column != 2 {
		t.Fatalf("Read: %s", errString(readErr))
	}
	for _, c := range []struct {
		keep    int64
		wantErr string
	}{
		{2, errString(readErr)},
		{4, `ParseError{"s1.csv" 8 1 "transform gives -Inf"}`},
		{0, "<nil>"},
		{-1, "<nil>"},
	} {
		_, _, _, n, err := skimRows(src, func(i int64) bool { return i == c.keep })
		if errString(err) != c.wantErr {
			t.Errorf("keep row %d: error %s, want %s", c.keep, errString(err), c.wantErr)
		}
		if err == nil && n != 5 {
			t.Errorf("keep row %d: %d rows, want 5", c.keep, n)
		}
	}

	// A label file shorter than its data file: the error of Read, whatever
	// is kept.
	fsys["l2.csv"] = &fstest.MapFile{Data: []byte("p\np\n")}
	o2 := Options{LabelFiles: []string{"l2.csv"}, Header: WithHeader}
	short := withWorkers(t, fsys, []string{"s1.csv"}, o2, 2, 8)
	_, _, want := readRows(t, withWorkers(t, fsys, []string{"s1.csv"}, o2, -1, 0))
	if want == nil {
		t.Fatal("no error for a short label file")
	}
	if _, _, _, _, err := skimRows(short, func(int64) bool { return false }); errString(err) != errString(want) {
		t.Errorf("short label file: %s, want %s", errString(err), errString(want))
	}

	// put's error, and a cancelled context.
	good := withWorkers(t, fsys, []string{"s1.csv"}, Options{Header: WithHeader}, 2, 8)
	stop := errors.New("stop")
	if _, err := good.Skim(context.Background(), func(int64) bool { return true }, func(x, y []float64) error { return stop }); err != stop {
		t.Errorf("put error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := good.Skim(ctx, func(int64) bool { return true }, func(x, y []float64) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
