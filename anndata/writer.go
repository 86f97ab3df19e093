package anndata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/atomicfile"
)

// DefaultChunkRows is the number of rows of a chunk the writer uses by
// default.
const DefaultChunkRows = 65536

// Uns is what a writer records of the model under uns["dica"]. Empty
// fields are left out.
type Uns struct {
	Method      string    // "dica", "udica", "kpca", "coir"
	Sigma       float64   // kernel bandwidth
	Rank        int       // rank of the feature map (landmarks or features)
	Eigenvalues []float64 // eigenvalues of the components, largest first
	Digest      string    // digest of the model file
	// Layout and Preprocessing are JSON texts (such as the roles of the
	// output's columns, and the preprocessing of the model's inputs),
	// written as the strings uns["dica"]["layout"] and
	// uns["dica"]["preprocessing"]. ReadDicaUns reads them back.
	Layout        string
	Preprocessing string
}

// ObsColumn is an extra column of obs, after domain, label and the
// targets: categorical (codes and the names they index, such as a
// predicted population) or numeric (float64, such as a confidence).
type ObsColumn struct {
	Name        string
	Categorical bool
}

// VarColumn is a column of strings of var: one value per channel (such as
// the preprocessing of each channel, "log1p").
type VarColumn struct {
	Name   string
	Values []string
}

// Cells is a block of cells for WriteCells: the rows of Block with their
// components (Block.Rows x WriterOptions.Components; nil without
// components), the names of Block's domain and label indexes (the lists may
// grow from block to block, as a dataset.Reader's do; the names given
// before must stay as they were), and the values of the extra obs columns,
// one ObsValues per WriterOptions.Obs, in order.
type Cells struct {
	Block            *dataset.Block
	Components       *mat.Dense
	Domains, Classes []string
	Obs              []ObsValues
}

// ObsValues are the values of an extra obs column for a block of cells:
// for a categorical column, Codes (one per cell) indexing Names (which may
// grow from block to block, as Domains do; the categories written are the
// names given with the last block); for a numeric column, Values (one per
// cell, finite).
type ObsValues struct {
	Codes  []int
	Names  []string
	Values []float64
}

// WriterOptions say what a Writer writes.
type WriterOptions struct {
	// Vars names the input channels, the columns of X (required).
	Vars []string
	// ObsmKey is the key of the components in obsm (default "X_dica").
	ObsmKey string
	// Components is the number of components, the columns of the z given
	// to WriteBlock; 0 writes no obsm array.
	Components int
	// Float32 stores X as float32 (numpy <f4) instead of float64. The
	// components are always float64.
	Float32 bool
	// ChunkRows is the number of rows of a chunk (default DefaultChunkRows).
	ChunkRows int
	// Compression is "zlib" (the default), "gzip" or "none"; Level is its
	// level, 1 (fastest, the default) to 9.
	Compression string
	Level       int
	// NumericLabel writes the label as a float64 column, each class name
	// parsed as a number, instead of a categorical column.
	NumericLabel bool
	// Targets names the real target columns of the blocks (obs columns of
	// float64); default "y1", "y2", ...
	Targets []string
	// Uns, if not nil, is written under uns["dica"].
	Uns *Uns
	// Sources names the source files of the cells. When it is set and the
	// blocks say where their rows came from (dataset.Block.HasOrigins), a
	// cell's name in obs_names is Sources[File[i]] + ":" + Event[i] (such
	// as "sample1:10" for row 10 of sample1.csv, rows counted from 1);
	// otherwise it is "domain:k", k counting the cells of each domain from
	// 0. All blocks must then say where their rows came from, or none.
	Sources []string
	// Obs lists extra obs columns, written after domain, label and the
	// targets; WriteCells takes their values.
	Obs []ObsColumn
	// VarColumns are string columns of var, after its index of channel
	// names; each has one value per channel of Vars.
	VarColumns []VarColumn
}

