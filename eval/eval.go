// Package eval measures how well DICA and its relatives generalize to unseen
// domains (Muandet, Balduzzi & Schölkopf, ICML 2013, Section 5: train on some
// domains, test on others).
//
// An evaluation has one or more splits of the domains into training and test
// domains (Run: one given split; LeaveOneDomainOut: every domain tested once
// with all others for training). For each method and split:
//
//  1. Hyperparameters (Grid: the input bandwidth sigma, the ridge lambda,
//     epsilon, the number of components and the classifier's C, or the
//     regressor's ridge) are chosen by an inner cross-validation on the
//     training domains only: the training domains are cut into InnerFolds
//     contiguous groups; each group in turn is held out, the transformation
//     is fitted on the other groups, the classifier is trained on their
//     projections and scored on the held-out group. The score of a grid point
//     is the mean of its per-domain scores over all held-out domains; the
//     best point wins, the first one in grid order on ties. A grid of one
//     point is scored alike (SplitResult.InnerScore) when the training
//     domains allow the folds. Test domains are never read in this step
//     (Choose runs it for one set of training domains).
//  2. The transformation is refitted on all training domains with the chosen
//     point, the classifier is trained on their projections, and each test
//     domain is scored separately (TrainFinal gives that model and
//     classifier).
//
// The inner cross-validation of all methods of a split runs as tasks of one
// inner fold and one pair of bandwidths (input sigma, target sigma), on all
// cores: one pass over the fold's fitting cells serves every method,
// lambda, epsilon and k of the pair (dica.Family, with the models Fit would
// give bit for bit), each fitting cell's kernel row is kept from that pass
// and each held-out cell's computed once, for all its models
// (dica.Projector), a projection on the
// largest k serves the smaller ones, and the linear SVMs of all costs share
// one prepared problem (svm.Problem). A point whose learner input equals an
// earlier point's to rounding (standardized features within 1e-9, up to
// column signs: a k above the components a model returned, or KPCA at any
// lambda, whose ridge only rescales its components) takes that point's
// scores instead of training the same learners again; a fit whose every
// component is an earlier fit's of the same method times a factor (weights
// within 1e-10 relative: KPCA at every lambda) is not even projected. The
// final fits of
// methods with the same bandwidths share one pass and the test cells'
// kernel rows. Scores are summed in fold order: the result does not depend
// on GOMAXPROCS.
//
// Projected components are standardized (svm.Standardize on the training
// projections) before the learner. Classification uses a linear SVM
// (package svm, one-vs-rest) and reports accuracy; regression uses
// Gaussian-kernel ridge regression on the standardized components (package
// krr, median-heuristic bandwidth, centered), solved exactly on up to
// MaxRegressionCells training cells and with RegressionRank Nystrom
// landmarks above (Options.RegressionSolver), and reports the root mean
// squared error over the domain's cells and targets. The "input" baseline is
// the same learner on the standardized inputs, with no transformation.
//
// With Options.Learner set to Distributional, the learner is instead the
// paper's distributional one (Muandet et al. 2013, Section 5): the kernel on
// (domain, cell) pairs k((P, x), (Q, x')) = k1(P, Q) k2(x, x'), with k1 a
// Gaussian kernel on the domains' mean embeddings (krr.Distributional; the
// embeddings under a Gaussian kernel on the standardized features, Nystrom
// with DistOptions.EmbedRank landmarks), made linear by explicit features
// psi(mu_P) (x) phi(x). Classification trains the linear SVM on these
// features with k2(x, x') = x'x' + 1, regression the ridge regression with k2
// the Gaussian kernel (DistOptions.PointRank Nystrom landmarks). Every
// domain's mean embedding, a test domain's included, comes from its own
// cells, never from labels. When all domains have the same distribution, k1
// is constant and the distributional SVM is the plain one.
//
// Splits come from the caller (Run, Evaluate), from LeaveOneDomainOut,
// from RandomSplits: the paper's protocol of repeated random draws of a
// number of training domains, the others being tested (Muandet et al.
// 2013, Section 5: 30 training subjects of 42 for regression, 10 training
// patients of 30 for the cytometry study), or from ReferenceSplit:
// DeepCyTOF's protocol of one hand-gated reference sample, every other
// sample tested (ChooseReference picks the sample whose covariance is
// closest to the others'). With Options.Transductive the methods that use
// no label (UDICA, KPCA) are fitted on the test domains' unlabelled cells
// too, so that a domain-invariant projection can be fitted with a single
// training domain. Options.CellsPerDomain subsamples
// each training and test domain of each split to at most that many cells
// (the paper's n_i), with a generator seeded by Seed, the split and the
// domain, so that every method sees the same cells.
//
// Each split is scored per test domain and pooled over all its test cells
// (SplitResult.Pooled: the accuracy of all test cells together, the
// cell-weighted mean of the domains' accuracies; for regression the RMSE
// of all test cells and targets together, the square root of the
// cell-weighted mean of the domains' squared RMSEs), and by the mean over
// its test domains (SplitResult.DomainMean). MethodResult gives the mean
// and the sample standard deviation of both over the splits (repeats), and
// the score of the test cells of all splits together (AllCells: with
// several splits not the mean of the pooled scores, which weighs every
// split alike). Classification also counts a confusion matrix (true class by predicted
// class) per split and over all splits, scores each test domain by the
// FlowCAP F-measure of its own confusion matrix as well (FMeasure;
// DomainScore.FMeasure, MethodResult.FMeasure), and lists the classes of a
// split's test cells that none of its training cells has
// (SplitResult.UnseenClasses: no learner can predict them).
//
// The mixing of the test domains in the space the learner sees (the
// standardized projection; the standardized inputs for the baseline) is
// measured for every method and split with package mixing, on a seeded
// subsample of at most Options.MixingCells test cells spread evenly over the
// test domains (DefaultMixingCells; the same cells for every method): iLISI
// and cLISI with Options.Perplexity, the silhouette of the domain labels,
// and the distributional variance of the test domains under a Gaussian
// kernel of median-heuristic bandwidth (see mixing.Measure). It needs at
// least two test domains, so leave-one-domain-out splits have none.
//
// Class labels may cover some cells only (dataset.NoLabel for the others:
// ungated samples beside gated ones). The transformations are fitted on
// every cell of the training domains (DICA and COIR take their label term
// from the labelled ones, docs/MATH.md), learners are trained, and cells
// scored, on the labelled cells only: a test domain without a labelled
// cell is not scored (SplitResult.Unscored) but is in the mixing measures,
// which then leave out cLISI (it needs every measured cell's class).
//
// With the plain learner an evaluation is the paper's "pooling" setting (one
// classifier on the pooled training cells); with the distributional
// learner, its distributional setting (Result.Setting).
//
// Cells are subsampled, per domain in proportion to its size and with a
// seeded generator, wherever a step would otherwise be slow: each inner fit
// and each held-out group (Options.MaxFitCells) and the learner's training
// set (MaxTrainCells; MaxRegressionCells for RegressionExact). The final fit
// uses every training cell (FinalFitCells), and test domains are always
// scored on all their cells (after CellsPerDomain). With the same Seed the
// result is the same, bit for bit.
package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/mixing"
	"github.com/dicalab/dica/svm"
)

