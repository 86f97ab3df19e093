package fcs

import (
	"path/filepath"
	"testing"
)

func TestSmoke(t *testing.T) {
	files, _ := filepath.Glob("../../shared/data/fcs/*/*")
	for _, p := range files {
		f, err := Open(p)
		if err != nil {
			t.Logf("%s: OPEN ERR %v", filepath.Base(p), err)
			continue
		}
		m, err := f.ReadAll(EventOptions{})
		var r0 []float64
		if err == nil {
			r0 = m.RawRowView(0)
		}
		t.Logf("%s: %s %c %s par=%d tot=%d present=%d err=%v w=%v\n   row0=%v", filepath.Base(p), f.Version(), f.DataType(), f.ByteOrder(), f.NumParams(), f.NumEvents(), f.EventsPresent(), err, f.Warnings(), r0)
		f.Close()
	}
}
