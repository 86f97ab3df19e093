package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"

	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/toy"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

// TestDistortion checks the distortion model: the identity at s = 0, the
// formula at s > 0, draws that depend on the seed and the domain only, and
// increasing maps.
func TestDistortion(t *testing.T) {
	a := domainDistortion(7, 3, 5)
	b := domainDistortion(7, 3, 5)
	c := domainDistortion(7, 4, 5)
	d := domainDistortion(8, 3, 5)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jc, _ := json.Marshal(c)
	jd, _ := json.Marshal(d)
	if string(ja) != string(jb) || string(ja) == string(jc) || string(ja) == string(jd) {
		t.Errorf("draws: same seed and domain %s %s; other domain %s; other seed %s", ja, jb, jc, jd)
	}
	row := []float64{0, 0.5, 3, 7.5, 12}
	orig := append([]float64(nil), row...)
	a.apply(row, 0, true)
	for j := range row {
		if math.Float64bits(row[j]) != math.Float64bits(orig[j]) {
			t.Fatalf("s = 0 changed channel %d: %v -> %v", j, orig[j], row[j])
		}
	}
	for _, nonlinear := range []bool{false, true} {
		const s = 0.7
		row := append([]float64(nil), orig...)
		a.apply(row, s, nonlinear)
		for j, x := range orig {
			f := x
			if nonlinear && x > 0 {
				f = 10 * math.Pow(x/10, math.Exp(s*0.25*a.Curve[j]))
			}
			want := math.Exp(s*0.25*a.Gain[j])*f + s*a.Offset[j]
			if math.Abs(row[j]-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("nonlinear %v, channel %d: %v -> %v, want %v", nonlinear, j, x, row[j], want)
			}
			// Increasing: a slightly larger input maps higher.
			hi := []float64{0, 0, 0, 0, 0}
			lo := []float64{0, 0, 0, 0, 0}
			hi[j], lo[j] = x+0.01, x
			a.apply(hi, s, nonlinear)
			a.apply(lo, s, nonlinear)
			if !(hi[j] > lo[j]) {
				t.Errorf("nonlinear %v, channel %d: not increasing at %v", nonlinear, j, x)
			}
		}
	}
	// distort applies each domain's own distortion and leaves the input.
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 20, Dim: 2, Classes: 2, Seed: 1})
	x0 := mat.DenseCopyOf(ds.X)
	ts := []distortion{domainDistortion(1, 0, 2), domainDistortion(1, 1, 2), domainDistortion(1, 2, 2)}
	got := distort(ds, ts, 2, true)
	if !mat.Equal(ds.X, x0) {
		t.Error("distort changed its input")
	}
	for p, g := range ds.Domain {
		row := append([]float64(nil), ds.X.RawRowView(p)...)
		ts[g].apply(row, 2, true)
		if !mat.Equal(mat.NewDense(1, 2, row), got.X.Slice(p, p+1, 0, 2)) {
			t.Fatalf("cell %d of domain %d: %v, want %v", p, g, got.X.RawRowView(p), row)
		}
	}
}

