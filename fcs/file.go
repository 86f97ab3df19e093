package fcs

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	sets, err := open(path, false)
	if err != nil {
		return nil, err
	}
	return sets[0], nil
}

// OpenAll opens the FCS file at path and reads the HEADER and TEXT of every
// data set of its $NEXTDATA chain. Each data set must be closed.
func OpenAll(path string) ([]*File, error) { return open(path, true) }

func open(path string, all bool) ([]*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fcs: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("fcs: %w", err)
	}
	sets, err := parseChain(f, st.Size(), all)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	h := &handle{refs: len(sets), c: f}
	for _, s := range sets {
		s.h = h
	}
	return sets, nil
}

// Parse reads the HEADER and TEXT of the first data set of the FCS file held
// by r, size bytes long.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	sets, err := parseChain(r, size, false)
	if err != nil {
		return nil, err
	}
	return sets[0], nil
}

// ParseAll reads the HEADER and TEXT of every data set of the $NEXTDATA
// chain of the FCS file held by r, size bytes long.
func ParseAll(r io.ReaderAt, size int64) ([]*File, error) { return parseChain(r, size, true) }

func parseChain(r io.ReaderAt, size int64, all bool) ([]*File, error) {
	var sets []*File
	base := int64(0)
	textBytes, dataBytes := int64(0), int64(0)
	for {
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
		nb := base + f.next
		if f.next < 0 || nb+HeaderLen > size {
			return nil, fmt.Errorf("fcs: data set %d: $NEXTDATA %d points outside the file (%d bytes)", len(sets), f.next, size)
		}
		base = nb // strictly increasing, so the chain ends
	}
}

// Close releases the file opened by Open or OpenAll. It does nothing for a
// File made by Parse.
func (f *File) Close() error {
	if f.h == nil {
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

func parseAt(r io.ReaderAt, size, base int64) (*File, error) {
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
	f.warnings = append(f.warnings, warn...)
	f.addKeywords(kw)
	f.readSupplemental(text[0])
	if err := f.interpret(); err != nil {
		return nil, err
	}
	return f, nil
}

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
		return fmt.Errorf("fcs: $MODE %q is not supported (only list mode L)", m)
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
		return fmt.Errorf("fcs: unknown $DATATYPE %q", dt)
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
		return fmt.Errorf("fcs: bad $PAR %q (TEXT holds %d keywords)", pv, len(f.keys))
	}
	f.params = make([]Param, par)
	for i := range f.params {
		p, err := f.param(i + 1)
		if err != nil {
			return err
		}
		f.params[i] = p
		f.evBytes += int64(p.Bits / 8)
	}

	tot := int64(-1)
	if v, ok := f.Keyword("$TOT"); ok {
		tot, err = parseInt(v)
		if err != nil || tot < 0 {
			return fmt.Errorf("fcs: bad $TOT %q", v)
		}
	}
	if v, ok := f.Keyword("$NEXTDATA"); ok {
		n, err := parseInt(v)
		if err != nil || n < 0 {
			f.warnf("ignored bad $NEXTDATA %q", v)
		} else {
			f.next = n
		}
	}
	need := int64(-1) // DATA bytes that $TOT events take
	if tot >= 0 && tot <= math.MaxInt64/f.evBytes {
		need = tot * f.evBytes
	}
	f.locateData(need)
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
			return false, fmt.Errorf("fcs: bad $BYTEORD %q", s)
		}
		asc = asc && n == i+1
		desc = desc && n == len(parts)-i
	}
	switch {
	case len(parts) < 2:
		return false, fmt.Errorf("fcs: bad $BYTEORD %q", s)
	case asc:
		return false, nil
	case desc:
		return true, nil
	}
	return false, fmt.Errorf("fcs: $BYTEORD %q is not supported (only little-endian 1,2,...,n and big-endian n,...,2,1)", s)
}

