package nystrom

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

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
// by more than (rcond max_i k(z_i, z_i))^{-1/2}. When K_mm is provably well
// conditioned enough that the pivoted factorization would keep every
// landmark (lambda_min(K_mm) >= rcond max_i k(z_i, z_i), checked through
// the plain factor), New uses the plain blocked Cholesky factor instead,
// about 15 times faster at m = 1000 (see wellConditioned).
const EigenMax = 256

// newPivoted builds the map from a pivoted Cholesky factorization of kmm,
// or from its plain Cholesky factorization when that one provably keeps
// every landmark (see wellConditioned).
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
	if t, pivots, ok := wellConditioned(kmm, rcond*dmax); ok {
		return newMap(k, z, rcond, pivots, t), nil
	}
	return pivotedMap(k, z, kmm, rcond, diag, dmax)
}

// pivotedMap builds the map from the pivoted Cholesky factorization of kmm
// (diag is its diagonal, overwritten, and dmax the largest entry).
func pivotedMap(k kernel.Kernel, z *mat.Dense, kmm *mat.SymDense, rcond float64, diag []float64, dmax float64) (*Map, error) {
	m, _ := z.Dims()
	raw := kmm.RawSymmetric()
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

// wellConditioned factors kmm = L L^T by the blocked Cholesky factorization
// of internal/gemm (parallel; about 10 ms at m = 1000, where the pivoted one,
// a sequence of m memory-bound rank-1 updates, takes 150 ms) and accepts it
// when ||L^{-1}||_F^2 <= 1/tau. Then lambda_min(K_mm) = 1/||L^{-1}||_2^2 >= tau,
// and since every residual variance of a pivoted Cholesky factorization
// (a diagonal entry of a Schur complement of K_mm) is at least
// lambda_min(K_mm), the pivoted factorization would keep every landmark:
// both give the same Nystrom approximation K_nm K_mm^{-1} K_mn, with
// features phi(x) = L^{-1} k_m(x) rotated from its. It returns T = L^{-T}
// (m x m) and the squared diagonal of L, largest first, as the pivots.
func wellConditioned(kmm *mat.SymDense, tau float64) (*mat.Dense, []float64, bool) {
	m := kmm.SymmetricDim()
	raw := kmm.RawSymmetric()
	l := make([]float64, m*m)
	for i := range m {
		for j := 0; j <= i; j++ {
			l[i*m+j] = raw.Data[j*raw.Stride+i] // lower triangle of K_mm
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if !gemm.Cholesky(l, m, m, workers) {
		return nil, nil, false
	}
	inv := make([]float64, m*m)
	for i := range m {
		inv[i*m+i] = 1
	}
	gemm.TrsmLowerLeft(m, m, l, m, inv, m, workers) // inv = L^{-1}
	var fro float64
	for _, v := range inv {
		fro += v * v
	}
	if !(fro <= 1/tau) {
		return nil, nil, false
	}
	t := mat.NewDense(m, m, nil)
	for p := range m {
		row := t.RawRowView(p)
		for c := range m {
			row[c] = inv[c*m+p]
		}
	}
	pivots := make([]float64, m)
	for i := range m {
		pivots[i] = l[i*m+i] * l[i*m+i]
	}
	slices.SortFunc(pivots, func(a, b float64) int { return cmp.Compare(b, a) })
	return t, pivots, true
}
