package csvio

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dicalab/dica/dataset"
	"gonum.org/v1/gonum/mat"
)

// cytofLike returns CSV text of n rows of d columns of numbers like those of
// the CyTOF files (with some in other forms when varied), and a label file
// with labels 0 to 4.
func cytofLike(rng *rand.Rand, n, d int, varied bool) (data, labels string) {
	var b, l strings.Builder
	for range n {
		for j := range d {
			if j > 0 {
				b.WriteByte(',')
			}
			switch {
			case varied && rng.IntN(5) == 0:
				s := randomDecimal(rng)
				for !finite(s) {
					s = randomDecimal(rng)
				}
				b.WriteString(s)
			case rng.IntN(6) == 0:
				b.WriteByte('0')
			default:
				v := math.Exp(rng.NormFloat64()*2 + 3)
				b.WriteString(strconv.FormatFloat(v, 'g', 5, 64))
			}
		}
		b.WriteByte('\n')
		l.WriteString(strconv.Itoa(rng.IntN(5)))
		l.WriteByte('\n')
	}
	return b.String(), l.String()
}

func finite(s string) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(v, 0)
}

// refRead is an independent reader for the test: encoding/csv and
// strconv.ParseFloat, one domain per file, labels from label files.
func refRead(t *testing.T, fsys fstest.MapFS, files, labelFiles []string, ignore string) *dataset.Dataset {
	t.Helper()
	var (
		x          []float64
		doms, labs []string
		d          int
	)
	for i, name := range files {
		r := csv.NewReader(bytes.NewReader(fsys[name].Data))
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Fields(string(fsys[labelFiles[i]].Data))
		if len(ls) != len(recs) {
			t.Fatalf("reference: %d labels, %d rows", len(ls), len(recs))
		}
		for p, rec := range recs {
			d = len(rec)
			if ls[p] == ignore {
				continue
			}
			for _, f := range rec {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatal(err)
				}
				x = append(x, v)
			}
			doms = append(doms, strings.TrimSuffix(name, ".csv"))
			labs = append(labs, ls[p])
		}
	}
	ds, err := dataset.New(mat.NewDense(len(doms), d, x), doms)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.SetLabels(labs); err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fsys := fstest.MapFS{}
	var files, labels []string
	for i := 1; i <= 3; i++ {
		data, lab := cytofLike(rng, 500+100*i, 8, true)
		name, lname := fmt.Sprintf("sample%d.csv", i), fmt.Sprintf("labels%d.csv", i)
		if i == 2 { // Windows line endings
			data = strings.ReplaceAll(data, "\n", "\r\n")
			lab = strings.ReplaceAll(lab, "\n", "\r\n")
		}
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
		fsys[lname] = &fstest.MapFile{Data: []byte(lab)}
		files, labels = append(files, name), append(labels, lname)
	}
	want := refRead(t, fsys, files, labels, "0")
	src, err := NewSourceFS(fsys, files, Options{LabelFiles: labels, LabelsIgnore: []string{"0"}})
	if err != nil {
		t.Fatal(err)
	}
	if src.HasHeader() {
		t.Error("header detected in data without one")
	}
	got, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	sameDataset(t, got, want)
	if !slices.Equal(got.Features, []string{"V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8"}) {
		t.Errorf("features %q", got.Features)
	}
}

func sameDataset(t *testing.T, got, want *dataset.Dataset) {
	t.Helper()
	if got.N() != want.N() || got.D() != want.D() {
		t.Fatalf("got %d x %d, want %d x %d", got.N(), got.D(), want.N(), want.D())
	}
	for p := range want.N() {
		for j, w := range want.X.RawRowView(p) {
			if g := got.X.At(p, j); math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("row %d column %d: %v, want %v", p, j, g, w)
			}
		}
	}
	if !slices.Equal(got.Domain, want.Domain) || !slices.Equal(got.DomainNames, want.DomainNames) {
		t.Errorf("domains %q, want %q", got.DomainNames, want.DomainNames)
	}
	if !slices.Equal(got.Label, want.Label) || !slices.Equal(got.ClassNames, want.ClassNames) {
		t.Errorf("classes %q, want %q", got.ClassNames, want.ClassNames)
	}
}

