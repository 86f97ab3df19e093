// Experiment scale: fit time and peak memory against the number of cells n,
// the rank m and the number of cores, side by side with the numpy peer.
//
//	go run ./bench scale [-json] [-out DIR] [-n 10000,100000,300000,all]
//	    [-m 125,250,500,1000] [-rank 500] [-stream 10000000] [-procs 1,2]
//	    [-peer=true] [-repeat 1] [-precision 64,32]
//
// Every measurement runs in a child process (this program, re-executed with
// GOMAXPROCS set), so that each peak resident set size (VmHWM, reset after
// the data is loaded) belongs to one run. Data: multicenter16_cytof, log(1+|x|)
// (../shared/data or $DICA_DATA), held in memory by the child; supervised DICA
// uses the 693,643 labelled cells, UDICA all 929,685 (ungated included);
// smaller n are seeded subsamples. Fits: Nystrom, uniform landmarks, RBF
// sigma = 1, eps = 1e-4, lambda = 0, k = 10 (the README's flagship
// setting; docs/PERFORMANCE.md, "One fit, step by step", gives its cost),
// at each precision of -precision (dica.Config.Precision; every Go
// measurement is made at each, the peer runs once).
//
// Measured:
//   - fit time and peak RSS vs n for DICA and UDICA at m = -rank;
//   - a synthetic stream of -stream cells (16 domains, 4 classes, 8
//     dimensions) generated on the fly by a dataset.Source, never held in
//     memory, with the time of one bare generation pass;
//   - fit time and peak RSS vs m for DICA on all labelled cells;
//   - GOMAXPROCS 1 vs 2 for DICA at m = -rank on all labelled cells;
//   - the transform throughput (cells/s at m = -rank) and the time of one
//     bare pass computing the same kernel rows (nystrom MapRaw over all cells
//     in blocks on all cores) against the whole fit (docs/PERFORMANCE.md,
//     "Targets": a fit within 1.3 times the bare pass);
//   - when /usr/bin/python3 imports numpy, scipy and scikit-learn,
//     ../shared/peers/numpy_dica.py on the same number of labelled cells (its
//     own seeded subsample below all cells), its timing lines parsed and its
//     peak RSS from the child's rusage, and the ratios Go/peer.
//
// With -out, scale_time_vs_n.png (log-log, with the peer),
// scale_rss_vs_n.png and scale_time_vs_m.png.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/approx"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/exact"
)

func init() {
	register("scale", "fit time and peak RSS vs n, m and cores, with the numpy peer (CyTOF, synthetic stream)", runScale)
}

const scaleUsage = `usage: go run ./bench scale [flags]

Fit time and peak RSS of DICA and UDICA (Nystrom) against n, m and GOMAXPROCS
on multicenter16_cytof and a synthetic stream, each in its own child process,
with ../shared/peers/numpy_dica.py in the same run when Python is available.`

// childEnv marks a child process of scale (see TestMain in the tests).
const childEnv = "DICA_BENCH_SCALE_CHILD"

// scaleJob is one child measurement.
type scaleJob struct {
	Kind   string `json:"kind"`   // "cytof" or "stream"
	Method string `json:"method"` // "dica" or "udica"
	N      int    `json:"n"`      // cells (0: all)
	All    bool   `json:"all"`    // include ungated cells
	M      int    `json:"m"`
	Procs  int    `json:"procs"`
	Extras bool   `json:"extras"` // transform throughput and bare pass
	Seed   uint64 `json:"seed"`
	// Precision is dica.Config.Precision (0: the default).
	Precision int `json:"precision,omitempty"`
}

// scaleResult is what a child measures.
type scaleResult struct {
	Job         scaleJob  `json:"job"`
	Cells       int64     `json:"cells"`
	LoadS       float64   `json:"load_s"`
	FitS        float64   `json:"fit_s"`
	PeakRSS     int64     `json:"peak_rss"`
	RSSBefore   int64     `json:"rss_before"`
	ResetOK     bool      `json:"reset_ok"`
	DataBytes   int64     `json:"data_bytes"`
	TransformS  float64   `json:"transform_s,omitempty"`
	BarePassS   float64   `json:"bare_pass_s,omitempty"`
	GenPassS    float64   `json:"gen_pass_s,omitempty"`
	Eigenvalues []float64 `json:"eigenvalues"`
	GOMAXPROCS  int       `json:"gomaxprocs"`
	FitTimesS   []float64 `json:"fit_times_s,omitempty"`
}

