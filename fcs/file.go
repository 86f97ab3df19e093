package fcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/internal/escape"
)

// Param describes one parameter (channel) of a data set.
type Param struct {
	// Name is $PnN (the short name, "P<n>" when absent) and Label is $PnS
	// (the marker or stain; "" when absent).
	Name, Label string
	// Bits is $PnB.
	Bits int
	// Range is $PnR (0 when absent). Integer values are masked to the
	// smallest power of two >= Range, minus one.
	Range float64
	// Gain is $PnG (1 when absent).
	Gain float64
	// Decades and Offset are the two numbers of $PnE: for Decades > 0 the
	// stored value v stands for Offset * 10^(Decades * v / Range).
	Decades, Offset float64
	// Keywords are the parameter's other keywords, those the fields above
	// do not hold: $PnV (detector voltage), $PnL (excitation wavelength),
	// $PnD (display scale), $PnF, $PnO, $PnP, $PnT, $PnCALIBRATION, ...,
	// and custom ones numbered the same way without the "$" (such as BD's
	// PnDISPLAY). Their keys are written with the letter n in place of the
	// parameter number, "$PnV" for $P3V of parameter 3, so that they can be
	// carried to a parameter of another number: Write writes them with the
	// number of the parameter in the output. Values are as in the file.
	Keywords []Keyword
}

// File is one data set of an FCS file: its metadata, read by Parse or Open,
// and access to its events. Its methods are safe for concurrent use.
type File struct {
	r    io.ReaderAt
	size int64 // bytes of the whole file
	base int64 // file offset of this data set's HEADER
	h    *handle

	hdr      header
	keys     []Keyword
	index    map[string]int
	params   []Param
	dataType byte
	bigEnd   bool
	byteOrd  string
	tot      int   // $TOT
	begin    int64 // absolute file offset of the DATA segment
	segLen   int64 // bytes of the DATA segment (0 when absent)
	evBytes  int64
	next     int64 // $NEXTDATA
	warnings []string
	// name names the data set in messages: its path, and its place in a
	// $NEXTDATA chain after the first ("" for Parse).
	name string
	// names are the unique parameter names (see Names).
	names []string
	// textBytes is the length of the primary and supplemental TEXT read.
	textBytes int64
}

// handle closes an *os.File shared by the data sets of one file once every
// data set is closed.
type handle struct {
	mu   sync.Mutex
	refs int
	c    io.Closer
}

func (h *handle) release() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs--
	if h.refs == 0 {
		return h.c.Close()
	}
	return nil
}

// Detect reports whether the file at path is an FCS file: by its extension
// (.fcs and .lmd are; .csv, .txt, .tsv and .gz are not) or, for any other
// extension, by the "FCS" that begins the HEADER segment (FCS 3.1, section
// 3.1). A file that cannot be read is not an FCS file.
func Detect(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".fcs", ".lmd":
		return true
	case ".csv", ".txt", ".tsv", ".gz":
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [3]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 3 && string(b[:]) == "FCS"
}

// Open opens the FCS file at path and reads the HEADER and TEXT of its first
// data set. Events are read on demand by Events or ReadAll; Close releases
// the file.
func Open(path string) (*File, error) {
	sets, err := open(context.Background(), path, false, 1, "")
	if err != nil {
		return nil, err
	}
	return sets[0], nil
}

// DefaultMaxDataSets is the largest number of data sets that ParseAll,
// OpenAll and, unless SourceOptions.MaxDataSets says otherwise, NewSource
// read from the $NEXTDATA chain of one file. Instruments write one data set
// per file, or a few; a chain of more is refused with an error naming the
// limit rather than read as that many domains.
const DefaultMaxDataSets = 10_000

// ErrTooManyDataSets is returned (wrapped, with the limit) for a $NEXTDATA
// chain of more data sets than the limit (DefaultMaxDataSets,
// SourceOptions.MaxDataSets).
var ErrTooManyDataSets = errors.New("fcs: too many data sets")

// OpenAll opens the FCS file at path and reads the HEADER and TEXT of every
// data set of its $NEXTDATA chain, at most DefaultMaxDataSets of them (a
// longer chain is an error; see SourceOptions.MaxDataSets). Each data set
// must be closed.
func OpenAll(path string) ([]*File, error) {
	return open(context.Background(), path, true, DefaultMaxDataSets, "")
}

