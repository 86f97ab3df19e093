package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// TestMain lets the test binary act as a child process of scale.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && len(os.Args) > 2 && os.Args[1] == "scale" {
		if err := runScale(os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// jsonLines parses the output of a JSON reporter.
func jsonLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// ofKind returns the records of one kind.
func ofKind(recs []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["kind"] == kind {
			out = append(out, r)
		}
	}
	return out
}

func num(t *testing.T, r map[string]any, part, key string) float64 {
	t.Helper()
	v, ok := r[part].(map[string]any)[key].(float64)
	if !ok {
		t.Fatalf("%s.%s missing or not a number in %v", part, key, r)
	}
	return v
}

func requireFile(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		t.Fatalf("plot %s not written: %v", path, err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("%s is not a PNG", path)
	}
}

func TestToyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	rep := newReporter(&buf, "toy", &options{json: true})
	cfg := toyConfig{seed: 3, size: 25, domains: 4, test: 3, solver: "exact", rank: 50, exactMax: 1000}
	if err := toyRun(context.Background(), cfg, rep, dir); err != nil {
		t.Fatal(err)
	}
	requireFile(t, filepath.Join(dir, "toy_projections.png"))
	rows := ofKind(jsonLines(t, buf.Bytes()), "distributional variance in the projection")
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4 (one per method)", len(rows))
	}
	want := []string{"kpca", "udica", "coir", "dica"}
	for i, r := range rows {
		if r["experiment"] != "toy" || r["config"].(map[string]any)["method"] != want[i] {
			t.Errorf("row %d: %v", i, r)
		}
		for _, k := range []string{"dv_train", "dv_test"} {
			// A distributional variance is (1/N) sum ||mu_i - mu_bar||^2 >= 0
			// and, for a kernel bounded by 1, at most 2.
			if v := num(t, r, "values", k); !(v >= 0 && v <= 2) {
				t.Errorf("%s %s = %v, want in [0, 2]", want[i], k, v)
			}
		}
	}
}

func TestBlockVarianceIdenticalDomains(t *testing.T) {
	// Two domains holding the same points have distributional variance 0.
	ds := toy.Regression(toy.Options{Seed: 1, MeanSize: 20, Domains: 2})
	n := ds.N()
	x := mat.NewDense(2*n, ds.D(), nil)
	x.Stack(ds.X, ds.X)
	doms := make([]string, 2*n)
	for i := range doms {
		doms[i] = []string{"a", "b"}[i/n]
	}
	twin, err := dataset.New(x, doms)
	if err != nil {
		t.Fatal(err)
	}
	got := blockDistributionalVariance(kernel.RBF{Sigma: 1}, twin)
	if math.Abs(got) > 1e-12 {
		t.Errorf("variance of identical domains = %v, want 0", got)
	}
}

func TestBlockDistributionalVariance(t *testing.T) {
	ds := toy.Regression(toy.Options{Seed: 2, MeanSize: 60, Domains: 3})
	k := kernel.RBF{Sigma: 1.3}
	var g mat.Dense
	k.Block(&g, ds.X, ds.X)
	r := g.RawMatrix()
	want := exact.DistributionalVariance(mat.NewSymDense(r.Rows, r.Data), ds.Domain, ds.NumDomains())
	got := blockDistributionalVariance(k, ds)
	if math.Abs(got-want) > 1e-12*math.Max(1, want) {
		t.Errorf("block tr(KQ) = %v, exact.DistributionalVariance = %v", got, want)
	}
}

func TestGvHDCore(t *testing.T) {
	ds := toy.Regression(toy.Options{Seed: 4, MeanSize: 40, Domains: 2})
	ds.Target, ds.TargetNames = nil, nil
	n := ds.N()
	var buf bytes.Buffer
	rep := newReporter(&buf, "gvhd", &options{json: true})
	cfg := gvhdConfig{ms: []int{10, n}, exactN: n, sigma: 1.5, transform: "none", seed: 1}
	dir := t.TempDir()
	if err := gvhdRun(context.Background(), cfg, ds, rep, dir); err != nil {
		t.Fatal(err)
	}
	requireFile(t, filepath.Join(dir, "gvhd_variance.png"))
	recs := jsonLines(t, buf.Bytes())
	in := ofKind(recs, "input distributional variance (exact RBF Gram)")
	if len(in) != 2 {
		t.Fatalf("got %d input rows, want 2", len(in))
	}
	// The subsample is all cells here: both exact values agree.
	a, b := num(t, in[0], "values", "tr_KQ"), num(t, in[1], "values", "tr_KQ")
	if math.Abs(a-b) > 1e-12 {
		t.Errorf("tr(KQ) subsample %v != block sums %v", a, b)
	}
	rows := ofKind(recs, "variance vs m (nystrom, uniform landmarks)")
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4", len(rows))
	}
	// With every point a landmark, Phi Phi^T = K (up to the eigenvalue
	// cutoff) and the feature-space variance is the exact one.
	for _, r := range rows[2:] {
		if got := num(t, r, "values", "input_dv_features"); math.Abs(got-b) > 1e-6*b {
			t.Errorf("m = n: input variance from features %v, exact %v", got, b)
		}
	}
}

