package krr

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/kernel"
)

func BenchmarkFitLinear200kx10m200(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randPoints(rng, 200000, 10, 0, 1)
	y := targets(x, 0.1, rng)
	k := kernel.RBF{Sigma: 3}
	z := randPoints(rng, 200, 10, 0, 1)
	rows := approx.KernelRows{Kernel: k, Points: z}
	pen := mat.NewSymDense(200, gram(k, z, z).RawMatrix().Data)
	f := feats(b, rows, x)
	for b.Loop() {
		if _, err := FitLinear(context.Background(), f, y, Options{Lambda: 0.1, Center: true, Penalty: pen}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDistributional200kx10(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 1))
	const ndom, per = 20, 10000
	x, dom, y := spreadData(rng, ndom, per, 0)
	xx := mat.NewDense(ndom*per, 10, nil)
	for i := range ndom * per {
		for j := range 10 {
			xx.Set(i, j, x.At(i, j%2)+0.1*float64(j))
		}
	}
	k := kernel.RBF{Sigma: 3}
	rows := approx.KernelRows{Kernel: k, Points: randPoints(rng, 100, 10, 0, 1)}
	for b.Loop() {
		d, err := NewDistributional(nil, rows, xx, dom, DistOptions{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := d.Features(xx, dom)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := FitLinear(context.Background(), f, y, Options{Lambda: 0.1, Center: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExact2000(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 1))
	x := randPoints(rng, 2000, 10, 0, 1)
	y := targets(x, 0.1, rng)
	for b.Loop() {
		if _, err := FitExact(x, y, kernel.RBF{Sigma: 3}, Options{Lambda: 0.1}); err != nil {
			b.Fatal(err)
		}
	}
}