func (f *File) param(n int) (Param, error) {
	key := func(c string) string { return "$P" + strconv.Itoa(n) + c }
	p := Param{Name: "P" + strconv.Itoa(n), Gain: 1}
	if v, ok := f.Keyword(key("N")); ok {
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
		return p, fmt.Errorf("fcs: bad %s %q", key("B"), bv)
	}
	p.Bits = int(bits)
	switch f.dataType {
	case 'I':
		if bits < 8 || bits > 64 || bits%8 != 0 {
			return p, fmt.Errorf("fcs: %s %q: integer widths must be a multiple of 8 from 8 to 64", key("B"), bv)
		}
	case 'F':
		if bits != 32 {
			return p, fmt.Errorf("fcs: %s %q: $DATATYPE F needs 32 bits", key("B"), bv)
		}
	case 'D':
		if bits != 64 {
			return p, fmt.Errorf("fcs: %s %q: $DATATYPE D needs 64 bits", key("B"), bv)
		}
	}
	if v, ok := f.Keyword(key("R")); ok {
		r, err := parseFloat(v)
		if err != nil || r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			f.warnf("ignored bad %s %q", key("R"), v)
		} else {
			p.Range = r
		}
	}
	if v, ok := f.Keyword(key("G")); ok {
		g, err := parseFloat(v)
		if err != nil || !(g > 0) || math.IsInf(g, 0) {
			f.warnf("ignored bad %s %q", key("G"), v)
		} else {
			p.Gain = g
		}
	}
	if v, ok := f.Keyword(key("E")); ok {
		a, b, found := strings.Cut(v, ",")
		d, err1 := parseFloat(a)
		o, err2 := parseFloat(b)
		if !found || err1 != nil || err2 != nil || d < 0 || math.IsInf(d, 0) || math.IsNaN(o) || math.IsInf(o, 0) {
			f.warnf("ignored bad %s %q", key("E"), v)
		} else {
			p.Decades, p.Offset = d, o
		}
	}
	return p, nil
}

// Version returns the HEADER version, e.g. "FCS3.1".
func (f *File) Version() string { return f.hdr.version }

// Keyword returns the value of keyword key, matched case-insensitively, and
// whether it is present (in the primary or supplemental TEXT).
func (f *File) Keyword(key string) (string, bool) {
	i, ok := f.index[normKey(key)]
	if !ok {
		return "", false
	}
	return f.keys[i].Value, true
}

// Keywords returns every keyword in file order (primary TEXT, then the
// supplemental TEXT's keywords not in the primary).
func (f *File) Keywords() []Keyword { return append([]Keyword(nil), f.keys...) }

// Params returns the parameters, in data order.
func (f *File) Params() []Param { return append([]Param(nil), f.params...) }

// NumParams returns $PAR.
func (f *File) NumParams() int { return len(f.params) }

// NumEvents returns $TOT, the number of events the data set declares.
func (f *File) NumEvents() int { return f.tot }

// DataType returns $DATATYPE: 'I', 'F' or 'D'.
func (f *File) DataType() byte { return f.dataType }

// ByteOrder returns $BYTEORD as written in the file, e.g. "4,3,2,1".
func (f *File) ByteOrder() string { return f.byteOrd }

// EventBytes returns the bytes of one event in the DATA segment.
func (f *File) EventBytes() int { return int(f.evBytes) }

// DataOffset returns the file offset of the first byte of the DATA segment
// chosen by the reader (0 when there is none).
func (f *File) DataOffset() int64 { return f.begin }

// Warnings returns the deviations from the standard that the reader worked
// around (ignored keywords or segments, disagreeing offsets).
func (f *File) Warnings() []string { return append([]string(nil), f.warnings...) }

// Names returns the $PnN names of the parameters.
func (f *File) Names() []string {
	s := make([]string, len(f.params))
	for i, p := range f.params {
		s[i] = p.Name
	}
	return s
}

// Labels returns the $PnS labels of the parameters ("" when absent).
func (f *File) Labels() []string {
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
// as an $ENDDATA one byte too far) is fine.
func (f *File) EventsPresent() int {
	if f.segLen == 0 || f.begin >= f.size || f.evBytes == 0 {
		return 0
	}
	avail := min(f.segLen, f.size-f.begin) / f.evBytes
	return int(min(avail, int64(f.tot)))
}

// Analysis returns the bytes of the ANALYSIS segment (nil when absent).
func (f *File) Analysis() ([]byte, error) {
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

// FindParam returns the index of the parameter whose $PnN, or else $PnS, is
// name (exact match first, then case-insensitive), or -1.
func (f *File) FindParam(name string) int {
	for i, p := range f.params {
		if p.Name == name {
			return i
		}
	}
	for i, p := range f.params {
		if p.Label != "" && p.Label == name {
			return i
		}
	}
	t := strings.TrimSpace(name)
	for i, p := range f.params {
		if strings.EqualFold(p.Name, t) {
			return i
		}
	}
	for i, p := range f.params {
		if p.Label != "" && strings.EqualFold(p.Label, t) {
			return i
		}
	}
	return -1
}
