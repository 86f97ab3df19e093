// Package csvio reads multi-domain data from CSV files, as users have them,
// as a dataset.Source: a stream of row blocks that can be read any number of
// times without holding the data in memory.
//
// Each file is one domain (a patient, a sample, a center), named after the
// file, unless a column holds the domain. Class labels come from a column or
// from separate row-aligned label files (one label per line, as in the
// DeepCyTOF data: sample3.csv with labels3.csv), and rows with some label
// values (such as "0" for ungated cells) can be dropped. Label files may
// cover some of the data files only: the rows of the others have no label
// (dataset.NoLabel). Real target columns can be read instead of labels.
//
// The parser is hand-written for speed: large buffered reads, no allocation
// per row, and decimal numbers converted by Clinger's exact fast path with
// strconv.ParseFloat for everything else, so that every value is the
// correctly rounded float64 of its text. With GOMAXPROCS > 1 a pass parses
// chunks of the files on GOMAXPROCS goroutines while one reads ahead; the
// rows, their order, the numbering of domains and classes and the errors are
// those of a sequential pass. Errors name the file, the line and the column.
// Skim passes over the rows finding only their line ends and parses the rows
// a caller keeps: a fit's landmark sample costs a scan of the files instead
// of a parse.
//
// CSV details: fields are separated by Options.Comma; a field may be enclosed
// in double quotes ("" stands for a quote) but may not span lines; spaces and
// tabs around fields are ignored; empty lines are skipped; "\r\n" line
// endings, a UTF-8 byte order mark and gzip-compressed files (name ending in
// ".gz") are accepted. Numbers are decimal: an optional sign, digits with
// an optional decimal point, an optional exponent (17.89, -.5, 5., 2e-3,
// +1E10). Go's other forms (hexadecimal floats such as 0x1p3, underscores
// as in 1_000) are not numbers; NaN, Inf, values out of the float64 range,
// empty fields and "NA" are errors.
//
// A line may end with the separator, as some exporters end every line: the
// empty field after it is not a column. When the first row of the first
// file ends so, its empty last field is dropped before the columns are
// named and counted, and a row with a value in that place is an error
// naming its file, line and column; in any file, a row may have one more
// field than there are columns only if that field is empty.
//
// Header detection (Options.Header left at DetectHeader): the first row of
// the first file is a header when one of its fields is neither empty nor a
// number, leaving out the columns that Options.Domain and Options.Label
// select by position ("3", "V3"), which may hold text. Empty fields are no
// evidence either way (a missing value, or the end of a line that ends with
// the separator), so a first row "1,2,3," or "1,,3" is data, and
// "CD4,CD8," is a header. WithHeader and NoHeader override the detection.
//
// Reading is bounded: a line longer than Options.MaxLineBytes (1 MiB by
// default) is an error, found as soon as that many bytes of it are read, so
// that memory stays bounded on any input, such as a file without line ends
// or one that is not a CSV file at all. Messages quote at most 80 bytes of a
// file, with control characters and invalid UTF-8 escaped.
//
// Label values given in Options.LabelsIgnore must occur: a value that no row
// has is an error at the end of a pass (a misspelt value would otherwise
// keep the rows it was meant to drop, as a class of their own; a shard of a
// larger data set can set Options.AllowUnmatchedIgnore), and
// Source.EmptiedDomains tells which domains lost all their rows.
package csvio

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/escape"
)

// HeaderMode says whether the files start with a row of column names.
type HeaderMode int

const (
	// DetectHeader (the default) takes the first row of the first file as a
	// header when one of its fields is neither empty nor a number, leaving
	// out the columns that Domain and Label select by position ("3", "V3"),
	// which may hold text (see the package documentation). A header made
	// only of numbers needs WithHeader.
	DetectHeader HeaderMode = iota
	// WithHeader says the first row of every file is a header.
	WithHeader
	// NoHeader says there is no header: columns are named V1, V2, ...
	NoHeader
)

