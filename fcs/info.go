package fcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Info summarizes a data set for display (the `dica info` command); its JSON
// form has exactly the keys version, datatype, byteorder, events,
// parameters, spillover, first_event and last_event (non-finite event
// values are null, see Values).
type Info struct {
	// Version is the HEADER version, e.g. "FCS3.1".
	Version string `json:"version"`
	// DataType is $DATATYPE ("I", "F" or "D") and ByteOrder $BYTEORD.
	DataType  string `json:"datatype"`
	ByteOrder string `json:"byteorder"`
	// Events is $TOT.
	Events int `json:"events"`
	// Parameters describes each parameter.
	Parameters []ParamInfo `json:"parameters"`
	// Spillover describes the spillover matrix the data set carries (see
	// File.Spillover); nil (JSON null) when it has none.
	Spillover *SpilloverInfo `json:"spillover"`
	// FirstEvent and LastEvent are the first and last complete events
	// present, raw (nil when none is present). In JSON, NaN and ±Inf
	// values (possible in F and D data) are null.
	FirstEvent Values `json:"first_event"`
	LastEvent  Values `json:"last_event"`
}

// Values is a list of numbers whose JSON form writes each non-finite value
// (NaN, +Inf, -Inf), which JSON cannot represent, as null; null reads back
// as NaN.
type Values []float64

// MarshalJSON writes v as a JSON array, with null for non-finite values.
func (v Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+8*len(v))
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b = append(b, "null"...)
			continue
		}
		m, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = append(b, m...)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads a JSON array of numbers and nulls (read as NaN).
func (v *Values) UnmarshalJSON(b []byte) error {
	if v == nil {
		return errors.New("fcs: UnmarshalJSON into a nil *Values")
	}
	var p []*float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p == nil {
		*v = nil
		return nil
	}
	out := make(Values, len(p))
	for i, x := range p {
		if x == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *x
		}
	}
	*v = out
	return nil
}

// SpilloverInfo is the summary of a spillover matrix: the keyword holding
// it and its channels as the keyword names them (the matrix is k x k for
// k channels), or, when its value cannot be read, the keyword and the
// error.
type SpilloverInfo struct {
	Keyword  string   `json:"keyword"`
	Channels []string `json:"channels"`
	Error    string   `json:"error,omitempty"`
}

// ParamInfo is the summary of one parameter: its name (the $PnN, or NAME#k
// when several parameters share the $PnN, see File.Names), $PnS, $PnB and
// $PnR.
type ParamInfo struct {
	Name  string  `json:"name"`
	Label string  `json:"label"`
	Bits  int     `json:"bits"`
	Range float64 `json:"range"`
}

// Info returns the summary of the data set. For a data set without DATA or
// a truncated one, it returns the summary (with the events present) together
// with the error that reading all events would give.
func (f *File) Info() (Info, error) {
	if err := f.parsed(); err != nil {
		return Info{}, err
	}
	in := Info{
		Version:    f.Version(),
		DataType:   string(f.dataType),
		ByteOrder:  f.byteOrd,
		Events:     f.tot,
		Parameters: make([]ParamInfo, len(f.params)),
	}
	for i, p := range f.params {
		in.Parameters[i] = ParamInfo{Name: f.names[i], Label: p.Label, Bits: p.Bits, Range: p.Range}
	}
	switch k, sp, err := f.spillover(); {
	case err == nil:
		in.Spillover = &SpilloverInfo{Keyword: k, Channels: sp.Channels}
	case k != "":
		in.Spillover = &SpilloverInfo{Keyword: k, Error: err.Error()}
	}
	n, err := f.present(false)
	var te *TruncatedError
	if err != nil && !errors.As(err, &te) {
		return in, err
	}
	if n == 0 {
		return in, err
	}
	in.FirstEvent, err = f.eventAt(0)
	if err != nil {
		return in, err
	}
	in.LastEvent, err = f.eventAt(n - 1)
	if err != nil {
		return in, err
	}
	if te != nil {
		return in, te
	}
	return in, nil
}

// eventAt decodes event i (0-based) without reading the others.
func (f *File) eventAt(i int) ([]float64, error) {
	b, err := readAt(f.r, f.begin+int64(i)*f.evBytes, f.evBytes)
	if err != nil {
		return nil, fmt.Errorf("fcs: reading event %d: %w", i+1, err)
	}
	b = append(b, make([]byte, slack)...)
	x := make([]float64, len(f.params))
	d := newDecoder(f)
	d.decode(x, b, 1)
	return x, nil
}

// WriteText writes the summary as aligned plain text: one line per field,
// then a table of the parameters with the first and last event values.
func (in Info) WriteText(w io.Writer) error {
	if w == nil {
		return errors.New("fcs: WriteText to a nil writer")
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "version\t%s\n", in.Version)
	fmt.Fprintf(tw, "datatype\t%s\n", in.DataType)
	fmt.Fprintf(tw, "byteorder\t%s\n", in.ByteOrder)
	fmt.Fprintf(tw, "events\t%d\n", in.Events)
	fmt.Fprintf(tw, "parameters\t%d\n", len(in.Parameters))
	switch sp := in.Spillover; {
	case sp == nil:
		fmt.Fprintf(tw, "spillover\tnone\n")
	case sp.Error != "":
		fmt.Fprintf(tw, "spillover\t%s (unreadable: %s)\n", sp.Keyword, sp.Error)
	default:
		fmt.Fprintf(tw, "spillover\t%s %d x %d\n", sp.Keyword, len(sp.Channels), len(sp.Channels))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\tlabel\tbits\trange\tfirst\tlast")
	for i, p := range in.Parameters {
		first, last := "-", "-"
		if i < len(in.FirstEvent) {
			first = strconv.FormatFloat(in.FirstEvent[i], 'g', -1, 64)
		}
		if i < len(in.LastEvent) {
			last = strconv.FormatFloat(in.LastEvent[i], 'g', -1, 64)
		}
		label := p.Label
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", i+1, p.Name, label, p.Bits, strconv.FormatFloat(p.Range, 'f', -1, 64), first, last)
	}
	return tw.Flush()
}
