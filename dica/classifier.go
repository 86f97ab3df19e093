package dica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
)

// ErrNoClassifier is the error of the predictions of a model that carries
// no classifier (Classifier is nil), such as every model file written
// before models could carry one: fit the model with a classifier (dica fit
// --classifier svm), or give it one (Model.SetClassifier).
var ErrNoClassifier = errors.New("dica: this model has no classifier: fit it with --classifier svm")

// Classifier returns the learner the model carries on its components (a
// classifier of populations or a regressor of real targets), or nil when
// it carries none. The caller must not modify it.
func (m *Model) Classifier() *classify.Model {
	if m == nil {
		return nil
	}
	return m.learner
}

// SetClassifier makes the model carry the learner c (nil removes it),
// which Save and MarshalBinary then record and the predictions use. c
// takes the first c.Dim() components of Transform (the preprocessed
// inputs for a model of Method Input), so c.Dim() must be at most
// Components(); c must pass c.Check. The model keeps c: do not modify it
// afterwards. SetClassifier is not safe for use concurrently with the
// model's other methods.
func (m *Model) SetClassifier(c *classify.Model) error {
	if err := m.ready(); err != nil {
		return err
	}
	if c != nil {
		if err := m.checkLearner(c); err != nil {
			return err
		}
	}
	m.learner = c
	return nil
}

// checkLearner checks that c is consistent and takes at most the model's
// components.
func (m *Model) checkLearner(c *classify.Model) error {
	if err := c.Check(); err != nil {
		return err
	}
	if c.Dim() > m.Positive {
		return fmt.Errorf("dica: the classifier takes %d components, the model has %d", c.Dim(), m.Positive)
	}
	return nil
}

// PredictOptions change how cells are predicted.
type PredictOptions struct {
	// Preprocessed says that the rows are already preprocessed as the
	// model's Preprocessing describes (PredictWith; PredictStream's
	// sources always are, as for TransformStream).
	Preprocessed bool
	// MinConfidence is the confidence in [0, 1] below which a cell is not
	// assigned a population (classify.NoClass, labelled
	// classify.Unassigned); 0 assigns every cell. Regressors ignore it.
	MinConfidence float64
	// BlockRows is the number of rows per block of PredictStream
	// (DefaultPredictBlockRows when 0).
	BlockRows int
}

// DefaultPredictBlockRows is the default number of rows of a block of
// PredictStream.
const DefaultPredictBlockRows = 4096

// learnerReady returns the model's learner after checking that the model
// can project and carries one.
func (m *Model) learnerReady(o PredictOptions) (*classify.Model, error) {
	if err := m.ready(); err != nil {
		return nil, err
	}
	if m.learner == nil {
		return nil, ErrNoClassifier
	}
	if c := o.MinConfidence; !(c >= 0 && c <= 1) {
		return nil, fmt.Errorf("dica: minimum confidence %v; need a value in [0, 1]", c)
	}
	if o.BlockRows < 0 {
		return nil, fmt.Errorf("dica: %d rows per block; need a positive number (or 0 for %d)", o.BlockRows, DefaultPredictBlockRows)
	}
	return m.learner, nil
}

// Predict returns the population the model's classifier predicts for each
// row of raw (r x d, the columns of Inputs, as the user's files hold
// them: the model applies its Preprocessing to a copy, as Transform
// does) and the confidence of each prediction (see package classify).
// Every cell is assigned (PredictWith takes a minimum confidence). It
// returns ErrNoClassifier for a model without a classifier, an error for
// a regressor (PredictWith gives its values) and the errors of
// Transform.
func (m *Model) Predict(raw *mat.Dense) (labels []string, confidence []float64, err error) {
	p, err := m.PredictWith(raw, PredictOptions{})
	if err != nil {
		return nil, nil, err
	}
	if p.Class == nil {
		return nil, nil, fmt.Errorf("dica: the model's learner is %v, a regression: PredictWith gives its values", m.learner.Kind)
	}
	labels = make([]string, p.Rows)
	for i, c := range p.Class {
		labels[i] = m.learner.Label(c)
	}
	return labels, p.Confidence, nil
}

// PredictWith returns the predictions of the model's learner for the rows
// of x (the columns of Inputs; preprocessed by the model unless
// o.Preprocessed): the predicted class index (into
// Classifier().Classes, or classify.NoClass below o.MinConfidence) and
// the confidence of each row for a classifier, the predicted targets for
// a regressor. Errors are those of Predict, and a MinConfidence outside
// [0, 1].
func (m *Model) PredictWith(x *mat.Dense, o PredictOptions) (*classify.Prediction, error) {
	cl, err := m.learnerReady(o)
	if err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("dica: Predict of no data (nil or empty matrix)")
	}
	r, d := x.Dims()
	if d != m.plan.inMap.InputDim() {
		return nil, fmt.Errorf("dica: data has %d columns, the model expects %d (%v)", d, m.plan.inMap.InputDim(), m.Summary.Features)
	}
	if x, err = m.prepare(x, o.Preprocessed); err != nil {
		return nil, err
	}
	pr := m.newPredictor(cl, o.MinConfidence)
	p := new(classify.Prediction)
	p.Reset(cl, r)
	pr.run(mat.NewDense(r, m.Positive, nil), x, p)
	return p, nil
}

