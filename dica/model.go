package dica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/gemm"
	"github.com/dicalab/dica/preprocess"
)

// Summary describes the data a model was fitted on.
type Summary struct {
	N            int64
	Features     []string
	Domains      []string
	DomainCounts []int64
	Classes      []string
	ClassCounts  []int64
	Targets      []string
}

// Model is a fitted DICA transformation z(x) = W^T (phi(x) - mu) (docs/MATH.md,
// "Out-of-sample projection"): a feature map phi, the weights W (m x k) of
// the components with a positive eigenvalue, and the training mean feature
// mu. A Model is safe for concurrent use.
type Model struct {
	plan *Plan
	// W holds one column per returned component (m x Positive).
	W *mat.Dense
	// Mean is the mean training feature mu.
	Mean []float64
	// Eigenvalues are all the eigenvalues the solver returned, largest
	// first, including those that are not signal (<= NullTol * largest).
	Eigenvalues []float64
	// Positive is the number of components with gamma > NullTol * gamma_max;
	// only these are returned by Transform. With a delta output kernel and c
	// classes it is at most c - 1.
	Positive int
	// Summary describes the training data.
	Summary Summary
	// InputVariance is the distributional variance of the training domains
	// in the feature space, (1/N) sum_i ||M_i - M_bar||^2 = tr(KQ) for
	// K = Phi Phi^T (the paper's V_H(S), Theorem 2).
	InputVariance float64
	// ProjectedVariance is the distributional variance of the training
	// domains in the projection, with a linear kernel on z:
	// (1/N) sum_i ||W^T (M_i - M_bar)||^2 = tr(W^T C_Q W).
	ProjectedVariance float64

	// Derived: z = wraw^T raw(x) - offset; wrawT holds wraw^T (k x m raw)
	// contiguously for the projection product.
	wraw   *mat.Dense
	wrawT  []float64
	offset []float64

	// learner is the classifier or regressor on the components (nil for
	// none): see SetClassifier.
	learner *classify.Model
}

// Config returns the resolved configuration of the fit (kernels with their
// bandwidths); the zero Config for a model that was not fitted or loaded.
func (m *Model) Config() Config {
	if m == nil || m.plan == nil {
		return Config{}
	}
	return m.plan.Config
}

// Map returns the input feature map (nil for a model that was not fitted or
// loaded).
func (m *Model) Map() approx.Map {
	if m == nil || m.plan == nil {
		return nil
	}
	return m.plan.inMap
}

// errEmptyModel is returned by the methods of a Model that was neither
// fitted nor loaded (a zero Model, or nil).
var errEmptyModel = errors.New("dica: the model is empty: fit one (Fit, Stats.Solve) or load one (Load, UnmarshalBinary)")

// ready checks that m can project: it was fitted or loaded, and its
// exported fields still describe the weights it was built with (Positive at
// most the number of weight columns, enough eigenvalues for Scale).
func (m *Model) ready() error {
	if m == nil || m.plan == nil || m.plan.inMap == nil {
		return errEmptyModel
	}
	if m.Positive == 0 {
		return fmt.Errorf("dica: the model has no component with a positive eigenvalue")
	}
	if m.Positive < 0 || m.Positive > len(m.offset) {
		return fmt.Errorf("dica: Model.Positive = %d, but the model has weights for %d components: Positive may only be lowered, to keep the leading components", m.Positive, len(m.offset))
	}
	if len(m.Eigenvalues) < m.Positive {
		return fmt.Errorf("dica: Model.Eigenvalues holds %d values for %d components", len(m.Eigenvalues), m.Positive)
	}
	return nil
}

// Components returns the number of components Transform returns.
func (m *Model) Components() int {
	if m == nil {
		return 0
	}
	return m.Positive
}

// Null returns how many of the returned eigenvalues are not signal.
func (m *Model) Null() int {
	if m == nil {
		return 0
	}
	return len(m.Eigenvalues) - m.Positive
}

// newModel builds a model from a solution: drops the null components, fixes
// signs and precomputes the raw-coordinate weights.
func newModel(p *Plan, sol *solution, mu []float64, sum Summary) *Model {
	vals := sol.values
	gmax := 0.0
	if len(vals) > 0 {
		gmax = vals[0]
	}
	pos := 0
	for _, g := range vals {
		if g > NullTol*gmax && g > 0 {
			pos++
		}
	}
	md := p.inMap.Dim()
	w := mat.NewDense(md, max(pos, 1), nil)
	if pos > 0 {
		for j := 0; j < pos; j++ {
			col := mat.Col(nil, j, sol.w)
			fixSign(col)
			w.SetCol(j, col)
		}
	}
	if pos == 0 {
		w = nil
	}
	m := &Model{plan: p, W: w, Mean: mu, Eigenvalues: vals, Positive: pos, Summary: sum}
	m.derive()
	return m
}

