// Shared helpers of the experiments: the common flags (-json, -out), result
// records printed as text tables or JSON lines (and, with -out, also written
// as JSON lines to <out>/<experiment>.jsonl), peak resident memory from the
// OS, the location of the shared real data, the CyTOF loader and the plots.

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dicalab/dica/internal/atomicfile"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/figure"
	"github.com/dicalab/dica/kernel"
)

// options are the flags every experiment takes.
type options struct {
	json bool   // -json: one JSON object per line instead of text tables
	out  string // -out DIR: folder for the PNG plots and the JSON lines (none when empty)

	mu      sync.Mutex
	started map[string]bool // .jsonl files truncated by this run
}

// newFlags returns a flag set for an experiment with the common flags.
func newFlags(name, usage string) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	o := &options{}
	fs.BoolVar(&o.json, "json", false, "print one JSON object per line instead of text tables")
	fs.StringVar(&o.out, "out", "", "write the PNG plots and <experiment>.jsonl (every record as a JSON line, whatever -json) into `dir` (created if needed)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags:\n", strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs, o
}

// jsonlPath returns the file of the JSON lines of an experiment, or "" when
// there is no -out folder.
func (o *options) jsonlPath(exp string) string {
	if o == nil || o.out == "" {
		return ""
	}
	return filepath.Join(o.out, exp+".jsonl")
}

// writeJSONL appends v, marshaled as one line of JSON, to <out>/<exp>.jsonl
// when -out is given, and does nothing otherwise. The first call of a run
// for a file creates the folder and truncates the file, so that the file
// holds exactly this run's lines. Each call opens, writes and closes the
// file: nothing is buffered, and a run stopped half-way leaves every line
// written so far. It is safe for concurrent use.
//
// Experiments that print their own JSON (lanczos) call it once per row:
//
//	if err := o.writeJSONL("lanczos", row); err != nil { return err }
func (o *options) writeJSONL(exp string, v any) error {
	path := o.jsonlPath(exp)
	if path == "" {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !o.started[exp] {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if o.started == nil {
		o.started = map[string]bool{}
	}
	o.started[exp] = true
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// field is one named value of an ordered object.
type field struct {
	K string
	V any
}

// obj is a JSON object whose keys keep their order.
type obj []field

// MarshalJSON writes the fields in order. Non-finite floats become null.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.K)
		b.Write(k)
		b.WriteByte(':')
		v := f.V
		if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			v = nil
		}
		e, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.K, err)
		}
		b.Write(e)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// record is one measurement: the experiment, the kind of row (the table it
// belongs to), the configuration and the measured values.
type record struct {
	Experiment string `json:"experiment"`
	Kind       string `json:"kind"`
	Config     obj    `json:"config"`
	Values     obj    `json:"values"`
}

// reporter prints records: with JSON at once, one object per line; as text,
// grouped by kind into tables when flushed. Notes are free text. With an
// -out folder every record and note is also written at once, as a JSON
// line, to <out>/<experiment>.jsonl (options.writeJSONL), in both modes.
type reporter struct {
	w     io.Writer
	json  bool
	o     *options
	exp   string
	kinds []string
	recs  map[string][]record
	mu    sync.Mutex
}

func newReporter(w io.Writer, exp string, o *options) *reporter {
	return &reporter{w: w, json: o.json, o: o, exp: exp, recs: map[string][]record{}}
}

// add records one measurement.
func (r *reporter) add(kind string, config, values obj) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := record{Experiment: r.exp, Kind: kind, Config: config, Values: values}
	if err := r.o.writeJSONL(r.exp, rec); err != nil {
		return err
	}
	if r.json {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(r.w, "%s\n", b)
		return err
	}
	if _, ok := r.recs[kind]; !ok {
		r.kinds = append(r.kinds, kind)
	}
	r.recs[kind] = append(r.recs[kind], rec)
	return nil
}

// note prints a remark: a line starting with "# " in text mode, an object
// with kind "note" in JSON mode (and in the .jsonl file). A failure to write
// the file is reported on stderr.
func (r *reporter) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	n := struct {
		Experiment string `json:"experiment"`
		Kind       string `json:"kind"`
		Message    string `json:"message"`
	}{r.exp, "note", msg}
	if err := r.o.writeJSONL(r.exp, n); err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", r.exp, err)
	}
	if r.json {
		b, _ := json.Marshal(n)
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	fmt.Fprintf(r.w, "# %s\n", msg)
}

