// The exact experiment: the exact (n x n) canonical DICA of package exact
// against the numpy/scipy peer ../shared/peers/numpy_exact.py on the SAME
// cells, at several n.
//
//	go run ./bench exact [-n 1000,2000,4000,10000] [-peer-max 4000] [-json]
//
// For each n, n labelled cells are drawn (seeded) from the 16 CyTOF samples
// and written, raw, in the benchmark's layout (sample{i}.csv, labels{i}.csv)
// into a temporary folder; the peer reads exactly those cells (it subsamples
// only when it has more than n) and applies log(1+|x|) as we do. Both solve
// (1/n) K P K b = gamma (K Q K + K + lambda I) b with sigma = 1, eps = 1e-4,
// lambda = 0.1, k = 10 (the peer's fixed settings). Reported: our fit
// seconds, the peer's total seconds, their ratio, peak RSS of both, and the
// largest relative difference of the leading eigenvalues (the check that
// both solve the same problem).
package main

import (
	"bytes"
	"context"
	"fmt"
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

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

func init() {
	register("exact", "exact n x n DICA vs the numpy/scipy peer on the same cells", runExact)
}

const exactUsage = `usage: go run ./bench exact [flags]

Times the exact canonical DICA of package exact against
../shared/peers/numpy_exact.py on the same CyTOF cells.`

func runExact(args []string) error {
	fs, o := newFlags("exact", exactUsage)
	nsFlag := fs.String("n", "1000,2000,4000,10000", "comma-separated numbers of cells")
	peerMax := fs.Int("peer-max", 10000, "largest n on which the peer runs")
	seed := fs.Uint64("seed", 1, "random seed of the cell subsample")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ns []int
	for _, f := range strings.Split(*nsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			return fmt.Errorf("-n: bad size %q", f)
		}
		ns = append(ns, n)
	}
	ctx := context.Background()
	rep := newReporter(os.Stdout, "exact", o)
	dir, err := dataPath("multicenter16_cytof")
	if err != nil {
		return skipNoData("exact", err)
	}
	// All labelled cells, raw.
	var files, labels []string
	for s := 1; s <= 16; s++ {
		files = append(files, filepath.Join(dir, fmt.Sprintf("sample%d.csv", s)))
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", s)))
	}
	src, err := csvio.NewSource(files, csvio.Options{Header: csvio.NoHeader, LabelFiles: labels, LabelsIgnore: []string{"0"}})
	if err != nil {
		return err
	}
	all, err := dataset.Collect(ctx, src)
	if err != nil {
		return err
	}
	script, perr := exactPeer()
	if perr != nil {
		rep.note("peer skipped: %v", perr)
	}
	rep.note("machine: %d CPUs, load average at start %s", runtime.NumCPU(), loadAvg())
	for _, n := range ns {
		rows := kernel.SampleRows(all.N(), n, *seed)
		sub := all.Subset(rows)
		sub.Compact()
		// Our fit, on log(1+|x|) of the same cells.
		x := logCopy(sub)
		start := time.Now()
		m, err := exact.Fit(ctx, x, exact.Options{Method: exact.DICA, Components: 10, Lambda: 0.1, Epsilon: 1e-4, Kernel: kernel.RBF{Sigma: 1}})
		if err != nil {
			return fmt.Errorf("n = %d: %w", n, err)
		}
		ours := time.Since(start).Seconds()
		vals := obj{{"fit_s", ours}, {"peak_rss_mb", mb(peakRSS())}, {"eigenvalues", m.Eigenvalues[:m.Positive]}}
		if perr == nil && n <= *peerMax {
			pr, err := runExactPeer(ctx, script, sub)
			if err != nil {
				rep.note("n = %d: peer failed: %v", n, err)
			} else {
				diff := 0.0
				for j := 0; j < m.Positive && j < len(pr.top); j++ {
					diff = max(diff, math.Abs(m.Eigenvalues[j]-pr.top[j])/pr.top[j])
				}
				vals = append(vals, field{"peer_s", pr.total}, field{"ratio", ours / pr.total},
					field{"peer_peak_rss_mb", mb(pr.peakRSS)}, field{"max_rel_eig_diff", diff})
			}
		}
		if err := rep.add("exact vs peer", obj{{"n", sub.N()}, {"method", "dica"}, {"k", 10}, {"lambda", 0.1}, {"sigma", 1.0}}, vals); err != nil {
			return err
		}
	}
	return rep.flush()
}

// logCopy returns the data set with log(1+|x|) applied to a copy of X.
func logCopy(ds *dataset.Dataset) *dataset.Dataset {
	out := *ds
	out.X = mat.DenseCopyOf(ds.X)
	for i := 0; i < ds.N(); i++ {
		log1pAbs(out.X.RawRowView(i))
	}
	return &out
}

type exactPeerResult struct {
	total   float64
	top     []float64
	peakRSS int64
}

func exactPeer() (string, error) {
	script, err := peerAvailable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(script), "numpy_exact.py"), nil
}

var (
	exactPeerTotal = regexp.MustCompile(`total=([0-9.]+)s`)
	exactPeerTop   = regexp.MustCompile(`top eigenvalues \[([^\]]*)\]`)
)

// runExactPeer writes the cells in the benchmark layout and runs the peer.
func runExactPeer(ctx context.Context, script string, ds *dataset.Dataset) (*exactPeerResult, error) {
	dir, err := os.MkdirTemp("", "dica-exact-peer")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for g := range ds.DomainNames {
		var xb, lb strings.Builder
		for p := 0; p < ds.N(); p++ {
			if ds.Domain[p] != g {
				continue
			}
			for j, v := range ds.X.RawRowView(p) {
				if j > 0 {
					xb.WriteByte(',')
				}
				xb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
			xb.WriteByte('\n')
			lb.WriteString(ds.ClassNames[ds.Label[p]] + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%d.csv", g+1)), []byte(xb.String()), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("labels%d.csv", g+1)), []byte(lb.String()), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", script, dir, strconv.Itoa(ds.N()), "10")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	r := &exactPeerResult{}
	mt := exactPeerTotal.FindStringSubmatch(out.String())
	if mt == nil {
		return nil, fmt.Errorf("no timing in %q", out.String())
	}
	r.total, _ = strconv.ParseFloat(mt[1], 64)
	if mt := exactPeerTop.FindStringSubmatch(out.String()); mt != nil {
		for _, f := range strings.Fields(mt[1]) {
			if v, err := strconv.ParseFloat(f, 64); err == nil {
				r.top = append(r.top, v)
			}
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peakRSS = ru.Maxrss << 10
	}
	return r, nil
}
