package anndata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dicalab/dica/anndata/internal/zarr"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
)

// Options say how to read a store. The zero value reads every column of X
// as a feature, all cells as one domain named after the store, without
// labels.
type Options struct {
	// Features selects columns of X by their var name, in this order
	// (default: all, in the store's order).
	Features []string
	// Domain names the obs column holding each cell's domain, as
	// "obs:COLUMN" or "COLUMN" (categorical, string or integer). Empty
	// means one domain named after the store (its base name without
	// extension).
	Domain string
	// Label names the obs column holding class labels (categorical, string,
	// integer or boolean; numbers are compared as their decimal text).
	Label string
	// Target names numeric obs columns read as real targets (regression).
	// A data set has labels or targets, not both.
	Target []string
	// LabelsIgnore lists label values whose cells are left out.
	LabelsIgnore []string
	// Layer reads the matrix layers/NAME ("layers/NAME" or "NAME") instead
	// of X.
	Layer string
	// Transform, if not nil, is applied to the features of each row in
	// place after reading (log1p, asinh). Its results must be finite.
	Transform func(row []float64)
	// MaxChunkBytes bounds the decoded size of one chunk of any array
	// (default 64 MiB): a store with larger chunks is refused before
	// anything is allocated, with a message saying how to rechunk it.
	MaxChunkBytes int64
}

// Source reads an AnnData store in the Zarr v2 format as a dataset.Source:
// X (dense, chunked by rows; a sparse X is an error) streamed chunk by
// chunk, the domain, label and targets from obs columns. It implements
// dataset.Sizer. It is safe to Open several passes, even concurrently.
type Source struct {
	fsys   fs.FS
	path   string
	lim    zarr.Limits
	x      *zarr.Array
	xname  string
	n      int64
	feat   []int // column of X of each feature
	schema dataset.Schema

	domain  *obsCol // nil: one domain
	label   *obsCol
	targets []*obsCol
	ignore  map[string]bool
	domName string
	kept    int64
	tr      func([]float64)
	warns   []string
}

// obsCol is an obs column: codes and categories (categorical), values
// (string or numeric arrays) and a mask (nullable types).
type obsCol struct {
	name   string // for messages: obs/COLUMN
	values *zarr.Array
	cats   []string
	mask   *zarr.Array
}

// NewSource opens the AnnData store at path (a folder) and checks its
// metadata: X dense of two dimensions, the obs columns named by the options
// present with one value per cell, the features present in var.
func NewSource(path string, o Options) (*Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() || !zarr.IsGroup(os.DirFS(path), ".") {
		if up := filepath.Dir(path); zarr.IsGroup(os.DirFS(up), ".") {
			return nil, fmt.Errorf("%s: not an AnnData store, but a part of one: give the store's folder %s", path, up)
		}
		return nil, fmt.Errorf("%s: not an AnnData Zarr store (a folder with .zgroup); h5ad files are not read: convert with anndata.read_h5ad(path).write_zarr(path.zarr)", path)
	}
	return NewSourceFS(os.DirFS(path), path, o)
}