// open opens the file at path and parses its first data set, or, with all,
// the data sets of its chain, at most max of them (raise says how to
// read more). A file that is not a regular file (a device or a pipe) is
// refused: its first bytes are described if they are not an FCS HEADER.
func open(ctx context.Context, path string, all bool, max int, raise string) ([]*File, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	sets, err := parseChain(ctx, f, size, all, max, raise)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	h := &handle{refs: len(sets), c: f}
	for k, s := range sets {
		s.h = h
		s.name = path
		if k > 0 {
			s.name = fmt.Sprintf("%s (data set %d)", path, k+1)
		}
	}
	return sets, nil
}

// openRegular opens the regular file at path and returns it with its size.
// Other files (devices, pipes, sockets) have no size and cannot be read at
// offsets: they are refused, with a description of their first bytes when
// they do not start with an FCS HEADER.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("fcs: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("fcs: %w", err)
	}
	if !st.Mode().IsRegular() {
		defer f.Close()
		var b [HeaderLen]byte
		n, _ := io.ReadFull(f, b[:])
		if _, err := parseHeader(b[:n]); err != nil && n > 0 {
			return nil, 0, fmt.Errorf("%w (file %s, %s)", err, path, atomicfile.Kind(st.Mode()))
		}
		return nil, 0, fmt.Errorf("fcs: %s is not a regular file (%s): FCS files are read at offsets, copy it to a file first", path, atomicfile.Kind(st.Mode()))
	}
	return f, st.Size(), nil
}

// openSet opens data set k (0-based) of the $NEXTDATA chain of the file at
// path, whose HEADER is at byte base: one parse, whatever k.
func openSet(path string, k int, base int64) (*File, error) {
	if k == 0 {
		return Open(path)
	}
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s (data set %d)", path, k+1)
	d, err := parseAt(f, size, base)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (file %s, at byte %d: did it change since NewSource?)", err, name, base)
	}
	d.h = &handle{refs: 1, c: f}
	d.name = name
	return d, nil
}

// Parse reads the HEADER and TEXT of the first data set of the FCS file held
// by r, size bytes long.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	if err := checkReader(r, size); err != nil {
		return nil, err
	}
	sets, err := parseChain(context.Background(), r, size, false, 1, "")
	if err != nil {
		return nil, err
	}
	return sets[0], nil
}

// ParseAll reads the HEADER and TEXT of every data set of the $NEXTDATA
// chain of the FCS file held by r, size bytes long, at most
// DefaultMaxDataSets of them (a longer chain is an error).
func ParseAll(r io.ReaderAt, size int64) ([]*File, error) {
	if err := checkReader(r, size); err != nil {
		return nil, err
	}
	return parseChain(context.Background(), r, size, true, DefaultMaxDataSets, "")
}

func checkReader(r io.ReaderAt, size int64) error {
	if r == nil {
		return errors.New("fcs: Parse of a nil reader")
	}
	if size < 0 {
		return fmt.Errorf("fcs: Parse of %d bytes", size)
	}
	return nil
}

// parseChain parses the first data set of the file held by r, or with all
// every data set of its $NEXTDATA chain, at most max of them: a longer
// chain is an error, which raise (if not "") tells how to avoid. Each data
// set is parsed once, and ctx is checked before each.
func parseChain(ctx context.Context, r io.ReaderAt, size int64, all bool, max int, raise string) ([]*File, error) {
	var sets []*File
	base := int64(0)
	textBytes, dataBytes := int64(0), int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := parseAt(r, size, base)
		if err != nil {
			if len(sets) > 0 {
				return nil, fmt.Errorf("fcs: data set %d at byte %d ($NEXTDATA of data set %d): %w", len(sets)+1, base, len(sets), err)
			}
			return nil, err
		}
		// The data sets of a chain occupy disjoint parts of the file, so
		// their TEXT segments, and the events they hold, add up to less
		// than the file. Checking it (from the second data set on) keeps
		// a chain whose data sets all point at one large TEXT or DATA
		// segment from costing (data sets) x (file bytes) of memory and
		// time to parse or to read.
		if len(sets) > 0 {
			textBytes += f.textBytes
			if textBytes > size {
				return nil, fmt.Errorf("fcs: data set %d at byte %d: the TEXT segments of data sets 2 to %d total %d bytes, more than the file (%d bytes): they overlap", len(sets)+1, base, len(sets)+1, textBytes, size)
			}
			dataBytes += int64(f.EventsPresent()) * f.evBytes
			if dataBytes > size {
				return nil, fmt.Errorf("fcs: data set %d at byte %d: the events of data sets 2 to %d total %d bytes, more than the file (%d bytes): their DATA segments overlap", len(sets)+1, base, len(sets)+1, dataBytes, size)
			}
		}
		sets = append(sets, f)
		if !all || f.next == 0 {
			return sets, nil
		}
		if len(sets) >= max {
			if raise != "" {
				raise = " (" + raise + ")"
			}
			return nil, fmt.Errorf("%w: the $NEXTDATA chain holds more than %d data sets, the limit%s", ErrTooManyDataSets, max, raise)
		}
		nb := base + f.next
		if f.next < 0 || nb+HeaderLen > size {
			return nil, fmt.Errorf("fcs: data set %d: $NEXTDATA %d points outside the file (%d bytes)", len(sets), f.next, size)
		}
		base = nb // strictly increasing, so the chain ends
	}
}

