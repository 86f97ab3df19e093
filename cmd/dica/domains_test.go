package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSelectDomains(t *testing.T) {
	var samples []string
	for i := 1; i <= 16; i++ {
		samples = append(samples, fmt.Sprintf("sample%d", i))
	}
	// Lexical order, as filepath.Glob would give: selection follows the
	// natural order.
	lexical := []string{"sample1", "sample10", "sample11", "sample12", "sample13", "sample14", "sample15", "sample16",
		"sample2", "sample3", "sample4", "sample5", "sample6", "sample7", "sample8", "sample9"}
	dashed := []string{"patient-1", "patient-2", "patient-3", "patient-10", "ctrl-a"}
	numeric := []string{"3", "7", "12", "30"}
	for _, c := range []struct {
		spec  string
		names []string
		want  []string
	}{
		{"", samples, nil},
		{"sample3", samples, []string{"sample3"}},
		{"sample9,sample2", samples, []string{"sample9", "sample2"}},
		{"1-8", lexical, samples[:8]},
		{"9-16", samples, samples[8:]},
		{"5", lexical, []string{"sample5"}},
		{"sample1-sample8", lexical, samples[:8]},
		{"sample10-sample12", samples, []string{"sample10", "sample11", "sample12"}},
		{"sample[1-8]", lexical, samples[:8]},
		{"sample1?", samples, samples[9:]},
		{"sample*", lexical, samples},
		{"sample1,sample1-sample3,sample[2-4]", samples, samples[:4]},
		{" sample2 , sample4 ", samples, []string{"sample2", "sample4"}},
		{"patient-1-patient-3", dashed, []string{"patient-1", "patient-2", "patient-3"}},
		{"patient-10", dashed, []string{"patient-10"}},
		{"patient-*", dashed, []string{"patient-1", "patient-2", "patient-3", "patient-10"}},
		{"ctrl-a,1,2", dashed, []string{"ctrl-a", "patient-1"}},
		// Names that are numbers: a name is a name, a range of names is by
		// value.
		{"7", numeric, []string{"7"}},
		{"3-12", numeric, []string{"3", "7", "12"}},
		{"1-2", numeric, []string{"3", "7"}},
	} {
		got, err := selectDomains(c.spec, c.names)
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q over %v: %v, want %v", c.spec, c.names, got, c.want)
		}
	}
	for _, c := range []struct {
		spec, want string
	}{
		{"sample17", `unknown domain "sample17" (domains: sample1, sample2,`},
		{"sample17", `sample12, ... (16 in all)`},
		{"0", `"0" is neither a domain nor a position from 1 to 16`},
		{"17", `position from 1 to 16`},
		{"3-17", `positions "3-17": want 1 <= first <= last <= 16`},
		{"8-3", `positions "8-3"`},
		{"sample8-sample3", `range "sample8-sample3": the first number is larger`},
		{"sample1-sample99", `unknown domain or range "sample1-sample99"`},
		{"patient*", `"patient*" matches no domain`},
		{"sample[", `"sample[" is not a valid pattern`},
	} {
		_, err := selectDomains(c.spec, samples)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.spec, err, c.want)
		}
	}
	if _, err := selectDomains("a1-b2", []string{"a1", "b2"}); err == nil || !strings.Contains(err.Error(), "differ only in a number") {
		t.Errorf("a1-b2: %v", err)
	}
}
