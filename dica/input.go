package dica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/exact"
	"github.com/dicalab/dica/kernel"
)

// Input is the method of no transformation: a model that projects every
// cell on its preprocessed inputs themselves, so that a learner on the
// inputs (the baseline of package eval) can travel in a model file with
// the preprocessing and the summary of its data.
//
// Fit with Method Input makes one pass over the source (counting cells per
// domain and class, and summing each domain's inputs) and fits no kernel
// map: the fields of Config that shape a kernel fit (kernels, solver,
// rank, landmarks, components, lambda, epsilon, precision) are ignored,
// and the model's Config records the identity as the exact kernel
// expansion of the linear kernel on the d unit vectors,
// z(x) = [k(x, e_1) .. k(x, e_d)] = x: Solver Exact, Kernel
// kernel.Linear, Rank and Components d, W the d x d identity, Mean zero
// and d eigenvalues 1 (so TransformOptions.Scale changes nothing).
// Transform returns the preprocessed inputs, bit for bit (a -0 becomes
// +0). InputVariance and ProjectedVariance are both the distributional
// variance of the training domains under the linear kernel,
// (1/N) sum_i ||mean_i - mean_bar||^2 over the N domains' mean inputs.
// Plans, statistics, families and SolveWith do not take this method.
const Input = exact.Input

// fitInput fits the identity model of Input on src.
func fitInput(ctx context.Context, src dataset.Source, cfg Config) (*Model, error) {
	sc := src.Schema()
	d := sc.D()
	if d == 0 {
		return nil, fmt.Errorf("dica: the data has no input columns")
	}
	c := Config{Method: Input, Solver: Exact, Kernel: kernel.Linear{}, Rank: d, Components: d,
		Seed: cfg.Seed, Preprocessing: cfg.Preprocessing, Progress: cfg.Progress, BlockRows: cfg.BlockRows,
		MaxMemory: cfg.MaxMemory}.withDefaults()
	chk := c
	chk.Method = KPCA // the checks of every field but the method
	if err := chk.check(); err != nil {
		return nil, err
	}
	var err error
	if c.Preprocessing, err = bindPipeline(cfg.Preprocessing, sc); err != nil {
		return nil, err
	}
	c.Workers = 0

	r, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var (
		b        dataset.Block
		n        int64
		domCount []int64
		domSum   [][]float64
		clsCount []int64
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, err := r.Read(&b, c.BlockRows)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if b.D != d {
			return nil, fmt.Errorf("dica: a block of %d columns from a source of %d", b.D, d)
		}
		if err := checkBlock(&b, n, false); err != nil {
			return nil, err
		}
		for i := 0; i < k; i++ {
			g := b.Domain[i]
			for len(domCount) <= g {
				domCount = append(domCount, 0)
				domSum = append(domSum, make([]float64, d))
			}
			domCount[g]++
			addTo(domSum[g], b.Row(i))
			if b.Label != nil && b.Label[i] != dataset.NoLabel {
				cl := b.Label[i]
				for len(clsCount) <= cl {
					clsCount = append(clsCount, 0)
				}
				clsCount[cl]++
			}
		}
		n += int64(k)
		if c.Progress != nil {
			c.Progress("input", n)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("dica: the data has no rows")
	}
	domains := slices.Clone(r.Domains())
	domCount, domSum = growSums(domCount, domSum, len(domains), d)
	var classes []string
	if sc.Labelled {
		classes = slices.Clone(r.Classes())
		clsCount, _ = growSums(clsCount, nil, len(classes), 0)
	}
	// Natural order of domains and classes, as every model lists them.
	if m, names := naturalMap(domains); m != nil {
		cnt, sum := make([]int64, len(names)), make([][]float64, len(names))
		for i, j := range m {
			cnt[j], sum[j] = domCount[i], domSum[i]
		}
		domains, domCount, domSum = names, cnt, sum
	}
	if m, names := naturalMap(classes); m != nil {
		cnt := make([]int64, len(names))
		for i, j := range m {
			cnt[j] = clsCount[i]
		}
		classes, clsCount = names, cnt
	}

	p := &Plan{Config: c, Schema: sc, in: mapSpec{kind: mapKernelRows, kern: kernel.Linear{}, landmarks: eye(d)}}
	if err := p.finish(); err != nil {
		return nil, err
	}
	ones := make([]float64, d)
	for i := range ones {
		ones[i] = 1
	}
	sum := Summary{N: n, Features: sc.Features, Domains: domains, DomainCounts: domCount,
		Classes: classes, ClassCounts: clsCount, Targets: sc.Targets}
	m := newModel(p, &solution{w: eye(d), values: ones}, make([]float64, d), sum)
	m.InputVariance = linearVariance(domCount, domSum)
	m.ProjectedVariance = m.InputVariance
	return m, nil
}

// linearVariance returns (1/N) sum_i ||mean_i - mean_bar||^2 over the N
// domains with cells, mean_bar the unweighted mean of their means.
func linearVariance(count []int64, sums [][]float64) float64 {
	var means [][]float64
	for i, s := range sums {
		if count[i] == 0 {
			continue
		}
		m := make([]float64, len(s))
		for j, v := range s {
			m[j] = v / float64(count[i])
		}
		means = append(means, m)
	}
	if len(means) == 0 {
		return 0
	}
	bar := make([]float64, len(means[0]))
	for _, m := range means {
		addTo(bar, m)
	}
	for j := range bar {
		bar[j] /= float64(len(means))
	}
	var v float64
	for _, m := range means {
		for j, x := range m {
			v += (x - bar[j]) * (x - bar[j])
		}
	}
	return v / float64(len(means))
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := range d {
		m.Set(i, i, 1)
	}
	return m
}