// Writer writes cells to an AnnData store as they stream: X (the input
// channels), obs (the cells' names, "source:row" or "domain:k" (see
// WriterOptions.Sources); the domain as a categorical column; the label as
// a categorical or numeric column; real targets as numeric columns; the
// extra columns of WriterOptions.Obs), var (the channel names and
// WriterOptions.VarColumns), obsm[ObsmKey] (the components) and
// uns["dica"]. Each chunk is compressed and written when its rows are
// complete, so memory does not grow with the number of cells; the
// categories of the categorical columns are written by Commit.
//
// The store is written into a temporary folder beside the destination
// (".NAME.tmp-*"), which Commit renames into place; an existing store at the
// destination is replaced only then (in one atomic step on Linux), and
// Abort removes the temporary folder.
type Writer struct {
	path, tmp string
	was       fs.FileInfo // the store at path when the writer started (nil: none)
	o         WriterOptions
	st        *zarr.Store

	x, obsm, names, domain *zarr.RowWriter
	label                  *zarr.RowWriter
	targets                []*zarr.RowWriter
	obs                    []*zarr.RowWriter // the extra obs columns
	obsNames               [][]string        // the categories of each (nil: numeric)
	started                bool
	labelled               bool
	origins                bool // the cells are named by Sources
	nt                     int

	domains, classes []string
	perDomain        []int64
	classNum         []float64 // NumericLabel: parsed class names (NaN: not parsed yet)
	rows             int64
	row              []float64
	codes            []int
	name             []byte
	cells            Cells // WriteBlock's
	done             bool
	err              error
}

