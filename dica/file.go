package dica

import (
	"bytes"
	"context"
	"encoding"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dicalab/dica/internal/atomicfile"
)

// MaxFileBytes bounds the size of a model, statistics or plan file that
// Load and LoadStats (and their Context forms) accept: the largest file
// dica writes holds a few m x m matrices of float64 at m = MaxRank.
const MaxFileBytes = 1 << 40

// LoadOptions bound the reading of a model or statistics file
// (LoadContext, LoadStatsContext).
type LoadOptions struct {
	// MaxMemory is the memory budget of the load in bytes, as
	// Config.MaxMemory is for a fit: a file whose header declares more
	// than half the budget (the bytes read and the values decoded from
	// them each take about the file's size) is refused before its payload
	// is read. 0 means DefaultMemoryFraction of the machine's memory (or of
	// its cgroup limit); < 0 means no limit but MaxFileBytes.
	MaxMemory int64
}

// loadChunk is the size of the reads of readSealed, between which it checks
// its context.
const loadChunk = 1 << 20

// readSealed reads a file written by seal, checking its magic number and
// version before reading further, and reading no more than its header
// declares (and, for a regular file, only after checking that the file's
// size agrees): a large file of another kind, a device such as /dev/zero or
// a pipe costs a few bytes, not a read without end. A declared size of more
// than half the budget (0: no limit) is refused before the payload is
// read. The read stops with ctx's error when ctx is done, also while the
// open or a read waits for a pipe's writer.
func readSealed(ctx context.Context, path, magic, what string, version uint32, budget int64) ([]byte, error) {
	f, err := openContext(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A read that waits on a pipe (or a FIFO, or a terminal) is woken when
	// ctx is done; regular files do not wait.
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(err error) ([]byte, error) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a %s file", path, what)
	}
	var hdr [headerLen]byte
	k, err := io.ReadFull(f, hdr[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	n, _, err := checkHeader(hdr[:k], magic, what, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n > MaxFileBytes {
		return nil, fmt.Errorf("%s: dica: %s header declares %d bytes, more than any %s file holds: the file is corrupted", path, what, n, what)
	}
	total := uint64(headerLen) + n + 4
	if fi.Mode().IsRegular() {
		if size := uint64(fi.Size()); size < total {
			return nil, fmt.Errorf("%s: dica: %s %w: %d bytes, expected %d", path, what, errTruncated, size, total)
		} else if size > total {
			return nil, fmt.Errorf("%s: dica: %s has %d unexpected bytes after its end", path, what, size-total)
		}
	}
	if budget > 0 && total > uint64(budget)/2 {
		return nil, fmt.Errorf("%s: dica: the %s header declares %s; reading it needs about %s (the bytes and the values decoded from them), more than the memory budget of %s: the file is damaged, or from a fit larger than this machine can load",
			path, what, Bytes(int64(total)), Bytes(2*int64(total)), Bytes(budget))
	}
	// Read what the header declares, and one byte more to see extra bytes;
	// the buffer grows with what arrives, not with what the header claims.
	var buf bytes.Buffer
	if fi.Mode().IsRegular() {
		buf.Grow(int(total))
	}
	buf.Write(hdr[:k])
	left := int64(n) + 4 + 1
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		got, err := io.CopyN(&buf, f, min(left, loadChunk))
		left -= got
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
	}
	return buf.Bytes(), nil
}

// openContext opens path for reading; when ctx is done first (the open of
// a FIFO waits for a writer), it returns ctx's error, and the file opened
// later, if ever, is closed.
func openContext(ctx context.Context, path string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w", path, ctx.Err())
	}
}

// save writes v's binary encoding to path atomically (internal/atomicfile):
// the file at path holds its previous contents until the new ones are
// complete.
func save(path string, v encoding.BinaryMarshaler) error {
	b, err := v.MarshalBinary()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

// load decodes into v the file at path, read by readSealed.
func load(ctx context.Context, path, magic, what string, version uint32, o LoadOptions, v encoding.BinaryUnmarshaler) error {
	if ctx == nil {
		return fmt.Errorf("dica: loading %s: nil context", path)
	}
	b, err := readSealed(ctx, path, magic, what, version, Config{MaxMemory: o.MaxMemory}.MemoryBudget())
	if err != nil {
		return err
	}
	if err := v.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Save writes the statistics to a file (MarshalBinary), atomically.
func (s *Stats) Save(path string) error { return save(path, s) }

// LoadStats reads statistics written by Stats.Save (or MarshalBinary),
// reading no more than the file's header declares: LoadStatsContext with
// no deadline and the default memory budget.
func LoadStats(path string) (*Stats, error) {
	return LoadStatsContext(context.Background(), path, LoadOptions{})
}

// LoadStatsContext reads statistics written by Stats.Save (or
// MarshalBinary). It reads no more than the file's header declares, after
// checking the magic number, the version and the declared size against the
// budget of o, and stops with ctx's error when ctx is done (also while it
// waits for the writer of a pipe).
func LoadStatsContext(ctx context.Context, path string, o LoadOptions) (*Stats, error) {
	var s Stats
	if err := load(ctx, path, statsMagic, "statistics", statsVersion, o, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
