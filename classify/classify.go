// Package classify holds the learner that a dica model carries to predict
// the population of new cells (a linear SVM) or real targets (kernel ridge
// regression) from their components, with the standardization it was
// trained with and, for the SVM, a calibrated confidence (docs/MATH.md,
// "8. The learner a model carries").
//
// A Model takes the first K columns z of a projection (the components of a
// dica model, or the preprocessed inputs of the "input" baseline) and
// standardizes them as the learner was trained:
//
//	u_j = (z_j - Mean_j) / Scale_j,   j = 1..K.
//
// The SVM (Kind SVM) is one-vs-rest, as package svm trains it: one margin
// per population c = 1..C, in the order of Classes,
//
//	f_c(u) = W_c . u + Intercept_c,
//
// and the predicted population is the one of largest margin (the first on
// ties). Its confidence is the probability of that population under a
// softmax of the margins with the inverse temperature beta = InvTemperature
// (temperature scaling; Guo, Pleiss, Sun and Weinberger, "On Calibration
// of Modern Neural Networks", ICML 2017):
//
//	p_c(u) = exp(beta f_c(u)) / sum_c' exp(beta f_c'(u)),
//	confidence(u) = p_chat(u) = 1 / sum_c exp(beta (f_c(u) - f_chat(u))),
//
// a number in [1/C, 1]. beta is fitted (FitInvTemperature) by maximum
// likelihood on held-out cells: the margins f_i of cells i that the SVM
// that scored them was not trained on, and their true populations y_i,
//
//	beta = argmin_{0 <= beta <= MaxInvTemperature}
//	       sum_i [ log sum_{c in A_i} exp(beta f_ic) - beta f_{i y_i} ],
//
// A_i the populations that SVM had (a held-out cell of a population it
// lacked is left out). The objective is convex in beta (its second
// derivative is the sum of the variances of f_i under p_i), so the
// minimum is found by a safeguarded Newton iteration (to 1e-10 relative).
// Package eval gives
// the held-out margins (eval.Final.Classifier): those of leave-samples-out
// folds of the learner's training cells, each cell scored by an SVM
// trained without its sample, which is what a new patient looks like to
// the classifier; with a single labelled sample, those of folds of its
// cells.
//
// A Kind KRR model predicts each real target t by a kernel expansion on
// points P_i (i = 1..m) of the standardized space,
//
//	y_t(u) = Offset_t + sum_i Coef_it exp(-||u - P_i||^2 / (2 Sigma^2)),
//
// the form of both exact kernel ridge regression (P the training cells)
// and its Nystrom approximation (P the landmarks, Coef = T w for the map's
// transform T and ridge weights w): see package krr. It has no confidence.
//
// A cell whose confidence is below a threshold (the minimum confidence of
// PredictTo) is not assigned: its class is NoClass and its label
// Unassigned. A threshold of 0 assigns every cell.
package classify

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
)

// Kind is the kind of learner.
type Kind int

// The kinds of learner.
const (
	// None is no learner.
	None Kind = iota
	// SVM is a one-vs-rest linear support vector machine on class labels
	// (populations).
	SVM
	// KRR is a Gaussian kernel ridge regression on real targets.
	KRR
)

var kindNames = []string{None: "none", SVM: "svm", KRR: "krr"}

// String returns "none", "svm" or "krr", or "Kind(n)".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind parses "none", "svm" or "krr" (any case, spaces trimmed).
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("classify: unknown learner %q (want none, svm or krr)", s)
}

// Unassigned is the label of a cell whose confidence is below the
// minimum, and NoClass its class index. No population may be named
// Unassigned.
const (
	Unassigned = "unassigned"
	NoClass    = -1
)

// MaxInvTemperature bounds the fitted inverse temperature beta: a
// temperature of at least 0.01 in units of the SVM's margins (which are of
// order 1 on standardized inputs). It is reached when the held-out cells
// are all classified right by a margin, where the likelihood grows
// without bound.
const MaxInvTemperature = 100

