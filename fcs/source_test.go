package fcs

import (
	"bytes"
	"context"
	"encoding/binary"
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
	var names []string
	for _, p := range src.Params() {
		names = append(names, p.Name+"/"+p.Label)
	}
	if !reflect.DeepEqual(names, []string{"FL2-A/CD19", "FSC-A/", "FL1-A/CD3"}) {
		t.Errorf("Params: %v", names)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if want := 50 + 87 + 124; ds.N() != want || src.Len() != want {
		t.Fatalf("%d rows, Len %d, want %d", ds.N(), src.Len(), want)
	}
	checkSkim(t, src, ds)
	if !reflect.DeepEqual(ds.DomainNames, []string{"sampleA", "sampleB", "sampleC"}) {
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
		{paths, SourceOptions{Channels: []string{"FL1-A", "APC-A"}}, `sampleA.fcs; available ($PnN / $PnS): "FSC-A", "FL1-A" / "CD3", "FL2-A" / "CD19", "Time"`},
		{paths, SourceOptions{Channels: []string{"FL1-A", "APC-A"}}, `fcs: channel "APC-A" not found in `},
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
	checkSkim(t, src, ds)
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
	const want = `{"version":"FCS3.1","datatype":"I","byteorder":"4,3,2,1","events":3,"parameters":[{"name":"FSC","label":"","bits":16,"range":1024},{"name":"FL1","label":"CD4","bits":24,"range":16777216}],"spillover":null,"first_event":[1,2],"last_event":[5,6]}`
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
	if strings.Join(keys, ",") != "byteorder,datatype,events,first_event,last_event,parameters,spillover,version" {
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
spillover   none
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
	if d := src.Domains(); !reflect.DeepEqual(d, []string{"sampleA", "sampleB"}) {
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
	if _, err := NewSource([]string{paths[0], p}, SourceOptions{}); err == nil || !strings.Contains(err.Error(), `has parameters "X", unlike `) || !strings.Contains(err.Error(), `("FSC-A", "FL1-A", "FL2-A", "Time"): name the channels to read`) {
		t.Errorf("mismatched parameters: %v", err)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "dir.fcs"), a); err == nil {
		t.Errorf("WriteFile into a missing directory did not fail")
	}
}

// TestSourceScale reads log-amplified channels ($PnE 4,0) of a FACScan
// file with SourceOptions.Scale: each value must be 10^(4 v / 1024) of the
// value decoded by hand from the file's bytes (flowCore's "linearize"; a
// $PnE offset of 0 is read as 1), while linear channels ($PnE 0,0, no $PnG)
// stay raw.
func TestSourceScale(t *testing.T) {
	dir := dataDir(t)
	path := filepath.Join(dir, "FlowIO/3FITC_4PE_004.fcs")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, want string
	}{{"$P1E", "0,0"}, {"$P3E", "4,0"}, {"$P3R", "1024"}, {"$P4E", "4,0"}, {"$P4R", "1024"}} {
		if v, _ := f.Keyword(c.key); strings.TrimSpace(v) != c.want {
			t.Fatalf("%s = %q, want %q", c.key, v, c.want)
		}
	}
	at := f.DataOffset()
	f.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []bool{false, true} {
		src, err := NewSource([]string{path}, SourceOptions{Channels: []string{"FSC-H", "FL1-H", "FL2-H"}, Scale: scale})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := dataset.Collect(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if ds.N() != 94569 {
			t.Fatalf("%d events", ds.N())
		}
		checkSkim(t, src, ds)
		for _, i := range []int{0, 1, 47000, 94568} {
			// $BYTEORD 1,2,3,4; 16-bit FSC-H, SSC-H, FL1-H, FL2-H; $PnR
			// 1024 masks to 10 bits.
			ev := raw[int(at)+8*i:]
			fsc := float64((int(ev[0]) | int(ev[1])<<8) & 1023)
			fl1 := float64((int(ev[4]) | int(ev[5])<<8) & 1023)
			fl2 := float64((int(ev[6]) | int(ev[7])<<8) & 1023)
			want := []float64{fsc, fl1, fl2}
			if scale {
				want = []float64{fsc, math.Pow(10, 4*fl1/1024), math.Pow(10, 4*fl2/1024)}
			}
			for j, w := range want {
				if g := ds.X.At(i, j); math.Abs(g-w) > 1e-12*math.Max(1, w) {
					t.Errorf("scale=%v: event %d channel %d = %v, want %v", scale, i+1, j+1, g, w)
				}
			}
		}
		// Linearized values lie in [1, 10^4): 4 decades.
		if scale {
			for i := 0; i < ds.N(); i++ {
				if v := ds.X.At(i, 1); v < 1 || v >= 1e4 {
					t.Fatalf("event %d FL1-H linearized to %v", i+1, v)
				}
			}
		}
	}
}

// TestSourceAllDataSets reads every data set of $NEXTDATA chains as
// domains named file#k, and only the first without AllDataSets.
func TestSourceAllDataSets(t *testing.T) {
	dir := t.TempDir()
	params := []Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}}
	set := func(vals ...float64) *DataSet {
		return &DataSet{Params: params, Events: mat.NewDense(len(vals)/2, 2, vals)}
	}
	chain := filepath.Join(dir, "chain.fcs")
	if err := WriteFile(chain, set(1, 2, 3, 4), set(5, 6, 7, 8, 9, 10), set(11, 12, 13, 14)); err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(dir, "single.fcs")
	if err := WriteFile(single, set(15, 16, 17, 18)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		all     bool
		domains []string
		x       []float64
		dom     []int
	}{
		{false, []string{"chain", "single"}, []float64{1, 2, 3, 4, 15, 16, 17, 18}, []int{0, 0, 1, 1}},
		{true, []string{"chain#1", "chain#2", "chain#3", "single"},
			[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, []int{0, 0, 1, 1, 1, 2, 2, 3, 3}},
	} {
		src, err := NewSource([]string{chain, single}, SourceOptions{AllDataSets: tc.all})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(src.Domains(), tc.domains) || src.Len() != len(tc.x)/2 {
			t.Errorf("all=%v: domains %v, %d rows", tc.all, src.Domains(), src.Len())
		}
		ds, err := dataset.Collect(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		checkSkim(t, src, ds)
		if !reflect.DeepEqual(ds.X.RawMatrix().Data, tc.x) || !reflect.DeepEqual(ds.Domain, tc.dom) || !reflect.DeepEqual(ds.DomainNames, tc.domains) {
			t.Errorf("all=%v: rows %v domains %v %v", tc.all, ds.X.RawMatrix().Data, ds.Domain, ds.DomainNames)
		}
	}
	// A data set with other parameters is named in the error.
	odd := filepath.Join(dir, "odd.fcs")
	if err := WriteFile(odd, set(1, 2, 3, 4), &DataSet{Params: params[:1], Events: mat.NewDense(1, 1, []float64{1})}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSource([]string{odd}, SourceOptions{AllDataSets: true}); err == nil || !strings.Contains(err.Error(), `odd.fcs (data set 2) has parameters "FSC-A", unlike `) {
		t.Errorf("mismatched data set: %v", err)
	}
}

// TestInfoNonFinite writes NaN and ±Inf events (as raw bytes: the writer
// refuses them) and checks the JSON summary encodes them as null.
func TestInfoNonFinite(t *testing.T) {
	ds := &DataSet{DataType: 'D', Params: []Param{{Name: "A"}, {Name: "B"}, {Name: "C"}}, Events: mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})}
	raw := mustWrite(t, ds)
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	at := f.DataOffset()
	for k, v := range []float64{math.NaN(), 2, math.Inf(1), 4, math.Inf(-1), 6.5} {
		binary.LittleEndian.PutUint64(raw[at+8*int64(k):], math.Float64bits(v))
	}
	f, err = Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := f.Info()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("JSON of non-finite events: %v", err)
	}
	if want := `"first_event":[null,2,null],"last_event":[4,null,6.5]`; !strings.Contains(string(js), want) {
		t.Errorf("JSON %s lacks %s", js, want)
	}
	var back Info
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.FirstEvent[0]) || back.FirstEvent[1] != 2 || back.LastEvent[2] != 6.5 || !math.IsNaN(back.LastEvent[1]) {
		t.Errorf("read back %v %v", back.FirstEvent, back.LastEvent)
	}
	// No events: null lists, as before.
	var empty Info
	if js, _ := json.Marshal(empty); !strings.Contains(string(js), `"first_event":null`) {
		t.Errorf("empty: %s", js)
	}
}
