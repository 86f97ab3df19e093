package escape

import (
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 0, `"abc"`},
		{"a,b\tc\n", 0, `"a,b\tc\n"`},
		{"\x1b[2J\a", 0, `"\x1b[2J\a"`},
		{"caf\xc3\xa9", 0, `"café"`},
		{"bad\xff\xfe", 0, `"bad\xff\xfe"`},
		{`say "hi" \ bye`, 0, `"say \"hi\" \\ bye"`},
		{"abcdef", 4, `"abcd"... (2 more bytes)`},
		{"abc\xc3\xa9", 4, `"abc"... (2 more bytes)`}, // é is not split
		{"\u2028x", 0, `"\u2028x"`},
	} {
		if got := Snippet([]byte(c.in), c.max); got != c.want {
			t.Errorf("Snippet(%q, %d) = %s, want %s", c.in, c.max, got, c.want)
		}
	}
	long := strings.Repeat("x", 1<<20)
	if got := String(long, 0); len(got) > 200 || !strings.HasSuffix(got, "... (1048496 more bytes)") {
		t.Errorf("String of 1 MiB: %d bytes, %q", len(got), got[len(got)-40:])
	}
}