// Options say how to read the files. The zero value reads every column as a
// feature, one domain per file, without labels.
type Options struct {
	// Header says whether the files have a header row (default: detect).
	// With a header all files must have the same one.
	Header HeaderMode

	// Features selects the input columns, in this order. A column is named by
	// its header name, or by its 1-based position as "3" or "V3" (the only
	// names without a header). Empty means every column not used for the
	// domain, the label or the targets.
	Features []string

	// Domain names the column holding the domain of each row (text or
	// numbers). Empty means one domain per file, named after the file's base
	// name without extension (".gz" and then one more extension removed):
	// the base names must then be distinct.
	Domain string

	// Label names the column holding the class label of each row (text or
	// numbers, compared as trimmed text).
	Label string

	// Target names real target columns (regression). A data set has labels
	// or targets, not both.
	Target []string

	// LabelFiles gives one label file per data file, in the same order: one
	// label per line, no header, line i labelling data row i (empty lines
	// are skipped in both). Exclusive with Label. An empty name leaves the
	// rows of its data file without labels: they are read with class
	// dataset.NoLabel (-1), so that labelled and unlabelled files make one
	// data set (the schema is labelled when at least one name is not
	// empty). LabelsIgnore drops labelled rows only.
	LabelFiles []string

	// LabelsIgnore lists label values whose rows are dropped (such as "0"
	// for ungated cells). Their rows are still checked for errors. A value
	// that no row of the data has is an error, reported at the end of a
	// pass (Read returns it instead of io.EOF, Skim returns it at its end),
	// listing the labels seen, unless AllowUnmatchedIgnore is set.
	LabelsIgnore []string

	// AllowUnmatchedIgnore turns off the check that every value of
	// LabelsIgnore matches a row: for files that are a part of a larger
	// data set (a shard), in which a value may occur only in other parts.
	AllowUnmatchedIgnore bool

	// MaxLineBytes is the greatest length of a line of the files and the
	// label files, in bytes without the line ending (0: DefaultMaxLineBytes).
	// A longer line is an error naming the file and the line, found once
	// MaxLineBytes+2 bytes of it are read: memory stays bounded whatever
	// the input.
	MaxLineBytes int

	// Comma is the field separator, a single-byte character (default ',').
	Comma rune

	// Transform, if not nil, is applied to the features of each row in
	// place (e.g. log1p or asinh(x/5) of cytometry intensities), after
	// parsing and before rows are handed out. Its results must be finite.
	// Rows are parsed by several goroutines at once, so it must be safe for
	// concurrent use (a pure function of the row is).
	Transform func(row []float64)
}

// DefaultMaxLineBytes is the default of Options.MaxLineBytes: 1 MiB, room
// for tens of thousands of columns of numbers.
const DefaultMaxLineBytes = 1 << 20

// maxMaxLine bounds MaxLineBytes so that the sizes derived from it do not
// overflow.
const maxMaxLine = math.MaxInt / 8

// Source reads CSV files as a dataset.Source. Create it with NewSource (the
// zero value and a nil *Source give errors); it is safe to Open several
// passes, even concurrently.
type Source struct {
	files, labelFiles []string
	open              func(name string) (io.ReadCloser, error)

	comma      byte
	header     bool
	trailing   bool           // the first row of the first file ends with the separator
	maxLine    int            // the longest line
	columns    []string       // names of the file's columns
	byName     map[string]int // column of each header name (-1: not unique), made by resolve
	roles      []role         // role of each file column
	schema     dataset.Schema
	domainCol  int // -1: one domain per file
	labelCol   int // -1: no label column
	fileDoms   []string
	ignore     map[string]bool
	ignoreList []string // the values of ignore that must match, in the order given
	transform  func([]float64)

	// Test knobs of the parallel pass (see Open): workers is the number of
	// parsing goroutines (0: GOMAXPROCS, sequential when 1; < 0:
	// sequential), chunkSize the bytes per chunk (0: defaultChunk).
	workers, chunkSize int

	chunks sync.Pool // chunks of the parallel passes, for reuse

	mu      sync.Mutex
	emptied []string // domains emptied by LabelsIgnore, once a pass is complete
	known   bool     // a pass is complete
}

// role is what a file column is used for.
type role struct {
	kind uint8
	idx  int // index among the features or the targets
}

const (
	skipCol uint8 = iota
	featureCol
	targetCol
	domainCol
	labelCol
)

// NewSource returns a Source over the given files, which must exist, be
// non-empty and have the same columns (the same header, or the same number
// of fields in their first row). The first row of the first file resolves
// the column names of Options.
func NewSource(files []string, o Options) (*Source, error) {
	return newSource(files, o, func(name string) (io.ReadCloser, error) {
		return os.Open(name)
	})
}

