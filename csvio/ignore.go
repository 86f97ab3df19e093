package csvio

import (
	"github.com/dicalab/dica/dataset"

	"fmt"
	"maps"
	"slices"
)

// dropped is what Options.LabelsIgnore dropped in a pass: the ignored
// values that some row had, and the domains of the rows dropped.
type dropped struct {
	values map[string]bool
	doms   map[string]bool
}

// value records that a row had the ignored label b.
func (d *dropped) value(b []byte) {
	if !d.values[string(b)] {
		if d.values == nil {
			d.values = make(map[string]bool)
		}
		d.values[string(b)] = true
	}
}

// domain records that a row of domain b was dropped.
func (d *dropped) domain(b []byte) {
	if !d.doms[string(b)] {
		if d.doms == nil {
			d.doms = make(map[string]bool)
		}
		d.doms[string(b)] = true
	}
}

// fold records what the parallel pass dropped in the chunk c, once all its
// rows are handed out (or skimmed).
func (d *dropped) fold(s *Source, c *chunk) {
	if len(s.ignore) == 0 {
		return
	}
	for k, ign := range c.labNames.ignore {
		if ign {
			d.value(c.labNames.name(int32(k)))
		}
	}
	if c.dropped == 0 {
		return
	}
	if s.domainCol < 0 {
		d.domain([]byte(s.fileDoms[c.fi]))
		return
	}
	for k, dr := range c.domDropped {
		if dr {
			d.domain(c.domNames.name(int32(k)))
		}
	}
}

// endPass ends a pass that has read every row, whose domains and classes
// are those given: it records the domains that LabelsIgnore emptied (those
// with dropped rows and no row kept) for EmptiedDomains, and returns an
// error if a value of LabelsIgnore matched no row.
func (s *Source) endPass(domains, classes []string, d *dropped) error {
	var emptied []string
	if len(s.ignore) > 0 {
		kept := make(map[string]bool, len(domains))
		for _, name := range domains {
			kept[name] = true
		}
		if s.domainCol < 0 {
			for _, name := range s.fileDoms {
				if d.doms[name] && !kept[name] {
					emptied = append(emptied, name)
				}
			}
		} else {
			for name := range d.doms {
				if !kept[name] {
					emptied = append(emptied, name)
				}
			}
			slices.SortFunc(emptied, NaturalCompare)
		}
	}
	s.mu.Lock()
	s.emptied, s.known = emptied, true
	s.mu.Unlock()
	return s.unmatched(classes, d)
}

// unmatched returns an error naming the values of LabelsIgnore that matched
// no row of a complete pass, with the labels seen (the classes, and the
// ignored values that matched).
func (s *Source) unmatched(classes []string, d *dropped) error {
	var missing []string
	for _, v := range s.ignoreList {
		if !d.values[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	seen := slices.AppendSeq(slices.Clone(classes), maps.Keys(d.values))
	slices.SortFunc(seen, NaturalCompare)
	what, verb := "value", "matches"
	if len(missing) > 1 {
		what, verb = "values", "match"
	}
	labels := "no labels seen"
	if len(seen) > 0 {
		labels = "labels seen: " + list(seen)
	}
	return &dataset.OptionError{Pkg: "csvio", Option: "LabelsIgnore", Value: missing,
		Err: fmt.Errorf("%s %s %s no label (%s)", what, list(missing), verb, labels)}
}
