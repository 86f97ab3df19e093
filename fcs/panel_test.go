package fcs

import (
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMixedPanels checks that files whose detector carries different
// markers are refused when the channels are chosen by detector, and read
// when chosen by marker, each marker from its own detector.
func TestMixedPanels(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, labels []string, first float64) string {
		ev := mat.NewDense(3, 3, nil)
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				ev.Set(i, j, first+float64(10*j+i))
			}
		}
		var ps []Param
		for j, l := range labels {
			ps = append(ps, Param{Name: []string{"FL1-H", "FL2-H", "FL3-H"}[j], Label: l})
		}
		p := filepath.Join(dir, name)
		if err := WriteFile(p, &DataSet{Params: ps, Events: ev}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("patient1.fcs", []string{"CD4", "CD8", "CD3"}, 0)
	b := write("otherpanel.fcs", []string{"CD4", "CD3", "CD19"}, 100)
	for _, chans := range [][]string{nil, {"FL1-H", "FL2-H", "FL3-H"}, {"FL3-H"}} {
		_, err := NewSource([]string{a, b}, SourceOptions{Channels: chans})
		if err == nil || !strings.Contains(err.Error(), "different panels") {
			t.Errorf("channels %v: error %v, want one about different panels", chans, err)
		}
	}
	// FL1-H carries CD4 in both: no error.
	if _, err := NewSource([]string{a, b}, SourceOptions{Channels: []string{"FL1-H"}}); err != nil {
		t.Errorf("FL1-H: %v", err)
	}
	// By marker: CD3 is FL3-H in a, FL2-H in b.
	src, err := NewSource([]string{a, b}, SourceOptions{Channels: []string{"CD4", "CD3"}})
	if err != nil {
		t.Fatal(err)
	}
	ds := collect(t, src)
	want := []float64{0, 20, 1, 21, 2, 22, 100, 110, 101, 111, 102, 112}
	for i, v := range ds.X.RawMatrix().Data {
		if v != want[i] {
			t.Fatalf("by marker: values %v, want %v", ds.X.RawMatrix().Data, want)
		}
	}
}
