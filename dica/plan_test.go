package dica

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/kernel"
)

// noRows is a source whose passes fail: a plan built from it read no row.
type noRows struct{ sc dataset.Schema }

var errRead = errors.New("a row was read")

func (s noRows) Schema() dataset.Schema                       { return s.sc }
func (s noRows) Open(context.Context) (dataset.Reader, error) { return nil, errRead }

// TestNeedsSample checks the predicate against what NewPlan does: where it
// says no sample is needed, NewPlan builds the plan without opening the
// source; where it says one is, NewPlan opens it.
func TestNeedsSample(t *testing.T) {
	labelled := dataset.Schema{Features: []string{"a", "b"}, Labelled: true}
	targets := dataset.Schema{Features: []string{"a", "b"}, Targets: []string{"y"}}
	unlabelled := dataset.Schema{Features: []string{"a", "b"}}
	lm := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	for _, tc := range []struct {
		name string
		sc   dataset.Schema
		cfg  Config
		want bool
	}{
		{"nystrom default", labelled, Config{}, true},
		{"nystrom with sigma", labelled, Config{Sigma: 1}, true},
		{"given landmarks, sigma", labelled, Config{Sigma: 1, Landmarks: GivenLandmarks, LandmarkPoints: lm, Rank: 3}, false},
		{"given landmarks, kernel", unlabelled, Config{Method: UDICA, Kernel: kernel.Laplacian{Sigma: 2}, Landmarks: GivenLandmarks, LandmarkPoints: lm, Rank: 3}, false},
		{"given landmarks, median", labelled, Config{Landmarks: GivenLandmarks, LandmarkPoints: lm, Rank: 3}, true},
		{"rff with sigma", labelled, Config{Solver: RFF, Sigma: 1, Rank: 20}, false},
		{"rff, median", labelled, Config{Solver: RFF, Rank: 20}, true},
		{"rff with sigma, regression", targets, Config{Solver: RFF, Sigma: 1, Rank: 20}, true},
		{"rff with sigma, udica on targets", targets, Config{Method: UDICA, Solver: RFF, Sigma: 1, Rank: 20}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.cfg.NeedsSample(tc.sc))
			p, err := NewPlan(context.Background(), noRows{tc.sc}, tc.cfg)
			if tc.want {
				require.ErrorIs(t, err, errRead)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, p.InputMap())
		})
	}
}
