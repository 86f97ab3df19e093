// Package tabletest holds the test support shared by the tests of the
// streamed table formats (packages anndata and parquetio): a CSV fixture
// of several domains whose values are written in several notations, the
// transform that streams a source through a writer as dica transform does,
// a stand-in for a model's projection, a bitwise comparison of values, and
// the check a fuzz target makes of what a reader reads.
//
// It is imported only by tests.
package tabletest

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// Channels are the input columns of the CSV fixture.
var Channels = []string{"CD3", "CD4", "CD8", "CD19"}

// CSV describes the fixture WriteCSV writes: the PCG seed of the values
// (Seed, Stream) and the step of the populations (row i of file f has
// population Pops[(i*PopStep+f) mod 4]).
type CSV struct {
	Seed, Stream uint64
	PopStep      int
}

// Pops are the populations of the CSV fixture's label column.
var Pops = []string{"T", "B", "NK", "mono"}

// WriteCSV writes three CSV files s1.csv, s2.csv and s10.csv into dir (one
// domain each, a header, the Channels and a label column "pop") and
// returns their paths. File f holds rows + 37 f rows. The values are
// normal draws scaled by 10^-3 to 10^3, written in turn with the shortest
// 'g' form, 17 digits of 'e', 3 decimals of 'f' (decimals such as 0.1 that
// binary cannot hold) and as integers, so that a reader must parse each
// notation exactly.
func WriteCSV(t testing.TB, dir string, rows int, c CSV) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.Seed, c.Stream))
	var files []string
	for f, name := range []string{"s1", "s2", "s10"} {
		var sb strings.Builder
		sb.WriteString(strings.Join(Channels, ",") + ",pop\n")
		for i := 0; i < rows+f*37; i++ {
			for j := range Channels {
				v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
				switch (i + j) % 4 {
				case 0:
					sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				case 1:
					sb.WriteString(strconv.FormatFloat(v, 'e', 17, 64))
				case 2:
					sb.WriteString(strconv.FormatFloat(v, 'f', 3, 64))
				default:
					sb.WriteString(strconv.Itoa(rng.IntN(5000)))
				}
				sb.WriteByte(',')
			}
			sb.WriteString(Pops[(i*c.PopStep+f)%len(Pops)] + "\n")
		}
		p := filepath.Join(dir, name+".csv")
		require.NoError(t, os.WriteFile(p, []byte(sb.String()), 0o666))
		files = append(files, p)
	}
	return files
}

// Project is the tests' stand-in for a model: z = [x1 - 2 x3, x2 x4 / 7].
func Project(x []float64) []float64 {
	return []float64{x[0] - 2*x[2], x[1] * x[3] / 7}
}

// Writer is what the writers of anndata and parquetio have in common.
type Writer interface {
	WriteBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error
	Commit() error
	Abort()
}

// Transform creates a writer at path with options o (create is the
// package's Create), streams src through it in blocks of blockRows rows,
// the way dica transform does, with the components of each row given by
// Project, and commits it. It fails t on any error.
func Transform[O any, W Writer](t testing.TB, src dataset.Source, create func(path string, o O) (W, error), path string, o O, blockRows int) {
	t.Helper()
	w, err := create(path, o)
	require.NoError(t, err)
	defer w.Abort()
	r, err := src.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	var b dataset.Block
	for {
		k, err := r.Read(&b, blockRows)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		z := mat.NewDense(k, 2, nil)
		for i := 0; i < k; i++ {
			z.SetRow(i, Project(b.Row(i)))
		}
		require.NoError(t, w.WriteBlock(&b, z, r.Domains(), r.Classes()))
	}
	require.NoError(t, w.Commit())
}

// SameBits reports whether a and b have the same length and the same bits
// at every position (so NaNs of the same payload are equal and 0 and -0
// differ).
func SameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// Source is a dataset.Source that knows its number of rows, as the
// sources of anndata and parquetio do.
type Source interface {
	dataset.Source
	dataset.Sizer
}

// CheckRead is the check of a fuzz target on an input the reader accepted:
// a pass over src may end in an error (the input is refused, which is
// fine), but every value it hands out before must be finite, and it must
// not give more rows than src.Len says. The blocks are checked as they are
// read, not through dataset.Collect, whose own validation would turn a
// non-finite value into an error and hide it.
func CheckRead(t testing.TB, src Source) {
	t.Helper()
	r, err := src.Open(context.Background())
	if err != nil {
		return
	}
	defer r.Close()
	var b dataset.Block
	rows := 0
	for {
		k, err := r.Read(&b, 4096)
		if k < 0 || k > 4096 || k*b.D > len(b.X) {
			t.Fatalf("Read gave %d rows of %d values in a block of %d values", k, b.D, len(b.X))
			return
		}
		for _, v := range b.X[:k*b.D] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %v read", v)
				return
			}
		}
		rows += k
		if err != nil {
			break
		}
	}
	if rows > src.Len() {
		t.Fatalf("%d rows read; Len says %d", rows, src.Len())
	}
}