// Close releases the file opened by Open or OpenAll. It does nothing for a
// File made by Parse, for a nil or zero File, and when called again.
func (f *File) Close() error {
	if f == nil || f.h == nil {
		return nil
	}
	h := f.h
	f.h = nil
	return h.release()
}

func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	k, err := r.ReadAt(b, off)
	if int64(k) == n {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return b[:k], err
}

// textParses counts the calls of parseAt, so that tests can check that
// the work of reading a chain of data sets is linear in their number.
var textParses atomic.Int64

// parseAt parses the HEADER and TEXT of the data set whose HEADER is at
// byte base.
func parseAt(r io.ReaderAt, size, base int64) (*File, error) {
	textParses.Add(1)
	n := min(size-base, HeaderLen)
	if n < 0 {
		n = 0
	}
	hb, err := readAt(r, base, n)
	if err != nil {
		return nil, fmt.Errorf("fcs: reading HEADER: %w", err)
	}
	hdr, err := parseHeader(hb)
	if err != nil {
		return nil, err
	}
	f := &File{r: r, size: size, base: base, hdr: hdr, index: map[string]int{}}
	tb, te := hdr.off[0], hdr.off[1]
	if tb < HeaderLen || te <= tb || base+te >= size {
		return nil, fmt.Errorf("fcs: HEADER gives TEXT segment bytes %d-%d, not within the file (%d bytes after the HEADER at %d)", tb, te, size-base, base)
	}
	text, err := readAt(r, base+tb, te-tb+1)
	if err != nil {
		return nil, fmt.Errorf("fcs: reading TEXT: %w", err)
	}
	f.textBytes = int64(len(text))
	kw, warn, err := parseText(text)
	if err != nil {
		return nil, err
	}
	if !knownVersions[hdr.version] {
		f.warnf("unknown FCS version %s: read as FCS 3.1", hdr.version)
	}
	f.warnings = append(f.warnings, warn...)
	f.addKeywords(kw)
	f.readSupplemental(text[0])
	if err := f.interpret(); err != nil {
		return nil, err
	}
	return f, nil
}

// knownVersions are the HEADER versions the reader implements; others are
// read as FCS 3.1, with a warning.
var knownVersions = map[string]bool{"FCS2.0": true, "FCS3.0": true, "FCS3.1": true}

func (f *File) addKeywords(kw []Keyword) {
	for _, k := range kw {
		nk := normKey(k.Key)
		if _, dup := f.index[nk]; dup {
			continue
		}
		f.index[nk] = len(f.keys)
		f.keys = append(f.keys, k)
	}
}

// readSupplemental adds the keywords of the supplemental TEXT segment, if
// one is declared and looks like TEXT; keywords of the primary TEXT win.
func (f *File) readSupplemental(delim byte) {
	bs, okb := f.intKey("$BEGINSTEXT")
	es, oke := f.intKey("$ENDSTEXT")
	if !okb || !oke || bs == 0 && es == 0 {
		return
	}
	if bs == f.hdr.off[0] && es == f.hdr.off[1] {
		return // the primary TEXT again
	}
	if bs < HeaderLen || es <= bs || f.base+es >= f.size {
		f.warnf("ignored supplemental TEXT at bytes %d-%d: not within the file", bs, es)
		return
	}
	b, err := readAt(f.r, f.base+bs, es-bs+1)
	f.textBytes += int64(len(b))
	if err != nil {
		f.warnf("ignored supplemental TEXT: %v", err)
		return
	}
	if b[0] != delim {
		f.warnf("ignored supplemental TEXT at bytes %d-%d: it does not start with the TEXT delimiter %q", bs, es, delim)
		return
	}
	kw, warn, err := parseText(b)
	if err != nil {
		f.warnf("ignored supplemental TEXT: %v", err)
		return
	}
	f.warnings = append(f.warnings, warn...)
	f.addKeywords(kw)
}

func (f *File) warnf(format string, args ...any) {
	f.warnings = append(f.warnings, fmt.Sprintf(format, args...))
}

// intKey returns the integer value of keyword k, if present and valid.
func (f *File) intKey(k string) (int64, bool) {
	v, ok := f.Keyword(k)
	if !ok {
		return 0, false
	}
	n, err := parseInt(v)
	return n, err == nil
}

