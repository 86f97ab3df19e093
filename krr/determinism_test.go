package krr

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
)

// TestGOMAXPROCSDeterminism fits the same problems with GOMAXPROCS 1 and 2:
// the weights (and the mean embeddings) must agree bit for bit, since the
// row blocks are summed in a fixed order whatever the number of goroutines.
func TestGOMAXPROCSDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	x, dom, y := spreadData(rng, 7, 300, 0)
	k := kernel.RBF{Sigma: 0.8}
	rows := approx.KernelRows{Kernel: k, Points: randPoints(rng, 40, 2, 0, 1)}
	fit := func() (plain, dist []float64, means []float64) {
		opt := Options{Lambda: 0.1, Center: true, BlockRows: 50}
		p, err := FitLinear(context.Background(), denseFeatures{Materialize(feats(t, rows, x))}, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDistributional(nil, rows, x, dom, DistOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.Features(x, dom)
		if err != nil {
			t.Fatal(err)
		}
		q, err := FitLinear(context.Background(), f, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		return p.W, q.W, d.Means.RawMatrix().Data
	}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	p1, d1, m1 := fit()
	runtime.GOMAXPROCS(2)
	p2, d2, m2 := fit()
	for _, c := range []struct {
		name string
		a, b []float64
	}{{"plain weights", p1, p2}, {"distributional weights", d1, d2}, {"mean embeddings", m1, m2}} {
		if len(c.a) != len(c.b) {
			t.Fatalf("%s: lengths %d and %d", c.name, len(c.a), len(c.b))
		}
		for i := range c.a {
			if math.Float64bits(c.a[i]) != math.Float64bits(c.b[i]) {
				t.Errorf("%s [%d]: %v with GOMAXPROCS=1, %v with 2", c.name, i, c.a[i], c.b[i])
				break
			}
		}
	}
}