// Input names the baseline method: the learner on the standardized inputs,
// without any transformation.
const Input = "input"

// Methods returns the method names Options.Methods accepts, in their
// default order: the baseline, then the members of the DICA family
// (exact.ParseMethod names).
func Methods() []string { return []string{Input, "kpca", "udica", "coir", "dica"} }

// Defaults used when the corresponding Options field is zero.
const (
	// DefaultInnerFolds is the number of groups of training domains of the
	// inner cross-validation (leave-one-domain-out when there are at most
	// this many training domains).
	DefaultInnerFolds = 4
	// DefaultMaxFitCells bounds the cells of each inner-CV fit and of each
	// held-out group with the Nystrom and RFF solvers.
	DefaultMaxFitCells = 20000
	// DefaultMaxExactCells is DefaultMaxFitCells for the exact solver, whose
	// cost is O(n^2) memory and O(n^3) time; it also bounds its final fit.
	DefaultMaxExactCells = 2000
	// DefaultMaxTrainCells bounds the training set of the final learner.
	DefaultMaxTrainCells = 50000
	// DefaultMaxRegressionCells is the largest training set of the exact
	// kernel ridge regression (an n x n Cholesky solve); RegressionAuto
	// uses Nystrom above it.
	DefaultMaxRegressionCells = 2000
	// DefaultRegressionRank is the number of Nystrom landmarks of the kernel
	// ridge regression above MaxRegressionCells.
	DefaultRegressionRank = 500
	// DefaultEmbedRank is the number of Nystrom landmarks of the Gaussian
	// kernel whose domain mean embeddings the distributional learner compares.
	DefaultEmbedRank = 100
	// DefaultDistPointRank is the number of Nystrom landmarks of the point
	// kernel k2 of the distributional regression (it has DomainDim times as
	// many features).
	DefaultDistPointRank = 100
	// DefaultRidge is the default ridge of the kernel ridge regression.
	DefaultRidge = 0.1
	// DefaultMixingCells is the number of test cells the mixing measures
	// are computed on: at 5,000 cells one method's measures take about
	// 0.2 s on two cores (mixing.BenchmarkMeasure).
	DefaultMixingCells = 5000
)

// Learner selects the model trained on the standardized projections.
type Learner int

const (
	// Plain, the default, is the linear SVM (classification) or the
	// Gaussian-kernel ridge regression (regression) on the standardized
	// components.
	Plain Learner = iota
	// Distributional is the same learner with the paper's distributional
	// kernel k1(P, Q) k2(x, x') on (domain, cell) pairs (see the package
	// documentation).
	Distributional
)

// Setting returns the name of the paper's setting of the learner:
// "pooling" (one learner on the pooled training cells) or "distributional".
func (l Learner) Setting() string {
	switch l {
	case Plain:
		return "pooling"
	case Distributional:
		return "distributional"
	}
	return l.String()
}

// String returns "plain" or "distributional".
func (l Learner) String() string {
	switch l {
	case Plain:
		return "plain"
	case Distributional:
		return "distributional"
	}
	return fmt.Sprintf("Learner(%d)", int(l))
}

// ParseLearner returns the learner named "plain" (or "pooling", the
// paper's name of its setting) or "distributional" (any case).
func ParseLearner(s string) (Learner, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "plain", "pooling":
		return Plain, nil
	case "distributional":
		return Distributional, nil
	}
	return 0, fmt.Errorf("eval: unknown learner %q; want plain (pooling) or distributional", s)
}

// RegressionSolver selects how the plain kernel ridge regression is solved.
type RegressionSolver int

