package ingest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dicalab/dica/preprocess"
)

// Role is what a column of one of dica's outputs holds.
type Role string

// The roles of the columns of dica's outputs (docs/FORMATS.md).
const (
	RoleSource     Role = "source"     // the file the cell was read from (its base name without extension)
	RoleEvent      Role = "event"      // the cell's 1-based row (CSV, Parquet, AnnData) or event (FCS) in that file
	RoleDomain     Role = "domain"     // the cell's domain (sample)
	RoleLabel      Role = "label"      // the cell's class label (population)
	RoleChannel    Role = "channel"    // an input channel as read from the file (raw)
	RoleInput      Role = "input"      // a model input after the model's preprocessing
	RoleComponent  Role = "component"  // a component of the projection
	RoleTarget     Role = "target"     // a real target
	RolePredicted  Role = "predicted"  // the population a classifier predicts, or a real target a regressor predicts
	RoleConfidence Role = "confidence" // the classifier's confidence in [0, 1]
)

// Column is a named column of an output and its role.
type Column struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// Layout describes one of dica's outputs: its columns and what they hold,
// and the preprocessing the columns of role RoleInput have been through.
// dica writes it into every output that has room for it (AnnData:
// uns["dica"]["layout"]; Parquet: the footer's key-value metadata
// dica.layout; FCS: the keyword DICA_LAYOUT) and reads it back, so that
// an output given as input is read as what it is: components, labels,
// domains, predictions and event numbers are never taken as channels, and
// inputs already preprocessed are not preprocessed again. A CSV output has
// no room for it: its header's names say the roles (ParseCSVHeader).
type Layout struct {
	Columns []Column `json:"columns"`
	// Preprocessing is the preprocessing the inputs (role RoleInput) have
	// been through: the model's.
	Preprocessing *preprocess.Pipeline `json:"preprocessing,omitempty"`
}

// LayoutVersion is the version of the Layout encoding (MarshalLayout).
const LayoutVersion = 1

// layoutJSON is the encoded form: Layout with its version.
type layoutJSON struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Layout
}

// layoutFormat names the encoding in its JSON, so that a reader can tell
// a dica layout from other metadata.
const layoutFormat = "dica-layout"

// MarshalLayout encodes l as JSON, with its format name and version.
func MarshalLayout(l *Layout) ([]byte, error) {
	if l == nil {
		return nil, fmt.Errorf("ingest: nil Layout")
	}
	return json.Marshal(layoutJSON{Format: layoutFormat, Version: LayoutVersion, Layout: *l})
}

// UnmarshalLayout decodes what MarshalLayout encodes. A layout of a later
// version is an error that says to upgrade dica.
func UnmarshalLayout(b []byte) (*Layout, error) {
	var j layoutJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("ingest: dica layout: %w", err)
	}
	if j.Format != layoutFormat {
		return nil, fmt.Errorf("ingest: not a dica layout (format %q)", j.Format)
	}
	if j.Version > LayoutVersion || j.Version < 1 {
		return nil, fmt.Errorf("ingest: dica layout version %d; this dica reads version %d: upgrade dica", j.Version, LayoutVersion)
	}
	l := j.Layout
	seen := map[string]bool{}
	for _, c := range l.Columns {
		if c.Name == "" || seen[c.Name] {
			return nil, fmt.Errorf("ingest: dica layout: column %q is empty or repeated", c.Name)
		}
		seen[c.Name] = true
	}
	return &l, nil
}

// Names returns the names of the columns of role r, in order.
func (l *Layout) Names(r Role) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, c := range l.Columns {
		if c.Role == r {
			out = append(out, c.Name)
		}
	}
	return out
}

// RoleOf returns the role of the column named name ("" when l has none).
func (l *Layout) RoleOf(name string) Role {
	if l == nil {
		return ""
	}
	for _, c := range l.Columns {
		if c.Name == name {
			return c.Role
		}
	}
	return ""
}

// PredictedPrefix begins the name of the column of a predicted real
// target in dica's CSV, Parquet and AnnData outputs: the target y
// predicted is predicted_y.
const PredictedPrefix = "predicted_"

// InputSuffix ends the name of a column of role RoleInput in dica's CSV,
// Parquet and FCS outputs: the model input CD3 after preprocessing is CD3_t.
const InputSuffix = "_t"

// componentName matches the names of components: DICA1, UDICA2, KPCA10,
// COIR3 (and INPUT1.. for a model without a projection).
var componentName = regexp.MustCompile(`^(DICA|UDICA|KPCA|COIR)[0-9]+$`)

// ParseCSVHeader returns the layout of a CSV file written by dica, from
// the names of its columns: it begins with the columns source and event,
// and names the others domain, label, predicted, confidence,
// predicted_TARGET (a regressor's predicted targets), NAME_t (inputs),
// DICA1.. (components); the rest are channels. It returns nil for a header
// that does not begin so.
func ParseCSVHeader(names []string) *Layout {
	if len(names) < 3 || names[0] != string(RoleSource) || names[1] != string(RoleEvent) {
		return nil
	}
	l := &Layout{}
	for _, n := range names {
		r := RoleChannel
		switch {
		case slices.Contains([]Role{RoleSource, RoleEvent, RoleDomain, RoleLabel, RolePredicted, RoleConfidence}, Role(n)):
			r = Role(n)
		case strings.HasPrefix(n, PredictedPrefix) && len(n) > len(PredictedPrefix):
			r = RolePredicted
		case componentName.MatchString(n):
			r = RoleComponent
		case strings.HasSuffix(n, InputSuffix) && len(n) > len(InputSuffix):
			r = RoleInput
		}
		l.Columns = append(l.Columns, Column{Name: n, Role: r})
	}
	return l
}

// fromOutput fixes the channels of a preprocessing recorded from one of
// dica's outputs: their positions in the output are not those of the
// files the channels were first read from, so they are forgotten (Index
// 0), and channels named V1, V2, ... after their column, as dica names
// the columns of CSV files without a header, are unnamed again (Unnamed,
// Index k for Vk), so that the model reads such files by position as the
// model that wrote the output did.
func fromOutput(p *preprocess.Pipeline) {
	if p == nil || len(p.Channels) == 0 {
		return
	}
	unnamed := true
	idx := make([]int, len(p.Channels))
	for j, c := range p.Channels {
		k, err := strconv.Atoi(strings.TrimPrefix(c.Name, "V"))
		if !strings.HasPrefix(c.Name, "V") || err != nil || k < 1 || "V"+strconv.Itoa(k) != c.Name {
			unnamed = false
			break
		}
		idx[j] = k
	}
	for j := range p.Channels {
		p.Channels[j].Index = 0
		if unnamed {
			p.Channels[j].Index = idx[j]
		}
	}
	p.Unnamed = unnamed
}
