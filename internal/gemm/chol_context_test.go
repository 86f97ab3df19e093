package gemm

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// stopCtx is cancelled at the limit-th call of Err.
type stopCtx struct {
	context.Context
	calls, limit int
}

func (c *stopCtx) Err() error {
	if c.calls++; c.calls >= c.limit {
		return context.Canceled
	}
	return nil
}
func (c *stopCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestCholeskyToContext checks that the factorization checks its context
// before each block of nb columns and stops with its error, the Cholesky
// reset, at any of them.
func TestCholeskyToContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	n := 3*nb + 10
	_, sym := spd(rng, n, n)
	all := &stopCtx{Context: context.Background(), limit: 1 << 30}
	var chol mat.Cholesky
	if ok, err := CholeskyToContext(all, &chol, sym, 2); !ok || err != nil {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if all.calls < 4 {
		t.Fatalf("%d checks for %d blocks", all.calls, 4)
	}
	for limit := 1; limit <= all.calls; limit++ {
		ok, err := CholeskyToContext(&stopCtx{Context: context.Background(), limit: limit}, &chol, sym, 2)
		if ok || !errors.Is(err, context.Canceled) || !chol.IsEmpty() {
			t.Fatalf("stopped at check %d of %d: ok %v, err %v, empty %v", limit, all.calls, ok, err, chol.IsEmpty())
		}
	}
}
