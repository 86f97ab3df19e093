package dicabeam

import (
	"encoding/json"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
	"github.com/dicalab/dica/preprocess"
)

// configSpec is the part of a dica.Config that travels with a pipeline
// (Beam serializes the fields of DoFns as JSON): everything but Workers and
// Progress, kernels by kind and bandwidth.
type configSpec struct {
	Method         int
	Components     int
	Lambda         float64
	Epsilon        float64
	Kernel         kernelSpec
	Sigma          float64
	OutputKernel   kernelSpec
	SigmaY         float64
	Solver         int
	Rank           int
	Landmarks      int
	LandmarkPoints [][]float64
	LloydIters     int
	Orthogonal     bool
	RCond          float64
	OutputRank     int
	Form           int
	Seed           uint64
	Sample         int
	BlockRows      int
	Precision      int
	// Preprocessing is dica.Config.Preprocessing as JSON ("" for none).
	Preprocessing string
}

type kernelSpec struct {
	Kind  string // "", "rbf", "laplacian", "linear"
	Sigma float64
	L1    bool
}

func specKernel(k kernel.Kernel) (kernelSpec, error) {
	switch k := k.(type) {
	case nil:
		return kernelSpec{}, nil
	case kernel.RBF:
		return kernelSpec{Kind: "rbf", Sigma: k.Sigma}, nil
	case kernel.Laplacian:
		return kernelSpec{Kind: "laplacian", Sigma: k.Sigma, L1: k.L1}, nil
	case kernel.Linear:
		return kernelSpec{Kind: "linear"}, nil
	}
	return kernelSpec{}, fmt.Errorf("dicabeam: kernel %T cannot travel with a pipeline (use RBF, Laplacian or linear)", k)
}

func (s kernelSpec) kernel() kernel.Kernel {
	switch s.Kind {
	case "rbf":
		return kernel.RBF{Sigma: s.Sigma}
	case "laplacian":
		return kernel.Laplacian{Sigma: s.Sigma, L1: s.L1}
	case "linear":
		return kernel.Linear{}
	}
	return nil
}

func newConfigSpec(c dica.Config) (configSpec, error) {
	s := configSpec{
		Method: int(c.Method), Components: c.Components, Lambda: c.Lambda, Epsilon: c.Epsilon,
		Sigma: c.Sigma, SigmaY: c.SigmaY, Solver: int(c.Solver), Rank: c.Rank,
		Landmarks: int(c.Landmarks), LloydIters: c.LloydIters, Orthogonal: c.Orthogonal,
		RCond: c.RCond, OutputRank: c.OutputRank, Form: int(c.Form), Seed: c.Seed,
		Sample: c.Sample, BlockRows: c.BlockRows, Precision: c.Precision,
	}
	if c.Preprocessing != nil {
		b, err := json.Marshal(c.Preprocessing)
		if err != nil {
			return s, err
		}
		s.Preprocessing = string(b)
	}
	var err error
	if s.Kernel, err = specKernel(c.Kernel); err != nil {
		return s, err
	}
	if s.OutputKernel, err = specKernel(c.OutputKernel); err != nil {
		return s, err
	}
	if c.LandmarkPoints != nil {
		r, _ := c.LandmarkPoints.Dims()
		for i := 0; i < r; i++ {
			s.LandmarkPoints = append(s.LandmarkPoints, mat.Row(nil, i, c.LandmarkPoints))
		}
	}
	if c.Solver == dica.Exact {
		return s, fmt.Errorf("dicabeam: the exact solver holds the n x n kernel matrix: use the Nystrom or RFF solver")
	}
	return s, nil
}

func (s configSpec) config() dica.Config {
	c := dica.Config{
		Method: dica.Method(s.Method), Components: s.Components, Lambda: s.Lambda, Epsilon: s.Epsilon,
		Kernel: s.Kernel.kernel(), Sigma: s.Sigma, OutputKernel: s.OutputKernel.kernel(), SigmaY: s.SigmaY,
		Solver: dica.Solver(s.Solver), Rank: s.Rank, Landmarks: dica.Landmarks(s.Landmarks),
		LloydIters: s.LloydIters, Orthogonal: s.Orthogonal, RCond: s.RCond, OutputRank: s.OutputRank,
		Form: dica.Form(s.Form), Seed: s.Seed, Sample: s.Sample, BlockRows: s.BlockRows, Precision: s.Precision,
	}
	if len(s.LandmarkPoints) > 0 {
		d := len(s.LandmarkPoints[0])
		data := make([]float64, 0, len(s.LandmarkPoints)*d)
		for _, r := range s.LandmarkPoints {
			data = append(data, r...)
		}
		c.LandmarkPoints = mat.NewDense(len(s.LandmarkPoints), d, data)
	}
	if s.Preprocessing != "" {
		var p preprocess.Pipeline
		if err := json.Unmarshal([]byte(s.Preprocessing), &p); err == nil {
			c.Preprocessing = &p
		}
	}
	return c
}

// sampleSize is the size of the planning sample: Config.Sample, or
// max(dica.DefaultSample, 20 m) as in dica.NewPlan.
func sampleSize(c dica.Config) int {
	if c.Sample > 0 {
		return c.Sample
	}
	m := c.Rank
	if m == 0 {
		m = dica.DefaultRank
	}
	return max(dica.DefaultSample, 20*m)
}
