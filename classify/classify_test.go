package classify

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
	"github.com/dicalab/dica/kernel"
)

// svmModel returns a 3-population SVM on 2 inputs.
func svmModel() *Model {
	return &Model{
		Kind:           SVM,
		Mean:           []float64{1, -2},
		Scale:          []float64{2, 0.5},
		Classes:        []string{"1", "2", "10"},
		W:              mat.NewDense(3, 2, []float64{1, 0, -0.5, 1, -0.5, -1}),
		Intercept:      []float64{0.1, -0.2, 0},
		InvTemperature: 1.5,
	}
}

// TestPredictToSVM compares the SVM's predictions with the formulas of the
// package documentation, evaluated term by term.
func TestPredictToSVM(t *testing.T) {
	m := svmModel()
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200
	z := mat.NewDense(n, 3, nil) // one column more than the model takes
	for i := range n {
		for j := range 3 {
			z.Set(i, j, 3*rng.NormFloat64())
		}
	}
	for _, minConf := range []float64{0, 0.6} {
		var p Prediction
		p.Reset(m, n)
		m.PredictTo(&p, z, minConf)
		var unassigned int
		for i := range n {
			u := []float64{(z.At(i, 0) - 1) / 2, (z.At(i, 1) + 2) / 0.5}
			f := make([]float64, 3)
			best := 0
			for c := range 3 {
				f[c] = m.W.At(c, 0)*u[0] + m.W.At(c, 1)*u[1] + m.Intercept[c]
				if f[c] > f[best] {
					best = c
				}
			}
			var s float64
			for c := range 3 {
				s += math.Exp(1.5 * f[c])
			}
			want := math.Exp(1.5*f[best]) / s
			if math.Abs(p.Confidence[i]-want) > 1e-14 {
				t.Errorf("row %d: confidence %v, want %v", i, p.Confidence[i], want)
			}
			wantClass := best
			if want < minConf {
				wantClass = NoClass
				unassigned++
			}
			if p.Class[i] != wantClass {
				t.Errorf("row %d (min %v): class %d, want %d", i, minConf, p.Class[i], wantClass)
			}
			if !(p.Confidence[i] >= 1.0/3 && p.Confidence[i] <= 1) {
				t.Errorf("row %d: confidence %v outside [1/3, 1]", i, p.Confidence[i])
			}
		}
		if minConf > 0 && (unassigned == 0 || unassigned == n) {
			t.Errorf("min confidence %v leaves %d of %d rows unassigned", minConf, unassigned, n)
		}
	}
	// A slice predicts its rows alone.
	var all, part Prediction
	all.Reset(m, n)
	m.PredictTo(&all, z, 0)
	part.Reset(m, n)
	s := part.Slice(m, 50, 70)
	m.PredictTo(&s, z.Slice(50, 70, 0, 3).(*mat.Dense), 0)
	for i := 50; i < 70; i++ {
		if part.Class[i] != all.Class[i] || part.Confidence[i] != all.Confidence[i] {
			t.Errorf("row %d of a slice: %d %v, alone %d %v", i, part.Class[i], part.Confidence[i], all.Class[i], all.Confidence[i])
		}
	}
	// Ties go to the first population; beta = 0 gives 1/C.
	tie := &Model{Kind: SVM, Mean: []float64{0}, Scale: []float64{1}, Classes: []string{"a", "b"},
		W: mat.NewDense(2, 1, []float64{1, 1}), Intercept: []float64{0, 0}}
	var tp Prediction
	tp.Reset(tie, 1)
	tie.PredictTo(&tp, mat.NewDense(1, 1, []float64{3}), 0)
	if tp.Class[0] != 0 || tp.Confidence[0] != 0.5 {
		t.Errorf("a tie at beta 0: class %d, confidence %v; want 0, 0.5", tp.Class[0], tp.Confidence[0])
	}
	if c, conf := Confidence([]float64{0.5, 2, -1}, 1); c != 1 || math.Abs(conf-math.Exp(2)/(math.Exp(0.5)+math.Exp(2)+math.Exp(-1))) > 1e-15 {
		t.Errorf("Confidence: %d %v", c, conf)
	}
	if c, conf := Confidence(nil, 1); c != NoClass || conf != 0 {
		t.Errorf("Confidence of no margin: %d %v", c, conf)
	}
}