// scaleConfig configures the parent.
type scaleConfig struct {
	ns     []int // 0 stands for all
	ms     []int
	fixedN int // cells of the runs vs m and GOMAXPROCS (0: all)
	rank   int
	stream int
	procs  []int
	precs  []int // precisions of the Go fits
	peer   bool
	repeat int
	seed   uint64
	// exe and args start a child: exe args... scale -child JSON.
	exe  string
	args []string
}

func runScale(args []string) error {
	fs, o := newFlags("scale", scaleUsage)
	child := fs.String("child", "", "internal: run one measurement given as JSON (used by scale itself)")
	nFlag := fs.String("n", "10000,100000,300000,all", "comma-separated cell counts (`all` for every cell)")
	mFlag := fs.String("m", "125,250,500,1000", "comma-separated ranks for the time vs m runs (all labelled cells)")
	cfg := scaleConfig{}
	fixed := fs.String("fixed-n", "all", "labelled cells of the runs vs m and GOMAXPROCS and of the UDICA peer comparison (`all` or a count)")
	fs.IntVar(&cfg.rank, "rank", 500, "rank m of the runs vs n, GOMAXPROCS and the transform")
	fs.IntVar(&cfg.stream, "stream", 10000000, "cells of the synthetic stream (0: skip)")
	procs := fs.String("procs", "1,2", "comma-separated GOMAXPROCS values to compare")
	precs := fs.String("precision", "64", "comma-separated precisions of the Go fits, in bits (64, 32: dica.Config.Precision)")
	fs.BoolVar(&cfg.peer, "peer", true, "run ../shared/peers/numpy_dica.py when Python is available")
	fs.IntVar(&cfg.repeat, "repeat", 1, "runs of each Go measurement (median time, largest peak RSS)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *child != "" {
		var job scaleJob
		if err := json.Unmarshal([]byte(*child), &job); err != nil {
			return fmt.Errorf("-child: %w", err)
		}
		res, err := scaleChild(context.Background(), job)
		if err != nil {
			return err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", b)
		return nil
	}
	var err error
	if cfg.ns, err = parseCounts(*nFlag); err != nil {
		return fmt.Errorf("-n: %w", err)
	}
	fx, err := parseCounts(*fixed)
	if err != nil || len(fx) != 1 {
		return fmt.Errorf("-fixed-n: %q is not one count or all", *fixed)
	}
	cfg.fixedN = fx[0]
	if cfg.ms, err = parseInts(*mFlag); err != nil {
		return fmt.Errorf("-m: %w", err)
	}
	if cfg.procs, err = parseInts(*procs); err != nil {
		return fmt.Errorf("-procs: %w", err)
	}
	if cfg.precs, err = parseInts(*precs); err != nil {
		return fmt.Errorf("-precision: %w", err)
	}
	cfg.repeat = max(cfg.repeat, 1)
	if _, err := dataPath("multicenter16_cytof"); err != nil {
		return skipNoData("scale", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cfg.exe = exe
	rep := newReporter(os.Stdout, "scale", o)
	if err := scaleRun(context.Background(), cfg, rep, o.out); err != nil {
		return err
	}
	return rep.flush()
}

// parseCounts parses a list of positive integers or "all" (0).
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			out = append(out, 0)
		default:
			v, err := strconv.ParseFloat(f, 64) // accepts 1e6
			if err != nil || v < 1 || v != math.Trunc(v) {
				return nil, fmt.Errorf("%q is not a positive integer or all", f)
			}
			out = append(out, int(v))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// runChild runs one job in a child process with GOMAXPROCS = job.Procs and
// returns its result; its peak RSS is the child's own.
func (cfg scaleConfig) runChild(ctx context.Context, job scaleJob) (*scaleResult, error) {
	var best *scaleResult
	var times []float64
	for r := 0; r < cfg.repeat; r++ {
		b, err := json.Marshal(job)
		if err != nil {
			return nil, err
		}
		args := append(append([]string(nil), cfg.args...), "scale", "-child", string(b))
		cmd := exec.CommandContext(ctx, cfg.exe, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", job.Procs), childEnv+"=1")
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("child %s: %w", b, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var res scaleResult
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			return nil, fmt.Errorf("child %s: output %q: %w", b, out.String(), err)
		}
		times = append(times, res.FitS)
		if best != nil {
			res.PeakRSS = max(res.PeakRSS, best.PeakRSS)
		}
		best = &res
	}
	best.FitTimesS = times
	best.FitS = median(times)
	return best, nil
}

// scaleChild makes one measurement in this process.
func scaleChild(ctx context.Context, job scaleJob) (*scaleResult, error) {
	res := &scaleResult{Job: job, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	method, err := exact.ParseMethod(job.Method)
	if err != nil {
		return nil, err
	}
	cfg := dica.Config{Method: method, Solver: dica.Nystrom, Rank: job.M, Sigma: 1, Epsilon: 1e-4, Components: 10, Seed: job.Seed, Precision: job.Precision}
	var src dataset.Source
	var ds *dataset.Dataset
	switch job.Kind {
	case "cytof":
		t0 := time.Now()
		ds, err = loadCytof(ctx, seq(1, cytofSamples), job.All)
		if err != nil {
			return nil, err
		}
		if method == dica.UDICA || method == dica.KPCA {
			ds.Label, ds.ClassNames = nil, nil
		}
		ds = subsample(ds, job.N, job.Seed)
		res.LoadS = time.Since(t0).Seconds()
		res.Cells = int64(ds.N())
		res.DataBytes = int64(ds.N()) * int64(ds.D()*8+16)
		src = ds.Source()
	case "stream":
		s := &synthSource{n: int64(job.N), seed: job.Seed}
		src = s
		res.Cells = s.n
		t0 := time.Now()
		if err := drain(ctx, s); err != nil {
			return nil, err
		}
		res.GenPassS = time.Since(t0).Seconds()
	default:
		return nil, fmt.Errorf("unknown job kind %q", job.Kind)
	}
	res.ResetOK = resetPeakRSS()
	res.RSSBefore = currentRSS()
	t0 := time.Now()
	model, err := dica.Fit(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	res.FitS = time.Since(t0).Seconds()
	res.PeakRSS = peakRSS()
	res.Eigenvalues = head(model.Eigenvalues, 3)
	if job.Extras && ds != nil {
		t0 = time.Now()
		if err := transformAll(model, ds.X); err != nil {
			return nil, err
		}
		res.TransformS = time.Since(t0).Seconds()
		f, ok := model.Map().(approx.Factored)
		if !ok {
			return nil, fmt.Errorf("the Nystrom map is not approx.Factored")
		}
		var bare []float64 // the median of 3, as robust as the fit's -repeat
		for range 3 {
			t0 = time.Now()
			barePass(f, ds.X)
			bare = append(bare, time.Since(t0).Seconds())
		}
		res.BarePassS = median(bare)
	}
	return res, nil
}

// transformAll projects every row of x in blocks of 65536 rows (Transform
// itself uses all cores inside a block).
func transformAll(m *dica.Model, x *mat.Dense) error {
	n, d := x.Dims()
	const block = 1 << 16
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		if _, err := m.Transform(x.Slice(lo, hi, 0, d).(*mat.Dense), dica.TransformOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// barePass computes the raw kernel rows of every row of x (nystrom MapRaw)
// in blocks of dica.DefaultBlockRows rows on all cores, discarding them: the
// floor of a fit.
func barePass(f approx.Factored, x *mat.Dense) {
	n, d := x.Dims()
	const block = dica.DefaultBlockRows
	bufs := make([]*mat.Dense, runtime.GOMAXPROCS(0))
	parallelBlocks(n, block, func(w, lo, hi int) {
		if bufs[w] == nil {
			bufs[w] = mat.NewDense(block, f.RawDim(), nil)
		}
		dst := bufs[w].Slice(0, hi-lo, 0, f.RawDim()).(*mat.Dense)
		f.MapRaw(dst, x.Slice(lo, hi, 0, d).(*mat.Dense))
	})
}

// drain reads one whole pass of src.
func drain(ctx context.Context, src dataset.Source) error {
	r, err := src.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	var b dataset.Block
	for {
		_, err := r.Read(&b, dica.DefaultBlockRows)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Synthetic stream: synthDomains domains of equal size (contiguous rows),
// synthClasses classes, synthDim dimensions. Row r of domain g and class c
// is x = center_c + shift_g + 0.5 e with e standard normal; every value is a
// function of (seed, r), so every pass yields the same rows.
const (
	synthDomains = 16
	synthClasses = 4
	synthDim     = 8
)

// synthSource is a dataset.Source of n synthetic rows generated on the fly.
type synthSource struct {
	n    int64
	seed uint64
}

func (s *synthSource) Schema() dataset.Schema {
	f := make([]string, synthDim)
	for j := range f {
		f[j] = fmt.Sprintf("x%d", j+1)
	}
	return dataset.Schema{Features: f, Labelled: true}
}

func (s *synthSource) Open(ctx context.Context) (dataset.Reader, error) {
	r := &synthReader{src: s, ctx: ctx}
	for g := 0; g < synthDomains; g++ {
		r.domains = append(r.domains, fmt.Sprintf("s%d", g+1))
	}
	for c := 0; c < synthClasses; c++ {
		r.classes = append(r.classes, fmt.Sprintf("c%d", c+1))
	}
	return r, nil
}

type synthReader struct {
	src              *synthSource
	ctx              context.Context
	pos              int64
	domains, classes []string
}

// splitmix64 is the SplitMix64 mixing function.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps 53 bits of h to (0, 1).
func unit(h uint64) float64 { return (float64(h>>11) + 0.5) / (1 << 53) }

func (r *synthReader) Read(b *dataset.Block, maxRows int) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n := r.src.n
	if r.pos >= n {
		return 0, io.EOF
	}
	rows := int(min(int64(maxRows), n-r.pos))
	b.Reset(rows, synthDim, true, 0)
	for i := 0; i < rows; i++ {
		p := r.pos + int64(i)
		g := int(p * synthDomains / n)
		h := splitmix64(r.src.seed ^ uint64(p)*0x2545f4914f6cdd1d)
		c := int(h % synthClasses)
		b.Domain[i] = g
		b.Label[i] = c
		x := b.X[i*synthDim : (i+1)*synthDim]
		for j := 0; j < synthDim; j += 2 {
			h = splitmix64(h)
			u1 := unit(h)
			h = splitmix64(h)
			u2 := unit(h)
			rad := math.Sqrt(-2 * math.Log(u1))
			s, co := math.Sincos(2 * math.Pi * u2)
			x[j] = 0.5 * rad * co
			x[j+1] = 0.5 * rad * s
		}
		for j := range x {
			// class centers on the axes, domain shifts along a diagonal
			if j == c || j == c+synthClasses {
				x[j] += 2
			}
			x[j] += 0.1 * float64(g) * float64(j%3)
		}
	}
	b.Rows = rows
	r.pos += int64(rows)
	return rows, nil
}

func (r *synthReader) Domains() []string { return r.domains }
func (r *synthReader) Classes() []string { return r.classes }
func (r *synthReader) Close() error      { return nil }

// peerResult is one run of numpy_dica.py.
type peerResult struct {
	loadS, featS, solveS, fitS float64
	peakRSS                    int64
	n                          int
	line                       string
}

var peerLine = regexp.MustCompile(`n=(\d+) .*load=([0-9.]+)s features=([0-9.]+)s stats\+solve=([0-9.]+)s .*fit_total=([0-9.]+)s`)

// peerAvailable reports whether the peer can run, with the reason when not.
func peerAvailable() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "..", "shared", "peers", "numpy_dica.py")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s is absent", script)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import numpy, scipy, sklearn").CombinedOutput(); err != nil {
		return "", fmt.Errorf("/usr/bin/python3 cannot import numpy, scipy and sklearn: %v %s", err, bytes.TrimSpace(out))
	}
	return script, nil
}

// runPeer runs the peer on n labelled cells (0: all) and parses its timings;
// the peak RSS is the child's ru_maxrss.
func runPeer(ctx context.Context, script string, n, m int, method string) (*peerResult, error) {
	dir, err := dataPath("multicenter16_cytof")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", script, dir, strconv.Itoa(m), "10", strconv.Itoa(n), method)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	mt := peerLine.FindStringSubmatch(out.String())
	if mt == nil {
		return nil, fmt.Errorf("peer: no timing line in %q", out.String())
	}
	r := &peerResult{line: strings.TrimSpace(out.String())}
	r.n, _ = strconv.Atoi(mt[1])
	r.loadS, _ = strconv.ParseFloat(mt[2], 64)
	r.featS, _ = strconv.ParseFloat(mt[3], 64)
	r.solveS, _ = strconv.ParseFloat(mt[4], 64)
	r.fitS, _ = strconv.ParseFloat(mt[5], 64)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peakRSS = ru.Maxrss << 10 // KB on Linux
	}
	return r, nil
}

// scaleParent is the state of the parent of a scale run: the settings,
// where it reports, and the points the plots need.
type scaleParent struct {
	ctx      context.Context
	cfg      scaleConfig
	rep      *reporter
	allProcs int // GOMAXPROCS of the runs that do not vary it
	prec     int // precision of the current Go fits
}

// scalePt is a point of a plot: x (cells or m), fit seconds and peak RSS
// in MB.
type scalePt struct{ x, t, rss float64 }

// scaleRun runs the parent: every measurement in a child.
func scaleRun(ctx context.Context, cfg scaleConfig, rep *reporter, out string) error {
	nproc := runtime.NumCPU()
	rep.note("machine: %d CPUs, load average at start %s", nproc, loadAvg())
	p := &scaleParent{ctx: ctx, cfg: cfg, rep: rep, allProcs: runtime.GOMAXPROCS(0)}
	var curves map[string][]scalePt
	var vsM []scalePt
	for i, prec := range cfg.precs {
		p.prec = prec
		c, dicaAll, err := p.vsN()
		if err != nil {
			return err
		}
		if dicaAll != nil && dicaAll.BarePassS > 0 {
			if err := p.transformRow(dicaAll); err != nil {
				return err
			}
		}
		m, err := p.vsM()
		if err != nil {
			return err
		}
		if err := p.vsProcs(); err != nil {
			return err
		}
		if i == 0 { // the plots show the first precision
			curves, vsM = c, m
		}
	}
	var err error
	var peerPts []scalePt
	if cfg.peer {
		if peerPts, err = p.peer(); err != nil {
			return err
		}
	}
	rep.note("load average at end %s", loadAvg())
	if out == "" {
		return nil
	}
	return p.plots(out, curves, vsM, peerPts)
}

// job describes a child measurement with the run's seed.
func (p *scaleParent) job(kind, method string, n int, all bool, m, procs int, extras bool) scaleJob {
	return scaleJob{Kind: kind, Method: method, N: n, All: all, M: m, Procs: procs, Extras: extras, Seed: p.cfg.seed, Precision: p.prec}
}

// fitRow reports a fit measured by a child, under kind, with extra values.
func (p *scaleParent) fitRow(kind string, r *scaleResult, extra obj) error {
	conf := obj{{"method", r.Job.Method}, {"data", dataName(r.Job)}, {"cells", r.Cells}, {"m", r.Job.M}, {"gomaxprocs", r.GOMAXPROCS}, {"precision", precisionOf(r.Job)}}
	vals := obj{{"fit_s", r.FitS}, {"peak_rss_mb", mb(r.PeakRSS)}, {"rss_before_fit_mb", mb(r.RSSBefore)}}
	if r.GenPassS > 0 {
		vals = append(vals, field{"gen_pass_s", r.GenPassS})
	}
	if len(r.FitTimesS) > 1 {
		vals = append(vals, field{"fit_times_s", r.FitTimesS})
	}
	return p.rep.add(kind, conf, append(vals, extra...))
}

// vsN measures DICA (labelled cells) and UDICA (all cells) at each n, and
// the synthetic stream; the last DICA run also measures the transform and
// the bare pass, and is returned. The curves are keyed "dica", "udica"
// and "stream".
func (p *scaleParent) vsN() (map[string][]scalePt, *scaleResult, error) {
	cfg := p.cfg
	curves := map[string][]scalePt{}
	var dicaAll *scaleResult
	for _, method := range []string{"dica", "udica"} {
		for i, n := range cfg.ns {
			last := i == len(cfg.ns)-1
			r, err := cfg.runChild(p.ctx, p.job("cytof", method, n, method == "udica", cfg.rank, p.allProcs, method == "dica" && last))
			if err != nil {
				return nil, nil, err
			}
			if method == "dica" && last {
				dicaAll = r
			}
			curves[method] = append(curves[method], scalePt{float64(r.Cells), r.FitS, mb(r.PeakRSS)})
			if err := p.fitRow("fit vs n", r, nil); err != nil {
				return nil, nil, err
			}
		}
	}
	if cfg.stream > 0 {
		r, err := cfg.runChild(p.ctx, p.job("stream", "dica", cfg.stream, false, cfg.rank, p.allProcs, false))
		if err != nil {
			return nil, nil, err
		}
		curves["stream"] = append(curves["stream"], scalePt{float64(r.Cells), r.FitS, mb(r.PeakRSS)})
		if err := p.fitRow("fit vs n", r, nil); err != nil {
			return nil, nil, err
		}
	}
	return curves, dicaAll, nil
}

// transformRow reports the transform throughput and the bare kernel-row
// pass of the run r, against its fit.
func (p *scaleParent) transformRow(r *scaleResult) error {
	return p.rep.add("transform and bare kernel-row pass", obj{{"method", "dica"}, {"cells", r.Cells}, {"m", p.cfg.rank}, {"gomaxprocs", r.GOMAXPROCS}, {"precision", precisionOf(r.Job)}},
		obj{{"transform_cells_per_s", float64(r.Cells) / r.TransformS}, {"transform_s", r.TransformS},
			{"bare_pass_s", r.BarePassS}, {"fit_s", r.FitS}, {"fit_over_bare_pass", r.FitS / r.BarePassS}})
}

// vsM measures DICA on the fixed cells at each m.
func (p *scaleParent) vsM() ([]scalePt, error) {
	var vsM []scalePt
	for _, m := range p.cfg.ms {
		r, err := p.cfg.runChild(p.ctx, p.job("cytof", "dica", p.cfg.fixedN, false, m, p.allProcs, false))
		if err != nil {
			return nil, err
		}
		vsM = append(vsM, scalePt{float64(m), r.FitS, mb(r.PeakRSS)})
		if err := p.fitRow("fit vs m", r, nil); err != nil {
			return nil, err
		}
	}
	return vsM, nil
}

// vsProcs measures DICA on the fixed cells at each GOMAXPROCS, each time
// against the first.
func (p *scaleParent) vsProcs() error {
	var byProcs []*scaleResult
	for _, procs := range p.cfg.procs {
		r, err := p.cfg.runChild(p.ctx, p.job("cytof", "dica", p.cfg.fixedN, false, p.cfg.rank, procs, false))
		if err != nil {
			return err
		}
		byProcs = append(byProcs, r)
		extra := obj{}
		if len(byProcs) > 1 {
			extra = obj{{"time_over_first", r.FitS / byProcs[0].FitS}}
		}
		if err := p.fitRow("GOMAXPROCS", r, extra); err != nil {
			return err
		}
	}
	return nil
}

// peer runs the numpy peer, when it is available, on the cells of each n
// (DICA) and on the fixed cells (UDICA), each beside a Go fit on the same
// number of labelled cells, and returns the peer's DICA points.
func (p *scaleParent) peer() ([]scalePt, error) {
	cfg := p.cfg
	script, err := peerAvailable()
	if err != nil {
		p.rep.note("peer skipped: %v", err)
		return nil, nil
	}
	type pj struct {
		method string
		n      int
	}
	var pjs []pj
	for _, n := range cfg.ns {
		pjs = append(pjs, pj{"dica", n})
	}
	pjs = append(pjs, pj{"udica", cfg.fixedN})
	var pts []scalePt
	for _, j := range pjs {
		pr, err := runPeer(p.ctx, script, j.n, cfg.rank, j.method)
		if err != nil {
			return nil, err
		}
		if j.method == "dica" {
			pts = append(pts, scalePt{float64(pr.n), pr.fitS, mb(pr.peakRSS)})
		}
		for _, prec := range cfg.precs {
			// Go on the same number of labelled cells (UDICA too: the
			// peer drops ungated cells).
			p.prec = prec
			gr, err := cfg.runChild(p.ctx, p.job("cytof", j.method, j.n, false, cfg.rank, p.allProcs, false))
			if err != nil {
				return nil, err
			}
			if err := p.rep.add("peer (numpy_dica.py, same run)", obj{{"method", j.method}, {"cells", pr.n}, {"m", cfg.rank}, {"precision", precisionOf(gr.Job)}},
				obj{{"peer_fit_s", pr.fitS}, {"peer_features_s", pr.featS}, {"peer_stats_solve_s", pr.solveS}, {"peer_load_s", pr.loadS},
					{"peer_peak_rss_mb", mb(pr.peakRSS)}, {"go_fit_s", gr.FitS}, {"go_peak_rss_mb", mb(gr.PeakRSS)},
					{"time_ratio_go_over_peer", gr.FitS / pr.fitS}, {"rss_ratio_go_over_peer", float64(gr.PeakRSS) / float64(pr.peakRSS)}}); err != nil {
				return nil, err
			}
		}
	}
	return pts, nil
}

// plots draws scale_time_vs_n.png and scale_rss_vs_n.png (the curves, and
// the peer's points) and, with runs vs m, scale_time_vs_m.png into the
// folder out.
func (p *scaleParent) plots(out string, curves map[string][]scalePt, vsM, peerPts []scalePt) error {
	toSeries := func(name string, ps []scalePt, y func(scalePt) float64) series {
		s := series{name: name}
		for _, q := range ps {
			s.x = append(s.x, q.x)
			s.y = append(s.y, y(q))
		}
		return s
	}
	t := func(q scalePt) float64 { return q.t }
	rss := func(q scalePt) float64 { return q.rss }
	nameOf := map[string]string{"dica": "Go DICA (labelled cells)", "udica": "Go UDICA (all cells)", "stream": "Go DICA, synthetic stream"}
	var ts, rs []series
	for _, k := range []string{"dica", "udica", "stream"} {
		if len(curves[k]) > 0 {
			ts = append(ts, toSeries(nameOf[k], curves[k], t))
			rs = append(rs, toSeries(nameOf[k], curves[k], rss))
		}
	}
	if len(peerPts) > 0 {
		ts = append(ts, toSeries("numpy peer DICA", peerPts, t))
		rs = append(rs, toSeries("numpy peer DICA", peerPts, rss))
	}
	rank := p.cfg.rank
	files := []string{filepath.Join(out, "scale_time_vs_n.png"), filepath.Join(out, "scale_rss_vs_n.png")}
	if err := linePlot(files[0], fmt.Sprintf("Fit time vs n (Nystrom m = %d)", rank), "cells n", "fit wall seconds", plotOpts{logX: true, logY: true, legendLeft: true}, ts, nil); err != nil {
		return err
	}
	if err := linePlot(files[1], fmt.Sprintf("Peak RSS vs n (Nystrom m = %d)", rank), "cells n", "peak RSS (MB)", plotOpts{logX: true, logY: true, legendLeft: true}, rs, nil); err != nil {
		return err
	}
	if len(vsM) > 0 {
		f := filepath.Join(out, "scale_time_vs_m.png")
		if err := linePlot(f, "DICA fit time vs m (labelled cells)", "rank m", "fit wall seconds", plotOpts{logX: true, logY: true},
			[]series{toSeries("Go DICA", vsM, t)}, nil); err != nil {
			return err
		}
		files = append(files, f)
	}
	p.rep.note("plots: %s", strings.Join(files, ", "))
	return nil
}

// precisionOf returns the precision of a job's fit in bits.
func precisionOf(j scaleJob) int {
	if j.Precision == 0 {
		return 64
	}
	return j.Precision
}

// dataName describes the data of a job.
func dataName(j scaleJob) string {
	switch {
	case j.Kind == "stream":
		return "synthetic stream"
	case j.All:
		return "cytof all"
	default:
		return "cytof labelled"
	}
}
