// Package dica fits Domain-Invariant Component Analysis (Muandet, Balduzzi &
// Schölkopf, ICML 2013) at scale.
//
// A fit is a plan (kernels and a feature map phi: R^d -> R^m chosen from a
// sample of the data), one streaming pass over the data accumulating
// sufficient statistics (per-domain and per-class feature sums, and the
// m x m Gram sum only when the method needs it), and a solve of a small
// generalized eigenproblem (docs/MATH.md, "3. The low-rank reduction").
// The data is never held as an n x m matrix, so n is limited by the disk,
// not memory; a fit whose estimated memory exceeds the budget
// (EstimateMemory, Config.MaxMemory) is refused before it allocates.
//
// A model records how its data were preprocessed (Config.Preprocessing:
// channels, compensation, transform) and applies it to raw cells
// (Model.Transform). Models, statistics and plans are versioned files with a
// checksum (docs/FORMATS.md), written atomically.
//
// The exact n x n path (package exact) is available through Solver = Exact
// for small data and for measuring the approximation error.
package dica

import (
	"fmt"
	"runtime"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/internal/enum"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/nystrom"
	"github.com/dicalab/dica/preprocess"
)

// Method selects the member of the DICA family (docs/MATH.md, "1. The DICA
// family").
type Method = exact.Method

// The methods.
const (
	// DICA: supervised, domain-invariant (the paper's Algorithm 1).
	DICA = exact.DICA
	// UDICA: unsupervised, domain-invariant (the paper's Algorithm 2).
	UDICA = exact.UDICA
	// KPCA: kernel PCA (no domain term, no labels).
	KPCA = exact.KPCA
	// COIR: covariance operator inverse regression (no domain term).
	COIR = exact.COIR
)

// Form selects the eigenproblem of the exact path (docs/MATH.md, "2. Two
// eigenproblems").
type Form = exact.Form

// The forms.
const (
	Canonical = exact.Canonical
	Paper     = exact.Paper
)

// ParseMethod reads a method's name: dica, udica, kpca or coir (case and
// spaces ignored).
func ParseMethod(s string) (Method, error) { return exact.ParseMethod(s) }

// ParseForm reads an exact eigenproblem's form: canonical or paper.
func ParseForm(s string) (Form, error) { return exact.ParseForm(s) }

// Solver selects how the kernel is represented.
type Solver int

// The solvers.
const (
	// Nystrom features from m landmarks (the default).
	Nystrom Solver = iota
	// RFF: random Fourier features (m features as m/2 sin/cos pairs).
	RFF
	// Exact: the n x n path of package exact; the data must fit in memory.
	Exact
)

var solverNames = enum.Names[Solver]{Type: "Solver", Names: []string{Nystrom: "nystrom", RFF: "rff", Exact: "exact"}}

// String returns the solver's name as ParseSolver accepts it ("nystrom",
// "rff" or "exact"), or "Solver(n)" for a value that is not a solver.
func (s Solver) String() string { return solverNames.String(s) }

// ParseSolver parses "nystrom", "rff" or "exact".
func ParseSolver(s string) (Solver, error) {
	if v, ok := solverNames.Parse(s); ok {
		return v, nil
	}
	return 0, fmt.Errorf("dica: unknown solver %q (want nystrom, rff or exact)", s)
}

// Landmarks selects how Nystrom landmarks are chosen.
type Landmarks int

// The landmark choices.
const (
	// UniformLandmarks: m points drawn uniformly without replacement.
	UniformLandmarks Landmarks = iota
	// KMeansLandmarks: k-means++ seeding and a few Lloyd steps on a sample.
	KMeansLandmarks
	// GivenLandmarks: Config.LandmarkPoints.
	GivenLandmarks
)

var landmarkNames = enum.Names[Landmarks]{Type: "Landmarks",
	Names: []string{UniformLandmarks: "uniform", KMeansLandmarks: "kmeans", GivenLandmarks: "given"}}

// String returns the landmark choice's name as ParseLandmarks accepts it
// ("uniform", "kmeans" or "given"), or "Landmarks(n)" for a value that is
// not a landmark choice.
func (l Landmarks) String() string { return landmarkNames.String(l) }

// ParseLandmarks parses "uniform", "kmeans" or "given".
func ParseLandmarks(s string) (Landmarks, error) {
	if v, ok := landmarkNames.Parse(s); ok {
		return v, nil
	}
	return 0, fmt.Errorf("dica: unknown landmark choice %q (want uniform or kmeans)", s)
}