// Create starts a store at path. path must not exist, or be a Zarr store
// (a folder with .zgroup) that this process may write, which Commit
// replaces; its folder must exist. The store's folder gets the mode of the
// store it replaces, or 0777 less the umask.
func Create(path string, o WriterOptions) (*Writer, error) {
	if len(o.Vars) == 0 {
		return nil, fmt.Errorf("anndata: WriterOptions.Vars is empty; name the input channels")
	}
	if o.Components < 0 {
		return nil, fmt.Errorf("anndata: WriterOptions.Components is %d", o.Components)
	}
	if o.ObsmKey == "" {
		o.ObsmKey = "X_dica"
	}
	if !validKey(o.ObsmKey) {
		return nil, fmt.Errorf("anndata: obsm key %q: want a name without '/' or a leading '.'", o.ObsmKey)
	}
	if o.ChunkRows == 0 {
		o.ChunkRows = DefaultChunkRows
	}
	if o.ChunkRows < 1 || o.ChunkRows > 1<<24 {
		return nil, fmt.Errorf("anndata: chunk rows %d out of range [1, %d]", o.ChunkRows, 1<<24)
	}
	if int64(o.ChunkRows)*int64(max(len(o.Vars), o.Components))*8 > zarr.DefaultMaxChunkBytes {
		return nil, fmt.Errorf("anndata: chunks of %d rows of %d columns exceed %d MiB; use fewer chunk rows", o.ChunkRows, max(len(o.Vars), o.Components), zarr.DefaultMaxChunkBytes>>20)
	}
	var comp *zarr.Codec
	level := o.Level
	if level == 0 {
		level = 1
	}
	if level < 1 || level > 9 {
		return nil, fmt.Errorf("anndata: compression level %d out of range [1, 9]", o.Level)
	}
	switch o.Compression {
	case "", "zlib", "gzip":
		id := o.Compression
		if id == "" {
			id = "zlib"
		}
		comp = &zarr.Codec{ID: id, Level: &level}
	case "none":
	default:
		return nil, fmt.Errorf("anndata: compression %q: want zlib, gzip or none", o.Compression)
	}
	if err := checkColumns(o); err != nil {
		return nil, err
	}
	if u := o.Uns; u != nil {
		for _, f := range []struct{ name, v string }{{"Layout", u.Layout}, {"Preprocessing", u.Preprocessing}} {
			if f.v != "" && !json.Valid([]byte(f.v)) {
				return nil, fmt.Errorf("anndata: Uns.%s is not valid JSON", f.name)
			}
		}
	}
	was, err := checkDest(path)
	if err != nil {
		return nil, err
	}
	tmp, err := atomicfile.TempDir(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w := &Writer{path: path, tmp: tmp, was: was, o: o, st: zarr.NewStore(tmp, comp)}
	xt := zarr.DType{Kind: zarr.Float, Size: 8}
	if o.Float32 {
		xt.Size = 4
	}
	arr := zarr.EncodingAttrs("array", "0.2.0")
	w.x = w.st.NewRowWriter("X", xt, len(o.Vars), o.ChunkRows, arr)
	if o.Components > 0 {
		w.obsm = w.st.NewRowWriter("obsm/"+o.ObsmKey, zarr.DType{Kind: zarr.Float, Size: 8}, o.Components, o.ChunkRows, arr)
	}
	w.names = w.st.NewRowWriter("obs/_index", zarr.DType{Kind: zarr.Object}, 0, o.ChunkRows, zarr.EncodingAttrs("string-array", "0.2.0"))
	w.domain = w.st.NewRowWriter("obs/domain/codes", zarr.DType{Kind: zarr.Int, Size: 4}, 0, o.ChunkRows, arr)
	for _, c := range o.Obs {
		if c.Categorical {
			w.obs = append(w.obs, w.st.NewRowWriter("obs/"+c.Name+"/codes", zarr.DType{Kind: zarr.Int, Size: 4}, 0, o.ChunkRows, arr))
		} else {
			w.obs = append(w.obs, w.st.NewRowWriter("obs/"+c.Name, zarr.DType{Kind: zarr.Float, Size: 8}, 0, o.ChunkRows, arr))
		}
	}
	w.obsNames = make([][]string, len(o.Obs))
	w.o.Obs, w.o.VarColumns, w.o.Sources = slices.Clone(o.Obs), slices.Clone(o.VarColumns), slices.Clone(o.Sources)
	return w, nil
}

// checkColumns checks the names of the extra obs and var columns: keys of
// the store, each once, not those the writer takes (domain, label,
// _index), and one value per channel of each var column.
func checkColumns(o WriterOptions) error {
	seen := map[string]bool{"domain": true, "label": true, "_index": true}
	for _, c := range o.Obs {
		if !validKey(c.Name) {
			return fmt.Errorf("anndata: obs column %q: want a name without '/' or a leading '.'", c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("anndata: obs column %q: the name is taken (domain, label and _index are the writer's)", c.Name)
		}
		seen[c.Name] = true
	}
	for _, c := range o.Obs {
		if slices.Contains(o.Targets, c.Name) {
			return fmt.Errorf("anndata: obs column %q is also a target", c.Name)
		}
	}
	seen = map[string]bool{"_index": true}
	for _, c := range o.VarColumns {
		if !validKey(c.Name) {
			return fmt.Errorf("anndata: var column %q: want a name without '/' or a leading '.'", c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("anndata: var column %q: the name is taken (_index is the writer's)", c.Name)
		}
		seen[c.Name] = true
		if len(c.Values) != len(o.Vars) {
			return fmt.Errorf("anndata: var column %q has %d values for %d channels", c.Name, len(c.Values), len(o.Vars))
		}
	}
	return nil
}

func validKey(k string) bool {
	if k == "" || k[0] == '.' {
		return false
	}
	for _, c := range k {
		if c == '/' || c == '\\' || c == 0 {
			return false
		}
	}
	return true
}

// errNoWriter is the error of the methods of a Writer not made by Create.
var errNoWriter = errors.New("anndata: Writer not created by Create")

// Path returns the destination ("" for a nil Writer).
func (w *Writer) Path() string {
	if w == nil {
		return ""
	}
	return w.path
}

// WriteBlock appends the rows of b: X from b's inputs, z (b.Rows x
// Components) to obsm, the domain and label names from domains[b.Domain[i]]
// and classes[b.Label[i]] (the lists may grow from block to block, as a
// dataset.Reader's do) and b's targets. Values must be finite. It is
// WriteCells without extra obs columns.
func (w *Writer) WriteBlock(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	if w == nil || w.st == nil {
		return errNoWriter
	}
	w.cells = Cells{Block: b, Components: z, Domains: domains, Classes: classes}
	err := w.WriteCells(&w.cells)
	w.cells = Cells{}
	return err
}

// WriteCells appends a block of cells (see Cells): X from the block's
// inputs, the components to obsm, the cells' names, the domain, label,
// targets and extra obs columns. The whole block is checked before any of
// it is written: shapes, finite values, indexes within their names, the
// origins of the rows within Sources. After an error the writer writes
// nothing more, and Commit returns the error.
func (w *Writer) WriteCells(c *Cells) error {
	if w == nil || w.st == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("anndata: %s: write after Commit or Abort", w.path)
	}
	if c == nil {
		w.err = fmt.Errorf("anndata: nil cells")
	} else {
		w.err = w.writeCells(c)
	}
	if w.err == nil {
		w.err = w.st.Err()
	}
	return w.err
}

// writeCells checks the cells, then appends them to the store's arrays. An
// error leaves the writer failed (WriteCells keeps it).
func (w *Writer) writeCells(c *Cells) error {
	b, z := c.Block, c.Components
	if b == nil {
		return fmt.Errorf("anndata: nil block")
	}
	if len(c.Obs) != len(w.o.Obs) {
		return fmt.Errorf("anndata: %d obs columns of values; the store has %d (WriterOptions.Obs): give their values to WriteCells", len(c.Obs), len(w.o.Obs))
	}
	if b.Rows == 0 {
		return nil
	}
	if err := w.checkShape(b, z); err != nil {
		return err
	}
	if err := w.checkObs(b.Rows, c.Obs); err != nil {
		return err
	}
	if !w.started {
		if err := w.start(b); err != nil {
			return err
		}
	}
	if (b.Label != nil) != w.labelled || b.T != w.nt {
		return fmt.Errorf("anndata: a block with labels %v and %d targets after blocks with labels %v and %d targets", b.Label != nil, b.T, w.labelled, w.nt)
	}
	if w.labelled && len(b.Label) < b.Rows || len(b.Target) < b.Rows*b.T {
		return fmt.Errorf("anndata: block of %d rows with %d labels and %d target values", b.Rows, len(b.Label), len(b.Target))
	}
	if w.o.Sources != nil && b.HasOrigins() != w.origins {
		return fmt.Errorf("anndata: a block with origins %v (Block.File and Event) after blocks with origins %v; with Sources, all blocks say where their rows came from or none do", b.HasOrigins(), w.origins)
	}
	if err := w.checkRows(b, z, c.Domains, c.Classes); err != nil {
		return err
	}
	if err := w.growNames(c.Domains, c.Classes, c.Obs); err != nil {
		return err
	}
	w.appendBlock(b, z)
	if w.labelled {
		if err := w.appendLabels(b); err != nil {
			return err
		}
	}
	w.appendTargets(b)
	w.appendObs(c.Obs, b.Rows)
	w.rows += int64(b.Rows)
	return nil
}

// checkObs checks the values of the extra obs columns of n cells: the
// kind of each column, one value per cell, codes within their names and
// finite numbers.
func (w *Writer) checkObs(n int, obs []ObsValues) error {
	for k, col := range w.o.Obs {
		v := &obs[k]
		if col.Categorical {
			if v.Values != nil || len(v.Codes) != n {
				return fmt.Errorf("anndata: obs column %q is categorical: want %d Codes (and Names), have %d codes and %d values", col.Name, n, len(v.Codes), len(v.Values))
			}
			for i, g := range v.Codes {
				if g < 0 || g >= len(v.Names) {
					return fmt.Errorf("anndata: cell %d (0-based), obs column %q: code %d out of range of %d names", w.rows+int64(i), col.Name, g, len(v.Names))
				}
			}
			continue
		}
		if v.Codes != nil || v.Names != nil || len(v.Values) != n {
			return fmt.Errorf("anndata: obs column %q is numeric: want %d Values, have %d values and %d codes", col.Name, n, len(v.Values), len(v.Codes))
		}
		for i, x := range v.Values {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("anndata: cell %d (0-based), obs column %q: value %v is not finite", w.rows+int64(i), col.Name, x)
			}
		}
	}
	return nil
}

// checkShape checks that the block has the store's channels and that z has
// a row of Components for each of its rows.
func (w *Writer) checkShape(b *dataset.Block, z *mat.Dense) error {
	d := len(w.o.Vars)
	if b.D != d || len(b.X) < b.Rows*d || len(b.Domain) < b.Rows {
		return fmt.Errorf("anndata: block of %d rows of %d inputs (%d values, %d domains); the store has %d channels", b.Rows, b.D, len(b.X), len(b.Domain), d)
	}
	if k := w.o.Components; k > 0 {
		if z == nil {
			return fmt.Errorf("anndata: no components for a block of %d rows", b.Rows)
		}
		if r, c := z.Dims(); r != b.Rows || c != k {
			return fmt.Errorf("anndata: components %d x %d for a block of %d rows; want %d columns", r, c, b.Rows, k)
		}
	}
	return nil
}

// start fixes, from the first block, whether the cells have labels and how
// many targets they have, and starts the arrays of those obs columns.
func (w *Writer) start(b *dataset.Block) error {
	w.started = true
	w.labelled = b.Label != nil
	w.nt = b.T
	w.origins = w.o.Sources != nil && b.HasOrigins()
	if w.labelled {
		if w.o.NumericLabel {
			w.label = w.st.NewRowWriter("obs/label", zarr.DType{Kind: zarr.Float, Size: 8}, 0, w.o.ChunkRows, zarr.EncodingAttrs("array", "0.2.0"))
		} else {
			w.label = w.st.NewRowWriter("obs/label/codes", zarr.DType{Kind: zarr.Int, Size: 4}, 0, w.o.ChunkRows, zarr.EncodingAttrs("array", "0.2.0"))
		}
	}
	if w.o.Targets != nil && len(w.o.Targets) != b.T {
		return fmt.Errorf("anndata: %d target names for blocks of %d targets", len(w.o.Targets), b.T)
	}
	for j := 0; j < b.T; j++ {
		for _, c := range w.o.Obs {
			if c.Name == w.targetName(j) {
				return fmt.Errorf("anndata: obs column %q is also a target", c.Name)
			}
		}
	}
	for j := 0; j < b.T; j++ {
		w.targets = append(w.targets, w.st.NewRowWriter("obs/"+w.targetName(j), zarr.DType{Kind: zarr.Float, Size: 8}, 0, w.o.ChunkRows, zarr.EncodingAttrs("array", "0.2.0")))
	}
	return nil
}

// checkRows checks every cell of the block: finite inputs (within the
// range of float32 when X is stored so), components and targets, and
// domain and class indexes within the names given.
func (w *Writer) checkRows(b *dataset.Block, z *mat.Dense, domains, classes []string) error {
	d, k := len(w.o.Vars), w.o.Components
	for i := 0; i < b.Rows; i++ {
		row := w.rows + int64(i)
		for j, v := range b.X[i*d : (i+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("anndata: cell %d (0-based), channel %q: value %v is not finite", row, w.o.Vars[j], v)
			}
			if w.o.Float32 && math.Abs(v) > math.MaxFloat32 {
				return fmt.Errorf("anndata: cell %d (0-based), channel %q: value %v is beyond the range of float32; store X as float64", row, w.o.Vars[j], v)
			}
		}
		if k > 0 {
			for j, v := range z.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("anndata: cell %d (0-based), component %d: value %v is not finite", row, j+1, v)
				}
			}
		}
		for j, v := range b.Target[i*b.T : (i+1)*b.T] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("anndata: cell %d (0-based), target %q: value %v is not finite", row, w.targetName(j), v)
			}
		}
		if g := b.Domain[i]; g < 0 || g >= len(domains) {
			return fmt.Errorf("anndata: cell %d (0-based): domain index %d out of range of %d domain names", row, g, len(domains))
		}
		if w.labelled {
			if c := b.Label[i]; c < dataset.NoLabel || c >= len(classes) {
				return fmt.Errorf("anndata: cell %d (0-based): class index %d out of range of %d class names", row, c, len(classes))
			}
		}
		if w.origins {
			if f := b.File[i]; f < 0 || f >= len(w.o.Sources) {
				return fmt.Errorf("anndata: cell %d (0-based): file index %d out of range of %d Sources", row, f, len(w.o.Sources))
			}
			if e := b.Event[i]; e < 1 {
				return fmt.Errorf("anndata: cell %d (0-based): row number %d in %s; rows count from 1", row, e, w.o.Sources[b.File[i]])
			}
		}
	}
	return nil
}

