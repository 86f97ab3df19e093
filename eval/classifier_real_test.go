package eval

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/internal/testsupport/cputime"
	"github.com/dicalab/dica/internal/testsupport/longtest"
	"github.com/dicalab/dica/internal/testsupport/realdata"
	"github.com/dicalab/dica/preprocess"
)

// TestCyTOFClassifier measures on the labelled cells of the 16 CyTOF
// samples (log(1+|x|); 8 training samples, 8 unseen) what the learner a
// model carries adds to a fit without a grid (rank 500, sigma 1, 3
// components), in CPU seconds of the process beside the fit's: the learner
// on at most MaxTrainCells projected cells and its calibration on
// leave-samples-out folds of the learner (and, apart, the inner
// cross-validation that scores the point); and the reliability of the
// confidence on the unseen samples. It also checks that the learner trained
// on MaxTrainCells' seeded 50,000 cells is as accurate on the unseen
// samples as the one trained on every training cell (within 0.005).
func TestCyTOFClassifier(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	ds := loadCyTOF(t, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	train, test := []int{0, 2, 4, 6, 8, 10, 12, 14}, []int{1, 3, 5, 7, 9, 11, 13, 15}
	e, err := newEvaluator(ds, []Split{{Train: train, Test: test}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for _, g := range train {
		rows = append(rows, e.byDomain[g]...)
	}
	trainSet := ds.Subset(rows)
	trainSet.Compact()
	// The fit as the command makes it: from the CSV files (a sampling pass
	// and a pass of statistics, each parsing the files).
	dir := realdata.Dir(t, "multicenter16_cytof")
	var files, labels []string
	for _, g := range train {
		files = append(files, filepath.Join(dir, fmt.Sprintf("sample%d.csv", g+1)))
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", g+1)))
	}
	ch := preprocess.Channels{F: preprocess.Log1pAbs{}}
	src, err := csvio.NewSource(files, csvio.Options{Header: csvio.NoHeader, LabelFiles: labels, LabelsIgnore: []string{"0"},
		Transform: func(row []float64) { ch.Apply(row, len(row)) }})
	if err != nil {
		t.Fatal(err)
	}
	c0, w0 := cputime.Process(), time.Now()
	if _, err := dica.Fit(ctx, src, dica.Config{Method: dica.DICA, Rank: 500, Sigma: 1, Components: 3}); err != nil {
		t.Fatal(err)
	}
	t.Logf("dica from the CSV files of the training samples: %.2f CPU s (%.2f s)", (cputime.Process() - c0).Seconds(), time.Since(w0).Seconds())

	for _, method := range []string{"dica", "udica"} {
		m0, _, _ := parseMethod(method)
		c0, w0 = cputime.Process(), time.Now()
		m, err := dica.Fit(ctx, trainSet.Source(), dica.Config{Method: m0, Rank: 500, Sigma: 1, Components: 3})
		if err != nil {
			t.Fatal(err)
		}
		fitCPU, fitWall := cputime.Process()-c0, time.Since(w0)
		o := Options{Methods: []string{method}, Rank: 500, Seed: dica.DefaultSeed, MixingCells: -1,
			Grid: Grid{Sigma: []float64{1}, Components: []int{3}, C: []float64{1}}}
		c0, w0 = cputime.Process(), time.Now()
		choice, err := Choose(ctx, ds, train, o)
		if err != nil {
			t.Fatal(err)
		}
		cvCPU, cvWall := cputime.Process()-c0, time.Since(w0)
		t.Logf("%s: the inner cross-validation of the one point (its score, not needed by the learner): %.2f CPU s (%.2f s)", method, cvCPU.Seconds(), cvWall.Seconds())
		{
			c0, w0 = cputime.Process(), time.Now()
			f, err := TrainOn(ctx, ds, train, m, choice[0], o)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := f.Classifier(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lCPU, lWall := cputime.Process()-c0, time.Since(w0)
			t.Logf("%s on %d cells: fit %.2f CPU s (%.2f s); learner calibrated on %s: %.2f CPU s (%.2f s), %.0f%% of the fit's CPU time; inner accuracy %.4f, beta %.3f on %d held-out cells",
				method, trainSet.N(), fitCPU.Seconds(), fitWall.Seconds(), cl.Calibration.Source, lCPU.Seconds(), lWall.Seconds(), 100*lCPU.Seconds()/fitCPU.Seconds(),
				cl.Score, cl.InvTemperature, cl.Calibration.Cells)
			if err := m.SetClassifier(cl); err != nil {
				t.Fatal(err)
			}
			// Reliability on the unseen samples.
			var n, right [10]int
			var conf [10]float64
			var total int
			for _, g := range test {
				r := e.byDomain[g]
				p, err := m.PredictWith(ds.Subset(r).X, dica.PredictOptions{Preprocessed: true})
				if err != nil {
					t.Fatal(err)
				}
				for i, k := range p.Class {
					b := min(int(p.Confidence[i]*10), 9)
					n[b]++
					conf[b] += p.Confidence[i]
					if cl.Classes[k] == ds.ClassNames[ds.Label[r[i]]] {
						right[b]++
					}
				}
				total += len(r)
			}
			var ece float64
			line := ""
			for b := range n {
				ece += math.Abs(float64(right[b])-conf[b]) / float64(total)
				if n[b] > 0 {
					line += fmt.Sprintf(" [%.1f, %.1f): %.3f right of %d;", float64(b)/10, float64(b+1)/10, float64(right[b])/float64(n[b]), n[b])
				}
			}
			t.Logf("%s, %s: unseen samples' expected calibration error %.3f;%s", method, cl.Calibration.Source, ece, line)
		}

		acc := map[int]float64{}
		for _, limit := range []int{20000, DefaultMaxTrainCells, len(rows)} {
			o.MaxTrainCells = limit
			c0 = cputime.Process()
			f, err := TrainOn(ctx, ds, train, m, choice[0], o)
			if err != nil {
				t.Fatal(err)
			}
			cpu := cputime.Process() - c0
			var right, n int
			var mean float64
			for _, g := range test {
				r := e.byDomain[g]
				pred, err := f.Predict(ds.Subset(r).X)
				if err != nil {
					t.Fatal(err)
				}
				k := 0
				for i, p := range r {
					if pred[i] == ds.Label[p] {
						k++
					}
				}
				right += k
				n += len(r)
				mean += float64(k) / float64(len(r)) / float64(len(test))
			}
			acc[limit] = float64(right) / float64(n)
			t.Logf("%s, learner on %d cells (%.1f CPU s): accuracy on the unseen samples %.4f (cells), %.4f (mean of samples)", method, f.TrainCells, cpu.Seconds(), acc[limit], mean)
		}
		if acc[DefaultMaxTrainCells] < acc[len(rows)]-0.005 {
			t.Errorf("%s: the learner on %d cells loses accuracy: %.4f against %.4f", method, DefaultMaxTrainCells, acc[DefaultMaxTrainCells], acc[len(rows)])
		}
	}
}