func TestColumns(t *testing.T) {
	fsys := fstest.MapFS{
		"a.csv": {Data: []byte("\uFEFFpatient,CD4,\"CD8\",cell,age\n" +
			"alice,1,2,T,30\n" +
			"\"bob\",3,4,\"B cell\",40\n" +
			"\n" +
			"alice, 5 ,6,T,31\n" +
			"carol,\"7\",8,B cell,50\n" +
			"bob,9,10,NK,41\r\n" +
			"carol,11,12,T,52\n" +
			"bob,13,14,B cell,42")},
	}
	for _, tc := range []struct {
		name         string
		o            Options
		features     []string
		x            []float64
		domains      []string
		dom          []int
		classes      []string
		lab          []int
		targets      []string
		y            []float64
		header       bool
		domainsNames []string
	}{{
		name:     "text domain and label",
		o:        Options{Domain: "patient", Label: "cell", Features: []string{"CD8", "CD4"}},
		features: []string{"CD8", "CD4"},
		x:        []float64{2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13},
		domains:  []string{"alice", "bob", "carol"},
		dom:      []int{0, 1, 0, 2, 1, 2, 1},
		classes:  []string{"T", "B cell", "NK"},
		lab:      []int{0, 1, 0, 1, 2, 0, 1},
		header:   true,
	}, {
		name:     "positions, all other columns as features, ignore",
		o:        Options{Domain: "1", Label: "V4", LabelsIgnore: []string{"NK"}},
		features: []string{"CD4", "CD8", "age"},
		x:        []float64{1, 2, 30, 3, 4, 40, 5, 6, 31, 7, 8, 50, 11, 12, 52, 13, 14, 42},
		domains:  []string{"alice", "bob", "carol"},
		dom:      []int{0, 1, 0, 2, 2, 1},
		classes:  []string{"T", "B cell"},
		lab:      []int{0, 1, 0, 1, 0, 1},
		header:   true,
	}, {
		name:     "targets, one domain per file",
		o:        Options{Target: []string{"age"}, Features: []string{"CD4", "3"}},
		features: []string{"CD4", "CD8"},
		x:        []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		domains:  []string{"a"},
		dom:      []int{0, 0, 0, 0, 0, 0, 0},
		targets:  []string{"age"},
		y:        []float64{30, 40, 31, 50, 41, 52, 42},
		header:   true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewSourceFS(fsys, []string{"a.csv"}, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if src.HasHeader() != tc.header {
				t.Errorf("HasHeader = %v", src.HasHeader())
			}
			ds, err := dataset.Collect(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ds.Features, tc.features) || !slices.Equal(ds.X.RawMatrix().Data, tc.x) {
				t.Errorf("features %q %v, want %q %v", ds.Features, ds.X.RawMatrix().Data, tc.features, tc.x)
			}
			if !slices.Equal(ds.DomainNames, tc.domains) || !slices.Equal(ds.Domain, tc.dom) {
				t.Errorf("domains %q %v, want %q %v", ds.DomainNames, ds.Domain, tc.domains, tc.dom)
			}
			if !slices.Equal(ds.ClassNames, tc.classes) || !slices.Equal(ds.Label, tc.lab) {
				t.Errorf("classes %q %v, want %q %v", ds.ClassNames, ds.Label, tc.classes, tc.lab)
			}
			var y []float64
			if ds.Target != nil {
				y = ds.Target.RawMatrix().Data
			}
			if !slices.Equal(ds.TargetNames, tc.targets) || !slices.Equal(y, tc.y) {
				t.Errorf("targets %q %v, want %q %v", ds.TargetNames, y, tc.targets, tc.y)
			}
		})
	}
}

