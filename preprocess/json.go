package preprocess

import (
	"encoding/json"
	"fmt"
)

// pipelineJSON is the JSON form of a Pipeline: the form dica's reports,
// and the outputs that describe themselves (AnnData uns, Parquet metadata,
// FCS keywords), use.
type pipelineJSON struct {
	Format            string        `json:"format"`
	Channels          []channelJSON `json:"channels"`
	Unnamed           bool          `json:"unnamed,omitempty"`
	Linearize         bool          `json:"linearize"`
	Compensation      *spillJSON    `json:"compensation"`
	Transform         string        `json:"transform"`
	TransformChannels []string      `json:"transform_channels"`
}

type channelJSON struct {
	Name  string `json:"name"`
	Ref   string `json:"ref,omitempty"`
	Index int    `json:"index,omitempty"`
	PnN   string `json:"pnn,omitempty"`
	PnS   string `json:"pns,omitempty"`
}

type spillJSON struct {
	PerFile  bool      `json:"per_file"`
	Keyword  string    `json:"keyword"`
	Source   string    `json:"source"`
	Channels []string  `json:"channels"`
	Matrix   []float64 `json:"matrix"`
}

// MarshalJSON encodes the pipeline as a JSON object with the fields
// format, channels (name, ref, index, pnn, pns), unnamed, linearize,
// compensation (per_file, keyword, source, channels, matrix), transform
// ("none" for none) and transform_channels (null for all channels). A nil
// pipeline is null.
func (p *Pipeline) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	j := pipelineJSON{Format: p.Format, Unnamed: p.Unnamed, Linearize: p.Linearize, Transform: p.TransformSpec(), TransformChannels: p.TransformChannels}
	j.Channels = []channelJSON{}
	for _, c := range p.Channels {
		j.Channels = append(j.Channels, channelJSON{c.Name, c.Ref, c.Index, c.PnN, c.PnS})
	}
	if s := p.Compensation; s != nil {
		j.Compensation = &spillJSON{s.PerFile, s.Keyword, s.Source, s.Channels, s.Matrix}
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON encodes, and checks the result
// (Check).
func (p *Pipeline) UnmarshalJSON(b []byte) error {
	if p == nil {
		return fmt.Errorf("preprocess: UnmarshalJSON into a nil Pipeline")
	}
	var j pipelineJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("preprocess: pipeline: %w", err)
	}
	q := Pipeline{Format: j.Format, Unnamed: j.Unnamed, Linearize: j.Linearize, Transform: j.Transform, TransformChannels: j.TransformChannels}
	for _, c := range j.Channels {
		q.Channels = append(q.Channels, Channel{Name: c.Name, Ref: c.Ref, Index: c.Index, PnN: c.PnN, PnS: c.PnS})
	}
	if s := j.Compensation; s != nil {
		q.Compensation = &Spill{PerFile: s.PerFile, Keyword: s.Keyword, Source: s.Source, Channels: s.Channels, Matrix: s.Matrix}
	}
	if err := q.Check(); err != nil {
		return err
	}
	*p = q
	return nil
}
