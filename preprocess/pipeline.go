package preprocess

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Pipeline records the preprocessing that turns the values stored in a
// user's files into a model's inputs: which channels, in which order,
// linearization of log-amplified FCS channels, spillover compensation and
// an elementwise transform on some of the channels. A fitted model carries
// its Pipeline, so that new files are preprocessed as the training files
// were (the role of a scikit-learn Pipeline), and a person can read how the
// model expects its data (String).
//
// The steps apply in the order of the fields: channels are read (FCS values
// linearized first when Linearize is set), compensated, then transformed.
type Pipeline struct {
	// Format is the kind of file the training data came from: "csv",
	// "fcs", "parquet", "zarr", or "" for data that did not come from
	// files.
	Format string
	// Channels are the model's inputs, in order.
	Channels []Channel
	// Unnamed records that the training files did not name their columns
	// (CSV files without a header, whose columns are called V1, V2, ...):
	// the channels of new files are then taken by position (Channel.Index).
	Unnamed bool
	// Linearize records that FCS values were converted to linear scale
	// ($PnE, $PnG) before compensation, as flowCore's read.FCS does.
	Linearize bool
	// Compensation is the spillover compensation applied before the
	// transform, or nil.
	Compensation *Spill
	// Transform is the elementwise transform as ParseFunc reads it
	// ("asinh:150", "log1p"); "" or "none" for none.
	Transform string
	// TransformChannels names the channels (Channel.Name) the transform
	// applies to; nil means all of them.
	TransformChannels []string
}

// Channel is one input of a model.
type Channel struct {
	// Name is the input's name in the model (its feature name).
	Name string
	// Ref is how the user selected it (a --channels or --features entry),
	// or "" when every column was read.
	Ref string
	// Index is the 1-based column (CSV, Parquet), variable (AnnData) or
	// parameter number (FCS) of the channel in the first training file, or
	// 0 when unknown.
	Index int
	// PnN and PnS are the FCS parameter's $PnN and $PnS ("" for CSV).
	PnN, PnS string
}

// Spill is a recorded spillover compensation.
type Spill struct {
	// PerFile records that each file was compensated with its own spillover
	// matrix (the FCS files' $SPILLOVER); Keyword, Source, Channels and
	// Matrix then describe the first training file's. Otherwise Matrix was
	// applied to every file.
	PerFile bool
	// Keyword is the FCS keyword the matrix was read from; Source the file.
	Keyword, Source string
	// Channels names the rows and columns of the matrix.
	Channels []string
	// Matrix is the k x k spillover matrix, row-major.
	Matrix []float64
}

// Names returns the channel names, in order.
func (p *Pipeline) Names() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = c.Name
	}
	return out
}

// Func returns the transform (Identity for none).
func (p *Pipeline) Func() (Func, error) {
	if p == nil || p.Transform == "" {
		return Identity{}, nil
	}
	return ParseFunc(p.Transform)
}

// TransformSpec returns the transform's spec, "none" when there is none.
func (p *Pipeline) TransformSpec() string {
	if p == nil || p.Transform == "" {
		return "none"
	}
	return p.Transform
}

// Check reports whether the pipeline is consistent: channel names present
// and distinct, a transform ParseFunc reads, transform channels among the
// channels, a square finite spillover matrix.
func (p *Pipeline) Check() error {
	if p == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, c := range p.Channels {
		if c.Name == "" {
			return fmt.Errorf("preprocess: pipeline channel %d has no name", i+1)
		}
		if seen[c.Name] {
			return fmt.Errorf("preprocess: pipeline channel %q appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Index < 0 {
			return fmt.Errorf("preprocess: pipeline channel %q has index %d", c.Name, c.Index)
		}
	}
	if _, err := p.Func(); err != nil {
		return err
	}
	for _, n := range p.TransformChannels {
		if !seen[n] {
			return fmt.Errorf("preprocess: transform channel %q is not an input of the pipeline", n)
		}
	}
	if s := p.Compensation; s != nil {
		k := len(s.Channels)
		if k == 0 || len(s.Matrix) != k*k {
			return fmt.Errorf("preprocess: spillover matrix of %d values for %d channels", len(s.Matrix), k)
		}
		for _, v := range s.Matrix {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("preprocess: spillover matrix holds %v", v)
			}
		}
	}
	return nil
}

// String describes the pipeline on one line, e.g. "fcs; 3 channels CD4,
// CD8, CD3; linearized; compensated with each file's $SPILLOVER (4
// channels); asinh:150 on CD4, CD8". A nil pipeline is "not recorded".
func (p *Pipeline) String() string {
	if p == nil {
		return "not recorded"
	}
	var parts []string
	if p.Format != "" {
		parts = append(parts, p.Format)
	}
	chans := fmt.Sprintf("%d channels %s", len(p.Channels), strings.Join(p.Names(), ", "))
	if p.Unnamed {
		chans = fmt.Sprintf("%d unnamed channels (columns %s)", len(p.Channels), strings.Join(p.Names(), ", "))
	}
	parts = append(parts, chans)
	if p.Linearize {
		parts = append(parts, "linearized ($PnE, $PnG)")
	}
	if s := p.Compensation; s != nil {
		src := fmt.Sprintf("the %s of %s", s.Keyword, s.Source)
		if s.PerFile {
			src = "each file's own " + s.Keyword
		}
		parts = append(parts, fmt.Sprintf("compensated with %s (%d channels, matrix %s)", src, len(s.Channels), s.digest()))
	}
	tr := p.TransformSpec()
	switch {
	case tr == "none":
		parts = append(parts, "no transform")
	case p.TransformChannels == nil:
		parts = append(parts, tr+" on all channels")
	default:
		parts = append(parts, fmt.Sprintf("%s on %s (others linear)", tr, strings.Join(p.TransformChannels, ", ")))
	}
	return strings.Join(parts, "; ")
}