const (
	// RegressionAuto, the default, solves exactly when the learner's
	// training set has at most MaxRegressionCells cells, and with Nystrom
	// features (RegressionRank uniform landmarks, krr.FitLinear) above.
	RegressionAuto RegressionSolver = iota
	// RegressionExact always solves exactly (krr.FitExact), on at most
	// MaxRegressionCells subsampled cells.
	RegressionExact
	// RegressionNystrom always uses Nystrom features.
	RegressionNystrom
)

// String returns "auto", "exact" or "nystrom".
func (r RegressionSolver) String() string {
	switch r {
	case RegressionAuto:
		return "auto"
	case RegressionExact:
		return "exact"
	case RegressionNystrom:
		return "nystrom"
	}
	return fmt.Sprintf("RegressionSolver(%d)", int(r))
}

// ParseRegressionSolver returns the regression solver named "auto", "exact"
// or "nystrom" (any case).
func ParseRegressionSolver(s string) (RegressionSolver, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		return RegressionAuto, nil
	case "exact":
		return RegressionExact, nil
	case "nystrom":
		return RegressionNystrom, nil
	}
	return 0, fmt.Errorf("eval: unknown regression solver %q; want auto, exact or nystrom", s)
}

// DistOptions configures the distributional learner (the bandwidth of its
// domain kernel is Grid.DistSigma).
type DistOptions struct {
	// EmbedRank is the number of Nystrom landmarks of the embedding kernel
	// (DefaultEmbedRank).
	EmbedRank int
	// PointRank is the number of Nystrom landmarks of the point kernel of
	// the distributional regression (DefaultDistPointRank).
	PointRank int
	// RFF, when positive, is the number of random Fourier features of k1
	// (krr.DistOptions.RFF); 0 gives exact features on the training
	// domains (at most one per training domain).
	RFF int
}

// Grid holds the hyperparameter values tried by the inner cross-validation.
// An empty list means the single default value. Grid points are visited in
// the order Sigma, TargetSigma, Lambda, Epsilon, Components, DistSigma, C
// (C varying fastest).
//
// Components are nested: the projection on k components is the first k
// components of the fit with the largest k, so one fit serves every value.
// Parameters a method does not use are not varied: the baseline uses only C;
// Epsilon only matters for the supervised methods (DICA, COIR).
type Grid struct {
	// Sigma is the RBF bandwidth on inputs; 0 is the median heuristic
	// (default {0}).
	Sigma []float64
	// TargetSigma is the bandwidth of the RBF output kernel on real
	// targets of the supervised methods (dica.Config.SigmaY); 0 is the
	// median heuristic on the targets (default {0}). It is not varied for
	// classification (delta kernel on labels) nor for the unsupervised
	// methods.
	TargetSigma []float64
	// Lambda is the ridge on the complexity term (default {0}).
	Lambda []float64
	// Epsilon is the epsilon of the inverse-regression operator (default
	// {dica.DefaultEpsilon}).
	Epsilon []float64
	// Components is the number of components k (default
	// {dica.DefaultComponents}).
	Components []int
	// DistSigma is the bandwidth of the domain kernel k1 of the
	// distributional learner (krr.DistOptions.Sigma): 0 is the median
	// distance between the training domains' mean embeddings (default
	// {0}). It is not varied with the plain learner.
	DistSigma []float64
	// C is the SVM cost C for classification (default {svm.DefaultC}), or
	// the ridge of the kernel ridge regression (default {DefaultRidge}).
	C []float64
}

// Options configures an evaluation.
type Options struct {
	// Methods are the method names (see Methods); empty means all.
	Methods []string
	// Solver and Rank configure the DICA fits (dica.Config).
	Solver dica.Solver
	Rank   int
	// Grid holds the hyperparameter values.
	Grid Grid
	// InnerFolds is the number of groups of training domains of the inner
	// cross-validation (DefaultInnerFolds; at most the number of training
	// domains). A grid of one point is cross-validated only for its score,
	// when the training domains allow it.
	InnerFolds int
	// MaxFitCells bounds the cells of each inner-CV fit and of each held-out
	// group (DefaultMaxFitCells, DefaultMaxExactCells for the exact solver).
	MaxFitCells int
	// FinalFitCells bounds the cells of the final fit on all training domains
	// (0: all cells with the Nystrom and RFF solvers, MaxFitCells with the
	// exact solver).
	FinalFitCells int
	// MaxTrainCells bounds the training cells of every learner
	// (DefaultMaxTrainCells). Inner-CV learners are trained on the inner
	// fit's cells.
	MaxTrainCells int
	// MaxRegressionCells is the largest training set of the exact kernel
	// ridge regression (DefaultMaxRegressionCells): RegressionAuto solves
	// exactly up to it and with Nystrom above; RegressionExact subsamples
	// to it.
	MaxRegressionCells int
	// RegressionSolver selects the solver of the plain kernel ridge
	// regression (RegressionAuto).
	RegressionSolver RegressionSolver
	// RegressionRank is the number of Nystrom landmarks of the kernel ridge
	// regression (DefaultRegressionRank).
	RegressionRank int
	// Learner selects the plain or the distributional learner (Plain).
	Learner Learner
	// Dist configures the distributional learner.
	Dist DistOptions
	// BatchCenter projects every domain, training and test alike, centered
	// with its own mean feature instead of the training mean
	// (dica.TransformOptions.BatchCenter, the transductive convention of the
	// authors' dica.m); the baseline then subtracts each domain's mean
	// input. It removes each domain's mean shift using the test domain's
	// unlabelled cells (never its labels).
	BatchCenter bool
	// Transductive fits the transformations of the methods that can take
	// unlabelled cells on the cells of every domain of a split, training
	// and test alike (the test domains' cells unlabelled: their labels and
	// targets are never read), instead of the training domains' alone; the
	// learner is still trained on the training cells only. UDICA and KPCA
	// are fitted so; DICA and COIR, which need the label of every cell they
	// are fitted on, are fitted on the training domains (FitsTransductively
	// says which methods are). It lets a domain-invariant method be fitted
	// with a single training domain (its domain term on the test domains),
	// as the one-reference-sample protocol (ReferenceSplit) needs. The inner
	// cross-validation is not transductive: its fits never see a held-out
	// or test domain.
	Transductive bool
	// CellsPerDomain, when positive, subsamples every training and test
	// domain of each split to at most that many cells (the paper's n_i),
	// seeded by Seed, the split and the domain. 0 keeps every cell.
	CellsPerDomain int
	// MixingCells bounds the test cells of each split on which the mixing
	// measures are computed (DefaultMixingCells; at most mixing.MaxCells);
	// a negative value turns them off.
	MixingCells int
	// Perplexity is the perplexity of the LISI neighbourhoods
	// (mixing.DefaultPerplexity).
	Perplexity float64
	// MaxMemory, when positive, is the memory budget in bytes: an
	// evaluation whose EstimateMemory exceeds it is refused with a
	// *MemoryError before any fit.
	MaxMemory int64
	// Seed seeds the subsampling, the fits and the classifiers.
	Seed uint64
	// Progress, when set, is called with a line describing each step.
	Progress func(msg string)
}

