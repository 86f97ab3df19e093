package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Block is a chunk of consecutive rows of a stream. Its slices are reused
// from one Read to the next: copy what must outlive the next call.
type Block struct {
	// Rows is the number of rows in the block; D the input dimension.
	Rows, D int
	// X holds the rows, row-major (Rows*D values).
	X []float64
	// Domain[i] is the domain index of row i (an index into Reader.Domains).
	Domain []int
	// Label[i] is the class index of row i (an index into Reader.Classes),
	// or NoLabel (-1) when row i has no label (a stream of labelled and
	// unlabelled rows: files with and without label files); nil when the
	// stream has no labels.
	Label []int
	// T is the number of target columns; Target holds Rows*T values,
	// row-major; nil when the stream has no real targets.
	T      int
	Target []float64
	// File and Event say where each row came from, for sources that know
	// (they implement Origins): File[i] indexes the source's Files, and
	// Event[i] is the 1-based number of row i in that file (a data row of
	// a CSV or Parquet file, an event of an FCS data set, a cell of an
	// AnnData store), counting the rows the source left out
	// (LabelsIgnore), so that a row can be joined back to its file. Both
	// are empty (length 0) when the source does not say.
	File  []int
	Event []int64
}

// Row returns row i of the block's inputs, i in [0, Rows). It panics, as a
// slice index does, when the row lies outside X: a programmer error (Read
// says how many rows there are), left to the slice's bounds check so that
// the loops over rows cost nothing more.
func (b *Block) Row(i int) []float64 { return b.X[i*b.D : (i+1)*b.D] }

// Reset prepares b to hold up to rows rows of d inputs and t targets,
// reusing its storage where possible. Negative sizes count as 0. It
// empties File and Event (ResetOrigins sizes them). Reset of a nil *Block
// does nothing (there is no storage to prepare; a Read into it reports the
// nil Block).
func (b *Block) Reset(rows, d int, labels bool, t int) {
	if b == nil {
		return
	}
	rows, d, t = max(rows, 0), max(d, 0), max(t, 0)
	b.File, b.Event = b.File[:0], b.Event[:0]
	b.Rows, b.D, b.T = 0, d, t
	b.X = grow(b.X, rows*d)
	b.Domain = growInt(b.Domain, rows)
	if labels {
		b.Label = growInt(b.Label, rows)
	} else {
		b.Label = nil
	}
	if t > 0 {
		b.Target = grow(b.Target, rows*t)
	} else {
		b.Target = nil
	}
}

// ResetOrigins sizes File and Event to hold rows rows, reusing their
// storage: a source that knows where its rows come from calls it after
// Reset. A nil b is left as it is.
func (b *Block) ResetOrigins(rows int) {
	if b == nil {
		return
	}
	rows = max(rows, 0)
	b.File = growInt(b.File, rows)
	if cap(b.Event) < rows {
		b.Event = make([]int64, rows)
	}
	b.Event = b.Event[:rows]
}

