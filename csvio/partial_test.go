package csvio

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
)

// TestPartialLabelFiles reads three data files of which only the second
// has a label file: the rows of the others carry dataset.NoLabel, the
// classes are those of the labelled file alone, and LabelsIgnore drops
// labelled rows only. Every pass (sequential, parallel with a chunk
// boundary on every line, any block size) gives the rows and labels
// written down here by hand, and Skim keeps the same rows.
func TestPartialLabelFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("1,2\n3,4\n")},
		"s2.csv": {Data: []byte("5,6\n\n7,8\n9,10\n11,12\n")},
		"s3.csv": {Data: []byte("13,14\n15,16\n17,18\n")},
		"l2.txt": {Data: []byte("B\n0\nA\nB\n")},
	}
	files := []string{"s1.csv", "s2.csv", "s3.csv"}
	o := Options{LabelFiles: []string{"", "l2.txt", ""}, LabelsIgnore: []string{"0"}}
	wantX := []float64{1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
	wantLabel := []int{-1, -1, 0, 1, 0, -1, -1, -1}
	wantDomain := []int{0, 0, 1, 1, 1, 2, 2, 2}
	wantFile := []int{0, 0, 1, 1, 1, 2, 2, 2}
	wantEvent := []int64{1, 2, 1, 3, 4, 1, 2, 3}
	for _, ps := range append([]struct{ workers, chunk int }{{-1, 0}}, parSettings...) {
		for _, max := range []int{1, 3, 100} {
			t.Run(fmt.Sprintf("w%d/chunk%d/max%d", ps.workers, ps.chunk, max), func(t *testing.T) {
				src := withWorkers(t, fsys, files, o, ps.workers, ps.chunk)
				if !src.Schema().Labelled {
					t.Fatal("schema not labelled")
				}
				var (
					x                   []float64
					label, domain, file []int
					event               []int64
				)
				eachBlock(t, src, max, func(b *dataset.Block) {
					x = append(x, b.X[:b.Rows*b.D]...)
					label = append(label, b.Label[:b.Rows]...)
					domain = append(domain, b.Domain[:b.Rows]...)
					file = append(file, b.File[:b.Rows]...)
					event = append(event, b.Event[:b.Rows]...)
				})
				if !slices.Equal(x, wantX) || !slices.Equal(label, wantLabel) || !slices.Equal(domain, wantDomain) ||
					!slices.Equal(file, wantFile) || !slices.Equal(event, wantEvent) {
					t.Fatalf("x %v labels %v domains %v files %v events %v;\nwant %v %v %v %v %v", x, label, domain, file, event,
						wantX, wantLabel, wantDomain, wantFile, wantEvent)
				}
				ds, err := dataset.Collect(context.Background(), src)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ds.ClassNames, []string{"B", "A"}) || !slices.Equal(ds.DomainNames, []string{"s1", "s2", "s3"}) ||
					!slices.Equal(ds.Label, wantLabel) || !slices.Equal(ds.ClassSizes(), []int{2, 1}) {
					t.Fatalf("collected classes %q domains %q labels %v sizes %v", ds.ClassNames, ds.DomainNames, ds.Label, ds.ClassSizes())
				}
				var kept [][]float64
				n, err := src.Skim(context.Background(), func(i int64) bool { return i%2 == 1 }, func(x, _ []float64) error {
					kept = append(kept, slices.Clone(x))
					return nil
				})
				if err != nil || n != 8 {
					t.Fatalf("Skim: %d rows, %v", n, err)
				}
				if want := [][]float64{{3, 4}, {9, 10}, {13, 14}, {17, 18}}; !slices.EqualFunc(kept, want, slices.Equal) {
					t.Fatalf("Skim kept %v, want %v", kept, want)
				}
			})
		}
	}
}

// TestPartialLabelFilesErrors checks the options of partial label files:
// no name at all is no labels (and LabelsIgnore then an error), the label
// file of a labelled file is still checked against its rows, and a value of
// LabelsIgnore must still match a labelled row.
func TestPartialLabelFilesErrors(t *testing.T) {
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("1,2\n3,4\n")},
		"s2.csv": {Data: []byte("5,6\n7,8\n9,10\n")},
		"l2.txt": {Data: []byte("A\nB\n")},
		"l2ok":   {Data: []byte("A\nB\nA\n")},
	}
	files := []string{"s1.csv", "s2.csv"}
	src, err := NewSourceFS(fsys, files, Options{LabelFiles: []string{"", ""}})
	if err != nil || src.Schema().Labelled {
		t.Fatalf("no label file named: labelled %v, %v", src.Schema().Labelled, err)
	}
	if _, err := NewSourceFS(fsys, files, Options{LabelFiles: []string{"", ""}, LabelsIgnore: []string{"0"}}); err == nil || !strings.Contains(err.Error(), "LabelsIgnore without labels") {
		t.Errorf("LabelsIgnore without any label file: %v", err)
	}
	if _, err := NewSourceFS(fsys, files, Options{LabelFiles: []string{""}}); err == nil || !strings.Contains(err.Error(), "2 data files but 1 label files") {
		t.Errorf("one name for two files: %v", err)
	}
	if _, err := NewSourceFS(fsys, files, Options{Label: "1", LabelFiles: []string{"", ""}}); err != nil {
		t.Errorf("a label column with empty label file names: %v", err)
	}
	for _, ps := range append([]struct{ workers, chunk int }{{-1, 0}}, parSettings...) {
		src := withWorkers(t, fsys, files, Options{LabelFiles: []string{"", "l2.txt"}}, ps.workers, ps.chunk)
		_, err := dataset.Collect(context.Background(), src)
		if err == nil || !strings.Contains(err.Error(), "l2.txt has 2 lines but s2.csv has 3 rows") {
			t.Errorf("workers %d: short label file: %v", ps.workers, err)
		}
		src = withWorkers(t, fsys, files, Options{LabelFiles: []string{"", "l2ok"}, LabelsIgnore: []string{"C"}}, ps.workers, ps.chunk)
		_, err = dataset.Collect(context.Background(), src)
		if err == nil || !strings.Contains(err.Error(), `"C" matches no label (labels seen: "A", "B")`) {
			t.Errorf("workers %d: unmatched ignore: %v", ps.workers, err)
		}
	}
}