func TestRankCore(t *testing.T) {
	train, test := toy.ClassificationSplit(toy.Options{Seed: 5, MeanSize: 60, Domains: 4, Classes: 3}, 3)
	cfg := rankConfig{ms: []int{8, 120}, fitCells: 0, svmCells: 150, testCells: 0, exactN: 120, kerrN: 60, sigma: 1.5, seed: 1}
	splits := []rankSplit{{"a->b", train, test}, {"b->a", test, train}}
	var buf bytes.Buffer
	rep := newReporter(&buf, "rank", &options{json: true})
	dir := t.TempDir()
	if err := rank(context.Background(), cfg, splits, rep, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"rank_accuracy.png", "rank_error.png", "rank_kernel_error.png"} {
		requireFile(t, filepath.Join(dir, f))
	}
	recs := jsonLines(t, buf.Bytes())
	if got, want := len(ofKind(recs, "leave-centers-out")), 2*len(rankSolvers)*len(cfg.ms); got != want {
		t.Fatalf("got %d accuracy rows, want %d", got, want)
	}
	for _, r := range ofKind(recs, "leave-centers-out") {
		if a := num(t, r, "values", "accuracy"); !(a >= 0 && a <= 1) {
			t.Errorf("accuracy %v out of [0, 1]: %v", a, r)
		}
	}
	// Nystrom with every one of the exact path's cells as a landmark is the
	// exact path: the eigenvalues agree and the subspaces coincide.
	found := false
	for _, r := range ofKind(recs, "agreement with the exact path") {
		c := r["config"].(map[string]any)
		if c["solver"] != "nystrom-uniform" || c["m"].(float64) != 120 {
			continue
		}
		found = true
		if e := num(t, r, "values", "eig_rel_err_max"); e > 1e-5 {
			t.Errorf("m = n: eigenvalue relative error %v, want ~0", e)
		}
		if a := num(t, r, "values", "max_angle_deg"); a > 0.1 {
			t.Errorf("m = n: largest principal angle %v degrees, want ~0", a)
		}
	}
	if !found {
		t.Error("no agreement row for nystrom-uniform at m = n")
	}
}