// PredictStream predicts every row of src and calls emit, in row order,
// with each block, its projection z (all the model's components) and the
// learner's predictions p (see PredictWith), and the names that the
// block's domain and class indices refer to. The slices and matrices are
// reused afterwards: copy what must outlive the call. The rows of src
// must be preprocessed as the model's Preprocessing describes (a source
// opened for the model is), as for TransformStream. Memory is that of one
// block, whatever the number of rows.
//
// Besides the errors of Predict, PredictStream refuses a source whose
// truth cannot be compared with the learner's predictions: class labels
// for a regressor, real targets for a classifier, or other targets than
// the regressor's (classify.Model.CheckTruth). A population of the source
// that the classifier does not know is not an error (the caller counts
// it). It stops with ctx's error when ctx is cancelled.
func (m *Model) PredictStream(ctx context.Context, src dataset.Source, o PredictOptions, emit func(b *dataset.Block, z *mat.Dense, p *classify.Prediction, domains, classes []string) error) error {
	cl, err := m.learnerReady(o)
	if err != nil {
		return err
	}
	if ctx == nil || src == nil || emit == nil {
		return fmt.Errorf("dica: PredictStream needs a context, a source and an emit function")
	}
	sc := src.Schema()
	if d := sc.D(); d != m.plan.inMap.InputDim() {
		return fmt.Errorf("dica: data has %d columns, the model expects %d", d, m.plan.inMap.InputDim())
	}
	if err := cl.CheckTruth(sc.Labelled, sc.Targets); err != nil {
		return err
	}
	rows := o.BlockRows
	if rows == 0 {
		rows = DefaultPredictBlockRows
	}
	r, err := src.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	pr := m.newPredictor(cl, o.MinConfidence)
	var (
		b     dataset.Block
		p     classify.Prediction
		zbuf  []float64
		start int64
	)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(&b, rows)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.D != sc.D() {
			return fmt.Errorf("dica: a block of %d columns from a source of %d", b.D, sc.D())
		}
		if err := checkBlock(&b, start, false); err != nil {
			return err
		}
		start += int64(k)
		if cap(zbuf) < k*m.Positive {
			zbuf = make([]float64, k*m.Positive)
		}
		z := mat.NewDense(k, m.Positive, zbuf[:k*m.Positive])
		p.Reset(cl, k)
		pr.run(z, mat.NewDense(k, b.D, b.X[:k*b.D]), &p)
		if err := emit(&b, z, &p, r.Domains(), r.Classes()); err != nil {
			return err
		}
	}
}

// predictSub is the number of rows a worker projects and predicts at a
// time: their feature rows (predictSub x m) stay in its cache.
const predictSub = 512

// predictor projects and predicts blocks of rows on all cores, keeping
// one feature buffer per worker from block to block.
type predictor struct {
	m   *Model
	cl  *classify.Model
	min float64
	f   []*mat.Dense
}

func (m *Model) newPredictor(cl *classify.Model, minConfidence float64) *predictor {
	return &predictor{m: m, cl: cl, min: minConfidence, f: make([]*mat.Dense, runtime.GOMAXPROCS(0))}
}

// run projects the rows of x (preprocessed, finite) into z (r x Positive)
// and predicts them into p (sized for r rows). Each row's result depends
// on that row alone, so it does not depend on the number of workers.
func (pr *predictor) run(z, x *mat.Dense, p *classify.Prediction) {
	r, d := x.Dims()
	k := pr.m.Positive
	nb := (r + predictSub - 1) / predictSub
	work := func(w, b int) {
		lo, hi := b*predictSub, min((b+1)*predictSub, r)
		zb := z.Slice(lo, hi, 0, k).(*mat.Dense)
		pr.f[w] = pr.m.project(pr.f[w], zb, x.Slice(lo, hi, 0, d).(*mat.Dense))
		pb := p.Slice(pr.cl, lo, hi)
		pr.cl.PredictTo(&pb, zb, pr.min)
	}
	workers := min(len(pr.f), nb)
	if workers <= 1 {
		for b := range nb {
			work(0, b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				work(w, b)
			}
		})
	}
	wg.Wait()
}

// encodeLearner writes the learner c (nil for none) of a model file.
func encodeLearner(e *encoder, c *classify.Model) {
	e.bool(c != nil)
	if c == nil {
		return
	}
	e.int(int(c.Kind))
	e.f64s(c.Mean)
	e.f64s(c.Scale)
	e.strs(c.Classes)
	e.dense(c.W)
	e.f64s(c.Intercept)
	e.f64(c.InvTemperature)
	e.str(c.Calibration.Source)
	e.int(c.Calibration.Cells)
	e.int(c.Calibration.Folds)
	e.strs(c.Targets)
	e.f64(c.Sigma)
	e.dense(c.Points)
	e.dense(c.Coef)
	e.f64s(c.Offset)
	p := c.Params
	e.str(p.Method)
	e.f64(p.Sigma)
	e.f64(p.TargetSigma)
	e.f64(p.Lambda)
	e.f64(p.Epsilon)
	e.int(p.Components)
	e.f64(p.C)
	e.f64(c.Score)
	e.int(c.Folds)
	e.int(c.TrainCells)
}

// decodeLearner reads what encodeLearner wrote (the caller checks it).
func decodeLearner(d *decoder) *classify.Model {
	if !d.bool() {
		return nil
	}
	c := &classify.Model{Kind: classify.Kind(d.int())}
	c.Mean = d.f64s()
	c.Scale = d.f64s()
	c.Classes = d.strs()
	c.W = d.dense()
	c.Intercept = d.f64s()
	c.InvTemperature = d.f64()
	c.Calibration = classify.Calibration{Source: d.str(), Cells: d.int(), Folds: d.int()}
	c.Targets = d.strs()
	c.Sigma = d.f64()
	c.Points = d.dense()
	c.Coef = d.dense()
	c.Offset = d.f64s()
	c.Params = classify.Params{Method: d.str(), Sigma: d.f64(), TargetSigma: d.f64(), Lambda: d.f64(),
		Epsilon: d.f64(), Components: d.int(), C: d.f64()}
	c.Score = d.f64()
	c.Folds = d.int()
	c.TrainCells = d.int()
	return c
}
