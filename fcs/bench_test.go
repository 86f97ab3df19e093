package fcs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dicalab/dica/internal/testsupport/cputime"
)

// benchDecode measures decoding throughput in MB/s of DATA bytes.
func benchDecode(b *testing.B, dt byte, bits []int, big bool) {
	const n = 200_000
	ds := randomSet(rand.New(rand.NewPCG(1, 2)), dt, bits, n, big)
	var buf bytes.Buffer
	if err := Write(&buf, ds); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n) * int64(f.EventBytes()))
	dst := make([]float64, 4096*len(bits))
	cpu0 := cputime.Process()
	for b.Loop() {
		r, err := f.Events(EventOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Read(dst, 4096)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	// Throughput per CPU second: the shared machine's wall-clock MB/s
	// depend on its load.
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(n)*float64(f.EventBytes())/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

func BenchmarkDecodeF32(b *testing.B) { benchDecode(b, 'F', rep(32, 16), true) }
func BenchmarkDecodeF32LE(b *testing.B) {
	benchDecode(b, 'F', rep(32, 16), false)
}
func BenchmarkDecodeD64(b *testing.B) { benchDecode(b, 'D', rep(64, 16), true) }
func BenchmarkDecodeI16(b *testing.B) { benchDecode(b, 'I', rep(16, 16), true) }
func BenchmarkDecodeI32(b *testing.B) { benchDecode(b, 'I', rep(32, 16), false) }
func BenchmarkDecodeMixed(b *testing.B) {
	benchDecode(b, 'I', []int{16, 16, 32, 8, 16, 32, 16, 16, 32, 8}, true)
}
func BenchmarkDecodeI24(b *testing.B) { benchDecode(b, 'I', rep(24, 16), true) }

// BenchmarkDecodeI64Wide decodes full-range 64-bit integers mixed with
// other widths: the byte-wise decoder (decodeInt).
func BenchmarkDecodeI64Wide(b *testing.B) {
	benchDecode(b, 'I', []int{64, 64, 32, 16, 16, 8, 64, 24}, false)
}

// BenchmarkParseText measures Parse of a data set whose TEXT describes 40
// parameters with 4 keywords each beyond the standard ones (the size of a
// spectral cytometer's TEXT), with two $PnN shared: the HEADER, the TEXT
// split, the parameters, their Keywords and the unique names.
func BenchmarkParseText(b *testing.B) {
	ds := &DataSet{}
	for j := 0; j < 40; j++ {
		name := "FL" + strconv.Itoa(j+1) + "-A"
		if j == 39 {
			name = "FL1-A"
		}
		ds.Params = append(ds.Params, Param{Name: name, Label: "CD" + strconv.Itoa(j), Range: 262144,
			Keywords: []Keyword{{"$PnV", "450"}, {"$PnL", "488"}, {"PnDISPLAY", "LOG"}, {"PnBS", "0"}}})
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, ds, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		f, err := Parse(bytes.NewReader(raw), int64(len(raw)))
		if err != nil || len(f.Warnings()) != 1 {
			b.Fatal(err, f.Warnings())
		}
	}
}

// discardAt is a ReadWriterAt that keeps nothing.
type discardAt struct{}

func (discardAt) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
func (discardAt) ReadAt(p []byte, off int64) (int, error)  { return 0, io.EOF }

// benchEncode measures writing 200,000 events of 13 float32 parameters
// (the width of dica's CyTOF output) in MB/s of DATA bytes per CPU second,
// by the Writer (ranges declared) or the StreamWriter (ranges from the
// values, TEXT written at Close).
func benchEncode(b *testing.B, streamed bool) {
	const n, p = 200_000, 13
	ds := randomSet(rand.New(rand.NewPCG(1, 2)), 'F', rep(32, p), n, false)
	desc := &DataSet{Params: ds.Params}
	b.SetBytes(int64(n) * 4 * p)
	cpu0 := cputime.Process()
	for b.Loop() {
		if streamed {
			w, err := NewStreamWriter(discardAt{}, desc, 1<<16)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := w.WriteEvent(ds.Events.RawRowView(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(nil); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for j := range desc.Params {
			desc.Params[j].Range = 1e6
		}
		w, err := NewWriter(io.Discard, desc, n)
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := w.WriteEvent(ds.Events.RawRowView(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(n)*4*p/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

func BenchmarkEncodeWriter(b *testing.B)       { benchEncode(b, false) }
func BenchmarkEncodeStreamWriter(b *testing.B) { benchEncode(b, true) }