// NewSourceFS is NewSource of the store at the root of fsys; name names it
// in messages, and its base name without extension is the domain when
// Options.Domain is empty.
func NewSourceFS(fsys fs.FS, name string, o Options) (*Source, error) {
	path := name
	if fsys == nil {
		return nil, errors.New("anndata: nil file system")
	}
	s := &Source{fsys: fsys, path: path, lim: zarr.Limits{MaxChunkBytes: o.MaxChunkBytes}, tr: o.Transform}
	if o.MaxChunkBytes < 0 {
		return nil, fmt.Errorf("anndata: MaxChunkBytes %d is negative", o.MaxChunkBytes)
	}
	if !zarr.IsGroup(fsys, ".") {
		return nil, fmt.Errorf("%s: not an AnnData Zarr store (no .zgroup)", path)
	}
	attrs, err := zarr.Attrs(fsys, ".")
	if err != nil {
		return nil, err
	}
	if t := zarr.AttrString(attrs, "encoding-type"); t != "" && t != "anndata" {
		return nil, fmt.Errorf("%s: encoding-type %q; not an AnnData store", path, t)
	}
	if err := s.openX(o.Layer); err != nil {
		return nil, err
	}
	vars, err := s.index("var", s.x.Shape[1])
	if err != nil {
		return nil, err
	}
	if err := s.selectFeatures(vars, o.Features); err != nil {
		return nil, err
	}
	// A chunk row of X decoded for the features must fit too.
	if s.x.Chunks[0]*int64(len(s.feat))*8 > s.lim.Max() {
		return nil, fmt.Errorf("%s: %s: chunks of %d rows take %d MiB decoded for %d features, over the limit of %d MiB; rechunk with fewer rows (a.write_zarr(path, chunks=(10000, None)) in Python) or raise the limit", path, s.xname, s.x.Chunks[0], s.x.Chunks[0]*int64(len(s.feat))*8>>20, len(s.feat), s.lim.Max()>>20)
	}
	if err := s.openObs(o, name); err != nil {
		return nil, err
	}
	if err := s.checkChunks(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkChunks looks for chunks missing from the store. The Zarr format
// reads a missing chunk as the array's fill value, which for cells' inputs
// would be values nobody measured: a chunk of X (or of the layer read)
// that is missing is an error; one of an obs column is read as the fill
// value, with a warning (Warnings).
func (s *Source) checkChunks() error {
	missing, first, err := s.x.MissingChunks()
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if missing > 0 {
		return fmt.Errorf("%s: %s: %d of its chunks are missing, the first %s (cells %s); the store is incomplete: copy it again, or write it again from its source",
			s.path, s.xname, missing, first, s.chunkRows(s.x, first))
	}
	cols := append([]*obsCol{s.domain, s.label}, s.targets...)
	for _, c := range cols {
		if c == nil {
			continue
		}
		for _, a := range []*zarr.Array{c.values, c.mask} {
			if a == nil {
				continue
			}
			missing, first, err := a.MissingChunks()
			if err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
			if missing > 0 {
				s.warns = append(s.warns, fmt.Sprintf("%s: %s: %d chunk(s) missing, the first %s (cells %s), read as the fill value %v, as the Zarr format says; is the store complete?",
					s.path, a.Name, missing, first, s.chunkRows(a, first), a.Fill))
			}
		}
	}
	return nil
}

// chunkRows returns the range of rows of the chunk of a with key k, as
// "lo to hi" (0-based).
func (s *Source) chunkRows(a *zarr.Array, k string) string {
	i, _ := strconv.ParseInt(strings.FieldsFunc(k, func(r rune) bool { return r == '.' || r == '/' })[0], 10, 64)
	lo := i * a.Chunks[0]
	return fmt.Sprintf("%d to %d", lo, min(lo+a.Chunks[0], a.Shape[0])-1)
}

// Warnings returns what reading the store's metadata found that the user
// should know: obs columns with missing chunks (read as the fill value).
func (s *Source) Warnings() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.warns)
}

// PassBytes returns an upper bound of the memory a pass holds beyond the
// blocks it fills, for a memory budget: for X (or the layer read), a
// chunk as stored and decoded (zarr ReadBytes: about 3 decoded chunks
// when compressed) and the rows of a chunk of the features as float64
// (chunk rows x features x 8 bytes); for each obs column read, one chunk
// of its values (and of its mask) as stored and decoded. With the default
// Options.MaxChunkBytes, X's part is at most about 256 MiB.
func (s *Source) PassBytes() int64 {
	if s == nil || s.x == nil {
		return 0
	}
	n := s.x.ReadBytes(s.lim) + s.x.Chunks[0]*int64(len(s.feat))*8
	for _, c := range append([]*obsCol{s.domain, s.label}, s.targets...) {
		if c == nil {
			continue
		}
		n += c.values.ReadBytes(s.lim) + 8*int64(len(c.cats))
		if c.mask != nil {
			n += c.mask.ReadBytes(s.lim)
		}
	}
	return n
}

