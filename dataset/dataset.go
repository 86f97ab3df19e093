// Package dataset holds multi-domain data for DICA: points X (n x d), the
// domain each point came from, and either class labels or real targets.
//
// A Dataset lives in memory. Data too large for memory reaches the solvers as
// a Source: a stream of row Blocks that can be read more than once.
//
// Nil and zero values give errors or documented zero results: the methods
// of a nil *Dataset report no points (and Validate an error), and
// Collect(ctx, nil) is an error. The only panics left are those of
// programmer errors in methods without an error result, each documented
// (Block.Row out of range, Index.ID on a nil *Index, CopyRows of rows that
// do not exist).
package dataset

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/escape"
)

// Dataset is an in-memory multi-domain data set.
//
// Domain and Label hold indices into DomainNames and ClassNames. Exactly one
// of Label and Target may be set (supervised DICA, COIR), or neither
// (UDICA, KPCA). Class labels may cover only some points: a point without
// a label has Label NoLabel (-1). Real targets cover every point.
type Dataset struct {
	// X holds one point per row (n x d).
	X *mat.Dense
	// Features names the d columns of X; it may be nil.
	Features []string

	// Domain[p] is the domain of point p, an index into DomainNames.
	Domain      []int
	DomainNames []string

	// Label[p] is the class of point p, an index into ClassNames, or
	// NoLabel when point p has no label (labelled and unlabelled points in
	// one data set); nil when the data set has no class labels.
	Label      []int
	ClassNames []string

	// Target holds real targets, one row per point (n x t); nil when the data
	// set has no real targets.
	Target      *mat.Dense
	TargetNames []string

	// err is why Subset could not make the data set; Validate returns it.
	err error
}

// NoLabel is the class index of a point or row without a class label, in
// Dataset.Label and Block.Label: a data set may have labels for some
// points only (a gated reference sample beside new, ungated ones). Such
// points count in every domain and in the points of a data set, and in no
// class.
const NoLabel = -1

// errNil is the error of the methods of a nil *Dataset.
var errNil = errors.New("dataset: nil Dataset")

// New returns a Dataset of the points in x with the given domain of each
// point. Domain names are numbered in order of first appearance. The result
// is validated with Validate.
func New(x *mat.Dense, domains []string) (*Dataset, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("dataset: no points")
	}
	n, _ := x.Dims()
	if len(domains) != n {
		return nil, fmt.Errorf("dataset: %d points but %d domain entries", n, len(domains))
	}
	var ix Index
	dom := make([]int, n)
	for p, s := range domains {
		dom[p] = ix.ID(s)
	}
	ds := &Dataset{X: x, Domain: dom, DomainNames: ix.Names()}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return ds, nil
}

// SetLabels sets the class label of each point; classes are numbered in order
// of first appearance. It removes real targets.
func (ds *Dataset) SetLabels(labels []string) error {
	if ds == nil {
		return errNil
	}
	if len(labels) != ds.N() {
		return fmt.Errorf("dataset: %d points but %d labels", ds.N(), len(labels))
	}
	var ix Index
	lab := make([]int, len(labels))
	for p, s := range labels {
		lab[p] = ix.ID(s)
	}
	ds.Label, ds.ClassNames = lab, ix.Names()
	ds.Target, ds.TargetNames = nil, nil
	return nil
}

// SetTargets sets real targets (n x t) for regression. It removes class
// labels.
func (ds *Dataset) SetTargets(y *mat.Dense, names []string) error {
	if ds == nil {
		return errNil
	}
	if y == nil || y.IsEmpty() {
		return fmt.Errorf("dataset: empty targets")
	}
	r, t := y.Dims()
	if r != ds.N() {
		return fmt.Errorf("dataset: %d points but %d target rows", ds.N(), r)
	}
	if names != nil && len(names) != t {
		return fmt.Errorf("dataset: %d target columns but %d target names", t, len(names))
	}
	if err := checkFinite(y, "target"); err != nil {
		return err
	}
	ds.Target, ds.TargetNames = y, names
	ds.Label, ds.ClassNames = nil, nil
	return nil
}

// N returns the number of points (0 for a nil Dataset).
func (ds *Dataset) N() int {
	if ds == nil || ds.X == nil || ds.X.IsEmpty() {
		return 0
	}
	n, _ := ds.X.Dims()
	return n
}

// D returns the number of input dimensions (0 for a nil Dataset).
func (ds *Dataset) D() int {
	if ds == nil || ds.X == nil || ds.X.IsEmpty() {
		return 0
	}
	_, d := ds.X.Dims()
	return d
}

// NumDomains returns the number of domains (0 for a nil Dataset).
func (ds *Dataset) NumDomains() int {
	if ds == nil {
		return 0
	}
	return len(ds.DomainNames)
}

// NumClasses returns the number of classes, 0 without labels (and for a
// nil Dataset).
func (ds *Dataset) NumClasses() int {
	if ds == nil {
		return 0
	}
	return len(ds.ClassNames)
}