// growNames takes the domain and class names of the block and the names of
// its categorical obs columns, which must extend those of the blocks before.
func (w *Writer) growNames(domains, classes []string, obs []ObsValues) error {
	for k, col := range w.o.Obs {
		if !col.Categorical {
			continue
		}
		old, v := w.obsNames[k], obs[k].Names
		if len(v) < len(old) || !slices.Equal(v[:len(old)], old) {
			return fmt.Errorf("anndata: the names of obs column %q changed between blocks (they may only grow)", col.Name)
		}
		w.obsNames[k] = append(old, v[len(old):]...)
	}
	if len(domains) < len(w.domains) || !slices.Equal(domains[:len(w.domains)], w.domains) {
		return fmt.Errorf("anndata: the domain names changed between blocks (they may only grow)")
	}
	w.domains = slices.Clone(domains)
	if w.labelled {
		if len(classes) < len(w.classes) || !slices.Equal(classes[:len(w.classes)], w.classes) {
			return fmt.Errorf("anndata: the class names changed between blocks (they may only grow)")
		}
		w.classes = slices.Clone(classes)
	}
	for len(w.perDomain) < len(w.domains) {
		w.perDomain = append(w.perDomain, 0)
	}
	return nil
}

// appendBlock appends the rows of a checked block to X, obsm, the cells'
// names and the domain codes.
func (w *Writer) appendBlock(b *dataset.Block, z *mat.Dense) {
	w.x.Floats(b.X[:b.Rows*len(w.o.Vars)])
	if w.o.Components > 0 {
		for i := 0; i < b.Rows; i++ {
			w.obsm.Floats(z.RawRowView(i))
		}
	}
	name := w.name
	for i := 0; i < b.Rows; i++ {
		g := b.Domain[i]
		if w.origins {
			name = strconv.AppendInt(append(append(name[:0], w.o.Sources[b.File[i]]...), ':'), b.Event[i], 10)
		} else {
			name = strconv.AppendInt(append(append(name[:0], w.domains[g]...), ':'), w.perDomain[g], 10)
		}
		w.perDomain[g]++
		w.names.String(string(name))
	}
	w.name = name
	w.domain.Ints(b.Domain[:b.Rows])
}