func (f *File) interpret() error {
	if m, ok := f.Keyword("$MODE"); ok && strings.ToUpper(strings.TrimSpace(m)) != "L" {
		return fmt.Errorf("fcs: $MODE %s is not supported (only list mode L)", escape.String(m, 0))
	}
	dt, ok := f.Keyword("$DATATYPE")
	if !ok {
		return fmt.Errorf("fcs: missing required keyword $DATATYPE")
	}
	switch s := strings.ToUpper(strings.TrimSpace(dt)); s {
	case "I", "F", "D":
		f.dataType = s[0]
	case "A":
		return fmt.Errorf("fcs: $DATATYPE A (ASCII) is not supported")
	default:
		return fmt.Errorf("fcs: unknown $DATATYPE %s", escape.String(dt, 0))
	}
	bo, ok := f.Keyword("$BYTEORD")
	if !ok {
		return fmt.Errorf("fcs: missing required keyword $BYTEORD")
	}
	big, err := parseByteOrder(bo)
	if err != nil {
		return err
	}
	f.bigEnd = big
	f.byteOrd = strings.TrimSpace(bo)

	pv, ok := f.Keyword("$PAR")
	if !ok {
		return fmt.Errorf("fcs: missing required keyword $PAR")
	}
	par, err := parseInt(pv)
	// Every parameter needs its own $PnB keyword, which bounds $PAR by the
	// size of the TEXT (and so the allocation below by the input size).
	if err != nil || par < 1 || par > int64(len(f.keys)) {
		return fmt.Errorf("fcs: bad $PAR %s (TEXT holds %d keywords)", escape.String(pv, 0), len(f.keys))
	}
	f.params = make([]Param, par)
	extra := f.paramKeywords(int(par))
	for i := range f.params {
		p, err := f.param(i + 1)
		if err != nil {
			return err
		}
		p.Keywords = extra[i]
		f.params[i] = p
		f.evBytes += int64(p.Bits / 8)
	}
	f.names = f.uniqueNames()

	tot := int64(-1)
	if v, ok := f.Keyword("$TOT"); ok {
		tot, err = parseInt(v)
		if err != nil || tot < 0 {
			return fmt.Errorf("fcs: bad $TOT %s", escape.String(v, 0))
		}
	}
	if v, ok := f.Keyword("$NEXTDATA"); ok {
		n, err := parseInt(v)
		if err != nil || n < 0 {
			f.warnf("ignored bad $NEXTDATA %s", escape.String(v, 0))
		} else {
			f.next = n
		}
	}
	need := int64(-1) // DATA bytes that $TOT events take
	if tot >= 0 && tot <= math.MaxInt64/f.evBytes {
		need = tot * f.evBytes
	}
	f.locateData(need)
	if tot >= 0 && f.segLen > 0 && f.begin < f.size {
		if holds := min(f.segLen, f.size-f.begin) / f.evBytes; holds > tot {
			f.warnf("the DATA segment holds %d events but $TOT declares %d: reading %d", holds, tot, tot)
		}
	}
	if tot < 0 {
		// FCS 2.0 does not require $TOT: count the events of the segment.
		f.warnf("no $TOT: the event count is taken from the DATA segment length")
		tot = f.segLen / f.evBytes
	}
	if tot > math.MaxInt32*int64(1024) {
		return fmt.Errorf("fcs: $TOT %d is implausibly large", tot)
	}
	f.tot = int(tot)
	return nil
}

// locateData chooses the DATA segment between the HEADER offsets and
// $BEGINDATA/$ENDDATA (see the package documentation); need is the length
// $TOT events take (-1 if unknown): when both segments lie within the file,
// one that holds them wins over one that does not.
func (f *File) locateData(need int64) {
	tb, te := f.hdr.off[0], f.hdr.off[1]
	size := f.size - f.base
	validBegin := func(b int64) bool { return b >= HeaderLen && (b > te || b < tb) }
	inFile := func(b, e int64) bool { return validBegin(b) && e >= b && e < size }
	hb, he := f.hdr.off[2], f.hdr.off[3]
	xb, _ := f.intKey("$BEGINDATA")
	xe, _ := f.intKey("$ENDDATA")
	var b, e int64
	switch {
	case need > 0 && inFile(hb, he) && inFile(xb, xe) && he-hb+1 < need && xe-xb+1 >= need:
		b, e = xb, xe
	case inFile(hb, he):
		b, e = hb, he
	case inFile(xb, xe):
		b, e = xb, xe
	case validBegin(hb) && he >= hb:
		b, e = hb, he
	case validBegin(xb) && xe >= xb:
		b, e = xb, xe
	default:
		return // no DATA segment
	}
	if (hb != 0 || he != 0) && (hb != b || he != e) || (xb != 0 || xe != 0) && (xb != b || xe != e) {
		f.warnf("HEADER DATA offsets %d-%d disagree with $BEGINDATA/$ENDDATA %d-%d: using %d-%d", hb, he, xb, xe, b, e)
	}
	f.begin, f.segLen = f.base+b, e-b+1
}