func (m *Model) derive() {
	if m.Positive == 0 {
		return
	}
	if t := mapTransform(m.plan.inMap); t != nil {
		m.wraw = new(mat.Dense)
		m.wraw.Mul(t, m.W)
	} else {
		m.wraw = m.W
	}
	mr, k := m.wraw.Dims()
	m.wrawT = make([]float64, k*mr)
	for i := 0; i < mr; i++ {
		for j := 0; j < k; j++ {
			m.wrawT[j*mr+i] = m.wraw.At(i, j)
		}
	}
	m.offset = make([]float64, m.Positive)
	blas64.Gemv(blas.Trans, 1, m.W.RawMatrix(), blas64.Vector{N: len(m.Mean), Inc: 1, Data: m.Mean}, 0,
		blas64.Vector{N: m.Positive, Inc: 1, Data: m.offset})
}

// Preprocessing returns how the model's training data were preprocessed
// before the fit (channels, linearization, compensation, transform), or nil
// when it was not recorded (Config.Preprocessing was not set, or a model
// file from a dica that did not record it). Transform applies it.
func (m *Model) Preprocessing() *preprocess.Pipeline {
	if m == nil || m.plan == nil {
		return nil
	}
	return m.plan.Config.Preprocessing
}

// Inputs returns the names of the model's inputs, the columns Transform
// takes, in order.
func (m *Model) Inputs() []string {
	if m == nil || m.plan == nil {
		return nil
	}
	return slices.Clone(m.plan.Schema.Features)
}

// TransformOptions change how points are projected.
type TransformOptions struct {
	// Preprocessed says that the rows are already preprocessed as the
	// model's Preprocessing describes (read through a source that applies
	// it, as dica transform does); Transform then projects them as they
	// are. Otherwise Transform preprocesses a copy of the rows first.
	Preprocessed bool
	// Scale divides component j by sqrt(gamma_j) (the convention of the
	// authors' dica.m).
	Scale bool
	// BatchCenter centers with the mean feature of the batch itself instead
	// of the training mean (dica.m's transductive convention: it also
	// removes the new domain's mean shift; one point projects to 0).
	BatchCenter bool
}

// Transform projects the rows of x (r x d, the columns of Inputs) and
// returns Z (r x Positive), z(x) = W^T (phi(x) - mu), after applying the
// model's Preprocessing to a copy of x unless o.Preprocessed is set. Steps
// of the preprocessing that need the file the values came from (FCS
// linearization, compensation with each file's own spillover matrix) are an
// error here (preprocess.ErrNeedsFile): read such files through fcs.NewSource
// with the model's options and set o.Preprocessed. Rows are processed in
// blocks on all cores.
func (m *Model) Transform(x *mat.Dense, o TransformOptions) (*mat.Dense, error) {
	if err := m.ready(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("dica: Transform of no data (nil or empty matrix)")
	}
	r, d := x.Dims()
	if d != m.plan.inMap.InputDim() {
		return nil, fmt.Errorf("dica: data has %d columns, the model expects %d (%v)", d, m.plan.inMap.InputDim(), m.Summary.Features)
	}
	x, err := m.prepare(x, o.Preprocessed)
	if err != nil {
		return nil, err
	}
	z := mat.NewDense(r, m.Positive, nil)
	const blk = 512
	nb := (r + blk - 1) / blk
	var wg sync.WaitGroup
	next := make(chan int, nb)
	for b := 0; b < nb; b++ {
		next <- b
	}
	close(next)
	for w := 0; w < min(runtime.GOMAXPROCS(0), nb); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f *mat.Dense
			for b := range next {
				lo, hi := b*blk, min((b+1)*blk, r)
				f = m.project(f, z.Slice(lo, hi, 0, m.Positive).(*mat.Dense), x.Slice(lo, hi, 0, d).(*mat.Dense))
			}
		}()
	}
	wg.Wait()
	if o.BatchCenter {
		// z = W^T(phi - batch mean) = z_train_centered - mean(z).
		for j := 0; j < m.Positive; j++ {
			col := mat.Col(nil, j, z)
			var s float64
			for _, v := range col {
				s += v
			}
			s /= float64(r)
			for i := range col {
				col[i] -= s
			}
			z.SetCol(j, col)
		}
	}
	if o.Scale {
		for j := 0; j < m.Positive; j++ {
			sc := 1 / math.Sqrt(m.Eigenvalues[j])
			for i := 0; i < r; i++ {
				z.Set(i, j, z.At(i, j)*sc)
			}
		}
	}
	return z, nil
}

