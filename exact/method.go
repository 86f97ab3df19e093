// Package exact implements the DICA family of Muandet, Balduzzi & Schölkopf
// (ICML 2013) literally, on the n x n kernel matrices of the training points:
// supervised DICA, unsupervised UDICA, kernel PCA and covariance operator
// inverse regression (COIR), in the library's canonical symmetric-definite
// form and in the paper's (and the authors' dica.m) non-symmetric form.
//
// The cost is O(n^2 d) for the kernel matrix and O(n^3) for the solve, and
// the memory O(n^2): this path is for small data and for measuring the
// error of the low-rank approximations, which solve the same canonical
// problem (docs/MATH.md, "2. Two eigenproblems" and "3. The low-rank
// reduction").
package exact

import (
	"fmt"
	"strings"

	"github.com/dicalab/dica/internal/enum"
)

// Method selects a member of the DICA family. All four solve
//
//	numerator B = denominator B Gamma
//
// with centered kernel matrices K (inputs) and L (outputs), Q the
// distributional-variance matrix of the domains (see Q) and
// P = L (L + n eps I)^{-1}; in the canonical form:
type Method int

const (
	// DICA is supervised domain-invariant component analysis (the paper's
	// Algorithm 1): (1/n) K P K B = (K Q K + K + lambda I) B Gamma.
	DICA Method = iota
	// UDICA is unsupervised DICA (the paper's Algorithm 2):
	// (1/n) K^2 B = (K Q K + K + lambda I) B Gamma.
	UDICA
	// KPCA is kernel principal component analysis, UDICA without the domain
	// term: (1/n) K^2 B = (K + lambda I) B Gamma.
	KPCA
	// COIR is covariance operator inverse regression, DICA without the
	// domain term: (1/n) K P K B = (K + lambda I) B Gamma.
	COIR
	// Input is no transformation: the (preprocessed) inputs themselves,
	// the baseline every method is compared with. It solves no
	// eigenproblem, so Fit refuses it; dica.Fit records it as the identity
	// projection.
	Input
)

var methodNames = enum.Names[Method]{Type: "Method",
	Names: []string{DICA: "dica", UDICA: "udica", KPCA: "kpca", COIR: "coir", Input: "input"}}

// String returns the lower-case name of the method ("dica", "udica",
// "kpca", "coir", "input").
func (m Method) String() string { return methodNames.String(m) }

// Supervised reports whether the method uses labels or targets (DICA, COIR).
func (m Method) Supervised() bool { return m == DICA || m == COIR }

// UsesDomains reports whether the method penalizes the distributional
// variance across domains (DICA, UDICA).
func (m Method) UsesDomains() bool { return m == DICA || m == UDICA }

// valid reports whether m is a method Fit solves (Input is not).
func (m Method) valid() bool { return methodNames.Valid(m) && m != Input }

// ParseMethod returns the method named s, case-insensitively.
func ParseMethod(s string) (Method, error) {
	if m, ok := methodNames.Parse(strings.TrimSpace(s)); ok {
		return m, nil
	}
	return 0, fmt.Errorf("exact: unknown method %q (want one of %s)", s, methodNames.List(", "))
}

// Form selects which eigenproblem is solved.
type Form int

const (
	// Canonical is the symmetric-definite problem
	// (1/n) K P K B = (K Q K + K + lambda I) B Gamma, with B^T D B = I for
	// the denominator D. It is the problem the low-rank path approximates.
	Canonical Form = iota
	// Paper is equation (8) of the paper as the authors' dica.m solves it:
	// the non-symmetric eig((K Q K + K + lambda I)^{-1} L (L + n eps I)^{-1} K^2),
	// without the 1/n (eigenvalues are n times the paper's), top components
	// by magnitude, real parts, each unit-norm eigenvector divided by the
	// square root of its eigenvalue.
	Paper
)

var formNames = enum.Names[Form]{Type: "Form", Names: []string{Canonical: "canonical", Paper: "paper"}}

// String returns the lower-case name of the form ("canonical", "paper").
func (f Form) String() string { return formNames.String(f) }

func (f Form) valid() bool { return formNames.Valid(f) }

// ParseForm returns the form named s, case-insensitively.
func ParseForm(s string) (Form, error) {
	if f, ok := formNames.Parse(strings.TrimSpace(s)); ok {
		return f, nil
	}
	return 0, fmt.Errorf("exact: unknown form %q (want one of %s)", s, formNames.List(", "))
}
