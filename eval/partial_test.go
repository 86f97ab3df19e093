package eval

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dicalab/dica/dataset"
)

// partly returns ds with the labels of the last domain and of every third
// cell of the other odd-numbered domains removed (dataset.NoLabel), and
// the same data with those cells left out altogether.
func partly(ds *dataset.Dataset) (part, labelled *dataset.Dataset) {
	p := *ds
	p.Label = slices.Clone(ds.Label)
	last := ds.NumDomains() - 1
	var keep []int
	k := 0
	for i, g := range ds.Domain {
		if g == last || g%2 == 1 && k%3 == 0 {
			p.Label[i] = dataset.NoLabel
		} else {
			keep = append(keep, i)
		}
		if g%2 == 1 {
			k++
		}
	}
	labelled = ds.Subset(keep)
	labelled.Compact()
	return &p, labelled
}

// TestPartialLabels evaluates data whose labels cover some cells only,
// with a test domain that has no labelled cell:
//
//   - the baseline learner is trained and scored on the labelled cells
//     only, so its scores equal, bit for bit, those of the same data
//     without the unlabelled cells (where they cannot be used);
//   - the test domain without a labelled cell is not scored, and is
//     listed in Unscored;
//   - DICA, fitted on every cell, scores the labelled cells of each
//     scored domain.
func TestPartialLabels(t *testing.T) {
	ds := shifted(6, 4)
	part, lab := partly(ds)
	train, test := []int{0, 1, 2, 3}, []int{4, 5}
	o := smallOptions()
	o.Methods = []string{Input}
	o.MixingCells = -1
	got, err := Run(context.Background(), part, train, test, o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), lab, train, []int{4}, o)
	if err != nil {
		t.Fatal(err)
	}
	gs, ws := got.Methods[0].Splits[0], want.Methods[0].Splits[0]
	if !slices.Equal(gs.Unscored, []string{ds.DomainNames[5]}) {
		t.Errorf("unscored %q, want %q", gs.Unscored, ds.DomainNames[5])
	}
	if !slices.Equal(gs.Scores, ws.Scores) || gs.Pooled != ws.Pooled || gs.InnerScore != ws.InnerScore || gs.Params != ws.Params {
		t.Errorf("partly labelled: scores %+v pooled %v inner %v %+v;\nlabelled cells only: %+v %v %v %+v", gs.Scores, gs.Pooled, gs.InnerScore, gs.Params,
			ws.Scores, ws.Pooled, ws.InnerScore, ws.Params)
	}
	if !slices.EqualFunc(gs.Confusion, ws.Confusion, slices.Equal) {
		t.Errorf("confusion %v, want %v", gs.Confusion, ws.Confusion)
	}
	if n := len(part.LabelledRows()); n >= part.N()-part.DomainSizes()[5] || gs.TestCells != part.DomainSizes()[4]+part.DomainSizes()[5] {
		t.Errorf("%d labelled cells of %d; %d test cells", n, part.N(), gs.TestCells)
	}

	o.Methods = []string{"dica", "udica"}
	o.MixingCells = 0
	res, err := Run(context.Background(), part, train, test, o)
	if err != nil {
		t.Fatal(err)
	}
	labelled4 := 0
	for _, p := range part.LabelledRows() {
		if part.Domain[p] == 4 {
			labelled4++
		}
	}
	for _, m := range res.Methods {
		s := m.Splits[0]
		if len(s.Scores) != 1 || s.Scores[0].Domain != ds.DomainNames[4] || s.Scores[0].Cells != labelled4 || !slices.Equal(s.Unscored, []string{ds.DomainNames[5]}) {
			t.Errorf("%s: scores %+v unscored %q; want domain %s with %d cells", m.Method, s.Scores, s.Unscored, ds.DomainNames[4], labelled4)
		}
		if s.Mixing == nil || s.Mixing.ILISI == 0 {
			t.Errorf("%s: no mixing measures of the two test domains: %+v", m.Method, s.Mixing)
		}
		if !(s.Scores[0].Score > 0.5) {
			t.Errorf("%s: accuracy %v", m.Method, s.Scores[0].Score)
		}
	}

	// Every test domain unlabelled: nothing to score.
	_, err = Run(context.Background(), part, []int{0, 1, 2, 3, 4}, []int{5}, o)
	if err == nil || !strings.Contains(err.Error(), "no test domain of the split has a labelled cell") {
		t.Errorf("no labelled test cell: %v", err)
	}
}
