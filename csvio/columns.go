package csvio

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
