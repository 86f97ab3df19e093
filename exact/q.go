package exact

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Q returns the n x n coefficient matrix of the distributional variance
// (the paper's Section 3.1): for points p in domain i and q in domain j,
//
//	Q_pq = (N-1)/(N^2 n_i^2) if i == j, and -1/(N^2 n_i n_j) otherwise,
//
// that is Q = (1/N) E H_N E^T with E[p, i] = 1/n_i for p in domain i and
// H_N = I_N - 11^T/N. domains[p] in [0, N) is the domain of point p and
// every domain must have a point.
//
// Q has rank at most N-1 and is only needed to check other computations:
// the solvers never form it. Q panics if a domain index is out of [0, N) or
// a domain has no point (programmer errors: a validated dataset.Dataset
// satisfies both).
func Q(domains []int, N int) *mat.SymDense {
	size := domainSizes(domains, N)
	n := len(domains)
	q := mat.NewSymDense(n, nil)
	nf := float64(N)
	for p := 0; p < n; p++ {
		i := domains[p]
		for r := p; r < n; r++ {
			j := domains[r]
			if i == j {
				q.SetSym(p, r, (nf-1)/(nf*nf*float64(size[i])*float64(size[i])))
			} else {
				q.SetSym(p, r, -1/(nf*nf*float64(size[i])*float64(size[j])))
			}
		}
	}
	return q
}

// DistributionalVariance returns tr(K Q), the distributional variance
// V_H(S) of the paper's Theorem 2: with mu_i the mean embedding of domain i
// and mu_bar the unweighted mean of the N domain means,
//
//	tr(K Q) = (1/N) sum_i ||mu_i - mu_bar||^2
//	        = (1/N) sum_i G_ii - (1/N^2) sum_ij G_ij,  G_ij = <mu_i, mu_j> = S_ij/(n_i n_j),
//
// where S_ij is the sum of the (i, j) block of K. It costs O(n^2) and does not
// form Q. K need not be centered (Q 1 = 0). domains is as for Q, and
// DistributionalVariance panics, as Q does, on invalid domains or when K is
// not len(domains) x len(domains).
func DistributionalVariance(K mat.Symmetric, domains []int, N int) float64 {
	n := K.SymmetricDim()
	if len(domains) != n {
		panic(fmt.Sprintf("exact: kernel is %d x %d but %d domain entries", n, n, len(domains)))
	}
	size := domainSizes(domains, N)
	s := make([]float64, N*N)
	for p := 0; p < n; p++ {
		row := s[domains[p]*N : domains[p]*N+N]
		for r := 0; r < n; r++ {
			row[domains[r]] += K.At(p, r)
		}
	}
	var diag, all float64
	for i := 0; i < N; i++ {
		for j := 0; j < N; j++ {
			g := s[i*N+j] / (float64(size[i]) * float64(size[j]))
			all += g
			if i == j {
				diag += g
			}
		}
	}
	nf := float64(N)
	return diag/nf - all/(nf*nf)
}

// domainSizes counts the points of each domain; it panics on an index out
// of range or an empty domain (programmer errors: the solvers validate
// their data first).
func domainSizes(domains []int, N int) []int {
	if N < 1 {
		panic(fmt.Sprintf("exact: %d domains", N))
	}
	size := make([]int, N)
	for p, i := range domains {
		if i < 0 || i >= N {
			panic(fmt.Sprintf("exact: point %d: domain %d out of range [0, %d)", p, i, N))
		}
		size[i]++
	}
	for i, c := range size {
		if c == 0 {
			panic(fmt.Sprintf("exact: domain %d has no points", i))
		}
	}
	return size
}
