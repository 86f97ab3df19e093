package mixing

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/internal/testsupport/apitest"
)

// nilCall is one call of an exported function or method with nil, zero or
// negative arguments. It returns an error describing a wrong result (nil
// when the result is an error, or the documented result).
type nilCall struct {
	name string // "Func" or "Type.Method", then "/variant"
	call func() error
}

func wantErr(err error) error {
	if err == nil {
		return fmt.Errorf("no error")
	}
	if !strings.HasPrefix(err.Error(), "mixing: ") {
		return fmt.Errorf("error %q does not name the package", err)
	}
	return nil
}

func wantZero(ok bool, got any) error {
	if !ok {
		return fmt.Errorf("got %v, want the documented result", got)
	}
	return nil
}

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
	calls := []nilCall{
		{"DistributionalVariance/nil", func() error { _, err := DistributionalVariance(ctx, nx, g, 1); return wantErr(err) }},
		{"DistributionalVariance/zero", func() error { _, err := DistributionalVariance(ctx, &mat.Dense{}, nil, 1); return wantErr(err) }},
		{"DistributionalVariance/nil groups", func() error { _, err := DistributionalVariance(ctx, x, nil, 1); return wantErr(err) }},
		{"DistributionalVariance/NaN sigma", func() error { _, err := DistributionalVariance(ctx, x, g, math.NaN()); return wantErr(err) }},
		{"DistributionalVariance/nil context", func() error { _, err := DistributionalVariance(nilCtx, x, g, 1); return wantErr(err) }},
		{"LISI/nil", func() error { _, err := LISI(nnb, g, 2, false); return wantErr(err) }},
		{"LISI/zero", func() error { _, err := LISI(&Neighbors{}, g, 2, false); return wantErr(err) }},
		{"LISI/nil labels", func() error { _, err := LISI(nb, nil, 2, false); return wantErr(err) }},
		{"LISI/negative perplexity", func() error { _, err := LISI(nb, g, -1, false); return wantErr(err) }},
		{"LISI/negative label", func() error { _, err := LISI(nb, []int{0, -1, 0, 0, 0, 0}, 2, false); return wantErr(err) }},
		{"LinearDistributionalVariance/nil", func() error { _, err := LinearDistributionalVariance(nx, g); return wantErr(err) }},
		{"LinearDistributionalVariance/zero", func() error { _, err := LinearDistributionalVariance(&mat.Dense{}, nil); return wantErr(err) }},
		{"LinearDistributionalVariance/short groups", func() error { _, err := LinearDistributionalVariance(x, g[:3]); return wantErr(err) }},
		{"Measure/nil", func() error { _, err := Measure(ctx, nx, g, nil, Options{}); return wantErr(err) }},
		{"Measure/zero", func() error { _, err := Measure(ctx, &mat.Dense{}, nil, nil, Options{}); return wantErr(err) }},
		{"Measure/nil domains", func() error { _, err := Measure(ctx, x, nil, nil, Options{}); return wantErr(err) }},
		{"Measure/nil context", func() error { _, err := Measure(nilCtx, x, g, nil, Options{}); return wantErr(err) }},
		{"NearestNeighbors/nil", func() error { _, err := NearestNeighbors(ctx, nx, 2); return wantErr(err) }},
		{"NearestNeighbors/zero", func() error { _, err := NearestNeighbors(ctx, &mat.Dense{}, 2); return wantErr(err) }},
		{"NearestNeighbors/negative", func() error { _, err := NearestNeighbors(ctx, x, -1); return wantErr(err) }},
		{"NearestNeighbors/nil context", func() error { _, err := NearestNeighbors(nilCtx, x, 2); return wantErr(err) }},
		{"Neighbors.Len/nil", func() error { return wantZero(nnb.Len() == 0, nnb.Len()) }},
		{"Neighbors.Len/zero", func() error { return wantZero((&Neighbors{}).Len() == 0, nil) }},
		{"Report.MarshalJSON/zero", func() error { _, err := (Report{}).MarshalJSON(); return err }},
		{"Report.UnmarshalJSON/nil", func() error { return wantErr(nr.UnmarshalJSON([]byte("{}"))) }},
		{"Report.UnmarshalJSON/empty", func() error { var r Report; return wantZero(r.UnmarshalJSON(nil) != nil, nil) }},
		{"Silhouette/nil", func() error { _, err := Silhouette(ctx, nx, g); return wantErr(err) }},
		{"Silhouette/zero", func() error { _, err := Silhouette(ctx, &mat.Dense{}, nil); return wantErr(err) }},
		{"Silhouette/nil groups", func() error { _, err := Silhouette(ctx, x, nil); return wantErr(err) }},
		{"Silhouette/nil context", func() error { _, err := Silhouette(nilCtx, x, g); return wantErr(err) }},
		{"StandardizedVariance/nil", func() error { _, err := StandardizedVariance(nx, g, 2, 1); return wantErr(err) }},
		{"StandardizedVariance/zero", func() error { _, err := StandardizedVariance(&mat.Dense{}, nil, 0, 0); return wantErr(err) }},
		{"StandardizedVariance/negative", func() error { _, err := StandardizedVariance(x, g, -1, -1); return wantErr(err) }},
		{"StandardizedVariance/group out of range", func() error { _, err := StandardizedVariance(x, g, 1, 1); return wantErr(err) }},
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.name)
		if err := apitest.Call(c.call); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	want, err := apitest.ExportedFuncs(".")
	if err != nil {
		t.Fatal(err)
	}
	if missing := apitest.Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
	if len(want) < 10 {
		t.Errorf("only %d exported names found", len(want))
	}
}