// Split is one division of the domains (indices into Dataset.DomainNames)
// into training and test domains.
type Split struct {
	Train, Test []int
}

// Params is one hyperparameter point.
type Params struct {
	// Sigma is the requested input bandwidth (0: median heuristic).
	Sigma float64 `json:"sigma"`
	// TargetSigma is the requested bandwidth of the output kernel on real
	// targets (0: median heuristic; always 0 for classification).
	TargetSigma float64 `json:"target_sigma,omitempty"`
	Lambda      float64 `json:"lambda"`
	Epsilon     float64 `json:"epsilon"`
	Components  int     `json:"components"`
	// DistSigma is the requested bandwidth of the distributional learner's
	// domain kernel (0: median heuristic; always 0 with the plain learner).
	DistSigma float64 `json:"dist_sigma,omitempty"`
	// C is the SVM cost or the regression ridge.
	C float64 `json:"c"`
}

// GridPoint is the inner cross-validation score of one hyperparameter point:
// the mean of the per-domain scores over all held-out training domains.
// When a fit failed, Err holds the message and Score is 0.
type GridPoint struct {
	Params Params  `json:"params"`
	Score  float64 `json:"score"`
	Err    string  `json:"error,omitempty"`
}

// DomainScore is the score of one test domain.
type DomainScore struct {
	Domain string `json:"domain"`
	// Cells is the number of cells scored: all cells of the domain that
	// have a label (every cell, unless labels cover some cells only).
	Cells int `json:"cells"`
	// Score is the accuracy (classification) or RMSE (regression).
	Score float64 `json:"score"`
	// FMeasure is the FlowCAP F-measure of the domain's confusion matrix
	// (classification; see FMeasure), 0 for regression.
	FMeasure float64 `json:"f_measure,omitempty"`
}

// SplitResult is the evaluation of one method on one split.
type SplitResult struct {
	Train []string `json:"train"`
	Test  []string `json:"test"`
	// Params is the point chosen by the inner cross-validation.
	Params Params `json:"params"`
	// InnerFolds is the number of inner folds (0 when the grid has one
	// point and no cross-validation was run); Grid holds every point's
	// inner score, and InnerScore the chosen one's.
	InnerFolds int         `json:"inner_folds"`
	InnerScore float64     `json:"inner_score"`
	Grid       []GridPoint `json:"grid,omitempty"`
	// SigmaUsed is the input bandwidth of the final fit (the median
	// heuristic resolved; 0 for the baseline), Components the number of
	// components the final model returned (the input dimension for the
	// baseline).
	SigmaUsed  float64 `json:"sigma_used"`
	Components int     `json:"components_used"`
	// FitCells is the number of cells of the final fit (the training cells
	// for the baseline), FitSeconds its duration (transformation and
	// learner).
	FitCells   int     `json:"fit_cells"`
	FitSeconds float64 `json:"fit_seconds"`
	// Transductive reports whether the final fit used the test domains'
	// (unlabelled) cells beside the training domains' (see
	// Options.Transductive).
	Transductive bool `json:"transductive,omitempty"`
	// TargetSigmaUsed is the bandwidth of the final fit's output kernel on
	// real targets (supervised methods on regression data; else 0).
	TargetSigmaUsed float64 `json:"target_sigma_used,omitempty"`
	// Learner describes the final learner, such as "svm",
	// "krr exact (1800 cells)" or "krr nystrom m=500 (50000 cells)".
	Learner string        `json:"learner"`
	Scores  []DomainScore `json:"scores"`
	// Unscored lists the test domains without a labelled cell (class
	// labels given for some cells only): they are in the mixing measures
	// and in TestCells, and have no score.
	Unscored []string `json:"unscored,omitempty"`
	// TrainCells and TestCells count the cells of the training and test
	// domains of the split (after CellsPerDomain).
	TrainCells int `json:"train_cells"`
	TestCells  int `json:"test_cells"`
	// Pooled is the score of all test cells together, DomainMean the mean
	// of the test domains' scores (see the package documentation).
	Pooled     float64 `json:"pooled"`
	DomainMean float64 `json:"domain_mean"`
	// Confusion counts the test cells by true class (rows) and predicted
	// class (columns), classes as in Result.Classes (classification only).
	Confusion [][]int `json:"confusion,omitempty"`
	// UnseenClasses lists the classes of test cells that no training cell
	// of the split has.
	UnseenClasses []string `json:"unseen_classes,omitempty"`
	// Mixing holds the mixing measures of the test domains in the space
	// the learner sees; nil with fewer than 2 test domains or when turned
	// off (Options.MixingCells < 0). Its domain silhouettes follow the
	// order of Test.
	Mixing *mixing.Report `json:"mixing,omitempty"`

	// pooled holds the sums behind Pooled (for MethodResult.AllCells).
	pooled tally
}

