package krr

import (
	"context"
	"runtime"
	"sync"
)

// reduceChunks sums per-chunk accumulators in a fixed order, so that the
// result has the same bits for any GOMAXPROCS.
//
// The rows [0, n) are cut into fixed chunks [c*rows, min((c+1)*rows, n)),
// which depend only on n and rows. Each chunk is summed by fn into a zeroed
// accumulator of length size; chunk accumulators are then added to the total
// in chunk order, c = 0, 1, 2, ... Up to GOMAXPROCS goroutines take chunks in
// increasing order, and each one created by newWorker holds its own buffers
// and a single accumulator, so memory is O(GOMAXPROCS * size). A goroutine
// that finishes chunk c waits until chunks 0..c-1 are added before adding
// its own; with chunks of equal cost the wait is short.
//
// It returns the first error of fn or of ctx (checked before each chunk).
func reduceChunks(ctx context.Context, n, rows, size int, newWorker func() func(acc []float64, lo, hi int) error) ([]float64, error) {
	nchunks := (n + rows - 1) / rows
	workers := max(1, min(runtime.GOMAXPROCS(0), nchunks))
	total := make([]float64, size)
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		next   int   // next chunk to hand out
		merged int   // chunks added to total
		failed error // first error
	)
	fail := func(err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		cond.Broadcast()
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			fn := newWorker()
			acc := make([]float64, size)
			for {
				mu.Lock()
				c := next
				next++
				stop := failed != nil
				mu.Unlock()
				if stop || c >= nchunks {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				clear(acc)
				lo := c * rows
				if err := fn(acc, lo, min(lo+rows, n)); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				for merged != c && failed == nil {
					cond.Wait()
				}
				if failed != nil {
					mu.Unlock()
					return
				}
				for i, v := range acc {
					total[i] += v
				}
				merged++
				cond.Broadcast()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	return total, nil
}