// TestPredictToKRR compares the regression with its kernel expansion
// summed term by term with kernel.RBF.Eval.
func TestPredictToKRR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k, np, nt, n = 3, 40, 2, 150 // more rows than a block
	pts := mat.NewDense(np, k, nil)
	coef := mat.NewDense(np, nt, nil)
	for i := range np {
		for j := range k {
			pts.Set(i, j, rng.NormFloat64())
		}
		for j := range nt {
			coef.Set(i, j, rng.NormFloat64())
		}
	}
	m := &Model{Kind: KRR, Mean: []float64{0.5, -1, 2}, Scale: []float64{1, 2, 0.5}, Targets: []string{"y", "w"},
		Sigma: 0.8, Points: pts, Coef: coef, Offset: []float64{1, -3}}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(n, k, nil)
	for i := range n {
		for j := range k {
			z.Set(i, j, m.Mean[j]+m.Scale[j]*rng.NormFloat64())
		}
	}
	var p Prediction
	p.Reset(m, n)
	m.PredictTo(&p, z, 0.9)
	if p.Class != nil || p.Confidence != nil || len(p.Values) != n*nt {
		t.Fatalf("a regression's prediction has classes %v, confidences %v and %d values", p.Class, p.Confidence, len(p.Values))
	}
	rbf := kernel.RBF{Sigma: 0.8}
	for i := range n {
		u := make([]float64, k)
		for j := range k {
			u[j] = (z.At(i, j) - m.Mean[j]) / m.Scale[j]
		}
		for tj := range nt {
			want := m.Offset[tj]
			for q := range np {
				want += coef.At(q, tj) * rbf.Eval(u, pts.RawRowView(q))
			}
			if got := p.Values[i*nt+tj]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("row %d, target %d: %v, want %v", i, tj, got, want)
			}
		}
	}
}

// nll is the negative log-likelihood of the package documentation at beta,
// computed directly.
func nll(margins *mat.Dense, truth []int, beta float64) float64 {
	n, _ := margins.Dims()
	var s float64
	for i := range n {
		row := margins.RawRowView(i)
		if truth[i] < 0 || math.IsInf(row[truth[i]], -1) {
			continue
		}
		var z float64
		for _, v := range row {
			if !math.IsInf(v, -1) {
				z += math.Exp(beta * v)
			}
		}
		s += math.Log(z) - beta*row[truth[i]]
	}
	return s
}

