package figure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/kernel"
)

// ModelTitle says what a model is, for a title: its method, its kernel's
// bandwidth and its solver's rank, such as "DICA, sigma = 1, rank 500".
func ModelTitle(m *dica.Model) string {
	if m == nil {
		return ""
	}
	c := m.Config()
	t := strings.ToUpper(c.Method.String())
	if k, ok := c.Kernel.(kernel.RBF); ok {
		t += fmt.Sprintf(", sigma = %.4g", k.Sigma)
	} else if c.Kernel != nil {
		t += ", kernel " + c.Kernel.String()
	}
	switch c.Solver {
	case dica.Nystrom:
		t += fmt.Sprintf(", rank %d", c.Rank)
	case dica.RFF:
		t += fmt.Sprintf(", %d random features", c.Rank)
	case dica.Exact:
		t += ", exact"
	}
	return t
}

// baselineRows returns the rows of the sample a baseline is fitted to (fit
// nil: all) and a copy of their inputs.
func baselineRows(s *Sample, fit []bool, name string) ([]int, *mat.Dense, error) {
	if s == nil || s.X == nil {
		return nil, nil, fmt.Errorf("figure: %s baseline: the cells' inputs are not known", name)
	}
	n, d := s.X.Dims()
	if fit != nil && len(fit) != n {
		return nil, nil, fmt.Errorf("figure: %s baseline: %d fit marks for %d cells", name, len(fit), n)
	}
	var rows []int
	for i := 0; i < n; i++ {
		if fit == nil || fit[i] {
			rows = append(rows, i)
		}
	}
	if len(rows) < 2 {
		return nil, nil, fmt.Errorf("figure: %s baseline: %d cells to fit it to, want at least 2", name, len(rows))
	}
	xf := mat.NewDense(len(rows), d, nil)
	for r, i := range rows {
		xf.SetRow(r, s.X.RawRowView(i))
	}
	return rows, xf, nil
}

func fittedTo(fit []bool) string {
	if fit != nil {
		return "the plotted cells of the training samples"
	}
	return "the plotted cells"
}

// PCABaseline projects the sampled cells on the first max(need, 3)
// principal components (at most the number of inputs, at least need) of
// the inputs of the cells for which fit is true (nil: all), centered at
// their means; the sign of each component makes its largest loading
// positive, so pictures are reproducible. It also returns a note saying
// how the baseline was fitted.
func PCABaseline(s *Sample, fit []bool, need int) (View, string, error) {
	_, xf, err := baselineRows(s, fit, "PCA")
	if err != nil {
		return View{}, "", err
	}
	n, d := s.X.Dims()
	if d < need {
		return View{}, "", fmt.Errorf("figure: PCA baseline: the data has %d columns, %d components were asked for", d, need)
	}
	var pc stat.PC
	if ok := pc.PrincipalComponents(xf, nil); !ok {
		return View{}, "", errors.New("figure: PCA baseline: the principal components could not be computed")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	k := min(max(need, 3), d)
	v := mat.DenseCopyOf(vecs.Slice(0, d, 0, k))
	for j := 0; j < k; j++ {
		col := mat.Col(nil, j, v)
		big := 0
		for i := range col {
			if math.Abs(col[i]) > math.Abs(col[big]) {
				big = i
			}
		}
		if col[big] < 0 {
			for i := range col {
				v.Set(i, j, -col[i])
			}
		}
	}
	means := make([]float64, d)
	for j := range means {
		means[j] = stat.Mean(mat.Col(nil, j, xf), nil)
	}
	xc := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xc.Set(i, j, s.X.At(i, j)-means[j])
		}
	}
	var z mat.Dense
	z.Mul(xc, v)
	fitted, _ := xf.Dims()
	note := fmt.Sprintf("PCA baseline: the principal components of the inputs of %s (%s cells).", fittedTo(fit), count(fitted))
	return View{Name: "PC", Title: "PCA baseline", Z: &z}, note, nil
}

// exactBaselineMax is the largest number of cells a KPCA baseline fits with
// the exact solver; beyond, it uses Nystrom at the default rank.
const exactBaselineMax = 5000

// KPCABaseline fits kernel PCA with the model's kernel, solver and rank to
// the sampled cells for which fit is true (nil: all) and projects every
// sampled cell with it, keeping max(need, 3) components (at least need).
// Above 5,000 cells a model of the exact solver gives a Nystrom baseline
// at the default rank, and given landmarks become uniform ones. It also
// returns a note saying how the baseline was fitted.
func KPCABaseline(ctx context.Context, m *dica.Model, s *Sample, fit []bool, need int) (View, string, error) {
	if m == nil {
		return View{}, "", errors.New("figure: KPCA baseline: no model")
	}
	rows, xf, err := baselineRows(s, fit, "KPCA")
	if err != nil {
		return View{}, "", err
	}
	cfg := m.Config()
	c := dica.Config{
		Method: dica.KPCA, Kernel: cfg.Kernel, Solver: cfg.Solver, Rank: cfg.Rank,
		Landmarks: cfg.Landmarks, Seed: cfg.Seed, Components: max(need, 3),
	}
	if c.Solver == dica.Exact && len(rows) > exactBaselineMax {
		c.Solver, c.Rank = dica.Nystrom, dica.DefaultRank
	}
	if c.Landmarks == dica.GivenLandmarks {
		c.Landmarks = dica.UniformLandmarks
	}
	if c.Solver != dica.Exact {
		c.Rank = min(c.Rank, len(rows))
	}
	names := make([]string, len(rows))
	for r, i := range rows {
		names[r] = s.Domains[s.Domain[i]]
	}
	ds, err := dataset.New(xf, names)
	if err != nil {
		return View{}, "", err
	}
	km, err := dica.Fit(ctx, ds.Source(), c)
	if err != nil {
		return View{}, "", fmt.Errorf("figure: KPCA baseline: %w", err)
	}
	if km.Positive < need {
		return View{}, "", fmt.Errorf("figure: KPCA baseline: the fit has %d components, %d were asked for", km.Positive, need)
	}
	z, err := km.Transform(s.X, dica.TransformOptions{})
	if err != nil {
		return View{}, "", fmt.Errorf("figure: KPCA baseline: %w", err)
	}
	title := "KPCA baseline" + strings.TrimPrefix(ModelTitle(km), "KPCA")
	note := fmt.Sprintf("KPCA baseline: kernel PCA with the model's kernel, fitted to %s (%s cells).", fittedTo(fit), count(len(rows)))
	return View{Name: "KPCA", Title: title, Z: z}, note, nil
}
