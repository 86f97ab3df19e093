package sourcetest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
)

// fakeSource serves rows rows of one input, in blocks of at most max rows;
// its reader accepts a nil Block (acceptNil), a maximum below 1
// (acceptMax), and allocates alloc bytes each Read.
type fakeSource struct {
	rows                 int
	acceptNil, acceptMax bool
	alloc                int
	openErr              error
}

func (s fakeSource) Schema() dataset.Schema { return dataset.Schema{Features: []string{"a"}} }

func (s fakeSource) Open(ctx context.Context) (dataset.Reader, error) {
	if s.openErr != nil {
		return nil, s.openErr
	}
	return &fakeReader{s: s}, nil
}

type fakeReader struct {
	s    fakeSource
	done int
}

var sink []byte

func (r *fakeReader) Read(b *dataset.Block, max int) (int, error) {
	switch {
	case b == nil:
		if r.s.acceptNil {
			return 0, nil
		}
		return 0, errors.New("nil block")
	case max < 1:
		if r.s.acceptMax {
			return 0, nil
		}
		return 0, errors.New("max < 1")
	case r.done == r.s.rows:
		return 0, io.EOF
	}
	sink = make([]byte, r.s.alloc)
	k := min(max, r.s.rows-r.done)
	b.Reset(k, 1, false, 0)
	b.Rows = k
	r.done += k
	return k, nil
}

func (r *fakeReader) Domains() []string { return []string{"d"} }
func (r *fakeReader) Classes() []string { return nil }
func (r *fakeReader) Close() error      { return nil }

func TestRefusesBadReads(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.New(mat.NewDense(4, 1, []float64{1, 2, 3, 4}), []string{"a", "a", "b", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  dataset.Source
		want string // a part of the error, or "" for none
	}{
		{"in memory", ds.Source(), ""},
		{"refuses", fakeSource{rows: 10}, ""},
		{"nil block", fakeSource{rows: 10, acceptNil: true}, "Read into a nil block: no error"},
		{"max 0", fakeSource{rows: 10, acceptMax: true}, "Read of 0 rows: no error"},
		{"open", fakeSource{openErr: errors.New("no file")}, "no file"},
	} {
		err := RefusesBadReads(ctx, tc.src)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPassAlloc(t *testing.T) {
	// 10 blocks of BlockRows rows, each allocating 1 MiB.
	got := PassAlloc(t, fakeSource{rows: 10 * BlockRows, alloc: 1 << 20})
	if got < 10<<20 || got > 11<<20 {
		t.Errorf("PassAlloc = %d bytes, want about 10 MiB", got)
	}
	// The pass fills the block allocated before: it allocates nearly nothing.
	ds, err := dataset.New(mat.NewDense(3*BlockRows, 2, nil), make([]string, 3*BlockRows))
	if err != nil {
		t.Fatal(err)
	}
	if got := PassAlloc(t, ds.Source()); got > 64<<10 {
		t.Errorf("PassAlloc of an in-memory pass = %d bytes", got)
	}
}
