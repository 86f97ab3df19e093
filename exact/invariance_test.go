package exact_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// domainShare returns the distributional variance of the rows of z across
// domains (tr(Z Z^T Q), linear kernel on the features) divided by the total
// variance tr(Z^T H Z)/n: the fraction of the features' variance that is
// between-domain.
func domainShare(z *mat.Dense, domains []int, N int) float64 {
	n, _ := z.Dims()
	var g mat.Dense
	g.Mul(z, z.T())
	dv := exact.DistributionalVariance(sym(&g), domains, N)
	tot := mat.Trace(centered(&g)) / float64(n)
	return dv / tot
}

// TestDomainInvariance checks what DICA is for: on data whose domains are
// shifted and scaled (toy.Classification), the domain term makes the
// between-domain share of the features' variance smaller for DICA than for
// COIR (same numerator, no domain term), and smaller for UDICA than KPCA.
func TestDomainInvariance(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 50, Classes: 3, Seed: 4})
	N := ds.NumDomains()
	o := exact.Options{Components: 2, Lambda: 1e-2, Epsilon: 1e-2, Kernel: kernel.RBF{Sigma: 1.5}}
	share := map[exact.Method]float64{}
	for _, m := range []exact.Method{exact.DICA, exact.COIR, exact.UDICA, exact.KPCA} {
		o.Method = m
		model := fit(t, ds, o)
		share[m] = domainShare(model.TrainProjection(), ds.Domain, N)
	}
	t.Logf("between-domain share of variance: %v", share)
	if !(share[exact.DICA] < share[exact.COIR]) {
		t.Errorf("DICA domain share %.4f not below COIR %.4f", share[exact.DICA], share[exact.COIR])
	}
	if !(share[exact.UDICA] < share[exact.KPCA]) {
		t.Errorf("UDICA domain share %.4f not below KPCA %.4f", share[exact.UDICA], share[exact.KPCA])
	}
}