// Spread is the mean and the sample standard deviation of a value over N
// splits (SD is 0 for one split).
type Spread struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// MixingSummary is the spread over splits of the mixing measures.
type MixingSummary struct {
	ILISI Spread `json:"ilisi"`
	// CLISI is nil without class labels.
	CLISI                  *Spread `json:"clisi,omitempty"`
	Silhouette             Spread  `json:"silhouette"`
	DistributionalVariance Spread  `json:"distributional_variance"`
}

// MethodResult is the evaluation of one method.
type MethodResult struct {
	Method string        `json:"method"`
	Splits []SplitResult `json:"splits"`
	// Scores lists every test domain's score over all splits; Mean and SD
	// are their mean and sample standard deviation (0 for one domain).
	Scores []DomainScore `json:"scores"`
	Mean   float64       `json:"mean"`
	SD     float64       `json:"sd"`
	// FMeasure is the mean and sample standard deviation of the test
	// domains' F-measures (DomainScore.FMeasure) over all splits; nil for
	// regression.
	FMeasure *Spread `json:"f_measure,omitempty"`
	// Seconds is the time spent for the method, inner cross-validation
	// included: work shared with other methods (a pass, a projection) is
	// charged to them in equal parts, and the time of work that ran on
	// several cores at once adds up, so the methods' seconds can sum to
	// more than the evaluation's wall time.
	Seconds float64 `json:"seconds"`
	// Pooled and DomainMean are the spreads over the splits of the splits'
	// pooled scores and of their means over test domains.
	Pooled     Spread `json:"pooled"`
	DomainMean Spread `json:"domain_mean"`
	// AllCells is the score of the test cells of all splits together: the
	// accuracy of the summed confusion matrix (correct cells over all test
	// cells), or the RMSE over all test cells and targets. A cell tested
	// in several splits counts once per split. With one split it is the
	// split's Pooled score.
	AllCells float64 `json:"all_cells"`
	// Confusion sums the splits' confusion matrices (classification only).
	Confusion [][]int `json:"confusion,omitempty"`
	// Mixing is the spread of the mixing measures over the splits that
	// have them (nil when none has).
	Mixing *MixingSummary `json:"mixing,omitempty"`
}

// Result is an evaluation of several methods.
type Result struct {
	// Task is "classification" or "regression"; Metric "accuracy" or
	// "rmse".
	Task   string `json:"task"`
	Metric string `json:"metric"`
	Solver string `json:"solver"`
	Rank   int    `json:"rank,omitempty"`
	// Cells counts the distinct cells used by the evaluation: those of the
	// training and test domains of every split (after CellsPerDomain);
	// CellsRead counts the cells of the data set.
	Cells     int `json:"cells"`
	CellsRead int `json:"cells_read"`
	// Splits is the number of splits; CellsPerDomain is
	// Options.CellsPerDomain.
	Splits         int `json:"splits"`
	CellsPerDomain int `json:"cells_per_domain,omitempty"`
	// BatchCenter is Options.BatchCenter, Transductive
	// Options.Transductive.
	BatchCenter  bool `json:"batch_center"`
	Transductive bool `json:"transductive,omitempty"`
	// Learner is Options.Learner ("plain" or "distributional"); Setting
	// its name in the paper ("pooling" or "distributional").
	Learner string `json:"learner"`
	Setting string `json:"setting"`
	// Classes names the classes (classification), the rows and columns of
	// the confusion matrices.
	Classes []string `json:"classes,omitempty"`
	// MixingCells and Perplexity are the settings of the mixing measures
	// (MixingCells 0 when they are off).
	MixingCells int     `json:"mixing_cells,omitempty"`
	Perplexity  float64 `json:"perplexity,omitempty"`
	// RegressionSolver is Options.RegressionSolver (regression only).
	RegressionSolver string         `json:"regression_solver,omitempty"`
	Methods          []MethodResult `json:"methods"`
}

// Run evaluates the methods on one split: train and test are indices into
// ds.DomainNames. It returns an error for an empty, out-of-range or
// overlapping split, data without labels or targets, unknown methods, bad
// grid values, or too few training domains for the inner cross-validation.
func Run(ctx context.Context, ds *dataset.Dataset, train, test []int, o Options) (*Result, error) {
	return Evaluate(ctx, ds, []Split{{Train: train, Test: test}}, o)
}

