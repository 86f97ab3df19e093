package dicabeam

import (
	"reflect"
	"testing"

	"github.com/dicalab/dica/dica"
)

// TestConfigMirror checks that configSpec, the part of a dica.Config that
// travels with a pipeline, has a field for every field of dica.Config but
// those that do not travel (stated here), so that a new setting of the
// core cannot be lost on its way through Beam.
func TestConfigMirror(t *testing.T) {
	stays := map[string]string{
		"Workers":   "set per worker (Options.Workers)",
		"Progress":  "a function: progress is the runner's",
		"MaxMemory": "the budget of one process; a pipeline's workers have their own",
	}
	spec := reflect.TypeOf(configSpec{})
	cfg := reflect.TypeOf(dica.Config{})
	for i := range cfg.NumField() {
		f := cfg.Field(i)
		if _, ok := stays[f.Name]; ok {
			continue
		}
		if _, ok := spec.FieldByName(f.Name); !ok {
			t.Errorf("dica.Config.%s has no field in configSpec: add it (newConfigSpec and config), or say why it stays behind", f.Name)
		}
	}
	for name := range stays {
		if _, ok := cfg.FieldByName(name); !ok {
			t.Errorf("dica.Config has no field %s any more", name)
		}
	}
	// And the values travel: a configuration with every mirrored field set
	// comes back the same.
	c := dica.Config{Method: dica.UDICA, Components: 4, Lambda: 0.5, Epsilon: 1e-3, Sigma: 2, SigmaY: 3,
		Solver: dica.RFF, Rank: 64, Landmarks: dica.KMeansLandmarks, LloydIters: 3, Orthogonal: true, RCond: 1e-8,
		OutputRank: 20, Seed: 7, Sample: 999, BlockRows: 77, Precision: 32}
	s, err := newConfigSpec(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.config(); !reflect.DeepEqual(got, c) {
		t.Errorf("config() = %+v\nwant %+v", got, c)
	}
}