// flush prints the text tables (nothing in JSON mode).
func (r *reporter) flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		return nil
	}
	for _, kind := range r.kinds {
		recs := r.recs[kind]
		var cols []string
		seen := map[string]bool{}
		for _, rec := range recs {
			for _, f := range append(append(obj{}, rec.Config...), rec.Values...) {
				if !seen[f.K] {
					seen[f.K] = true
					cols = append(cols, f.K)
				}
			}
		}
		fmt.Fprintf(r.w, "\n%s: %s\n", r.exp, kind)
		tw := tabwriter.NewWriter(r.w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
		for _, rec := range recs {
			vals := map[string]any{}
			for _, f := range append(append(obj{}, rec.Config...), rec.Values...) {
				vals[f.K] = f.V
			}
			cells := make([]string, len(cols))
			for i, c := range cols {
				v, ok := vals[c]
				if !ok {
					cells[i] = "-"
					continue
				}
				cells[i] = formatValue(v)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	r.kinds = nil
	r.recs = map[string][]record{}
	return nil
}

// formatValue formats a table cell.
func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	case []float64:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = strconv.FormatFloat(e, 'g', 3, 64)
		}
		return strings.Join(s, ",")
	default:
		return fmt.Sprint(v)
	}
}

// peakRSS returns the peak resident set size of this process in bytes
// (VmHWM of /proc/self/status), or 0 when it is not available.
func peakRSS() int64 {
	return statusBytes("VmHWM:")
}

// currentRSS returns the resident set size in bytes (VmRSS), or 0.
func currentRSS() int64 {
	return statusBytes("VmRSS:")
}

func statusBytes(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, key); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS returns freed memory to the OS and resets the peak resident
// set size to the current one (writing 5 to /proc/self/clear_refs, Linux >=
// 4.0), so that the next peakRSS measures one run. It reports whether the
// reset worked; when it did not, peakRSS is the peak of the whole process.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// mb converts bytes to MB (10^6 bytes).
func mb(b int64) float64 { return float64(b) / 1e6 }

// errNoData is returned (wrapped) when the shared data is absent; run
// functions turn it into a message and a zero exit status.
var errNoData = errors.New("data not found")

// repoRoot returns the nearest directory at or above the working directory
// holding the module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/dicalab/dica")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/dicalab/dica) not found above the working directory")
		}
		dir = parent
	}
}

// dataDir returns the folder of the shared real data: $DICA_DATA, or
// ../shared/data relative to the repository root.
func dataDir() (string, error) {
	if d := os.Getenv("DICA_DATA"); d != "" {
		return d, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared", "data"), nil
}

// dataPath returns the folder sub of the shared data, or an error wrapping
// errNoData when it is absent.
func dataPath(sub string) (string, error) {
	d, err := dataDir()
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNoData, err)
	}
	p := filepath.Join(d, sub)
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: %s is absent (set DICA_DATA to the shared data folder)", errNoData, p)
	}
	return p, nil
}

// skipNoData turns a missing-data error into a message on stderr and a nil
// error (exit status 0).
func skipNoData(exp string, err error) error {
	if errors.Is(err, errNoData) {
		fmt.Fprintf(os.Stderr, "bench %s: skipped: %v\n", exp, err)
		return nil
	}
	return err
}

// cytofSamples is the number of samples of multicenter16_cytof.
const cytofSamples = 16

// log1pAbs is the customary transform of cytometry intensities, log(1+|x|).
func log1pAbs(row []float64) {
	for i, v := range row {
		row[i] = math.Log1p(math.Abs(v))
	}
}

// cytofSource returns the CSV source of the given samples (1-based numbers)
// of multicenter16_cytof, log(1+|x|), with labels; unlabelled (ungated, label
// 0) cells are dropped unless all is set.
func cytofSource(dir string, samples []int, all bool) (*csvio.Source, error) {
	var files, labels []string
	for _, s := range samples {
		files = append(files, filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)))
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)))
	}
	o := csvio.Options{Header: csvio.NoHeader, LabelFiles: labels, Transform: log1pAbs}
	if !all {
		o.LabelsIgnore = []string{"0"}
	}
	return csvio.NewSource(files, o)
}

// loadCytof reads the given samples into memory (see cytofSource).
func loadCytof(ctx context.Context, samples []int, all bool) (*dataset.Dataset, error) {
	dir, err := dataPath("multicenter16_cytof")
	if err != nil {
		return nil, err
	}
	src, err := cytofSource(dir, samples, all)
	if err != nil {
		return nil, err
	}
	return dataset.Collect(ctx, src)
}

