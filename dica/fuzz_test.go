package dica

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dicalab/dica/classify"
	"github.com/dicalab/dica/kernel"
	"gonum.org/v1/gonum/mat"
)

// FuzzDecode feeds payloads with a valid header and checksum to the model,
// statistics, plan and Gram-part decoders, so the fuzzer reaches past the
// checksum into the decoders' own checks: a file that is consistent at the
// byte level but not in its contents must be an error, never a panic, and
// whatever decodes must be usable (transform, solve) without panicking and
// encode to a file that decodes to the same value (the first encoding may
// differ from the payload: a boolean stored as 2, say, is written as 1).
func FuzzDecode(f *testing.F) {
	ctx := context.Background()
	for _, tc := range []struct {
		cfg   Config
		class bool
	}{
		{Config{Method: DICA, Rank: 6, Seed: 1}, true},
		{Config{Method: UDICA, Rank: 5, Seed: 2, Kernel: kernel.Laplacian{Sigma: 0.7}}, true},
		{Config{Method: KPCA, Rank: 4, Seed: 3, Solver: RFF}, true},
		{Config{Method: COIR, Rank: 4, OutputRank: 3, Lambda: 0.1, Seed: 4}, false},
	} {
		ds := smallReg(5)
		if tc.class {
			ds = smallClass(5)
		}
		p, err := NewPlan(ctx, ds.Source(), tc.cfg)
		if err != nil {
			f.Fatal(err)
		}
		st, err := p.Accumulate(ctx, ds.Source())
		if err != nil {
			f.Fatal(err)
		}
		m, err := st.Solve()
		if err != nil {
			f.Fatal(err)
		}
		for _, b := range [][]byte{must(m.MarshalBinary()), must(st.MarshalBinary()), must(p.MarshalBinary())} {
			f.Add(b[headerLen : len(b)-4])
		}
		// The model with a learner.
		if k := m.Components(); k > 0 {
			l := &classify.Model{Kind: classify.SVM, Mean: make([]float64, k), Scale: make([]float64, k), Classes: []string{"a", "b"},
				W: mat.NewDense(2, k, nil), Intercept: []float64{1, -1}, InvTemperature: 1, Params: classify.Params{Method: "dica", C: 1}}
			if !tc.class {
				l = &classify.Model{Kind: classify.KRR, Mean: make([]float64, k), Scale: make([]float64, k), Targets: []string{"y"},
					Sigma: 1, Points: mat.NewDense(2, k, nil), Coef: mat.NewDense(2, 1, []float64{1, 2}), Offset: []float64{0.5}}
			}
			for j := range k {
				l.Scale[j] = 1
			}
			if err := m.SetClassifier(l); err != nil {
				f.Fatal(err)
			}
			b := must(m.MarshalBinary())
			f.Add(b[headerLen : len(b)-4])
		}
		if st.acc.gram {
			for _, g := range st.SplitGram(2) {
				b := must(g.MarshalBinary())
				f.Add(b[headerLen : len(b)-4])
			}
		}
	}
	if m, err := Fit(ctx, smallClass(5).Source(), Config{Method: Input}); err == nil {
		b := must(m.MarshalBinary())
		f.Add(b[headerLen : len(b)-4])
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var m Model
		if m.UnmarshalBinary(seal(ModelMagic, modelVersion, payload)) == nil {
			useModel(t, &m)
		}
		var st Stats
		if st.UnmarshalBinary(seal(statsMagic, statsVersion, payload)) == nil {
			if m, err := st.Solve(); err == nil {
				useModel(t, m)
			}
			reencodes(t, "statistics", &st)
		}
		var p Plan
		if p.UnmarshalBinary(seal(planMagic, planVersion, payload)) == nil {
			reencodes(t, "plan", &p)
		}
		var g GramPart
		if g.UnmarshalBinary(seal(gramMagic, gramVersion, payload)) == nil {
			reencodes(t, "Gram part", &g)
		}
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// useModel transforms random rows with a decoded model, which must give an
// error or finite values of the right shape, and checks its encoding.
func useModel(t *testing.T, m *Model) {
	d := m.plan.inMap.InputDim()
	if d > 1000 {
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(3, max(d, 1), nil)
	for i := range 3 {
		for j := range max(d, 1) {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	if z, err := m.Transform(x, TransformOptions{}); err == nil {
		if r, c := z.Dims(); r != 3 || c != m.Positive {
			t.Fatalf("transform of 3 rows: %d x %d, model has %d components", r, c, m.Positive)
		}
	}
	if p, err := m.PredictWith(x, PredictOptions{MinConfidence: 0.5}); err == nil && p.Rows != 3 {
		t.Fatalf("predictions of 3 rows: %d", p.Rows)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatalf("a decoded model does not encode: %v", err)
	}
	var again Model
	if err := again.UnmarshalBinary(b); err != nil {
		t.Fatalf("a decoded and encoded model does not decode: %v", err)
	}
}

// binaryPtr is a pointer to a value with a binary encoding.
type binaryPtr[T any] interface {
	*T
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// reencodes checks that a decoded value encodes to bytes that decode and
// encode to the same bytes again.
func reencodes[T any, P binaryPtr[T]](t *testing.T, what string, v P) {
	b, err := v.MarshalBinary()
	if err != nil {
		t.Fatalf("a decoded %s does not encode: %v", what, err)
	}
	var again T
	if err := P(&again).UnmarshalBinary(b); err != nil {
		t.Fatalf("a decoded %s, encoded, does not decode: %v", what, err)
	}
	b2, err := P(&again).MarshalBinary()
	if err != nil || !bytes.Equal(b2, b) {
		t.Fatalf("a decoded %s encodes to %d bytes, and those decode and encode to %d other bytes (%v)", what, len(b), len(b2), err)
	}
}

// TestDecodeInvalidContents: files whose bytes are intact (valid checksum)
// but whose contents no fit can produce are errors, and statistics whose
// sums overflow in the solve give an error, not a panic. FuzzDecode found
// each case.
func TestDecodeInvalidContents(t *testing.T) {
	ctx := context.Background()
	ds := smallClass(5)
	rp, err := NewPlan(ctx, ds.Source(), Config{Method: UDICA, Rank: 6, Seed: 1, Solver: RFF, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	np, err := NewPlan(ctx, ds.Source(), Config{Method: UDICA, Rank: 6, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	planFile := func(p Plan) []byte {
		var e encoder
		p.encode(&e)
		return seal(planMagic, planVersion, e.b)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(p *Plan)
		base       *Plan
	}{
		{"unknown method", "unknown method", func(p *Plan) { p.Config.Method = 9 }, rp},
		{"rank above MaxRank", "at most 131072", func(p *Plan) { p.in.m = 1 << 30; p.Config.Rank = 1 << 30 }, rp},
		{"rff rank unlike the plan's", "do not match the plan", func(p *Plan) { p.in.m = 1 << 16 }, rp},
		{"rff inputs unlike the schema's", "do not match the plan", func(p *Plan) { p.in.d = 1000 }, rp},
		{"map unlike the solver", "does not match solver", func(p *Plan) { p.Config.Solver = Nystrom }, rp},
		{"NaN landmark", "not finite", func(p *Plan) {
			p.in.landmarks = mat.DenseCopyOf(p.in.landmarks)
			p.in.landmarks.Set(0, 0, math.NaN())
		}, np},
		{"infinite lambda", "not finite", func(p *Plan) { p.Config.Lambda = math.Inf(1) }, np},
	} {
		p := *tc.base
		tc.edit(&p)
		err := new(Plan).UnmarshalBinary(planFile(p))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}

	// Sums that overflow in the solve.
	st, err := np.Accumulate(ctx, ds.Source())
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.acc.domSum[0] {
		st.acc.domSum[0][i] = 1e300
	}
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if _, err := back.Solve(); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("solve of overflowing statistics: %v", err)
	}
}