func parseByteOrder(s string) (big bool, err error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	asc, desc := true, true
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return false, fmt.Errorf("fcs: bad $BYTEORD %s", escape.String(s, 0))
		}
		asc = asc && n == i+1
		desc = desc && n == len(parts)-i
	}
	switch {
	case len(parts) < 2:
		return false, fmt.Errorf("fcs: bad $BYTEORD %s", escape.String(s, 0))
	case asc:
		return false, nil
	case desc:
		return true, nil
	}
	return false, fmt.Errorf("fcs: $BYTEORD %s is not supported (only little-endian 1,2,...,n and big-endian n,...,2,1)", escape.String(s, 0))
}

// paramKeywords gathers, for each of the par parameters, the keywords
// that Param's fields do not hold (see Param.Keywords), in file order.
// Keywords of parameter numbers above par are left out.
func (f *File) paramKeywords(par int) [][]Keyword {
	type entry struct{ n, key int }
	var found []entry
	counts := make([]int, par)
	for i, k := range f.keys {
		n, prefix, suffix, ok := paramKey(k.Key)
		if !ok || n > par || prefix == "$P" && fieldKeys[suffix] {
			continue
		}
		found = append(found, entry{n - 1, i})
		counts[n-1]++
	}
	out := make([][]Keyword, par)
	all := make([]Keyword, 0, len(found))
	for j, c := range counts {
		out[j] = all[len(all) : len(all) : len(all)+c]
		all = all[:len(all)+c]
	}
	for _, e := range found {
		k := f.keys[e.key]
		_, prefix, suffix, _ := paramKey(k.Key)
		out[e.n] = append(out[e.n], Keyword{Key: prefix + "n" + suffix, Value: k.Value})
	}
	for j := range out {
		if len(out[j]) == 0 {
			out[j] = nil
		}
	}
	return out
}

// fieldKeys are the suffixes of the parameter keywords $PnX that Param
// holds in its fields.
var fieldKeys = map[string]bool{"N": true, "S": true, "B": true, "R": true, "G": true, "E": true}

// paramKey reports whether key is a keyword of one parameter: "$P<n><X>",
// or the custom "P<n><X>", where <n> is a parameter number and <X> starts
// with a letter. It returns n, the prefix ("$P" or "P") and <X> in upper
// case; the generic form of the key is prefix + "n" + <X>.
func paramKey(key string) (n int, prefix, suffix string, ok bool) {
	k := normKey(key)
	prefix = "$P"
	if !strings.HasPrefix(k, prefix) {
		if prefix = "P"; !strings.HasPrefix(k, prefix) {
			return 0, "", "", false
		}
	}
	rest := k[len(prefix):]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 || i == len(rest) || rest[i] < 'A' || rest[i] > 'Z' {
		return 0, "", "", false
	}
	n, _ = strconv.Atoi(rest[:i])
	if n < 1 {
		return 0, "", "", false
	}
	return n, prefix, rest[i:], true
}

// uniqueNames returns the parameter names of Names: $PnN, and NAME#k (k
// the 1-based parameter number) for every parameter whose $PnN another
// parameter shares. A name made so may equal another parameter's $PnN
// (a $PnN such as "CD3#5"); that parameter is then renamed the same way,
// until all names differ (each round renames at least one parameter, and
// names ending in distinct numbers "#k" differ). Each renaming is a
// warning.
func (f *File) uniqueNames() []string {
	names := make([]string, len(f.params))
	seen := make(map[string]bool, len(f.params))
	dup := false
	for i, p := range f.params {
		names[i] = p.Name
		dup = dup || seen[p.Name]
		seen[p.Name] = true
	}
	if !dup {
		return names
	}
	renamed := make([]bool, len(f.params))
	for {
		holders := make(map[string][]int, len(names))
		for i, n := range names {
			holders[n] = append(holders[n], i)
		}
		var groups [][]int // in the order of their first parameter
		for i, n := range names {
			if h := holders[n]; len(h) > 1 && h[0] == i {
				groups = append(groups, h)
			}
		}
		if len(groups) == 0 {
			return names
		}
		for _, h := range groups {
			var ks []int
			var old, now []string
			for _, j := range h {
				if renamed[j] {
					continue
				}
				ks = append(ks, j+1)
				old = append(old, names[j])
				names[j] += "#" + strconv.Itoa(j+1)
				now = append(now, escape.String(names[j], 0))
				renamed[j] = true
			}
			if len(ks) == len(h) {
				f.warnf("parameters %s have the same $PnN %s: they are named %s", andList(ks), escape.String(old[0], 0), orList(now, " and "))
			} else {
				f.warnf("the $PnN %s of parameter %s is the name of another parameter: it is named %s", escape.String(old[0], 0), andList(ks), orList(now, " and "))
			}
		}
	}
}