// Defaults used when the corresponding Config field is zero.
const (
	DefaultComponents = 10
	DefaultEpsilon    = 1e-4
	DefaultRank       = 500
	DefaultBlockRows  = 1024
	// DefaultSeed is the seed of a Config whose Seed is 0, and the
	// command's default: a library fit and a command fit of the same data
	// with the same settings give the same model.
	DefaultSeed = 1
	// MaxRank bounds Config.Rank: the statistics hold m x m sums, 128 GiB
	// each at m = MaxRank. It also bounds the rank a plan file may declare.
	MaxRank = 1 << 17
	// DefaultSample is the size of the reservoir sample a fit draws in its
	// planning pass (median heuristic, landmarks): max(DefaultSample, 20 m).
	DefaultSample = 20000
	// DefaultMedianSample is the number of sampled points whose pairwise
	// distances give the median-heuristic bandwidth.
	DefaultMedianSample = 1000
	// NullTol is the relative threshold below which an eigenvalue is not
	// signal: gamma <= NullTol * gamma_max.
	NullTol = 1e-10
	// DefaultRCond is the default of Config.RCond: nystrom.DefaultRCond,
	// the relative cutoff of docs/MATH.md, "7. Kernels and feature maps".
	DefaultRCond = nystrom.DefaultRCond
	// OutputRCond caps the relative eigenvalue cutoff of the Nystrom map on
	// real targets (regression): that map uses min(Config.RCond,
	// OutputRCond). See Config.RCond for why it is tighter.
	OutputRCond = 1e-12
)

// Config configures a fit. The zero value with Method set is a sensible
// configuration: Nystrom with DefaultRank uniform landmarks, RBF kernels
// with median-heuristic bandwidths, lambda = 0, eps = DefaultEpsilon.
type Config struct {
	Method     Method
	Components int     // k, the number of components (DefaultComponents)
	Lambda     float64 // ridge on the complexity term (>= 0)
	Epsilon    float64 // eps of P = L (L + n eps I)^{-1} (DefaultEpsilon)

	// Kernel is the input kernel; nil means RBF with sigma = Sigma, or by
	// the median heuristic when Sigma is 0.
	Kernel kernel.Kernel
	Sigma  float64
	// OutputKernel is the kernel on real targets (regression); nil means
	// RBF with sigma_y = SigmaY, or the median heuristic when SigmaY is 0.
	// Class labels always use the delta kernel.
	OutputKernel kernel.Kernel
	SigmaY       float64

	Solver Solver
	// Rank is m: landmarks (Nystrom) or features (RFF) (DefaultRank; at
	// most MaxRank).
	Rank int
	// Landmarks chooses Nystrom landmarks; LandmarkPoints holds them for
	// GivenLandmarks.
	Landmarks      Landmarks
	LandmarkPoints *mat.Dense
	// LloydIters is the number of Lloyd steps after k-means++ (default 5).
	LloydIters int
	// Orthogonal selects orthogonal random features (RFF only).
	Orthogonal bool
	// RCond is the relative eigenvalue cutoff inside K_mm^{-1/2}
	// (eigenvalues of K_mm below RCond times the largest are dropped; see
	// docs/MATH.md, "7. Kernels and feature maps"), of
	// the domain-variance term C_Q and of the factorization of C in the
	// lambda > 0 reduction. 0 means DefaultRCond (1e-10); otherwise it must
	// satisfy 0 < RCond < 1.
	//
	// The input cutoff sets the floor of the agreement with the exact path
	// at m = n (every point a landmark): Phi Phi^T is K with the
	// eigenvalues below RCond s_max removed
	// (TestNystromAllPointsEqualsExact bounds the agreement).
	//
	// The Nystrom map on real targets uses the tighter min(RCond,
	// OutputRCond): an eigenvalue s of K_rr that is dropped changes
	// P = L (L + n eps I)^{-1} by about s / (r eps), which is not negligible
	// for eps = 1e-4 at a cutoff of 1e-10. The larger amplification of
	// rounding by T_y = K_rr^{-1/2}, up to (OutputRCond s_max)^{-1/2}, is
	// harmless because T_y is applied to each point's kernel row, never to
	// sums (see Stats).
	RCond float64
	// OutputRank is the number of Nystrom landmarks on the targets for the
	// RBF output kernel (default min(Rank, 200)).
	OutputRank int

	// Form is the eigenproblem of the exact path (Canonical by default).
	Form Form

	// Seed makes the fit reproducible: the same seed gives a bit-identical
	// model whatever GOMAXPROCS is. 0 means DefaultSeed.
	Seed uint64
	// Sample is the reservoir size of the planning pass (DefaultSample).
	Sample int
	// BlockRows is the number of rows per block of the streaming pass
	// (DefaultBlockRows). It does not change the result beyond rounding.
	BlockRows int
	// Workers is the number of goroutines of the streaming pass
	// (GOMAXPROCS when 0). It never changes the result.
	Workers int
	// Progress, when set, is called from one goroutine with the number of
	// rows processed so far in the current pass and the pass name.
	Progress func(pass string, rows int64)

	// Preprocessing records how the values in the user's files became the
	// rows the source delivers (channels, linearization, compensation,
	// transform), so that the model can preprocess new data alike
	// (Model.Transform, Model.Preprocessing). Fit does not apply it: the
	// source delivers preprocessed rows, as the sources of packages csvio
	// and fcs do when given the same options. Nil means not recorded. It is
	// part of the plan: statistics of different preprocessing do not merge.
	Preprocessing *preprocess.Pipeline

	// Precision is the floating-point precision, in bits, of the
	// streaming pass of a Nystrom or RFF fit: 64 (the default; 0 means 64)
	// or 32. With 32, the kernel rows of a Nystrom map with an RBF or
	// Laplacian kernel are computed in float32 (coordinates rounded to
	// float32, distances and exponentials in float32: kernel.Prepared32)
	// and added to the float64 domain and class sums, and the Gram sum
	// (lambda > 0, UDICA, KPCA) is summed in float32 over blocks of 128
	// rows and in float64 across them (gemm.Syrk32); both about twice as
	// fast. The plan, the solve and Model.Transform stay float64.
	//
	// The map's transform amplifies the float32 rounding by up to the
	// condition number of the landmarks' kernel matrix, so the pass runs
	// in float32 only where that cannot hurt (Plan.SinglePrecision): for
	// random Fourier features, and for Nystrom maps whose condition number
	// is bounded by 1e7 (narrow kernels, such as sigma = 1 on
	// log-transformed cytometry data up to m = 1000); with wide kernels
	// (such as the median heuristic's) it stays float64.
	// docs/PERFORMANCE.md ("Single precision") measures the error against
	// the float64 fit and against the Nystrom approximation. The exact
	// solver is float64 only. Statistics of different precisions do not
	// merge.
	Precision int

	// MaxMemory is the memory budget of the fit in bytes: a fit whose
	// estimated memory (EstimateMemory) exceeds it is refused with a
	// *MemoryError before anything large is allocated. 0 means
	// DefaultMemoryFraction of the machine's memory; < 0 means no limit.
	MaxMemory int64
}

