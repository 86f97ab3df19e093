// Experiment toy: the DICA paper's Figure 2 (Muandet, Balduzzi & Schölkopf,
// ICML 2013, Section 5.1) on its synthetic regression data.
//
//	go run ./bench toy [-json] [-out DIR] [-seed N] [-size N] [-solver auto|exact|nystrom] [-m 500]
//
// Ten training domains of Gaussian points with Wishart-drawn covariances and
// a shared nonlinear target (package toy), and 3 unseen test domains from the
// same generator. KPCA, UDICA, COIR and DICA are fitted on the training
// domains; the training and test points are projected onto the first two
// components. With -out, toy_projections.png shows the four projections
// (one panel per method, training domains as dots colored by domain, test
// domains as black glyphs, one shape per domain). The table gives, per
// method, the distributional variance of the training and of the test
// domains in the projection (a Gaussian kernel on the first two components,
// standardized, median-heuristic bandwidth: the measure of `dica demo`),
// the top eigenvalues and the fit time. The paper's
// claim is that UDICA and DICA make the unseen domains more alike than KPCA
// and COIR do.
//
// The solver is the exact n x n path (as in the paper) when the training set
// has at most -exact-max points (auto, the default), else Nystrom with -m
// landmarks; the output says which. At the default size (2,053 training
// points) auto is exact: each fit takes under a second on this 2-core
// machine (Lanczos on matrix-free products).
package main

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/mixing"
	"github.com/dicalab/dica/toy"
)

func init() {
	register("toy", "the paper's Figure 2: projections and distributional variance of unseen domains", runToy)
}

const toyUsage = `usage: go run ./bench toy [flags]

The DICA paper's Figure 2 on its toy regression data: KPCA, UDICA, COIR and
DICA projections of 10 training and 3 unseen test domains, and the
distributional variance of the domains in each projection.`

// toyExactMax is the default -exact-max: the exact fits hold n x n kernel
// matrices (5,000 points: 200 MB each).
const toyExactMax = 5000

// toyConfig configures the toy experiment.
type toyConfig struct {
	seed     uint64
	size     float64 // mean points per domain
	domains  int     // training domains
	test     int     // unseen test domains
	solver   string  // auto, exact or nystrom
	rank     int     // Nystrom m
	exactMax int     // largest training set for the exact path under auto
}

func runToy(args []string) error {
	fs, o := newFlags("toy", toyUsage)
	cfg := toyConfig{domains: 10, test: 3}
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of the toy data")
	fs.Float64Var(&cfg.size, "size", 200, "mean number of points per domain")
	fs.StringVar(&cfg.solver, "solver", "auto", "auto, exact or nystrom")
	fs.IntVar(&cfg.rank, "m", 500, "Nystrom landmarks when the solver is nystrom")
	fs.IntVar(&cfg.exactMax, "exact-max", toyExactMax, "auto: largest training set fitted with the exact solver")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep := newReporter(os.Stdout, "toy", o)
	if err := toyRun(context.Background(), cfg, rep, o.out); err != nil {
		return err
	}
	return rep.flush()
}