// Params are the hyperparameters the learner and the transformation below
// it were fitted with (the point the inner cross-validation chose).
type Params struct {
	// Method is the transformation: "dica", "udica", "kpca", "coir" or
	// "input" (none).
	Method string `json:"method"`
	// Sigma is the input bandwidth requested (0: the median heuristic),
	// TargetSigma that of the output kernel on real targets.
	Sigma       float64 `json:"sigma"`
	TargetSigma float64 `json:"target_sigma,omitempty"`
	Lambda      float64 `json:"lambda"`
	Epsilon     float64 `json:"epsilon"`
	// Components is the number of components asked for (0 for the input
	// baseline: all inputs).
	Components int `json:"components"`
	// C is the SVM's cost, or the ridge of the regression.
	C float64 `json:"c"`
}

// Calibration describes the held-out cells the inverse temperature was
// fitted on.
type Calibration struct {
	// Source names the held-out cells: "samples" (leave-samples-out
	// folds of the learner's training cells, on the final
	// transformation: each cell scored by a learner trained without its
	// sample) or "cells" (folds of the cells of a single training
	// sample); package eval defines them.
	Source string `json:"source"`
	// Cells is the number of held-out cells, Folds the number of folds.
	Cells int `json:"cells"`
	Folds int `json:"folds"`
}

// Model is a learner on standardized components. Its fields are those of
// the package documentation's formulas; Check says whether they are
// consistent. A Model is read-only once built and safe for concurrent use.
type Model struct {
	Kind Kind
	// Mean and Scale standardize the K inputs (Scale > 0).
	Mean, Scale []float64

	// Classes names the C populations of an SVM, in natural order
	// (dataset.NaturalCompare); class indices index it.
	Classes []string
	// W (C x K) and Intercept (C) are the one-vs-rest weights.
	W         *mat.Dense
	Intercept []float64
	// InvTemperature is beta of the confidence's softmax, in
	// [0, MaxInvTemperature].
	InvTemperature float64
	// Calibration says where beta was fitted.
	Calibration Calibration

	// Targets names the real targets of a KRR model.
	Targets []string
	// Sigma is the bandwidth of the Gaussian kernel, Points (m x K) the
	// centres of the expansion, Coef (m x len(Targets)) its coefficients
	// and Offset the constant of each target.
	Sigma  float64
	Points *mat.Dense
	Coef   *mat.Dense
	Offset []float64

	// Params are the hyperparameters chosen; Score is their inner
	// cross-validation score (accuracy for an SVM, RMSE for KRR) over
	// Folds folds (0: not cross-validated). TrainCells is the number of
	// cells the learner was trained on.
	Params     Params
	Score      float64
	Folds      int
	TrainCells int
}

// Dim returns K, the number of leading columns of a projection the model
// takes.
func (m *Model) Dim() int {
	if m == nil {
		return 0
	}
	return len(m.Mean)
}

// Check reports whether the model's fields are consistent: a known kind,
// shapes that agree, finite values, positive scales and bandwidth, at
// least two distinct populations (none named Unassigned) for an SVM and
// at least one target for KRR.
func (m *Model) Check() error {
	if m == nil {
		return errors.New("classify: nil model")
	}
	k := len(m.Mean)
	if k == 0 || len(m.Scale) != k {
		return fmt.Errorf("classify: standardization of %d means and %d scales; need as many, at least one", k, len(m.Scale))
	}
	if err := finite("mean", m.Mean); err != nil {
		return err
	}
	for j, s := range m.Scale {
		if !(s > 0) || math.IsInf(s, 1) {
			return fmt.Errorf("classify: scale %d is %v; need a finite value > 0", j+1, s)
		}
	}
	switch m.Kind {
	case SVM:
		c := len(m.Classes)
		if c < 2 {
			return fmt.Errorf("classify: an SVM of %d population(s); need at least 2", c)
		}
		seen := map[string]bool{}
		for _, name := range m.Classes {
			if name == Unassigned {
				return fmt.Errorf("classify: a population is named %q, the label of cells below the minimum confidence: rename it or leave its cells out", Unassigned)
			}
			if seen[name] {
				return fmt.Errorf("classify: population %q is listed twice", name)
			}
			seen[name] = true
		}
		if err := shape("weights", m.W, c, k); err != nil {
			return err
		}
		if len(m.Intercept) != c {
			return fmt.Errorf("classify: %d intercepts for %d populations", len(m.Intercept), c)
		}
		if err := finite("intercept", m.Intercept); err != nil {
			return err
		}
		if b := m.InvTemperature; !(b >= 0 && b <= MaxInvTemperature) {
			return fmt.Errorf("classify: inverse temperature %v; need 0 <= beta <= %v", b, float64(MaxInvTemperature))
		}
	case KRR:
		t := len(m.Targets)
		if t == 0 {
			return errors.New("classify: a regression of no target")
		}
		if !(m.Sigma > 0) || math.IsInf(m.Sigma, 1) {
			return fmt.Errorf("classify: kernel bandwidth %v; need a finite value > 0", m.Sigma)
		}
		if m.Points == nil || m.Points.IsEmpty() {
			return errors.New("classify: a kernel expansion on no points")
		}
		r, _ := m.Points.Dims()
		if err := shape("points", m.Points, r, k); err != nil {
			return err
		}
		if err := shape("coefficients", m.Coef, r, t); err != nil {
			return err
		}
		if len(m.Offset) != t {
			return fmt.Errorf("classify: %d offsets for %d targets", len(m.Offset), t)
		}
		if err := finite("offset", m.Offset); err != nil {
			return err
		}
	default:
		return fmt.Errorf("classify: unknown kind %v", m.Kind)
	}
	return nil
}

