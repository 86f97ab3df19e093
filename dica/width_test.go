package dica

import (
	"errors"
	"testing"
)

// TestMemoryErrorWidth: when no rank fits, the data's width is the cause:
// the error says how many columns there are, what their sample takes, and
// how many fit at the rank asked (the largest width within the budget).
func TestMemoryErrorWidth(t *testing.T) {
	cfg := Config{Method: UDICA, Rank: 500, Sigma: 1, MaxMemory: 19e9, Workers: 2}.withDefaults()
	s := Shape{D: 200000}
	err := checkMemory(cfg, s)
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a *MemoryError", err)
	}
	const want = "dica: 200000 input columns need about 32 GB for the landmark sample of 20000 cells alone, more than the budget of 19 GB at any rank; about 115535 columns fit at rank 500: select fewer columns"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	at := func(d int) int64 { return EstimateMemory(cfg, Shape{D: d}) }
	if me.Fits != 0 || me.Inputs != 200000 || me.Sample != 20000 || at(me.InputsFit) > me.Budget || at(me.InputsFit+1) <= me.Budget {
		t.Errorf("Fits %d, Inputs %d, Sample %d, InputsFit %d: estimates %d and %d around the budget %d",
			me.Fits, me.Inputs, me.Sample, me.InputsFit, at(me.InputsFit), at(me.InputsFit+1), me.Budget)
	}
	// A known number of cells under the sample size is the sample.
	s.N = 5000
	if err := checkMemory(Config{Method: UDICA, Rank: 500, Sigma: 1, MaxMemory: 1e9}.withDefaults(), s); !errors.As(err, &me) || me.Sample != 5000 || me.Inputs != 200000 {
		t.Errorf("5000 cells: %v", err)
	}
	// When a rank fits, the rank is the cause, as before.
	err = checkMemory(Config{Method: UDICA, Rank: 5000, Sigma: 1, MaxMemory: 1e9}.withDefaults(), Shape{D: 10})
	if !errors.As(err, &me) || me.Inputs != 0 || me.Fits == 0 {
		t.Errorf("rank 5000: %v", err)
	}
}

// TestMemoryErrorReader: when no rank fits because of what a pass of the
// reader holds (a store of 64 MiB chunks under a budget of 200 MB), the
// error names the reader, not the data's width (it said "8 input columns
// need about 1.28 MB ...; about 0 columns fit").
func TestMemoryErrorReader(t *testing.T) {
	cfg := Config{Method: KPCA, Rank: 100, Sigma: 1, MaxMemory: 200e6, Workers: 2}.withDefaults()
	err := checkMemory(cfg, Shape{N: 1500000, D: 8, Reader: 220e6})
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a *MemoryError", err)
	}
	const want = "dica: reading the data holds about 220 MB at a time (its chunks or row groups), which leaves no room for a fit at any rank in the budget of 200 MB: write the data in smaller chunks or row groups"
	if err.Error() != want || me.Reader != 220e6 || me.Inputs != 0 || me.Fits != 0 {
		t.Errorf("error %q (Reader %d, Inputs %d, Fits %d)\nwant  %q", err, me.Reader, me.Inputs, me.Fits, want)
	}
	// A reader that leaves room for some rank: the rank is the cause.
	err = checkMemory(cfg, Shape{N: 1500000, D: 8, Reader: 197e6})
	if !errors.As(err, &me) || me.Reader != 0 || me.Fits == 0 {
		t.Errorf("197 MB reader: %v", err)
	}
}
