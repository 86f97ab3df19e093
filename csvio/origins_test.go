package csvio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
)

// TestOrigins checks Block.File and Block.Event against the rows counted
// by hand: blank lines and the header do not count, rows left out by
// LabelsIgnore do, on the sequential pass and on parallel passes with a
// chunk boundary on every line.
func TestOrigins(t *testing.T) {
	fsys := fstest.MapFS{
		"a.csv":  {Data: []byte("x,y\n1,2\n\n3,4\n5,6\n7,8\n")},
		"b.csv":  {Data: []byte("x,y\n\n\n9,10\n11,12\r\n13,14")},
		"la.txt": {Data: []byte("p\n\nq\np\nr\n")},
		"lb.txt": {Data: []byte("p\nq\nq\n")},
	}
	o := Options{Header: WithHeader, LabelFiles: []string{"la.txt", "lb.txt"}, LabelsIgnore: []string{"p"}}
	// Kept: a.csv rows 2 (q) and 4 (r); b.csv rows 2 and 3 (q).
	wantFile := []int{0, 0, 1, 1}
	wantEvent := []int64{2, 4, 2, 3}
	wantX := []float64{3, 4, 7, 8, 11, 12, 13, 14}
	for _, ps := range append([]struct{ workers, chunk int }{{-1, 0}}, parSettings...) {
		t.Run(fmt.Sprintf("w%d/chunk%d", ps.workers, ps.chunk), func(t *testing.T) {
			src := withWorkers(t, fsys, []string{"a.csv", "b.csv"}, o, ps.workers, ps.chunk)
			var files []int
			var events []int64
			var x []float64
			eachBlock(t, src, 1, func(b *dataset.Block) {
				if !b.HasOrigins() {
					t.Fatalf("a block of %d rows without origins", b.Rows)
				}
				files = append(files, b.File[:b.Rows]...)
				events = append(events, b.Event[:b.Rows]...)
				x = append(x, b.X[:b.Rows*b.D]...)
			})
			if !slices.Equal(files, wantFile) || !slices.Equal(events, wantEvent) || !slices.Equal(x, wantX) {
				t.Errorf("files %v events %v x %v; want %v %v %v", files, events, x, wantFile, wantEvent, wantX)
			}
		})
	}
}

// eachBlock reads a pass of src in blocks of max rows, calling f with each.
func eachBlock(t *testing.T, src dataset.Source, max int, f func(b *dataset.Block)) {
	t.Helper()
	r, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b dataset.Block
	for {
		n, err := r.Read(&b, max)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != b.Rows {
			t.Fatalf("Read gave %d rows, the block holds %d", n, b.Rows)
		}
		f(&b)
	}
}
