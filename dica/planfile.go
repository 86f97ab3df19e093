package dica

import "context"

// Save writes the plan to a file (MarshalBinary), atomically: the plan of a
// fit made in shards (Plan.Accumulate on each, Stats.Merge of the parts),
// so that every shard uses the same settings, bandwidths and landmarks.
func (p *Plan) Save(path string) error { return save(path, p) }

// LoadPlan reads a plan written by Plan.Save (or MarshalBinary), as
// LoadPlanContext does with the default memory budget.
func LoadPlan(path string) (*Plan, error) {
	return LoadPlanContext(context.Background(), path, LoadOptions{})
}

// LoadPlanContext reads a plan written by Plan.Save, as LoadContext reads a
// model: no further than the file's header declares, refusing a declared
// size over half the memory budget, and stopping when ctx is done.
func LoadPlanContext(ctx context.Context, path string, o LoadOptions) (*Plan, error) {
	var p Plan
	if err := load(ctx, path, planMagic, "plan", planVersion, o, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
