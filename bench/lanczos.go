// Experiment lanczos: the thick-restart Lanczos solver (package lanczos) on
// the suite of docs/LANCZOS.md, "The suite and the numbers": the k = 10
// largest eigenvalues of each problem with default settings, at each
// tolerance, with the matrix-vector products beside the counts of ARPACK
// and Spectra that section lists, the largest relative eigenvalue error
// against the exact spectrum and whether the returned values are the exact
// multiset.
//
//	go run ./bench lanczos [-json] [-out DIR] [-tol 1e-8,eps] [-big=true]
//	    [-only NAME] [-seed 1]
//	go run ./bench lanczos -dense [-sizes 1000,2000]
//
// With -dense it times Lanczos against mat.EigenSym (all pairs, with
// vectors) on random dense symmetric matrices instead.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/lanczos"
	"github.com/dicalab/dica/lanczos/problems"
)

func init() {
	register("lanczos", "thick-restart Lanczos on the docs/LANCZOS.md suite vs ARPACK/Spectra matvec counts; -dense: vs mat.EigenSym", runLanczos)
}

// lanczosRow is one line of the lanczos experiment's output.
type lanczosRow struct {
	Problem          string  `json:"problem"`
	N                int     `json:"n"`
	K                int     `json:"k"`
	Tol              float64 `json:"tol"`
	Matvecs          int     `json:"matvecs"`
	MaxRelEigError   float64 `json:"max_rel_eig_error"`
	MultiplicitiesOK bool    `json:"multiplicities_ok"`
	Seconds          float64 `json:"seconds"`
	Restarts         int     `json:"restarts"`
	Status           string  `json:"status"`
	ArpackEps        int     `json:"arpack_eps,omitempty"`
	Arpack1e8        int     `json:"arpack_1e8,omitempty"`
	SpectraTol1e10   int     `json:"spectra_1e10,omitempty"`
	CheapestCorrect  int     `json:"arpack_cheapest_correct,omitempty"`
}

// denseRow is one line of the -dense comparison.
type denseRow struct {
	Problem         string  `json:"problem"`
	N               int     `json:"n"`
	K               int     `json:"k"`
	Tol             float64 `json:"tol"`
	Matvecs         int     `json:"matvecs"`
	MaxRelEigError  float64 `json:"max_rel_eig_error"`
	Seconds         float64 `json:"seconds"`
	EigenSymSeconds float64 `json:"eigensym_seconds"`
}

const lanczosUsage = `usage: go run ./bench lanczos [flags]

Runs the thick-restart Lanczos solver (package lanczos) on the suite of
docs/LANCZOS.md, k = 10 largest with default settings, and prints its matvec
counts beside ARPACK's and Spectra's from docs/LANCZOS.md ("The suite and
the numbers"), the largest relative
eigenvalue error against the exact spectrum and whether every returned
multiplicity is right. With -dense it instead times Lanczos (k = 10) against
mat.EigenSym with vectors on random dense symmetric matrices.`

// lanczosEntry is one problem of the suite.
type lanczosEntry struct {
	p   *problems.Problem
	gen bool // Mikota: generalized (Cholesky mode)
}

// lanczosSuite returns the problems of docs/LANCZOS.md, "The suite and the
// numbers", in the order of its table; big adds the 2-D Laplacian of
// 300 x 300.
func lanczosSuite(big bool) []lanczosEntry {
	gram, _ := problems.GramLowRank(100000, 50, 1)
	list := []lanczosEntry{
		{p: problems.Geometric(10000, 0.9)},
		{p: problems.Clustered(10000, 1)},
		{p: problems.TopMultiple(10000)},
		{p: problems.GOE(2000, 1)},
		{p: gram},
		{p: problems.Mikota(1000), gen: true},
		{p: problems.Linear(10000)},
		{p: problems.Laplacian2D(100)},
		{p: problems.Laplacian1D(1000)},
	}
	if big {
		list = append(list, lanczosEntry{p: problems.Laplacian2D(300)})
	}
	return list
}

// parseTols parses -tol: positive numbers, or eps for the machine epsilon.
func parseTols(tols string) ([]float64, error) {
	var tolList []float64
	for _, s := range strings.Split(tols, ",") {
		s = strings.TrimSpace(s)
		if s == "eps" {
			tolList = append(tolList, 0x1p-52)
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("lanczos: bad -tol entry %q", s)
		}
		tolList = append(tolList, v)
	}
	return tolList, nil
}

