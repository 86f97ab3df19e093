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
	"strings"
	"testing"
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
