package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dicalab/dica/toy"
)

// BenchmarkTransformOutput measures `dica transform` of 100,000 toy cells
// (5 channels, 4 samples, labelled) to CSV and to FCS: the same model, the
// same cells, only the output format differs. It reports the CPU time per
// run (the machine is shared: wall time depends on its load) and cells per
// CPU second.
func BenchmarkTransformOutput(b *testing.B) {
	dir := b.TempDir()
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 25_000, Seed: 3})
	data := filepath.Join(dir, "cells.csv")
	f, err := os.Create(data)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("patient,population,CD1,CD2,CD3,CD4,CD5\n")
	var line []byte
	for i := 0; i < ds.N(); i++ {
		line = append(line[:0], ds.DomainNames[ds.Domain[i]]...)
		line = append(line, ',')
		line = append(line, ds.ClassNames[ds.Label[i]]...)
		for _, v := range ds.X.RawRowView(i) {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	model := filepath.Join(dir, "m.dica")
	cmd := []string{"--data", data, "--domain", "patient", "--label", "population", "--quiet"}
	if code := run(context.Background(), append([]string{"fit", "--rank", "100", "--sigma", "1", "--out", model}, cmd...), io.Discard, io.Discard); code != 0 {
		b.Fatal("fit failed")
	}
	for _, ext := range []string{"csv", "fcs"} {
		b.Run(ext, func(b *testing.B) {
			out := filepath.Join(dir, "out."+ext)
			args := append([]string{"transform", "--model", model, "--out", out}, cmd...)
			cpu0 := benchCPU()
			for b.Loop() {
				if code := run(context.Background(), args, io.Discard, io.Discard); code != 0 {
					b.Fatal("transform failed")
				}
			}
			if cpu := benchCPU() - cpu0; cpu > 0 {
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(b.N)*float64(ds.N())/cpu.Seconds(), "cells/cpu-s")
			}
		})
	}
}

// benchCPU returns the CPU time used by the process so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
