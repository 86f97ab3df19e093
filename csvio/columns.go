package csvio

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
)

// Columns returns the names of the files' columns, in file order: the
// header's names, or V1, V2, ... without a header.
func (s *Source) Columns() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.columns...)
}

// FeatureColumns returns, for each feature (input column of the schema),
// its 0-based position among Columns.
func (s *Source) FeatureColumns() []int {
	if s == nil {
		return nil
	}
	out := make([]int, len(s.schema.Features))
	for j, r := range s.roles {
		if r.kind == featureCol {
			out[r.idx] = j
		}
	}
	return out
}

// NumericColumns reads the first rows of the files, at most rows of them
// (the first file's, then the next files' while fewer were read), and
// returns the 0-based positions among Columns of the columns whose fields
// in those rows are all numbers that a pass reads (finite decimal
// numbers), in increasing order. It reads the lines once, with no work per
// column beyond parsing its fields, so its time is linear in the bytes of
// those rows whatever the number of columns (BenchmarkNumericColumns).
//
// Labels are not read: a row whose label Options.LabelsIgnore drops counts
// as the others. A row with a number of fields other than the columns', a
// quoted field not closed, or a line over the line limit is an error (a
// *ParseError naming the file and the line), as it is in a pass; rows < 1
// is an error.
func (s *Source) NumericColumns(ctx context.Context, rows int) ([]int, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if rows < 1 {
		return nil, fmt.Errorf("csvio: NumericColumns of %d rows; want at least 1", rows)
	}
	ncol := len(s.columns)
	numeric := make([]bool, ncol)
	for j := range numeric {
		numeric[j] = true
	}
	var (
		l       lineReader
		scratch []byte
		seen    int
	)
	for _, name := range s.files {
		if seen == rows {
			break
		}
		err := func() error {
			f, err := s.open(name)
			if err != nil {
				return fmt.Errorf("csvio: %w", err)
			}
			defer f.Close()
			l.reset(f, 64<<10, s.maxLine)
			header := s.header
			for seen < rows {
				line, ok := l.next()
				if !ok {
					if l.err != nil {
						return readError(name, l.err)
					}
					return nil
				}
				if l.line == 1 {
					line = bytes.TrimPrefix(line, bom)
				}
				if len(line) == 0 {
					continue
				}
				if header {
					header = false
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := s.markNumeric(numeric, line, &scratch); err != nil {
					err.File, err.Line = name, l.line
					return err
				}
				seen++
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	var out []int
	for j, ok := range numeric {
		if ok {
			out = append(out, j)
		}
	}
	return out, nil
}

// markNumeric clears numeric[j] for each column j whose field in line is
// not a finite decimal number. A line without the columns' number of
// fields (or one more, empty) is an error, without its file and line.
func (s *Source) markNumeric(numeric []bool, line []byte, scratch *[]byte) *ParseError {
	ncol := len(numeric)
	pos, j := 0, 0
	for ; pos <= len(line); j++ {
		f, next, kind := nextField(line, pos, s.comma, scratch)
		if kind != errNone {
			return &ParseError{Column: j + 1, Msg: quoteMsg(kind)}
		}
		pos = next
		switch {
		case j < ncol:
			if numeric[j] {
				if _, ok := parseNumber(f); !ok {
					numeric[j] = false
				}
			}
		case j == ncol && len(f) == 0 && pos > len(line):
			// An empty field after the last column ends a line that ends
			// with the separator.
		default:
			return &ParseError{Msg: fieldCount(countFields(line, s.comma), ncol)}
		}
	}
	if j < ncol {
		return &ParseError{Msg: fieldCount(j, ncol)}
	}
	return nil
}

// PassBytes returns an upper bound of the memory a pass holds beyond the
// blocks it fills, for a memory budget. The sequential pass holds a
// buffer of 1 MiB and a line of at most MaxLineBytes (and a label file's
// buffer); the parallel pass, with W = GOMAXPROCS workers, at most 2W + 1
// chunks, each the larger of 256 KiB and two lines, and its rows parsed,
// at most 4 times its bytes (8 bytes per number of at least two bytes
// with its separator). PassBytes returns 0 for a nil Source.
func (s *Source) PassBytes() int64 {
	if s == nil {
		return 0
	}
	line := int64(s.maxLine) + 2
	seq := int64(dataBuffer) + line + 2*labelBuffer + 64<<10
	workers := s.workers
	if workers == 0 {
		if workers = runtime.GOMAXPROCS(0); workers == 1 {
			workers = -1
		}
	}
	if workers < 0 {
		return seq
	}
	size := int64(s.chunkSize)
	if size <= 0 {
		size = defaultChunk
	}
	chunk := max(size, 2*line)
	return seq + int64(2*workers+1)*5*chunk
}
