package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/eval"
	"github.com/dicalab/dica/internal/sysmem"
)

// writeEvalCSV writes a small labelled CSV with a domain column: 4 domains
// shifted along x2, two classes separated along x1.
func writeEvalCSV(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("x1,x2,x3,patient,population\n")
	for g := range 4 {
		for i := range 40 {
			c := i % 2
			fmt.Fprintf(&b, "%.6f,%.6f,%.6f,p%d,%s\n",
				float64(4*c-2)+0.3*rng.NormFloat64(), rng.NormFloat64()+float64(g), rng.NormFloat64(), g+1, []string{"T", "B"}[c])
		}
	}
	path := filepath.Join(t.TempDir(), "cells.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvalJSON(t *testing.T) {
	path := writeEvalCSV(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--data", path, "--domain", "patient", "--label", "population",
		"--methods", "input,dica", "--rank", "20", "--components", "1", "--C", "0.5,1", "--json", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, k := range []string{"task", "metric", "solver", "rank", "cells", "methods", "domains", "seconds"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON has no key %q", k)
		}
	}
	if got["task"] != "classification" || got["metric"] != "accuracy" || got["cells"] != 160.0 {
		t.Errorf("task %v metric %v cells %v", got["task"], got["metric"], got["cells"])
	}
	methods := got["methods"].([]any)
	if len(methods) != 2 {
		t.Fatalf("%d methods", len(methods))
	}
	for _, m := range methods {
		m := m.(map[string]any)
		for _, k := range []string{"method", "splits", "scores", "mean", "sd", "seconds"} {
			if _, ok := m[k]; !ok {
				t.Errorf("method JSON has no key %q", k)
			}
		}
		// Leave-one-domain-out: 4 splits, each domain scored once on its
		// 40 cells.
		scores := m["scores"].([]any)
		if len(scores) != 4 || len(m["splits"].([]any)) != 4 {
			t.Fatalf("%v: %d scores", m["method"], len(scores))
		}
		var sum float64
		for i, s := range scores {
			s := s.(map[string]any)
			if s["domain"] != fmt.Sprintf("p%d", i+1) || s["cells"] != 40.0 {
				t.Errorf("score %d: %v", i, s)
			}
			sum += s["score"].(float64)
		}
		if mean := m["mean"].(float64); math.Abs(mean-sum/4) > 1e-12 || mean < 0.95 {
			t.Errorf("%v: mean accuracy %v (scores sum %v)", m["method"], mean, sum)
		}
		split := m["splits"].([]any)[0].(map[string]any)
		for _, k := range []string{"train", "test", "params", "inner_folds", "inner_score", "grid", "scores"} {
			if _, ok := split[k]; !ok {
				t.Errorf("split JSON has no key %q", k)
			}
		}
		if split["inner_folds"] != 3.0 || len(split["grid"].([]any)) != 2 {
			t.Errorf("%v: inner folds %v, grid %v", m["method"], split["inner_folds"], split["grid"])
		}
	}
}

func TestEvalText(t *testing.T) {
	path := writeEvalCSV(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--data", path, "--domain", "patient", "--label", "population",
		"--methods", "input,kpca", "--rank", "20", "--train-domains", "p1,p2,p3", "--test-domains", "p4", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"train: p1,p2,p3", "test:  p4", "mean ± sd", "kpca", "sigma=median"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestEvalUsageErrors(t *testing.T) {
	path := writeEvalCSV(t)
	base := []string{"eval", "--data", path, "--domain", "patient", "--label", "population", "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--test-domains", "p9"}, `unknown domain "p9"`},
		{[]string{"--methods", "pca"}, `unknown method "pca"`},
		{[]string{"--sigma", "one"}, `--sigma: "one" is not a number`},
		{[]string{"--components", "0"}, "--components"},
		{[]string{"--train-domains", "p1,p2,p3,p4"}, "no domains left"},
		{[]string{"--inner-folds", "1"}, "--inner-folds 1"},
		{[]string{"--learner", "gp"}, "--learner"},
		{[]string{"--regression-solver", "dense"}, "--regression-solver"},
		{[]string{"--dist-sigma", "x"}, `--dist-sigma: "x" is not a number`},
		{[]string{"--dist-embed-rank", "0"}, "--dist-embed-rank 0"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(append([]string(nil), base...), c.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--data", path, "--domain", "patient", "--train-domains", "p1,p2", "--test-domains", "p2", "--label", "population", "--quiet"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "both a training and a test domain") {
		t.Errorf("overlap: exit %d, %q", code, errb.String())
	}
}

// TestEvalDistributional runs the distributional learner from the command
// line: the JSON names it, and its bandwidth is part of the chosen point.
func TestEvalDistributional(t *testing.T) {
	path := writeEvalCSV(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--data", path, "--domain", "patient", "--label", "population",
		"--methods", "input,dica", "--rank", "20", "--components", "1", "--learner", "distributional",
		"--dist-sigma", "0.5,2", "--train-domains", "p1,p2,p3", "--test-domains", "p4", "--json", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Methods []struct {
			Method string `json:"method"`
			Splits []struct {
				Learner string         `json:"learner"`
				Params  map[string]any `json:"params"`
				Scores  []struct {
					Score float64 `json:"score"`
				} `json:"scores"`
			} `json:"splits"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, m := range got.Methods {
		sp := m.Splits[0]
		if !strings.Contains(sp.Learner, "distributional") {
			t.Errorf("%s: learner %q", m.Method, sp.Learner)
		}
		if ds, ok := sp.Params["dist_sigma"].(float64); !ok || (ds != 0.5 && ds != 2) {
			t.Errorf("%s: chosen dist_sigma %v, want 0.5 or 2", m.Method, sp.Params["dist_sigma"])
		}
		if sc := sp.Scores[0].Score; !(sc > 0.5 && sc <= 1) {
			t.Errorf("%s: accuracy %g", m.Method, sc)
		}
	}
}

// writeEvalClasses writes 4 domains of 40 cells: classes T and B alternate,
// except that domain p3 has 4 cells of class X and domain p4 holds only
// ungated cells, U.
func writeEvalClasses(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("x1,x2,x3,patient,population\n")
	for g := range 4 {
		for i := range 40 {
			c := i % 2
			lab := []string{"T", "B"}[c]
			if g == 3 {
				lab = "U"
			}
			if g == 2 && i%10 == 0 {
				lab = "X"
			}
			fmt.Fprintf(&b, "%.6f,%.6f,%.6f,p%d,%s\n",
				float64(4*c-2)+0.3*rng.NormFloat64(), rng.NormFloat64()+float64(g), rng.NormFloat64(), g+1, lab)
		}
	}
	path := filepath.Join(t.TempDir(), "classes.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// evalRun runs dica eval and returns the exit code, stdout and stderr.
func evalRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"eval"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestEvalMixingJSON checks that the JSON carries the new keys beside the
// old ones for every method: pooled and per-domain-mean spreads, the
// confusion matrix, the mixing measures of the 2 test domains, the cells
// used and read.
func TestEvalMixingJSON(t *testing.T) {
	path := writeEvalCSV(t)
	code, out, errs := evalRun("--data", path, "--domain", "patient", "--label", "population",
		"--methods", "input,kpca,udica,coir,dica", "--rank", "20", "--components", "1", "--train-domains", "p1-p2", "--test-domains", "p[34]", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Cells     int      `json:"cells"`
		CellsRead int      `json:"cells_read"`
		Setting   string   `json:"setting"`
		Classes   []string `json:"classes"`
		Protocol  struct {
			Kind string `json:"kind"`
		} `json:"protocol"`
		Methods []struct {
			Method     string          `json:"method"`
			Pooled     eval.Spread     `json:"pooled"`
			DomainMean eval.Spread     `json:"domain_mean"`
			Confusion  [][]int         `json:"confusion"`
			Mixing     json.RawMessage `json:"mixing"`
			Splits     []struct {
				Pooled float64        `json:"pooled"`
				Mixing map[string]any `json:"mixing"`
				Scores []struct {
					Cells int     `json:"cells"`
					Score float64 `json:"score"`
				} `json:"scores"`
			} `json:"splits"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Cells != 160 || got.CellsRead != 160 || got.Setting != "pooling" || got.Protocol.Kind != "lists" || !reflect.DeepEqual(got.Classes, []string{"B", "T"}) {
		t.Errorf("header: cells %d read %d setting %q protocol %q classes %v", got.Cells, got.CellsRead, got.Setting, got.Protocol.Kind, got.Classes)
	}
	if len(got.Methods) != 5 {
		t.Fatalf("%d methods", len(got.Methods))
	}
	for _, m := range got.Methods {
		s := m.Splits[0]
		var correct float64
		for _, d := range s.Scores {
			correct += d.Score * float64(d.Cells)
		}
		if math.Abs(s.Pooled-correct/80) > 1e-12 || m.Pooled.Mean != s.Pooled || m.Pooled.N != 1 {
			t.Errorf("%s: pooled %v (spread %+v), want %v", m.Method, s.Pooled, m.Pooled, correct/80)
		}
		total := 0
		for _, row := range m.Confusion {
			for _, v := range row {
				total += v
			}
		}
		if len(m.Confusion) != 2 || total != 80 {
			t.Errorf("%s: confusion %v", m.Method, m.Confusion)
		}
		for _, k := range []string{"ilisi", "clisi", "silhouette", "distributional_variance", "domain_silhouette", "cells"} {
			if _, ok := s.Mixing[k]; !ok {
				t.Errorf("%s: split mixing has no %q: %v", m.Method, k, s.Mixing)
			}
		}
		if il := s.Mixing["ilisi"].(float64); il < 1 || il > 2 {
			t.Errorf("%s: iLISI %v of 2 test domains", m.Method, il)
		}
		if !strings.Contains(string(m.Mixing), `"ilisi":{"mean":`) {
			t.Errorf("%s: mixing summary %s", m.Method, m.Mixing)
		}
	}
}

// TestEvalRandomSplits runs the random protocol twice with one seed and
// once with another: the same seed gives the same splits.
func TestEvalRandomSplits(t *testing.T) {
	path := writeEvalCSV(t)
	args := []string{"--data", path, "--domain", "patient", "--label", "population", "--methods", "input", "--rank", "20",
		"--splits", "random", "--train-count", "2", "--repeats", "5", "--cells-per-domain", "30", "--json", "--quiet"}
	splitsOf := func(seed string) ([][2][]string, map[string]any) {
		code, out, errs := evalRun(append(args, "--seed", seed)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var got struct {
			Cells          int            `json:"cells"`
			CellsPerDomain int            `json:"cells_per_domain"`
			Protocol       map[string]any `json:"protocol"`
			Methods        []struct {
				Splits []struct {
					Train, Test []string
					TrainCells  int `json:"train_cells"`
					TestCells   int `json:"test_cells"`
				} `json:"splits"`
			} `json:"methods"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.CellsPerDomain != 30 || got.Cells > 160 || got.Cells < 120 {
			t.Errorf("cells per domain %d, %d cells used", got.CellsPerDomain, got.Cells)
		}
		var out2 [][2][]string
		for _, s := range got.Methods[0].Splits {
			if len(s.Train) != 2 || len(s.Test) != 2 || s.TrainCells != 60 || s.TestCells != 60 {
				t.Errorf("split %v / %v with %d and %d cells", s.Train, s.Test, s.TrainCells, s.TestCells)
			}
			out2 = append(out2, [2][]string{s.Train, s.Test})
		}
		return out2, got.Protocol
	}
	a, pa := splitsOf("3")
	b, _ := splitsOf("3")
	c, _ := splitsOf("4")
	if len(a) != 5 || !reflect.DeepEqual(a, b) {
		t.Errorf("seed 3 twice: %v and %v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 3 and 4 give the same splits %v", a)
	}
	if pa["kind"] != "random" || pa["train_count"] != 2.0 || pa["repeats"] != 5.0 || pa["seed"] != 3.0 {
		t.Errorf("protocol %v", pa)
	}
	code, out, errs := evalRun(append(args[:len(args)-2], "--quiet")...)
	if code != 0 || !strings.Contains(out, "random splits: 5 draws of 2 training domains, the others tested (seed 1)") ||
		!strings.Contains(out, "at most 30 cells per domain") || !strings.Contains(out, "iLISI") {
		t.Errorf("text: exit %d\n%s%s", code, out, errs)
	}
}

// TestEvalClassesWarnings: test classes absent from training are warned
// about, the confusion matrix shows them, and the header counts the cells
// of the chosen domains only.
func TestEvalClassesWarnings(t *testing.T) {
	path := writeEvalClasses(t)
	code, out, errs := evalRun("--data", path, "--domain", "patient", "--label", "population", "--methods", "input", "--rank", "20",
		"--train-domains", "1-2", "--test-domains", "p3", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: the test domains have cells of class(es) X, which no training cell has") {
		t.Errorf("no warning about class X: %q", errs)
	}
	for _, want := range []string{"120 cells used of 160 read, 4 domains", "confusion (test cells; rows: true class, columns: predicted)", "train: p1,p2\ntest:  p3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The 4 X cells of p3 are in the row of X, all off the diagonal, the
	// classes in natural order.
	lines := strings.Split(out, "\n")
	found := false
	for i, l := range lines {
		if strings.Join(strings.Fields(l), " ") == "B T U X" {
			for _, r := range lines[i+1 : i+5] {
				if f := strings.Fields(r); len(f) == 5 && f[0] == "X" {
					found = f[4] == "0" && (f[1] != "0" || f[2] != "0")
				}
			}
		}
	}
	if !found {
		t.Errorf("no confusion row for X with its cells misclassified:\n%s", out)
	}
	// Ignoring U empties p4: naming it is an error that says why.
	code, _, errs = evalRun("--data", path, "--domain", "patient", "--label", "population", "--labels-ignore", "U", "--methods", "input",
		"--test-domains", "p4", "--quiet")
	if code != 2 || !strings.Contains(errs, `unknown domain "p4" (domains: p1, p2, p3); a domain whose cells --labels-ignore U removed is not among them`) {
		t.Errorf("emptied domain named: exit %d, %q", code, errs)
	}
}

// TestEvalProtocolErrors checks the refusals of the new flags, each a
// usage error (exit 2) naming the flag.
func TestEvalProtocolErrors(t *testing.T) {
	path := writeEvalCSV(t)
	base := []string{"--data", path, "--domain", "patient", "--label", "population", "--quiet", "--rank", "20"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--splits", "random"}, "--splits random needs --train-count K"},
		{[]string{"--splits", "random", "--train-count", "4"}, "--train-count 4: 4 domains have cells; want 1 to 3"},
		{[]string{"--splits", "random", "--train-count", "2", "--repeats", "0"}, "--repeats 0: want 1 to 10000"},
		{[]string{"--splits", "random", "--train-count", "2", "--repeats", "100000000"}, "--repeats 100000000"},
		{[]string{"--splits", "random", "--train-count", "2", "--test-domains", "p1"}, "--splits random draws the training domains itself"},
		{[]string{"--splits", "lodo", "--test-domains", "p1"}, "--splits lodo tests every domain"},
		{[]string{"--splits", "half"}, `--splits "half": want auto, lodo, random or reference`},
		{[]string{"--reference", "p1"}, "--reference applies to --splits reference"},
		{[]string{"--splits", "reference", "--train-domains", "p1"}, "--splits reference trains on the --reference domain alone"},
		{[]string{"--splits", "reference", "--train-count", "2"}, "--train-count applies to --splits random"},
		{[]string{"--splits", "reference", "--reference", "p9"}, `--reference: unknown domain "p9"`},
		{[]string{"--splits", "reference", "--reference", "p[1-2]"}, "--reference p[1-2] names 2 domains; want one"},
		{[]string{"--splits", "reference", "--methods", "input,udica"}, "--methods udica: with one training domain udica needs --transductive"},
		{[]string{"--train-count", "2"}, "--train-count applies to --splits random"},
		{[]string{"--cells-per-domain", "-3"}, "--cells-per-domain -3"},
		{[]string{"--mixing-cells", "60000"}, "--mixing-cells 60000: want 0 (none) to 50000"},
		{[]string{"--perplexity", "0"}, "--perplexity 0"},
		{[]string{"--target-sigma", "2"}, "--target-sigma applies to real targets"},
		{[]string{"--target-sigma", "wide"}, `--target-sigma: "wide" is neither median nor a number > 0`},
		{[]string{"--max-memory", "lots"}, `--max-memory "lots"`},
		{[]string{"--rank", "1000000"}, "--rank 1000000: want 1 to"},
		{[]string{"--test-domains", "p[5-9]"}, `--test-domains: "p[5-9]" matches no domain (domains: p1, p2, p3, p4)`},
		{[]string{"--test-domains", "7"}, `--test-domains: "7" is neither a domain nor a position from 1 to 4`},
		{[]string{"--learner", "gp"}, "--learner: unknown learner"},
	} {
		code, _, errs := evalRun(append(append([]string(nil), base...), c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "eval.") || strings.Contains(errs, "Options") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestEvalMemoryRefusal: a grid whose fits cannot fit in the budget is
// refused at once, with the estimate and what to do, and no stack trace.
func TestEvalMemoryRefusal(t *testing.T) {
	path := writeEvalCSV(t)
	start := time.Now()
	code, _, errs := evalRun("--data", path, "--domain", "patient", "--label", "population", "--quiet", "--rank", "100000", "--max-memory", "16G")
	if code != 2 || !strings.Contains(errs, "the evaluation needs about") || !strings.Contains(errs, "more than the 16 GB allowed; lower --rank") ||
		strings.Contains(errs, "goroutine") || strings.Contains(errs, "Options") {
		t.Errorf("exit %d, %q", code, errs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusal took %v", d)
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"8G", 8e9}, {"500M", 5e8}, {"16GiB", 16 << 30}, {"0", 0}, {"1.5T", 1.5e12}, {"123", 123}} {
		if got, err := memoryBudget(c.in); err != nil || got != c.want {
			t.Errorf("memoryBudget(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if got, _ := memoryBudget(""); got != int64(dica.DefaultMemoryFraction*float64(sysmem.Total())) {
		t.Errorf("default budget %d", got)
	}
}

// TestEvalAllCells checks the summary of several splits: it says what it
// averages, and gives the accuracy of all test cells of all splits, which
// the printed (summed) confusion matrix gives and which differs from the
// mean over splits of their pooled accuracies when the test domains differ
// in size. The inner score is shown for a grid of one point too.
func TestEvalAllCells(t *testing.T) {
	// Domains of 30, 40, 50 and 60 cells whose classes overlap a little.
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("x1,x2,patient,population\n")
	for g := range 4 {
		for i := range 30 + 10*g {
			c := i % 2
			fmt.Fprintf(&b, "%.6f,%.6f,p%d,%s\n", float64(2*c-1)+0.9*rng.NormFloat64(), rng.NormFloat64()+float64(g), g+1, []string{"T", "B"}[c])
		}
	}
	path := filepath.Join(t.TempDir(), "cells.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data", path, "--domain", "patient", "--label", "population", "--methods", "input", "--C", "1", "--quiet"}
	code, out, errs := evalRun(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Methods []struct {
			Pooled    eval.Spread `json:"pooled"`
			AllCells  float64     `json:"all_cells"`
			Confusion [][]int     `json:"confusion"`
			Splits    []struct {
				InnerFolds int     `json:"inner_folds"`
				InnerScore float64 `json:"inner_score"`
			} `json:"splits"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	m := res.Methods[0]
	var diag, total int
	for i, row := range m.Confusion {
		for j, v := range row {
			total += v
			if i == j {
				diag += v
			}
		}
	}
	all := float64(diag) / float64(total)
	if total != 180 || m.AllCells != all || m.Pooled.N != 4 || math.Abs(m.Pooled.Mean-all) < 1e-4 {
		t.Fatalf("all cells %v, confusion %d/%d = %v, pooled %+v: want the confusion's accuracy, unlike the mean over splits", m.AllCells, diag, total, all, m.Pooled)
	}
	for i, s := range m.Splits {
		if s.InnerFolds != 3 || !(s.InnerScore > 0.5 && s.InnerScore <= 1) {
			t.Errorf("split %d of a one-point grid: %d inner folds, inner score %v", i+1, s.InnerFolds, s.InnerScore)
		}
	}
	code, text, errs := evalRun(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Compared with the spaces of the columns collapsed.
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		fmt.Sprintf("pooled per split %.4f ± %.4f (mean ± sd over 4 splits)", m.Pooled.Mean, m.Pooled.SD),
		fmt.Sprintf("all test cells 180 %.4f (4 splits together)", all),
		fmt.Sprintf("(%.4f, 3 folds)", m.Splits[0].InnerScore),
		"pooled per split all test cells",
		"all test cells: the accuracy over the test cells of all splits together, which the summed confusion matrices give",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}

// TestEvalReference runs DeepCyTOF's protocol: one training domain (the
// auto choice is the smallest of the distances the JSON gives, or the
// named one), the three others tested, each scored by accuracy and
// F-measure; the transductive fits use all 160 cells, the learner the
// reference's 40. Without --methods, the methods that cannot be fitted on
// one domain are left out with a note.
func TestEvalReference(t *testing.T) {
	path := writeEvalCSV(t)
	base := []string{"--data", path, "--domain", "patient", "--label", "population", "--rank", "20", "--components", "1", "--splits", "reference", "--quiet"}
	type result struct {
		Transductive bool `json:"transductive"`
		Protocol     struct {
			Kind      string             `json:"kind"`
			Reference string             `json:"reference"`
			Choice    string             `json:"reference_choice"`
			Distances map[string]float64 `json:"reference_distances"`
		} `json:"protocol"`
		Methods []struct {
			Method   string      `json:"method"`
			FMeasure eval.Spread `json:"f_measure"`
			Scores   []struct {
				Domain   string  `json:"domain"`
				Score    float64 `json:"score"`
				FMeasure float64 `json:"f_measure"`
			} `json:"scores"`
			Splits []struct {
				Train, Test  []string
				Transductive bool `json:"transductive"`
				FitCells     int  `json:"fit_cells"`
				TrainCells   int  `json:"train_cells"`
			} `json:"splits"`
		} `json:"methods"`
	}
	runJSON := func(args ...string) (result, string) {
		t.Helper()
		code, out, errs := evalRun(append(append(append([]string(nil), base...), args...), "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r, errs
	}
	r, _ := runJSON("--methods", "input,kpca,udica", "--transductive")
	p := r.Protocol
	if p.Kind != "reference" || p.Choice != "auto" || len(p.Distances) != 4 || !r.Transductive {
		t.Fatalf("protocol %+v, transductive %v", p, r.Transductive)
	}
	for n, d := range p.Distances {
		if d < p.Distances[p.Reference] {
			t.Errorf("reference %s at %v, but %s is closer: %v", p.Reference, p.Distances[p.Reference], n, d)
		}
	}
	var others []string
	for _, n := range []string{"p1", "p2", "p3", "p4"} {
		if n != p.Reference {
			others = append(others, n)
		}
	}
	if len(r.Methods) != 3 {
		t.Fatalf("%d methods", len(r.Methods))
	}
	for _, m := range r.Methods {
		s := m.Splits[0]
		if len(m.Splits) != 1 || !reflect.DeepEqual(s.Train, []string{p.Reference}) || !reflect.DeepEqual(s.Test, others) {
			t.Errorf("%s: splits %+v, want one: train %s, test %v", m.Method, m.Splits, p.Reference, others)
		}
		fit, trans := 40, m.Method != "input"
		if trans {
			fit = 160
		}
		if s.Transductive != trans || s.FitCells != fit || s.TrainCells != 40 {
			t.Errorf("%s: transductive %v on %d cells, %d training cells; want %v, %d, 40", m.Method, s.Transductive, s.FitCells, s.TrainCells, trans, fit)
		}
		var sum float64
		for i, d := range m.Scores {
			if d.Domain != others[i] || !(d.FMeasure > 0.5 && d.FMeasure <= 1) || !(d.Score > 0.5 && d.Score <= 1) {
				t.Errorf("%s: score %d: %+v", m.Method, i, d)
			}
			sum += d.FMeasure
		}
		if m.FMeasure.N != 3 || math.Abs(m.FMeasure.Mean-sum/3) > 1e-15 {
			t.Errorf("%s: F-measure %+v, want the mean %v of 3 domains", m.Method, m.FMeasure, sum/3)
		}
	}

	r, errs := runJSON("--reference", "p2")
	if r.Protocol.Reference != "p2" || r.Protocol.Choice != "given" || r.Protocol.Distances != nil || r.Transductive {
		t.Errorf("--reference p2: protocol %+v", r.Protocol)
	}
	var names []string
	for _, m := range r.Methods {
		names = append(names, m.Method)
		if !reflect.DeepEqual(m.Splits[0].Train, []string{"p2"}) {
			t.Errorf("%s: trained on %v", m.Method, m.Splits[0].Train)
		}
	}
	if !reflect.DeepEqual(names, []string{"input", "kpca", "coir"}) || !strings.Contains(errs, "note: udica, dica left out: one training domain") {
		t.Errorf("default methods %v, stderr %q; want input, kpca, coir and a note", names, errs)
	}

	code, out, errs := evalRun(append(append([]string(nil), base...), "--reference", "p2", "--transductive", "--methods", "input,kpca,coir")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"reference protocol: the learner is trained on p2 alone; the 3 other domains are tested",
		"transductive: kpca, coir fitted on the cells of the training and test domains (the test domains' unlabelled; 160 cells of 4 domains)",
		"F-measure per domain",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = evalRun(append(append([]string(nil), base...), "--methods", "input")...)
	if want := fmt.Sprintf("trained on %s alone (auto: its input covariance is the closest to the others', mean Frobenius distance %.4g; next ",
		p.Reference, p.Distances[p.Reference]); code != 0 || !strings.Contains(out, want) {
		t.Errorf("auto: exit %d, the text lacks %q:\n%s%s", code, want, out, errs)
	}
}
