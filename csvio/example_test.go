package csvio_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dataset"
)

// Two samples without a header, with row-aligned label files in which 0
// marks ungated cells, read as two domains with log1p-transformed features.
func Example() {
	fsys := fstest.MapFS{
		"sample1.csv": {Data: []byte("17.89,10.231\n0,4.6372\n0.002912,7.2418\n")},
		"labels1.csv": {Data: []byte("2\n0\n4\n")},
		"sample2.csv": {Data: []byte("3.5,1e2\n12,0.5\n")},
		"labels2.csv": {Data: []byte("4\n1\n")},
	}
	src, err := csvio.NewSourceFS(fsys, []string{"sample1.csv", "sample2.csv"}, csvio.Options{
		LabelFiles:   []string{"labels1.csv", "labels2.csv"},
		LabelsIgnore: []string{"0"},
		Transform: func(x []float64) {
			for j := range x {
				x[j] = math.Log1p(x[j])
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("features:", ds.Features)
	fmt.Println("domains:", ds.DomainNames, ds.Domain)
	fmt.Println("classes:", ds.ClassNames, ds.Label)
	fmt.Printf("first row: %.4f\n", ds.X.RawRowView(0))
	// Output:
	// features: [V1 V2]
	// domains: [sample1 sample2] [0 0 1 1]
	// classes: [2 4 1] [0 1 1 2]
	// first row: [2.9386 2.4187]
}

// A file with a header, a text domain column and a label column; errors
// name the file, the line and the column.
func ExampleNewSourceFS_columns() {
	fsys := fstest.MapFS{
		"cells.csv": {Data: []byte("patient,CD4,CD8,cell\nalice,1,2,T\nbob,3,4,B\nalice,5,6,B\nbob,7,8,T\n")},
		"bad.csv":   {Data: []byte("patient,CD4,CD8,cell\nalice,1,2,T\nbob,3,1.2.3,B\n")},
	}
	o := csvio.Options{Domain: "patient", Label: "cell"}
	src, err := csvio.NewSourceFS(fsys, []string{"cells.csv"}, o)
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ds.Features, ds.DomainNames, ds.Domain, ds.ClassNames, ds.Label)

	src, err = csvio.NewSourceFS(fsys, []string{"bad.csv"}, o)
	if err != nil {
		log.Fatal(err)
	}
	_, err = dataset.Collect(context.Background(), src)
	fmt.Println(err)
	// Output:
	// [CD4 CD8] [alice bob] [0 1 0 1] [T B] [0 1 1 0]
	// bad.csv:3: column 3: cannot parse "1.2.3" as a number
}

// Glob orders the matches of a pattern naturally, as the dica command does:
// sample2 before sample10, so that the files, and so the domains of a fit,
// are numbered as their names suggest. filepath.Glob sorts lexically.
func ExampleGlob() {
	dir, err := os.MkdirTemp("", "glob")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"sample10.csv", "sample2.csv", "sample1.csv", "labels1.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("1,2\n3,4\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	pattern := filepath.Join(dir, "sample*.csv")
	natural, err := csvio.Glob([]string{pattern})
	if err != nil {
		log.Fatal(err)
	}
	lexical, err := filepath.Glob(pattern)
	if err != nil {
		log.Fatal(err)
	}
	base := func(files []string) []string {
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		return names
	}
	fmt.Println("csvio.Glob:   ", base(natural))
	fmt.Println("filepath.Glob:", base(lexical))

	src, err := csvio.NewSource(natural, csvio.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("domains:", ds.DomainNames)
	// Output:
	// csvio.Glob:    [sample1.csv sample2.csv sample10.csv]
	// filepath.Glob: [sample1.csv sample10.csv sample2.csv]
	// domains: [sample1 sample2 sample10]
}

// Samples whose cells are all ungated (label 0) lose every row to
// LabelsIgnore: after a pass, EmptiedDomains names them, so that a program
// can warn. A LabelsIgnore value that no label has is an error at the end
// of the pass.
func ExampleSource_EmptiedDomains() {
	fsys := fstest.MapFS{
		"s1.csv": {Data: []byte("1,2\n3,4\n5,6\n")},
		"l1.csv": {Data: []byte("1\n2\n1\n")},
		"s2.csv": {Data: []byte("7,8\n9,10\n")},
		"l2.csv": {Data: []byte("0\n0\n")},
	}
	files, labels := []string{"s1.csv", "s2.csv"}, []string{"l1.csv", "l2.csv"}
	src, err := csvio.NewSourceFS(fsys, files, csvio.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(src.EmptiedDomains())
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ds.DomainNames, ds.N())
	fmt.Println(src.EmptiedDomains())

	src, err = csvio.NewSourceFS(fsys, files, csvio.Options{LabelFiles: labels, LabelsIgnore: []string{"O"}})
	if err != nil {
		log.Fatal(err)
	}
	_, err = dataset.Collect(context.Background(), src)
	fmt.Println(err)
	// Output:
	// [] false
	// [s1] 3
	// [s2] true
	// csvio: LabelsIgnore: value "O" matches no label (labels seen: "0", "1", "2")
}
