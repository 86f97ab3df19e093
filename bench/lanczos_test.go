package main

import "testing"

// multisetOK must report a missed copy of a repeated eigenvalue even when
// every returned value is accurate (the old rule, max relative error
// <= 1e-6, passed such a result).
func TestMultisetOK(t *testing.T) {
	exact := []float64{8, 7.9999, 7.9999, 7.9998, 7.9998, 7.9997}
	delta := multTol(1e-8, 8)
	for _, c := range []struct {
		name string
		got  []float64
		want bool
	}{
		{"exact", exact, true},
		{"within delta", []float64{8 + 1e-8, 7.9999, 7.9999 - 2e-8, 7.9998, 7.9998, 7.9997 + 1e-8}, true},
		{"missed copy, accurate values", []float64{8, 7.9999, 7.9998, 7.9998, 7.9997, 7.9997}, false},
		{"missed copy, next value", []float64{8, 7.9999, 7.9998, 7.9998, 7.9997, 7.9996}, false},
		{"short", exact[:5], false},
		{"copy off by 1e-6", []float64{8, 7.9999, 7.9999 - 1e-6, 7.9998, 7.9998, 7.9997}, false},
	} {
		if got := multisetOK(c.got, exact, delta); got != c.want {
			t.Errorf("%s: multisetOK = %v, want %v", c.name, got, c.want)
		}
	}
	// A cluster 5e-7 apart (||A|| = 1, tol 1e-8): the missed copy shifts
	// one value by 5e-7 relative, within the old 1e-6 rule.
	cl := []float64{1 + 2e-6, 1 + 1.5e-6, 1 + 1.5e-6, 1 + 1e-6}
	missed := []float64{1 + 2e-6, 1 + 1.5e-6, 1 + 1e-6, 1 + 1e-6}
	if multisetOK(missed, cl, multTol(1e-8, 1)) {
		t.Error("clustered missed copy: multisetOK = true")
	}
	if !multisetOK(cl, cl, multTol(1e-8, 1)) {
		t.Error("clustered exact: multisetOK = false")
	}
}