// appendLabels appends the labels of a checked block: their codes, or with
// NumericLabel their class names as numbers.
func (w *Writer) appendLabels(b *dataset.Block) error {
	if !w.o.NumericLabel {
		w.label.Ints(b.Label[:b.Rows])
		return nil
	}
	for len(w.classNum) < len(w.classes) {
		c := w.classes[len(w.classNum)]
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("anndata: class %q is not a finite number; write the label as categorical", c)
		}
		w.classNum = append(w.classNum, v)
	}
	w.row = w.row[:0]
	for _, c := range b.Label[:b.Rows] {
		if c < 0 {
			w.row = append(w.row, math.NaN()) // an unlabelled cell
			continue
		}
		w.row = append(w.row, w.classNum[c])
	}
	w.label.Floats(w.row)
	return nil
}

// appendTargets appends each target column of a checked block.
func (w *Writer) appendTargets(b *dataset.Block) {
	for j, tw := range w.targets {
		w.row = w.row[:0]
		for i := 0; i < b.Rows; i++ {
			w.row = append(w.row, b.Target[i*b.T+j])
		}
		tw.Floats(w.row)
	}
}

// appendObs appends the values of the extra obs columns of n checked
// cells.
func (w *Writer) appendObs(obs []ObsValues, n int) {
	for k, col := range w.o.Obs {
		if col.Categorical {
			w.obs[k].Ints(obs[k].Codes[:n])
		} else {
			w.obs[k].Floats(obs[k].Values[:n])
		}
	}
}

