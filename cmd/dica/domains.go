package main

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/dicalab/dica/csvio"
)

const domainsHelp = `
Domains (samples) are named in lists such as --train-domains and
--test-domains, comma-separated; each item is
  a name                 sample3
  a range of names       sample1-sample8 (the names with that prefix and
                         suffix whose number lies in the range)
  a range of positions   1-8 (the 1st to 8th domain in natural order:
                         sample2 before sample10); a single position: 5
  a glob over names      'sample[1-8]', 'patient*' (quote it for the shell)
An item that is exactly a domain's name is that domain.
`

// maxListed is the number of domain names an error lists.
const maxListed = 12

// selectDomains returns the domains a list names (see domainsHelp), in the
// order of the list, each once; within a range or glob, in natural order.
// names are the data's domains. An empty list gives no domains. An item
// that matches nothing is an error listing the domains (at most maxListed
// of them).
func selectDomains(spec string, names []string) ([]string, error) {
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, csvio.NaturalCompare)
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, item := range splitList(spec) {
		got, err := selectItem(item, sorted, known)
		if err != nil {
			return nil, fmt.Errorf("%v (domains: %s)", err, listDomains(sorted))
		}
		for _, n := range got {
			add(n)
		}
	}
	return out, nil
}

// selectItem returns the domains of one item of a list.
func selectItem(item string, sorted []string, known map[string]bool) ([]string, error) {
	if known[item] {
		return []string{item}, nil
	}
	if strings.ContainsAny(item, "*?[") {
		if _, err := path.Match(item, ""); err != nil {
			return nil, fmt.Errorf("%q is not a valid pattern: %v", item, err)
		}
		var out []string
		for _, n := range sorted {
			if ok, _ := path.Match(item, n); ok {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%q matches no domain", item)
		}
		return out, nil
	}
	if p, err := strconv.Atoi(item); err == nil {
		if p < 1 || p > len(sorted) {
			return nil, fmt.Errorf("%q is neither a domain nor a position from 1 to %d", item, len(sorted))
		}
		return []string{sorted[p-1]}, nil
	}
	// A range: try every dash, so that names holding dashes work too.
	for i := strings.IndexByte(item, '-'); i >= 0; {
		lo, hi := item[:i], item[i+1:]
		if known[lo] && known[hi] {
			return nameRange(item, lo, hi, sorted)
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if errA == nil && errB == nil {
			if a < 1 || b > len(sorted) || a > b {
				return nil, fmt.Errorf("positions %q: want 1 <= first <= last <= %d", item, len(sorted))
			}
			return slices.Clone(sorted[a-1 : b]), nil
		}
		j := strings.IndexByte(item[i+1:], '-')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if strings.Contains(item, "-") {
		return nil, fmt.Errorf("unknown domain or range %q (a range joins two domain names, sample1-sample8, or two positions, 1-8)", item)
	}
	return nil, fmt.Errorf("unknown domain %q", item)
}

// nameRange returns the domains between lo and hi: the names with the same
// text before and after the number as lo and hi, whose number lies between
// theirs.
func nameRange(item, lo, hi string, sorted []string) ([]string, error) {
	pl, nl, sl, okl := splitNumber(lo)
	ph, nh, sh, okh := splitNumber(hi)
	if !okl || !okh || pl != ph || sl != sh {
		return nil, fmt.Errorf("range %q: both ends must be names that differ only in a number, as in sample1-sample8", item)
	}
	if nl > nh {
		return nil, fmt.Errorf("range %q: the first number is larger than the last", item)
	}
	var out []string
	for _, n := range sorted {
		if p, v, s, ok := splitNumber(n); ok && p == pl && s == sl && v >= nl && v <= nh {
			out = append(out, n)
		}
	}
	return out, nil
}

// splitNumber splits a name at its last run of digits: prefix, value,
// suffix ("sample12.a" -> "sample", 12, ".a").
func splitNumber(s string) (prefix string, v int, suffix string, ok bool) {
	end := -1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] >= '0' && s[i] <= '9' {
			end = i + 1
			break
		}
	}
	if end < 0 {
		return "", 0, "", false
	}
	start := end
	for start > 0 && s[start-1] >= '0' && s[start-1] <= '9' {
		start--
	}
	v, err := strconv.Atoi(s[start:end])
	if err != nil {
		return "", 0, "", false
	}
	return s[:start], v, s[end:], true
}

// listDomains lists at most maxListed names, then how many there are.
func listDomains(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
