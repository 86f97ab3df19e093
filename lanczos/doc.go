// Package lanczos computes a few eigenpairs at one end of the spectrum of a
// large symmetric operator, and of symmetric-definite pencils A x = lambda B x,
// by thick-restart Lanczos in Krylov-Schur form.
//
// gonum has only dense eigensolvers (mat.EigenSym, O(n^3) for all pairs;
// BenchmarkSym and BenchmarkEigenSym compare the two); this package needs
// only products y = A x, so it runs on dense matrices (Dense), structured
// operators (LowRank: alpha I + U S U^T) and matrix-free operators (Func).
// docs/LANCZOS.md describes the design and the decisions behind its
// defaults.
//
// # Algorithm
//
// Sym keeps an orthonormal basis V of at most NCV vectors with
// A V = V S + f b^T, S symmetric (Stewart 2001, "A Krylov-Schur algorithm
// for large eigenproblems"; Wu and Simon 2000, thick-restart Lanczos):
//
//   - Each step applies A once, subtracts the Lanczos recurrence terms, then
//     reorthogonalizes fully by classical Gram-Schmidt against the whole
//     basis, with a second pass when the norm drops below 1/sqrt 2 of its
//     value before the pass (the DGKS test). For n >= 32768 the passes run
//     on fixed column chunks in parallel, summed in chunk order.
//   - After every step the small projected matrix is solved (Rayleigh-Ritz),
//     so the iteration stops as soon as the wanted pairs converge, not only
//     at restarts. A Ritz pair (theta, y) is converged when its residual
//     estimate |b^T y| <= Tol max(|theta|, eps^(2/3) ||A||_est) (ARPACK's
//     test, with the absolute floor made relative to the running estimate of
//     ||A|| so that the zero eigenvalues of low-rank operators converge).
//   - Converged pairs are locked: kept in the basis, orthogonalized against,
//     and removed from the active projected problem. When the basis is full
//     the unconverged wanted and guard pairs plus 30% of the rest are kept
//     (thick restart) with the residual vector, but at most half of the
//     active basis unless more wanted pairs are unconverged (ARPACK's
//     nev + min(nconv, np/2) serves the same end: room to expand when NCV
//     is small).
//   - Breakdown (beta <= eps sqrt(n) ||A||_est) means an invariant subspace:
//     the solver continues from a random vector orthogonal to the basis. If
//     that vector breaks down at once, A vanishes on the complement: the
//     reachable space is exhausted (an exactly low-rank operator) and the
//     pairs with nonzero eigenvalues are returned with status
//     ReachableSpaceExhausted. This is a normal outcome, not an error.
//   - Final explicit residuals ||A x - theta B x|| are computed from the
//     stored products A V (carried through restarts), so they cost no extra
//     matvecs; Status is ResidualCheckFailed if one exceeds 10 Tol (times
//     the scale above) beyond rounding.
//
// # Multiplicity safety
//
// A single Krylov sequence contains only one direction of each eigenspace;
// copies of a repeated eigenvalue appear only through rounding, so ARPACK
// and Spectra report success with copies missing on the 2-D Laplacian
// (docs/LANCZOS.md, "Multiplicity"). By default the solver (1) computes
// k + g pairs, g = max(2, k/2) guard pairs that are kept through restarts
// and decide what counts as "wanted", and (2) after convergence restarts
// once more from a fresh random vector z orthogonal to all locked pairs (a
// deflated restart). Any Ritz value of that deflated space that rises above
// the k-th eigenvalue found is a missed copy: it is converged, locked, and
// the check repeats.
//
// The check ends with a certificate rather than when its Ritz values look
// settled. The solver carries, for every basis vector v_i of the check, the
// value p_i(x) of the polynomial with v_i = p_i(A') z (A' the deflated
// operator; the values follow the Lanczos recurrence and the thick
// restarts) at each distinct wanted eigenvalue x found. A missed copy u at x,
// orthogonal to the locked vectors, has <u, v_i> = c p_i(x) with c = <u, z>,
// so the unit vector of the check's space along (p_i(x)) gives
// |c| <= 1 / ||p(x)|| (without restarts, 1 / ||p(x)||^2 is the Christoffel
// function of the Lanczos polynomials: the largest mass at x that any
// spectrum consistent with the check's Lanczos coefficients can have). For a
// random z, c ~ N(0, 1/d), d the dimension of the deflated space, so a copy
// at x escapes the check with probability at most sqrt(2 d / pi) / ||p(x)||.
// The check stops when this is <= Settings.CheckMiss (default 1e-2) at every
// x while its top Ritz value is below the k-th eigenvalue. Its cost adapts
// to the spectrum: the bound falls by the factor that separates the wanted
// values from the rest at each step, so the check is short when the rest
// lies far below and long when it crowds the wanted values
// (TestClusteredCheckCost; docs/LANCZOS.md gives the counts). When a
// breakdown cuts the check's Krylov sequence, the certificate is lost and
// the check ends instead when its top Ritz value is localized below the
// k-th one after at least 5 steps.
//
// The argument assumes that a missed copy is orthogonal to the main Krylov
// space (exact in exact arithmetic) and that z is random (for GenSymBInv,
// which works in the B inner product, the Gaussian model of c holds only
// approximately); it says nothing about adversarial start vectors.
// Settings.NoDeflatedCheck and a negative Settings.Guard turn the safeguards
// off.
//
// # Generalized problems
//
// GenSymChol (dense SPD B, Cholesky transform L^-1 A L^-T), GenSymBInv
// (Lanczos in the B inner product on B^-1 A, given B^-1 as an operator) and
// GenSymLowRank (B = alpha I + V V^T in closed form through the thin
// eigendecomposition of V V^T) return B-orthonormal eigenvectors.
//
// # Reproducibility and concurrency
//
// The package has no mutable package-level state. A solve takes a seed for
// its random vectors (PCG); the same seed and inputs give bit-identical
// results. Solves may run concurrently from many goroutines, also on the
// same Operator as long as its Apply is safe for concurrent use.
package lanczos