func (w *Writer) targetName(j int) string {
	if w.o.Targets != nil {
		return w.o.Targets[j]
	}
	return "y" + strconv.Itoa(j+1)
}

// Rows returns the number of cells written (0 for a nil Writer).
func (w *Writer) Rows() int64 {
	if w == nil {
		return 0
	}
	return w.rows
}

// Commit completes the store (the last chunks, the categories, var, uns
// and the metadata), flushes it to disk and renames it into place,
// replacing a previous store there. After an error the destination is
// unchanged. Commit publishes only over the store that was at the
// destination when the writer was created, unchanged at its top, or over
// nothing: if a file or folder appeared there, or the store was replaced
// or changed meanwhile, Commit leaves it as it is, keeps the new store in
// its temporary folder and returns an error that names both.
func (w *Writer) Commit() error {
	if w == nil || w.st == nil {
		return errNoWriter
	}
	if w.done {
		return fmt.Errorf("anndata: %s: already committed or aborted", w.path)
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	err := w.finish()
	if cerr := w.st.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDirs(w.tmp)
	}
	if err == nil {
		err = replaceDir(w.tmp, w.path, w.was)
	}
	var (
		changed *changedError
		left    *leftError
	)
	switch {
	case err == nil:
	case errors.As(err, &changed):
		atomicfile.Release(w.tmp) // kept for the user
		w.done = true
		return fmt.Errorf("anndata: %w", err)
	case errors.As(err, &left):
		w.done = true
	default:
		w.Abort()
		return fmt.Errorf("anndata: %s: %w", w.path, err)
	}
	atomicfile.Release(w.tmp)
	w.done = true
	if err != nil {
		return fmt.Errorf("anndata: %s: %w", w.path, err)
	}
	return nil
}

