package krr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
)

// TestNystromAllLandmarks checks the ridge mapping with the project's
// Nystrom map: with every training point a landmark, Phi Phi' = K and the
// identity-penalty ridge (2) with the same Lambda reproduces exact KRR.
func TestNystromAllLandmarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	x := randPoints(rng, 80, 3, 0, 1)
	y := targets(x, 0.1, rng)
	xt := randPoints(rng, 40, 3, 0, 1)
	k := kernel.RBF{Sigma: 0.6}
	ny, err := nystrom.New(k, x, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{0.01, 0.3} {
		ex, err := FitExact(x, y, k, Options{Lambda: lambda, Center: true})
		if err != nil {
			t.Fatal(err)
		}
		lin, err := FitLinear(context.Background(), feats(t, ny, x), y, Options{Lambda: lambda, Center: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(ok[[]float64](t)(lin.Predict(feats(t, ny, xt))), ok[[]float64](t)(ex.Predict(xt))); d > 1e-6 {
			t.Errorf("lambda=%g: max |Nystrom ridge - exact KRR| = %g", lambda, d)
		}
	}
}

// ExampleFitLinear fits a Nystrom-feature ridge regression on 20,000 points
// and compares it with the function it learns.
func ExampleFitLinear() {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(20000, 1, nil)
	y := make([]float64, 20000)
	for i := range y {
		v := 6 * rng.Float64()
		x.Set(i, 0, v)
		y[i] = smooth([]float64{v}) + 0.1*rng.NormFloat64()
	}
	landmarks, err := nystrom.Uniform(x, 50, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	phi, err := nystrom.New(kernel.RBF{Sigma: 0.5}, landmarks, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := MapFeatures(phi, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := FitLinear(context.Background(), f, y, Options{Lambda: 1, Center: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	grid := mat.NewDense(5, 1, []float64{0.5, 1.5, 2.5, 3.5, 4.5})
	fg, err := MapFeatures(phi, grid)
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := m.Predict(fg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, f := range pred {
		fmt.Printf("f(%.1f) = %5.2f, sin(2x) = %5.2f\n", grid.At(i, 0), f, smooth(grid.RawRowView(i)))
	}
	// Output:
	// f(0.5) =  0.85, sin(2x) =  0.84
	// f(1.5) =  0.15, sin(2x) =  0.14
	// f(2.5) = -0.96, sin(2x) = -0.96
	// f(3.5) =  0.65, sin(2x) =  0.66
	// f(4.5) =  0.41, sin(2x) =  0.41
}
