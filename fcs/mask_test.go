package fcs

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// TestIntMaskDecoding decodes integer data whose $PnR lies below 2^$PnB,
// for every decoder path (big- and little-endian 24-bit and mixed widths,
// 64-bit with and without a full-width parameter), against values decoded
// by hand from the bytes with masks worked out by hand: the smallest power
// of two >= $PnR, minus one (FCS 3.1 section 3.3.43; flowCore, FlowKit).
//
// The files are written with full ranges and random full-width values,
// then each $PnR is rewritten in place with a number of the same length
// (leading zeros are allowed), so the stored values exceed the new masks.
func TestIntMaskDecoding(t *testing.T) {
	for _, tc := range []struct {
		name string
		bits []int
		rng  []string // new $PnR, "" to keep 2^bits
		mask []uint64 // by hand
		path string   // decoder expected to run
	}{
		{"24-bit", []int{24, 24, 24}, []string{"00001000", "00070000", ""},
			[]uint64{1023, 131071, 1<<24 - 1}, "BE/LE"},
		{"mixed", []int{24, 16, 8, 32}, []string{"00001024", "00300", "100", "0000000000"},
			[]uint64{1023, 511, 127, 1<<32 - 1}, "BE/LE"},
		{"16-bit", []int{16, 16, 16}, []string{"01000", "00300", ""},
			[]uint64{1023, 511, 1<<16 - 1}, "uniform"},
		{"32-bit", []int{32, 32}, []string{"0000001000", ""},
			[]uint64{1023, 1<<32 - 1}, "uniform"},
		{"64-bit", []int{64, 24}, []string{"00000001099511627776", "00000003"},
			[]uint64{1<<40 - 1, 3}, "BE/LE"},
		{"64-bit wide", []int{64, 64, 24, 8, 16}, []string{"", "00000001099511627777", "00000999", "002", "00002"},
			[]uint64{1<<64 - 1, 1<<41 - 1, 1023, 1, 1}, "Int"},
		// A $PnR above 2^63 needs all 64 bits (this hung before).
		{"64-bit above 2^63", []int{64, 8, 16}, []string{"10000000000000000000", "002", "00002"},
			[]uint64{1<<64 - 1, 1, 1}, "Int"},
	} {
		for _, big := range []bool{true, false} {
			name := fmt.Sprintf("%s/big=%v", tc.name, big)
			const n = 300
			ds := randomSet(rand.New(rand.NewPCG(5, uint64(len(tc.bits)))), 'I', tc.bits, n, big)
			raw := mustWrite(t, ds)
			for j, r := range tc.rng {
				if r == "" {
					continue
				}
				old := fmt.Sprintf("/$P%dR/%s/", j+1, fmtFloat(float64(uint64(1)<<(tc.bits[j]-1))*2))
				i := bytes.Index(raw, []byte(old))
				if i < 0 || len(old) != len(fmt.Sprintf("/$P%dR/%s/", j+1, r)) {
					t.Fatalf("%s: cannot rewrite %s as %s", name, old, r)
				}
				copy(raw[i:], fmt.Sprintf("/$P%dR/%s/", j+1, r))
			}
			f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			d := newDecoder(f)
			got := "BE/LE"
			if d.wide {
				got = "Int"
			} else if d.uni == 2 || d.uni == 4 {
				got = "uniform"
			}
			if got != tc.path {
				t.Fatalf("%s: decoder %s (uni %d), want %s", name, got, d.uni, tc.path)
			}
			x, err := f.ReadAll(EventOptions{BufferBytes: 100})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			at := f.DataOffset()
			masked := 0
			for i := 0; i < n; i++ {
				for j, b := range tc.bits {
					w := b / 8
					c := raw[at : at+int64(w)]
					at += int64(w)
					var u uint64
					for k := 0; k < w; k++ {
						if big {
							u = u<<8 | uint64(c[k])
						} else {
							u |= uint64(c[k]) << (8 * k)
						}
					}
					if u != uint64(ds.Events.At(i, j)) {
						t.Fatalf("%s: event %d param %d: bytes hold %d, wrote %v", name, i+1, j+1, u, ds.Events.At(i, j))
					}
					want := float64(u & tc.mask[j])
					if u&tc.mask[j] != u {
						masked++
					}
					if g := x.At(i, j); g != want {
						t.Errorf("%s: event %d param %d = %v, want %d & %d = %v", name, i+1, j+1, g, u, tc.mask[j], want)
					}
				}
			}
			if masked < n {
				t.Errorf("%s: only %d values changed by the masks", name, masked)
			}
		}
	}
}