// Bandwidths returns the bandwidths of the input and output kernels (0
// for a kernel without one; before a fit, Sigma and SigmaY when the
// kernels are not set).
func (c Config) Bandwidths() (sigma, sigmaY float64) {
	sigma, sigmaY = kernel.Bandwidth(c.Kernel), kernel.Bandwidth(c.OutputKernel)
	if c.Kernel == nil {
		sigma = c.Sigma
	}
	if c.OutputKernel == nil {
		sigmaY = c.SigmaY
	}
	return sigma, sigmaY
}

// WithDefaults returns c with its zero fields that have a default set to
// it (DefaultComponents, DefaultEpsilon, DefaultRank, DefaultSeed, ...;
// Workers to GOMAXPROCS): the configuration a fit with c uses. Fit,
// NewPlan, EstimateMemory and the solves apply it themselves; a program
// that mirrors a fit (a distributed pipeline) calls it to use the same
// values.
func (c Config) WithDefaults() Config { return c.withDefaults() }

func (c Config) withDefaults() Config {
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Components == 0 {
		c.Components = DefaultComponents
	}
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if c.Rank == 0 {
		c.Rank = DefaultRank
	}
	if c.LloydIters == 0 {
		c.LloydIters = 5
	}
	if c.RCond == 0 {
		c.RCond = DefaultRCond
	}
	if c.OutputRank == 0 {
		c.OutputRank = min(c.Rank, 200)
	}
	if c.Sample == 0 {
		c.Sample = max(DefaultSample, 20*c.Rank)
	}
	if c.BlockRows == 0 {
		c.BlockRows = DefaultBlockRows
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Precision == 0 {
		c.Precision = 64
	}
	return c
}

func (c Config) check() error {
	switch c.Method {
	case DICA, UDICA, KPCA, COIR:
	default:
		return fmt.Errorf("dica: unknown method %v", c.Method)
	}
	if c.Components < 1 {
		return fmt.Errorf("dica: components = %d; need at least 1", c.Components)
	}
	if c.Lambda < 0 || isBad(c.Lambda) {
		return fmt.Errorf("dica: lambda = %v; need a finite value >= 0", c.Lambda)
	}
	if c.Epsilon <= 0 || isBad(c.Epsilon) {
		return fmt.Errorf("dica: epsilon = %v; need a finite value > 0", c.Epsilon)
	}
	if c.Sigma < 0 || isBad(c.Sigma) || c.SigmaY < 0 || isBad(c.SigmaY) {
		return fmt.Errorf("dica: sigma must be finite and > 0 (or 0 for the median heuristic)")
	}
	if err := checkKernel(c.Kernel); err != nil {
		return fmt.Errorf("%w (input kernel)", err)
	}
	if err := checkKernel(c.OutputKernel); err != nil {
		return fmt.Errorf("%w (output kernel)", err)
	}
	if !(c.RCond > 0 && c.RCond < 1) {
		return fmt.Errorf("dica: rcond = %v; need 0 < rcond < 1 (or 0 for the default %g)", c.RCond, DefaultRCond)
	}
	switch c.Solver {
	case Nystrom, RFF, Exact:
	default:
		return fmt.Errorf("dica: unknown solver %v", c.Solver)
	}
	if c.Solver != Exact && c.Rank < 1 {
		return fmt.Errorf("dica: rank m = %d; need m >= 1", c.Rank)
	}
	if c.Solver != Exact && c.Rank > MaxRank {
		return fmt.Errorf("dica: rank m = %d; at most %d (the m x m statistics would take %.3g GiB)", c.Rank, MaxRank, float64(c.Rank)*float64(c.Rank)*8/(1<<30))
	}
	if c.Solver == RFF && (c.Rank < 2 || c.Rank%2 != 0) {
		return fmt.Errorf("dica: rank m = %d; random Fourier features need an even m >= 2 (sin/cos pairs)", c.Rank)
	}
	if c.Solver == Nystrom && c.Landmarks == GivenLandmarks && (c.LandmarkPoints == nil || c.LandmarkPoints.IsEmpty()) {
		return fmt.Errorf("dica: landmarks = given but no landmark points")
	}
	if c.Orthogonal && c.Solver != RFF {
		return fmt.Errorf("dica: orthogonal random features need the rff solver, not %v", c.Solver)
	}
	if c.Solver != Exact && c.Form == Paper {
		return fmt.Errorf("dica: the paper form is only available with the exact solver")
	}
	if c.OutputRank < 1 {
		return fmt.Errorf("dica: output rank = %d; need at least 1", c.OutputRank)
	}
	if err := c.Preprocessing.Check(); err != nil {
		return fmt.Errorf("dica: preprocessing: %w", err)
	}
	if c.Preprocessing != nil && c.Preprocessing.Channels != nil && len(c.Preprocessing.Channels) == 0 {
		return fmt.Errorf("dica: preprocessing records no channel")
	}
	if c.Precision != 32 && c.Precision != 64 {
		return fmt.Errorf("dica: precision = %d bits; need 32 or 64 (or 0 for 64)", c.Precision)
	}
	if c.Precision == 32 && c.Solver == Exact {
		return fmt.Errorf("dica: precision 32 applies to the streaming pass of the nystrom and rff solvers; the exact solver is float64 only")
	}
	if c.BlockRows < 1 || c.Workers < 1 || c.Sample < 1 {
		return fmt.Errorf("dica: block rows, workers and sample size must be positive")
	}
	return nil
}

// checkKernel rejects kernels the file format cannot describe (Stats,
// Plan and Model files record the kernel by type and bandwidth) and
// bandwidths that are not positive and finite.
func checkKernel(k kernel.Kernel) error {
	var sigma float64
	switch k := k.(type) {
	case nil, kernel.Linear:
		return nil
	case kernel.RBF:
		sigma = k.Sigma
	case kernel.Laplacian:
		sigma = k.Sigma
	case *kernel.RBF, *kernel.Laplacian, *kernel.Linear:
		return fmt.Errorf("dica: kernel %T is not supported: pass the value %s, not a pointer", k, strings.TrimPrefix(fmt.Sprintf("%T", k), "*"))
	default:
		return fmt.Errorf("dica: kernel %T (%v) is not supported: dica can save only kernel.RBF, kernel.Laplacian and kernel.Linear", k, k)
	}
	if !(sigma > 0) || isBad(sigma) {
		return fmt.Errorf("dica: kernel %v: sigma = %v; need a finite value > 0", k, sigma)
	}
	return nil
}

// needsGram reports whether the statistics must include sum phi phi^T.
func (c Config) needsGram() bool {
	return c.Lambda > 0 || c.Method == UDICA || c.Method == KPCA
}

// supervised reports whether the method uses labels or targets.
func (c Config) supervised() bool { return c.Method.Supervised() }

// domainTerm reports whether the method uses the domain variance C_Q.
func (c Config) domainTerm() bool { return c.Method.UsesDomains() }
