package enum

import "testing"

type color int

var colors = Names[color]{Type: "color", Names: []string{"red", "green", "blue"}}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		v     color
		name  string
		valid bool
	}{
		{0, "red", true}, {2, "blue", true}, {3, "color(3)", false}, {-1, "color(-1)", false},
	} {
		if got := colors.String(tc.v); got != tc.name {
			t.Errorf("String(%d) = %q, want %q", tc.v, got, tc.name)
		}
		if got := colors.Valid(tc.v); got != tc.valid {
			t.Errorf("Valid(%d) = %v", tc.v, got)
		}
	}
	for _, tc := range []struct {
		s  string
		v  color
		ok bool
	}{
		{"green", 1, true}, {"BLUE", 2, true}, {"Red", 0, true}, {" red", 0, false}, {"", 0, false}, {"purple", 0, false},
	} {
		v, ok := colors.Parse(tc.s)
		if v != tc.v || ok != tc.ok {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.s, v, ok, tc.v, tc.ok)
		}
	}
	if got := colors.List(", "); got != "red, green, blue" {
		t.Errorf("List = %q", got)
	}
}
