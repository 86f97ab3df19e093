package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/dicalab/dica/csvio"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgressRateAndETA(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	p := &progress{on: true, w: &out, now: clk.now}
	// The first report of a pass comes with many rows already counted (a
	// skim reports every 65,536 rows): no rate from a zero interval.
	p.update("sample", 65536)
	clk.t = clk.t.Add(time.Millisecond)
	p.update("sample", 131072)
	if strings.Contains(out.String(), "cells/s") {
		t.Fatalf("a rate after 1 ms: %q", out.String())
	}
	// 2 s later, 2,000,000 more rows: 1e6 cells/s.
	clk.t = clk.t.Add(2 * time.Second)
	p.update("sample", 65536+2000000)
	last := out.String()[strings.LastIndex(out.String(), "\r")+1:]
	if !strings.Contains(last, "1e+06 cells/s") {
		t.Fatalf("rate line %q, want 1e+06 cells/s", last)
	}
	if strings.Contains(last, "ETA") {
		t.Fatalf("an ETA without a known total: %q", last)
	}
	// The next pass over the same data knows its total from this one.
	p.update("accumulate", 0)
	clk.t = clk.t.Add(time.Second)
	p.update("accumulate", 500000)
	last = out.String()[strings.LastIndex(out.String(), "\r")+1:]
	// 500,000 of 2,065,536 at 5e5 cells/s: 24% and 3 s left.
	for _, want := range []string{"accumulate", "5e+05 cells/s", "24%", "ETA 3s"} {
		if !strings.Contains(last, want) {
			t.Errorf("line %q lacks %q", last, want)
		}
	}
	p.done()
	if !strings.HasSuffix(out.String(), "\r\033[K") {
		t.Errorf("done does not clear the line")
	}
	// Off (stderr not a terminal): nothing at all.
	var none bytes.Buffer
	q := &progress{w: &none, now: clk.now}
	q.update("sample", 10)
	clk.t = clk.t.Add(time.Hour)
	q.update("sample", 1e9)
	q.done()
	if none.Len() != 0 {
		t.Errorf("progress off printed %q", none.String())
	}
}

func TestUserMessage(t *testing.T) {
	long := &csvio.ParseError{File: "x.csv", Line: 1, Msg: "line longer than 1048576 bytes, the limit (MaxLineBytes); it starts", Option: "MaxLineBytes"}
	for _, c := range []struct {
		in   error
		want string
	}{
		{long, "x.csv:1: line longer than 1048576 bytes, the limit (--max-line-bytes); it starts"},
		{fmt.Errorf("csvio: %w", long), "x.csv:1: line longer than 1048576 bytes, the limit (--max-line-bytes); it starts"},
		{errors.New("m.dica: dica: not a model file"), "m.dica: not a model file"},
		{errors.New("the dica: prefix in the middle stays"), "the dica: prefix in the middle stays"},
		{errors.New("csvio: open x.csv: permission denied"), "open x.csv: permission denied"},
		{errors.New("output: ingest: x"), "x"},
	} {
		if got := userMessage(c.in); got != c.want {
			t.Errorf("userMessage(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