// LeaveOneDomainOut evaluates the methods with every domain of ds as the test
// domain once, the others being the training domains (the splits of
// LeaveOneDomainOutSplits).
func LeaveOneDomainOut(ctx context.Context, ds *dataset.Dataset, o Options) (*Result, error) {
	splits, err := LeaveOneDomainOutSplits(ds)
	if err != nil {
		return nil, err
	}
	return Evaluate(ctx, ds, splits, o)
}

// LeaveOneDomainOutSplits returns the splits of leave-one-domain-out: one
// per domain of ds with cells, in the order of ds.DomainNames, testing on
// that domain and training on the other domains with cells. Domains
// without cells are in no split. It is an error for a nil data set and
// for fewer than 2 domains with cells.
func LeaveOneDomainOutSplits(ds *dataset.Dataset) ([]Split, error) {
	if ds == nil {
		return nil, errors.New("eval: nil data set")
	}
	var doms []int
	for g, n := range ds.DomainSizes() {
		if n > 0 {
			doms = append(doms, g)
		}
	}
	if len(doms) < 2 {
		return nil, fmt.Errorf("eval: %d domain(s) with cells; leave-one-domain-out needs at least 2", len(doms))
	}
	splits := make([]Split, len(doms))
	for i, t := range doms {
		tr := make([]int, 0, len(doms)-1)
		for _, g := range doms {
			if g != t {
				tr = append(tr, g)
			}
		}
		splits[i] = Split{Train: tr, Test: []int{t}}
	}
	return splits, nil
}

// DomainIndices returns the indices in ds.DomainNames of the named domains,
// or an error naming an unknown one (or for a nil data set).
func DomainIndices(ds *dataset.Dataset, names []string) ([]int, error) {
	if ds == nil {
		return nil, errors.New("eval: nil data set")
	}
	idx := make(map[string]int, len(ds.DomainNames))
	for i, n := range ds.DomainNames {
		idx[n] = i
	}
	out := make([]int, len(names))
	for i, n := range names {
		g, ok := idx[n]
		if !ok {
			return nil, fmt.Errorf("eval: unknown domain %q (domains: %s)", n, listNames(ds.DomainNames, 8))
		}
		out[i] = g
	}
	return out, nil
}

func listNames(names []string, max int) string {
	s := ""
	for i, n := range names {
		if i == max {
			return s + fmt.Sprintf(", ... (%d in all)", len(names))
		}
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// RandomSplits returns repeats random divisions of the domains that have
// cells: each draws trainCount training domains uniformly without
// replacement, the other domains being the test domains (both lists in
// increasing index order). The draws come from one generator seeded by
// seed, one after the other, so the same seed gives the same splits and the
// first r splits of a longer run are those of a run of r repeats. It
// returns an error unless 1 <= trainCount < the number of domains with
// cells and repeats >= 1.
func RandomSplits(ds *dataset.Dataset, trainCount, repeats int, seed uint64) ([]Split, error) {
	if ds == nil {
		return nil, errors.New("eval: nil data set")
	}
	var doms []int
	for g, n := range ds.DomainSizes() {
		if n > 0 {
			doms = append(doms, g)
		}
	}
	if trainCount < 1 || trainCount >= len(doms) {
		return nil, fmt.Errorf("eval: %d training domains of %d domains with cells; want 1 to %d, so that a domain is left to test", trainCount, len(doms), len(doms)-1)
	}
	if repeats < 1 {
		return nil, fmt.Errorf("eval: %d repeats; want at least 1", repeats)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5b1175))
	splits := make([]Split, repeats)
	for r := range splits {
		perm := rng.Perm(len(doms))
		var s Split
		for i, pi := range perm {
			if i < trainCount {
				s.Train = append(s.Train, doms[pi])
			} else {
				s.Test = append(s.Test, doms[pi])
			}
		}
		slices.Sort(s.Train)
		slices.Sort(s.Test)
		splits[r] = s
	}
	return splits, nil
}

// Evaluate evaluates the methods on each split and gathers the test-domain
// scores of all splits. Errors are as for Run; an evaluation whose memory
// estimate exceeds Options.MaxMemory is refused with a *MemoryError.
func Evaluate(ctx context.Context, ds *dataset.Dataset, splits []Split, o Options) (*Result, error) {
	e, err := newEvaluator(ds, splits, o)
	if err != nil {
		return nil, err
	}
	res := &Result{Task: "classification", Metric: "accuracy", Solver: e.o.Solver.String(), Cells: e.cellsUsed(), CellsRead: ds.N(),
		Splits: len(splits), CellsPerDomain: e.o.CellsPerDomain, BatchCenter: e.o.BatchCenter, Transductive: e.o.Transductive,
		Learner: e.o.Learner.String(), Setting: e.o.Learner.Setting()}
	if e.regression {
		res.Task, res.Metric = "regression", "rmse"
		res.RegressionSolver = e.o.RegressionSolver.String()
	} else {
		res.Classes = append([]string(nil), ds.ClassNames...)
	}
	if e.o.Solver != dica.Exact {
		res.Rank = e.o.Rank
	}
	if e.o.MixingCells > 0 {
		res.MixingCells, res.Perplexity = e.o.MixingCells, e.o.Perplexity
	}
	mrs := make([]MethodResult, len(e.methods))
	busy := map[string]time.Duration{}
	for i, name := range e.methods {
		mrs[i].Method = name
	}
	for si := range splits {
		srs, err := e.chooseSplit(ctx, si, busy)
		if err != nil {
			return nil, err
		}
		if err := e.final(ctx, si, e.methods, srs, busy); err != nil {
			return nil, err
		}
		for i, name := range e.methods {
			mrs[i].Splits = append(mrs[i].Splits, *srs[name])
			mrs[i].Scores = append(mrs[i].Scores, srs[name].Scores...)
		}
	}
	for i := range mrs {
		mr := &mrs[i]
		mr.Mean, mr.SD = meanSD(mr.Scores)
		mr.summarize(e.regression)
		mr.Seconds = busy[mr.Method].Seconds()
	}
	res.Methods = mrs
	res.naturalOrder()
	return res, nil
}

// naturalOrder lists the classes in natural order (1, 2, 10 rather than
// the order the reader met them), with the rows and columns of every
// confusion matrix in the same order, as a model lists them.
func (res *Result) naturalOrder() {
	n := len(res.Classes)
	if n == 0 {
		return
	}
	perm := make([]int, n) // perm[i] is the old index of the class listed i-th
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return dataset.NaturalCompare(res.Classes[a], res.Classes[b]) })
	names := make([]string, n)
	for i, p := range perm {
		names[i] = res.Classes[p]
	}
	res.Classes = names
	reorder := func(c [][]int) [][]int {
		if len(c) != n {
			return c
		}
		out := make([][]int, n)
		for i, p := range perm {
			if len(c[p]) != n {
				return c
			}
			out[i] = make([]int, n)
			for j, q := range perm {
				out[i][j] = c[p][q]
			}
		}
		return out
	}
	for i := range res.Methods {
		mr := &res.Methods[i]
		mr.Confusion = reorder(mr.Confusion)
		for j := range mr.Splits {
			mr.Splits[j].Confusion = reorder(mr.Splits[j].Confusion)
		}
	}
}