// NewSourceFS is like NewSource with files read from fsys (for instance an
// embed.FS or a testing/fstest.MapFS).
func NewSourceFS(fsys fs.FS, files []string, o Options) (*Source, error) {
	if fsys == nil {
		return nil, errors.New("csvio: nil file system")
	}
	return newSource(files, o, func(name string) (io.ReadCloser, error) {
		return fsys.Open(name)
	})
}

// ReadFile reads one CSV file into memory: it is dataset.Collect of
// NewSource([]string{path}, o).
func ReadFile(path string, o Options) (*dataset.Dataset, error) {
	src, err := NewSource([]string{path}, o)
	if err != nil {
		return nil, err
	}
	return dataset.Collect(context.Background(), src)
}

// Schema describes the columns (it implements dataset.Source); it is the
// zero Schema for a nil Source.
func (s *Source) Schema() dataset.Schema {
	if s == nil {
		return dataset.Schema{}
	}
	return s.schema
}

// HasHeader reports whether the files were read as having a header row
// (the result of header detection with DetectHeader).
func (s *Source) HasHeader() bool { return s != nil && s.header }

// Files returns the data files, in reading order.
func (s *Source) Files() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.files)
}

// labelFile returns the label file of data file fi, or "" when its rows
// have no labels from a label file.
func (s *Source) labelFile(fi int) string {
	if s.labelFiles == nil {
		return ""
	}
	return s.labelFiles[fi]
}

// errNotMade is the error of the methods of a Source not made by NewSource.
var errNotMade = errors.New("csvio: Source not created by NewSource or NewSourceFS")

// check returns an error for a nil Source, one not made by NewSource, or
// a nil context.
func (s *Source) check(ctx context.Context) error {
	if s == nil || s.open == nil {
		return errNotMade
	}
	if ctx == nil {
		return errors.New("csvio: nil context")
	}
	return ctx.Err()
}

// EmptiedDomains returns the domains (files, or values of the domain column)
// that had rows but lost all of them to Options.LabelsIgnore, in file order
// for domains named after the files and in natural order (NaturalCompare)
// for the values of a domain column. They are known (known is true) once a
// pass has read all the rows, by Read up to its end or by Skim, in any
// goroutine; until then names is nil and known false. Without LabelsIgnore
// no domain is emptied.
func (s *Source) EmptiedDomains() (names []string, known bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.emptied), s.known
}

