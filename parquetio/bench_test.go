package parquetio

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// benchRows, benchVars and benchComps size the blocks of the writer
// benchmarks: blocks of 4096 cells of 8 channels and 2 components with a
// domain and a label, as dica transform writes them.
const (
	benchRows  = 4096
	benchVars  = 8
	benchComps = 2
)

// benchBlock is a block of cells in 4 domains and 5 classes and its
// components.
func benchBlock() (*dataset.Block, *mat.Dense) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := &dataset.Block{Rows: benchRows, D: benchVars, X: make([]float64, benchRows*benchVars),
		Domain: make([]int, benchRows), Label: make([]int, benchRows)}
	for i := range b.X {
		b.X[i] = rng.NormFloat64() * 100
	}
	for i := range b.Domain {
		b.Domain[i], b.Label[i] = rng.IntN(4), rng.IntN(5)
	}
	z := mat.NewDense(benchRows, benchComps, nil)
	for i := 0; i < benchRows; i++ {
		z.Set(i, 0, rng.NormFloat64())
		z.Set(i, 1, rng.NormFloat64())
	}
	return b, z
}

var (
	benchDomains = []string{"sample1", "sample2", "sample3", "sample4"}
	benchClasses = []string{"T cell", "B cell", "NK", "monocyte", "ungated"}
)

func benchNames(prefix string, n int) []string {
	v := make([]string, n)
	for j := range v {
		v[j] = prefix + string(rune('1'+j))
	}
	return v
}

// reportPerValue reports the time per value written (values: per block),
// and the CPU time per value since cpu0, which a machine shared with other
// jobs disturbs less.
func reportPerValue(b *testing.B, values int, cpu0 time.Duration) {
	v := float64(b.N) * float64(values)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/v, "ns/value")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/v, "cpu-ns/value")
}

// BenchmarkWriteBlock writes blocks of the layout of WriterOptions.Vars and
// Components (snappy, row groups of DefaultRowGroupRows).
func BenchmarkWriteBlock(b *testing.B) {
	blk, z := benchBlock()
	w, err := Create(filepath.Join(b.TempDir(), "o.parquet"), WriterOptions{Vars: benchNames("c", benchVars), Components: benchNames("DICA", benchComps)})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := w.WriteBlock(blk, z, benchDomains, benchClasses); err != nil {
			b.Fatal(err)
		}
	}
	reportPerValue(b, benchRows*(2+benchVars+benchComps), cpu0)
}

// BenchmarkWrite writes the cells of BenchmarkWriteBlock as Rows to a file
// laid out by WriterOptions.Columns: the domain and the label as Text, the
// channels and components as Float64, row-major.
func BenchmarkWrite(b *testing.B) {
	blk, z := benchBlock()
	cols := []Column{{"domain", Text}, {"label", Text}}
	for _, c := range slices.Concat(benchNames("c", benchVars), benchNames("DICA", benchComps)) {
		cols = append(cols, Column{c, Float64})
	}
	nf := benchVars + benchComps
	r := &Rows{N: benchRows, Codes: [][]int{blk.Domain, blk.Label}, Names: [][]string{benchDomains, benchClasses}, Floats: make([]float64, benchRows*nf)}
	for i := 0; i < benchRows; i++ {
		copy(r.Floats[i*nf:], blk.Row(i))
		copy(r.Floats[i*nf+benchVars:], z.RawRowView(i))
	}
	w, err := Create(filepath.Join(b.TempDir(), "o.parquet"), WriterOptions{Columns: cols})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := w.Write(r); err != nil {
			b.Fatal(err)
		}
	}
	reportPerValue(b, benchRows*len(cols), cpu0)
}
