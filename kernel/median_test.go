package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestMedianDistance(t *testing.T) {
	line := func(v ...float64) *mat.Dense { return mat.NewDense(len(v), 1, v) }
	for _, c := range []struct {
		name string
		x    *mat.Dense
		want float64
	}{
		// distances 1, 3, 2: median 2.
		{"odd pairs", line(0, 1, 3), 2},
		// distances 1, 3, 7, 2, 6, 4: median (3 + 4) / 2.
		{"even pairs", line(0, 1, 3, 7), 3.5},
		// 3-4-5 triangle plus nothing: distances 3, 4, 5.
		{"2-D", mat.NewDense(3, 2, []float64{0, 0, 3, 0, 0, 4}), 4},
		{"coincident points", line(2, 2, 2), 1},
		{"one point", line(5), 1},
		{"two points", line(5, 7.5), 2.5},
	} {
		if got := MedianDistance(c.x); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: MedianDistance = %g, want %g", c.name, got, c.want)
		}
	}
}

// TestMedianSigma checks the heuristic on a known distribution: for x, x'
// independent N(0, I_2), ||x - x'|| is sqrt(2) times a Rayleigh(1) variable,
// whose median is sqrt(2 ln 2), so the median distance is 2 sqrt(ln 2).
func TestMedianSigma(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 20000
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
	}
	want := 2 * math.Sqrt(math.Ln2)
	got := MedianSigma(x, 0, 1)
	// 1000 points give 499,500 dependent pairs; the sample median's
	// standard error is about 1%: allow 4%.
	if math.Abs(got-want) > 0.04*want {
		t.Errorf("MedianSigma = %g, want about %g", got, want)
	}
	if again := MedianSigma(x, 0, 1); again != got {
		t.Errorf("same seed: %g then %g", got, again)
	}
	if other := MedianSigma(x, 0, 2); other == got {
		t.Errorf("seeds 1 and 2 gave the same subsample median %g", got)
	}
	// With the sample at least n, every row is used.
	small := x.Slice(0, 300, 0, 2).(*mat.Dense)
	if a, b := MedianSigma(small, 300, 7), MedianDistance(small); a != b {
		t.Errorf("sample >= n: MedianSigma %g, MedianDistance of all rows %g", a, b)
	}
}

func TestSampleRows(t *testing.T) {
	if got := SampleRows(4, 10, 1); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("k >= n: %v", got)
	}
	counts := make([]int, 50)
	for seed := uint64(0); seed < 2000; seed++ {
		s := SampleRows(50, 10, seed)
		if len(s) != 10 || !slices.IsSorted(s) || s[0] < 0 || s[9] >= 50 {
			t.Fatalf("seed %d: %v", seed, s)
		}
		if len(slices.Compact(slices.Clone(s))) != 10 {
			t.Fatalf("seed %d: repeated index in %v", seed, s)
		}
		for _, i := range s {
			counts[i]++
		}
	}
	if !slices.Equal(SampleRows(50, 10, 9), SampleRows(50, 10, 9)) {
		t.Error("same seed, different samples")
	}
	// Each index is drawn with probability 1/5: 400 +- 18 (sd) times.
	for i, c := range counts {
		if c < 400-5*18 || c > 400+5*18 {
			t.Errorf("index %d drawn %d times in 2000 samples, want about 400", i, c)
		}
	}
}

func TestDelta(t *testing.T) {
	labels := []int{0, 2, 1, 2, 0}
	y := Delta{}.OneHot(labels, 3)
	var yyt mat.Dense
	yyt.Mul(y, y.T())
	g := Delta{}.Gram(labels)
	for i := range labels {
		if s := mat.Sum(y.RowView(i)); s != 1 || y.At(i, labels[i]) != 1 {
			t.Errorf("one-hot row %d = %v", i, mat.Row(nil, i, y))
		}
		for j := range labels {
			want := 0.0
			if labels[i] == labels[j] {
				want = 1
			}
			if g.At(i, j) != want || yyt.At(i, j) != want {
				t.Errorf("(%d, %d): Gram %g, Y Y^T %g, want %g", i, j, g.At(i, j), yyt.At(i, j), want)
			}
		}
	}
	if (Delta{}).String() != "delta" {
		t.Error(Delta{}.String())
	}
}

// TestBlockPoints checks that evaluation against prepared points is
// bit-identical to Block, for point counts around the 4-column blocks of
// the vector code, and that Points keeps its own copy.
func TestBlockPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, k := range []Prepared{RBF{Sigma: 1.3}, Laplacian{Sigma: 0.7}, Laplacian{Sigma: 2, L1: true}} {
		for _, s := range []int{1, 3, 4, 5, 17} {
			z := mat.NewDense(s, 6, nil)
			x := mat.NewDense(9, 6, nil)
			for _, m := range []*mat.Dense{z, x} {
				raw := m.RawMatrix().Data
				for i := range raw {
					raw[i] = rng.NormFloat64()
				}
			}
			x.SetRow(2, z.RawRowView(0)) // a zero distance
			p := NewPoints(z)
			var want, got mat.Dense
			k.Block(&want, x, z)
			z.Set(0, 0, 99) // the points are a copy
			k.BlockPoints(&got, x, p)
			if !mat.Equal(&want, &got) {
				t.Errorf("%v, %d points: BlockPoints differs from Block", k, s)
			}
			if p.Len() != s || p.Dense().At(0, 0) == 99 {
				t.Errorf("%v: Points did not keep a copy of %d points", k, s)
			}
		}
	}
}

// TestMiddle checks the selection of the middle order statistics against a
// sort, on random values, many ties, sorted and reversed input and NaNs.
func TestMiddle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 2, 3, 4, 5, 10, 101, 1000, 4096} {
		for kind := range 5 {
			d := make([]float64, n)
			for i := range d {
				switch kind {
				case 0:
					d[i] = rng.NormFloat64()
				case 1:
					d[i] = float64(rng.IntN(3)) // many ties
				case 2:
					d[i] = float64(i)
				case 3:
					d[i] = float64(n - i)
				case 4:
					d[i] = rng.Float64()
					if i%7 == 3 {
						d[i] = math.NaN()
					}
				}
			}
			want := slices.Clone(d)
			slices.Sort(want)
			lo, hi := middle(d)
			wl, wh := want[max(n/2-1, 0)], want[n/2]
			if !(lo == wl || lo != lo && wl != wl) || !(hi == wh || hi != hi && wh != wh) {
				t.Errorf("n = %d, kind %d: middle = %v, %v, want %v, %v", n, kind, lo, hi, wl, wh)
			}
		}
	}
}

// BenchmarkMedianSigma times the heuristic on 5,000 points in 10
// dimensions (the default subsample of 1,000: 499,500 distances).
func BenchmarkMedianSigma(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(5000, 10, nil)
	for i := range 5000 {
		for j := range 10 {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	for b.Loop() {
		MedianSigma(x, 0, 1)
	}
}
