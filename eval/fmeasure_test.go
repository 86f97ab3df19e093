package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFMeasure checks FMeasure against values computed by hand.
func TestFMeasure(t *testing.T) {
	for _, c := range []struct {
		name       string
		conf       [][]int
		unassigned int
		want       float64
	}{
		{"perfect", [][]int{{5, 0}, {0, 3}}, -1, 1},
		// Two populations merged into one predicted population: each
		// matches it with recall 1 and precision 1/2.
		{"merged", [][]int{{5, 0}, {5, 0}}, -1, 2.0 / 3},
		// Rows A, B, C, D; columns A, B, C and the unassigned cells.
		// Column sums 9, 7, 11, 8; 35 cells. A (10 cells) matches A:
		// 2*8/(10+9). B (12 cells) is split across B and C (5 each) with 2
		// unassigned: B wins, 2*5/(12+7) against 2*5/(12+11). C (6 cells):
		// 2*6/(6+11). D (7 cells) is a population the classifier does not
		// know: 6 cells unassigned, which would match best (2*6/(7+8)) were
		// they a population, and 1 in A: 2*1/(7+9).
		{"split, unknown and unassigned", [][]int{
			{8, 2, 0, 0},
			{0, 5, 5, 2},
			{0, 0, 6, 0},
			{1, 0, 0, 6},
		}, 3, 10.0/35*(16.0/19) + 12.0/35*(10.0/19) + 6.0/35*(12.0/17) + 7.0/35*(2.0/16)},
		// The same with the last column a predicted population.
		{"last column a population", [][]int{
			{8, 2, 0, 0},
			{0, 5, 5, 2},
			{0, 0, 6, 0},
			{1, 0, 0, 6},
		}, -1, 10.0/35*(16.0/19) + 12.0/35*(10.0/19) + 6.0/35*(12.0/17) + 7.0/35*(12.0/15)},
		// An empty true population weighs nothing; a predicted population
		// no cell has is harmless.
		{"empty row and column", [][]int{{4, 0, 0}, {0, 0, 0}, {1, 0, 3}}, -1, 4.0/8*(8.0/9) + 4.0/8*(6.0/7)},
		// Every cell unassigned: no population is found.
		{"all unassigned", [][]int{{0, 4}, {0, 2}}, 1, 0},
	} {
		got := FMeasure(c.conf, c.unassigned)
		if math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: F = %.17g, want %.17g", c.name, got, c.want)
		}
	}
	if got := FMeasure([][]int{{0, 0}, {0, 0}}, -1); !math.IsNaN(got) {
		t.Errorf("no cell: F = %v, want NaN", got)
	}
	if got := FMeasure(nil, -1); !math.IsNaN(got) {
		t.Errorf("nil matrix: F = %v, want NaN", got)
	}
	for _, c := range []struct {
		name       string
		conf       [][]int
		unassigned int
		want       string
	}{
		{"ragged", [][]int{{1, 2}, {3}}, -1, "row 1 has 1 columns"},
		{"negative", [][]int{{1, -2}}, -1, "negative count"},
		{"unassigned out of range", [][]int{{1, 2}}, 2, "unassigned column 2"},
		{"unassigned below -1", [][]int{{1, 2}}, -2, "unassigned column -2"},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.want)
				}
			}()
			FMeasure(c.conf, c.unassigned)
		}()
	}
}

// TestFMeasureCells checks FMeasure against the definition computed from
// the cells' true and predicted populations: per true population the
// precision and recall of each predicted population, their harmonic mean,
// the best one, weighted by the population's share of the cells.
func TestFMeasureCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 20 {
		rows, cols := 1+rng.IntN(5), 1+rng.IntN(6)
		unassigned := -1
		if trial%2 == 1 {
			unassigned = rng.IntN(cols)
		}
		n := 1 + rng.IntN(300)
		truth, pred := make([]int, n), make([]int, n)
		for i := range n {
			truth[i] = rng.IntN(rows)
			// Mostly right where the column exists.
			if truth[i] < cols && rng.Float64() < 0.7 {
				pred[i] = truth[i]
			} else {
				pred[i] = rng.IntN(cols)
			}
		}
		conf := make([][]int, rows)
		for i := range conf {
			conf[i] = make([]int, cols)
		}
		for i := range n {
			conf[truth[i]][pred[i]]++
		}
		var want float64
		for a := range rows {
			var size int
			for i := range n {
				if truth[i] == a {
					size++
				}
			}
			if size == 0 {
				continue
			}
			var best float64
			for b := range cols {
				if b == unassigned {
					continue
				}
				var both, predicted int
				for i := range n {
					if pred[i] == b {
						predicted++
						if truth[i] == a {
							both++
						}
					}
				}
				if both == 0 {
					continue
				}
				p, r := float64(both)/float64(predicted), float64(both)/float64(size)
				best = max(best, 2*p*r/(p+r))
			}
			want += float64(size) / float64(n) * best
		}
		if got := FMeasure(conf, unassigned); math.Abs(got-want) > 1e-13 {
			t.Errorf("trial %d (%d x %d, unassigned %d, %d cells): F = %v, want %v", trial, rows, cols, unassigned, n, got, want)
		}
	}
}