func TestSynthSourceRepeatable(t *testing.T) {
	s := &synthSource{n: 5000, seed: 9}
	read := func(block int) *dataset.Dataset {
		ds, err := dataset.Collect(context.Background(), sourceWithBlock{s, block})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	a, b := read(1024), read(77)
	if a.N() != 5000 || !mat.Equal(a.X, b.X) {
		t.Fatal("two passes with different block sizes differ")
	}
	for p := 1; p < a.N(); p++ {
		if a.Domain[p] < a.Domain[p-1] {
			t.Fatalf("domains not contiguous at row %d", p)
		}
	}
	if a.NumDomains() != synthDomains || a.NumClasses() != synthClasses {
		t.Errorf("%d domains, %d classes", a.NumDomains(), a.NumClasses())
	}
	// The noise is 0.5 N(0, 1): the column means are the shifts, and the
	// overall standard deviation of a shift-free column is about 0.5.
	var sum, sq float64
	for p := 0; p < a.N(); p++ {
		v := a.X.At(p, 0)
		if a.Label[p] == 0 {
			v -= 2 // class 0 center on axis 0
		}
		sum += v
		sq += v * v
	}
	m := sum / float64(a.N())
	sd := math.Sqrt(sq/float64(a.N()) - m*m)
	if math.Abs(m) > 0.05 || math.Abs(sd-0.5) > 0.03 {
		t.Errorf("column 0 without centers: mean %v sd %v, want 0 and 0.5", m, sd)
	}
}

// sourceWithBlock reads a source in blocks of a given size.
type sourceWithBlock struct {
	dataset.Source
	block int
}

func (s sourceWithBlock) Open(ctx context.Context) (dataset.Reader, error) {
	r, err := s.Source.Open(ctx)
	return blockReader{r, s.block}, err
}

type blockReader struct {
	dataset.Reader
	block int
}

func (r blockReader) Read(b *dataset.Block, max int) (int, error) {
	return r.Reader.Read(b, min(max, r.block))
}

func TestScaleChildProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := scaleConfig{exe: exe, repeat: 2}
	r, err := cfg.runChild(context.Background(), scaleJob{Kind: "stream", Method: "dica", N: 20000, M: 40, Procs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.GOMAXPROCS != 1 || r.Cells != 20000 || len(r.FitTimesS) != 2 || !(r.FitS > 0) || r.PeakRSS <= 0 {
		t.Errorf("child result %+v", r)
	}
	// 4 classes: at most 3 positive eigenvalues, the first one positive.
	if len(r.Eigenvalues) == 0 || !(r.Eigenvalues[0] > 0) {
		t.Errorf("eigenvalues %v", r.Eigenvalues)
	}
}

func TestPeerLine(t *testing.T) {
	line := "dica n=693643 m=500 k=10 load=30.12s features=12.01s stats+solve=1.75s transform=0.50s fit_total=13.76s\n"
	m := peerLine.FindStringSubmatch(line)
	if m == nil || m[1] != "693643" || m[2] != "30.12" || m[3] != "12.01" || m[4] != "1.75" || m[5] != "13.76" {
		t.Errorf("parsed %q", m)
	}
}

func TestParseCounts(t *testing.T) {
	got, err := parseCounts("1e4, 200,all")
	if err != nil || len(got) != 3 || got[0] != 10000 || got[1] != 200 || got[2] != 0 {
		t.Errorf("parseCounts = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1.5", "x"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q): no error", bad)
		}
	}
}

func TestTextReporter(t *testing.T) {
	var buf bytes.Buffer
	rep := newReporter(&buf, "x", &options{})
	rep.add("t", obj{{"a", 1}}, obj{{"v", 0.123456}, {"w", math.NaN()}})
	rep.add("t", obj{{"a", 2}}, obj{{"v", 2.0}})
	if err := rep.flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"x: t", "0.1235", "NaN", "-"} {
		if !strings.Contains(out, want) {
			t.Errorf("table %q lacks %q", out, want)
		}
	}
	// JSON: NaN becomes null, order is kept.
	buf.Reset()
	rep = newReporter(&buf, "x", &options{json: true})
	rep.add("t", obj{{"b", 1}, {"a", 2}}, obj{{"v", math.NaN()}})
	if got, want := strings.TrimSpace(buf.String()), `{"experiment":"x","kind":"t","config":{"b":1,"a":2},"values":{"v":null}}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
}

// TestJSONLFile checks that with -out every record and note goes to
// <out>/<experiment>.jsonl in text mode too, and that a new run truncates
// the file.
func TestJSONLFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	var buf bytes.Buffer
	o := &options{out: dir}
	rep := newReporter(&buf, "x", o)
	if err := rep.add("t", obj{{"a", 1}}, obj{{"v", 0.5}}); err != nil {
		t.Fatal(err)
	}
	rep.note("hello %d", 7)
	if err := rep.add("t", obj{{"a", 2}}, obj{{"v", math.Inf(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := rep.flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "{") {
		t.Errorf("text mode printed JSON: %q", buf.String())
	}
	path := filepath.Join(dir, "x.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"experiment":"x","kind":"t","config":{"a":1},"values":{"v":0.5}}
{"experiment":"x","kind":"note","message":"hello 7"}
{"experiment":"x","kind":"t","config":{"a":2},"values":{"v":null}}
`
	if string(b) != want {
		t.Errorf("%s:\n%s\nwant\n%s", path, b, want)
	}
	// A row type of another experiment (lanczos prints its own structs).
	type row struct {
		Problem string `json:"problem"`
		N       int    `json:"n"`
	}
	o2 := &options{out: dir}
	if err := o2.writeJSONL("x", row{"p", 3}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"problem":"p","n":3}`+"\n" {
		t.Errorf("a new run did not truncate %s: %q", path, b)
	}
	if err := (&options{}).writeJSONL("x", row{}); err != nil {
		t.Errorf("without -out: %v", err)
	}
}

func TestPeakRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status")
	}
	resetPeakRSS()
	before := peakRSS()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after := peakRSS()
	if before <= 0 || after-before < 48<<20 {
		t.Errorf("peak RSS %d -> %d after touching 64 MB", before, after)
	}
	runtimeKeep(buf)
}

// runtimeKeep keeps buf alive until the measurement is done.
func runtimeKeep(buf []byte) {
	if len(buf) == 1 {
		panic("unreachable")
	}
}