// andList writes numbers as "5", "5 and 9" or "5, 9 and 12".
func andList(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return orList(s, " and ")
}

// orList joins words as "a", "a or b" or "a, b or c" (with the last
// separator given).
func orList(w []string, last string) string {
	if len(w) <= 1 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + last + w[len(w)-1]
}

func (f *File) param(n int) (Param, error) {
	key := func(c string) string { return "$P" + strconv.Itoa(n) + c }
	p := Param{Name: "P" + strconv.Itoa(n), Gain: 1}
	if v, ok := f.Keyword(key("N")); ok && strings.TrimSpace(v) != "" {
		p.Name = strings.TrimSpace(v)
	}
	if v, ok := f.Keyword(key("S")); ok {
		p.Label = strings.TrimSpace(v)
	}
	bv, ok := f.Keyword(key("B"))
	if !ok {
		return p, fmt.Errorf("fcs: missing required keyword %s", key("B"))
	}
	bits, err := parseInt(bv)
	if err != nil {
		return p, fmt.Errorf("fcs: bad %s %s", key("B"), escape.String(bv, 0))
	}
	p.Bits = int(bits)
	switch f.dataType {
	case 'I':
		if bits < 8 || bits > 64 || bits%8 != 0 {
			return p, fmt.Errorf("fcs: %s %s: integer widths must be a multiple of 8 from 8 to 64", key("B"), escape.String(bv, 0))
		}
	case 'F':
		if bits != 32 {
			return p, fmt.Errorf("fcs: %s %s: $DATATYPE F needs 32 bits", key("B"), escape.String(bv, 0))
		}
	case 'D':
		if bits != 64 {
			return p, fmt.Errorf("fcs: %s %s: $DATATYPE D needs 64 bits", key("B"), escape.String(bv, 0))
		}
	}
	if v, ok := f.Keyword(key("R")); ok {
		r, err := parseFloat(v)
		if err != nil || r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			f.warnf("ignored bad %s %s", key("R"), escape.String(v, 0))
		} else {
			p.Range = r
		}
	}
	if v, ok := f.Keyword(key("G")); ok {
		g, err := parseFloat(v)
		if err != nil || !(g > 0) || math.IsInf(g, 0) {
			f.warnf("ignored bad %s %s", key("G"), escape.String(v, 0))
		} else {
			p.Gain = g
		}
	}
	if v, ok := f.Keyword(key("E")); ok {
		a, b, found := strings.Cut(v, ",")
		d, err1 := parseFloat(a)
		o, err2 := parseFloat(b)
		if !found || err1 != nil || err2 != nil || d < 0 || math.IsInf(d, 0) || math.IsNaN(o) || math.IsInf(o, 0) {
			f.warnf("ignored bad %s %s", key("E"), escape.String(v, 0))
		} else {
			p.Decades, p.Offset = d, o
		}
	}
	return p, nil
}

// errNotParsed is returned by the methods of a File that Open, OpenAll,
// Parse or ParseAll did not make (a nil *File or a zero File).
var errNotParsed = errors.New("fcs: the File was not made by Open, OpenAll, Parse or ParseAll")

// parsed returns errNotParsed for a nil or zero File.
func (f *File) parsed() error {
	if f == nil || f.r == nil || f.evBytes == 0 {
		return errNotParsed
	}
	return nil
}

// Version returns the HEADER version, e.g. "FCS3.1" ("" for a nil File).
// Versions other than FCS2.0, FCS3.0 and FCS3.1 are read as FCS 3.1, with
// a warning.
func (f *File) Version() string {
	if f == nil {
		return ""
	}
	return f.hdr.version
}

// Keyword returns the value of keyword key, matched case-insensitively, and
// whether it is present (in the primary or supplemental TEXT).
func (f *File) Keyword(key string) (string, bool) {
	if f == nil {
		return "", false
	}
	i, ok := f.index[normKey(key)]
	if !ok {
		return "", false
	}
	return f.keys[i].Value, true
}

