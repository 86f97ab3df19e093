package fcs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNotFCSMessages checks that the error for a file that is not an FCS
// file says what its first bytes are (none, zeros, or quoted), and that
// devices and pipes are refused as such.
func TestNotFCSMessages(t *testing.T) {
	dir := t.TempDir()
	const want = "; an FCS file starts with FCS2.0, FCS3.0 or FCS3.1"
	for _, c := range []struct {
		name, data, says string
	}{
		{"empty.fcs", "", "it is empty"},
		{"zeros.fcs", strings.Repeat("\x00", 1000), "it starts with 58 zero bytes"},
		{"short.fcs", "\x00\x00\x00", "it starts with 3 zero bytes"},
		{"zip.fcs", "PK\x03\x04" + strings.Repeat("z", 100), `it starts with "PK\x03\x04zzzzzzzzzzzz"`},
		{"text.fcs", "FC", `it starts with "FC"`},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil || !errors.Is(err, ErrNotFCS) || !strings.Contains(err.Error(), c.says+want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.says+want)
		}
		_, err = Parse(bytes.NewReader([]byte(c.data)), int64(len(c.data)))
		if err == nil || !strings.Contains(err.Error(), c.says+want) {
			t.Errorf("Parse of %s: %v, want %q", c.name, err, c.says+want)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := Open("/dev/zero")
		if w := "it starts with 58 zero bytes" + want + " (file /dev/zero, a character device)"; err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("/dev/zero: %v, want %q", err, w)
		}
	}
	// A pipe fed an FCS file: refused before its events are read.
	fifo := filepath.Join(dir, "pipe.fcs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes:", err)
	}
	good := mustWrite(t, &DataSet{Params: []Param{{Name: "A"}}})
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write(good)
			w.Close()
		}
	}()
	if _, err := OpenAll(fifo); err == nil || !strings.Contains(err.Error(), "pipe.fcs is not a regular file (a named pipe (FIFO)): FCS files are read at offsets, copy it to a file first") {
		t.Errorf("pipe: %v", err)
	}
}