// toyRun runs the toy experiment.
func toyRun(ctx context.Context, cfg toyConfig, rep *reporter, out string) error {
	topts := toy.Options{Seed: cfg.seed, MeanSize: cfg.size, Domains: cfg.domains}
	if err := topts.Validate(); err != nil {
		return err
	}
	train, test := toy.RegressionSplit(topts, cfg.test)
	solver := dica.Exact
	switch cfg.solver {
	case "exact":
	case "nystrom":
		solver = dica.Nystrom
	case "auto":
		if train.N() > cfg.exactMax {
			solver = dica.Nystrom
		}
	default:
		return fmt.Errorf("-solver: %q is not auto, exact or nystrom", cfg.solver)
	}
	solverName := solver.String()
	if solver == dica.Nystrom {
		solverName = fmt.Sprintf("nystrom m=%d", cfg.rank)
	}
	rep.note("toy data (seed %d): %d training points in %d domains, %d test points in %d unseen domains; solver %s",
		cfg.seed, train.N(), train.NumDomains(), test.N(), test.NumDomains(), solverName)

	methods := []dica.Method{dica.KPCA, dica.UDICA, dica.COIR, dica.DICA}
	var panels []*plot.Plot
	for _, method := range methods {
		c := dica.Config{Method: method, Solver: solver, Components: 3, Lambda: 1e-3, Seed: cfg.seed, Rank: cfg.rank}
		t0 := time.Now()
		m, err := dica.Fit(ctx, train.Source(), c)
		if err != nil {
			return fmt.Errorf("%v: %w", method, err)
		}
		secs := time.Since(t0).Seconds()
		dvTrain, ztr, err := projectedVariance(m, train)
		if err != nil {
			return fmt.Errorf("%v: %w", method, err)
		}
		dvTest, zte, err := projectedVariance(m, test)
		if err != nil {
			return fmt.Errorf("%v: %w", method, err)
		}
		if err := rep.add("distributional variance in the projection", obj{{"method", method.String()}, {"solver", solverName}, {"n_train", train.N()}, {"n_test", test.N()}},
			obj{{"dv_train", dvTrain}, {"dv_test", dvTest}, {"eigenvalues", head(m.Eigenvalues, 3)}, {"fit_s", secs}}); err != nil {
			return err
		}
		if out != "" {
			p, err := toyPanel(method.String(), train, ztr, test, zte)
			if err != nil {
				return err
			}
			panels = append(panels, p)
		}
	}
	if out == "" {
		return nil
	}
	path := filepath.Join(out, "toy_projections.png")
	if err := toyFigure(path, panels); err != nil {
		return err
	}
	rep.note("plot: %s", path)
	return nil
}

// projectedVariance returns the distributional variance of the domains of
// ds on the first 2 components of the model (mixing.StandardizedVariance),
// and the projection.
func projectedVariance(m *dica.Model, ds *dataset.Dataset) (float64, *mat.Dense, error) {
	z, err := m.Transform(ds.X, dica.TransformOptions{})
	if err != nil {
		return 0, nil, err
	}
	v, err := mixing.StandardizedVariance(z, ds.Domain, ds.NumDomains(), 2)
	return v, z, err
}

// domainColor returns a distinct color for domain i of n (hues around the
// color wheel).
func domainColor(i, n int) color.Color {
	h := float64(i) / float64(n) * 6
	x := 1 - math.Abs(math.Mod(h, 2)-1)
	var r, g, b float64
	switch int(h) {
	case 0:
		r, g = 1, x
	case 1:
		r, g = x, 1
	case 2:
		g, b = 1, x
	case 3:
		g, b = x, 1
	case 4:
		r, b = x, 1
	default:
		r, b = 1, x
	}
	v := 0.85
	return color.RGBA{uint8(255 * r * v), uint8(255 * g * v), uint8(255 * b * v), 255}
}

// toyPanel draws the first two components of the training points (small
// dots colored by domain) and of the test points (black, one glyph per
// domain).
func toyPanel(title string, train *dataset.Dataset, ztr *mat.Dense, test *dataset.Dataset, zte *mat.Dense) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "component 1"
	p.Y.Label.Text = "component 2"
	add := func(ds *dataset.Dataset, z *mat.Dense, testSet bool) error {
		_, k := z.Dims()
		for d := 0; d < ds.NumDomains(); d++ {
			var pts plotter.XYs
			for i, dom := range ds.Domain {
				if dom != d {
					continue
				}
				y := 0.0
				if k > 1 {
					y = z.At(i, 1)
				}
				pts = append(pts, plotter.XY{X: z.At(i, 0), Y: y})
			}
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			if testSet {
				shapes := []draw.GlyphDrawer{draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}
				s.Shape = shapes[d%len(shapes)]
				s.Color = color.Black
				s.Radius = vg.Points(2.2)
				p.Legend.Add("test "+ds.DomainNames[d], s)
			} else {
				s.Color = domainColor(d, train.NumDomains())
				s.Shape = draw.CircleGlyph{}
				s.Radius = vg.Points(1.1)
			}
			p.Add(s)
		}
		return nil
	}
	if err := add(train, ztr, false); err != nil {
		return nil, err
	}
	if err := add(test, zte, true); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	return p, nil
}

// toyFigure writes the panels as a 2 x 2 grid, atomically (writePNG).
func toyFigure(path string, panels []*plot.Plot) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writePNG(path, 8*vg.Inch, 7*vg.Inch, 2, 2, panels)
}