// finish writes what remains of the store: the groups, the last chunks
// of X and obsm, obs, var and uns.
func (w *Writer) finish() error {
	st := w.st
	dict := zarr.EncodingAttrs("dict", "0.1.0")
	if err := st.Group("", zarr.EncodingAttrs("anndata", "0.1.0")); err != nil {
		return err
	}
	for _, g := range []string{"layers", "obsm", "obsp", "varm", "varp", "uns"} {
		if err := st.Group(g, dict); err != nil {
			return err
		}
	}
	// X and obsm.
	if err := w.x.Close(); err != nil {
		return err
	}
	if w.obsm != nil {
		if err := w.obsm.Close(); err != nil {
			return err
		}
	}
	if err := w.finishObs(); err != nil {
		return err
	}
	// var.
	vr := zarr.EncodingAttrs("dataframe", "0.2.0")
	vr["_index"] = "_index"
	order := []string{}
	for _, c := range w.o.VarColumns {
		order = append(order, c.Name)
	}
	vr["column-order"] = order
	if err := st.Group("var", vr); err != nil {
		return err
	}
	if err := st.Strings("var/_index", w.o.Vars, zarr.EncodingAttrs("string-array", "0.2.0")); err != nil {
		return err
	}
	for _, c := range w.o.VarColumns {
		if err := st.Strings("var/"+c.Name, c.Values, zarr.EncodingAttrs("string-array", "0.2.0")); err != nil {
			return err
		}
	}
	if w.o.Uns != nil {
		return w.writeUns(w.o.Uns)
	}
	return nil
}