// TestShiftRun runs the experiment on toy data (the CyTOF run and its
// comparison with the command are in CI as go run ./bench shift -quick):
// one evaluation per strength and variant, on the same splits, the input
// losing mixing as s grows, a PNG of the requested size and a JSON file.
func TestShiftRun(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 6, MeanSize: 150, Dim: 3, Classes: 3, Seed: 2})
	cfg := shiftConfig{seed: 3, strengths: []float64{0, 3}, cells: 100, train: 3, repeats: 2, methods: []string{"input", "dica"},
		batch: true, nonlinear: true, rank: 20, mixing: 300, quick: true, grid: eval.Grid{Components: []int{2}}}
	var out bytes.Buffer
	rep := newReporter(&out, "shift", &options{})
	res, err := shiftRun(context.Background(), cfg, ds, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strengths) != 2 || len(res.Splits) != 2 || len(res.Distortions) != 6 {
		t.Fatalf("%d strengths, %d splits, %d distortions", len(res.Strengths), len(res.Splits), len(res.Distortions))
	}
	for _, l := range res.Strengths {
		if len(l.Results) != 2 || !l.Results[1].BatchCenter || l.Results[0].BatchCenter {
			t.Fatalf("s = %v: %d variants", l.S, len(l.Results))
		}
		for _, r := range l.Results {
			for i, s := range r.Methods[0].Splits {
				if len(s.Train) != 3 || s.Train[0] != res.Splits[i][0][0] {
					t.Errorf("s = %v: split %d trains on %v, want %v", l.S, i, s.Train, res.Splits[i][0])
				}
			}
		}
	}
	if a, b := inputMixing(res.Strengths[0]), inputMixing(res.Strengths[1]); !(b < a) {
		t.Errorf("input iLISI %v at s = 0, %v at s = 3", a, b)
	}
	// s = 0 is the data: the input's scores equal a direct evaluation.
	splits, err := eval.RandomSplits(ds, cfg.train, cfg.repeats, cfg.seed)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := eval.Evaluate(context.Background(), ds, splits, shiftOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := res.Strengths[0].Results[0].Methods[0].Scores, direct.Methods[0].Scores; len(g) != len(w) || g[0] != w[0] || g[len(g)-1] != w[len(w)-1] {
		t.Errorf("s = 0: input scores %v, direct evaluation %v", g, w)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shift.png")
	if err := shiftPlot(path, res); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 12*96, 5*96)
	if err := writeJSONFile(filepath.Join(dir, "shift.json"), res); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "shift.json"))
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || len(back["strengths"].([]any)) != 2 {
		t.Errorf("shift.json: %v", err)
	}
	if err := rep.flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("dica+bc")) {
		t.Error("no batch-centered rows in the report")
	}
}

// checkPNG decodes a PNG file and checks its size in pixels.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s: %d x %d pixels, want %d x %d", path, b.Dx(), b.Dy(), w, h)
	}
}

// TestPaperRun runs both studies at a small size: one toy seed (the exact
// fits of the paper) and the cytometry protocol on toy classification
// data.
func TestPaperRun(t *testing.T) {
	longtest.Skip(t)
	if testing.Short() {
		t.Skip("exact fits of 2,000 points: skipped with -short")
	}
	cfg := defaultPaperConfig(true)
	cfg.toySeeds = 1
	var out bytes.Buffer
	rep := newReporter(&out, "paper", &options{})
	tr, panels, err := paperToy(context.Background(), cfg, rep, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(panels) != 4 || len(tr.DVTest) != 4 || len(tr.DVTest[0]) != 1 {
		t.Fatalf("%d panels, %d methods", len(panels), len(tr.DVTest))
	}
	// The numbers bench toy reports for seed 1 (README): KPCA 0.00411,
	// DICA 0.02587 on the unseen domains.
	if math.Abs(tr.DVTest[0][0]-0.00411) > 5e-5 || math.Abs(tr.DVTest[3][0]-0.02587) > 5e-5 {
		t.Errorf("toy seed 1: unseen distributional variance KPCA %v, DICA %v; want 0.00411 and 0.02587", tr.DVTest[0][0], tr.DVTest[3][0])
	}
	ds := toy.Classification(toy.Options{Domains: 7, MeanSize: 150, Dim: 3, Classes: 3, Seed: 2})
	cfg.train, cfg.sizes, cfg.rank = 4, []int{50, 100}, 20
	cr, err := paperCytometry(context.Background(), cfg, ds, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Settings) != 4 || cr.Settings[0].Setting != "pooling" || cr.Settings[1].Setting != "distributional" || cr.Settings[2].CellsPerDomain != 100 {
		t.Fatalf("settings %+v", cr.Settings)
	}
	for _, c := range cr.Settings {
		for _, s := range c.Result.Methods[0].Splits {
			if s.TrainCells != 4*c.CellsPerDomain {
				t.Errorf("n_i = %d: %d training cells", c.CellsPerDomain, s.TrainCells)
			}
		}
	}
	dir := t.TempDir()
	if err := paperPlot(filepath.Join(dir, "c.png"), cr); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "c.png"), 12*96, 5*96)
	if err := writePNG(filepath.Join(dir, "t.png"), 9*vg.Inch, 8*vg.Inch, 2, 2, panels); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "t.png"), 9*96, 8*96)
}
