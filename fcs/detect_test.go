package fcs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		path string
		want bool
	}{
		// The extension decides, whatever the content.
		{write("a.fcs", "not really"), true},
		{write("b.FCS", ""), true},
		{write("c.lmd", ""), true},
		{write("d.csv", "FCS3.1    "), false},
		{write("e.txt", "FCS3.0    "), false},
		{write("f.tsv", "FCS3.0    "), false},
		{write("g.csv.gz", "FCS3.0    "), false},
		// Otherwise the first bytes.
		{write("h", "FCS3.1    58  1000"), true},
		{write("i.001", "FCS2.0    "), true},
		{write("j.dat", "1,2,3\n"), false},
		{write("k", "FC"), false},
		{write("l", ""), false},
		{filepath.Join(dir, "missing"), false},
		{dir, false},
	}
	for _, c := range cases {
		if got := Detect(c.path); got != c.want {
			t.Errorf("Detect(%s) = %v, want %v", filepath.Base(c.path), got, c.want)
		}
	}
}