func runLanczos(args []string) error {
	fs, o := newFlags("lanczos", lanczosUsage)
	asJSON := &o.json
	tols := fs.String("tol", "1e-8,eps", "comma-separated tolerances (eps = machine epsilon)")
	big := fs.Bool("big", true, "include the 2-D Laplacian 300 x 300 (n = 90000)")
	only := fs.String("only", "", "run only problems whose name contains this string")
	seed := fs.Uint64("seed", 1, "start-vector seed")
	dense := fs.Bool("dense", false, "time Lanczos k = 10 against mat.EigenSym (with vectors) on random dense symmetric matrices instead")
	sizes := fs.String("sizes", "1000,2000", "matrix orders for -dense (3000 takes ~200 s in EigenSym)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dense {
		return runLanczosDense(o, *sizes, *seed, *asJSON)
	}
	tolList, err := parseTols(*tols)
	if err != nil {
		return err
	}
	var tw *tabwriter.Writer
	if !*asJSON {
		tw = tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "problem\tn\ttol\tmatvecs\tARPACK eps\tARPACK 1e-8\tSpectra 1e-10\tmax rel err\tmult ok\tseconds\t")
	}
	for _, e := range lanczosSuite(*big) {
		if *only != "" && !strings.Contains(e.p.Name, *only) {
			continue
		}
		exact := e.p.Top(lanczosK)
		for _, tol := range tolList {
			row, err := lanczosRun(e, exact, tol, *seed)
			if err != nil {
				return err
			}
			if err := o.writeJSONL("lanczos", row); err != nil {
				return err
			}
			if *asJSON {
				b, _ := json.Marshal(row)
				fmt.Println(string(b))
				continue
			}
			p := e.p
			a8 := anchor(p.Arpack1e8)
			if p.CheapestCorrect != 0 {
				a8 = fmt.Sprintf("WRONG; %d ok", p.CheapestCorrect)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%.1e\t%v\t%.2f\t\n", p.Name, p.N, tolName(tol), row.Matvecs,
				anchor(p.ArpackEps), a8, anchor(p.Spectra), row.MaxRelEigError, row.MultiplicitiesOK, row.Seconds)
		}
	}
	if !*asJSON {
		tw.Flush()
		fmt.Println("\nk = 10 largest, default settings (guards max(2, k/2), ncv max(2(k+g)+1, 60), deflated check on, certified to miss a copy with probability <= 1e-2).")
		fmt.Println("ARPACK/Spectra: docs/LANCZOS.md, \"The suite and the numbers\" (ncv = 21); 'top eigenvalue x4' here is diag(1..n) with its top value repeated 4 times.")
		fmt.Println("mult ok: the returned values are the exact top-k multiset: every value (returned or exact) has as many")
		fmt.Println("returned as exact values within 10 max(tol, 1e-12) ||A|| of it, so a missed copy is reported even when the rest are accurate.")
	}
	return nil
}

// lanczosK is the number of eigenpairs the suite asks for.
const lanczosK = 10

// lanczosRun solves problem e for its lanczosK largest eigenvalues at
// tolerance tol with default settings otherwise, and compares them with
// exact, the problem's lanczosK largest.
func lanczosRun(e lanczosEntry, exact []float64, tol float64, seed uint64) (lanczosRow, error) {
	const k = lanczosK
	p := e.p
	s := lanczos.Settings{K: k, Tol: tol, Seed: seed}
	t0 := time.Now()
	var res *lanczos.Result
	var err error
	a := lanczos.Func(p.N, p.Apply)
	switch {
	case e.gen:
		b := mat.NewSymDense(p.N, nil)
		for i, x := range p.BDiag {
			b.SetSym(i, i, x)
		}
		res, err = lanczos.GenSymChol(context.Background(), a, b, s)
	case p.Sym != nil:
		res, err = lanczos.Sym(context.Background(), lanczos.Dense(p.Sym), s)
	default:
		res, err = lanczos.Sym(context.Background(), a, s)
	}
	if err != nil {
		return lanczosRow{}, fmt.Errorf("%s: %v", p.Name, err)
	}
	secs := time.Since(t0).Seconds()
	maxErr := 1.0 // some values missing
	if len(res.Values) == k {
		maxErr = 0
		for i, v := range res.Values {
			maxErr = math.Max(maxErr, math.Abs(v-exact[i])/math.Max(math.Abs(exact[i]), 1e-300))
		}
	}
	return lanczosRow{
		Problem: p.Name, N: p.N, K: k, Tol: tol, Matvecs: res.Matvecs,
		MaxRelEigError: maxErr, MultiplicitiesOK: multisetOK(res.Values, exact, multTol(tol, p.NormA)),
		Seconds: secs, Restarts: res.Restarts, Status: res.Status.String(),
		ArpackEps: p.ArpackEps, Arpack1e8: p.Arpack1e8, SpectraTol1e10: p.Spectra,
		CheapestCorrect: p.CheapestCorrect,
	}, nil
}

