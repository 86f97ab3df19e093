// Experiment scale: fit time and peak memory against the number of cells n,
// the rank m and the number of cores, side by side with the numpy peer.
//
//	go run ./bench scale [-json] [-out DIR] [-n 10000,100000,300000,all]
//	    [-m 125,250,500,1000] [-rank 500] [-stream 10000000] [-procs 1,2]
//	    [-peer=true] [-repeat 1]
//
// Every measurement runs in a child process (this program, re-executed with
// GOMAXPROCS set), so that each peak resident set size (VmHWM, reset after
// the data is loaded) belongs to one run. Data: multicenter16_cytof, log(1+|x|)
// (../shared/data or $DICA_DATA), held in memory by the child; supervised DICA
// uses the 693,643 labelled cells, UDICA all 929,685 (ungated included);
// smaller n are seeded subsamples. Fits: Nystrom, uniform landmarks, RBF
// sigma = 1, eps = 1e-4, lambda = 0, k = 10 (the setting of PERFORMANCE.md).
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
//     in blocks on all cores) against the whole fit (target fit <= 1.3 x the
//     bare pass);
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
	"slices"
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

// scaleChild makes one measurement in this process.
func scaleChild(ctx context.Context, job scaleJob) (*scaleResult, error) {
	res := &scaleResult{Job: job, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	method, err := exact.ParseMethod(job.Method)
	if err != nil {
		return nil, err
	}
	cfg := dica.Config{Method: method, Solver: dica.Nystrom, Rank: job.M, Sigma: 1, Epsilon: 1e-4, Components: 10, Seed: job.Seed}
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

// scaleRun runs the parent: every measurement in a child.
func scaleRun(ctx context.Context, cfg scaleConfig, rep *reporter, out string) error {
	nproc := runtime.NumCPU()
	rep.note("machine: %d CPUs, load average at start %s", nproc, loadAvg())
	allProcs := runtime.GOMAXPROCS(0)
	job := func(kind, method string, n int, all bool, m, procs int, extras bool) scaleJob {
		return scaleJob{Kind: kind, Method: method, N: n, All: all, M: m, Procs: procs, Extras: extras, Seed: cfg.seed}
	}
	fitRow := func(kind string, r *scaleResult, extra obj) error {
		conf := obj{{"method", r.Job.Method}, {"data", dataName(r.Job)}, {"cells", r.Cells}, {"m", r.Job.M}, {"gomaxprocs", r.GOMAXPROCS}}
		vals := obj{{"fit_s", r.FitS}, {"peak_rss_mb", mb(r.PeakRSS)}, {"rss_before_fit_mb", mb(r.RSSBefore)}}
		if r.GenPassS > 0 {
			vals = append(vals, field{"gen_pass_s", r.GenPassS})
		}
		if len(r.FitTimesS) > 1 {
			vals = append(vals, field{"fit_times_s", r.FitTimesS})
		}
		return rep.add(kind, conf, append(vals, extra...))
	}

	// Time vs n.
	type pt struct{ x, t, rss float64 }
	curves := map[string][]pt{}
	var dicaAll *scaleResult // the run with the transform and the bare pass
	for _, method := range []string{"dica", "udica"} {
		for i, n := range cfg.ns {
			last := i == len(cfg.ns)-1
			r, err := cfg.runChild(ctx, job("cytof", method, n, method == "udica", cfg.rank, allProcs, method == "dica" && last))
			if err != nil {
				return err
			}
			if method == "dica" && last {
				dicaAll = r
			}
			curves[method] = append(curves[method], pt{float64(r.Cells), r.FitS, mb(r.PeakRSS)})
			if err := fitRow("fit vs n", r, nil); err != nil {
				return err
			}
		}
	}
	if cfg.stream > 0 {
		r, err := cfg.runChild(ctx, job("stream", "dica", cfg.stream, false, cfg.rank, allProcs, false))
		if err != nil {
			return err
		}
		curves["stream"] = append(curves["stream"], pt{float64(r.Cells), r.FitS, mb(r.PeakRSS)})
		if err := fitRow("fit vs n", r, nil); err != nil {
			return err
		}
	}

	// Transform throughput and the bare pass.
	if dicaAll != nil && dicaAll.BarePassS > 0 {
		if err := rep.add("transform and bare kernel-row pass", obj{{"method", "dica"}, {"cells", dicaAll.Cells}, {"m", cfg.rank}, {"gomaxprocs", dicaAll.GOMAXPROCS}},
			obj{{"transform_cells_per_s", float64(dicaAll.Cells) / dicaAll.TransformS}, {"transform_s", dicaAll.TransformS},
				{"bare_pass_s", dicaAll.BarePassS}, {"fit_s", dicaAll.FitS}, {"fit_over_bare_pass", dicaAll.FitS / dicaAll.BarePassS}}); err != nil {
			return err
		}
	}

	// Time vs m.
	var vsM []pt
	for _, m := range cfg.ms {
		r, err := cfg.runChild(ctx, job("cytof", "dica", cfg.fixedN, false, m, allProcs, false))
		if err != nil {
			return err
		}
		vsM = append(vsM, pt{float64(m), r.FitS, mb(r.PeakRSS)})
		if err := fitRow("fit vs m", r, nil); err != nil {
			return err
		}
	}

	// GOMAXPROCS.
	var byProcs []*scaleResult
	for _, p := range cfg.procs {
		r, err := cfg.runChild(ctx, job("cytof", "dica", cfg.fixedN, false, cfg.rank, p, false))
		if err != nil {
			return err
		}
		byProcs = append(byProcs, r)
		extra := obj{}
		if len(byProcs) > 1 {
			extra = obj{{"time_over_first", r.FitS / byProcs[0].FitS}}
		}
		if err := fitRow("GOMAXPROCS", r, extra); err != nil {
			return err
		}
	}

	// The peer.
	var peerPts []pt
	if cfg.peer {
		script, err := peerAvailable()
		if err != nil {
			rep.note("peer skipped: %v", err)
		} else {
			type pj struct {
				method string
				n      int
			}
			var pjs []pj
			for _, n := range cfg.ns {
				pjs = append(pjs, pj{"dica", n})
			}
			pjs = append(pjs, pj{"udica", cfg.fixedN})
			for _, p := range pjs {
				pr, err := runPeer(ctx, script, p.n, cfg.rank, p.method)
				if err != nil {
					return err
				}
				// Go on the same number of labelled cells (UDICA too: the peer
				// drops ungated cells).
				gr, err := cfg.runChild(ctx, job("cytof", p.method, p.n, false, cfg.rank, allProcs, false))
				if err != nil {
					return err
				}
				if p.method == "dica" {
					peerPts = append(peerPts, pt{float64(pr.n), pr.fitS, mb(pr.peakRSS)})
				}
				if err := rep.add("peer (numpy_dica.py, same run)", obj{{"method", p.method}, {"cells", pr.n}, {"m", cfg.rank}},
					obj{{"peer_fit_s", pr.fitS}, {"peer_features_s", pr.featS}, {"peer_stats_solve_s", pr.solveS}, {"peer_load_s", pr.loadS},
						{"peer_peak_rss_mb", mb(pr.peakRSS)}, {"go_fit_s", gr.FitS}, {"go_peak_rss_mb", mb(gr.PeakRSS)},
						{"time_ratio_go_over_peer", gr.FitS / pr.fitS}, {"rss_ratio_go_over_peer", float64(gr.PeakRSS) / float64(pr.peakRSS)}}); err != nil {
					return err
				}
			}
		}
	}
	rep.note("load average at end %s", loadAvg())
	if out == "" {
		return nil
	}
	toSeries := func(name string, ps []pt, y func(pt) float64) series {
		s := series{name: name}
		for _, p := range ps {
			s.x = append(s.x, p.x)
			s.y = append(s.y, y(p))
		}
		return s
	}
	t := func(p pt) float64 { return p.t }
	rss := func(p pt) float64 { return p.rss }
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
	files := []string{filepath.Join(out, "scale_time_vs_n.png"), filepath.Join(out, "scale_rss_vs_n.png")}
	if err := linePlot(files[0], fmt.Sprintf("Fit time vs n (Nystrom m = %d)", cfg.rank), "cells n", "fit wall seconds", plotOpts{logX: true, logY: true, legendLeft: true}, ts, nil); err != nil {
		return err
	}
	if err := linePlot(files[1], fmt.Sprintf("Peak RSS vs n (Nystrom m = %d)", cfg.rank), "cells n", "peak RSS (MB)", plotOpts{logX: true, logY: true, legendLeft: true}, rs, nil); err != nil {
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
	rep.note("plots: %s", strings.Join(files, ", "))
	return nil
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
