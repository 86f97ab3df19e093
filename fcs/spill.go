package fcs

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dicalab/dica/internal/escape"
	"gonum.org/v1/gonum/mat"
)

// Spillover is a spillover matrix as stored in an FCS file: Matrix[i][j] is
// the fraction of the signal of the fluorochrome of channel i seen in the
// detector of channel j (ones on the diagonal). Compensation computes
// x S^{-1} on these channels (see preprocess.NewCompensation).
type Spillover struct {
	// Keyword is the keyword the matrix was read from.
	Keyword string
	// Channels are the channel names as written in the keyword (for an
	// unnamed $COMP, the $PnN of the first k parameters).
	Channels []string
	// Params holds the 0-based parameter index of each channel, matched as
	// File.LookupParam matches a channel, then as a 1-based parameter
	// number. A name that several parameters share is an error.
	Params []int
	// Matrix is the k x k spillover matrix.
	Matrix *mat.Dense
}

// spillKeys are the keywords searched for a spillover matrix, in order.
var spillKeys = [...]string{"$SPILLOVER", "$SPILL", "SPILL", "SPILLOVER", "$COMP"}

// Spillover returns the spillover matrix of the first of the keywords
// $SPILLOVER, $SPILL, SPILL, SPILLOVER, $COMP present. The value is
// "k,name_1,...,name_k,s_11,s_12,...,s_kk" (row-major); an FCS 3.0 $COMP
// without names ("k,s_11,...,s_kk") applies to the first k parameters. It
// returns ErrNoSpillover when no such keyword is present, and an error when
// the value is malformed or names a channel that is not a parameter.
func (f *File) Spillover() (*Spillover, error) {
	if err := f.parsed(); err != nil {
		return nil, err
	}
	k, s, err := f.spillover()
	if err != nil && k != "" {
		return nil, fmt.Errorf("fcs: keyword %s: %w", k, err)
	}
	return s, err
}

// spillover is Spillover with the keyword found ("" for none) and the
// error about its value not wrapped.
func (f *File) spillover() (string, *Spillover, error) {
	for _, k := range spillKeys {
		v, ok := f.Keyword(k)
		if !ok {
			continue
		}
		s, err := f.parseSpill(v)
		if err != nil {
			return k, nil, err
		}
		s.Keyword = k
		return k, s, nil
	}
	return "", nil, ErrNoSpillover
}

func (f *File) parseSpill(v string) (*Spillover, error) {
	tok := strings.Split(v, ",")
	for i := range tok {
		tok[i] = strings.TrimSpace(tok[i])
	}
	k, err := strconv.Atoi(tok[0])
	if err != nil || k < 1 {
		return nil, fmt.Errorf("bad channel count %s", escape.String(tok[0], 0))
	}
	var names, vals []string
	s := &Spillover{}
	switch {
	case k <= len(tok) && len(tok)-1-k == k*k:
		names, vals = tok[1:1+k], tok[1+k:]
		s.Params = make([]int, k)
		for i, name := range names {
			j, cands := f.lookup(name)
			if j < 0 && len(cands) == 0 {
				if n, err := strconv.Atoi(name); err == nil && n >= 1 && n <= len(f.params) {
					j = n - 1
				}
			}
			if j < 0 && len(cands) == 0 {
				return nil, fmt.Errorf("channel %s is neither a $PnN, a $PnS nor a parameter number", escape.String(name, 0))
			}
			if j < 0 {
				return nil, f.refError("channel", name, cands)
			}
			s.Params[i] = j
		}
	case k <= len(tok) && len(tok)-1 == k*k:
		if k > len(f.params) {
			return nil, fmt.Errorf("unnamed %dx%d matrix for %d parameters", k, k, len(f.params))
		}
		names, vals = f.names[:k], tok[1:]
		s.Params = make([]int, k)
		for i := range s.Params {
			s.Params[i] = i
		}
	default:
		return nil, fmt.Errorf("%d comma-separated fields for %d channels, want %d (count, names, matrix) or %d (count, matrix)", len(tok), k, 1+k+k*k, 1+k*k)
	}
	s.Channels = append([]string(nil), names...)
	data := make([]float64, k*k)
	for i, t := range vals {
		x, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("bad matrix value %s", escape.String(t, 0))
		}
		data[i] = x
	}
	s.Matrix = mat.NewDense(k, k, data)
	return s, nil
}
