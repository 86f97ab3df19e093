package mixing

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// TestNilAndZero calls every exported function and method of the package
// with nil matrices, nil and short label slices, zero values, NaN and
// negative counts: each returns an error or its documented result, and
// none panics. The list of calls is checked against the package's
// exported names.
func TestNilAndZero(t *testing.T) {
	ctx := context.Background()
	var (
		nilCtx context.Context
		nx     *mat.Dense
		nnb    *Neighbors
		nr     *Report
	)
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 5, 5, 6, 5, 5, 6})
	g := []int{0, 0, 1, 1, 0, 1}
	nb, err := NearestNeighbors(ctx, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Every error names the package.
	wantErr := func(err error) error { return apitest.WantErrPrefix(err, "mixing: ") }
	calls := []apitest.Case{
		{Name: "DistributionalVariance/nil", Call: func() error { _, err := DistributionalVariance(ctx, nx, g, 1); return wantErr(err) }},
		{Name: "DistributionalVariance/zero", Call: func() error { _, err := DistributionalVariance(ctx, &mat.Dense{}, nil, 1); return wantErr(err) }},
		{Name: "DistributionalVariance/nil groups", Call: func() error { _, err := DistributionalVariance(ctx, x, nil, 1); return wantErr(err) }},
		{Name: "DistributionalVariance/NaN sigma", Call: func() error { _, err := DistributionalVariance(ctx, x, g, math.NaN()); return wantErr(err) }},
		{Name: "DistributionalVariance/nil context", Call: func() error { _, err := DistributionalVariance(nilCtx, x, g, 1); return wantErr(err) }},
		{Name: "LISI/nil", Call: func() error { _, err := LISI(nnb, g, 2, false); return wantErr(err) }},
		{Name: "LISI/zero", Call: func() error { _, err := LISI(&Neighbors{}, g, 2, false); return wantErr(err) }},
		{Name: "LISI/nil labels", Call: func() error { _, err := LISI(nb, nil, 2, false); return wantErr(err) }},
		{Name: "LISI/negative perplexity", Call: func() error { _, err := LISI(nb, g, -1, false); return wantErr(err) }},
		{Name: "LISI/negative label", Call: func() error { _, err := LISI(nb, []int{0, -1, 0, 0, 0, 0}, 2, false); return wantErr(err) }},
		{Name: "LinearDistributionalVariance/nil", Call: func() error { _, err := LinearDistributionalVariance(nx, g); return wantErr(err) }},
		{Name: "LinearDistributionalVariance/zero", Call: func() error { _, err := LinearDistributionalVariance(&mat.Dense{}, nil); return wantErr(err) }},
		{Name: "LinearDistributionalVariance/short groups", Call: func() error { _, err := LinearDistributionalVariance(x, g[:3]); return wantErr(err) }},
		{Name: "Measure/nil", Call: func() error { _, err := Measure(ctx, nx, g, nil, Options{}); return wantErr(err) }},
		{Name: "Measure/zero", Call: func() error { _, err := Measure(ctx, &mat.Dense{}, nil, nil, Options{}); return wantErr(err) }},
		{Name: "Measure/nil domains", Call: func() error { _, err := Measure(ctx, x, nil, nil, Options{}); return wantErr(err) }},
		{Name: "Measure/nil context", Call: func() error { _, err := Measure(nilCtx, x, g, nil, Options{}); return wantErr(err) }},
		{Name: "NearestNeighbors/nil", Call: func() error { _, err := NearestNeighbors(ctx, nx, 2); return wantErr(err) }},
		{Name: "NearestNeighbors/zero", Call: func() error { _, err := NearestNeighbors(ctx, &mat.Dense{}, 2); return wantErr(err) }},
		{Name: "NearestNeighbors/negative", Call: func() error { _, err := NearestNeighbors(ctx, x, -1); return wantErr(err) }},
		{Name: "NearestNeighbors/nil context", Call: func() error { _, err := NearestNeighbors(nilCtx, x, 2); return wantErr(err) }},
		{Name: "Neighbors.Len/nil", Call: func() error { return apitest.WantZero(nnb.Len() == 0, nnb.Len()) }},
		{Name: "Neighbors.Len/zero", Call: func() error { return apitest.WantZero((&Neighbors{}).Len() == 0, nil) }},
		{Name: "Report.MarshalJSON/zero", Call: func() error { _, err := (Report{}).MarshalJSON(); return err }},
		{Name: "Report.UnmarshalJSON/nil", Call: func() error { return wantErr(nr.UnmarshalJSON([]byte("{}"))) }},
		{Name: "Report.UnmarshalJSON/empty", Call: func() error { var r Report; return apitest.WantZero(r.UnmarshalJSON(nil) != nil, nil) }},
		{Name: "Silhouette/nil", Call: func() error { _, err := Silhouette(ctx, nx, g); return wantErr(err) }},
		{Name: "Silhouette/zero", Call: func() error { _, err := Silhouette(ctx, &mat.Dense{}, nil); return wantErr(err) }},
		{Name: "Silhouette/nil groups", Call: func() error { _, err := Silhouette(ctx, x, nil); return wantErr(err) }},
		{Name: "Silhouette/nil context", Call: func() error { _, err := Silhouette(nilCtx, x, g); return wantErr(err) }},
		{Name: "StandardizedVariance/nil", Call: func() error { _, err := StandardizedVariance(nx, g, 2, 1); return wantErr(err) }},
		{Name: "StandardizedVariance/zero", Call: func() error { _, err := StandardizedVariance(&mat.Dense{}, nil, 0, 0); return wantErr(err) }},
		{Name: "StandardizedVariance/negative", Call: func() error { _, err := StandardizedVariance(x, g, -1, -1); return wantErr(err) }},
		{Name: "StandardizedVariance/group out of range", Call: func() error { _, err := StandardizedVariance(x, g, 1, 1); return wantErr(err) }},
	}
	apitest.Check(t, ".", calls, 10)
}
