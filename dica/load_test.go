package dica

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fifo makes a named pipe in a temporary folder; write, when not nil, runs
// in a goroutine with the pipe open for writing, which is closed when write
// returns or the test ends.
func fifo(t *testing.T, write func(f *os.File)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	if write == nil {
		return path
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		write(f)
		<-done
	}()
	return path
}

// header returns a valid file header of the given magic declaring n bytes
// of payload.
func header(magic string, version uint32, n uint64) []byte {
	b := []byte(magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	return binary.LittleEndian.AppendUint64(b, n)
}

// TestLoadBounded checks that a model or statistics file from a pipe whose
// header declares 10 GiB is refused before its payload is read when that
// exceeds the memory budget, and that the read stops when the context ends:
// while it waits for the pipe's writer to open, for its data, or for the
// rest of a payload that arrives slowly.
func TestLoadBounded(t *testing.T) {
	const tenGiB = 10 << 30
	loaders := map[string]struct {
		magic   string
		version uint32
		load    func(ctx context.Context, path string, o LoadOptions) error
	}{
		"model": {ModelMagic, modelVersion, func(ctx context.Context, path string, o LoadOptions) error {
			_, err := LoadContext(ctx, path, o)
			return err
		}},
		"statistics": {statsMagic, statsVersion, func(ctx context.Context, path string, o LoadOptions) error {
			_, err := LoadStatsContext(ctx, path, o)
			return err
		}},
	}
	for what, l := range loaders {
		t.Run(what+"/over budget", func(t *testing.T) {
			path := fifo(t, func(f *os.File) { f.Write(header(l.magic, l.version, tenGiB)) })
			start := time.Now()
			err := l.load(context.Background(), path, LoadOptions{MaxMemory: 1 << 30})
			if err == nil || !strings.Contains(err.Error(), "header declares 10.7 GB; reading it needs about 21.5 GB") ||
				!strings.Contains(err.Error(), "more than the memory budget of 1.07 GB") {
				t.Fatalf("err = %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %v", d)
			}
		})
		t.Run(what+"/slow payload", func(t *testing.T) {
			path := fifo(t, func(f *os.File) {
				f.Write(header(l.magic, l.version, tenGiB))
				f.Write(make([]byte, 3<<20))
			})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := l.load(ctx, path, LoadOptions{MaxMemory: -1})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("stopped after %v", d)
			}
		})
		t.Run(what+"/no writer", func(t *testing.T) {
			path := fifo(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if err := l.load(ctx, path, LoadOptions{}); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's", err)
			}
		})
		t.Run(what+"/nil context", func(t *testing.T) {
			var nilCtx context.Context
			if err := l.load(nilCtx, "x", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "nil context") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
