package csvio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/sourcetest"
)

// TestNumericColumns: the columns whose first rows hold numbers, with
// headers, trailing separators, quotes, several files and the row limit;
// errors as a pass gives them.
func TestNumericColumns(t *testing.T) {
	ctx := context.Background()
	fsys := mapFS(
		"mixed.csv", "id,CD4,name,CD8,flag\n1,2.5,a,3,x\n2,-1e3,b,4,7\n3,.5,c,\"5\",y\n4,7,d,NaN,z\n",
		"trail.csv", "1,x,2,\n3,4,5,\n",
		"short.csv", "1,2,3\n4,5,6\n",
		"later.csv", "7,8,9\n10,z,12\n",
		"go.csv", "0x1p3,1_000,1e1_0,1e5\n",
		"empty.csv", "1,,3\n4,5,6\n",
		"ragged.csv", "1,2,3\n4,5\n",
		"quote.csv", "1,2,3\n4,\"5,6\n",
		"hdr.csv", "a,b\n1,x\n",
		"hdr2.csv", "a,b\n\ny,2\n",
	)
	for _, tc := range []struct {
		files []string
		o     Options
		rows  int
		want  []int
		err   string
	}{
		{[]string{"mixed.csv"}, Options{}, 64, []int{0, 1}, ""},
		{[]string{"mixed.csv"}, Options{}, 3, []int{0, 1, 3}, ""}, // NaN on the fourth row
		{[]string{"mixed.csv"}, Options{}, 1, []int{0, 1, 3}, ""},
		{[]string{"trail.csv"}, Options{Header: NoHeader}, 64, []int{0, 2}, ""},
		{[]string{"short.csv", "later.csv"}, Options{}, 2, []int{0, 1, 2}, ""},
		{[]string{"short.csv", "later.csv"}, Options{}, 3, []int{0, 1, 2}, ""},
		{[]string{"short.csv", "later.csv"}, Options{}, 4, []int{0, 2}, ""},
		{[]string{"go.csv"}, Options{Header: NoHeader}, 64, []int{3}, ""},
		{[]string{"empty.csv"}, Options{}, 64, []int{0, 2}, ""},
		{[]string{"hdr.csv", "hdr2.csv"}, Options{}, 64, nil, ""},
		{[]string{"hdr.csv", "hdr2.csv"}, Options{}, 1, []int{0}, ""},
		{[]string{"ragged.csv"}, Options{}, 64, nil, "ragged.csv:2: 2 fields, want 3"},
		{[]string{"ragged.csv"}, Options{}, 1, []int{0, 1, 2}, ""},
		{[]string{"quote.csv"}, Options{}, 64, nil, "quote.csv:2: column 2: quoted field not closed on its line"},
		{[]string{"mixed.csv"}, Options{MaxLineBytes: 12}, 64, nil, "mixed.csv:1: line longer than 12 bytes"},
		{[]string{"mixed.csv"}, Options{}, 0, nil, "csvio: NumericColumns of 0 rows; want at least 1"},
	} {
		name := fmt.Sprintf("%s/%d", strings.Join(tc.files, "+"), tc.rows)
		src, err := NewSourceFS(fsys, tc.files, tc.o)
		if err != nil {
			if tc.err == "" || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: NewSource: %v", name, err)
			}
			continue
		}
		got, err := src.NumericColumns(ctx, tc.rows)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", name, got, err, tc.want)
		}
	}
	src, err := NewSourceFS(fsys, []string{"mixed.csv"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	var nilSrc *Source
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"cancelled", func() error { _, err := src.NumericColumns(done, 5); return err }()},
		{"nil context", func() error { _, err := src.NumericColumns(nilCtx, 5); return err }()},
		{"nil Source", func() error { _, err := nilSrc.NumericColumns(ctx, 5); return err }()},
		{"zero Source", func() error { _, err := new(Source).NumericColumns(ctx, 5); return err }()},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := src.NumericColumns(done, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestNumericColumnsAgainstPasses compares NumericColumns on random files
// with its reference: a pass reading the first rows of each column alone,
// which fails exactly for the columns that are not numeric.
func TestNumericColumnsAgainstPasses(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	fields := []string{"1", "-2.5", ".5e3", "\"7\"", " 8 ", "x", "", "NaN", "0x1p3", "1e999", "\"a,b\""}
	for trial := 0; trial < 300; trial++ {
		ncol := 1 + rng.IntN(6)
		nfiles := 1 + rng.IntN(3)
		header := rng.IntN(2) == 0
		fsys := fstest.MapFS{}
		var files []string
		for f := 0; f < nfiles; f++ {
			var sb strings.Builder
			if header {
				for j := 0; j < ncol; j++ {
					if j > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, "c%d", j)
				}
				sb.WriteByte('\n')
			}
			for i := 1 + rng.IntN(4); i > 0; i-- {
				for j := 0; j < ncol; j++ {
					if j > 0 {
						sb.WriteByte(',')
					}
					// Mostly numbers, so that many columns stay numeric;
					// no empty last field (the end of a line that ends
					// with the separator).
					f := fields[rng.IntN(5)]
					if rng.IntN(4) == 0 {
						f = fields[rng.IntN(len(fields))]
					}
					if f == "" && j == ncol-1 {
						f = "y"
					}
					sb.WriteString(f)
				}
				sb.WriteByte('\n')
			}
			name := "f" + strconv.Itoa(f) + ".csv"
			fsys[name] = &fstest.MapFile{Data: []byte(sb.String())}
			files = append(files, name)
		}
		mode := NoHeader
		if header {
			mode = WithHeader
		}
		rows := 1 + rng.IntN(8)
		src, err := NewSourceFS(fsys, files, Options{Header: mode})
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.NumericColumns(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for j := 0; j < ncol; j++ {
			one, err := NewSourceFS(fsys, files, Options{Header: mode, Features: []string{strconv.Itoa(j + 1)}})
			if err != nil {
				t.Fatal(err)
			}
			one.workers = -1
			r, err := one.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var b dataset.Block
			_, err = r.Read(&b, rows)
			r.Close()
			var pe *ParseError
			switch {
			case err == nil || errors.Is(err, io.EOF):
				want = append(want, j)
			case !errors.As(err, &pe) || pe.Column != j+1:
				t.Fatalf("trial %d, column %d: %v", trial, j, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d rows): %v, want %v; files %v", trial, rows, got, want, fsys)
		}
	}
}

// BenchmarkNumericColumns finds the numeric columns of the first 64 rows
// of a file of 1,000 and 30,000 columns, every other one text: the time
// per column stays the same (one read of the rows, linear in their bytes).
func BenchmarkNumericColumns(b *testing.B) {
	for _, ncol := range []int{1000, 30000} {
		b.Run(fmt.Sprintf("columns=%d", ncol), func(b *testing.B) {
			var sb strings.Builder
			for i := 0; i < 100; i++ {
				for j := 0; j < ncol; j++ {
					if j > 0 {
						sb.WriteByte(',')
					}
					if j%2 == 0 {
						sb.WriteString(strconv.FormatFloat(float64(i*j)/7, 'g', 6, 64))
					} else {
						sb.WriteString("cell")
					}
				}
				sb.WriteByte('\n')
			}
			fsys := fstest.MapFS{"wide.csv": {Data: []byte(sb.String())}}
			src, err := NewSourceFS(fsys, []string{"wide.csv"}, Options{Header: NoHeader})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(sb.String()) * 64 / 100))
			for b.Loop() {
				got, err := src.NumericColumns(context.Background(), 64)
				if err != nil || len(got) != (ncol+1)/2 {
					b.Fatalf("%d numeric columns, %v", len(got), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ncol), "ns/column")
		})
	}
}

// BenchmarkNewSourceWide makes a Source of a file of 30,000 columns with a
// header, selecting every other column by position: resolving the
// references takes time linear in the columns.
func BenchmarkNewSourceWide(b *testing.B) {
	const ncol = 30000
	var sb strings.Builder
	for _, row := range []string{"CD", "1"} {
		for j := 0; j < ncol; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(row + strconv.Itoa(j))
		}
		sb.WriteByte('\n')
	}
	fsys := fstest.MapFS{"wide.csv": {Data: []byte(sb.String())}}
	var features []string
	for j := 1; j <= ncol; j += 2 {
		features = append(features, strconv.Itoa(j))
	}
	for b.Loop() {
		src, err := NewSourceFS(fsys, []string{"wide.csv"}, Options{Features: features})
		if err != nil || len(src.Schema().Features) != ncol/2 {
			b.Fatal(err)
		}
	}
}

// TestPassBytes: PassBytes bounds what a pass allocates (which bounds the
// memory it holds), sequential and parallel, with short lines and with
// lines near the limit.
func TestPassBytes(t *testing.T) {
	short := strings.Repeat("1.5,2,3.25,4\n", 200_000)
	long := strings.Repeat(strings.Repeat("7,", 20_000)+"7\n", 100)
	for _, tc := range []struct {
		name    string
		data    string
		o       Options
		workers int
	}{
		{"short, sequential", short, Options{}, -1},
		{"short, 2 workers", short, Options{}, 2},
		{"long lines, 2 workers", long, Options{MaxLineBytes: 64 << 10}, 2},
		{"long lines, sequential", long, Options{MaxLineBytes: 64 << 10}, -1},
	} {
		fsys := fstest.MapFS{"f.csv": {Data: []byte(tc.data)}}
		src, err := NewSourceFS(fsys, []string{"f.csv"}, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		src.workers = tc.workers
		got, bound := sourcetest.PassAlloc(t, src), src.PassBytes()
		t.Logf("%s: a pass allocates %.2f MB, PassBytes %.2f MB", tc.name, float64(got)/1e6, float64(bound)/1e6)
		if got > uint64(bound) {
			t.Errorf("%s: a pass allocates %d bytes, over PassBytes %d", tc.name, got, bound)
		}
	}
}