// openX opens the matrix read as the cells' inputs, X or the layer named,
// which must be a dense numeric array of two dimensions; a sparse matrix
// is refused with a message saying how to store it dense.
func (s *Source) openX(layer string) error {
	s.xname = "X"
	if layer != "" && layer != "X" {
		s.xname = "layers/" + strings.TrimPrefix(layer, "layers/")
	}
	xdir := s.xname
	if !zarr.IsArray(s.fsys, xdir) {
		if zarr.IsGroup(s.fsys, xdir) {
			xa, _ := zarr.Attrs(s.fsys, xdir)
			t := zarr.AttrString(xa, "encoding-type")
			if strings.Contains(t, "csr") || strings.Contains(t, "csc") || strings.Contains(t, "sparse") {
				return fmt.Errorf("%s: %s is a sparse matrix (%s); dica reads a dense matrix: in Python, a.X = a.X.toarray() before a.write_zarr(...)", s.path, s.xname, t)
			}
			return fmt.Errorf("%s: %s is a group (encoding-type %q), not a dense array", s.path, s.xname, t)
		}
		return fmt.Errorf("%s: no array %s", s.path, s.xname)
	}
	var err error
	if s.x, err = zarr.OpenArray(s.fsys, xdir, s.xname, s.lim); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if len(s.x.Shape) != 2 || !s.x.DType.Numeric() {
		return fmt.Errorf("%s: %s has shape %v and type %s; want a 2-dimensional numeric array", s.path, s.xname, s.x.Shape, s.x.DType)
	}
	s.n = s.x.Shape[0]
	return nil
}

// selectFeatures chooses the columns of X read as features: all, in the
// store's order, when features is empty; otherwise those features name
// in var (vars), in the order given. A name var holds twice is refused.
func (s *Source) selectFeatures(vars, features []string) error {
	if len(features) == 0 {
		s.feat = make([]int, len(vars))
		for j := range s.feat {
			s.feat[j] = j
		}
		s.schema.Features = vars
		return nil
	}
	pos := map[string]int{}
	for j, v := range vars {
		if _, dup := pos[v]; dup {
			pos[v] = -1
		} else {
			pos[v] = j
		}
	}
	for _, f := range features {
		j, ok := pos[f]
		if !ok {
			return fmt.Errorf("%s: no variable %s in var (variables: %s)", s.path, escape.String(f, 0), listNames(vars))
		}
		if j < 0 {
			return fmt.Errorf("%s: the variable %s appears more than once in var; rename it", s.path, escape.String(f, 0))
		}
		s.feat = append(s.feat, j)
		s.schema.Features = append(s.schema.Features, f)
	}
	return nil
}

// openObs opens the obs columns the options name (domain, label, targets),
// or names the one domain after the store (name), and counts the cells a
// pass keeps when labels are ignored.
func (s *Source) openObs(o Options, name string) error {
	if o.Label != "" && len(o.Target) > 0 {
		return fmt.Errorf("anndata: both a label and targets; a data set has one or the other")
	}
	var err error
	if o.Domain != "" {
		if s.domain, err = s.obsColumn(o.Domain, false); err != nil {
			return err
		}
	} else {
		s.domName = dataset.DomainName(name)
	}
	if o.Label != "" {
		if s.label, err = s.obsColumn(o.Label, false); err != nil {
			return err
		}
		s.schema.Labelled = true
	}
	for _, t := range o.Target {
		c, err := s.obsColumn(t, true)
		if err != nil {
			return err
		}
		s.targets = append(s.targets, c)
		s.schema.Targets = append(s.schema.Targets, strings.TrimPrefix(t, "obs:"))
	}
	if len(o.LabelsIgnore) > 0 {
		if s.label == nil {
			return fmt.Errorf("anndata: labels to ignore but no label column")
		}
		s.ignore = map[string]bool{}
		for _, v := range o.LabelsIgnore {
			s.ignore[v] = true
		}
	}
	s.kept = s.n
	if s.ignore != nil {
		if s.kept, err = s.countKept(); err != nil {
			return err
		}
	}
	return nil
}

