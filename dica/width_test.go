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
	const want = "dica: 200000 input columns need about 32 GB for the landmark sample of 20000 cells alone, more than the budget of 19 GB at any rank; about 115547 columns fit at rank 500: select fewer columns"
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
