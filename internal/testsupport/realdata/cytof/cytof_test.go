package cytof

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dicalab/dica/internal/testsupport/realdata"
)

// TestLoad checks Load against the files read line by line with strconv:
// every cell unlabelled, the labelled cells with their populations.
func TestLoad(t *testing.T) {
	dir := realdata.Dir(t, "multicenter16_cytof")
	const sample = 16
	all := Load(t, false, sample)
	lab := Load(t, true, sample)
	pop := Populations(t, lab)
	if all.D() != 8 || all.NumDomains() != 1 || all.DomainNames[0] != "sample16" || all.Label != nil {
		t.Fatalf("unlabelled: %d columns, domains %q, labels %v", all.D(), all.DomainNames, all.Label != nil)
	}
	xf, err := os.Open(filepath.Join(dir, "sample16.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer xf.Close()
	lf, err := os.Open(filepath.Join(dir, "labels16.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	xs, ls := bufio.NewScanner(xf), bufio.NewScanner(lf)
	row, labelled := 0, 0
	for xs.Scan() {
		if !ls.Scan() {
			t.Fatal("fewer labels than cells")
		}
		l, err := strconv.Atoi(strings.TrimSpace(ls.Text()))
		if err != nil {
			t.Fatal(err)
		}
		for j, f := range strings.Split(xs.Text(), ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			want := math.Asinh(v / 5)
			if got := all.X.At(row, j); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("cell %d marker %d: %v, want %v", row+1, j+1, got, want)
			}
			if l != 0 && lab.X.At(labelled, j) != want {
				t.Fatalf("labelled cell %d marker %d differs", labelled+1, j+1)
			}
		}
		if l != 0 {
			if pop[labelled] != l-1 {
				t.Fatalf("labelled cell %d: population %d, want %d", labelled+1, pop[labelled], l-1)
			}
			labelled++
		}
		row++
	}
	if row != all.N() || labelled != lab.N() {
		t.Errorf("%d and %d cells, want %d and %d", all.N(), lab.N(), row, labelled)
	}
}