// TestFitInvTemperature checks the fitted beta against a direct
// minimization of the likelihood (golden-section search on the objective
// computed term by term), and that it recovers the beta the classes were
// drawn with; and the special cases.
func TestFitInvTemperature(t *testing.T) {
	for _, tc := range []struct {
		name      string
		beta      float64 // the classes are drawn from the softmax at beta
		n, c      int
		absent    bool // some rows lack a class (-Inf)
		recovered float64
	}{
		{"3 classes", 1.7, 20000, 3, false, 0.06},
		{"2 classes", 0.6, 20000, 2, false, 0.04},
		{"absent classes", 2.5, 20000, 5, true, 0.1},
		{"few rows", 1, 30, 4, false, math.Inf(1)},
	} {
		rng := rand.New(rand.NewPCG(7, uint64(tc.n)))
		margins := mat.NewDense(tc.n, tc.c, nil)
		truth := make([]int, tc.n)
		p := make([]float64, tc.c)
		for i := range tc.n {
			row := margins.RawRowView(i)
			for j := range row {
				row[j] = rng.NormFloat64()
			}
			if tc.absent && i%3 == 0 {
				row[i%tc.c] = math.Inf(-1)
			}
			var s float64
			for j, v := range row {
				p[j] = math.Exp(tc.beta * v)
				s += p[j]
			}
			u := rng.Float64() * s
			truth[i] = tc.c - 1
			for j := range p {
				if u < p[j] {
					truth[i] = j
					break
				}
				u -= p[j]
			}
			if math.IsInf(row[truth[i]], -1) {
				truth[i] = (truth[i] + 1) % tc.c // never drawn: a cell its learner lacked
				row[truth[i]], row[(truth[i]+1)%tc.c] = math.Inf(-1), 0
			}
		}
		beta, used, err := FitInvTemperature(margins, truth)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wantUsed := 0
		for i, y := range truth {
			if !math.IsInf(margins.At(i, y), -1) {
				wantUsed++
			}
		}
		if used != wantUsed {
			t.Errorf("%s: %d rows used, want %d", tc.name, used, wantUsed)
		}
		// Golden-section search of the objective on [0, 10].
		a, b := 0.0, 10.0
		g := (math.Sqrt(5) - 1) / 2
		for b-a > 1e-10 {
			c1, c2 := b-g*(b-a), a+g*(b-a)
			if nll(margins, truth, c1) < nll(margins, truth, c2) {
				b = c2
			} else {
				a = c1
			}
		}
		// The search finds the minimum to about sqrt(eps) relative; the
		// objective at the fitted beta is no larger.
		want := (a + b) / 2
		if math.Abs(beta-want) > 1e-6*want || nll(margins, truth, beta) > nll(margins, truth, want)*(1+1e-13) {
			t.Errorf("%s: beta %v (objective %v), the objective's minimum is at %v (%v)", tc.name, beta,
				nll(margins, truth, beta), want, nll(margins, truth, want))
		}
		if math.Abs(beta-tc.beta) > tc.recovered {
			t.Errorf("%s: beta %v, drawn with %v", tc.name, beta, tc.beta)
		}
	}
	// Every cell right by a margin: the bound. Every cell on its smallest
	// margin: 0.
	sep := mat.NewDense(4, 2, []float64{1, -1, -1, 1, 2, 0, 0, 3})
	if beta, _, err := FitInvTemperature(sep, []int{0, 1, 0, 1}); err != nil || beta != MaxInvTemperature {
		t.Errorf("separated cells: beta %v, %v; want %v", beta, err, float64(MaxInvTemperature))
	}
	if beta, _, err := FitInvTemperature(sep, []int{1, 0, 1, 0}); err != nil || beta != 0 {
		t.Errorf("cells all wrong: beta %v, %v; want 0", beta, err)
	}
	for _, tc := range []struct {
		name    string
		margins *mat.Dense
		truth   []int
		want    string
	}{
		{"nil", nil, nil, "no held-out margins"},
		{"lengths", sep, []int{0}, "4 rows of margins and 1 true classes"},
		{"NaN", mat.NewDense(1, 2, []float64{math.NaN(), 0}), []int{0}, "is NaN"},
		{"+Inf", mat.NewDense(1, 2, []float64{math.Inf(1), 0}), []int{0}, "is +Inf"},
		{"no usable row", mat.NewDense(2, 2, []float64{math.Inf(-1), 0, 0, 1}), []int{0, -1}, "nothing to calibrate on"},
	} {
		if _, _, err := FitInvTemperature(tc.margins, tc.truth); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCheck lists the inconsistent models Check refuses.
func TestCheck(t *testing.T) {
	krr := func() *Model {
		return &Model{Kind: KRR, Mean: []float64{0}, Scale: []float64{1}, Targets: []string{"y"}, Sigma: 1,
			Points: mat.NewDense(2, 1, []float64{0, 1}), Coef: mat.NewDense(2, 1, []float64{1, 2}), Offset: []float64{0}}
	}
	if err := krr().Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(m *Model) *Model
		want   string
	}{
		{"nil", func(*Model) *Model { return nil }, "nil model"},
		{"kind", func(m *Model) *Model { m.Kind = None; return m }, "unknown kind none"},
		{"no inputs", func(m *Model) *Model { m.Mean, m.Scale = nil, nil; return m }, "0 means"},
		{"scales", func(m *Model) *Model { m.Scale = []float64{1}; return m }, "2 means and 1 scales"},
		{"zero scale", func(m *Model) *Model { m.Scale[1] = 0; return m }, "scale 2 is 0"},
		{"NaN mean", func(m *Model) *Model { m.Mean[0] = math.NaN(); return m }, "mean 1 is NaN"},
		{"one class", func(m *Model) *Model { m.Classes = m.Classes[:1]; return m }, "1 population(s)"},
		{"twice", func(m *Model) *Model { m.Classes[2] = "1"; return m }, `"1" is listed twice`},
		{"unassigned", func(m *Model) *Model { m.Classes[1] = Unassigned; return m }, "rename it"},
		{"weights", func(m *Model) *Model { m.W = mat.NewDense(2, 2, nil); return m }, "weights are 2 x 2; need 3 x 2"},
		{"Inf weight", func(m *Model) *Model { m.W.Set(1, 1, math.Inf(1)); return m }, "weights 2 is +Inf"},
		{"intercepts", func(m *Model) *Model { m.Intercept = m.Intercept[:2]; return m }, "2 intercepts for 3"},
		{"beta", func(m *Model) *Model { m.InvTemperature = -1; return m }, "inverse temperature -1"},
		{"beta NaN", func(m *Model) *Model { m.InvTemperature = math.NaN(); return m }, "inverse temperature NaN"},
		{"no target", func(*Model) *Model { m := krr(); m.Targets = nil; return m }, "no target"},
		{"sigma", func(*Model) *Model { m := krr(); m.Sigma = 0; return m }, "bandwidth 0"},
		{"no points", func(*Model) *Model { m := krr(); m.Points = nil; return m }, "no points"},
		{"point dim", func(*Model) *Model { m := krr(); m.Points = mat.NewDense(2, 2, nil); return m }, "points are 2 x 2; need 2 x 1"},
		{"coefficients", func(*Model) *Model { m := krr(); m.Coef = mat.NewDense(3, 1, nil); return m }, "coefficients are 3 x 1; need 2 x 1"},
		{"offsets", func(*Model) *Model { m := krr(); m.Offset = nil; return m }, "0 offsets for 1"},
	} {
		if err := tc.change(svmModel()).Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTruth checks CheckTruth, ClassIndex, Label and the kinds' names.
func TestTruth(t *testing.T) {
	s := svmModel()
	r := &Model{Kind: KRR, Targets: []string{"y"}}
	for _, tc := range []struct {
		name     string
		m        *Model
		labelled bool
		targets  []string
		want     string // "" for no error
	}{
		{"svm, labels", s, true, nil, ""},
		{"svm, nothing", s, false, nil, ""},
		{"svm, targets", s, false, []string{"y"}, "predicts populations"},
		{"krr, labels", r, true, nil, "the data has class labels"},
		{"krr, targets", r, false, []string{"y"}, ""},
		{"krr, other targets", r, false, []string{"w"}, "the data's targets are w, the model predicts y"},
		{"nil", nil, true, nil, "nil model"},
	} {
		err := tc.m.CheckTruth(tc.labelled, tc.targets)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if i, ok := s.ClassIndex("10"); i != 2 || !ok {
		t.Errorf("ClassIndex(10) = %d, %v", i, ok)
	}
	if i, ok := s.ClassIndex("3"); i != NoClass || ok {
		t.Errorf("ClassIndex of an unknown population = %d, %v", i, ok)
	}
	if s.Label(1) != "2" || s.Label(NoClass) != Unassigned || s.Label(3) != Unassigned {
		t.Errorf("labels %q %q %q", s.Label(1), s.Label(NoClass), s.Label(3))
	}
	for _, k := range []Kind{None, SVM, KRR} {
		if got, err := ParseKind(" " + strings.ToUpper(k.String())); got != k || err != nil {
			t.Errorf("ParseKind(%v) = %v, %v", k, got, err)
		}
	}
	if _, err := ParseKind("lda"); err == nil || !strings.Contains(err.Error(), `"lda"`) {
		t.Errorf("ParseKind(lda): %v", err)
	}
	if Kind(7).String() != "Kind(7)" {
		t.Errorf("Kind(7) is %q", Kind(7).String())
	}
}

// TestNilAndZero calls every exported function and method with nil and
// zero values: an error or a documented zero result, never a panic.
func TestNilAndZero(t *testing.T) {
	var nm *Model
	zm := &Model{}
	errs := func(err error) error {
		if err == nil {
			return errors.New("no error")
		}
		return nil
	}
	zero := func(ok bool) error {
		if !ok {
			return errors.New("not the zero result")
		}
		return nil
	}
	calls := map[string]func() error{
		"Kind.String":      func() error { return zero(Kind(-1).String() == "Kind(-1)") },
		"ParseKind":        func() error { _, err := ParseKind(""); return errs(err) },
		"Model.Dim":        func() error { return zero(nm.Dim() == 0 && zm.Dim() == 0) },
		"Model.Check":      func() error { return errs(errors.Join(nm.Check(), zm.Check())) },
		"Model.Check/zero": func() error { return errs(zm.Check()) },
		"Model.ClassIndex": func() error { i, ok := nm.ClassIndex("a"); return zero(i == NoClass && !ok) },
		"Model.Label":      func() error { return zero(nm.Label(0) == Unassigned && zm.Label(0) == Unassigned) },
		"Model.CheckTruth": func() error { return errs(nm.CheckTruth(true, nil)) },
		"Model.PredictTo":  func() error { zm.PredictTo(&Prediction{}, &mat.Dense{}, 0); return nil },
		"Prediction.Reset": func() error {
			var p Prediction
			p.Reset(zm, 3)
			return zero(len(p.Class) == 3 && len(p.Confidence) == 3)
		},
		"Prediction.Slice":  func() error { var p Prediction; return zero(p.Slice(zm, 0, 0).Rows == 0) },
		"Confidence":        func() error { c, _ := Confidence(nil, 1); return zero(c == NoClass) },
		"FitInvTemperature": func() error { _, _, err := FitInvTemperature(nil, nil); return errs(err) },
	}
	var names []string
	for name, call := range calls {
		names = append(names, name)
		if err := apitest.Call(call); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	want, err := apitest.ExportedFuncs(".")
	if err != nil {
		t.Fatal(err)
	}
	if missing := apitest.Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
}