// prepare checks that x (with the columns of Inputs) is finite and
// returns it preprocessed as the model's Preprocessing describes: a
// preprocessed copy, or x itself when preprocessed is set or nothing is
// recorded.
func (m *Model) prepare(x *mat.Dense, preprocessed bool) (*mat.Dense, error) {
	if err := finite(x); err != nil {
		return nil, err
	}
	pp := m.Preprocessing()
	if pp == nil || preprocessed {
		return x, nil
	}
	_, d := x.Dims()
	c := mat.DenseCopyOf(x)
	if err := pp.Apply(c.RawMatrix().Data, d); err != nil {
		return nil, fmt.Errorf("dica: preprocessing: %w", err)
	}
	if err := finite(c); err != nil {
		return nil, fmt.Errorf("dica: after preprocessing (%s): %w", pp.TransformSpec(), err)
	}
	return c, nil
}

// project computes rows of Z for a block of x, reusing the feature buffer f.
func (m *Model) project(f, z, x *mat.Dense) *mat.Dense {
	rows, _ := x.Dims()
	f = reuseDense(f, rows, rawDim(m.plan.inMap))
	rawMap(m.plan.inMap, f, x)
	fr, zr := f.RawMatrix(), z.RawMatrix()
	for i := 0; i < rows; i++ {
		clear(zr.Data[i*zr.Stride : i*zr.Stride+m.Positive])
	}
	// z = raw(x) wraw - offset, with a GEMM kernel that is fast for the
	// thin k-column product (gonum's is not).
	gemm.Gemm(blas.NoTrans, blas.Trans, 1, fr, blas64.General{Rows: m.Positive, Cols: fr.Cols, Stride: fr.Cols, Data: m.wrawT[:m.Positive*fr.Cols]},
		blas64.General{Rows: rows, Cols: m.Positive, Stride: zr.Stride, Data: zr.Data}, 1)
	for i := 0; i < rows; i++ {
		row := zr.Data[i*zr.Stride : i*zr.Stride+m.Positive]
		for j, o := range m.offset[:m.Positive] {
			row[j] -= o
		}
	}
	return f
}

// TransformStream projects every row of src and calls emit, in row order,
// with each block and its projection (the slices are reused afterwards).
// The rows of src must be preprocessed as the model's Preprocessing
// describes (a csvio or fcs source opened with the same options is), since
// sources apply preprocessing themselves: TransformStream does not apply it
// again.
func (m *Model) TransformStream(ctx context.Context, src dataset.Source, blockRows int, emit func(b *dataset.Block, z *mat.Dense, domains, classes []string) error) error {
	if err := m.ready(); err != nil {
		return err
	}
	if src == nil || emit == nil {
		return fmt.Errorf("dica: TransformStream needs a source and an emit function")
	}
	if d := src.Schema().D(); d != m.plan.inMap.InputDim() {
		return fmt.Errorf("dica: data has %d columns, the model expects %d", d, m.plan.inMap.InputDim())
	}
	if blockRows <= 0 {
		blockRows = 4096
	}
	r, err := src.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	var b dataset.Block
	for {
		k, err := r.Read(&b, blockRows)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		x := mat.NewDense(k, b.D, b.X[:k*b.D])
		z, err := m.Transform(x, TransformOptions{Preprocessed: true})
		if err != nil {
			return err
		}
		if err := emit(&b, z, r.Domains(), r.Classes()); err != nil {
			return err
		}
	}
}

func finite(x *mat.Dense) error {
	r, _ := x.Dims()
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dica: row %d, column %d: value %v is not finite", i+1, j+1, v)
			}
		}
	}
	return nil
}

// ModelMagic is how a model file (MarshalBinary, Save) begins, so that a
// tool can tell one from other files before decoding it.
const ModelMagic = "DICAMODL"

// modelVersion 2: the plan records the preprocessing
// (Config.Preprocessing); version 1 files load with none recorded.
// modelVersion 3: the preprocessing records Unnamed (version 2 files load
// with it inferred: see Model.Preprocessing), and the plan its precision
// (Config.Precision; version 2 files are of precision 64).
// modelVersion 4: the model may carry a classifier (SetClassifier);
// files of earlier versions load without one.
const modelVersion = 4

