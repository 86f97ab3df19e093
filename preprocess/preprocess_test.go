package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestParseFunc(t *testing.T) {
	for _, tc := range []struct {
		spec string
		x    float64
		want float64 // f(x)
		str  string
		err  string
	}{
		{spec: "asinh:5", x: 10, want: math.Log(2 + math.Sqrt(5)), str: "asinh:5"},
		{spec: "asinh", x: 5, want: math.Log(1 + math.Sqrt(2)), str: "asinh:5"},
		{spec: " ASINH:150 ", x: -150, want: -math.Log(1 + math.Sqrt(2)), str: "asinh:150"},
		{spec: "asinh:0.5", x: 0.5, want: math.Log(1 + math.Sqrt(2)), str: "asinh:0.5"},
		{spec: "log1p", x: -(math.E - 1), want: 1, str: "log1p"},
		{spec: "log1p", x: math.E*math.E - 1, want: 2, str: "log1p"},
		{spec: "none", x: -3.25, want: -3.25, str: "none"},
		{spec: "asinh:0", err: "cofactor"},
		{spec: "asinh:-2", err: "cofactor"},
		{spec: "asinh:x", err: "cofactor"},
		{spec: "asinh:NaN", err: "cofactor"},
		{spec: "log1p:3", err: "no argument"},
		{spec: "logicle", err: "unknown transform"},
		{spec: "", err: "unknown transform"},
	} {
		f, err := ParseFunc(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseFunc(%q): err = %v, want one containing %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseFunc(%q): %v", tc.spec, err)
		}
		if got := f.Eval(tc.x); math.Abs(got-tc.want) > 1e-14 {
			t.Errorf("%s(%v) = %v, want %v", tc.spec, tc.x, got, tc.want)
		}
		if f.String() != tc.str {
			t.Errorf("ParseFunc(%q).String() = %q, want %q", tc.spec, f.String(), tc.str)
		}
		// The spec round-trips.
		g, err := ParseFunc(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFunc(%q) = %v, %v; want %v", f.String(), g, err, f)
		}
	}
}

func TestChannels(t *testing.T) {
	x := []float64{
		1, -2, 3,
		-4, 5, 0,
	}
	for _, tc := range []struct {
		f    Func
		cols []int
		want func(j int, v float64) float64
	}{
		{Asinh{5}, nil, func(j int, v float64) float64 { return math.Log(v/5 + math.Sqrt(v*v/25+1)) }},
		{Asinh{150}, []int{0, 2}, func(j int, v float64) float64 {
			if j == 1 {
				return v
			}
			return math.Log(v/150 + math.Sqrt(v*v/22500+1))
		}},
		{Log1pAbs{}, []int{1}, func(j int, v float64) float64 {
			if j != 1 {
				return v
			}
			return math.Log(1 + math.Abs(v))
		}},
		{Identity{}, nil, func(j int, v float64) float64 { return v }},
		{squared{}, []int{2}, func(j int, v float64) float64 {
			if j != 2 {
				return v
			}
			return v * v
		}},
	} {
		got := append([]float64(nil), x...)
		Channels{F: tc.f, Cols: tc.cols}.Apply(got, 3)
		for i, v := range x {
			if w := tc.want(i%3, v); math.Abs(got[i]-w) > 1e-14 {
				t.Errorf("%v cols %v: element %d = %v, want %v", tc.f, tc.cols, i, got[i], w)
			}
		}
	}
}

type squared struct{}

func (squared) Eval(x float64) float64 { return x * x }
func (squared) String() string         { return "square" }

func TestChannelsPanics(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		d    int
		cols []int
	}{
		{make([]float64, 5), 2, nil},
		{make([]float64, 4), 2, []int{2}},
		{make([]float64, 4), 0, nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Apply(len %d, d=%d, cols %v) did not panic", len(tc.x), tc.d, tc.cols)
				}
			}()
			Channels{F: Log1pAbs{}, Cols: tc.cols}.Apply(tc.x, tc.d)
		}()
	}
}

