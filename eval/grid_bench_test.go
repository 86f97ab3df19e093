package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/internal/testsupport/cputime"
	"github.com/dicalab/dica/preprocess"
)

// readmeGrid returns the options of the README's "Unseen samples"
// evaluation (dica eval with its defaults): all five methods, Nystrom
// m = 200, sigma in {0.5, 1, 2, 4}, lambda in {0, 0.1, 1}, k in {3, 10},
// C in {0.1, 1, 10}.
func readmeGrid() Options {
	return Options{
		Methods: Methods(), Rank: 200, Seed: 1,
		Grid: Grid{Sigma: []float64{0.5, 1, 2, 4}, Lambda: []float64{0, 0.1, 1}, Components: []int{3, 10}, C: []float64{0.1, 1, 10}},
	}
}

// BenchmarkGridCyTOF runs the README's "Unseen samples" evaluation
// (training samples 1-8, test samples 9-16 of multicenter16_cytof,
// log(1 + |x|)) and reports its CPU time against the cost of one DICA fit
// per sigma value of the grid on the same training cells, measured in the
// same run:
//
//   - grid-cpu-s: the CPU seconds (all goroutines) of Evaluate: inner
//     cross-validation, final fits, learners, test scores and mixing
//     measures;
//   - fit-cpu-s: the CPU seconds of one DICA fit (k = 3, Nystrom m = 200)
//     per sigma value, summed over the 4 values, read from the 8 training
//     files as dica fit reads them (the reference); mem-fit-cpu-s
//     the same fits on the cells in memory;
//   - ratio and mem-ratio: grid-cpu-s over fit-cpu-s and mem-fit-cpu-s.
//
// Run it alone (it takes tens of seconds per iteration):
//
//	go test -run '^$' -bench GridCyTOF -benchtime 1x ./eval
//
// The evaluation runs under the profiler label phase=grid: with
// -cpuprofile, go tool pprof -tagfocus phase=grid shows it without the
// reference fits.
func BenchmarkGridCyTOF(b *testing.B) {
	all := make([]int, 16)
	for i := range all {
		all[i] = i + 1
	}
	ds := loadCyTOF(b, all...)
	train, test := []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{8, 9, 10, 11, 12, 13, 14, 15}
	o := readmeGrid()
	ctx := context.Background()

	// The reference fits.
	dir := os.Getenv("DICA_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	dir = filepath.Join(dir, "multicenter16_cytof")
	var files, labels []string
	for s := 1; s <= 8; s++ {
		files = append(files, filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)))
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)))
	}
	ch := preprocess.Channels{F: preprocess.Log1pAbs{}}
	fromFiles, err := csvio.NewSource(files, csvio.Options{
		Header: csvio.NoHeader, LabelFiles: labels, LabelsIgnore: []string{"0"},
		Transform: func(row []float64) { ch.Apply(row, len(row)) },
	})
	if err != nil {
		b.Fatal(err)
	}
	var rows []int
	for p, g := range ds.Domain {
		if g < 8 {
			rows = append(rows, p)
		}
	}
	trainSet := ds.Subset(rows)
	trainSet.Compact()
	inMemory := trainSet.Source()
	fits := func() (files, mem float64) {
		for _, sigma := range o.Grid.Sigma {
			cfg := dica.Config{Method: dica.DICA, Sigma: sigma, Rank: o.Rank, Seed: o.Seed, Components: 3}
			c0 := cputime.Process()
			if _, err := dica.Fit(ctx, fromFiles, cfg); err != nil {
				b.Fatal(err)
			}
			c1 := cputime.Process()
			if _, err := dica.Fit(ctx, inMemory, cfg); err != nil {
				b.Fatal(err)
			}
			c2 := cputime.Process()
			files += (c1 - c0).Seconds()
			mem += (c2 - c1).Seconds()
		}
		return files, mem
	}

	var grid, fitFiles, fitMem float64
	var wall time.Duration
	for b.Loop() {
		f0, m0 := fits()
		c0, w0 := cputime.Process(), time.Now()
		var err error
		pprof.Do(ctx, pprof.Labels("phase", "grid"), func(ctx context.Context) {
			_, err = Run(ctx, ds, train, test, o)
		})
		if err != nil {
			b.Fatal(err)
		}
		grid += (cputime.Process() - c0).Seconds()
		wall += time.Since(w0)
		f1, m1 := fits()
		fitFiles += (f0 + f1) / 2
		fitMem += (m0 + m1) / 2
	}
	n := float64(b.N)
	b.ReportMetric(grid/n, "grid-cpu-s")
	b.ReportMetric(wall.Seconds()/n, "grid-wall-s")
	b.ReportMetric(fitFiles/n, "fit-cpu-s")
	b.ReportMetric(fitMem/n, "mem-fit-cpu-s")
	b.ReportMetric(grid/fitFiles, "ratio")
	b.ReportMetric(grid/fitMem, "mem-ratio")
}
