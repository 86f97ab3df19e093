package dica

import (
	"bytes"
	"encoding"
	"fmt"
	"io"
	"os"

	"github.com/dicalab/dica/internal/atomicfile"
)

// MaxFileBytes bounds the size of a model, statistics or plan file that
// Load, LoadStats and LoadPlan accept: the largest file dica writes holds a
// few m x m matrices of float64 at m = MaxRank.
const MaxFileBytes = 1 << 40

// readSealed reads a file written by seal, checking its magic number and
// version before reading further, and reading no more than its header
// declares (and, for a regular file, only after checking that the file's
// size agrees): a large file of another kind, a device such as /dev/zero or
// a pipe costs a few bytes, not a read without end.
func readSealed(path, magic, what string, version uint32) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
		return nil, fmt.Errorf("%s: %w", path, err)
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
	// Read what the header declares, and one byte more to see extra bytes;
	// the buffer grows with what arrives, not with what the header claims.
	var buf bytes.Buffer
	if fi.Mode().IsRegular() {
		buf.Grow(int(total))
	}
	buf.Write(hdr[:])
	if _, err := buf.ReadFrom(io.LimitReader(f, int64(n)+4+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf.Bytes(), nil
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
func load(path, magic, what string, version uint32, v encoding.BinaryUnmarshaler) error {
	b, err := readSealed(path, magic, what, version)
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
// reading no more than the file's header declares.
func LoadStats(path string) (*Stats, error) {
	var s Stats
	if err := load(path, statsMagic, "statistics", statsVersion, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
