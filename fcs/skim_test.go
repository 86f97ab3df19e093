package fcs

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// checkSkim checks that Skim of src numbers the events as a pass does (ds,
// collected from src) and decodes the kept ones to the same bits, for
// several choices of rows: all, none, sparse, and one run in the middle
// (files before and after it are not opened).
func checkSkim(t *testing.T, src *Source, ds *dataset.Dataset) {
	t.Helper()
	n := int64(ds.N())
	keeps := map[string]func(int64) bool{
		"all":    func(int64) bool { return true },
		"none":   func(int64) bool { return false },
		"7th":    func(i int64) bool { return i%7 == 3 },
		"random": func(i int64) bool { return (uint64(i)*0x9e3779b97f4a7c15)>>61 == 0 },
		"run":    func(i int64) bool { return i >= n/2 && i < n/2+300 },
		"last":   func(i int64) bool { return i == n-1 },
	}
	for name, keep := range keeps {
		var (
			last int64 = -1
			put  int
		)
		got, err := src.Skim(context.Background(), func(i int64) bool {
			if i != last+1 {
				t.Fatalf("%s: keep(%d) after keep(%d)", name, i, last)
			}
			last = i
			return keep(i)
		}, func(x, y []float64) error {
			if !keep(last) {
				t.Fatalf("%s: put after keep(%d) = false", name, last)
			}
			want := ds.X.RawRowView(int(last))
			for j := range want {
				if math.Float64bits(x[j]) != math.Float64bits(want[j]) {
					t.Fatalf("%s: row %d = %v, want %v", name, last, x, want)
				}
			}
			if len(y) != 0 {
				t.Fatalf("%s: targets %v", name, y)
			}
			put++
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != n {
			t.Fatalf("%s: %d rows, want %d", name, got, n)
		}
		want := 0
		for i := range n {
			if keep(i) {
				want++
			}
		}
		if put != want {
			t.Errorf("%s: %d rows put, want %d", name, put, want)
		}
	}
	// put's error and a cancelled context come out.
	stop := errors.New("stop")
	if _, err := src.Skim(context.Background(), func(int64) bool { return true }, func(x, y []float64) error { return stop }); n > 0 && err != stop {
		t.Errorf("put error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Skim(ctx, func(int64) bool { return true }, func(x, y []float64) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

var _ dataset.Skimmer = (*Source)(nil)

// TestSourceChanged checks that a file rewritten after NewSource is an error
// of a pass and of a skim that reads it, and that a skim keeping none of its
// events does not open it.
func TestSourceChanged(t *testing.T) {
	paths, events := writeDomains(t, 2)
	src, err := NewSource(paths, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nA := int64(events[0].RawMatrix().Rows)
	fewer := &DataSet{Params: []Param{{Name: "FSC-A"}, {Name: "FL1-A"}, {Name: "FL2-A"}, {Name: "Time"}}, Events: events[0]}
	narrower := &DataSet{Params: []Param{{Name: "FSC-A"}, {Name: "FL1-A"}, {Name: "FL2-A"}}, Events: events[0].Slice(0, 5, 0, 3).(*mat.Dense)}
	for _, c := range []struct {
		set  *DataSet
		want string
	}{
		{fewer, "sampleB.fcs changed since NewSource: 50 events, had 87"},
		{narrower, "sampleB.fcs changed since NewSource: 3 parameters, had 4"},
	} {
		if err := WriteFile(paths[1], c.set); err != nil {
			t.Fatal(err)
		}
		_, err := dataset.Collect(context.Background(), src)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("pass: %v, want ...%s", err, c.want)
		}
		all := func(int64) bool { return true }
		none := func(x, y []float64) error { return nil }
		if _, err := src.Skim(context.Background(), all, none); err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("skim: %v, want ...%s", err, c.want)
		}
		n, err := src.Skim(context.Background(), func(i int64) bool { return i < nA }, none)
		if err != nil || n != nA+87 {
			t.Errorf("skim of the first file only: %d rows, %v", n, err)
		}
	}
}
