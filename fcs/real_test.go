package fcs

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dataDir returns the shared FCS folder, or skips the test.
func dataDir(t testing.TB) string {
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "shared", "data")
	}
	dir := filepath.Join(root, "fcs")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real FCS files not available (%v): set DICA_DATA or provide ../shared/data/fcs", err)
	}
	return dir
}

// realFile is a row of the table in ../shared/data/README.md; bits lists
// $PnB per parameter when mixed; dataAt, when not 0, is the DATA offset
// established by inspecting the file (otherwise it is the TEXT $BEGINDATA,
// or the HEADER offset for FCS 2.0 files without it).
type realFile struct {
	name      string
	version   string
	dtype     byte
	big       bool
	bits      int
	mixedBits []int
	par, tot  int
	dataAt    int64
	present   int // complete events in a truncated file
}

var realFiles = []realFile{
	{name: "FlowIO/3FITC_4PE_004.fcs", version: "FCS2.0", dtype: 'I', bits: 16, par: 4, tot: 94569},
	{name: "FlowIO/B01_KC-A-W---91-US.fcs", version: "FCS3.1", dtype: 'I', big: true, bits: 32, par: 14, tot: 1589},
	{name: "FlowIO/G11.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 12, tot: 5785},
	{name: "FlowIO/variable_int_example.fcs", version: "FCS3.0", dtype: 'I', mixedBits: append(rep(16, 25), 32), par: 26, tot: 2},
	{name: "FlowKit/gate_ref__data1.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 8, tot: 13367},
	{name: "FlowKit/index_sorted__index_sorted_example.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 13, tot: 384},
	{name: "FlowKit/noncompliant__data_start_offset_discrepancy_example.fcs", version: "FCS3.0", dtype: 'I', mixedBits: append(rep(16, 25), 32), par: 26, tot: 2},
	{name: "FlowKit/noncompliant__data_stop_offset_discrepancy_example.fcs", version: "FCS3.0", dtype: 'I', mixedBits: append(rep(16, 25), 32), par: 26, tot: 2},
	{name: "FlowKit/simple_diamond_example__test_data_diamond_01.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 2, tot: 200000},
	{name: "FlowKit/simple_line_example__data_set_simple_line_100.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 2, tot: 100},
	{name: "FlowKit/test_comp_example.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 18, tot: 10703},
	{name: "FlowKit/test_data_2d_01.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 2, tot: 10000},
	// $BEGINDATA says 2634 but decodes to garbage (1.4e-19, -5.9e+20, ...);
	// the HEADER's 2636 gives plausible intensities (33471.2, 33250, ...).
	{name: "MorganConrad_fcs/AriaFile1.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 12, tot: 10000, dataAt: 2636, present: 6052},
	{name: "MorganConrad_fcs/iCyt.fcs", version: "FCS3.0", dtype: 'I', bits: 32, par: 18, tot: 5000},
	{name: "fcsparser/FACSCaliburHTS__Sample_Well_A02.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 8, tot: 37395},
	{name: "fcsparser/Fortessa__FCS_3.0_Fortessa_PBS_Specimen_001_A1_A01.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 11, tot: 11585},
	{name: "fcsparser/HTS_BD_LSR-II__HTS_BD_LSR_II_Mixed_Specimen_001_D6_D06.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 11, tot: 14945},
	{name: "fcsparser/MiltenyiBiotec__FCS2.0__EY_2013-07-19_PBS_FCS_2.0_Custom_Without_Add_Well_A1.001.fcs", version: "FCS2.0", dtype: 'F', bits: 32, par: 16, tot: 10000},
	{name: "fcsparser/MiltenyiBiotec__FCS3.0__FCS3.0_Custom_Compatible.fcs", version: "FCS3.0", dtype: 'F', bits: 32, par: 16, tot: 10000},
	{name: "fcsparser/MiltenyiBiotec__FCS3.1__EY_2013-07-19_PBS_FCS_3.1_Custom_Add_Well_A1.001.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 19, tot: 10000},
	{name: "fcsparser/MiltenyiBiotec__FCS3.1__EY_2013-07-19_PBS_FCS_3.1_Custom_Without_Add_Well_A1.001.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 19, tot: 10000},
	{name: "fcsparser/MiltenyiBiotec__FCS3.1__EY_2013-07-19_PBS_FCS_3.1_Well_A1.001.fcs", version: "FCS3.1", dtype: 'F', bits: 32, par: 19, tot: 10000},
	{name: "fcsparser/cyflow_cube_8__cyflow_cube_8.fcs", version: "FCS3.0", dtype: 'I', mixedBits: append(rep(16, 8), 32, 8), par: 10, tot: 725},
	{name: "fcsparser/fake_bitmask_error__fcs1_cleaned.lmd", version: "FCS2.0", dtype: 'I', bits: 16, par: 7, tot: 50000},
	// HEADER DATA offsets blank.
	{name: "fcsparser/fake_large_fcs__fake_large_fcs.fcs", version: "FCS3.0", dtype: 'F', big: true, bits: 32, par: 11, tot: 11585},
	{name: "flowCore/060909.001", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 7, tot: 10000},
	{name: "flowCore/fcs2_int16_50000ev_8par_random.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 8, tot: 50000},
	{name: "flowCore/int-10000_events_random.fcs", version: "FCS3.0", dtype: 'I', big: true, bits: 32, par: 6, tot: 10000},
	{name: "flowCore/int-15_scatter_events.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 2, tot: 15},
	{name: "flowCore/int-homogenous_matrix.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 2, tot: 1250},
	{name: "flowCore/testfile_17parameters.fcs", version: "FCS2.0", dtype: 'I', big: true, bits: 16, par: 17, tot: 2},
}

func rep(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// handEvent decodes event i by hand from the raw file bytes.
func handEvent(t *testing.T, raw []byte, at int64, rf realFile, bits []int, ranges []float64, i int) []float64 {
	t.Helper()
	eb := 0
	for _, b := range bits {
		eb += b / 8
	}
	off := int(at) + i*eb
	var ord binary.ByteOrder = binary.LittleEndian
	if rf.big {
		ord = binary.BigEndian
	}
	x := make([]float64, len(bits))
	for j, b := range bits {
		w := b / 8
		c := raw[off : off+w]
		off += w
		switch {
		case rf.dtype == 'F':
			x[j] = float64(math.Float32frombits(ord.Uint32(c)))
		case rf.dtype == 'D':
			x[j] = math.Float64frombits(ord.Uint64(c))
		default:
			var v uint64
			switch w {
			case 1:
				v = uint64(c[0])
			case 2:
				v = uint64(ord.Uint16(c))
			case 4:
				v = uint64(ord.Uint32(c))
			case 8:
				v = ord.Uint64(c)
			}
			// Mask: smallest power of two >= range, minus one.
			if r := ranges[j]; r > 0 && r <= math.Exp2(float64(b)) {
				p := 1.0
				for p < r {
					p *= 2
				}
				v &= uint64(p) - 1
			}
			x[j] = float64(v)
		}
	}
	return x
}

func TestRealFiles(t *testing.T) {
	dir := dataDir(t)
	for _, rf := range realFiles {
		t.Run(filepath.Base(rf.name), func(t *testing.T) {
			path := filepath.Join(dir, rf.name)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Version() != rf.version || f.DataType() != rf.dtype || f.NumParams() != rf.par || f.NumEvents() != rf.tot {
				t.Fatalf("got %s %c $PAR %d $TOT %d, want %s %c %d %d", f.Version(), f.DataType(), f.NumParams(), f.NumEvents(), rf.version, rf.dtype, rf.par, rf.tot)
			}
			bits := rf.mixedBits
			if bits == nil {
				bits = rep(rf.bits, rf.par)
			}
			ranges := make([]float64, rf.par)
			for j, p := range f.Params() {
				if p.Bits != bits[j] {
					t.Errorf("$P%dB = %d, want %d", j+1, p.Bits, bits[j])
				}
				// Independent reading of $PnR from the keywords.
				v, _ := f.Keyword("$p" + strconv.Itoa(j+1) + "r")
				ranges[j], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
				if p.Range != ranges[j] {
					t.Errorf("$P%dR = %v, keyword %q", j+1, p.Range, v)
				}
			}
			at := rf.dataAt
			if at == 0 {
				if v, ok := f.Keyword("$BEGINDATA"); ok {
					n, _ := strconv.Atoi(strings.TrimSpace(v))
					at = int64(n)
				} else {
					n, _ := strconv.Atoi(strings.TrimSpace(string(raw[26:34])))
					at = int64(n)
				}
			}
			if f.DataOffset() != at {
				t.Errorf("DATA at %d, want %d", f.DataOffset(), at)
			}
			want := rf.tot
			if rf.present != 0 {
				want = rf.present
			}
			x, err := f.ReadAll(EventOptions{AllowTruncated: rf.present != 0})
			if err != nil {
				t.Fatal(err)
			}
			n, p := x.Dims()
			if n != want || p != rf.par {
				t.Fatalf("ReadAll gave %dx%d, want %dx%d", n, p, want, rf.par)
			}
			for _, i := range []int{0, n / 2, n - 1} {
				want := handEvent(t, raw, at, rf, bits, ranges, i)
				for j, w := range want {
					if g := x.At(i, j); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
						t.Errorf("event %d param %d = %v, decoded by hand %v", i, j+1, g, w)
					}
				}
			}
			// Integer values lie in [0, $PnR) except in the 32-bit time
			// parameter of variable_int_example.fcs and its copies, whose
			// $PnR (11209599) is below values in the file (15691602); all
			// lie below the mask 2^ceil(log2 $PnR).
			if rf.dtype == 'I' {
				for j := 0; j < p; j++ {
					bound := ranges[j]
					if bits[j] == 32 && rf.par == 26 {
						bound = math.Exp2(math.Ceil(math.Log2(bound)))
					}
					for i := 0; i < n; i++ {
						if v := x.At(i, j); v < 0 || bound > 0 && v >= bound {
							t.Fatalf("event %d param %d = %v outside [0, %v)", i, j+1, v, bound)
						}
					}
				}
			}
		})
	}
}

func TestRealDamaged(t *testing.T) {
	dir := dataDir(t)

	// Truncated: $TOT 10000 but the file ends after (size-2636)/48 events.
	path := filepath.Join(dir, "MorganConrad_fcs/AriaFile1.fcs")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	present := int((st.Size() - 2636) / 48)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.ReadAll(EventOptions{})
	var te *TruncatedError
	if !errors.As(err, &te) || te.Expected != 10000 || te.Present != present {
		t.Fatalf("ReadAll: %v, want truncation 10000 / %d", err, present)
	}
	if !strings.Contains(err.Error(), "10000") || !strings.Contains(err.Error(), strconv.Itoa(present)) {
		t.Errorf("error %q does not give the counts", err)
	}
	x, err := f.ReadAll(EventOptions{AllowTruncated: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := x.Dims(); n != present || present != 6052 {
		t.Errorf("AllowTruncated read %d events, want %d (= 6052)", n, present)
	}
	in, err := f.Info()
	if !errors.As(err, &te) || in.Events != 10000 || len(in.LastEvent) != 12 || in.LastEvent[0] != x.At(present-1, 0) {
		t.Errorf("Info: %v %+v", err, in)
	}

	// HEADER and TEXT only.
	f2, err := Open(filepath.Join(dir, "fcsparser/cytek-nl-2000__sample_header.fcs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if f2.NumParams() != 27 || f2.NumEvents() != 20000 || f2.Params()[5].Name != "B1-A" || f2.Params()[0].Range != 1229736 {
		t.Errorf("sample_header metadata: %d params, %d events, %+v", f2.NumParams(), f2.NumEvents(), f2.Params()[:6])
	}
	if v, ok := f2.Keyword("$cyt"); !ok || v != "Aurora" {
		t.Errorf("$CYT = %q, %v", v, ok)
	}
	sp, err := f2.Spillover()
	if err != nil || len(sp.Channels) != 22 || sp.Channels[0] != "B1-A" || sp.Params[0] != 5 || sp.Matrix.At(1, 0) != 1e-6 || sp.Matrix.At(21, 21) != 1 {
		t.Errorf("sample_header spillover: %v %+v", err, sp)
	}
	_, err = f2.ReadAll(EventOptions{AllowTruncated: true})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "no DATA segment") {
		t.Errorf("ReadAll on HEADER-only file: %v", err)
	}

	// Not FCS.
	_, err = Open(filepath.Join(dir, "fcsparser/corrupted__corrupted.fcs"))
	if !errors.Is(err, ErrNotFCS) || !strings.Contains(err.Error(), "not an FCS file") {
		t.Errorf("corrupted: %v", err)
	}

	// Supplemental TEXT that is a ZIP archive is ignored with a warning.
	f3, err := Open(filepath.Join(dir, "fcsparser/cyflow_cube_8__cyflow_cube_8.fcs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f3.Close()
	if w := f3.Warnings(); len(w) != 1 || !strings.Contains(w[0], "supplemental TEXT") {
		t.Errorf("cyflow warnings %q", w)
	}
	// A real supplemental TEXT adds keywords.
	f4, err := Open(filepath.Join(dir, "fcsparser/MiltenyiBiotec__FCS3.1__EY_2013-07-19_PBS_FCS_3.1_Well_A1.001.fcs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f4.Close()
	if v, ok := f4.Keyword("@mb_p1_username"); !ok || v != "HDR-T" {
		t.Errorf("supplemental keyword @MB_P1_USERNAME = %q, %v", v, ok)
	}
}

func TestRealSpillover(t *testing.T) {
	dir := dataDir(t)
	for _, tc := range []struct {
		file, key string
		k         int
		first     string
	}{
		{"FlowIO/B01_KC-A-W---91-US.fcs", "$SPILLOVER", 8, "FL1-A"},
		{"FlowIO/G11.fcs", "$SPILLOVER", 0, ""},
		{"FlowKit/test_comp_example.fcs", "SPILL", 14, "Ax488-A"},
		{"fcsparser/Fortessa__FCS_3.0_Fortessa_PBS_Specimen_001_A1_A01.fcs", "SPILL", 0, ""},
	} {
		f, err := Open(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		sp, err := f.Spillover()
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		k, _ := sp.Matrix.Dims()
		if sp.Keyword != tc.key || tc.k != 0 && k != tc.k || tc.first != "" && sp.Channels[0] != tc.first {
			t.Errorf("%s: keyword %s, %d channels %v", tc.file, sp.Keyword, k, sp.Channels)
		}
		for i := 0; i < k; i++ {
			if sp.Matrix.At(i, i) != 1 {
				t.Errorf("%s: diagonal %d = %v", tc.file, i, sp.Matrix.At(i, i))
			}
			if p := f.Params()[sp.Params[i]]; p.Name != sp.Channels[i] && p.Label != sp.Channels[i] {
				t.Errorf("%s: channel %q matched parameter %+v", tc.file, sp.Channels[i], p)
			}
		}
	}
}

// TestRealFolder opens every file of the folder: each is in the table above
// or is one of the known non-readable ones, with the error it must give.
func TestRealFolder(t *testing.T) {
	dir := dataDir(t)
	special := map[string]error{
		"fcsparser/cytek-nl-2000__sample_header.fcs": ErrNoData,
		"fcsparser/corrupted__corrupted.fcs":         ErrNotFCS,
		"fcsparser/MiltenyiBiotec__FCS3.1__info.txt": ErrNotFCS,
	}
	known := map[string]bool{}
	for _, rf := range realFiles {
		known[rf.name] = true
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no files: %v", err)
	}
	seen := 0
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		want, isSpecial := special[rel]
		if !known[rel] && !isSpecial {
			t.Errorf("%s is not described by the test table", rel)
			continue
		}
		seen++
		f, err := Open(p)
		if err == nil {
			_, err = f.ReadAll(EventOptions{AllowTruncated: true})
			f.Close()
		}
		if isSpecial {
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", rel, err, want)
			}
		} else if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	if seen != len(realFiles)+len(special) {
		t.Errorf("found %d of the %d files described", seen, len(realFiles)+len(special))
	}
}