// HasOrigins reports whether the block says where each of its rows came
// from (File and Event hold Rows values).
func (b *Block) HasOrigins() bool {
	return b != nil && len(b.File) >= b.Rows && len(b.Event) >= b.Rows
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func growInt(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// Schema describes the columns of a stream.
type Schema struct {
	// Features names the d input columns.
	Features []string
	// Labelled reports whether rows may carry class labels: Block.Label is
	// set, and rows without a label hold NoLabel in it.
	Labelled bool
	// Targets names the real target columns (nil for none).
	Targets []string
}

// D returns the input dimension.
func (s Schema) D() int { return len(s.Features) }

// Source is a data set that can be read, as a stream of blocks, any number of
// times. Each pass must yield the same rows in the same order, so that domain
// and class indices agree between passes.
type Source interface {
	// Schema describes the columns.
	Schema() Schema
	// Open starts a pass over the rows.
	Open(ctx context.Context) (Reader, error)
}

// Reader is one pass over a Source.
type Reader interface {
	// Read fills b with the next rows, at most max of them, and returns the
	// number read. At the end of the stream it returns 0, io.EOF.
	Read(b *Block, max int) (int, error)
	// Domains returns the names of the domains seen so far; Block.Domain
	// values index it. Names are numbered in order of first appearance.
	Domains() []string
	// Classes returns the names of the classes seen so far (nil without
	// labels); rows without a label (NoLabel) name none.
	Classes() []string
	// Close releases the pass's resources.
	Close() error
}

// Sizer is implemented by sources that know their number of rows without a
// pass (in-memory data); it lets a fit report progress and skip a sampling
// pass.
type Sizer interface {
	Len() int
}

// Origins is implemented by sources that say where each row came from: the
// files they read, which Block.File indexes (Block.Event numbers the rows
// within a file).
type Origins interface {
	// Files returns the paths of the files the source reads, in reading
	// order.
	Files() []string
}

// RowAccess is implemented by sources that can copy rows by their index
// without a pass over the data (data in memory): a fit then draws its
// sample of landmarks without reading every row.
type RowAccess interface {
	Sizer
	// CopyRows copies the inputs of the given rows (indices in [0, Len()),
	// in the order given) into the rows of x (len(rows) x D), and their
	// targets into y when y is not nil (len(rows) x number of targets).
	CopyRows(rows []int, x, y *mat.Dense)
}

// Skimmer is implemented by sources that can pass over their rows without
// decoding every one (CSV files, where parsing the numbers is most of the
// cost of a pass; FCS files, whose events can be read by their index): a
// fit then decodes only the rows its landmark sample keeps.
type Skimmer interface {
	// Skim passes over the rows in stream order. For the row with index i
	// (from 0) it calls keep(i); when keep returns true it decodes the row
	// and calls put with its inputs and targets (valid during the call
	// only) before it calls keep(i+1). It returns the number of rows, and the first error of a
	// decoded row, of put, of the pass or of ctx. Rows not decoded are not
	// checked: a full pass reports their errors.
	Skim(ctx context.Context, keep func(i int64) bool, put func(x, y []float64) error) (int64, error)
}

// Source returns the data set as a stream (it implements Sizer and
// RowAccess). Its Open checks the lengths of the data set (not its values:
// Validate does) and gives an error for a nil Dataset.
func (ds *Dataset) Source() Source { return memSource{ds} }

// CopyRows implements RowAccess. Like Dense.SetRow, it panics on a row
// index out of [0, Len()) or on x or y of the wrong shape: the caller
// chooses the rows from Len.
func (s memSource) CopyRows(rows []int, x, y *mat.Dense) {
	for i, p := range rows {
		x.SetRow(i, s.ds.X.RawRowView(p))
		if y != nil {
			y.SetRow(i, s.ds.Target.RawRowView(p))
		}
	}
}

type memSource struct{ ds *Dataset }

func (s memSource) Len() int { return s.ds.N() }

func (s memSource) Schema() Schema {
	if s.ds == nil {
		return Schema{}
	}
	f := s.ds.Features
	if f == nil {
		f = make([]string, s.ds.D())
		for j := range f {
			f[j] = fmt.Sprintf("x%d", j+1)
		}
	}
	var t []string
	if s.ds.Target != nil {
		t = s.ds.TargetNames
		if t == nil {
			_, k := s.ds.Target.Dims()
			t = make([]string, k)
			for j := range t {
				t[j] = fmt.Sprintf("y%d", j+1)
			}
		}
	}
	return Schema{Features: f, Labelled: s.ds.Label != nil, Targets: t}
}

func (s memSource) Open(ctx context.Context) (Reader, error) {
	if ctx == nil {
		return nil, errors.New("dataset: nil context")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.ds.lengths(); err != nil {
		return nil, err
	}
	return &memReader{ds: s.ds, ctx: ctx}, nil
}

type memReader struct {
	ds  *Dataset
	ctx context.Context
	pos int
}

func (r *memReader) Read(b *Block, max int) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if b == nil {
		return 0, errors.New("dataset: Read into a nil Block")
	}
	if max < 1 {
		return 0, fmt.Errorf("dataset: Read of at most %d rows; want at least 1", max)
	}
	ds := r.ds
	n := ds.N()
	if r.pos >= n {
		return 0, io.EOF
	}
	rows := min(max, n-r.pos)
	d := ds.D()
	t := 0
	if ds.Target != nil {
		_, t = ds.Target.Dims()
	}
	b.Reset(rows, d, ds.Label != nil, t)
	if xr := ds.X.RawMatrix(); xr.Stride == d {
		copy(b.X[:rows*d], xr.Data[r.pos*d:(r.pos+rows)*d]) // contiguous rows
	} else {
		for i := 0; i < rows; i++ {
			copy(b.X[i*d:(i+1)*d], ds.X.RawRowView(r.pos+i))
		}
	}
	copy(b.Domain[:rows], ds.Domain[r.pos:r.pos+rows])
	if ds.Label != nil {
		copy(b.Label[:rows], ds.Label[r.pos:r.pos+rows])
	}
	if t > 0 {
		for i := 0; i < rows; i++ {
			copy(b.Target[i*t:(i+1)*t], ds.Target.RawRowView(r.pos+i))
		}
	}
	b.Rows = rows
	r.pos += rows
	return rows, nil
}

func (r *memReader) Domains() []string { return r.ds.DomainNames }
func (r *memReader) Classes() []string { return r.ds.ClassNames }
func (r *memReader) Close() error      { return nil }

// Collect reads a whole source into memory. It is meant for small data (the
// exact path) and for tests. The blocks must agree with the source's Schema
// (inputs, labels, targets): a source whose blocks do not is an error, as
// are a nil source, a nil context and a source without inputs or rows. The
// result is checked with Validate.
func Collect(ctx context.Context, src Source) (*Dataset, error) {
	if src == nil {
		return nil, errors.New("dataset: nil Source")
	}
	if ctx == nil {
		return nil, errors.New("dataset: nil context")
	}
	sc := src.Schema()
	d, t := sc.D(), len(sc.Targets)
	r, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("dataset: the source opened no Reader")
	}
	defer r.Close()
	var (
		x, tg   []float64
		dom, lb []int
		b       Block
	)
	const max = 4096
	for {
		k, err := r.Read(&b, max)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if k > 0 {
			if k > max || b.D != d || b.T != t || len(b.X) < k*d || len(b.Domain) < k ||
				sc.Labelled && len(b.Label) < k || len(b.Target) < k*t {
				return nil, fmt.Errorf("dataset: the source's Read gave %d rows of %d inputs and %d targets (asked for %d rows of %d and %d)", k, b.D, b.T, max, d, t)
			}
			x = append(x, b.X[:k*d]...)
			dom = append(dom, b.Domain[:k]...)
			if sc.Labelled {
				lb = append(lb, b.Label[:k]...)
			}
			tg = append(tg, b.Target[:k*t]...)
		}
		if err == io.EOF {
			break
		}
		if k <= 0 {
			return nil, fmt.Errorf("dataset: the source's Read gave %d rows without an error", k)
		}
	}
	if len(dom) == 0 {
		return nil, fmt.Errorf("dataset: no points")
	}
	if d == 0 {
		return nil, errors.New("dataset: the source has no input columns")
	}
	ds := &Dataset{
		X:           newDense(len(dom), sc.D(), x),
		Features:    sc.Features,
		Domain:      dom,
		DomainNames: r.Domains(),
	}
	if sc.Labelled {
		ds.Label, ds.ClassNames = lb, r.Classes()
	}
	if len(sc.Targets) > 0 {
		ds.Target, ds.TargetNames = newDense(len(dom), len(sc.Targets), tg), sc.Targets
	}
	return ds, ds.Validate()
}

func newDense(r, c int, data []float64) *mat.Dense { return mat.NewDense(r, c, data) }

// DomainName is the domain of the rows of a file read one domain per file:
// its base name without a ".gz" suffix and then one extension
// ("data/sample9.csv.gz" is "sample9", "patient2.fcs" is "patient2"). Every
// reader of the project names domains so.
func DomainName(path string) string {
	b := filepath.Base(filepath.Clean(filepath.FromSlash(path)))
	b = strings.TrimSuffix(b, ".gz")
	if e := filepath.Ext(b); e != "" && e != b {
		b = strings.TrimSuffix(b, e)
	}
	return b
}

// NaturalCompare compares strings with runs of digits compared by numeric
// value ("sample2" < "sample10"); it returns -1, 0 or +1. Equal-valued runs
// with different zero padding, and ties, are broken by plain comparison.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da := strings.TrimLeft(a[si:i], "0")
			db := strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Compare(len(da), len(db)); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
