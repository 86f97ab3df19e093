package fcs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// writeChain writes a file of n chained data sets of one parameter, data
// set k holding two events of values 2k and 2k+1 (a domain needs two).
func writeChain(t *testing.T, dir string, n int) string {
	t.Helper()
	sets := make([]*DataSet, n)
	for k := range sets {
		sets[k] = &DataSet{Params: []Param{{Name: "A"}}, Events: mat.NewDense(2, 1, []float64{float64(2 * k), float64(2*k + 1)})}
	}
	path := filepath.Join(dir, "chain.fcs")
	if err := WriteFile(path, sets...); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLongChain reads a file of 5,000 chained data sets through ParseAll,
// OpenAll, a Source (a pass and a skim) and counts the HEADER and TEXT
// parses: one per data set for each, where re-reading the chain to reach
// data set k would take 5,000 x 5,001 / 2.
func TestLongChain(t *testing.T) {
	const n = 5000
	path := writeChain(t, t.TempDir(), n)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	count := func(what string, want int64, f func() error) {
		t.Helper()
		p0 := textParses.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := textParses.Load() - p0; got != want {
			t.Errorf("%s: %d parses of a HEADER and TEXT for %d data sets, want %d", what, got, n, want)
		}
	}
	count("ParseAll", n, func() error {
		sets, err := ParseAll(bytes.NewReader(raw), int64(len(raw)))
		if err == nil && (len(sets) != n || sets[n-1].NumEvents() != 2) {
			t.Errorf("ParseAll: %d data sets", len(sets))
		}
		return err
	})
	count("OpenAll", n, func() error {
		sets, err := OpenAll(path)
		for _, f := range sets {
			f.Close()
		}
		return err
	})
	var src *Source
	count("NewSource", n, func() error {
		src, err = NewSource([]string{path}, SourceOptions{AllDataSets: true})
		return err
	})
	var ds *dataset.Dataset
	count("a pass", n, func() error {
		ds, err = dataset.Collect(context.Background(), src)
		return err
	})
	if ds.N() != 2*n || len(ds.DomainNames) != n || ds.DomainNames[n-1] != "chain#5000" {
		t.Fatalf("a pass: %d rows, %d domains", ds.N(), len(ds.DomainNames))
	}
	for i := range 2 * n {
		if ds.X.At(i, 0) != float64(i) || ds.Domain[i] != i/2 {
			t.Fatalf("row %d: %v in domain %d", i, ds.X.At(i, 0), ds.Domain[i])
		}
	}
	count("a skim", n, func() error {
		var got []float64
		_, err := src.Skim(context.Background(), func(int64) bool { return true }, func(x, y []float64) error {
			got = append(got, x[0])
			return nil
		})
		if len(got) != 2*n || got[2*n-1] != 2*n-1 {
			t.Errorf("skim: %d rows", len(got))
		}
		return err
	})
}

// TestChainLimit checks the limit on the number of data sets: ParseAll and
// OpenAll refuse a chain longer than DefaultMaxDataSets, naming the limit,
// and a Source follows SourceOptions.MaxDataSets.
func TestChainLimit(t *testing.T) {
	dir := t.TempDir()
	path := writeChain(t, dir, DefaultMaxDataSets+1)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "more than 10000 data sets"
	if _, err := ParseAll(bytes.NewReader(raw), int64(len(raw))); !errors.Is(err, ErrTooManyDataSets) || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseAll: %v, want %q", err, want)
	}
	if _, err := OpenAll(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("OpenAll: %v, want %q", err, want)
	}
	if _, err := NewSource([]string{path}, SourceOptions{AllDataSets: true}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "SourceOptions.MaxDataSets") {
		t.Errorf("NewSource: %v, want %q", err, want)
	}
	if f, err := Parse(bytes.NewReader(raw), int64(len(raw))); err != nil || f.NumEvents() != 2 {
		t.Errorf("Parse of the first data set: %v", err)
	}
	src, err := NewSource([]string{path}, SourceOptions{AllDataSets: true, MaxDataSets: DefaultMaxDataSets + 1})
	if err != nil || src.Len() != 2*(DefaultMaxDataSets+1) {
		t.Errorf("NewSource with MaxDataSets %d: %v", DefaultMaxDataSets+1, err)
	}
	small := writeChain(t, t.TempDir(), 3)
	for _, c := range []struct {
		max  int
		want string
	}{
		{2, "more than 2 data sets"},
		{3, ""},
		{-1, "SourceOptions.MaxDataSets -1"},
	} {
		_, err := NewSource([]string{small}, SourceOptions{AllDataSets: true, MaxDataSets: c.max})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("MaxDataSets %d: %v, want %q", c.max, err, c.want)
		}
	}
}

// countdown is a context whose Err returns context.Canceled from its n+1th
// call on: it cancels a loop that checks it at a known iteration.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestChainCancel cancels NewSourceContext, a pass and a skim over a chain
// of 2,000 data sets (without events, so that a pass goes from one to the
// next without returning rows) after about 100 data sets: each stops with
// the context's error, having parsed about 100 of them.
func TestChainCancel(t *testing.T) {
	const n, stop = 2000, 100
	sets := make([]*DataSet, n)
	for k := range sets {
		sets[k] = &DataSet{Params: []Param{{Name: "A"}}}
	}
	path := filepath.Join(t.TempDir(), "empty.fcs")
	if err := WriteFile(path, sets...); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, p0 int64) {
		t.Helper()
		if got := textParses.Load() - p0; !errors.Is(err, context.Canceled) || got < stop/2 || got > 2*stop {
			t.Errorf("%s cancelled after %d checks: %v after %d data sets", what, stop, err, got)
		}
	}
	p0 := textParses.Load()
	_, err := NewSourceContext(&countdown{context.Background(), stop}, []string{path}, SourceOptions{AllDataSets: true})
	check("NewSourceContext", err, p0)

	src, err := NewSource([]string{path}, SourceOptions{AllDataSets: true})
	if err != nil {
		t.Fatal(err)
	}
	p0 = textParses.Load()
	r, err := src.Open(&countdown{context.Background(), stop})
	if err != nil {
		t.Fatal(err)
	}
	var b dataset.Block
	_, err = r.Read(&b, 10)
	check("a pass", err, p0)
	p0 = textParses.Load()
	_, err = src.Skim(&countdown{context.Background(), stop}, func(int64) bool { return true }, func(x, y []float64) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a skim cancelled after %d checks: %v", stop, err)
	}
}