// TestIntRangeRoundTrip writes integer data with non-default ranges (values
// within the masks) in both byte orders and reads the same values and
// ranges back.
func TestIntRangeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	bits := []int{24, 64, 16, 8, 32, 40}
	ranges := []float64{1000, 1 << 40, 300.5, 100, 1e9, 5}
	masks := []uint64{1023, 1<<40 - 1, 511, 127, 1<<30 - 1, 7} // by hand
	for _, big := range []bool{true, false} {
		ds := &DataSet{DataType: 'I', BigEndian: big}
		x := mat.NewDense(500, len(bits), nil)
		for j := range bits {
			ds.Params = append(ds.Params, Param{Name: "P" + strconv.Itoa(j), Bits: bits[j], Range: ranges[j]})
			for i := 0; i < 500; i++ {
				v := rng.Uint64N(masks[j] + 1)
				if i == 0 {
					v = masks[j]
				}
				x.Set(i, j, float64(v))
			}
		}
		ds.Events = x
		raw := mustWrite(t, ds)
		f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		y, err := f.ReadAll(EventOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(x, y) {
			t.Errorf("big=%v: events differ", big)
		}
		for j, p := range f.Params() {
			if p.Range != ranges[j] {
				t.Errorf("big=%v: $P%dR read %v, wrote %v", big, j+1, p.Range, ranges[j])
			}
		}
		// A value one above the mask is refused.
		x.Set(3, 2, float64(masks[2]+1))
		if err := Write(&bytes.Buffer{}, ds); err == nil || !strings.Contains(err.Error(), "[0, 511]") {
			t.Errorf("big=%v: value above the mask: %v", big, err)
		}
		x.Set(3, 2, 0)
	}
}

// TestIntMask checks intMask against masks worked out by hand, up to the
// ranges just below 2^64, each call bounded in time: ranges above 2^63 made
// the doubling loop of an earlier version wrap to 0 and never end.
func TestIntMask(t *testing.T) {
	for _, tc := range []struct {
		bits int
		rng  float64
		want uint64
	}{
		{16, 0, 1<<16 - 1},
		{16, math.NaN(), 1<<16 - 1},
		{16, 0.5, 0},
		{16, 1, 0},
		{16, 2, 1},
		{16, 1023.5, 1023},
		{16, 1024, 1023},
		{16, 1025, 2047},
		{16, 65535, 65535},
		{16, 65536, 65535},
		{16, 1e6, 65535},
		{32, 1 << 31, 1<<31 - 1},
		{32, 1<<31 + 1, 1<<32 - 1},
		{64, 1 << 40, 1<<40 - 1},
		{64, 1 << 63, 1<<63 - 1},
		{64, 1e19, 1<<64 - 1},
		{64, 18446744073709549568, 1<<64 - 1}, // the largest float64 below 2^64
		{64, 1 << 64, 1<<64 - 1},
		{64, math.Inf(1), 1<<64 - 1},
	} {
		done := make(chan uint64, 1)
		go func() { done <- intMask(tc.bits, tc.rng) }()
		select {
		case got := <-done:
			if got != tc.want {
				t.Errorf("intMask(%d, %g) = %#x, want %#x", tc.bits, tc.rng, got, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("intMask(%d, %g) did not return", tc.bits, tc.rng)
		}
	}
}
