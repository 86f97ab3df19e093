package dica

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/toy"
)

// streamOnly hides a source's Sizer and RowAccess, as a file source.
type streamOnly struct{ dataset.Source }

// TestReservoirRowAccess checks that the sample drawn from the row indices
// of an in-memory source equals the one a pass over the same rows draws
// (the same generator calls), so in-memory and file data give the same plan.
func TestReservoirRowAccess(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 5, MeanSize: 300, Seed: 4})
	for _, size := range []int{1, 17, 500, ds.N(), ds.N() + 10} {
		for _, withY := range []bool{false, true} {
			x1, y1, n1, err := reservoir(context.Background(), ds.Source(), size, 9, withY, nil)
			if err != nil {
				t.Fatal(err)
			}
			x2, y2, n2, err := reservoir(context.Background(), streamOnly{ds.Source()}, size, 9, withY, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n1 != n2 || n1 != int64(ds.N()) || !mat.Equal(x1, x2) || withY && !mat.Equal(y1, y2) {
				t.Errorf("size %d, targets %v: row-access sample differs from the streamed one", size, withY)
			}
			if r, _ := x1.Dims(); r != min(size, ds.N()) {
				t.Errorf("size %d: %d rows sampled", size, r)
			}
		}
	}
	// A non-finite sampled row is reported by its 1-based row number.
	bad := toy.Regression(toy.Options{Domains: 3, MeanSize: 50, Seed: 4})
	bad.X.Set(7, 2, math.NaN())
	for _, src := range []dataset.Source{bad.Source(), streamOnly{bad.Source()}} {
		_, _, _, err := reservoir(context.Background(), src, bad.N(), 1, false, nil)
		if err == nil || !strings.Contains(err.Error(), "row 8, column 3") {
			t.Errorf("%T: %v", src, err)
		}
	}
}

// TestReservoirSkim checks that the sample drawn by skimming CSV files (only
// the sampled rows parsed) equals the one drawn by a pass over the same
// files and the one drawn from the rows in memory, and that a non-finite
// sampled value is reported by its row.
func TestReservoirSkim(t *testing.T) {
	ds := toy.Regression(toy.Options{Domains: 4, MeanSize: 400, Seed: 5})
	dir := t.TempDir()
	var files []string
	for dom := range ds.NumDomains() {
		var b strings.Builder
		for i := 0; i < ds.N(); i++ {
			if ds.Domain[i] != dom {
				continue
			}
			for _, v := range ds.X.RawRowView(i) {
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
			}
			b.WriteString(strconv.FormatFloat(ds.Target.At(i, 0), 'g', -1, 64) + "\n")
		}
		f := filepath.Join(dir, fmt.Sprintf("d%d.csv", dom))
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d := ds.X.RawMatrix().Cols
	src, err := csvio.NewSource(files, csvio.Options{Header: csvio.NoHeader, Target: []string{strconv.Itoa(d + 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dataset.Source(src).(dataset.Skimmer); !ok {
		t.Fatal("csvio.Source is not a dataset.Skimmer")
	}
	// The rows of the files are those of ds in domain order.
	var order []int
	for dom := range ds.NumDomains() {
		for i := 0; i < ds.N(); i++ {
			if ds.Domain[i] == dom {
				order = append(order, i)
			}
		}
	}
	mem := ds.Subset(order)
	for _, size := range []int{1, 17, 500, ds.N(), ds.N() + 10} {
		for _, withY := range []bool{false, true} {
			var xs, ys [3]*mat.Dense
			for k, s := range []dataset.Source{src, streamOnly{src}, mem.Source()} {
				x, y, n, err := reservoir(context.Background(), s, size, 9, withY, nil)
				if err != nil {
					t.Fatal(err)
				}
				if n != int64(ds.N()) {
					t.Fatalf("%T: %d rows, want %d", s, n, ds.N())
				}
				xs[k], ys[k] = x, y
			}
			for k := 1; k < 3; k++ {
				if !mat.Equal(xs[0], xs[k]) || withY && !mat.Equal(ys[0], ys[k]) {
					t.Errorf("size %d, targets %v: the skimmed sample differs from sample %d", size, withY, k)
				}
			}
		}
	}
	// A non-finite value in a sampled row: the file's own error.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("1,2\n3,4\n5,inf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bsrc, err := csvio.NewSource([]string{bad}, csvio.Options{Header: csvio.NoHeader})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := reservoir(context.Background(), bsrc, 10, 1, false, nil); err == nil || !strings.Contains(err.Error(), "bad.csv:3: column 2") {
		t.Errorf("non-finite sampled value: %v", err)
	}
}