func listNames(v []string) string {
	const show = 20
	var sb strings.Builder
	for i, s := range v {
		if i == show {
			fmt.Fprintf(&sb, ", ... (%d more)", len(v)-show)
			break
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(escape.String(s, 40))
	}
	return sb.String()
}

// index reads the index of the dataframe group (var or obs), which must
// have n entries.
func (s *Source) index(group string, n int64) ([]string, error) {
	dir := group
	attrs, err := zarr.Attrs(s.fsys, dir)
	if err != nil {
		return nil, err
	}
	col := zarr.AttrString(attrs, "_index")
	if col == "" {
		col = "_index"
	}
	a, err := zarr.OpenArray(s.fsys, pathpkg.Join(dir, col), group+"/"+col, s.lim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	if len(a.Shape) != 1 || a.Shape[0] != n {
		return nil, fmt.Errorf("%s: %s/%s has shape %v; want [%d]", s.path, group, col, a.Shape, n)
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("%s: %s has %d entries; at most %d are read", s.path, group, n, 1<<20)
	}
	return readAll(a, s.lim, func(c *zarr.Chunk, i int) (string, error) {
		if c.Strings != nil {
			return c.Strings[i], nil
		}
		return formatNumber(c, i)
	})
}

// readAll reads every element of a 1-d array.
func readAll[T any](a *zarr.Array, lim zarr.Limits, get func(c *zarr.Chunk, i int) (T, error)) ([]T, error) {
	out := make([]T, 0, a.Shape[0])
	for ci := int64(0); ci < a.NumChunks(0); ci++ {
		c, err := a.ReadChunk(lim, ci)
		if err != nil {
			return nil, err
		}
		m := int(min(a.Chunks[0], a.Shape[0]-ci*a.Chunks[0]))
		for i := 0; i < m; i++ {
			v, err := get(c, i)
			if err != nil {
				return nil, fmt.Errorf("%s row %d: %w", a.Name, ci*a.Chunks[0]+int64(i), err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// formatNumber returns element i of a numeric chunk as text: integers in
// decimal, floats in the shortest form that reads back, booleans as True
// and False (as pandas prints them).
func formatNumber(c *zarr.Chunk, i int) (string, error) {
	switch c.DType.Kind {
	case zarr.Bool:
		if c.Int(i) != 0 {
			return "True", nil
		}
		return "False", nil
	case zarr.Int:
		return strconv.FormatInt(c.Int(i), 10), nil
	case zarr.Uint:
		if c.DType.Size == 8 {
			return strconv.FormatUint(uint64(c.Int(i)), 10), nil
		}
		return strconv.FormatInt(c.Int(i), 10), nil
	}
	v := c.Float(i)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", fmt.Errorf("value %v is not finite (a missing value?)", v)
	}
	return strconv.FormatFloat(v, 'g', -1, 64), nil
}

// obsColumn opens the obs column ref ("obs:COLUMN" or "COLUMN").
func (s *Source) obsColumn(ref string, numeric bool) (*obsCol, error) {
	name := strings.TrimPrefix(ref, "obs:")
	if name == "" || strings.ContainsAny(name, `/\`) || name[0] == '.' {
		return nil, fmt.Errorf("%s: obs column %s: not a column name", s.path, escape.String(ref, 0))
	}
	dir := pathpkg.Join("obs", name)
	col := &obsCol{name: "obs/" + name}
	switch {
	case zarr.IsArray(s.fsys, dir):
		a, err := zarr.OpenArray(s.fsys, dir, col.name, s.lim)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		col.values = a
	case zarr.IsGroup(s.fsys, dir):
		attrs, err := zarr.Attrs(s.fsys, dir)
		if err != nil {
			return nil, err
		}
		switch t := zarr.AttrString(attrs, "encoding-type"); t {
		case "categorical":
			if numeric {
				return nil, fmt.Errorf("%s: obs column %s is categorical; a target must be numeric", s.path, escape.String(name, 0))
			}
			codes, err := zarr.OpenArray(s.fsys, pathpkg.Join(dir, "codes"), col.name+"/codes", s.lim)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.path, err)
			}
			if codes.DType.Kind != zarr.Int && codes.DType.Kind != zarr.Uint {
				return nil, fmt.Errorf("%s: %s/codes has type %s; want integers", s.path, col.name, codes.DType)
			}
			cats, err := zarr.OpenArray(s.fsys, pathpkg.Join(dir, "categories"), col.name+"/categories", s.lim)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.path, err)
			}
			if len(cats.Shape) != 1 || cats.Shape[0] > 1<<20 {
				return nil, fmt.Errorf("%s: %s/categories has shape %v; want at most %d categories", s.path, col.name, cats.Shape, 1<<20)
			}
			if col.cats, err = readAll(cats, s.lim, func(c *zarr.Chunk, i int) (string, error) {
				if c.Strings != nil {
					return c.Strings[i], nil
				}
				return formatNumber(c, i)
			}); err != nil {
				return nil, fmt.Errorf("%s: %w", s.path, err)
			}
			col.values = codes
		case "nullable-integer", "nullable-boolean":
			v, err := zarr.OpenArray(s.fsys, pathpkg.Join(dir, "values"), col.name+"/values", s.lim)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.path, err)
			}
			m, err := zarr.OpenArray(s.fsys, pathpkg.Join(dir, "mask"), col.name+"/mask", s.lim)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.path, err)
			}
			if len(m.Shape) != 1 || m.Shape[0] != s.n || !m.DType.Numeric() {
				return nil, fmt.Errorf("%s: %s/mask has shape %v and type %s; want [%d] booleans", s.path, col.name, m.Shape, m.DType, s.n)
			}
			col.values, col.mask = v, m
		default:
			return nil, fmt.Errorf("%s: obs column %s has encoding-type %q, which is not read (categorical, string and numeric columns are)", s.path, escape.String(name, 0), t)
		}
	default:
		cols, _ := s.obsColumns()
		return nil, fmt.Errorf("%s: no obs column %s (columns: %s)", s.path, escape.String(name, 0), listNames(cols))
	}
	a := col.values
	if len(a.Shape) != 1 || a.Shape[0] != s.n {
		return nil, fmt.Errorf("%s: %s has shape %v; want [%d], one value per cell", s.path, a.Name, a.Shape, s.n)
	}
	if numeric && !a.DType.Numeric() {
		return nil, fmt.Errorf("%s: obs column %s holds %s; a target must be numeric", s.path, escape.String(name, 0), a.DType)
	}
	return col, nil
}

// obsColumns lists the obs columns (column-order of obs's attributes).
func (s *Source) obsColumns() ([]string, error) {
	attrs, err := zarr.Attrs(s.fsys, "obs")
	if err != nil {
		return nil, err
	}
	var cols []string
	if raw, ok := attrs["column-order"]; ok {
		json.Unmarshal(raw, &cols)
	}
	return cols, nil
}

// countKept counts the cells whose label is not ignored.
func (s *Source) countKept() (int64, error) {
	c := newCursor(s.label, s.lim)
	var kept int64
	for i := int64(0); i < s.n; i++ {
		v, err := c.text(i)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.path, err)
		}
		if !s.ignore[v] {
			kept++
		}
	}
	return kept, nil
}

// Schema describes the columns (it implements dataset.Source); it is the
// zero Schema for a nil Source.
func (s *Source) Schema() dataset.Schema {
	if s == nil {
		return dataset.Schema{}
	}
	return s.schema
}

// Files returns the store's path (it implements dataset.Origins): Block.Event
// numbers the cells from 1 in the store's order (the rows of X).
func (s *Source) Files() []string {
	if s == nil || s.path == "" {
		return nil
	}
	return []string{s.path}
}

// Len returns the number of cells a pass gives (it implements
// dataset.Sizer): the store's, less those whose label is ignored; 0 for a
// nil Source.
func (s *Source) Len() int {
	if s == nil {
		return 0
	}
	return int(s.kept)
}

// errNotMade is the error of the methods of a Source not made by
// NewSource or NewSourceFS.
var errNotMade = errors.New("anndata: Source not created by NewSource or NewSourceFS")

// Open starts a pass over the cells.
func (s *Source) Open(ctx context.Context) (dataset.Reader, error) {
	if s == nil || s.x == nil {
		return nil, errNotMade
	}
	if ctx == nil {
		return nil, errors.New("anndata: nil context")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &reader{s: s, ctx: ctx, xci: -1}
	if s.domain != nil {
		r.dom = newCursor(s.domain, s.lim)
	} else {
		r.doms.ID(s.domName)
	}
	if s.label != nil {
		r.lab = newCursor(s.label, s.lim)
	}
	for _, t := range s.targets {
		r.tgs = append(r.tgs, newCursor(t, s.lim))
	}
	return r, nil
}

// cursor reads a 1-d obs column by row, one chunk in memory.
type cursor struct {
	col       *obsCol
	lim       zarr.Limits
	ci        int64
	chunk     *zarr.Chunk
	mci       int64
	mask      *zarr.Chunk
	buf, mbuf zarr.Buffers // memory of chunk and mask, reused
	ids       []int        // category code -> id in the pass's numbering (-1: none yet)
}

func newCursor(c *obsCol, lim zarr.Limits) *cursor {
	return &cursor{col: c, lim: lim, ci: -1, mci: -1}
}

// at loads the chunk holding row i and returns i's position in it.
func (c *cursor) at(i int64) (int, error) {
	a := c.col.values
	ci := i / a.Chunks[0]
	if ci != c.ci {
		ch, err := a.ReadChunkTo(c.lim, &c.buf, ci)
		if err != nil {
			return 0, err
		}
		c.chunk, c.ci = ch, ci
	}
	if m := c.col.mask; m != nil {
		mci := i / m.Chunks[0]
		if mci != c.mci {
			ch, err := m.ReadChunkTo(c.lim, &c.mbuf, mci)
			if err != nil {
				return 0, err
			}
			c.mask, c.mci = ch, mci
		}
		if c.mask.Int(int(i-mci*m.Chunks[0])) != 0 {
			return 0, fmt.Errorf("%s row %d (0-based): no value (masked)", c.col.name, i)
		}
	}
	return int(i - ci*a.Chunks[0]), nil
}

// code returns the category code of row i of a categorical column.
func (c *cursor) code(i int64) (int, error) {
	k, err := c.at(i)
	if err != nil {
		return 0, err
	}
	v := c.chunk.Int(k)
	if v < 0 || v >= int64(len(c.col.cats)) {
		if v == -1 {
			return 0, fmt.Errorf("%s row %d (0-based): no value (code -1, a missing category)", c.col.name, i)
		}
		return 0, fmt.Errorf("%s row %d (0-based): code %d out of range of %d categories", c.col.name, i, v, len(c.col.cats))
	}
	return int(v), nil
}

// text returns row i as text (a category, a string or a number).
func (c *cursor) text(i int64) (string, error) {
	if c.col.cats != nil {
		k, err := c.code(i)
		if err != nil {
			return "", err
		}
		return c.col.cats[k], nil
	}
	k, err := c.at(i)
	if err != nil {
		return "", err
	}
	if c.chunk.Strings != nil {
		return c.chunk.Strings[k], nil
	}
	s, err := formatNumber(c.chunk, k)
	if err != nil {
		return "", fmt.Errorf("%s row %d (0-based): %w", c.col.name, i, err)
	}
	return s, nil
}

// id returns the number of row i's value in ix, or -1 for a value in
// ignore (which is not numbered).
func (c *cursor) id(i int64, ix *dataset.Index, ignore map[string]bool) (int, error) {
	if c.col.cats != nil {
		k, err := c.code(i)
		if err != nil {
			return 0, err
		}
		if c.ids == nil {
			c.ids = make([]int, len(c.col.cats))
			for j := range c.ids {
				c.ids[j] = -2
			}
		}
		if c.ids[k] == -2 {
			if v := c.col.cats[k]; ignore[v] {
				c.ids[k] = -1
			} else {
				c.ids[k] = ix.ID(v)
			}
		}
		return c.ids[k], nil
	}
	v, err := c.text(i)
	if err != nil {
		return 0, err
	}
	if ignore[v] {
		return -1, nil
	}
	return ix.ID(v), nil
}

// number returns row i of a numeric column.
func (c *cursor) number(i int64) (float64, error) {
	k, err := c.at(i)
	if err != nil {
		return 0, err
	}
	v := c.chunk.Float(k)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s row %d (0-based): value %v is not finite", c.col.name, i, v)
	}
	return v, nil
}

// reader is one pass.
type reader struct {
	s        *Source
	ctx      context.Context
	row      int64 // next row of the store
	xci      int64 // chunk row of X in xbuf
	xbuf     []float64
	xrows    int64
	xchunk   zarr.Buffers // memory of X's chunks, reused
	dom, lab *cursor
	tgs      []*cursor
	doms     dataset.Index
	cls      dataset.Index
	err      error
}

func (r *reader) Domains() []string { return r.doms.Names() }

func (r *reader) Classes() []string {
	if r.s.label == nil {
		return nil
	}
	return r.cls.Names()
}

func (r *reader) Close() error { r.xbuf, r.xchunk = nil, zarr.Buffers{}; return nil }

// loadX decodes the chunk row ci of X: the selected columns of its rows,
// row-major, one column chunk at a time.
func (r *reader) loadX(ci int64) error {
	s := r.s
	a := s.x
	nf := len(s.feat)
	r.xrows = min(a.Chunks[0], s.n-ci*a.Chunks[0])
	if need := int(a.Chunks[0]) * nf; cap(r.xbuf) < need {
		r.xbuf = make([]float64, need)
	}
	r.xbuf = r.xbuf[:int(r.xrows)*nf]
	cw := a.Chunks[1]
	for cj := int64(0); cj < a.NumChunks(1); cj++ {
		lo, hi := cj*cw, min((cj+1)*cw, a.Shape[1])
		used := false
		for _, j := range s.feat {
			if int64(j) >= lo && int64(j) < hi {
				used = true
				break
			}
		}
		if !used {
			continue
		}
		c, err := a.ReadChunkTo(s.lim, &r.xchunk, ci, cj)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		if c.Missing {
			return fmt.Errorf("%s: %s: chunk %s (cells %s) is missing; the store is incomplete", s.path, s.xname, a.Key(ci, cj), s.chunkRows(a, a.Key(ci, cj)))
		}
		// Element (i, j - lo) of the chunk, in C or Fortran order.
		si, sj := cw, int64(1)
		if a.FOrder {
			si, sj = 1, a.Chunks[0]
		}
		for f, j := range s.feat {
			if int64(j) < lo || int64(j) >= hi {
				continue
			}
			for i := int64(0); i < r.xrows; i++ {
				r.xbuf[int(i)*nf+f] = c.Float(int(i*si + (int64(j)-lo)*sj))
			}
		}
	}
	r.xci = ci
	return nil
}

// Read fills b with the next rows, at most max.
func (r *reader) Read(b *dataset.Block, max int) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.read(b, max)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

func (r *reader) read(b *dataset.Block, max int) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if b == nil {
		return 0, errors.New("anndata: Read into a nil Block")
	}
	if max <= 0 {
		return 0, fmt.Errorf("anndata: Read of %d rows", max)
	}
	s := r.s
	nf, nt := len(s.feat), len(s.targets)
	b.Reset(max, nf, s.label != nil, nt)
	b.ResetOrigins(max)
	k := 0
	for k < max && r.row < s.n {
		i := r.row
		if ci := i / s.x.Chunks[0]; ci != r.xci {
			if err := r.ctx.Err(); err != nil {
				return 0, err
			}
			if err := r.loadX(ci); err != nil {
				return 0, err
			}
		}
		if r.lab != nil {
			c, err := r.lab.id(i, &r.cls, s.ignore)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", s.path, err)
			}
			if c < 0 {
				r.row++
				continue
			}
			b.Label[k] = c
		}
		if r.dom != nil {
			g, err := r.dom.id(i, &r.doms, nil)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", s.path, err)
			}
			b.Domain[k] = g
		} else {
			b.Domain[k] = 0
		}
		for t, c := range r.tgs {
			v, err := c.number(i)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", s.path, err)
			}
			b.Target[k*nt+t] = v
		}
		x := b.X[k*nf : (k+1)*nf]
		off := int(i-r.xci*s.x.Chunks[0]) * nf
		copy(x, r.xbuf[off:off+nf])
		for f, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s: %s row %d (0-based), column %d (var %s): value %v is not finite", s.path, s.xname, i, s.feat[f], escape.String(s.schema.Features[f], 40), v)
			}
		}
		if s.tr != nil {
			s.tr(x)
			for f, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return 0, fmt.Errorf("%s: %s row %d (0-based), column %d (var %s): value %v after the transform is not finite", s.path, s.xname, i, s.feat[f], escape.String(s.schema.Features[f], 40), v)
				}
			}
		}
		b.File[k], b.Event[k] = 0, i+1
		k++
		r.row++
	}
	b.Rows = k
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

var (
	_ dataset.Source = (*Source)(nil)
	_ dataset.Sizer  = (*Source)(nil)
)
