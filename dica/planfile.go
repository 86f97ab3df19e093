package dica

// Save writes the plan to a file (MarshalBinary), atomically: the plan of a
// fit made in shards (Plan.Accumulate on each, Stats.Merge of the parts),
// so that every shard uses the same settings, bandwidths and landmarks.
func (p *Plan) Save(path string) error { return save(path, p) }

// LoadPlan reads a plan written by Plan.Save (or MarshalBinary), reading no
// more than the file's header declares.
func LoadPlan(path string) (*Plan, error) {
	var p Plan
	if err := load(path, planMagic, "plan", planVersion, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
