package svm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Scaler standardizes features: z_j = (x_j - Mean_j) / SD_j. Fit it on the
// training data and apply the same transform to test data.
type Scaler struct {
	// Mean holds the column means of the training data.
	Mean []float64
	// SD holds the column standard deviations (population, divisor n) of
	// the training data; a constant column gets SD 1 so it maps to 0.
	SD []float64
}

// Standardize returns the Scaler fitted on the rows of x. It returns an
// error for an empty matrix or a NaN or Inf entry (naming its row and
// column).
func Standardize(x *mat.Dense) (*Scaler, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("svm: empty input matrix")
	}
	n, d := x.Dims()
	mean := make([]float64, d)
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("svm: x[%d, %d] = %g is not finite", i, j, v)
			}
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	sd := make([]float64, d)
	for i := range n {
		for j, v := range x.RawRowView(i) {
			c := v - mean[j]
			sd[j] += c * c
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(n))
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	return &Scaler{Mean: mean, SD: sd}, nil
}

// Apply returns the standardized copy of x. It returns an error if x is
// empty or has the wrong number of columns.
func (s *Scaler) Apply(x *mat.Dense) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("svm: empty input matrix")
	}
	n, d := x.Dims()
	if d != len(s.Mean) {
		return nil, fmt.Errorf("svm: input has %d columns, scaler expects %d", d, len(s.Mean))
	}
	out := mat.NewDense(n, d, nil)
	for i := range n {
		src, dst := x.RawRowView(i), out.RawRowView(i)
		for j, v := range src {
			dst[j] = (v - s.Mean[j]) / s.SD[j]
		}
	}
	return out, nil
}
