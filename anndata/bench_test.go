package anndata

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/parquetio"
)

// streamCells is the number of cells of BenchmarkStream10M:
// $DICA_STREAM_CELLS, or 10^7.
func streamCells() int {
	if n, err := strconv.Atoi(os.Getenv("DICA_STREAM_CELLS")); err == nil && n > 0 {
		return n
	}
	return 10_000_000
}

// peakRSS returns the peak resident set size of the process in bytes
// (VmHWM of /proc/self/status), 0 where it is not available; resetPeak
// starts a new peak (Linux: 5 written to /proc/self/clear_refs).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb * 1024
		}
	}
	return 0
}

func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// synthBlock fills b with cells start..start+rows of a synthetic stream of
// 8 channels, 16 domains of equal size, 4 classes, and z with 3
// components.
func synthBlock(b *dataset.Block, z *mat.Dense, start, rows, n int) {
	b.Reset(rows, 8, true, 0)
	b.Rows = rows
	s := uint64(start)*0x9e3779b97f4a7c15 + 1
	for i := 0; i < rows; i++ {
		c := start + i
		for j := 0; j < 8; j++ {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			b.X[i*8+j] = math.Log1p(float64(s>>40)) * float64(j+1)
		}
		b.Domain[i] = c * 16 / n
		b.Label[i] = int(s>>60) % 4
		row := z.RawRowView(i)
		row[0], row[1], row[2] = b.X[i*8]-b.X[i*8+1], b.X[i*8+2]*0.5, b.X[i*8+7]/3
	}
}

// BenchmarkStream10M writes 10^7 synthetic cells (8 channels, 3
// components, 16 domains, 4 classes) block by block (4096 cells) through a
// writer, then reads them back through a source, for each streamed format:
// an AnnData store (X as float32, zlib) and a Parquet file (float64,
// snappy). It reports the cells per second and the peak resident set size
// (VmHWM) of each phase, and the size written.
//
//	go test -run '^$' -bench Stream10M -benchtime 1x ./anndata
func BenchmarkStream10M(b *testing.B) {
	n := streamCells()
	domains := make([]string, 16)
	for g := range domains {
		domains[g] = "sample" + strconv.Itoa(g+1)
	}
	classes := []string{"1", "2", "3", "4"}
	vars := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	type format struct {
		name   string
		create func(path string) (blockWriter, error)
		open   func(path string) (dataset.Source, error)
	}
	formats := []format{
		{"zarr", func(p string) (blockWriter, error) {
			return Create(p, WriterOptions{Vars: vars, Components: 3, Float32: true})
		}, func(p string) (dataset.Source, error) {
			return NewSource(p, Options{Domain: "domain", Label: "label"})
		}},
		{"parquet", func(p string) (blockWriter, error) {
			return parquetio.Create(p, parquetio.WriterOptions{Vars: vars, Components: []string{"DICA1", "DICA2", "DICA3"}})
		}, func(p string) (dataset.Source, error) {
			return parquetio.NewSource([]string{p}, parquetio.Options{Domain: "domain", Label: "label", Features: vars})
		}},
	}
	for _, f := range formats {
		b.Run(f.name, func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				path := filepath.Join(b.TempDir(), "cells."+f.name)
				resetPeak()
				t0 := time.Now()
				w, err := f.create(path)
				if err != nil {
					b.Fatal(err)
				}
				var blk dataset.Block
				z := mat.NewDense(4096, 3, nil)
				for start := 0; start < n; start += 4096 {
					rows := min(4096, n-start)
					zz := z.Slice(0, rows, 0, 3).(*mat.Dense)
					synthBlock(&blk, zz, start, rows, n)
					if err := w.WriteBlock(&blk, zz, domains, classes); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Commit(); err != nil {
					b.Fatal(err)
				}
				wt := time.Since(t0)
				wrss := peakRSS()

				resetPeak()
				t0 = time.Now()
				src, err := f.open(path)
				if err != nil {
					b.Fatal(err)
				}
				r, err := src.Open(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for {
					k, err := r.Read(&blk, 4096)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					got += k
				}
				r.Close()
				rt := time.Since(t0)
				if got != n {
					b.Fatalf("read %d cells of %d", got, n)
				}
				var size int64
				filepath.Walk(path, func(_ string, fi os.FileInfo, _ error) error {
					if fi != nil && fi.Mode().IsRegular() {
						size += fi.Size()
					}
					return nil
				})
				b.ReportMetric(float64(n)/wt.Seconds(), "write-cells/s")
				b.ReportMetric(wrss/(1<<20), "write-peak-MB")
				b.ReportMetric(float64(n)/rt.Seconds(), "read-cells/s")
				b.ReportMetric(peakRSS()/(1<<20), "read-peak-MB")
				b.ReportMetric(float64(size)/(1<<20), "written-MB")
			}
		})
	}
}

// blockWriter is what the streamed writers have in common.
type blockWriter interface {
	WriteBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error
	Commit() error
}
