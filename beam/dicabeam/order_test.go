package dicabeam

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/toy"
)

// orderCase is a fit of the CSV files of orderFiles.
type orderCase struct {
	name    string
	cfg     dica.Config
	workers int
}

var orderCases = []orderCase{
	{"dica-1", dica.Config{Method: dica.DICA, Rank: 60, Components: 4, Seed: 3}, 1},
	{"dica-3", dica.Config{Method: dica.DICA, Rank: 60, Components: 4, Seed: 3}, 3},
	// UDICA: the Gram sum, combined in row chunks under their own keys.
	{"udica-1", dica.Config{Method: dica.UDICA, Rank: 60, Components: 5, Seed: 5}, 1},
	{"udica-3", dica.Config{Method: dica.UDICA, Rank: 60, Components: 5, Seed: 5}, 3},
}

// orderFiles writes five CSV files of unequal sizes (one sample each, with
// label files whose label "0" drops every fifth row) into a temporary
// folder.
func orderFiles(t *testing.T) FileOptions {
	t.Helper()
	ds := toy.Classification(toy.Options{Domains: 5, MeanSize: 150, Seed: 21})
	files, labels := writeCSV(t, t.TempDir(), ds)
	return FileOptions{Files: files, Options: ingest.Options{LabelFiles: labels, LabelsIgnore: []string{"0"}, Transform: "asinh:2"}}
}

// inProcess fits the files as the dica command does: ingest.Open, the
// pipeline it returns recorded, dica.Fit. It returns the model's bytes.
func inProcess(t *testing.T, o FileOptions, cfg dica.Config) []byte {
	t.Helper()
	in, err := ingest.Open(o.Files, o.Options)
	require.NoError(t, err)
	cfg.Preprocessing = in.Pipeline
	m, err := dica.Fit(context.Background(), in.Source, cfg)
	require.NoError(t, err)
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	return b
}

// TestFitFilesBitIdentical: FitFiles on the runner gives the model of
// ingest.Open + dica.Fit on the same files byte for byte (the model file
// and MarshalBinary), with blocks of 64 cells on 1 or 3 goroutines per file
// and the Gram sum in 3 keyed chunks.
func TestFitFilesBitIdentical(t *testing.T) {
	o := orderFiles(t)
	for _, tc := range orderCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.BlockRows, cfg.Workers = 64, tc.workers
			want := inProcess(t, o, cfg)

			p, s := beam.NewPipelineWithRoot()
			model, err := FitFiles(s, o, Options{Config: cfg, GramParts: 3, Workers: tc.workers})
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "m.dica")
			WriteModel(s, path, model)
			require.NoError(t, ptest.Run(p))
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, want, file, "the model file")
			got, err := dica.Load(path)
			require.NoError(t, err)
			gb, err := got.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, want, gb)
		})
	}
}

// fileParts returns the keyed parts accumFilesFn emits for each file of o
// with the plan of cfg: parts[f] holds file f's, statsKey last.
func fileParts(t *testing.T, o FileOptions, cfg dica.Config, workers, gramParts int) [][]keyedPart {
	t.Helper()
	ctx := context.Background()
	in, err := ingest.Open(o.Files, o.Options)
	require.NoError(t, err)
	cfg.Preprocessing = in.Pipeline
	plan, err := dica.NewPlan(ctx, in.Source, cfg)
	require.NoError(t, err)
	pb, err := plan.MarshalBinary()
	require.NoError(t, err)
	side := func(b *[]byte) bool { *b = pb; return true }
	f := &accumFilesFn{Options: o, BlockRows: cfg.BlockRows, GramParts: gramParts, Workers: workers}
	out := make([][]keyedPart, len(o.Files))
	for i, path := range o.Files {
		task := fileTask{Index: i, Path: path, Label: o.Options.LabelFiles[i]}
		require.NoError(t, f.ProcessElement(ctx, task, side, func(k int, p Part) {
			out[i] = append(out[i], keyedPart{k, p})
		}))
	}
	return out
}

