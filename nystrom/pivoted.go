package nystrom

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/internal/pivchol"
	"github.com/dicalab/dica/kernel"
)

// EigenMax is the largest number of landmarks for which New computes
// K_mm^{-1/2} from a full symmetric eigendecomposition (O(m^3) with a large
// constant: about 42 s at m = 2000 in gonum). Above it New uses a pivoted
// Cholesky factorization K_mm ~ L L^T that stops when the largest residual
// variance falls below rcond times the largest diagonal entry of K_mm
// (Harbrecht, Peters & Schneider 2012). The kept landmarks S are then used
// exactly, phi(x) = L_S^{-1} k_S(x) with K_SS = L_S L_S^T, so Phi Phi^T is
// the Nystrom approximation on S; the landmarks left out are those already
// explained by S to within the cutoff (near-duplicates first), the
// features still satisfy ||phi(x)||^2 <= k(x, x), and no entry is amplified
// by more than (rcond max_i k(z_i, z_i))^{-1/2}.
const EigenMax = 256

// newPivoted builds the map from a pivoted Cholesky factorization of kmm.
func newPivoted(k kernel.Kernel, z *mat.Dense, kmm *mat.SymDense, rcond float64) (*Map, error) {
	m, _ := z.Dims()
	raw := kmm.RawSymmetric()
	diag := make([]float64, m)
	dmax := 0.0
	for i := range m {
		diag[i] = raw.Data[i*raw.Stride+i]
		dmax = max(dmax, diag[i])
	}
	if !(dmax > 0) {
		return nil, fmt.Errorf("nystrom: kernel matrix of the %d landmarks is zero", m)
	}
	piv, cols := pivchol.Factor(m, diag, func(p int, dst []float64) {
		for i := range m {
			dst[i] = raw.Data[min(i, p)*raw.Stride+max(i, p)]
		}
	}, pivchol.Stop{MaxDiag: rcond * dmax})
	pivots := make([]float64, len(piv))
	for a, p := range piv {
		pivots[a] = cols[a][p] * cols[a][p]
	}
	r := len(piv)
	if r == 1 && m > 1 {
		if _, lin := k.(kernel.Linear); !lin {
			return nil, fmt.Errorf("nystrom: landmarks are duplicates: effective rank 1 of %d under %v (rcond %g)", m, k, rcond)
		}
	}
	// L_S: rows of the pivots, r x r lower triangular in pivot order.
	ls := make([]float64, r*r)
	for a, p := range piv {
		for b := 0; b <= a; b++ {
			ls[a*r+b] = cols[b][p]
		}
	}
	// T (m x r): rows at the pivots hold L_S^{-T}; phi = T^T k_m = L_S^{-1} k_S.
	inv := make([]float64, r*r)
	for i := range r {
		inv[i*r+i] = 1
	}
	// inv = L_S^{-1}, with the blocked AVX2 solve of internal/gemm on all
	// cores (bit-identical for any number of workers; several times faster
	// than gonum's Dtrsm at r = 500).
	gemm.TrsmLowerLeft(r, r, ls, r, inv, r, runtime.GOMAXPROCS(0))
	t := mat.NewDense(m, r, nil)
	for a, p := range piv {
		row := t.RawRowView(p)
		for c := range r {
			row[c] = inv[c*r+a] // (L_S^{-1})^T[a, c]
		}
	}
	return newMap(k, z, rcond, pivots, t), nil
}
