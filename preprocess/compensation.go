package preprocess

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Compensation removes fluorescence spillover. With a spillover matrix S
// (k x k, row i holds the fraction of fluorochrome i's signal seen in each of
// the k detectors, so S has ones on its diagonal), the observed intensities
// of the k spillover channels of an event are x = t S for true intensities t,
// and compensation computes
//
//	x_comp = x S^{-1}
//
// on those channels (the convention of flowCore's compensate and FlowKit).
// Other columns are left unchanged.
type Compensation struct {
	cols []int     // column of the block holding spillover channel i
	inv  []float64 // S^{-1}, k x k row-major
}

// NewCompensation returns the compensation by the k x k spillover matrix s
// whose rows and columns are the channels named spillNames, for blocks whose
// columns are named columns. Every spillover channel must be one of columns
// (matched exactly, then case-insensitively). It returns an error if s is not
// square with k = len(spillNames), holds NaN or Inf, is singular (or too
// ill-conditioned to invert), or names a channel not in columns; a nil
// matrix is an error too.
func NewCompensation(s mat.Matrix, spillNames, columns []string) (*Compensation, error) {
	if isNil(s) {
		return nil, fmt.Errorf("preprocess: nil spillover matrix")
	}
	if d, ok := s.(*mat.Dense); ok && d.IsEmpty() {
		return nil, fmt.Errorf("preprocess: empty spillover matrix")
	}
	r, c := s.Dims()
	if r != c || r != len(spillNames) {
		return nil, fmt.Errorf("preprocess: spillover matrix is %dx%d for %d channel names", r, c, len(spillNames))
	}
	if r == 0 {
		return nil, fmt.Errorf("preprocess: empty spillover matrix")
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := s.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("preprocess: spillover matrix element (%d,%d) is %v", i, j, v)
			}
		}
	}
	cols := make([]int, r)
	seen := make(map[int]bool, r)
	for i, name := range spillNames {
		j := lookup(name, columns)
		if j < 0 {
			return nil, fmt.Errorf("preprocess: spillover channel %q not found among the columns %s", name, strings.Join(quote(columns), ", "))
		}
		if seen[j] {
			return nil, fmt.Errorf("preprocess: spillover channel %q appears twice", name)
		}
		seen[j] = true
		cols[i] = j
	}
	var inv mat.Dense
	if err := inv.Inverse(s); err != nil {
		return nil, fmt.Errorf("preprocess: spillover matrix of %s is singular: %v", strings.Join(quote(spillNames), ", "), err)
	}
	return &Compensation{cols: cols, inv: inv.RawMatrix().Data}, nil
}

// isNil reports whether m is nil or a nil pointer, whose Dims would panic.
func isNil(m mat.Matrix) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func lookup(name string, columns []string) int {
	for j, c := range columns {
		if c == name {
			return j
		}
	}
	for j, c := range columns {
		if strings.EqualFold(strings.TrimSpace(c), strings.TrimSpace(name)) {
			return j
		}
	}
	return -1
}

func quote(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return q
}

// Columns returns the block columns of the spillover channels, in the order
// of the spillover matrix (none for a nil or zero Compensation).
func (c *Compensation) Columns() []int {
	if c == nil {
		return nil
	}
	return append([]int(nil), c.cols...)
}

// Apply compensates the rows of x in place: on the spillover columns,
// x <- x S^{-1}. A nil or zero Compensation leaves x as it is. As gonum
// does for shapes, it panics if len(x) is not a multiple of d > 0, or if a
// spillover column is not < d: a programmer's error, not a user's.
func (c *Compensation) Apply(x []float64, d int) {
	checkBlock(x, d)
	if c == nil {
		return
	}
	k := len(c.cols)
	for _, j := range c.cols {
		if j >= d {
			panic(fmt.Sprintf("preprocess: compensation column %d out of range [0,%d)", j, d))
		}
	}
	var stack [32]float64
	var in, out []float64
	if 2*k <= len(stack) {
		in, out = stack[:k], stack[k:2*k]
	} else {
		buf := make([]float64, 2*k)
		in, out = buf[:k], buf[k:]
	}
	for r := 0; r+d <= len(x); r += d {
		row := x[r : r+d]
		for i, j := range c.cols {
			in[i] = row[j]
		}
		for j := range out {
			out[j] = 0
		}
		for i, v := range in {
			if v == 0 {
				continue
			}
			s := c.inv[i*k : (i+1)*k]
			for j, w := range s {
				out[j] += v * w
			}
		}
		for i, j := range c.cols {
			row[j] = out[i]
		}
	}
}
