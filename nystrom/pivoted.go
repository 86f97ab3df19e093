package nystrom

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/internal/pivchol"
	"github.com/dicalab/dica/kernel"
)

// EigenMax is the largest number of landmarks for which New computes
// K_mm^{-1/2} from a full symmetric eigendecomposition (O(m^3) with a large
// constant, in gonum's unblocked LAPACK). Above it New uses a pivoted
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
// the plain factor), New uses the plain blocked Cholesky factor instead, a
// level-3 computation where the pivoted one is m memory-bound rank-1
// updates (see wellConditioned; BenchmarkNew measures the three paths).
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
	// X = L_S^{-T} solves X L_S^T = I, row a of X by forward substitution
	// with L_S (each row is L_S^{-1} e_a).
	x := make([]float64, r*r)
	for i := range r {
		x[i*r+i] = 1
	}
	gemm.Trsm(blas.Right, blas.Trans, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: r, Stride: r, Data: ls},
		blas64.General{Rows: r, Cols: r, Stride: r, Data: x}, runtime.GOMAXPROCS(0))
	t := mat.NewDense(m, r, nil)
	for a, p := range piv {
		copy(t.RawRowView(p), x[a*r:(a+1)*r])
	}
	return newMap(k, z, rcond, pivots, t), nil
}

// wellConditioned factors kmm = U^T U = L L^T (L = U^T) by the blocked,
// parallel Cholesky factorization of internal/gemm and accepts it when
// ||L^{-1}||_F^2 <= 1/tau. Then lambda_min(K_mm) = 1/||L^{-1}||_2^2 >= tau,
// and since every residual variance of a pivoted Cholesky factorization
// (a diagonal entry of a Schur complement of K_mm) is at least
// lambda_min(K_mm), the pivoted factorization would keep every landmark:
// both give the same Nystrom approximation K_nm K_mm^{-1} K_mn, with
// features phi(x) = L^{-1} k_m(x) rotated from its. It returns T = L^{-T}
// (m x m) and the squared diagonal of L, largest first, as the pivots.
func wellConditioned(kmm *mat.SymDense, tau float64) (*mat.Dense, []float64, bool) {
	m := kmm.SymmetricDim()
	raw := kmm.RawSymmetric()
	u := make([]float64, m*m)
	for i := range m {
		copy(u[i*m+i:(i+1)*m], raw.Data[i*raw.Stride+i:i*raw.Stride+m]) // upper triangle of K_mm
	}
	workers := runtime.GOMAXPROCS(0)
	ut, ok := gemm.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: u}, workers) // K_mm = U^T U, U = L^T
	if !ok {
		return nil, nil, false
	}
	// T = L^{-T} = U^{-1} solves T U = I, row p of T by forward
	// substitution with L (it is L^{-1} e_p).
	t := mat.NewDense(m, m, nil)
	tr := t.RawMatrix()
	for i := range m {
		tr.Data[i*tr.Stride+i] = 1
	}
	gemm.Trsm(blas.Right, blas.NoTrans, ut, tr, workers)
	// ||L^{-1}||_F^2, summed over the rows of L^{-1} = T^T in turn.
	var fro float64
	for c := range m {
		for p := range m {
			v := tr.Data[p*tr.Stride+c]
			fro += v * v
		}
	}
	if !(fro <= 1/tau) {
		return nil, nil, false
	}
	pivots := make([]float64, m)
	for i := range m {
		pivots[i] = u[i*m+i] * u[i*m+i]
	}
	slices.SortFunc(pivots, func(a, b float64) int { return cmp.Compare(b, a) })
	return t, pivots, true
}
