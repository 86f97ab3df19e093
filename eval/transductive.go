package eval

import (
	"slices"
	"strings"

	"github.com/dicalab/dica/dataset"
)

// partialLabels reports whether dica.Fit accepts rows without a label
// (dataset.NoLabel) beside labelled ones: the label term of a supervised
// method on the labelled rows, its domain term on every row. With it, the
// transductive fits of DICA and COIR use the test domains' cells too,
// their labels hidden (fitSet); without it they are fitted on the training
// domains alone.
const partialLabels = true

// FitsTransductively reports whether, with Options.Transductive, the final
// fit of the named method uses the cells of the test domains beside those
// of the training domains: true for UDICA and KPCA, which use no label;
// true for DICA and COIR on class labels, whose label term takes the
// training cells' labels and whose domain term every cell (the test cells
// unlabelled); false for the baseline, which fits nothing, for DICA and
// COIR on real targets, and for unknown names.
func FitsTransductively(method string, regression bool) bool {
	m, isDICA, err := parseMethod(strings.ToLower(strings.TrimSpace(method)))
	if err != nil || !isDICA {
		return false
	}
	return !m.Supervised() || partialLabels && !regression
}

// transductive reports whether the final fit of the named method uses the
// test domains' cells.
func (e *evaluator) transductive(name string) bool {
	return e.o.Transductive && FitsTransductively(name, e.regression)
}

// fitDomains returns the domains whose cells the final fits of split si
// use: its training domains, and with trans its test domains too, in
// increasing index order.
func (e *evaluator) fitDomains(si int, trans bool) []int {
	s := e.splits[si]
	if !trans {
		return s.Train
	}
	out := append(append([]int(nil), s.Train...), s.Test...)
	slices.Sort(out)
	return out
}

// fitSet returns the data set of a final fit of split si on the rows:
// with trans, the rows of the test domains carry no label (-1, with
// partialLabels) or the set none at all (no labels, no targets), so that a
// fit never reads a test domain's labels.
func (e *evaluator) fitSet(si int, rows []int, trans bool) *dataset.Dataset {
	if !trans {
		return e.subset(rows)
	}
	s := e.ds.Subset(rows)
	if partialLabels && s.Label != nil {
		test := make(map[int]bool, len(e.splits[si].Test))
		for _, g := range e.splits[si].Test {
			test[g] = true
		}
		for i, p := range rows {
			if test[e.ds.Domain[p]] {
				s.Label[i] = dataset.NoLabel
			}
		}
	} else {
		s.Label, s.ClassNames, s.Target, s.TargetNames = nil, nil, nil, nil
	}
	s.Compact()
	return s
}

// newConfusion returns a zero confusion matrix of the data set's classes,
// or nil for regression.
func (e *evaluator) newConfusion() [][]int {
	if e.regression {
		return nil
	}
	c := make([][]int, len(e.ds.ClassNames))
	for i := range c {
		c[i] = make([]int, len(e.ds.ClassNames))
	}
	return c
}

// addConfusion adds the counts of src to dst.
func addConfusion(dst, src [][]int) {
	for i, row := range src {
		for j, v := range row {
			dst[i][j] += v
		}
	}
}

// domainsHint says how a method with a domain term can still be fitted
// with one training domain, or why it cannot.
func (e *evaluator) domainsHint(name string) string {
	switch {
	case FitsTransductively(name, e.regression) && !e.o.Transductive:
		return " (a transductive fit, Options.Transductive, adds the test domains' unlabelled cells)"
	case !FitsTransductively(name, e.regression):
		return " (its fit needs the label of every cell, so it cannot be transductive)"
	}
	return ""
}
