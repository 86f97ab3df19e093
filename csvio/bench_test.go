package csvio

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// reportCPU reports the throughput in CPU time (of all the goroutines of
// the process) as cpu-MB/s, a steadier number than MB/s on a loaded machine;
// with parallel parsing MB/s exceeds it when the cores are free.
func reportCPU(b *testing.B, bytes int64, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}

// pass reads a whole pass of src with 4096-row blocks and returns the rows.
func pass(b *testing.B, src dataset.Source) int {
	r, err := src.Open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var blk dataset.Block
	rows := 0
	for {
		n, err := r.Read(&blk, 4096)
		if err == io.EOF {
			return rows
		}
		if err != nil {
			b.Fatal(err)
		}
		rows += n
	}
}

// BenchmarkSynthetic streams 100,000 rows of 8 CyTOF-like columns with
// label files (about 5 MB), from memory.
func BenchmarkSynthetic(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	data, lab := cytofLike(rng, 100000, 8, false)
	fsys := fstest.MapFS{"s.csv": {Data: []byte(data)}, "l.csv": {Data: []byte(lab)}}
	src, err := NewSourceFS(fsys, []string{"s.csv"}, Options{LabelFiles: []string{"l.csv"}, LabelsIgnore: []string{"0"}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data) + len(lab)))
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		pass(b, src)
	}
	reportCPU(b, int64(len(data)+len(lab)), cputime.Process()-c0)
}

// BenchmarkEncodingCSV is the baseline: encoding/csv and strconv.ParseFloat
// on the data of BenchmarkSynthetic (without labels).
func BenchmarkEncodingCSV(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	data, _ := cytofLike(rng, 100000, 8, false)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	x := make([]float64, 8)
	c0 := cputime.Process()
	for b.Loop() {
		r := csv.NewReader(bytes.NewReader([]byte(data)))
		r.ReuseRecord = true
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			for j, s := range rec {
				if x[j], err = strconv.ParseFloat(s, 64); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	reportCPU(b, int64(len(data)), cputime.Process()-c0)
}

// BenchmarkCyTOF streams the 16 CyTOF samples with their label files from
// disk (46 MB), dropping ungated cells.
func BenchmarkCyTOF(b *testing.B) {
	files, labels := cytofFiles(b)
	var size int64
	for _, f := range append(append([]string(nil), files...), labels...) {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	src, err := NewSource(files, Options{LabelFiles: labels, LabelsIgnore: []string{"0"}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		if n := pass(b, src); n != 693643 {
			b.Fatalf("%d rows", n)
		}
	}
	reportCPU(b, size, cputime.Process()-c0)
}

// BenchmarkCyTOFCollect reads the 16 CyTOF samples into memory with
// dataset.Collect.
func BenchmarkCyTOFCollect(b *testing.B) {
	files, labels := cytofFiles(b)
	src, err := NewSource(files, Options{LabelFiles: labels, LabelsIgnore: []string{"0"}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := dataset.Collect(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyntheticPass compares the sequential pass with the parallel one
// with 1 and 2 workers on the data of BenchmarkSynthetic, with log1p.
func BenchmarkSyntheticPass(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	data, lab := cytofLike(rng, 100000, 8, false)
	fsys := fstest.MapFS{"s.csv": {Data: []byte(data)}, "l.csv": {Data: []byte(lab)}}
	for _, w := range []int{-1, 1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			src, err := NewSourceFS(fsys, []string{"s.csv"}, Options{LabelFiles: []string{"l.csv"}, LabelsIgnore: []string{"0"},
				Transform: func(x []float64) {
					for j, v := range x {
						x[j] = math.Log1p(v)
					}
				}})
			if err != nil {
				b.Fatal(err)
			}
			src.workers = w
			b.SetBytes(int64(len(data) + len(lab)))
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				pass(b, src)
			}
			reportCPU(b, int64(len(data)+len(lab)), cputime.Process()-c0)
		})
	}
}
