package dica

import (
	"slices"

	"github.com/dicalab/dica/dataset"
)

// naturalOrder returns statistics equal to s with the domains and the
// classes in natural order (dataset.NaturalCompare: sample2 before sample10,
// population 1 before 2), the order in which a model lists them, whatever
// the order the data met them in. The sums are the same numbers,
// reindexed; a solve of them differs from a solve in another order by
// rounding only.
func (s *Stats) naturalOrder() *Stats {
	dmap, dnames := naturalMap(s.Domains)
	cmap, cnames := naturalMap(s.Classes)
	if dmap == nil && cmap == nil {
		return s
	}
	t := *s
	t.Domains, t.Classes = dnames, cnames
	a := newAccum(s.acc.mraw, s.acc.rout, s.acc.gram)
	// Every domain and class keeps a row, empty ones too.
	a.domCount, a.domSum = growSums(nil, nil, len(s.acc.domCount), a.mraw)
	a.clsCount, a.clsSum = growSums(nil, nil, len(s.acc.clsCount), a.mraw)
	a.add(&s.acc, dmap, cmap)
	t.acc = *a
	return &t
}

// naturalMap returns the names in natural order and the new index of each
// old one, or nil maps when the names are in natural order already.
func naturalMap(names []string) ([]int, []string) {
	sorted := slices.Clone(names)
	slices.SortStableFunc(sorted, dataset.NaturalCompare)
	if slices.Equal(sorted, names) {
		return nil, names
	}
	pos := make(map[string]int, len(sorted))
	for i, n := range sorted {
		pos[n] = i
	}
	m := make([]int, len(names))
	for i, n := range names {
		m[i] = pos[n]
	}
	return m, sorted
}

// naturalDataset renumbers the domains and classes of ds in natural order,
// in place (points without a label keep dataset.NoLabel).
func naturalDataset(ds *dataset.Dataset) {
	if m, names := naturalMap(ds.DomainNames); m != nil {
		for i, g := range ds.Domain {
			ds.Domain[i] = m[g]
		}
		ds.DomainNames = names
	}
	if m, names := naturalMap(ds.ClassNames); m != nil {
		for i, c := range ds.Label {
			if c != dataset.NoLabel {
				ds.Label[i] = m[c]
			}
		}
		ds.ClassNames = names
	}
}