// TestCompensation builds observed events x = t S from known true intensities
// t and checks that compensation recovers t, and agrees with a dense solve of
// S^T y^T = x^T.
func TestCompensation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		k, d int
		cols []int // block column of spill channel i
	}{
		{1, 1, []int{0}},
		{3, 5, []int{4, 0, 2}},
		{8, 10, []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{20, 22, nil}, // larger than the stack buffer
	} {
		if tc.cols == nil {
			tc.cols = rng.Perm(tc.d)[:tc.k]
		}
		s := mat.NewDense(tc.k, tc.k, nil)
		for i := 0; i < tc.k; i++ {
			for j := 0; j < tc.k; j++ {
				if i == j {
					s.Set(i, j, 1)
				} else {
					s.Set(i, j, 0.2*rng.Float64())
				}
			}
		}
		columns := make([]string, tc.d)
		for j := range columns {
			columns[j] = fmt.Sprintf("C%d", j)
		}
		names := make([]string, tc.k)
		for i, j := range tc.cols {
			names[i] = columns[j]
		}
		const n = 7
		truth := mat.NewDense(n, tc.k, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < tc.k; j++ {
				truth.Set(i, j, 1000*rng.Float64())
			}
		}
		var obs mat.Dense
		obs.Mul(truth, s)
		x := make([]float64, n*tc.d)
		other := make([]float64, n*tc.d)
		for i := range x {
			x[i] = rng.NormFloat64()
			other[i] = x[i]
		}
		for i := 0; i < n; i++ {
			for c, j := range tc.cols {
				x[i*tc.d+j] = obs.At(i, c)
			}
		}
		comp, err := NewCompensation(s, names, columns)
		if err != nil {
			t.Fatal(err)
		}
		comp.Apply(x, tc.d)
		// Reference: solve S^T Y^T = X^T with gonum.
		var ref mat.Dense
		if err := ref.Solve(s.T(), obs.T()); err != nil {
			t.Fatal(err)
		}
		isSpill := map[int]int{}
		for c, j := range tc.cols {
			isSpill[j] = c
		}
		for i := 0; i < n; i++ {
			for j := 0; j < tc.d; j++ {
				got := x[i*tc.d+j]
				if c, ok := isSpill[j]; ok {
					if math.Abs(got-truth.At(i, c)) > 1e-9*1000 || math.Abs(got-ref.At(c, i)) > 1e-9*1000 {
						t.Errorf("k=%d row %d col %d: %v, want %v (solve %v)", tc.k, i, j, got, truth.At(i, c), ref.At(c, i))
					}
				} else if got != other[i*tc.d+j] {
					t.Errorf("k=%d row %d: non-spill column %d changed: %v -> %v", tc.k, i, j, other[i*tc.d+j], got)
				}
			}
		}
	}
}

func TestCompensationErrors(t *testing.T) {
	cols := []string{"FSC-A", "FITC-A", "PE-A"}
	for _, tc := range []struct {
		s     *mat.Dense
		names []string
		err   string
	}{
		{mat.NewDense(2, 2, []float64{1, 1, 1, 1}), []string{"FITC-A", "PE-A"}, "singular"},
		{mat.NewDense(2, 2, []float64{1, 0, 0, 0}), []string{"FITC-A", "PE-A"}, "singular"},
		{mat.NewDense(2, 2, []float64{1, 0.1, 0.2, 1}), []string{"FITC-A", "APC-A"}, `"APC-A" not found among the columns "FSC-A", "FITC-A", "PE-A"`},
		{mat.NewDense(2, 2, []float64{1, 0.1, 0.2, 1}), []string{"FITC-A"}, "2x2 for 1 channel"},
		{mat.NewDense(2, 2, []float64{1, math.NaN(), 0.2, 1}), []string{"FITC-A", "PE-A"}, "NaN"},
		{mat.NewDense(2, 2, []float64{1, 0.1, 0.2, 1}), []string{"PE-A", "pe-a"}, "twice"},
	} {
		_, err := NewCompensation(tc.s, tc.names, cols)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NewCompensation(%v, %v): err = %v, want one containing %q", mat.Formatted(tc.s), tc.names, err, tc.err)
		}
	}
	// Case-insensitive match.
	c, err := NewCompensation(mat.NewDense(1, 1, []float64{2}), []string{"pe-a"}, cols)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{3, 4, 10}
	Chain{c, Channels{F: Log1pAbs{}, Cols: []int{0}}}.Apply(x, 3)
	if want := []float64{math.Log(4), 4, 5}; x[0] != want[0] || x[1] != want[1] || x[2] != want[2] {
		t.Errorf("chain gave %v, want %v", x, want)
	}
}

func ExampleParseFunc() {
	for _, spec := range []string{"asinh", "asinh:150", "log1p", "none", "sqrt"} {
		f, err := ParseFunc(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s(1000) = %.4f\n", f, f.Eval(1000))
	}
	// Output:
	// asinh:5(1000) = 5.9915
	// asinh:150(1000) = 2.5958
	// log1p(1000) = 6.9088
	// none(1000) = 1000.0000
	// preprocess: unknown transform "sqrt" (want asinh, asinh:COFACTOR, log1p or none)
}

func ExampleCompensation() {
	// FITC spills 10% into PE; PE spills 2% into FITC.
	s := mat.NewDense(2, 2, []float64{
		1, 0.10,
		0.02, 1,
	})
	comp, err := NewCompensation(s, []string{"FITC-A", "PE-A"}, []string{"FSC-A", "FITC-A", "PE-A"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// True FITC 1000, PE 500: observed FITC 1000+0.02*500, PE 0.1*1000+500.
	row := []float64{42, 1010, 600}
	comp.Apply(row, 3)
	fmt.Printf("%.6g\n", row)
	// Output:
	// [42 1000 500]
}
