package eval

import (
	"fmt"
	"math"
)

// FMeasure returns the FlowCAP F-measure of a confusion matrix (Aghaeepour
// et al., "Critical assessment of automated flow cytometry data analysis
// techniques", Nature Methods 10:228-238, 2013, Online Methods): conf[i][j]
// counts the cells of true population i assigned to predicted population
// j. With n_i the cells of true population i (row i's sum), m_j those
// assigned to predicted population j (column j's sum) and N all cells,
//
//	F = sum_i (n_i / N) max_j F_ij,  F_ij = 2 n_ij / (n_i + m_j),
//
// F_ij being the harmonic mean of the recall n_ij / n_i and the precision
// n_ij / m_j (0 when n_ij is 0): each true population is matched with the
// predicted population that best overlaps it, and the matches are weighted
// by the populations' sizes. A population split across two predicted ones
// keeps the better half; two populations merged into one predicted
// population both match it, each with the precision the other lowers.
//
// Column unassigned holds the cells left without a population (below a
// confidence threshold, say); -1 means there is none. Its cells count in
// n_i and N, lowering the recall of their population, but it is never a
// population's match. A row may have no column of its own (a true
// population the classifier does not know: it matches the predicted
// population that holds most of it, or scores 0) and a column no row
// (a predicted population no cell has). Empty rows weigh nothing.
//
// FMeasure returns NaN when the matrix counts no cell. It panics when the
// rows differ in length, a count is negative or unassigned is out of
// range.
func FMeasure(conf [][]int, unassigned int) float64 {
	cols := 0
	if len(conf) > 0 {
		cols = len(conf[0])
	}
	if unassigned < -1 || unassigned >= cols {
		panic(fmt.Sprintf("eval: unassigned column %d of a confusion matrix of %d columns", unassigned, cols))
	}
	m := make([]float64, cols)
	var total float64
	for i, row := range conf {
		if len(row) != cols {
			panic(fmt.Sprintf("eval: confusion matrix row %d has %d columns, row 0 has %d", i, len(row), cols))
		}
		for j, v := range row {
			if v < 0 {
				panic(fmt.Sprintf("eval: negative count %d in the confusion matrix at (%d, %d)", v, i, j))
			}
			m[j] += float64(v)
			total += float64(v)
		}
	}
	if total == 0 {
		return math.NaN()
	}
	var f float64
	for _, row := range conf {
		var n float64
		for _, v := range row {
			n += float64(v)
		}
		if n == 0 {
			continue
		}
		var best float64
		for j, v := range row {
			if j == unassigned || v == 0 {
				continue
			}
			best = max(best, 2*float64(v)/(n+m[j]))
		}
		f += n / total * best
	}
	return f
}