// Keywords returns every keyword in file order (primary TEXT, then the
// supplemental TEXT's keywords not in the primary).
func (f *File) Keywords() []Keyword {
	if f == nil {
		return nil
	}
	return append([]Keyword(nil), f.keys...)
}

// Params returns the parameters, in data order. Their Name is $PnN as
// written, which several parameters may share; Names tells them apart.
func (f *File) Params() []Param {
	if f == nil {
		return nil
	}
	ps := make([]Param, len(f.params))
	for i, p := range f.params {
		p.Keywords = append([]Keyword(nil), p.Keywords...)
		ps[i] = p
	}
	return ps
}

// zeroFile stands for a nil *File in the accessors: its fields are the
// zero results they document.
var zeroFile File

// or returns f, or the zero File when f is nil.
func (f *File) or() *File {
	if f == nil {
		return &zeroFile
	}
	return f
}

// NumParams returns $PAR.
func (f *File) NumParams() int { return len(f.or().params) }

// NumEvents returns $TOT, the number of events the data set declares.
func (f *File) NumEvents() int { return f.or().tot }

// DataType returns $DATATYPE: 'I', 'F' or 'D' (0 for a nil File).
func (f *File) DataType() byte { return f.or().dataType }

// ByteOrder returns $BYTEORD as written in the file, e.g. "4,3,2,1".
func (f *File) ByteOrder() string { return f.or().byteOrd }

// EventBytes returns the bytes of one event in the DATA segment.
func (f *File) EventBytes() int { return int(f.or().evBytes) }

// DataOffset returns the file offset of the first byte of the DATA segment
// chosen by the reader (0 when there is none).
func (f *File) DataOffset() int64 { return f.or().begin }

// NextData returns $NEXTDATA, the offset of the next data set of the file
// from this one's HEADER, or 0 when this data set is the last one (OpenAll
// and ParseAll read them all).
func (f *File) NextData() int64 { return f.or().next }

// Warnings returns the deviations from the standard that the reader worked
// around or that the caller should know of: ignored keywords or segments,
// disagreeing offsets, a DATA segment holding more events than $TOT, an
// unknown version, parameters sharing a $PnN (see Names).
func (f *File) Warnings() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.warnings...)
}

// Names returns the names of the parameters, all different: $PnN, except
// that the parameters sharing a $PnN with another are named NAME#k, k
// being the 1-based parameter number (as in $PkN), which FindParam and
// LookupParam accept. Such a renaming is one of the Warnings.
func (f *File) Names() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.names...)
}

// Labels returns the $PnS labels of the parameters ("" when absent).
func (f *File) Labels() []string {
	if f == nil {
		return nil
	}
	s := make([]string, len(f.params))
	for i, p := range f.params {
		s[i] = p.Label
	}
	return s
}

// EventsPresent returns the number of complete events the data set holds:
// $TOT, or fewer when the DATA segment is too short for $TOT events or the
// file ends before the segment does. Events are never read past the end of
// the DATA segment (from its HEADER or $BEGINDATA/$ENDDATA, see the package
// documentation), so an ANALYSIS segment or the next data set of a $NEXTDATA
// chain is never decoded as events. A segment longer than $TOT events (such
// as an $ENDDATA one byte too far) is fine; one that holds more complete
// events is one of the Warnings, and $TOT events are read.
func (f *File) EventsPresent() int {
	if f == nil || f.segLen == 0 || f.begin >= f.size || f.evBytes == 0 {
		return 0
	}
	avail := min(f.segLen, f.size-f.begin) / f.evBytes
	return int(min(avail, int64(f.tot)))
}

// Analysis returns the bytes of the ANALYSIS segment (nil when absent).
func (f *File) Analysis() ([]byte, error) {
	if err := f.parsed(); err != nil {
		return nil, err
	}
	b, e := f.hdr.off[4], f.hdr.off[5]
	if xb, ok := f.intKey("$BEGINANALYSIS"); ok && (b == 0 || e < b || f.base+e >= f.size) {
		xe, _ := f.intKey("$ENDANALYSIS")
		b, e = xb, xe
	}
	if b == 0 && e == 0 {
		return nil, nil
	}
	if b < HeaderLen || e < b || f.base+e >= f.size {
		return nil, fmt.Errorf("fcs: ANALYSIS segment bytes %d-%d not within the file (%d bytes)", b, e, f.size-f.base)
	}
	return readAt(f.r, f.base+b, e-b+1)
}

// FindParam returns the index of the parameter that name refers to (see
// LookupParam), or -1 when no parameter or several parameters match.
func (f *File) FindParam(name string) int {
	j, _ := f.lookup(name)
	return j
}