// DomainSizes returns the number of points in each domain (nil for a nil
// Dataset). Domain indices out of range are not counted (Validate reports
// them).
func (ds *Dataset) DomainSizes() []int {
	if ds == nil {
		return nil
	}
	return sizes(ds.Domain, len(ds.DomainNames))
}

// ClassSizes returns the number of points in each class (nil without labels).
// Points without a label (NoLabel) and class indices out of range are not
// counted (Validate reports the latter).
func (ds *Dataset) ClassSizes() []int {
	if ds == nil || ds.Label == nil {
		return nil
	}
	return sizes(ds.Label, len(ds.ClassNames))
}

// LabelledRows returns the indices of the points that have a class label
// (Label[p] != NoLabel), in order: every point when all are labelled, nil
// when the data set has no class labels.
func (ds *Dataset) LabelledRows() []int {
	if ds == nil || ds.Label == nil {
		return nil
	}
	rows := make([]int, 0, len(ds.Label))
	for p, y := range ds.Label {
		if y != NoLabel {
			rows = append(rows, p)
		}
	}
	return rows
}

// sizes counts the ids in [0, n).
func sizes(ids []int, n int) []int {
	c := make([]int, n)
	for _, g := range ids {
		if g >= 0 && g < n {
			c[g]++
		}
	}
	return c
}

// Validate checks the shapes and values of the data set: at least one point,
// lengths that agree, finite values (the error names row and column), domain
// and class indices in range (a class index may also be NoLabel), and at
// least 2 points in every domain (labelled or not).
func (ds *Dataset) Validate() error {
	if ds == nil {
		return errNil
	}
	if ds.err != nil {
		return ds.err
	}
	n := ds.N()
	if n == 0 {
		return fmt.Errorf("dataset: no points")
	}
	if ds.Features != nil && len(ds.Features) != ds.D() {
		return fmt.Errorf("dataset: %d columns but %d feature names", ds.D(), len(ds.Features))
	}
	if err := checkFinite(ds.X, "input"); err != nil {
		return err
	}
	if len(ds.Domain) != n {
		return fmt.Errorf("dataset: %d points but %d domain entries", n, len(ds.Domain))
	}
	for p, g := range ds.Domain {
		if g < 0 || g >= len(ds.DomainNames) {
			return fmt.Errorf("dataset: row %d: domain index %d out of range [0, %d)", p, g, len(ds.DomainNames))
		}
	}
	for i, c := range ds.DomainSizes() {
		if c < 2 {
			return fmt.Errorf("dataset: domain %s has %d point(s); every domain needs at least 2", escape.String(ds.DomainNames[i], 0), c)
		}
	}
	if ds.Label != nil && ds.Target != nil {
		return fmt.Errorf("dataset: both class labels and real targets are set")
	}
	if ds.Label != nil {
		if len(ds.Label) != n {
			return fmt.Errorf("dataset: %d points but %d labels", n, len(ds.Label))
		}
		for p, y := range ds.Label {
			if y != NoLabel && (y < 0 || y >= len(ds.ClassNames)) {
				return fmt.Errorf("dataset: row %d: class index %d out of range [0, %d) (or NoLabel, -1, for a point without a label)", p, y, len(ds.ClassNames))
			}
		}
	}
	if ds.Target != nil {
		r, t := ds.Target.Dims()
		if r != n {
			return fmt.Errorf("dataset: %d points but %d target rows", n, r)
		}
		if ds.TargetNames != nil && len(ds.TargetNames) != t {
			return fmt.Errorf("dataset: %d target columns but %d target names", t, len(ds.TargetNames))
		}
		if err := checkFinite(ds.Target, "target"); err != nil {
			return err
		}
	}
	return nil
}

// RequireDomains returns an error unless the data set has at least min domains.
func (ds *Dataset) RequireDomains(min int) error {
	if ds == nil {
		return errNil
	}
	if len(ds.DomainNames) < min {
		return fmt.Errorf("dataset: %d domain(s); this method needs at least %d", len(ds.DomainNames), min)
	}
	return nil
}

// RequireSupervision returns an error unless the data set has real targets or
// class labels with at least 2 classes that occur (among the labelled
// points).
func (ds *Dataset) RequireSupervision() error {
	if ds == nil {
		return errNil
	}
	if ds.Target != nil {
		return nil
	}
	if ds.Label == nil {
		return fmt.Errorf("dataset: supervised method needs class labels or real targets")
	}
	k := 0
	for _, c := range ds.ClassSizes() {
		if c > 0 {
			k++
		}
	}
	if k < 2 {
		return fmt.Errorf("dataset: one class only (%d class(es) present); supervised DICA needs at least 2", k)
	}
	return nil
}

