// Package preprocess provides the per-channel transforms customarily applied
// to cytometry intensities before any analysis: compensation with a spillover
// matrix, arcsinh with a cofactor, and log(1+|x|).
//
// Transforms act in place on row-major blocks of rows (a single row is a block
// of one row), which is how dataset.Source streams data. A transform is
// stateless and safe for concurrent use.
//
// The usual order is compensation first (on the raw intensities of the
// spillover channels), then a variance-stabilizing Func on the channels kept:
//
//	comp, _ := preprocess.NewCompensation(spill, spillNames, columns)
//	f, _ := preprocess.ParseFunc("asinh:5")
//	t := preprocess.Chain{comp, preprocess.Channels{F: f}}
//	t.Apply(block, len(columns))
package preprocess

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Transform modifies a row-major block of rows in place.
type Transform interface {
	// Apply transforms the len(x)/d rows of the row-major block x, each of
	// d values, in place. It panics if len(x) is not a multiple of d.
	Apply(x []float64, d int)
}

// Func is an elementwise transform of one intensity.
type Func interface {
	// Eval returns the transformed value of x.
	Eval(x float64) float64
	// String returns the spec of the function, as accepted by ParseFunc.
	String() string
}

// DefaultCofactor is the arcsinh cofactor used when a spec gives none: 5, the
// customary value for mass cytometry (flow cytometry customarily uses 150).
const DefaultCofactor = 5

// Asinh is the arcsinh transform asinh(x / Cofactor), linear near zero and
// logarithmic for |x| >> Cofactor. The customary cofactor is 5 for mass
// cytometry and 150 for fluorescence flow cytometry. The cofactor must be
// positive (ParseFunc refuses others): the zero value divides by zero.
type Asinh struct{ Cofactor float64 }

// Eval returns asinh(x / Cofactor).
func (f Asinh) Eval(x float64) float64 { return math.Asinh(x / f.Cofactor) }

// String returns "asinh:Cofactor".
func (f Asinh) String() string { return "asinh:" + strconv.FormatFloat(f.Cofactor, 'g', -1, 64) }

// Log1pAbs is the transform log(1 + |x|) customarily used on the CyTOF
// benchmarks (e.g. DeepCyTOF's multi-center data).
type Log1pAbs struct{}

// Eval returns log(1 + |x|).
func (Log1pAbs) Eval(x float64) float64 { return math.Log1p(math.Abs(x)) }

// String returns "log1p".
func (Log1pAbs) String() string { return "log1p" }

// Identity leaves values unchanged (spec "none").
type Identity struct{}

// Eval returns x.
func (Identity) Eval(x float64) float64 { return x }

// String returns "none".
func (Identity) String() string { return "none" }

// ParseFunc parses a transform spec: "asinh:C" (arcsinh with cofactor C > 0),
// "asinh" (cofactor DefaultCofactor), "log1p" (log(1+|x|)) or "none". Case and
// surrounding spaces are ignored.
func ParseFunc(spec string) (Func, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	name, arg, hasArg := strings.Cut(s, ":")
	switch name {
	case "asinh", "arcsinh":
		if !hasArg {
			return Asinh{Cofactor: DefaultCofactor}, nil
		}
		c, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
		if err != nil || !(c > 0) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("preprocess: bad transform %q: the asinh cofactor must be a finite number > 0", spec)
		}
		return Asinh{Cofactor: c}, nil
	case "log1p", "none":
		if hasArg {
			return nil, fmt.Errorf("preprocess: bad transform %q: %s takes no argument", spec, name)
		}
		if name == "none" {
			return Identity{}, nil
		}
		return Log1pAbs{}, nil
	}
	return nil, fmt.Errorf("preprocess: unknown transform %q (want asinh, asinh:COFACTOR, log1p or none)", spec)
}

// Channels applies F to the columns Cols of every row (to every column when
// Cols is nil); a nil F leaves the values as they are.
type Channels struct {
	F    Func
	Cols []int
}

// Apply transforms the chosen columns of the rows of x in place.
func (c Channels) Apply(x []float64, d int) {
	checkBlock(x, d)
	for _, j := range c.Cols {
		if j < 0 || j >= d {
			panic(fmt.Sprintf("preprocess: column %d out of range [0,%d)", j, d))
		}
	}
	// Fast paths: the common funcs on whole blocks of values, with the
	// vector transforms (bit-identical to Eval).
	switch f := c.F.(type) {
	case nil, Identity:
		return
	case Asinh:
		c.vector(x, d, vecFunc{asinh: true, inv: 1 / f.Cofactor})
	case Log1pAbs:
		c.vector(x, d, vecFunc{})
	default:
		c.each(x, d, c.F.Eval)
	}
}

// vecFunc is a transform of a slice of values in place: asinh(v * inv) or
// log(1 + |v|).
type vecFunc struct {
	asinh bool
	inv   float64
}

func (f vecFunc) apply(v []float64) {
	if f.asinh {
		asinhSlice(v, f.inv)
	} else {
		log1pAbsSlice(v)
	}
}

// vector applies f to the chosen columns: to the whole block when every
// column is chosen, otherwise to the chosen values gathered, a batch of
// rows at a time, in a buffer (one column chosen twice is transformed
// twice, value by value, as each does).
func (c Channels) vector(x []float64, d int, f vecFunc) {
	if c.Cols == nil {
		f.apply(x)
		return
	}
	k := len(c.Cols)
	var buf [256]float64
	if k == 0 || k > len(buf) || hasDuplicates(c.Cols, d) {
		c.each(x, d, func(v float64) float64 {
			b := [1]float64{v}
			f.apply(b[:])
			return b[0]
		})
		return
	}
	n := len(x) / d
	per := len(buf) / k
	for r0 := 0; r0 < n; r0 += per {
		r1 := min(n, r0+per)
		b := buf[:(r1-r0)*k]
		for r := r0; r < r1; r++ {
			row, br := x[r*d:(r+1)*d], b[(r-r0)*k:(r-r0+1)*k]
			for i, j := range c.Cols {
				br[i] = row[j]
			}
		}
		f.apply(b)
		for r := r0; r < r1; r++ {
			row, br := x[r*d:(r+1)*d], b[(r-r0)*k:(r-r0+1)*k]
			for i, j := range c.Cols {
				row[j] = br[i]
			}
		}
	}
}

// hasDuplicates reports whether cols (each in [0, d)) names a column twice.
func hasDuplicates(cols []int, d int) bool {
	if len(cols) <= 8 {
		for i, a := range cols {
			for _, b := range cols[:i] {
				if a == b {
					return true
				}
			}
		}
		return false
	}
	seen := make([]bool, d)
	for _, j := range cols {
		if seen[j] {
			return true
		}
		seen[j] = true
	}
	return false
}

func (c Channels) each(x []float64, d int, f func(float64) float64) {
	if c.Cols == nil {
		for i, v := range x {
			x[i] = f(v)
		}
		return
	}
	for r := 0; r+d <= len(x); r += d {
		row := x[r : r+d]
		for _, j := range c.Cols {
			row[j] = f(row[j])
		}
	}
}

// Chain applies its transforms in order.
type Chain []Transform

// Apply applies every transform of the chain to x in turn, skipping nil
// ones.
func (c Chain) Apply(x []float64, d int) {
	for _, t := range c {
		if t != nil {
			t.Apply(x, d)
		}
	}
}

func checkBlock(x []float64, d int) {
	if d <= 0 || len(x)%d != 0 {
		panic(fmt.Sprintf("preprocess: block of %d values is not a whole number of rows of %d", len(x), d))
	}
}