// digest is a short hash of the matrix, so that String tells matrices apart.
func (s *Spill) digest() string {
	h := sha256.New()
	var b [8]byte
	for _, v := range s.Matrix {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// transformCols returns the indices among the channels that the transform
// applies to (nil for all).
func (p *Pipeline) transformCols() ([]int, error) {
	if p.TransformChannels == nil {
		return nil, nil
	}
	cols := make([]int, 0, len(p.TransformChannels))
	for _, n := range p.TransformChannels {
		j := slices.Index(p.Names(), n)
		if j < 0 {
			return nil, fmt.Errorf("preprocess: transform channel %q is not an input of the pipeline", n)
		}
		cols = append(cols, j)
	}
	return cols, nil
}

// ErrNeedsFile is returned by Pipeline.Apply for the steps that need the
// file the values came from: linearization (each parameter's $PnE, $PnG,
// $PnR) and compensation with each file's own spillover matrix.
var ErrNeedsFile = errors.New("preprocess: this step needs the FCS file the values came from (read the file with fcs.NewSource and the model's options instead)")

// Apply preprocesses the rows of the row-major block x, whose columns are
// the pipeline's channels in order, in place: compensation (when the
// matrix applies to every file and its channels are all inputs), then the
// transform. Linearization and per-file compensation need the file itself:
// Apply returns ErrNeedsFile for them. To preprocess many blocks, Compile
// the pipeline once.
func (p *Pipeline) Apply(x []float64, d int) error {
	if p == nil {
		return nil
	}
	c, err := p.Compile()
	if err != nil {
		return err
	}
	if d != c.d || d == 0 || len(x)%d != 0 {
		return fmt.Errorf("preprocess: block of %d values for %d channels", len(x), c.d)
	}
	c.Apply(x, d)
	return nil
}

// Compiled is a pipeline ready to preprocess blocks of rows whose columns
// are its channels: the steps that need no file (a spillover matrix that
// applies to every file, the elementwise transform), with the matrix
// inverted once. It is safe for concurrent use.
type Compiled struct {
	d     int
	chain Chain
}

// Compile returns the pipeline ready to apply. Linearization and
// per-file compensation need the file the values came from: Compile
// returns ErrNeedsFile for them. A nil pipeline compiles to the identity.
func (p *Pipeline) Compile() (*Compiled, error) {
	if p == nil {
		return &Compiled{}, nil
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	c := &Compiled{d: len(p.Channels)}
	if p.Linearize {
		return nil, fmt.Errorf("%w: linearization", ErrNeedsFile)
	}
	if s := p.Compensation; s != nil {
		if s.PerFile {
			return nil, fmt.Errorf("%w: compensation with each file's own spillover matrix", ErrNeedsFile)
		}
		k := len(s.Channels)
		if k == 0 || len(s.Matrix) != k*k {
			return nil, fmt.Errorf("preprocess: spillover matrix of %d values for %d channels", len(s.Matrix), k)
		}
		comp, err := NewCompensation(mat.NewDense(k, k, slices.Clone(s.Matrix)), s.Channels, p.Names())
		if err != nil {
			return nil, fmt.Errorf("%w (the spillover channels must all be inputs of the model)", err)
		}
		c.chain = append(c.chain, comp)
	}
	f, err := p.Func()
	if err != nil {
		return nil, err
	}
	if _, none := f.(Identity); !none {
		cols, err := p.transformCols()
		if err != nil {
			return nil, err
		}
		c.chain = append(c.chain, Channels{F: f, Cols: cols})
	}
	return c, nil
}

// Identity reports whether c changes nothing.
func (c *Compiled) Identity() bool { return c == nil || len(c.chain) == 0 }

// Apply preprocesses the rows of the row-major block x in place. It panics
// if d is not the number of the pipeline's channels (a nil pipeline's
// compiled form accepts any d) or len(x) is not a multiple of d.
func (c *Compiled) Apply(x []float64, d int) {
	if c == nil || len(c.chain) == 0 {
		return
	}
	if d != c.d {
		panic(fmt.Sprintf("preprocess: rows of %d values for a pipeline of %d channels", d, c.d))
	}
	c.chain.Apply(x, d)
}

// Row returns a function that preprocesses one row in place, as the
// readers' Transform options take it; nil when c changes nothing.
func (c *Compiled) Row() func(row []float64) {
	if c.Identity() {
		return nil
	}
	return func(row []float64) { c.chain.Apply(row, len(row)) }
}