// Subset returns the data set restricted to the given rows, in that order.
// Domain and class names are kept (some may then have no points). With no
// rows the result has no points (and fails Validate). Subset has no error
// result: a row index out of [0, N), a nil Dataset or one whose lengths
// disagree give a data set with no points whose Validate error says what
// was wrong.
func (ds *Dataset) Subset(rows []int) *Dataset {
	if err := ds.lengths(); err != nil {
		return &Dataset{X: &mat.Dense{}, err: fmt.Errorf("dataset: Subset: %w", err)}
	}
	n := ds.N()
	for i, p := range rows {
		if p < 0 || p >= n {
			return &Dataset{X: &mat.Dense{}, err: fmt.Errorf("dataset: Subset: row index %d (at %d) out of range [0, %d)", p, i, n)}
		}
	}
	out := &Dataset{X: &mat.Dense{}, Features: ds.Features, DomainNames: ds.DomainNames,
		ClassNames: ds.ClassNames, TargetNames: ds.TargetNames}
	out.Domain = make([]int, len(rows))
	if ds.Label != nil {
		out.Label = make([]int, len(rows))
	}
	if len(rows) == 0 {
		return out // no points: Validate reports it
	}
	x := mat.NewDense(len(rows), ds.D(), nil)
	out.X = x
	if ds.Target != nil {
		_, t := ds.Target.Dims()
		out.Target = mat.NewDense(len(rows), t, nil)
	}
	for i, p := range rows {
		x.SetRow(i, ds.X.RawRowView(p))
		out.Domain[i] = ds.Domain[p]
		if ds.Label != nil {
			out.Label[i] = ds.Label[p]
		}
		if ds.Target != nil {
			out.Target.SetRow(i, ds.Target.RawRowView(p))
		}
	}
	return out
}

// Compact renumbers domains and classes so that only those with points
// remain, keeping their relative order. It is useful after Subset. Points
// without a label keep NoLabel. It does nothing to a nil Dataset, and
// leaves the domains (or the classes) unchanged when one of their indices
// is out of range, which Validate reports.
func (ds *Dataset) Compact() {
	if ds == nil {
		return
	}
	ds.Domain, ds.DomainNames = compact(ds.Domain, ds.DomainNames, false)
	if ds.Label != nil {
		ds.Label, ds.ClassNames = compact(ds.Label, ds.ClassNames, true)
	}
}

// compact renumbers the ids so that only the names they use remain; with
// none, NoLabel ids stay NoLabel.
func compact(ids []int, names []string, none bool) ([]int, []string) {
	used := make([]bool, len(names))
	for _, g := range ids {
		if none && g == NoLabel {
			continue
		}
		if g < 0 || g >= len(names) {
			return ids, names
		}
		used[g] = true
	}
	remap := make([]int, len(names))
	var out []string
	for i, u := range used {
		if u {
			remap[i] = len(out)
			out = append(out, names[i])
		}
	}
	nid := make([]int, len(ids))
	for p, g := range ids {
		if none && g == NoLabel {
			nid[p] = NoLabel
			continue
		}
		nid[p] = remap[g]
	}
	return nid, out
}

// lengths returns an error if ds is nil, was made by a failed Subset, or
// has lengths that disagree with its number of points; it costs no pass
// over the values.
func (ds *Dataset) lengths() error {
	if ds == nil {
		return errNil
	}
	if ds.err != nil {
		return ds.err
	}
	n, d := ds.N(), ds.D()
	if ds.Features != nil && len(ds.Features) != d {
		return fmt.Errorf("dataset: %d columns but %d feature names", d, len(ds.Features))
	}
	if len(ds.Domain) != n {
		return fmt.Errorf("dataset: %d points but %d domain entries", n, len(ds.Domain))
	}
	if ds.Label != nil && len(ds.Label) != n {
		return fmt.Errorf("dataset: %d points but %d labels", n, len(ds.Label))
	}
	if ds.Target != nil {
		r, t := ds.Target.Dims()
		if r != n {
			return fmt.Errorf("dataset: %d points but %d target rows", n, r)
		}
		if ds.TargetNames != nil && len(ds.TargetNames) != t {
			return fmt.Errorf("dataset: %d target columns but %d target names", t, len(ds.TargetNames))
		}
	}
	return nil
}

// checkFinite returns an error naming the first non-finite value of m by its
// row and column (0-based, as Go indexes the matrix).
func checkFinite(m *mat.Dense, what string) error {
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		for j, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dataset: %s row %d, column %d (0-based): value %v is not finite", what, i, j, v)
			}
		}
	}
	return nil
}

// Index numbers strings in order of first appearance. The zero value is
// ready to use; a nil *Index knows no strings.
type Index struct {
	ids   map[string]int
	names []string
}

// ID returns the number of s, adding it if it is new. It panics on a nil
// *Index, which has nowhere to add s (a programmer error).
func (ix *Index) ID(s string) int {
	if ix == nil {
		panic("dataset: ID of a nil *Index")
	}
	if id, ok := ix.ids[s]; ok {
		return id
	}
	if ix.ids == nil {
		ix.ids = make(map[string]int)
	}
	id := len(ix.names)
	ix.ids[s] = id
	ix.names = append(ix.names, s)
	return id
}

// Lookup returns the number of s and whether it is known.
func (ix *Index) Lookup(s string) (int, bool) {
	if ix == nil {
		return 0, false
	}
	id, ok := ix.ids[s]
	return id, ok
}

// Names returns the strings in order of their numbers.
func (ix *Index) Names() []string {
	if ix == nil {
		return nil
	}
	return append([]string(nil), ix.names...)
}

// Len returns how many strings are numbered.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return len(ix.names)
}
