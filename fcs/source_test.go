package fcs

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/preprocess"
	"gonum.org/v1/gonum/mat"
)

// writeDomains writes n files of events with 4 parameters and a spillover
// matrix on FL1/FL2; it returns the paths and the events.
func writeDomains(t *testing.T, n int) ([]string, []*mat.Dense) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(42, 1))
	var paths []string
	var events []*mat.Dense
	for k := 0; k < n; k++ {
		rows := 50 + 37*k
		x := mat.NewDense(rows, 4, nil)
		for i := 0; i < rows; i++ {
			for j := 0; j < 4; j++ {
				x.Set(i, j, float64(float32(rng.Float64()*1000-100)))
			}
		}
		ds := &DataSet{
			Params:   []Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}, {Name: "FL2-A", Label: "CD19"}, {Name: "Time"}},
			Events:   x,
			Keywords: []Keyword{{"$SPILLOVER", "2,FL2-A,FL1-A,1,0.05,0.2,1"}},
		}
		p := filepath.Join(dir, "sample"+string(rune('A'+k))+".fcs")
		if err := WriteFile(p, ds); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		events = append(events, x)
	}
	return paths, events
}

func TestSource(t *testing.T) {
	paths, events := writeDomains(t, 3)
	src, err := NewSource(paths, SourceOptions{
		Channels:          []string{"cd19", "FSC-A", "FL1-A"},
		Compensate:        true,
		Transform:         preprocess.Asinh{Cofactor: 150},
		TransformChannels: []string{"CD19", "CD3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := src.Schema().Features; !reflect.DeepEqual(f, []string{"cd19", "FSC-A", "FL1-A"}) {
		t.Errorf("features %v", f)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if want := 50 + 87 + 124; ds.N() != want || src.Len() != want {
		t.Fatalf("%d rows, Len %d, want %d", ds.N(), src.Len(), want)
	}
	if !reflect.DeepEqual(ds.DomainNames, []string{"sampleA.fcs", "sampleB.fcs", "sampleC.fcs"}) {
		t.Errorf("domains %v", ds.DomainNames)
	}
	// Reference: compensate [FL2, FL1] by solving S^T y = x, then asinh.
	s := mat.NewDense(2, 2, []float64{1, 0.05, 0.2, 1})
	row := 0
	for k, x := range events {
		r, _ := x.Dims()
		for i := 0; i < r; i++ {
			obs := mat.NewVecDense(2, []float64{x.At(i, 2), x.At(i, 1)})
			var y mat.VecDense
			if err := y.SolveVec(s.T(), obs); err != nil {
				t.Fatal(err)
			}
			want := []float64{math.Asinh(y.AtVec(0) / 150), x.At(i, 0), math.Asinh(y.AtVec(1) / 150)}
			for j, w := range want {
				if g := ds.X.At(row, j); math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
					t.Fatalf("file %d row %d col %d = %v, want %v", k, i, j, g, w)
				}
			}
			if ds.Domain[row] != k {
				t.Fatalf("row %d domain %d, want %d", row, ds.Domain[row], k)
			}
			row++
		}
	}
	// A second pass gives the same rows, in blocks of any size.
	r, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b dataset.Block
	got := 0
	for {
		k, err := r.Read(&b, 13)
		if err != nil {
			break
		}
		for i := 0; i < k; i++ {
			if !reflect.DeepEqual(b.Row(i), ds.X.RawRowView(got+i)) {
				t.Fatalf("second pass row %d differs", got+i)
			}
		}
		got += k
	}
	if got != ds.N() {
		t.Errorf("second pass %d rows", got)
	}
}

func TestSourceErrors(t *testing.T) {
	paths, _ := writeDomains(t, 2)
	for _, tc := range []struct {
		paths []string
		opts  SourceOptions
		err   string
	}{
		{paths, SourceOptions{Channels: []string{"FL1-A", "APC-A"}}, `channel "APC-A" not found; available ($PnN / $PnS): "FSC-A", "FL1-A" / "CD3", "FL2-A" / "CD19", "Time"`},
		{[]string{paths[0], paths[0]}, SourceOptions{}, "same base name"},
		{nil, SourceOptions{}, "no file"},
		{paths, SourceOptions{Spillover: &Spillover{Channels: []string{"FL1-A", "FL3-A"}, Matrix: mat.NewDense(2, 2, []float64{1, 0, 0, 1})}}, `spillover channel "FL3-A" not found`},
		{paths, SourceOptions{Spillover: &Spillover{Channels: []string{"FL1-A", "FL2-A"}, Matrix: mat.NewDense(2, 2, []float64{1, 1, 1, 1})}}, "singular"},
		{paths, SourceOptions{Channels: []string{"FL1-A"}, Transform: preprocess.Log1pAbs{}, TransformChannels: []string{"Time"}}, "not one of the chosen channels"},
		{[]string{filepath.Join(filepath.Dir(paths[0]), "missing.fcs")}, SourceOptions{}, "no such file"},
	} {
		_, err := NewSource(tc.paths, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("err = %v, want one containing %q", err, tc.err)
		}
	}
}

// TestSourceReal streams real files with the channels they share.
func TestSourceReal(t *testing.T) {
	dir := dataDir(t)
	paths := []string{
		filepath.Join(dir, "fcsparser/Fortessa__FCS_3.0_Fortessa_PBS_Specimen_001_A1_A01.fcs"),
		filepath.Join(dir, "fcsparser/HTS_BD_LSR-II__HTS_BD_LSR_II_Mixed_Specimen_001_D6_D06.fcs"),
		filepath.Join(dir, "MorganConrad_fcs/AriaFile1.fcs"),
	}
	if _, err := NewSource(paths, SourceOptions{Channels: []string{"FSC-A", "SSC-A"}}); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated file accepted: %v", err)
	}
	src, err := NewSource(paths, SourceOptions{Channels: []string{"FSC-A", "SSC-A"}, AllowTruncated: true, Transform: preprocess.Log1pAbs{}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 3)
	for _, d := range ds.Domain {
		counts[d]++
	}
	if !reflect.DeepEqual(counts, []int{11585, 14945, 6052}) {
		t.Errorf("events per domain %v", counts)
	}
	// First row of the second file, against the file read directly.
	f, err := Open(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := f.ReadAll(EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i, j := f.FindParam("FSC-A"), f.FindParam("SSC-A")
	if g, w := ds.X.At(11585, 1), math.Log1p(math.Abs(x.At(0, j))); g != w || ds.X.At(11585, 0) != math.Log1p(math.Abs(x.At(0, i))) {
		t.Errorf("row 11585 = %v, want log1p of %v", ds.X.RawRowView(11585), []float64{x.At(0, i), x.At(0, j)})
	}
}

func TestInfo(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	ds := &DataSet{DataType: 'I', BigEndian: true, Params: []Param{{Name: "FSC", Bits: 16, Range: 1024}, {Name: "FL1", Label: "CD4", Bits: 24}}, Events: x}
	p := filepath.Join(t.TempDir(), "a.fcs")
	if err := WriteFile(p, ds); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := f.Info()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"version":"FCS3.1","datatype":"I","byteorder":"4,3,2,1","events":3,"parameters":[{"name":"FSC","label":"","bits":16,"range":1024},{"name":"FL1","label":"CD4","bits":24,"range":16777216}],"first_event":[1,2],"last_event":[5,6]}`
	if string(js) != want {
		t.Errorf("JSON\n%s\nwant\n%s", js, want)
	}
	var m map[string]any
	json.Unmarshal(js, &m)
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "byteorder,datatype,events,first_event,last_event,parameters,version" {
		t.Errorf("keys %v", keys)
	}
	var sb strings.Builder
	if err := in.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	const text = `version     FCS3.1
datatype    I
byteorder   4,3,2,1
events      3
parameters  2
#  name  label  bits  range     first  last
1  FSC   -      16    1024      1      5
2  FL1   CD4    24    16777216  2      6
`
	if sb.String() != text {
		t.Errorf("text\n%s\nwant\n%s", sb.String(), text)
	}
	os.Remove(p)
}

func TestOpenAllAndDefaults(t *testing.T) {
	paths, events := writeDomains(t, 2)
	// Default channels: every $PnN, when the files agree.
	src, err := NewSource(paths, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f := src.Schema().Features; !reflect.DeepEqual(f, []string{"FSC-A", "FL1-A", "FL2-A", "Time"}) {
		t.Errorf("features %v", f)
	}
	if d := src.Domains(); !reflect.DeepEqual(d, []string{"sampleA.fcs", "sampleB.fcs"}) {
		t.Errorf("domains %v", d)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ds.X.Slice(0, 50, 0, 4), events[0]) || !mat.Equal(ds.X.Slice(50, 137, 0, 4), events[1]) {
		t.Errorf("raw rows differ")
	}

	// A chained file on disk, and a file with other parameters.
	p := filepath.Join(t.TempDir(), "chain.fcs")
	a := &DataSet{Params: []Param{{Name: "X"}}, Events: mat.NewDense(1, 1, []float64{1}), BigEndian: true}
	b := &DataSet{Params: []Param{{Name: "X"}, {Name: "Y", Label: "CD4"}}, Events: mat.NewDense(1, 2, []float64{2, 3})}
	if err := WriteFile(p, a, b); err != nil {
		t.Fatal(err)
	}
	sets, err := OpenAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].ByteOrder() != "4,3,2,1" || sets[1].ByteOrder() != "1,2,3,4" || !reflect.DeepEqual(sets[1].Labels(), []string{"", "CD4"}) {
		t.Errorf("OpenAll: %d sets", len(sets))
	}
	kw := sets[1].Keywords()
	if kw[0].Key != "$BEGINANALYSIS" || kw[len(kw)-1].Key != "$P2S" {
		t.Errorf("keyword order %v", kw)
	}
	for _, s := range sets {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := NewSource([]string{paths[0], p}, SourceOptions{}); err == nil || !strings.Contains(err.Error(), "choose SourceOptions.Channels") {
		t.Errorf("mismatched parameters: %v", err)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "dir.fcs"), a); err == nil {
		t.Errorf("WriteFile into a missing directory did not fail")
	}
}