type keyedPart struct {
	key  int
	part Part
}

// roundTrip encodes and decodes p, as the runner does between steps.
func roundTrip(t *testing.T, p Part) Part {
	t.Helper()
	b, err := encodePart(p)
	require.NoError(t, err)
	q, err := decodePart(b)
	require.NoError(t, err)
	return q
}

// TestCombineFilesInAnyOrder: the parts of the files, added per key in
// any order and grouping (as bundles and combines may), give the model of
// dica.Fit byte for byte, through the coder too; on the runner, with the
// files' parts given last file first. A file missing or given twice is an
// error.
func TestCombineFilesInAnyOrder(t *testing.T) {
	o := orderFiles(t)
	rng := rand.New(rand.NewPCG(4, 5))
	for _, tc := range orderCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.BlockRows, cfg.Workers = 64, tc.workers
			want := inProcess(t, o, cfg)
			for trial := range 6 {
				// Fresh parts each time: adding takes ownership.
				per := fileParts(t, o, cfg, tc.workers, 3)
				byKey := map[int][]Part{}
				for _, ps := range per {
					for _, kp := range ps {
						byKey[kp.key] = append(byKey[kp.key], kp.part)
					}
				}
				var g Gathered
				for _, parts := range byKey {
					// Add random pairs of the partial sums until one is
					// left: any grouping and order.
					rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
					for len(parts) > 1 {
						i := rng.IntN(len(parts) - 1)
						sum, err := roundTrip(t, parts[i]).add(roundTrip(t, parts[i+1]))
						require.NoError(t, err)
						parts = append(append(parts[:i:i], sum), parts[i+2:]...)
					}
					require.Equal(t, len(o.Files), parts[0].Files)
					require.Empty(t, parts[0].Pending)
					g.Parts = append(g.Parts, roundTrip(t, parts[0]))
				}
				m, err := g.Solve()
				require.NoError(t, err)
				got, err := m.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, want, got, "trial %d", trial)
			}

			// On the runner: the files' parts as elements, the last file's
			// first.
			per := fileParts(t, o, cfg, tc.workers, 3)
			var elems [][]byte
			for i := len(per) - 1; i >= 0; i-- {
				for _, kp := range per[i] {
					e, err := encodePart(kp.part)
					require.NoError(t, err)
					elems = append(elems, append(binary.AppendVarint(nil, int64(kp.key)), e...))
				}
			}
			p, s := beam.NewPipelineWithRoot()
			parts := beam.ParDo(s, decodeKeyedPart, beam.CreateList(s, elems))
			path := filepath.Join(t.TempDir(), "model.dica")
			WriteModel(s, path, Solve(s, CombineParts(s, parts)))
			require.NoError(t, ptest.Run(p))
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, want, file)
		})
	}

	// A file missing: its successors stay pending, and Solve says so.
	cfg := orderCases[0].cfg
	cfg.BlockRows = 64
	per := fileParts(t, o, cfg, 1, 3)
	var sum Part
	for i, ps := range per {
		if i == 1 {
			continue
		}
		var err error
		sum, err = sum.add(ps[len(ps)-1].part)
		require.NoError(t, err)
	}
	require.Equal(t, 1, sum.Files)
	require.Len(t, sum.Pending, len(per)-2)
	_, err := Gathered{Parts: []Part{sum}}.Solve()
	require.ErrorContains(t, err, "the statistics of file 1 are missing")
	// A file twice.
	per = fileParts(t, o, cfg, 1, 3)
	again := fileParts(t, o, cfg, 1, 3)
	_, err = per[2][0].part.add(again[2][0].part)
	require.ErrorContains(t, err, "file 2")
	// Parts in file order do not add with parts of cells.
	_, err = per[0][0].part.add(Part{Stats: again[0][len(again[0])-1].part.Pending[0].Stats})
	require.ErrorContains(t, err, "in order")
}