func TestHeaderDetection(t *testing.T) {
	fsys := fstest.MapFS{
		"num.csv":  {Data: []byte("1,2,x\n3,4,y\n5,6,x\n7,8,y\n")},
		"nums.csv": {Data: []byte("1,2,3\n3,4,5\n5,6,7\n")},
		"hdr.csv":  {Data: []byte("1,2,3\n3,4,5\n5,6,7\n")},
	}
	// Text in the positional domain column is not a header.
	src, err := NewSourceFS(fsys, []string{"num.csv"}, Options{Domain: "V3"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if src.HasHeader() || ds.N() != 4 || !slices.Equal(ds.DomainNames, []string{"x", "y"}) {
		t.Errorf("header %v, %d rows, domains %q", src.HasHeader(), ds.N(), ds.DomainNames)
	}
	// Numbers only: no header unless told.
	for _, tc := range []struct {
		h    HeaderMode
		n    int
		feat []string
	}{{DetectHeader, 3, []string{"V1", "V2", "V3"}}, {NoHeader, 3, []string{"V1", "V2", "V3"}}, {WithHeader, 2, []string{"1", "2", "3"}}} {
		src, err := NewSourceFS(fsys, []string{"nums.csv"}, Options{Header: tc.h})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := dataset.Collect(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if ds.N() != tc.n || !slices.Equal(ds.Features, tc.feat) {
			t.Errorf("header mode %d: %d rows, features %q; want %d, %q", tc.h, ds.N(), ds.Features, tc.n, tc.feat)
		}
	}
}

// readAll reads a pass block by block, copying the blocks.
func readAll(t *testing.T, src dataset.Source, max int) (blocks []dataset.Block, doms, classes []string) {
	t.Helper()
	r, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b dataset.Block
	for {
		n, err := r.Read(&b, max)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != b.Rows || n > max || n == 0 {
			t.Fatalf("Read returned %d, block has %d rows, max %d", n, b.Rows, max)
		}
		c := dataset.Block{Rows: b.Rows, D: b.D, T: b.T,
			X: slices.Clone(b.X[:n*b.D]), Domain: slices.Clone(b.Domain[:n]), Label: slices.Clone(b.Label[:n])}
		blocks = append(blocks, c)
	}
	if n, err := r.Read(&b, max); n != 0 || err != io.EOF {
		t.Errorf("Read after the end: %d, %v", n, err)
	}
	return blocks, r.Domains(), r.Classes()
}

func TestTwoPassesIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fsys := fstest.MapFS{}
	var files, labels []string
	for i := 1; i <= 4; i++ {
		data, lab := cytofLike(rng, 50+37*i, 5, false)
		files = append(files, fmt.Sprintf("s%d.csv", i))
		labels = append(labels, fmt.Sprintf("l%d.csv", i))
		fsys[files[i-1]] = &fstest.MapFile{Data: []byte(data)}
		fsys[labels[i-1]] = &fstest.MapFile{Data: []byte(lab)}
	}
	src, err := NewSourceFS(fsys, files, Options{LabelFiles: labels, LabelsIgnore: []string{"0", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	b1, d1, c1 := readAll(t, src, 64)
	b2, d2, c2 := readAll(t, src, 64)
	rows := 0
	for i := range b1 {
		rows += b1[i].Rows
		if !slices.Equal(b1[i].X, b2[i].X) || !slices.Equal(b1[i].Domain, b2[i].Domain) || !slices.Equal(b1[i].Label, b2[i].Label) {
			t.Fatalf("block %d differs between passes", i)
		}
	}
	if len(b1) != len(b2) || !slices.Equal(d1, d2) || !slices.Equal(c1, c2) {
		t.Errorf("passes differ: %d/%d blocks, domains %q/%q, classes %q/%q", len(b1), len(b2), d1, d2, c1, c2)
	}
	if len(d1) != 4 || len(c1) != 3 {
		t.Errorf("domains %q classes %q", d1, c1)
	}
	// Block boundaries do not change the rows: compare with one-row blocks.
	b3, _, _ := readAll(t, src, 1)
	if len(b3) != rows {
		t.Errorf("%d one-row blocks, want %d", len(b3), rows)
	}
	var x1, x3 []float64
	for i := range b1 {
		x1 = append(x1, b1[i].X...)
	}
	for i := range b3 {
		x3 = append(x3, b3[i].X...)
	}
	if !slices.Equal(x1, x3) {
		t.Error("rows differ with block size 1")
	}
}

func TestTransformGzipSeparator(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("CD4;CD8\n0;1\n2;3\n"))
	w.Close()
	fsys := fstest.MapFS{"p1.csv.gz": {Data: gz.Bytes()}, "p2.txt": {Data: []byte("CD4;CD8\n4;5\n6;7\n")}}
	src, err := NewSourceFS(fsys, []string{"p1.csv.gz", "p2.txt"}, Options{Comma: ';', Transform: func(x []float64) {
		for j := range x {
			x[j] = math.Log1p(x[j])
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Log1p(0), math.Log1p(1), math.Log1p(2), math.Log1p(3), math.Log1p(4), math.Log1p(5), math.Log1p(6), math.Log1p(7)}
	if !slices.Equal(ds.X.RawMatrix().Data, want) || !slices.Equal(ds.DomainNames, []string{"p1", "p2"}) || !slices.Equal(ds.Features, []string{"CD4", "CD8"}) {
		t.Errorf("got %v %q %q", ds.X.RawMatrix().Data, ds.DomainNames, ds.Features)
	}
}

func TestErrors(t *testing.T) {
	fsys := fstest.MapFS{
		"sample1.csv":   {Data: []byte("1,2,3\n4,5,6\n")},
		"labels1.csv":   {Data: []byte("1\n2\n")},
		"sample3.csv":   {Data: []byte("1,2,3\n4,5,6\n7,8,9\n")},
		"labels3.csv":   {Data: []byte("1\n2\n")},
		"labels4.csv":   {Data: []byte("1\n2\n\n3\n4\n")},
		"bad.csv":       {Data: []byte("1,2,3\n4,5,6\n7,1.2.3,9\n")},
		"nan.csv":       {Data: []byte("1,2,3\n4,NaN,6\n")},
		"inf.csv":       {Data: []byte("1,2,3\n4,5,-Inf\n")},
		"big.csv":       {Data: []byte("1,2,3\n4,5,1e999\n")},
		"empty.csv":     {Data: []byte("1,2,3\n4,,6\n")},
		"short.csv":     {Data: []byte("1,2,3\n\n4,5\n")},
		"long.csv":      {Data: []byte("1,2,3\n4,5,6,7\n")},
		"longer.csv":    {Data: []byte("1,2,3\n4,5,6,,\n")},
		"trail.csv":     {Data: []byte("1,2,\n3,4,5\n")},
		"four.csv":      {Data: []byte("1,2,3,4\n")},
		"quote.csv":     {Data: []byte("1,2,3\n4,\"5,6\n")},
		"hdr.csv":       {Data: []byte("CD4,CD8b,CD3,CD8\n1,2,3,4\n")},
		"hdr2.csv":      {Data: []byte("CD4,CD8,CD3,CD8b\n1,2,3,4\n")},
		"nothing.csv":   {Data: []byte("\n\n")},
		"neg.csv":       {Data: []byte("1,2\n-3,4\n")},
		"d/sample1.csv": {Data: []byte("1,2,3\n")},
		"nolab.csv":     {Data: []byte("a,b,c\n1,2,x\n3,4, \n")},
		"nodom.csv":     {Data: []byte("a,b,c\n1,2,x\n3,4,\"\"\n")},
		"hex.csv":       {Data: []byte("1,2,3\n4,0x1p3,6\n")},
		"under.csv":     {Data: []byte("1,2,3\n4,5,1_000\n")},
		"expu.csv":      {Data: []byte("1,2,3\n1e1_0,5,6\n")},
		"hdronly.csv":   {Data: []byte("CD4,CD8b,CD3,CD8\n\n")},
		"v.csv":         {Data: []byte("V1,V2\n")},
	}
	log := func(x []float64) {
		for j := range x {
			x[j] = math.Log(x[j])
		}
	}
	for _, tc := range []struct {
		files []string
		o     Options
		want  string
	}{
		{[]string{"sample1.csv", "bad.csv"}, Options{}, `bad.csv:3: column 2: cannot parse "1.2.3" as a number`},
		{[]string{"nan.csv"}, Options{}, `nan.csv:2: column 2: "NaN" is not a finite number`},
		{[]string{"inf.csv"}, Options{}, `inf.csv:2: column 3: "-Inf" is not a finite number`},
		{[]string{"big.csv"}, Options{}, `big.csv:2: column 3: "1e999" is not a finite number`},
		{[]string{"empty.csv"}, Options{}, `empty.csv:2: column 2: cannot parse "" as a number`},
		{[]string{"hex.csv"}, Options{}, `hex.csv:2: column 2: cannot parse "0x1p3" as a number: numbers are decimal (digits, a point, an exponent such as e-3)`},
		{[]string{"under.csv"}, Options{}, `under.csv:2: column 3: cannot parse "1_000" as a number: numbers are decimal (digits, a point, an exponent such as e-3)`},
		{[]string{"expu.csv"}, Options{}, `expu.csv:2: column 1: cannot parse "1e1_0" as a number: numbers are decimal (digits, a point, an exponent such as e-3)`},
		{[]string{"v.csv"}, Options{}, `csvio: v.csv: no rows, only a header line`},
		{[]string{"hdr.csv", "hdronly.csv"}, Options{}, `csvio: hdronly.csv: no rows, only a header line`},
		{[]string{"v.csv"}, Options{Header: NoHeader}, `v.csv:1: column 1: cannot parse "V1" as a number (line 1 is read as data: the files have no header)`},
		{[]string{"sample1.csv", "v.csv"}, Options{}, `csvio: v.csv: first row has 2 fields but sample1.csv has 3`},
		{[]string{"short.csv"}, Options{}, `short.csv:3: 2 fields, want 3`},
		{[]string{"long.csv"}, Options{}, `long.csv:2: 4 fields, want 3`},
		{[]string{"longer.csv"}, Options{}, `longer.csv:2: 5 fields, want 3`},
		{[]string{"trail.csv"}, Options{}, `trail.csv:2: column 3: value "5" after the last column (the first row of trail.csv ends with a separator, so the files have 2 columns and a last field that must be empty)`},
		{[]string{"quote.csv"}, Options{}, `quote.csv:2: column 2: quoted field not closed on its line`},
		{[]string{"sample1.csv", "four.csv"}, Options{}, `csvio: four.csv: first row has 4 fields but sample1.csv has 3`},
		{[]string{"hdr.csv", "hdr2.csv"}, Options{}, `csvio: hdr2.csv: header differs from that of hdr.csv in column 2: "CD8" against "CD8b"`},
		{[]string{"sample3.csv"}, Options{LabelFiles: []string{"labels3.csv"}}, `labels3.csv has 2 lines but sample3.csv has 3 rows`},
		{[]string{"sample3.csv"}, Options{LabelFiles: []string{"labels4.csv"}}, `labels4.csv has 4 lines but sample3.csv has 3 rows`},
		{[]string{"hdr.csv"}, Options{Features: []string{"CD4", "CD5"}}, `csvio: no column "CD5" in hdr.csv; available: "CD4", "CD8b", "CD3", "CD8"`},
		{[]string{"sample1.csv"}, Options{Domain: "V4"}, `csvio: no column "V4" in sample1.csv; available: V1 to V3 or 1 to 3 (no header)`},
		{[]string{"hdr.csv"}, Options{Label: "CD4", Features: []string{"CD4"}}, `csvio: column "CD4" (feature) is used twice`},
		{[]string{"sample1.csv", "missing.csv"}, Options{}, `csvio: open missing.csv: file does not exist`},
		{[]string{"sample1.csv"}, Options{LabelFiles: []string{"nolabels.csv"}}, `csvio: open nolabels.csv: file does not exist`},
		{[]string{"nothing.csv"}, Options{}, `csvio: nothing.csv: no rows`},
		{[]string{"sample1.csv"}, Options{LabelsIgnore: []string{"0"}}, `csvio: LabelsIgnore without labels (set Label or LabelFiles)`},
		{[]string{"sample1.csv"}, Options{Label: "1", Target: []string{"2"}}, `csvio: both labels and targets are given; a data set has one or the other`},
		{[]string{"sample1.csv", "d/sample1.csv"}, Options{}, `csvio: files sample1.csv and d/sample1.csv would both be domain "sample1"; rename one or use a domain column`},
		{[]string{"sample1.csv", "sample3.csv"}, Options{LabelFiles: []string{"labels1.csv"}}, `csvio: 2 data files but 1 label files`},
		{[]string{"sample1.csv"}, Options{Comma: 'é'}, `csvio: separator 'é': want a single-byte character other than a quote or a line ending`},
		{[]string{"neg.csv"}, Options{Transform: log}, `neg.csv:2: column 1: transform gives NaN`},
		{nil, Options{}, `csvio: no files`},
		{[]string{"nolab.csv"}, Options{Label: "c"}, `nolab.csv:3: column 3: empty label`},
		{[]string{"nodom.csv"}, Options{Domain: "c"}, `nodom.csv:3: column 3: empty domain`},
		{[]string{"hdr.csv"}, Options{Features: []string{"CD4"}, Domain: "CD3", Label: "CD3"}, `csvio: column "CD3" (label) is used twice`},
	} {
		src, err := NewSourceFS(fsys, tc.files, tc.o)
		if err == nil {
			_, err = dataset.Collect(context.Background(), src)
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q %+v: error %v\nwant %s", tc.files, tc.o, err, tc.want)
		}
	}
	// A ParseError carries its position.
	src, _ := NewSourceFS(fsys, []string{"bad.csv"}, Options{})
	_, err := dataset.Collect(context.Background(), src)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != "bad.csv" || pe.Line != 3 || pe.Column != 2 {
		t.Errorf("error %#v", err)
	}
}

func TestContextAndClose(t *testing.T) {
	fsys := fstest.MapFS{"a.csv": {Data: []byte("1,2\n3,4\n5,6\n")}}
	src, err := NewSourceFS(fsys, []string{"a.csv"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := src.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b dataset.Block
	if n, err := r.Read(&b, 1); n != 1 || err != nil || b.X[0] != 1 || b.X[1] != 2 {
		t.Fatalf("first row: %d, %v, %v", n, err, b.X)
	}
	cancel()
	if _, err := r.Read(&b, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	r, _ = src.Open(context.Background())
	r.Close()
	if _, err := r.Read(&b, 1); err == nil || err == io.EOF {
		t.Errorf("Read after Close: %v", err)
	}
}

func TestNoAllocationPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	data, lab := cytofLike(rng, 20000, 8, false)
	fsys := fstest.MapFS{"s.csv": {Data: []byte(data)}, "l.csv": {Data: []byte(lab)}}
	src, err := NewSourceFS(fsys, []string{"s.csv"}, Options{LabelFiles: []string{"l.csv"}, LabelsIgnore: []string{"0"}})
	if err != nil {
		t.Fatal(err)
	}
	var b dataset.Block
	allocs := testing.AllocsPerRun(2, func() {
		r, err := src.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := r.Read(&b, 4096); err != nil {
				break
			}
		}
		r.Close()
	})
	if allocs > 100 {
		t.Errorf("%v allocations for a pass over 20000 rows", allocs)
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"sample10.csv", "sample2.csv", "sample1.csv", "labels1.csv"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Glob([]string{filepath.Join(dir, "sample*.csv"), filepath.Join(dir, "*1.csv")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sample1.csv", "sample2.csv", "sample10.csv", "labels1.csv"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("Glob = %q, want %q", got, want)
	}
	if _, err := Glob([]string{filepath.Join(dir, "x*.csv")}); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("no match: %v", err)
	}
	// ReadFile on a real file.
	p := filepath.Join(dir, "gvhd.csv")
	os.WriteFile(p, []byte("CD4,CD8\n1,2\n3,4\n"), 0o644)
	ds, err := ReadFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.N() != 2 || !slices.Equal(ds.DomainNames, []string{"gvhd"}) || ds.X.At(1, 1) != 4 {
		t.Errorf("ReadFile: %d rows, domains %q", ds.N(), ds.DomainNames)
	}
}

// TestManyNames uses more classes and domains than the small lookup cache
// holds, and checks their numbering in order of first appearance.
func TestManyNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	b.WriteString("x,dom,lab\n")
	var doms, labs dataset.Index
	var wantDom, wantLab []int
	for p := range 2000 {
		d := fmt.Sprintf("d%d", rng.IntN(30))
		l := fmt.Sprintf("c%d", rng.IntN(40))
		fmt.Fprintf(&b, "%d,%s,%s\n", p, d, l)
		if l == "c3" || l == "c17" {
			continue
		}
		wantDom = append(wantDom, doms.ID(d))
		wantLab = append(wantLab, labs.ID(l))
	}
	fsys := fstest.MapFS{"m.csv": {Data: []byte(b.String())}}
	src, err := NewSourceFS(fsys, []string{"m.csv"}, Options{Domain: "dom", Label: "lab", LabelsIgnore: []string{"c3", "c17"}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Domain, wantDom) || !slices.Equal(ds.DomainNames, doms.Names()) ||
		!slices.Equal(ds.Label, wantLab) || !slices.Equal(ds.ClassNames, labs.Names()) {
		t.Errorf("domains %q classes %q; want %q %q", ds.DomainNames, ds.ClassNames, doms.Names(), labs.Names())
	}
	if len(ds.ClassNames) != 38 || len(ds.DomainNames) != 30 {
		t.Errorf("%d classes, %d domains", len(ds.ClassNames), len(ds.DomainNames))
	}
}
