package fcs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// fuzzSeeds returns generated files plus the real ones (the first 16 KiB of
// the large ones) when present.
func fuzzSeeds(tb testing.TB) [][]byte {
	rng := rand.New(rand.NewPCG(1, 1))
	var seeds [][]byte
	for _, ds := range []*DataSet{
		randomSet(rng, 'F', []int{32, 32}, 3, false),
		randomSet(rng, 'D', []int{64}, 2, true),
		randomSet(rng, 'I', []int{8, 16, 24, 32, 64}, 2, true),
		randomSet(rng, 'I', []int{16}, 0, false),
	} {
		ds.Keywords = []Keyword{{"$SPILLOVER", "1,FL1-A,1"}, {"K", "v//w"}}
		var b bytes.Buffer
		if err := Write(&b, ds, ds); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	root := os.Getenv("DICA_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "shared", "data")
	}
	files, _ := filepath.Glob(filepath.Join(root, "fcs", "*", "*"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(b) > 1<<14 {
			b = b[:1<<14]
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// checkParse parses data and reads everything it can; it fails on a
// decoded size that the input cannot justify.
func checkParse(t *testing.T, data []byte) {
	sets, err := ParseAll(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if sets != nil {
			t.Fatalf("error with data sets: %v", err)
		}
		return
	}
	// The events of all data sets, each read below, take at most twice the
	// input: the first data set's, plus those of the rest of the chain,
	// which ParseAll keeps disjoint.
	var events int64
	for _, f := range sets {
		if f.NumParams() > len(data) || int64(f.EventsPresent())*int64(f.EventBytes()) > int64(len(data)) {
			t.Fatalf("%d params, %d events of %d bytes from %d bytes of input", f.NumParams(), f.EventsPresent(), f.EventBytes(), len(data))
		}
		if events += int64(f.EventsPresent()) * int64(f.EventBytes()); events > 2*int64(len(data)) {
			t.Fatalf("%d data sets hold %d bytes of events, from %d bytes of input", len(sets), events, len(data))
		}
		// Names are unique, and each names its own parameter.
		seen := map[string]bool{}
		for i, n := range f.Names() {
			if seen[n] {
				t.Fatalf("name %q twice in %q", n, f.Names())
			}
			seen[n] = true
			if j := f.FindParam(n); j != i {
				t.Fatalf("FindParam(%q) = %d, want %d", n, j, i)
			}
		}
		f.Info()
		f.Spillover()
		f.Analysis()
		r, err := f.Events(EventOptions{AllowTruncated: true, Scale: true, BufferBytes: 512})
		if err != nil {
			var te *TruncatedError
			if !errors.Is(err, ErrNoData) && !errors.As(err, &te) {
				t.Fatalf("Events: %v", err)
			}
			continue
		}
		dst := make([]float64, 7*f.NumParams())
		total := 0
		for {
			k, err := r.Read(dst, 7)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			total += k
		}
		if total != f.EventsPresent() {
			t.Fatalf("read %d events, %d present", total, f.EventsPresent())
		}
	}
}

// allocPerByte is c in the allocation cap c*len(input) + 1 MiB of one
// checkParse call (parse, Info, Spillover, Analysis and reading every event
// in 512-byte chunks). The worst legitimate inputs measured allocate about
// 61 bytes per input byte (a TEXT that is one 100x100 $SPILLOVER: the split
// tokens, 16 bytes each for 2 input bytes, then the matrix) and 44 (a TEXT
// of 2,500 $PnB keywords: tokens, keyword index, Params, decoder tables);
// the real-file seeds stay under 33. 256 leaves a factor of 4 for inputs
// the fuzzer builds, while anything quadratic in the input, or an
// allocation sized by a number read from the input, exceeds it on inputs of
// a few KiB. The 1 MiB covers fixed costs (buffers, runtime noise).
const allocPerByte = 256

func allocCap(n int) uint64 { return allocPerByte*uint64(n) + 1<<20 }

// heapAllocs returns the bytes allocated on the heap so far, from
// runtime/metrics: unlike runtime.ReadMemStats (about 45 µs, it stops the
// world), reading it costs well under a microsecond, so it can run on every
// fuzz call. Allocations above 32 KiB are counted when made; small ones
// when their span leaves the per-P cache, so the count may lag by some
// spans (KiBs) — the 1 MiB of the cap absorbs that.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// allocExceeds runs f and reports whether it allocated more than limit
// bytes, and how much. A cheap measure that exceeds the limit is confirmed
// by running f again between two runtime.ReadMemStats (exact, as they
// flush the per-P caches), so a lagging count cannot fail a fuzz run.
func allocExceeds(limit uint64, f func()) (uint64, bool) {
	a := heapAllocs()
	f()
	if d := heapAllocs() - a; d <= limit {
		return d, false
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	d := m1.TotalAlloc - m0.TotalAlloc
	return d, d > limit
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, over := allocExceeds(allocCap(len(data)), func() { checkParse(t, data) }); over {
			t.Fatalf("allocated %d bytes for %d bytes of input (cap %d)", d, len(data), allocCap(len(data)))
		}
	})
}

var allocSink []byte

// TestAllocMeter checks the measure FuzzParse relies on: a large
// allocation is seen, a small function passes.
func TestAllocMeter(t *testing.T) {
	d, over := allocExceeds(1<<20, func() { allocSink = make([]byte, 3<<20) })
	if !over || d < 3<<20 {
		t.Errorf("3 MiB allocation measured as %d bytes (over %v)", d, over)
	}
	d, over = allocExceeds(1<<20, func() { allocSink = make([]byte, 100) })
	if over {
		t.Errorf("100-byte allocation measured as %d bytes", d)
	}
	allocSink = nil
	// Every seed is within the cap (the fuzz function's check).
	for _, s := range fuzzSeeds(t) {
		if d, over := allocExceeds(allocCap(len(s)), func() { checkParse(t, s) }); over {
			t.Errorf("seed of %d bytes: allocated %d", len(s), d)
		}
	}
}

// TestHostileHeaders checks that absurd $TOT, $PAR and offsets are errors
// or bounded reads, without allocations the input does not justify.
func TestHostileHeaders(t *testing.T) {
	for _, text := range []string{
		`/$BYTEORD/1,2,3,4/$DATATYPE/F/$PAR/1/$TOT/999999999999/$P1B/32/$BEGINDATA/100/$ENDDATA/999999999999/`,
		`/$BYTEORD/1,2,3,4/$DATATYPE/I/$PAR/2000000000/$TOT/5/$P1B/64/`,
		`/$BYTEORD/1,2,3,4/$DATATYPE/I/$PAR/1/$TOT/5/$P1B/64/$SPILLOVER/1000000,1/`,
		`/$BYTEORD/1,2,3,4/$DATATYPE/I/$PAR/1/$TOT/5/$P1B/64/$NEXTDATA/58/`,
		`/$BYTEORD/1,2,3,4/$DATATYPE/I/$PAR/1/$TOT/5/$P1B/64/$BEGINSTEXT/60/$ENDSTEXT/99999999/`,
	} {
		h := []byte("FCS3.1          58")
		h = append(h, []byte(padLeft(58+len(text)-1))...)
		h = append(h, []byte(padLeft(58+len(text))+"99999999       0       0")...)
		data := append(h[:58], text...)
		data = append(data, make([]byte, 100)...)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		checkParse(t, data)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: allocated %d bytes for %d bytes of input", text, d, len(data))
		}
	}
}

// TestLongText checks that parsing stays linear in the TEXT length.
func TestLongText(t *testing.T) {
	text := "/K/" + strings.Repeat("a//", 1<<19) + "/"
	start := time.Now()
	kw, _, err := parseText([]byte(text))
	if err != nil || len(kw) != 1 || len(kw[0].Value) != 2<<19 {
		t.Fatalf("parseText: %v, %d keywords", err, len(kw))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("parsing %d bytes took %v", len(text), d)
	}
}

func padLeft(n int) string {
	s := []byte("        ")
	for i := 7; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

func TestFuzzSeeds(t *testing.T) {
	for _, s := range fuzzSeeds(t) {
		checkParse(t, s)
		// Every prefix of the small seeds.
		if len(s) < 2000 {
			for n := 0; n < len(s); n += 7 {
				checkParse(t, s[:n])
			}
		}
	}
}