func shape(what string, a *mat.Dense, r, c int) error {
	if a == nil || a.IsEmpty() {
		return fmt.Errorf("classify: no %s", what)
	}
	if ar, ac := a.Dims(); ar != r || ac != c {
		return fmt.Errorf("classify: %s are %d x %d; need %d x %d", what, ar, ac, r, c)
	}
	for i := range r {
		if err := finite(what, a.RawRowView(i)); err != nil {
			return err
		}
	}
	return nil
}

func finite(what string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("classify: %s %d is %v; need a finite value", what, i+1, x)
		}
	}
	return nil
}

// ClassIndex returns the index in Classes of the population name, and
// whether the model knows it (a population it was not trained on is not
// an error: a caller comparing predictions with labels counts it).
func (m *Model) ClassIndex(name string) (int, bool) {
	if m == nil {
		return NoClass, false
	}
	i := slices.Index(m.Classes, name)
	if i < 0 {
		return NoClass, false
	}
	return i, true
}

// Label returns the name of class index c: Classes[c], or Unassigned for
// NoClass and any index outside Classes.
func (m *Model) Label(c int) string {
	if m == nil || c < 0 || c >= len(m.Classes) {
		return Unassigned
	}
	return m.Classes[c]
}

// CheckTruth reports whether data with class labels (labelled) or the
// real targets named targets can be compared with the model's
// predictions: an SVM's with class labels only, a KRR model's with its
// own targets only. Data with neither is always accepted.
func (m *Model) CheckTruth(labelled bool, targets []string) error {
	if m == nil {
		return errors.New("classify: nil model")
	}
	switch {
	case labelled && m.Kind != SVM:
		return fmt.Errorf("classify: the data has class labels, but the model's learner is %v, which predicts the real targets %s: give real targets, or fit a model with an SVM", m.Kind, strings.Join(m.Targets, ","))
	case len(targets) > 0 && m.Kind != KRR:
		return fmt.Errorf("classify: the data has real targets (%s), but the model's learner is %v, which predicts populations: give class labels, or fit a model with KRR", strings.Join(targets, ","), m.Kind)
	case len(targets) > 0 && !slices.Equal(targets, m.Targets):
		return fmt.Errorf("classify: the data's targets are %s, the model predicts %s", strings.Join(targets, ","), strings.Join(m.Targets, ","))
	}
	return nil
}

// Prediction holds the predictions of a block of rows. Its slices have one
// entry per row (Values one row of len(Targets) values per row, row-major);
// they are reused from one block to the next.
type Prediction struct {
	// Rows is the number of rows.
	Rows int
	// Class is the predicted class index of each row (an index into
	// Model.Classes, or NoClass below the minimum confidence); nil for
	// KRR.
	Class []int
	// Confidence is the confidence of each row's prediction, in [0, 1];
	// nil for KRR.
	Confidence []float64
	// Values holds the predicted targets of KRR (nil for an SVM).
	Values []float64
}

