package dica

import (
	"io"

	"github.com/dicalab/dica/dataset"
)

// fileBlocks is a dataset.Reader that hands out the rows of another
// reader in the blocks of Plan.Accumulate's reduction order: at most max
// rows, all of one source file, the next block starting where the last
// one ended or at the next file's first row. Blocks are therefore the
// same whatever the underlying reader's reads (a CSV reader's blocks run
// across files; a Parquet reader hands out what it has decoded; a reader
// that drops rows returns short blocks), so that the sums of a file's
// blocks are those of the file read alone. Reads of max rows of one file
// are handed out without a copy.
type fileBlocks struct {
	r     dataset.Reader
	stage dataset.Block // rows read ahead, from pos on
	pos   int
	err   error // the underlying reader's end or error, once stage is spent
}

func newFileBlocks(r dataset.Reader) *fileBlocks { return &fileBlocks{r: r} }

// blockFile returns the source file of the rows of b from row 0 (all of
// its rows, for a block of fileBlocks), or -1 when b does not say.
func blockFile(b *dataset.Block) int { return rowFile(b, 0) }

// rowFile returns the source file of row i of b, or -1 when b does not
// say.
func rowFile(b *dataset.Block, i int) int {
	if !b.HasOrigins() || i >= b.Rows {
		return -1
	}
	return b.File[i]
}

// oneFile reports whether rows lo to hi-1 of b come from one file (or b
// does not say).
func oneFile(b *dataset.Block, lo, hi int) bool {
	if !b.HasOrigins() {
		return true
	}
	f := b.File[lo]
	for _, g := range b.File[lo+1 : hi] {
		if g != f {
			return false
		}
	}
	return true
}

// Read implements dataset.Reader.
func (r *fileBlocks) Read(b *dataset.Block, max int) (int, error) {
	if b == nil || max < 1 {
		return r.r.Read(b, max) // the underlying reader says what is wrong
	}
	k, file := 0, 0
	for k < max {
		if r.pos == r.stage.Rows {
			if r.err != nil {
				break
			}
			n, err := r.r.Read(&r.stage, max)
			r.pos = 0
			if err != nil {
				r.err, r.stage.Rows = err, 0
				break
			}
			if n <= 0 {
				r.stage.Rows = 0
				continue
			}
			if k == 0 && n == max && oneFile(&r.stage, 0, n) {
				// A whole block: hand it out, keep b's storage.
				*b, r.stage = r.stage, *b
				r.stage.Rows = 0
				return n, nil
			}
		}
		st := &r.stage
		if k == 0 {
			b.Reset(max, st.D, st.Label != nil, st.T)
			if st.HasOrigins() {
				b.ResetOrigins(max)
			} else {
				b.File, b.Event = b.File[:0], b.Event[:0]
			}
			file = rowFile(st, r.pos)
		} else if rowFile(st, r.pos) != file {
			break
		}
		// The run of rows of the block's file.
		hi := r.pos + min(max-k, st.Rows-r.pos)
		for i := r.pos + 1; i < hi; i++ {
			if rowFile(st, i) != file {
				hi = i
				break
			}
		}
		n, d, t := hi-r.pos, st.D, st.T
		copy(b.X[k*d:(k+n)*d], st.X[r.pos*d:hi*d])
		copy(b.Domain[k:k+n], st.Domain[r.pos:hi])
		if st.Label != nil {
			copy(b.Label[k:k+n], st.Label[r.pos:hi])
		}
		if t > 0 {
			copy(b.Target[k*t:(k+n)*t], st.Target[r.pos*t:hi*t])
		}
		if st.HasOrigins() {
			copy(b.File[k:k+n], st.File[r.pos:hi])
			copy(b.Event[k:k+n], st.Event[r.pos:hi])
		}
		k += n
		r.pos = hi
	}
	if k == 0 {
		if r.err == nil {
			r.err = io.EOF
		}
		return 0, r.err
	}
	b.Rows = k
	if len(b.File) > k {
		b.File, b.Event = b.File[:k], b.Event[:k]
	}
	return k, nil
}

// Domains implements dataset.Reader. It may name domains of rows read
// ahead and not handed out yet.
func (r *fileBlocks) Domains() []string { return r.r.Domains() }

// Classes implements dataset.Reader, as Domains.
func (r *fileBlocks) Classes() []string { return r.r.Classes() }

// Close implements dataset.Reader.
func (r *fileBlocks) Close() error { return r.r.Close() }
