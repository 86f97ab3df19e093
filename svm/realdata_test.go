package svm

import (
	"context"
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/realdata/cytof"
)

// loadCyTOF reads the labelled cells (labels 1..4, returned as 0..3) of the
// given multicenter16 samples with the asinh(x/5) transform.
func loadCyTOF(tb testing.TB, samples ...int) (*mat.Dense, []int) {
	ds := cytof.Load(tb, true, samples...)
	return ds.X, cytof.Populations(tb, ds)
}

// TestCyTOF trains on CyTOF samples 1 and 3 and predicts the cell
// populations of sample 2 (same center as sample 1) and 8 (another one).
func TestCyTOF(t *testing.T) {
	xtr, ytr := loadCyTOF(t, 1, 3)
	sc, err := Standardize(xtr)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Train(context.Background(), ok[*mat.Dense](t)(sc.Apply(xtr)), ytr, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	train := Accuracy(ok[[]int](t)(m.Predict(ok[*mat.Dense](t)(sc.Apply(xtr)))), ytr)
	x2, y2 := loadCyTOF(t, 2)
	acc2 := Accuracy(ok[[]int](t)(m.Predict(ok[*mat.Dense](t)(sc.Apply(x2)))), y2)
	t.Logf("%d training cells: train accuracy %.4f, sample 2 accuracy %.4f", len(ytr), train, acc2)
	if train < 0.9 || acc2 < 0.9 {
		t.Errorf("accuracy train %.4f, sample 2 %.4f, want >= 0.9", train, acc2)
	}
}

// BenchmarkCyTOF trains on the labelled cells of samples 1..14 (about 600k
// cells x 8 markers, 4 classes) and reports the accuracy on samples 15-16.
func BenchmarkCyTOF(b *testing.B) {
	var train []int
	for s := 1; s <= 14; s++ {
		train = append(train, s)
	}
	xtr, ytr := loadCyTOF(b, train...)
	xte, yte := loadCyTOF(b, 15, 16)
	sc, err := Standardize(xtr)
	if err != nil {
		b.Fatal(err)
	}
	ztr, zte := ok[*mat.Dense](b)(sc.Apply(xtr)), ok[*mat.Dense](b)(sc.Apply(xte))
	for _, o := range []Options{{}, {Solver: Dual}, {Loss: Hinge}} {
		b.Run(fmt.Sprintf("n=%d/%v-%v", len(ytr), o.Solver, o.Loss), func(b *testing.B) {
			var acc float64
			for b.Loop() {
				m, err := Train(context.Background(), ztr, ytr, 4, o)
				if err != nil {
					b.Fatal(err)
				}
				acc = Accuracy(ok[[]int](b)(m.Predict(zte)), yte)
			}
			b.ReportMetric(acc, "test-acc")
		})
	}
}

// BenchmarkPrimalPath trains the primal solver along the costs C = 0.1, 1,
// 10 on one Problem of 20,000 labelled cells of samples 1-6 (8 markers, 4
// classes), as an inner fold of the evaluation's grid does.
func BenchmarkPrimalPath(b *testing.B) {
	x, y := loadCyTOF(b, 1, 2, 3, 4, 5, 6)
	n, d := x.Dims()
	const keep = 20000
	sub := mat.NewDense(keep, d, nil)
	ys := make([]int, keep)
	for i := range keep {
		r := i * (n / keep)
		sub.SetRow(i, x.RawRowView(r))
		ys[i] = y[r]
	}
	sc, err := Standardize(sub)
	if err != nil {
		b.Fatal(err)
	}
	z := ok[*mat.Dense](b)(sc.Apply(sub))
	for b.Loop() {
		pb, err := NewProblem(z, ys, 4, 0)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []float64{0.1, 1, 10} {
			if _, err := pb.Train(context.Background(), Options{C: c}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