// MarshalBinary encodes the model in a versioned format with a checksum.
func (m *Model) MarshalBinary() ([]byte, error) {
	if m == nil || m.plan == nil {
		return nil, errEmptyModel
	}
	w := m.W
	if w != nil {
		r, c := w.Dims()
		if m.Positive < 0 || m.Positive > c {
			return nil, fmt.Errorf("dica: Model.Positive = %d, but the model has weights for %d components", m.Positive, c)
		}
		if m.Positive == 0 {
			w = nil
		} else if m.Positive < c {
			w = w.Slice(0, r, 0, m.Positive).(*mat.Dense)
		}
	}
	var e encoder
	m.plan.encode(&e)
	m.encodeFields(&e, w)
	encodeLearner(&e, m.learner)
	return seal(ModelMagic, modelVersion, e.b), nil
}

// encodeFields writes the fields of a model file that follow its plan,
// with the weights w, up to the learner.
func (m *Model) encodeFields(e *encoder, w *mat.Dense) {
	e.dense(w)
	e.f64s(m.Mean)
	e.f64s(m.Eigenvalues)
	e.int(m.Positive)
	s := m.Summary
	e.u64(uint64(s.N))
	e.strs(s.Features)
	e.strs(s.Domains)
	e.ints(int64s(s.DomainCounts))
	e.strs(s.Classes)
	e.ints(int64s(s.ClassCounts))
	e.strs(s.Targets)
	e.f64(m.InputVariance)
	e.f64(m.ProjectedVariance)
}

// UnmarshalBinary decodes a model written by MarshalBinary. A truncated,
// corrupted or future-version file is an error.
func (m *Model) UnmarshalBinary(data []byte) error {
	payload, v, err := unseal(data, ModelMagic, "model", modelVersion)
	if err != nil {
		return err
	}
	d := &decoder{b: payload}
	p, err := decodePlan(d, planLevel(v, 2, 3))
	if err == nil && v < 3 {
		inferUnnamed(p.Config.Preprocessing)
	}
	if err != nil {
		return fmt.Errorf("dica: model: %w", err)
	}
	out := Model{plan: p}
	out.W = d.dense()
	out.Mean = d.f64s()
	out.Eigenvalues = d.f64s()
	out.Positive = d.int()
	out.Summary.N = int64(d.u64())
	out.Summary.Features = d.strs()
	out.Summary.Domains = d.strs()
	out.Summary.DomainCounts = toInt64s(d.ints())
	out.Summary.Classes = d.strs()
	out.Summary.ClassCounts = toInt64s(d.ints())
	out.Summary.Targets = d.strs()
	out.InputVariance = d.f64()
	out.ProjectedVariance = d.f64()
	if v >= 4 {
		out.learner = decodeLearner(d)
	}
	if d.err != nil {
		return fmt.Errorf("dica: model: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("dica: model: %d unexpected bytes at the end", len(d.b))
	}
	md := p.inMap.Dim()
	if out.Positive < 0 || out.Positive > len(out.Eigenvalues) {
		return fmt.Errorf("dica: model: %d components for %d eigenvalues", out.Positive, len(out.Eigenvalues))
	}
	if out.Positive > 0 {
		if out.W == nil || out.W.RawMatrix().Rows != md || out.W.RawMatrix().Cols != out.Positive || len(out.Mean) != md {
			return fmt.Errorf("dica: model: weights do not match the feature map (%d features)", md)
		}
	}
	out.derive()
	if out.learner != nil {
		if err := out.checkLearner(out.learner); err != nil {
			return fmt.Errorf("dica: model: %w", err)
		}
	}
	*m = out
	return nil
}

// Save writes the model to a file, atomically: the file holds its previous
// contents, if any, until the new ones are complete and synced to disk.
func (m *Model) Save(path string) error { return save(path, m) }

// Load reads a model written by Save. It reads no more than the file's
// header declares, after checking the magic number and the version, so a
// large file of another kind is refused after a few bytes: LoadContext
// with no deadline and the default memory budget.
func Load(path string) (*Model, error) {
	return LoadContext(context.Background(), path, LoadOptions{})
}

// LoadContext reads a model written by Save. It reads no more than the
// file's header declares, after checking the magic number, the version and
// the declared size against the budget of o, and stops with ctx's error
// when ctx is done (also while it waits for the writer of a pipe).
func LoadContext(ctx context.Context, path string, o LoadOptions) (*Model, error) {
	var m Model
	if err := load(ctx, path, ModelMagic, "model", modelVersion, o, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

func int64s(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func toInt64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