// LookupParam returns the 0-based index of the parameter that ref refers
// to, trying in turn, and taking the first rule that matches:
//
//  1. a name of Names, exactly (the $PnN, or NAME#k for a shared $PnN);
//  2. $PnN, exactly;
//  3. $PnS, exactly;
//  4. a name of Names or $PnN, case-insensitively and without surrounding
//     spaces;
//  5. $PnS, likewise;
//  6. NAME#k, for parameter k whose $PnN or $PnS is NAME (exactly or
//     case-insensitively).
//
// A rule that matches several parameters (two parameters sharing a $PnN,
// or a marker $PnS given to the -A and -H channels of one detector) is an
// error that names them and the NAME#k references that select each one,
// since choosing one would read another channel's values than the caller
// meant. A reference that matches nothing is an error listing the
// parameters.
func (f *File) LookupParam(ref string) (int, error) {
	if f == nil {
		return -1, errNotParsed
	}
	j, cands := f.lookup(ref)
	if j >= 0 {
		return j, nil
	}
	return -1, fmt.Errorf("fcs: %w", f.refError("channel", ref, cands))
}

// lookupAs is LookupParam for a reference to a channel of the kind what
// ("spillover channel", ...), which its errors name.
func (f *File) lookupAs(what, ref string) (int, error) {
	j, cands := f.lookup(ref)
	if j >= 0 {
		return j, nil
	}
	return -1, fmt.Errorf("fcs: %w", f.refError(what, ref, cands))
}

// refError is the error of LookupParam for a reference that matches no
// parameter (cands empty) or the parameters cands.
func (f *File) refError(what, ref string, cands []int) error {
	if len(cands) == 0 {
		in := ""
		if f.name != "" {
			in = " in " + f.name
		}
		return fmt.Errorf("%s %s not found%s; available ($PnN / $PnS): %s", what, escape.String(ref, 0), in, available(f))
	}
	ks := make([]int, len(cands))
	use := make([]string, len(cands))
	byLabel := false
	for i, c := range cands {
		ks[i] = c + 1
		use[i] = escape.String(strings.TrimSpace(ref)+"#"+strconv.Itoa(c+1), 0)
		byLabel = byLabel || !strings.EqualFold(f.params[c].Name, strings.TrimSpace(ref))
	}
	which := "names parameters " + andList(ks)
	if byLabel {
		which = "is the $PnS of parameters " + andList(ks)
		for i, c := range cands {
			use[i] += " (" + escape.String(f.names[c], 0) + ")"
		}
	}
	of := ""
	if f.name != "" {
		of = " of " + f.name
	}
	return fmt.Errorf("%s %s %s%s: use %s", what, escape.String(ref, 0), which, of, orList(use, " or "))
}

// lookup implements LookupParam: the index of the parameter, or -1 and the
// parameters matched by the first rule that matched several.
func (f *File) lookup(ref string) (int, []int) {
	if f == nil {
		return -1, nil
	}
	for i, n := range f.names {
		if n == ref {
			return i, nil
		}
	}
	t := strings.TrimSpace(ref)
	rules := []func(i int) bool{
		func(i int) bool { return f.params[i].Name == ref },
		func(i int) bool { return f.params[i].Label != "" && f.params[i].Label == ref },
		func(i int) bool {
			return strings.EqualFold(f.names[i], t) || strings.EqualFold(f.params[i].Name, t)
		},
		func(i int) bool { return f.params[i].Label != "" && strings.EqualFold(f.params[i].Label, t) },
	}
	for _, match := range rules {
		var cands []int
		for i := range f.params {
			if match(i) {
				cands = append(cands, i)
			}
		}
		switch len(cands) {
		case 0:
			continue
		case 1:
			return cands[0], nil
		}
		return -1, cands
	}
	if h := strings.LastIndexByte(t, '#'); h > 0 {
		base := strings.TrimSpace(t[:h])
		k, err := strconv.Atoi(t[h+1:])
		if err == nil && k >= 1 && k <= len(f.params) && t[h+1] != '+' && t[h+1] != '-' {
			p := f.params[k-1]
			if strings.EqualFold(p.Name, base) || p.Label != "" && strings.EqualFold(p.Label, base) {
				return k - 1, nil
			}
		}
	}
	return -1, nil
}

// available lists the parameters for a message: name / label.
func available(f *File) string {
	var b strings.Builder
	for i, p := range f.params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(escape.String(f.names[i], 0))
		if p.Label != "" && p.Label != f.names[i] {
			b.WriteString(" / ")
			b.WriteString(escape.String(p.Label, 0))
		}
	}
	return b.String()
}