// multTol is the distance within which a returned eigenvalue counts as a copy
// of an exact one at tolerance tol: 10 times the residual level
// max(tol, 1e-12) ||A|| (a Ritz value is within its residual norm of an
// eigenvalue), far below the spacing of the distinct top values of every
// problem in the suite.
func multTol(tol, normA float64) float64 {
	return 10 * math.Max(tol, 1e-12) * normA
}

// multisetOK reports whether got is the multiset exact up to delta: the
// same length, and for every value c of either, as many values of got as of
// exact lie within delta of c. A missed copy of a repeated eigenvalue fails
// the count at that value even when every returned value is accurate.
func multisetOK(got, exact []float64, delta float64) bool {
	if len(got) != len(exact) {
		return false
	}
	count := func(vals []float64, c float64) int {
		m := 0
		for _, v := range vals {
			if math.Abs(v-c) <= delta {
				m++
			}
		}
		return m
	}
	for _, set := range [][]float64{got, exact} {
		for _, c := range set {
			if count(got, c) != count(exact, c) {
				return false
			}
		}
	}
	return true
}

func anchor(x int) string {
	if x == 0 {
		return "-"
	}
	return strconv.Itoa(x)
}

func tolName(t float64) string {
	if t == 0x1p-52 {
		return "eps"
	}
	return strconv.FormatFloat(t, 'g', -1, 64)
}

func runLanczosDense(o *options, sizes string, seed uint64, asJSON bool) error {
	const k = 10
	var tw *tabwriter.Writer
	if !asJSON {
		tw = tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "m\tLanczos s\tmatvecs\tEigenSym s\tspeedup\tmax rel err\t")
	}
	if tw != nil {
		defer tw.Flush()
	}
	for _, f := range strings.Split(sizes, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || m < k+1 {
			return fmt.Errorf("lanczos: bad -sizes entry %q", f)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(m)))
		a := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				a.SetSym(i, j, rng.NormFloat64())
			}
		}
		t0 := time.Now()
		res, err := lanczos.Sym(context.Background(), lanczos.Dense(a), lanczos.Settings{K: k, Seed: seed})
		if err != nil {
			return err
		}
		tl := time.Since(t0).Seconds()
		t0 = time.Now()
		var es mat.EigenSym
		if !es.Factorize(a, true) {
			return fmt.Errorf("lanczos: EigenSym failed at m = %d", m)
		}
		te := time.Since(t0).Seconds()
		vals := es.Values(nil)
		sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
		var maxErr float64
		for i, v := range res.Values {
			maxErr = math.Max(maxErr, math.Abs(v-vals[i])/math.Abs(vals[i]))
		}
		row := denseRow{Problem: "random dense symmetric", N: m, K: k, Tol: res.Tol, Matvecs: res.Matvecs, MaxRelEigError: maxErr, Seconds: tl, EigenSymSeconds: te}
		if err := o.writeJSONL("lanczos_dense", row); err != nil {
			return err
		}
		if asJSON {
			b, _ := json.Marshal(row)
			fmt.Println(string(b))
			continue
		}
		fmt.Fprintf(tw, "%d\t%.2f\t%d\t%.2f\t%.0fx\t%.1e\t\n", m, tl, res.Matvecs, te, te/tl, maxErr)
	}
	return nil
}
