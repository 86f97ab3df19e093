package exact

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/toy"
)

// countCtx is a context that is cancelled at its limit-th call of Err,
// so a test can stop a fit at each of the points where it checks.
type countCtx struct {
	mu    sync.Mutex
	calls int
	limit int
	done  chan struct{}
}

func newCountCtx(limit int) *countCtx { return &countCtx{limit: limit, done: make(chan struct{})} }

func (c *countCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *countCtx) Value(any) any               { return nil }
func (c *countCtx) Done() <-chan struct{}       { return c.done }
func (c *countCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls == c.limit {
		close(c.done)
	}
	if c.calls >= c.limit {
		return context.Canceled
	}
	return nil
}

// TestFitCancel stops fits at each point where they check their context:
// the error is the context's, and the checks lie inside the Cholesky
// factorization (one per block of 192 columns) and the Lanczos iterations,
// not only between the O(n^3) steps.
func TestFitCancel(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 4, MeanSize: 250, Seed: 9})
	n := ds.N()
	for _, method := range []Method{DICA, UDICA} {
		o := Options{Method: method, Components: 3, Epsilon: 1e-4, Kernel: kernel.RBF{Sigma: 1}}
		all := newCountCtx(1 << 30)
		if _, err := Fit(all, ds, o); err != nil {
			t.Fatal(err)
		}
		// Entry, after the kernel matrix, after the centering, before the
		// factorization, its blocks, after it and after the output factor.
		blocks := (n + 191) / 192
		if min := 5 + blocks; all.calls < min {
			t.Errorf("%v: %d checks of the context for n = %d; want at least %d", method, all.calls, n, min)
		}
		if method == UDICA && all.calls < 5+blocks+10 {
			t.Errorf("UDICA: %d checks: the Lanczos iterations do not check", all.calls)
		}
		for limit := 1; limit <= all.calls; limit += max(1, all.calls/12) {
			_, err := Fit(newCountCtx(limit), ds, o)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%v stopped at check %d of %d: %v", method, limit, all.calls, err)
			}
		}
	}
}

// TestGramBlocks checks that the kernel matrix computed in blocks of rows
// (between checks of the context) has the bits of one kernel.Block call.
func TestGramBlocks(t *testing.T) {
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 230, Seed: 2})
	n := ds.N()
	if n <= 2*gramRows {
		t.Fatalf("%d points: fewer than 3 blocks", n)
	}
	for _, k := range []kernel.Kernel{kernel.RBF{Sigma: 0.7}, kernel.Laplacian{Sigma: 2, L1: true}, kernel.Linear{}} {
		got, err := gramContext(context.Background(), k, ds.X)
		if err != nil {
			t.Fatal(err)
		}
		want := mat.NewDense(n, n, nil)
		k.Block(want, ds.X, ds.X)
		for p := 0; p < n; p++ {
			for q := p; q < n; q++ {
				a := 0.5 * (want.At(p, q) + want.At(q, p))
				if got.At(p, q) != a || got.At(q, p) != a {
					t.Fatalf("%v: entry %d, %d is %v, one Block gives %v", k, p, q, got.At(p, q), a)
				}
			}
		}
	}
}
