// Package sourcetest checks what every dataset.Source of the file formats
// must do: refuse reads it cannot serve, and hold no more memory in a pass
// than its PassBytes says.
package sourcetest

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/dicalab/dica/dataset"
)

// RefusesBadReads opens a pass over src and returns nil when its Reader
// refuses to read into a nil Block and to read at most 0 or -1 rows, and
// otherwise an error saying which read it accepted.
func RefusesBadReads(ctx context.Context, src dataset.Source) error {
	r, err := src.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := r.Read(nil, 1); err == nil {
		return fmt.Errorf("Read into a nil block: no error")
	}
	var b dataset.Block
	for _, max := range []int{0, -1} {
		if _, err := r.Read(&b, max); err == nil {
			return fmt.Errorf("Read of %d rows: no error", max)
		}
	}
	return nil
}

// BlockRows is the number of rows PassAlloc reads at a time.
const BlockRows = 4096

// PassAlloc returns the bytes allocated by a whole pass over src, read in
// blocks of BlockRows rows into one Block allocated before, with room for
// the rows' origins: what a pass allocates beyond the blocks it fills, which
// PassBytes bounds. It collects the garbage twice before, which empties the
// buffer pools, so that the pass allocates its buffers anew. It ends tb on
// an error of the pass.
func PassAlloc(tb testing.TB, src dataset.Source) uint64 {
	tb.Helper()
	s := src.Schema()
	var b dataset.Block
	b.Reset(BlockRows, len(s.Features), s.Labelled, len(s.Targets))
	b.ResetOrigins(BlockRows)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := src.Open(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for {
		_, err := r.Read(&b, BlockRows)
		if err == io.EOF {
			break
		}
		if err != nil {
			r.Close()
			tb.Fatal(err)
		}
	}
	r.Close()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