// Reset sizes p for rows rows of the model's predictions, reusing its
// storage.
func (p *Prediction) Reset(m *Model, rows int) {
	p.Rows = rows
	if m.Kind == KRR {
		p.Class, p.Confidence = nil, nil
		p.Values = growF(p.Values, rows*len(m.Targets))
		return
	}
	p.Values = nil
	if cap(p.Class) < rows {
		p.Class = make([]int, rows)
	}
	p.Class = p.Class[:rows]
	p.Confidence = growF(p.Confidence, rows)
}

// Slice returns the rows lo..hi-1 of p, sharing its storage.
func (p *Prediction) Slice(m *Model, lo, hi int) Prediction {
	out := Prediction{Rows: hi - lo}
	if p.Class != nil {
		out.Class, out.Confidence = p.Class[lo:hi], p.Confidence[lo:hi]
	}
	if p.Values != nil {
		t := len(m.Targets)
		out.Values = p.Values[lo*t : hi*t]
	}
	return out
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// krrBlock is the number of rows whose kernel rows on the points are held
// at a time.
const krrBlock = 64

// PredictTo predicts the rows of z (r x at least Dim columns: the first
// Dim are used) into p, which Reset sized for r rows (or a Slice of such a
// prediction). Rows whose confidence is below minConfidence get NoClass
// (0 assigns every row). It panics if the shapes do not agree or the
// model does not pass Check (programmer errors: dica checks both); zero
// rows predict nothing.
func (m *Model) PredictTo(p *Prediction, z *mat.Dense, minConfidence float64) {
	r, cols := z.Dims()
	k := len(m.Mean)
	if cols < k || p.Rows != r {
		panic(fmt.Sprintf("classify: predicting %d rows of %d columns into %d rows with a model of %d inputs", r, cols, p.Rows, k))
	}
	if r == 0 {
		return
	}
	if m.Kind == KRR {
		m.regress(p.Values, z)
		return
	}
	c := len(m.Classes)
	var buf [64]float64
	var s []float64
	if k+c <= len(buf) {
		s = buf[:k+c]
	} else {
		s = make([]float64, k+c)
	}
	u, f := s[:k], s[k:]
	zr := z.RawMatrix()
	wr := m.W.RawMatrix()
	beta := m.InvTemperature
	for i := range r {
		row := zr.Data[i*zr.Stride : i*zr.Stride+k]
		for j, v := range row {
			u[j] = (v - m.Mean[j]) / m.Scale[j]
		}
		best := 0
		for cl := range c {
			w := wr.Data[cl*wr.Stride : cl*wr.Stride+k]
			v := m.Intercept[cl]
			for j, x := range u {
				v += w[j] * x
			}
			f[cl] = v
			if v > f[best] {
				best = cl
			}
		}
		conf := confidence(f, best, beta)
		p.Confidence[i] = conf
		if conf < minConfidence {
			p.Class[i] = NoClass
		} else {
			p.Class[i] = best
		}
	}
}

// confidence returns 1 / sum_c exp(beta (f_c - f_best)).
func confidence(f []float64, best int, beta float64) float64 {
	var s float64
	fb := f[best]
	for _, v := range f {
		s += math.Exp(beta * (v - fb))
	}
	return 1 / s
}

// Confidence returns the predicted class (the largest margin, the first
// on ties) and its confidence 1 / sum_c exp(beta (f_c - f_chat)) for the
// one-vs-rest margins f and the inverse temperature beta: the formula of
// the package documentation, for a caller that has the margins.
func Confidence(f []float64, beta float64) (int, float64) {
	if len(f) == 0 {
		return NoClass, 0
	}
	best := 0
	for c, v := range f {
		if v > f[best] {
			best = c
		}
	}
	return best, confidence(f, best, beta)
}

// regress stores the KRR predictions of the rows of z in out.
func (m *Model) regress(out []float64, z *mat.Dense) {
	r, _ := z.Dims()
	k := len(m.Mean)
	np, _ := m.Points.Dims()
	t := len(m.Targets)
	u := mat.NewDense(min(r, krrBlock), k, nil)
	kr := mat.NewDense(min(r, krrBlock), np, nil)
	rbf := kernel.RBF{Sigma: m.Sigma}
	cr := m.Coef.RawMatrix()
	for lo := 0; lo < r; lo += krrBlock {
		hi := min(r, lo+krrBlock)
		ub := u.Slice(0, hi-lo, 0, k).(*mat.Dense)
		for i := lo; i < hi; i++ {
			row, dst := z.RawRowView(i)[:k], ub.RawRowView(i-lo)
			for j, v := range row {
				dst[j] = (v - m.Mean[j]) / m.Scale[j]
			}
		}
		kb := kr.Slice(0, hi-lo, 0, np).(*mat.Dense)
		rbf.Block(kb, ub, m.Points)
		for i := lo; i < hi; i++ {
			o := out[i*t : (i+1)*t]
			copy(o, m.Offset)
			for q, kv := range kb.RawRowView(i - lo) {
				c := cr.Data[q*cr.Stride : q*cr.Stride+t]
				for ti := range o {
					o[ti] += kv * c[ti]
				}
			}
		}
	}
}

// FitInvTemperature returns the inverse temperature beta in
// [0, MaxInvTemperature] that maximizes the likelihood of the true
// classes truth[i] under the softmax of beta times the margins (row i of
// margins, one column per class; see the package documentation). A
// margin of -Inf marks a class the learner that scored the row lacked:
// it is left out of that row's softmax, and a row whose true class has
// such a margin (or is negative: unknown) is left out. It returns the
// number of rows used, and an error for mismatched lengths, NaN or +Inf
// margins, or no usable row.
func FitInvTemperature(margins *mat.Dense, truth []int) (beta float64, used int, err error) {
	if margins == nil || margins.IsEmpty() {
		return 0, 0, errors.New("classify: no held-out margins to calibrate on")
	}
	n, c := margins.Dims()
	if len(truth) != n {
		return 0, 0, fmt.Errorf("classify: %d rows of margins and %d true classes", n, len(truth))
	}
	// Each usable row as its finite margins minus the largest, d_ic <= 0,
	// and the true class's, d_iy: rows of varying length in one slice.
	var d []float64
	var dy []float64
	start := []int{0}
	for i := range n {
		row := margins.RawRowView(i)
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return 0, 0, fmt.Errorf("classify: margin [%d, %d] is %v", i, j, v)
			}
		}
		y := truth[i]
		if y < 0 || y >= c || math.IsInf(row[y], -1) {
			continue
		}
		fmax := math.Inf(-1)
		for _, v := range row {
			fmax = math.Max(fmax, v)
		}
		for _, v := range row {
			if !math.IsInf(v, -1) {
				d = append(d, v-fmax)
			}
		}
		dy = append(dy, row[y]-fmax)
		start = append(start, len(d))
	}
	used = len(dy)
	if used == 0 {
		return 0, 0, errors.New("classify: no held-out cell of a class its learner knew: nothing to calibrate on")
	}
	// g(beta) = sum_i (E_p[d_i] - d_iy) is the derivative of the negative
	// log-likelihood, increasing in beta; h(beta) = sum_i Var_p[d_i] its
	// derivative.
	e := make([]float64, len(d))
	eval := func(beta float64) (g, h float64) {
		for i, v := range d {
			e[i] = beta * v
		}
		kernel.ExpSlice(e, e)
		for i, y := range dy {
			var s, s1, s2 float64
			for j, v := range d[start[i]:start[i+1]] {
				ej := e[start[i]+j]
				s += ej
				s1 += ej * v
				s2 += ej * v * v
			}
			mean := s1 / s
			g += mean - y
			h += math.Max(s2/s-mean*mean, 0)
		}
		return g, h
	}
	lo, hi := 0.0, float64(MaxInvTemperature)
	if g, _ := eval(lo); g >= 0 {
		return 0, used, nil
	}
	if g, _ := eval(hi); g <= 0 {
		return hi, used, nil
	}
	beta = 1
	for range 100 {
		g, h := eval(beta)
		if g == 0 {
			break
		}
		if g < 0 {
			lo = beta
		} else {
			hi = beta
		}
		next := beta - g/h
		if !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
		}
		if math.Abs(next-beta) <= 1e-10*beta {
			beta = next
			break
		}
		beta = next
	}
	return beta, used, nil
}