// finishObs completes the obs dataframe: the cells' names, the domain, the
// label, the targets and the extra columns, in that column order.
func (w *Writer) finishObs() error {
	order := []string{"domain"}
	if err := w.names.Close(); err != nil {
		return err
	}
	if err := w.categorical("obs/domain", w.domain, w.domains); err != nil {
		return err
	}
	if w.labelled {
		order = append(order, "label")
		if w.o.NumericLabel {
			if err := w.label.Close(); err != nil {
				return err
			}
		} else if err := w.categorical("obs/label", w.label, w.classes); err != nil {
			return err
		}
	}
	for j, tw := range w.targets {
		order = append(order, w.targetName(j))
		if err := tw.Close(); err != nil {
			return err
		}
	}
	for k, col := range w.o.Obs {
		order = append(order, col.Name)
		if col.Categorical {
			if err := w.categorical("obs/"+col.Name, w.obs[k], w.obsNames[k]); err != nil {
				return err
			}
		} else if err := w.obs[k].Close(); err != nil {
			return err
		}
	}
	obs := zarr.EncodingAttrs("dataframe", "0.2.0")
	obs["_index"] = "_index"
	obs["column-order"] = order
	return w.st.Group("obs", obs)
}

// writeUns writes uns["dica"]: the fields of u that are set.
func (w *Writer) writeUns(u *Uns) error {
	st := w.st
	if err := st.Group("uns/dica", zarr.EncodingAttrs("dict", "0.1.0")); err != nil {
		return err
	}
	str := zarr.EncodingAttrs("string", "0.2.0")
	num := zarr.EncodingAttrs("numeric-scalar", "0.2.0")
	if u.Method != "" {
		if err := st.Scalar("uns/dica/method", u.Method, str); err != nil {
			return err
		}
	}
	if u.Sigma != 0 {
		if err := st.Scalar("uns/dica/sigma", u.Sigma, num); err != nil {
			return err
		}
	}
	if u.Rank != 0 {
		if err := st.Scalar("uns/dica/rank", int64(u.Rank), num); err != nil {
			return err
		}
	}
	if u.Eigenvalues != nil {
		if err := st.Float64s("uns/dica/eigenvalues", u.Eigenvalues, zarr.EncodingAttrs("array", "0.2.0")); err != nil {
			return err
		}
	}
	if u.Digest != "" {
		if err := st.Scalar("uns/dica/digest", u.Digest, str); err != nil {
			return err
		}
	}
	if u.Layout != "" {
		if err := st.Scalar("uns/dica/layout", u.Layout, str); err != nil {
			return err
		}
	}
	if u.Preprocessing != "" {
		if err := st.Scalar("uns/dica/preprocessing", u.Preprocessing, str); err != nil {
			return err
		}
	}
	return nil
}

// categorical completes a categorical column: its codes and categories.
func (w *Writer) categorical(name string, codes *zarr.RowWriter, cats []string) error {
	if err := codes.Close(); err != nil {
		return err
	}
	attrs := zarr.EncodingAttrs("categorical", "0.2.0")
	attrs["ordered"] = false
	if err := w.st.Group(name, attrs); err != nil {
		return err
	}
	return w.st.Strings(name+"/categories", cats, zarr.EncodingAttrs("string-array", "0.2.0"))
}

// Abort discards the store being written; the destination is unchanged. It
// does nothing after Commit or a previous Abort, so it can be deferred.
func (w *Writer) Abort() {
	if w == nil || w.st == nil || w.done {
		return
	}
	w.done = true
	w.st.Close()
	os.RemoveAll(w.tmp)
	atomicfile.Release(w.tmp)
}