// newSource makes the Source of NewSource and NewSourceFS, in stages: the
// options are checked, the first row of every file read, the header
// detected, the columns given their roles, and the domains named.
func newSource(files []string, o Options, open func(string) (io.ReadCloser, error)) (*Source, error) {
	if len(files) == 0 {
		return nil, errors.New("csvio: no files")
	}
	s := &Source{
		files: slices.Clone(files), labelFiles: slices.Clone(o.LabelFiles),
		comma: ',', domainCol: -1, labelCol: -1, transform: o.Transform,
		maxLine: DefaultMaxLineBytes,
	}
	if err := s.setOptions(o); err != nil {
		return nil, err
	}
	s.open = gunzipping(open)
	first, more, err := s.firstRows()
	if err != nil {
		return nil, err
	}
	if err := s.readHeader(o, first); err != nil {
		return nil, err
	}
	if err := s.assignColumns(o); err != nil {
		return nil, err
	}
	if s.header {
		for i, name := range s.files {
			if !more[i] {
				return nil, fmt.Errorf("csvio: %s: no rows, only a header line", name)
			}
		}
	}
	s.schema.Labelled = o.Label != "" || s.labelFiles != nil
	if s.domainCol < 0 {
		if err := s.nameFileDomains(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setOptions checks the options that need no file (line limit, separator,
// labels, targets, ignored labels) and records them in s.
func (s *Source) setOptions(o Options) error {
	switch {
	case o.MaxLineBytes < 0:
		return fmt.Errorf("csvio: MaxLineBytes %d: want a positive number of bytes, or 0 for the default (%d)", o.MaxLineBytes, DefaultMaxLineBytes)
	case o.MaxLineBytes > 0:
		s.maxLine = min(o.MaxLineBytes, maxMaxLine)
	}
	if o.Comma != 0 {
		if o.Comma < 0 || o.Comma >= 0x80 || o.Comma == '"' || o.Comma == '\n' || o.Comma == '\r' {
			return fmt.Errorf("csvio: separator %q: want a single-byte character other than a quote or a line ending", o.Comma)
		}
		s.comma = byte(o.Comma)
	}
	if o.Label != "" && slices.ContainsFunc(o.LabelFiles, func(f string) bool { return f != "" }) {
		return errors.New("csvio: both a label column and label files are given")
	}
	if len(o.LabelFiles) > 0 && len(o.LabelFiles) != len(s.files) {
		return fmt.Errorf("csvio: %d data files but %d label files", len(s.files), len(o.LabelFiles))
	}
	if !slices.ContainsFunc(o.LabelFiles, func(f string) bool { return f != "" }) {
		s.labelFiles = nil // no file has labels
	}
	labelled := o.Label != "" || s.labelFiles != nil
	if labelled && len(o.Target) > 0 {
		return errors.New("csvio: both labels and targets are given; a data set has one or the other")
	}
	if len(o.LabelsIgnore) == 0 {
		return nil
	}
	if !labelled {
		return errors.New("csvio: LabelsIgnore without labels (set Label or LabelFiles)")
	}
	s.ignore = make(map[string]bool, len(o.LabelsIgnore))
	for _, v := range o.LabelsIgnore {
		v = strings.TrimSpace(v)
		if v == "" {
			return errors.New("csvio: LabelsIgnore has an empty value, which no label can have (an empty label is an error)")
		}
		if !s.ignore[v] {
			s.ignore[v] = true
			if !o.AllowUnmatchedIgnore {
				s.ignoreList = append(s.ignoreList, v)
			}
		}
	}
	return nil
}

// gunzipping returns open, decompressing the files whose name ends in .gz.
func gunzipping(open func(string) (io.ReadCloser, error)) func(string) (io.ReadCloser, error) {
	return func(name string) (io.ReadCloser, error) {
		f, err := open(name)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(name, ".gz") {
			return f, nil
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("csvio: %s: %v", name, err)
		}
		return gzipFile{z, f}, nil
	}
}

// firstRows returns the first row of every data file, without an empty
// field after a separator that ends the line (noting it in s.trailing),
// and whether each file has more rows; it checks that the label files
// open.
func (s *Source) firstRows() ([][]string, []bool, error) {
	first := make([][]string, len(s.files))
	more := make([]bool, len(s.files))
	for i, name := range s.files {
		row, rest, err := s.firstRow(name)
		if err != nil {
			return nil, nil, err
		}
		more[i] = rest
		if n := len(row); n > 1 && row[n-1] == "" && (i == 0 || n == len(first[0])+1) {
			row = row[:n-1]
			if i == 0 {
				s.trailing = true
			}
		}
		first[i] = row
	}
	for _, name := range s.labelFiles {
		if name == "" {
			continue
		}
		f, err := s.open(name)
		if err != nil {
			return nil, nil, fmt.Errorf("csvio: %w", err)
		}
		f.Close()
	}
	return first, more, nil
}

// readHeader decides whether the files have a header row (o.Header, or
// detection: a first row with a field that is not a number, outside the
// domain and label columns), checks that every file's first row matches
// the first file's, and names the columns (V1, V2, ... without a header).
func (s *Source) readHeader(o Options, first [][]string) error {
	s.columns = first[0]
	ncol := len(s.columns)
	switch o.Header {
	case WithHeader:
		s.header = true
	case NoHeader:
	case DetectHeader:
		text := map[int]bool{}
		for _, ref := range []string{o.Domain, o.Label} {
			if j, ok := position(ref, ncol); ok {
				text[j] = true
			}
		}
		for j, f := range s.columns {
			if !text[j] && f != "" && !isNumber([]byte(f)) {
				s.header = true
				break
			}
		}
	default:
		return fmt.Errorf("csvio: invalid header mode %d", o.Header)
	}
	for i, row := range first[1:] {
		if len(row) != ncol {
			return fmt.Errorf("csvio: %s: first row has %d fields but %s has %d", s.files[i+1], len(row), s.files[0], ncol)
		}
		if s.header {
			if d := headerDiff(row, s.columns); d != "" {
				return fmt.Errorf("csvio: %s: header differs from that of %s %s", s.files[i+1], s.files[0], d)
			}
		}
	}
	if !s.header {
		for j := range s.columns {
			s.columns[j] = "V" + strconv.Itoa(j+1)
		}
	}
	return nil
}

// assignColumns gives every column its role (domain, label, target,
// feature or skipped) from o, and fills the schema's names.
func (s *Source) assignColumns(o Options) error {
	s.roles = make([]role, len(s.columns))
	use := func(ref, what string, r role) (int, error) {
		j, err := s.resolve(ref)
		if err != nil {
			return 0, err
		}
		if s.roles[j].kind != skipCol {
			return 0, fmt.Errorf("csvio: column %s (%s) is used twice", escape.String(ref, 0), what)
		}
		s.roles[j] = r
		return j, nil
	}
	var err error
	if o.Domain != "" {
		if s.domainCol, err = use(o.Domain, "domain", role{kind: domainCol}); err != nil {
			return err
		}
	}
	if o.Label != "" {
		if s.labelCol, err = use(o.Label, "label", role{kind: labelCol}); err != nil {
			return err
		}
	}
	for k, ref := range o.Target {
		j, err := use(ref, "target", role{kind: targetCol, idx: k})
		if err != nil {
			return err
		}
		s.schema.Targets = append(s.schema.Targets, s.columns[j])
	}
	if len(o.Features) > 0 {
		for k, ref := range o.Features {
			j, err := use(ref, "feature", role{kind: featureCol, idx: k})
			if err != nil {
				return err
			}
			s.schema.Features = append(s.schema.Features, s.columns[j])
		}
	} else {
		for j, r := range s.roles {
			if r.kind == skipCol {
				s.roles[j] = role{kind: featureCol, idx: len(s.schema.Features)}
				s.schema.Features = append(s.schema.Features, s.columns[j])
			}
		}
	}
	if len(s.schema.Features) == 0 {
		return errors.New("csvio: no feature columns left")
	}
	return nil
}

// nameFileDomains names one domain per file after its base name, refusing
// two files that would get the same name.
func (s *Source) nameFileDomains() error {
	seen := map[string]string{}
	for _, name := range s.files {
		d := dataset.DomainName(name)
		if prev, dup := seen[d]; dup {
			return fmt.Errorf("csvio: files %s and %s would both be domain %q; rename one or use a domain column", prev, name, d)
		}
		seen[d] = name
		s.fileDoms = append(s.fileDoms, d)
	}
	return nil
}

// firstRow returns the fields of the first non-empty line of the file,
// and whether another non-empty line (or a line that cannot be read)
// follows it.
func (s *Source) firstRow(name string) ([]string, bool, error) {
	f, err := s.open(name)
	if err != nil {
		return nil, false, fmt.Errorf("csvio: %w", err)
	}
	defer f.Close()
	var l lineReader
	l.reset(f, 64<<10, s.maxLine)
	for {
		line, ok := l.next()
		if !ok {
			if l.err != nil {
				return nil, false, readError(name, l.err)
			}
			return nil, false, fmt.Errorf("csvio: %s: no rows", name)
		}
		if l.line == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			continue
		}
		row, kind := splitLine(line, s.comma)
		if kind != errNone {
			return nil, false, &ParseError{File: name, Line: l.line, Column: len(row) + 1, Msg: quoteMsg(kind)}
		}
		for {
			next, ok := l.next()
			if !ok {
				return row, l.err != nil, nil
			}
			if len(next) > 0 {
				return row, true, nil
			}
		}
	}
}

var bom = []byte("\uFEFF")

// checkHeader checks the header line ln of the file name against that of
// the first file.
func (s *Source) checkHeader(name string, ln int, line []byte) error {
	row, kind := splitLine(line, s.comma)
	if kind != errNone {
		return &ParseError{File: name, Line: ln, Column: len(row) + 1, Msg: quoteMsg(kind)}
	}
	if n := len(s.columns); len(row) == n+1 && row[n] == "" {
		row = row[:n]
	}
	if d := headerDiff(row, s.columns); d != "" {
		return &ParseError{File: name, Line: ln, Msg: "header differs from that of " + s.files[0] + " " + d}
	}
	return nil
}

// headerDiff says where the header row differs from want ("in column 2:
// "CD8" against "CD8b"", or its number of fields), or returns "" when they
// are equal.
func headerDiff(row, want []string) string {
	for j := range min(len(row), len(want)) {
		if row[j] != want[j] {
			return fmt.Sprintf("in column %d: %s against %s", j+1, escape.String(row[j], listedBytes), escape.String(want[j], listedBytes))
		}
	}
	if len(row) != len(want) {
		return fmt.Sprintf("(%d fields against %d)", len(row), len(want))
	}
	return ""
}

// position reads a positional column reference "3" or "V3" (1-based) and
// returns its 0-based index if it is in range.
func position(ref string, ncol int) (int, bool) {
	ref = strings.TrimPrefix(ref, "V")
	j, err := strconv.Atoi(ref)
	if err != nil || j < 1 || j > ncol || ref[0] == '+' || ref[0] == '-' {
		return 0, false
	}
	return j - 1, true
}

// resolve returns the column a reference names: a header name first, then a
// position.
func (s *Source) resolve(ref string) (int, error) {
	if s.header {
		if s.byName == nil {
			s.byName = make(map[string]int, len(s.columns))
			for k, c := range s.columns {
				if _, dup := s.byName[c]; dup {
					s.byName[c] = -1
				} else {
					s.byName[c] = k
				}
			}
		}
		if j, ok := s.byName[ref]; ok {
			if j < 0 {
				return 0, fmt.Errorf("csvio: column name %s is not unique in the header of %s", escape.String(ref, 0), s.files[0])
			}
			return j, nil
		}
	}
	if j, ok := position(ref, len(s.columns)); ok {
		return j, nil
	}
	return 0, fmt.Errorf("csvio: no column %s in %s; available: %s", escape.String(ref, 0), s.files[0], s.available())
}

// Limits of the lists of names in messages: at most maxListed names, each
// quoted with at most listedBytes bytes of it, while the list is shorter
// than listBytes.
const (
	maxListed   = 20
	listedBytes = 32
	listBytes   = 400
)

// available lists the column names for a message.
func (s *Source) available() string {
	if !s.header {
		return fmt.Sprintf("V1 to V%d or 1 to %d (no header)", len(s.columns), len(s.columns))
	}
	return list(s.columns)
}

// list quotes names for a message, within the limits above, and says how
// many are left out.
func list(names []string) string {
	var b strings.Builder
	for j, c := range names {
		if j == maxListed || b.Len() > listBytes {
			fmt.Fprintf(&b, " and %d more", len(names)-j)
			break
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(escape.String(c, listedBytes))
	}
	return b.String()
}

type gzipFile struct {
	*gzip.Reader
	f io.Closer
}

func (g gzipFile) Close() error {
	err := g.Reader.Close()
	if e := g.f.Close(); err == nil {
		err = e
	}
	return err
}

// ParseError is an error in the contents of a file, at a line and, when it
// concerns one field, a column.
type ParseError struct {
	File   string
	Line   int // 1-based line number in the file
	Column int // 1-based column number; 0 when the error concerns the line
	Msg    string
	// Option names the field of Options whose limit the line exceeds
	// ("MaxLineBytes"; Msg names it in parentheses), or is empty.
	Option string
}

// Error formats the error as "file:line: column c: msg".
func (e *ParseError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d: column %d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func quoteMsg(kind int) string {
	if kind == errQuoteOpen {
		return "quoted field not closed on its line"
	}
	return "text after the closing quote of a field"
}

// Glob expands the patterns (filepath.Match syntax) into file names. The
// matches of each pattern are sorted naturally, numbers in names by value
// (sample2.csv before sample10.csv, see NaturalCompare), and the patterns'
// lists are joined in order, without repeating a file. A pattern that
// matches nothing is an error; no patterns give no files.
//
// The dica command expands its file arguments with Glob, and programs that
// read the same files should too: the order of the files numbers the
// domains, so it decides the fitted model. filepath.Glob sorts lexically,
// sample10 before sample2, which numbers the domains differently from the
// order the names suggest, and differently from the command.
func Glob(patterns []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("csvio: pattern %q: %v", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("csvio: no file matches %q", p)
		}
		slices.SortFunc(m, NaturalCompare)
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// NaturalCompare compares strings with runs of digits compared by numeric
// value ("sample2" < "sample10"), as dataset.NaturalCompare does.
func NaturalCompare(a, b string) int { return dataset.NaturalCompare(a, b) }