// summarize fills the spreads over splits, the summed confusion matrix and
// the score of all test cells (regression tells itself by the sums: a
// squared error is summed per target, a count per cell and target).
func (mr *MethodResult) summarize(regression bool) {
	var pooled, dmean, il, cl, sil, dv, fm []float64
	var all tally
	for _, s := range mr.Splits {
		for _, d := range s.Scores {
			fm = append(fm, d.FMeasure)
		}
		all.sum += s.pooled.sum
		all.count += s.pooled.count
		pooled = append(pooled, s.Pooled)
		dmean = append(dmean, s.DomainMean)
		if s.Mixing != nil {
			il = append(il, s.Mixing.ILISI)
			sil = append(sil, s.Mixing.Silhouette)
			dv = append(dv, s.Mixing.DistributionalVariance)
			if !math.IsNaN(s.Mixing.CLISI) {
				cl = append(cl, s.Mixing.CLISI)
			}
		}
		if s.Confusion != nil {
			if mr.Confusion == nil {
				mr.Confusion = make([][]int, len(s.Confusion))
				for i := range mr.Confusion {
					mr.Confusion[i] = make([]int, len(s.Confusion[i]))
				}
			}
			for i, row := range s.Confusion {
				for j, v := range row {
					mr.Confusion[i][j] += v
				}
			}
		}
	}
	mr.Pooled, mr.DomainMean = spreadOf(pooled), spreadOf(dmean)
	if !regression && len(fm) > 0 {
		f := spreadOf(fm)
		mr.FMeasure = &f
	}
	if all.count > 0 {
		mr.AllCells = all.sum / float64(all.count)
		if regression {
			mr.AllCells = math.Sqrt(mr.AllCells)
		}
	}
	if len(il) > 0 {
		mr.Mixing = &MixingSummary{ILISI: spreadOf(il), Silhouette: spreadOf(sil), DistributionalVariance: spreadOf(dv)}
		if len(cl) > 0 {
			c := spreadOf(cl)
			mr.Mixing.CLISI = &c
		}
	}
}

// spreadOf returns the mean and sample standard deviation of v.
func spreadOf(v []float64) Spread {
	s := Spread{N: len(v)}
	if len(v) == 0 {
		return s
	}
	for _, x := range v {
		s.Mean += x
	}
	s.Mean /= float64(len(v))
	if len(v) > 1 {
		var ss float64
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(v)-1))
	}
	return s
}

func meanSD(s []DomainScore) (mean, sd float64) {
	for _, d := range s {
		mean += d.Score
	}
	mean /= float64(len(s))
	if len(s) < 2 {
		return mean, 0
	}
	var ss float64
	for _, d := range s {
		ss += (d.Score - mean) * (d.Score - mean)
	}
	return mean, math.Sqrt(ss / float64(len(s)-1))
}

