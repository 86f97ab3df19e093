package parquetio

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

// BenchmarkStream10M writes 10^7 synthetic cells (16 domains, 4 classes,
// 8 channels and 3 components as float64) to a Parquet file through a
// Writer in blocks of 4096, then reads the file back through a Source; it
// reports the cells per second and the peak resident set size of each
// phase.
//
//	go test -run '^$' -bench Stream10M -benchtime 1x ./parquetio
func BenchmarkStream10M(b *testing.B) {
	n := streamCells()
	domains := make([]string, 16)
	for g := range domains {
		domains[g] = "sample" + strconv.Itoa(g+1)
	}
	classes := []string{"1", "2", "3", "4"}
	vars := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	for it := 0; it < b.N; it++ {
		dir := b.TempDir()
		path := filepath.Join(dir, "cells.parquet")
		resetPeak()
		t0 := time.Now()
		w, err := Create(path, WriterOptions{Vars: vars, Components: []string{"DICA1", "DICA2", "DICA3"}})
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
		src, err := NewSource([]string{path}, Options{Domain: "domain", Label: "label", Features: vars})
		if err != nil {
			b.Fatal(err)
		}
		r, err := src.Open(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		var sum float64
		got := 0
		for {
			k, err := r.Read(&blk, 4096)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			sum += blk.X[0]
			got += k
		}
		r.Close()
		rt := time.Since(t0)
		if got != n {
			b.Fatalf("read %d cells of %d", got, n)
		}
		fi, _ := os.Stat(path)
		b.ReportMetric(float64(n)/wt.Seconds(), "write-cells/s")
		b.ReportMetric(wrss/(1<<20), "write-peak-MB")
		b.ReportMetric(float64(n)/rt.Seconds(), "read-cells/s")
		b.ReportMetric(peakRSS()/(1<<20), "read-peak-MB")
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	}
}
