package tabletest

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// TestWriteCSV: three files of rows, rows + 37 and rows + 74 data lines
// under the header; column j of row i is written in notation (i + j) mod 4;
// the populations follow PopStep; the same seed writes the same bytes and
// another seed other values.
func TestWriteCSV(t *testing.T) {
	dir := t.TempDir()
	c := CSV{Seed: 7, Stream: 11, PopStep: 7}
	files := WriteCSV(t, dir, 20, c)
	require.Equal(t, []string{filepath.Join(dir, "s1.csv"), filepath.Join(dir, "s2.csv"), filepath.Join(dir, "s10.csv")}, files)
	for f, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		require.Equal(t, "CD3,CD4,CD8,CD19,pop", lines[0])
		require.Len(t, lines, 1+20+37*f)
		for i, l := range lines[1:] {
			fields := strings.Split(l, ",")
			require.Len(t, fields, 5)
			require.Equal(t, Pops[(i*7+f)%4], fields[4], "file %d row %d", f, i)
			for j, v := range fields[:4] {
				x, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err)
				switch (i + j) % 4 {
				case 0:
					require.Equal(t, strconv.FormatFloat(x, 'g', -1, 64), v)
				case 1:
					require.Contains(t, v, "e", "row %d column %d", i, j)
					require.Equal(t, strconv.FormatFloat(x, 'e', 17, 64), v)
				case 2:
					require.Equal(t, strconv.FormatFloat(x, 'f', 3, 64), v)
				default:
					require.Equal(t, strconv.Itoa(int(x)), v)
					require.True(t, x >= 0 && x < 5000)
				}
			}
		}
	}
	again := WriteCSV(t, t.TempDir(), 20, c)
	other := WriteCSV(t, t.TempDir(), 20, CSV{Seed: 3, Stream: 5, PopStep: 7})
	a, _ := os.ReadFile(files[2])
	b, _ := os.ReadFile(again[2])
	o, _ := os.ReadFile(other[2])
	require.Equal(t, a, b)
	require.NotEqual(t, a, o)
}

func TestProjectAndSameBits(t *testing.T) {
	require.Equal(t, []float64{1 - 2*3, 2 * 4.0 / 7}, Project([]float64{1, 2, 3, 4}))
	nan := math.NaN()
	for _, tc := range []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, 2}, []float64{1, 2}, true},
		{[]float64{1, nan}, []float64{1, nan}, true},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{1, 2}, []float64{1, 2, 3}, false},
		{[]float64{1, 2}, []float64{1, math.Nextafter(2, 3)}, false},
		{nil, []float64{}, true},
	} {
		require.Equal(t, tc.want, SameBits(tc.a, tc.b), "%v %v", tc.a, tc.b)
	}
}

// recorder is a Writer that keeps what it is given.
type recorder struct {
	rows              [][]float64
	z                 [][]float64
	domains, classes  []string
	committed, aborts int
}

func (r *recorder) WriteBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	for i := 0; i < b.Rows; i++ {
		r.rows = append(r.rows, append([]float64(nil), b.Row(i)...))
		r.z = append(r.z, append([]float64(nil), z.RawRowView(i)...))
	}
	r.domains, r.classes = domains, classes
	return nil
}

func (r *recorder) Commit() error { r.committed++; return nil }
func (r *recorder) Abort()        { r.aborts++ }

// TestTransform: the writer is created once with the path and options
// given; every row of the source reaches it once, in order, with its
// projection; it is committed once, and the deferred Abort follows.
func TestTransform(t *testing.T) {
	x := mat.NewDense(7, 4, nil)
	for i := 0; i < 7; i++ {
		for j := 0; j < 4; j++ {
			x.Set(i, j, float64(10*i+j))
		}
	}
	ds, err := dataset.New(x, []string{"a", "a", "b", "b", "b", "c", "c"})
	require.NoError(t, err)
	var w recorder
	var created []string
	create := func(path string, o int) (*recorder, error) {
		created = append(created, fmt.Sprint(path, o))
		return &w, nil
	}
	Transform(t, ds.Source(), create, "out", 42, 3)
	require.Equal(t, []string{"out42"}, created)
	require.Len(t, w.rows, 7)
	for i := range w.rows {
		require.Equal(t, x.RawRowView(i), w.rows[i])
		require.Equal(t, Project(x.RawRowView(i)), w.z[i])
	}
	require.Equal(t, []string{"a", "b", "c"}, w.domains)
	require.Equal(t, 1, w.committed)
	require.Equal(t, 1, w.aborts)
}

// fatalRecorder records the messages of Fatalf instead of stopping.
type fatalRecorder struct {
	testing.TB
	msgs []string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// values is a source of one input column holding vals, one domain, whose
// Len says n.
type values struct {
	vals []float64
	n    int
}

func (s values) Schema() dataset.Schema { return dataset.Schema{Features: []string{"x"}} }
func (s values) Len() int               { return s.n }
func (s values) Open(context.Context) (dataset.Reader, error) {
	return &valuesReader{vals: s.vals}, nil
}

type valuesReader struct{ vals []float64 }

func (r *valuesReader) Read(b *dataset.Block, max int) (int, error) {
	if len(r.vals) == 0 {
		return 0, io.EOF
	}
	k := min(max, len(r.vals))
	b.Reset(k, 1, false, 0)
	copy(b.X, r.vals[:k])
	b.Rows = k
	r.vals = r.vals[k:]
	return k, nil
}
func (r *valuesReader) Domains() []string { return []string{"a"} }
func (r *valuesReader) Classes() []string { return nil }
func (r *valuesReader) Close() error      { return nil }

// TestCheckRead: finite values within Len pass; a non-finite value and
// more rows than Len fail; a source whose pass fails is accepted (the
// input was refused).
func TestCheckRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  Source
		want []string
	}{
		{"finite", values{[]float64{1, 2}, 2}, nil},
		{"NaN", values{[]float64{1, math.NaN()}, 2}, []string{"non-finite value NaN read"}},
		{"Inf", values{[]float64{math.Inf(-1), 1}, 2}, []string{"non-finite value -Inf read"}},
		{"more than Len", values{[]float64{1, 2}, 1}, []string{"2 rows read; Len says 1"}},
		{"refused", failing{}, nil},
	} {
		f := &fatalRecorder{TB: t}
		CheckRead(f, tc.src)
		require.Equal(t, tc.want, f.msgs, tc.name)
	}
}

// failing is a source whose pass cannot start.
type failing struct{ values }

func (failing) Open(context.Context) (dataset.Reader, error) {
	return nil, fmt.Errorf("refused")
}
