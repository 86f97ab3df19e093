package csvio

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/internal/testsupport/realdata"
)

// cytofFiles returns the 16 CyTOF samples and their label files.
func cytofFiles(tb testing.TB) (files, labels []string) {
	dir := realdata.Dir(tb, "multicenter16_cytof")
	files, err := Glob([]string{filepath.Join(dir, "sample*.csv")})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range files {
		labels = append(labels, filepath.Join(dir, fmt.Sprintf("labels%d.csv", i+1)))
	}
	return files, labels
}

func TestCyTOF(t *testing.T) {
	files, labels := cytofFiles(t)
	if len(files) != 16 {
		t.Fatalf("%d sample files", len(files))
	}
	for i, f := range files {
		if want := fmt.Sprintf("sample%d.csv", i+1); filepath.Base(f) != want {
			t.Fatalf("file %d is %s, want %s (natural order)", i, f, want)
		}
	}
	for _, tc := range []struct {
		ignore  []string
		rows    int
		classes int
	}{{[]string{"0"}, 693643, 4}, {nil, 929685, 5}} {
		src, err := NewSource(files, Options{LabelFiles: labels, LabelsIgnore: tc.ignore})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := dataset.Collect(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if ds.N() != tc.rows || ds.D() != 8 || ds.NumDomains() != 16 || ds.NumClasses() != tc.classes {
			t.Errorf("ignore %q: %d rows x %d, %d domains, %d classes; want %d x 8, 16, %d",
				tc.ignore, ds.N(), ds.D(), ds.NumDomains(), ds.NumClasses(), tc.rows, tc.classes)
		}
		if ds.DomainNames[0] != "sample1" || ds.DomainNames[15] != "sample16" {
			t.Errorf("domains %q", ds.DomainNames)
		}
		if tc.ignore != nil && slices.Contains(ds.ClassNames, "0") {
			t.Errorf("ignored class present: %q", ds.ClassNames)
		}
	}
}

// TestCyTOFValues compares a sample, value by value, with encoding/csv and
// strconv.ParseFloat.
func TestCyTOFValues(t *testing.T) {
	files, _ := cytofFiles(t)
	name := files[0]
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ReadFile(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.N() != len(recs) {
		t.Fatalf("%d rows, want %d", ds.N(), len(recs))
	}
	for p, rec := range recs {
		for j, s := range rec {
			want, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := ds.X.At(p, j); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("row %d column %d: %v, want %v (%q)", p+1, j+1, got, want, s)
			}
		}
	}
}

func TestGvHD(t *testing.T) {
	dir := realdata.Dir(t, "gvhd_mclust")
	files := []string{filepath.Join(dir, "GvHD.pos.csv"), filepath.Join(dir, "GvHD.control.csv")}
	src, err := NewSource(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if !src.HasHeader() || !slices.Equal(ds.Features, []string{"CD4", "CD8b", "CD3", "CD8"}) {
		t.Errorf("header %v, features %q", src.HasHeader(), ds.Features)
	}
	if !slices.Equal(ds.DomainNames, []string{"GvHD.pos", "GvHD.control"}) || !slices.Equal(ds.DomainSizes(), []int{9083, 6809}) {
		t.Errorf("domains %q sizes %v", ds.DomainNames, ds.DomainSizes())
	}
	if ds.Label != nil || ds.Target != nil {
		t.Error("labels or targets without asking")
	}
	// First row of the file: 308,220,157,339.
	if got := ds.X.RawRowView(0); !slices.Equal(got, []float64{308, 220, 157, 339}) {
		t.Errorf("first row %v", got)
	}
}

// TestCyTOFParallel compares the parallel pass with the sequential one on
// the 16 CyTOF samples with their label files and log1p, Read by Read.
func TestCyTOFParallel(t *testing.T) {
	files, labels := cytofFiles(t)
	o := Options{Header: NoHeader, LabelFiles: labels, LabelsIgnore: []string{"0"}, Transform: func(x []float64) {
		for j, v := range x {
			x[j] = math.Log1p(v)
		}
	}}
	seq, err := NewSource(files, o)
	if err != nil {
		t.Fatal(err)
	}
	seq.workers = -1
	par, err := NewSource(files, o)
	if err != nil {
		t.Fatal(err)
	}
	par.workers = 2
	if rows, err := lockstep(t, seq, par, 4096); err != io.EOF || rows != 693643 {
		t.Errorf("%d rows, %v; want 693643, EOF", rows, err)
	}
}
