package longtest_test

import (
	"testing"

	"github.com/dicalab/dica/internal/testsupport/longtest"
)

// TestSkip: Skip skips exactly when the long tests are disabled.
func TestSkip(t *testing.T) {
	ran := false
	var sub *testing.T
	t.Run("inner", func(t *testing.T) {
		sub = t
		longtest.Skip(t)
		ran = true
	})
	if ran != longtest.Enabled || sub.Skipped() == longtest.Enabled {
		t.Errorf("Enabled = %v: the body ran = %v, skipped = %v", longtest.Enabled, ran, sub.Skipped())
	}
}