// parseMethod returns the DICA method of a name, and false for the baseline.
func parseMethod(name string) (dica.Method, bool, error) {
	if name == Input {
		return 0, false, nil
	}
	m, err := exact.ParseMethod(name)
	if err != nil {
		return 0, false, fmt.Errorf("eval: unknown method %q; want one of %v", name, Methods())
	}
	return m, true, nil
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults(regression bool) Options {
	if len(o.Methods) == 0 {
		o.Methods = Methods()
	}
	if o.Rank == 0 {
		o.Rank = dica.DefaultRank
	}
	if o.InnerFolds == 0 {
		o.InnerFolds = DefaultInnerFolds
	}
	if o.MaxFitCells == 0 {
		o.MaxFitCells = DefaultMaxFitCells
		if o.Solver == dica.Exact {
			o.MaxFitCells = DefaultMaxExactCells
		}
	}
	if o.FinalFitCells == 0 && o.Solver == dica.Exact {
		o.FinalFitCells = o.MaxFitCells
	}
	if o.MaxTrainCells == 0 {
		o.MaxTrainCells = DefaultMaxTrainCells
	}
	if o.MaxRegressionCells == 0 {
		o.MaxRegressionCells = DefaultMaxRegressionCells
	}
	if o.RegressionRank == 0 {
		o.RegressionRank = DefaultRegressionRank
	}
	if o.Dist.EmbedRank == 0 {
		o.Dist.EmbedRank = DefaultEmbedRank
	}
	if o.Dist.PointRank == 0 {
		o.Dist.PointRank = DefaultDistPointRank
	}
	if o.MixingCells == 0 {
		o.MixingCells = DefaultMixingCells
	}
	if o.Perplexity == 0 {
		o.Perplexity = mixing.DefaultPerplexity
	}
	g := &o.Grid
	if len(g.Sigma) == 0 {
		g.Sigma = []float64{0}
	}
	if len(g.TargetSigma) == 0 {
		g.TargetSigma = []float64{0}
	}
	if len(g.Lambda) == 0 {
		g.Lambda = []float64{0}
	}
	if len(g.Epsilon) == 0 {
		g.Epsilon = []float64{dica.DefaultEpsilon}
	}
	if len(g.Components) == 0 {
		g.Components = []int{dica.DefaultComponents}
	}
	if len(g.DistSigma) == 0 {
		g.DistSigma = []float64{0}
	}
	if len(g.C) == 0 {
		if regression {
			g.C = []float64{DefaultRidge}
		} else {
			g.C = []float64{svm.DefaultC}
		}
	}
	return o
}

func (o Options) check() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	for _, v := range o.Grid.Sigma {
		if v < 0 || bad(v) {
			return fmt.Errorf("eval: sigma %v; want a finite value > 0, or 0 for the median heuristic", v)
		}
	}
	for _, v := range o.Grid.TargetSigma {
		if v < 0 || bad(v) {
			return fmt.Errorf("eval: target sigma %v; want a finite value > 0, or 0 for the median heuristic", v)
		}
	}
	for _, v := range o.Grid.Lambda {
		if v < 0 || bad(v) {
			return fmt.Errorf("eval: lambda %v; want a finite value >= 0", v)
		}
	}
	for _, v := range o.Grid.Epsilon {
		if v <= 0 || bad(v) {
			return fmt.Errorf("eval: epsilon %v; want a finite value > 0", v)
		}
	}
	for _, v := range o.Grid.Components {
		if v < 1 {
			return fmt.Errorf("eval: components %d; want at least 1", v)
		}
	}
	for _, v := range o.Grid.C {
		if v <= 0 || bad(v) {
			return fmt.Errorf("eval: C (SVM cost or ridge) %v; want a finite value > 0", v)
		}
	}
	switch o.Solver {
	case dica.Nystrom, dica.RFF, dica.Exact:
	default:
		return fmt.Errorf("eval: unknown solver %v", o.Solver)
	}
	switch o.Learner {
	case Plain, Distributional:
	default:
		return fmt.Errorf("eval: unknown learner %v", o.Learner)
	}
	switch o.RegressionSolver {
	case RegressionAuto, RegressionExact, RegressionNystrom:
	default:
		return fmt.Errorf("eval: unknown regression solver %v", o.RegressionSolver)
	}
	if o.RegressionRank < 1 || o.Dist.EmbedRank < 1 || o.Dist.PointRank < 1 || o.Dist.RFF < 0 {
		return fmt.Errorf("eval: regression rank %d, embedding rank %d, point rank %d must be positive and RFF %d >= 0",
			o.RegressionRank, o.Dist.EmbedRank, o.Dist.PointRank, o.Dist.RFF)
	}
	for _, v := range o.Grid.DistSigma {
		if v < 0 || bad(v) {
			return fmt.Errorf("eval: domain kernel sigma %v; want a finite value > 0, or 0 for the median heuristic", v)
		}
	}
	if o.CellsPerDomain < 0 {
		return fmt.Errorf("eval: cells per domain %d; want a positive number, or 0 for all cells", o.CellsPerDomain)
	}
	if o.MixingCells > mixing.MaxCells {
		return fmt.Errorf("eval: %d mixing cells; the exact neighbours take at most %d", o.MixingCells, mixing.MaxCells)
	}
	if bad(o.Perplexity) || o.Perplexity < 1 {
		return fmt.Errorf("eval: perplexity %v; want a finite value >= 1", o.Perplexity)
	}
	if o.MaxMemory < 0 {
		return fmt.Errorf("eval: memory budget %d bytes; want a positive number, or 0 for no budget", o.MaxMemory)
	}
	if o.Rank < 1 || o.InnerFolds < 2 || o.MaxFitCells < 2 || o.FinalFitCells < 0 ||
		o.MaxTrainCells < 2 || o.MaxRegressionCells < 2 {
		return fmt.Errorf("eval: rank, inner folds and cell bounds must be positive (rank %d, inner folds %d, cells %d/%d/%d/%d)",
			o.Rank, o.InnerFolds, o.MaxFitCells, o.FinalFitCells, o.MaxTrainCells, o.MaxRegressionCells)
	}
	return nil
}