// seq returns the integers lo..hi.
func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// sharedLabels returns the class of each point of a and of b as integers
// 0..c-1 numbered by class name (in natural order of the names), so that
// data sets read separately agree; c counts the names of both.
func sharedLabels(a, b *dataset.Dataset) (ya, yb []int, c int) {
	names := map[string]bool{}
	for _, ds := range []*dataset.Dataset{a, b} {
		for _, n := range ds.ClassNames {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.SortFunc(sorted, csvio.NaturalCompare)
	id := map[string]int{}
	for i, n := range sorted {
		id[n] = i
	}
	conv := func(ds *dataset.Dataset) []int {
		y := make([]int, ds.N())
		for p, l := range ds.Label {
			y[p] = id[ds.ClassNames[l]]
		}
		return y
	}
	return conv(a), conv(b), len(sorted)
}

// parallelBlocks calls fn(lo, hi) for consecutive row blocks of [0, n) on
// GOMAXPROCS goroutines; fn gets the worker number w.
func parallelBlocks(n, block int, fn func(w, lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				mu.Lock()
				lo := int(next)
				next += int64(block)
				mu.Unlock()
				if lo >= n {
					return
				}
				fn(w, lo, min(lo+block, n))
			}
		}(w)
	}
	wg.Wait()
}

func init() {
	// One font family in every picture of the project: figure's.
	plot.DefaultFont = figure.Font()
	plotter.DefaultFont = figure.Font()
}

// series is one line of a plot.
type series struct {
	name string
	x, y []float64
}

// hline is a horizontal reference line of a plot.
type hline struct {
	name string
	y    float64
}

// plotOpts adjust a line plot.
type plotOpts struct {
	logX, logY   bool
	legendBottom bool    // legend at the bottom right instead of the top right
	legendLeft   bool    // legend on the left
	yMin, yMax   float64 // fixed y range when yMax > yMin
}

// linePlot writes a PNG line plot with points of the series and dashed
// horizontal reference lines.
func linePlot(path, title, xlabel, ylabel string, o plotOpts, ss []series, hs []hline) error {
	logX, logY := o.logX, o.logY
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = !o.legendBottom
	p.Legend.Left = o.legendLeft
	p.Add(plotter.NewGrid())
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, s := range ss {
		pts := make(plotter.XYs, 0, len(s.x))
		for j := range s.x {
			if logY && !(s.y[j] > 0) || math.IsNaN(s.y[j]) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.x[j], Y: s.y[j]})
			xmin, xmax = math.Min(xmin, s.x[j]), math.Max(xmax, s.x[j])
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
	}
	for i, h := range hs {
		if math.IsNaN(h.y) || logY && h.y <= 0 || math.IsInf(xmin, 0) {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: h.y}, {X: xmax, Y: h.y}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: uint8(60 + 60*(i%3))}
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3 + 2*float64(i))}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(h.name, l)
	}
	if o.yMax > o.yMin {
		p.Y.Min, p.Y.Max = o.yMin, o.yMax
	}
	return savePlot(p, path, 6*vg.Inch, 4*vg.Inch)
}

// savePlot writes the plot as a PNG, creating the folder; the file is
// written atomically (internal/atomicfile).
func savePlot(p *plot.Plot, path string, w, h vg.Length) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	wt, err := p.WriterTo(w, h, "png")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(f io.Writer) error {
		_, err := wt.WriteTo(f)
		return err
	})
}

// col copies column j of m.
func col(m mat.Matrix, j int) []float64 {
	r, _ := m.Dims()
	c := make([]float64, r)
	for i := range c {
		c[i] = m.At(i, j)
	}
	return c
}

// The small helpers below serve several experiments: lists of counts,
// seeded subsamples, means and medians, and the machine's load.

// parseInts parses a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

// subsample returns a seeded subsample of k rows of ds (all when k <= 0 or
// k >= n).
func subsample(ds *dataset.Dataset, k int, seed uint64) *dataset.Dataset {
	if k <= 0 || k >= ds.N() {
		return ds
	}
	return ds.Subset(kernel.SampleRows(ds.N(), k, seed))
}

// head returns the first k values of v.
func head(v []float64, k int) []float64 {
	return append([]float64(nil), v[:min(k, len(v))]...)
}

// mean returns the mean of v (NaN when empty).
func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// median returns the median of v.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// loadAvg returns the first three fields of /proc/loadavg, or "n/a".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// hasQuick reports whether args ask for a quick run (-quick), which sets the
// defaults of the other flags before they are parsed.
func hasQuick(args []string) bool {
	for _, a := range args {
		if a == "-quick" || a == "--quick" || a == "-quick=true" || a == "--quick=true" {
			return true
		}
	}
	return false
}
