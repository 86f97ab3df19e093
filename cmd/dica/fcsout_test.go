package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/fcs"
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

// TestFCSOutputManyDomains transforms cells of 3,000 samples with long
// names: the DICA_DOMAINk keywords (about 200 KB) outgrow the room the FCS
// writer reserved for the TEXT before the cells, which then move. The file
// reads with the test's own decoder (decodeFCS31) and the project's reader,
// every cell named by its sample.
func TestFCSOutputManyDomains(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 80, Seed: 5})
	train := writeToyCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", train, "--domain", "patient", "--label", "population", "--rank", "20", "--sigma", "1", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)

	const samples = 3000
	name := func(i int) string { return fmt.Sprintf("patient-%04d-%s", i, strings.Repeat("x", 50)) }
	var b strings.Builder
	b.WriteString("patient,population,CD1,CD2,CD3,CD4,CD5\n")
	for i := range 2 * samples {
		fmt.Fprintf(&b, "%s,%s", name(i%samples), ds.ClassNames[ds.Label[i%ds.N()]])
		for _, v := range ds.X.RawRowView(i % ds.N()) {
			fmt.Fprintf(&b, ",%g", v)
		}
		b.WriteString("\n")
	}
	data := filepath.Join(dir, "many.csv")
	require.NoError(t, os.WriteFile(data, []byte(b.String()), 0o644))
	out := filepath.Join(dir, "many.fcs")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", data, "--domain", "patient", "--label", "population", "--out", out, "--quiet")
	require.Equal(t, 0, code, errs)

	kw, ev := decodeFCS31(t, out)
	require.Len(t, ev, 2*samples)
	// The model's 3 samples come first, then the new ones.
	require.Greater(t, len(kw["DICA_DOMAIN4"])*samples, 1<<16, "the names fit the room reserved: nothing moved")
	domCol := -1
	for j := 1; ; j++ {
		n, ok := kw[fmt.Sprintf("$P%dN", j)]
		if !ok {
			break
		}
		if n == "DOMAIN" {
			domCol = j - 1
		}
	}
	require.GreaterOrEqual(t, domCol, 0)
	begin, err := strconv.Atoi(strings.TrimSpace(kw["$BEGINDATA"]))
	require.NoError(t, err)
	head := make([]byte, 26)
	fh, err := os.Open(out)
	require.NoError(t, err)
	_, err = fh.Read(head)
	fh.Close()
	require.NoError(t, err)
	textEnd, err := strconv.Atoi(strings.TrimSpace(string(head[18:26])))
	require.NoError(t, err)
	require.Equal(t, textEnd+1, begin, "the cells moved to right after the TEXT")
	for i := range ev {
		require.Equal(t, name(i%samples), kw[fmt.Sprintf("DICA_DOMAIN%d", int(ev[i][domCol]))], "cell %d", i)
		require.Equal(t, float32(ds.X.At(i%ds.N(), 0)), ev[i][0], "cell %d", i)
	}
	f, err := fcs.Open(out)
	require.NoError(t, err)
	defer f.Close()
	require.Empty(t, f.Warnings())
	require.Equal(t, int64(begin), f.DataOffset())
	x, err := f.ReadAll(fcs.EventOptions{})
	require.NoError(t, err)
	for i := range ev {
		for j := range ev[i] {
			require.Equal(t, float64(ev[i][j]), x.At(i, j))
		}
	}
}
