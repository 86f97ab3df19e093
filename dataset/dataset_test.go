package dataset

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// four points in two domains, two classes.
func small(t *testing.T) *Dataset {
	t.Helper()
	x := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	ds, err := New(x, []string{"a", "a", "b", "b"})
	require.NoError(t, err)
	return ds
}

func TestNewNumbersInOrderOfAppearance(t *testing.T) {
	x := mat.NewDense(5, 1, []float64{1, 2, 3, 4, 5})
	ds, err := New(x, []string{"p2", "p1", "p2", "p1", "p2"})
	require.NoError(t, err)
	require.Equal(t, []string{"p2", "p1"}, ds.DomainNames)
	require.Equal(t, []int{0, 1, 0, 1, 0}, ds.Domain)
	require.Equal(t, []int{3, 2}, ds.DomainSizes())
	require.NoError(t, ds.SetLabels([]string{"T", "B", "B", "T", "NK"}))
	require.Equal(t, []string{"T", "B", "NK"}, ds.ClassNames)
	require.Equal(t, []int{2, 2, 1}, ds.ClassSizes())
	require.Equal(t, 5, ds.N())
	require.Equal(t, 1, ds.D())
}

// TestValidationErrors checks that every mistake a user can make with a data
// set is an error (not a panic) whose message names the problem.
func TestValidationErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		run  func(t *testing.T) error
		want string
	}{
		{"nil points", func(t *testing.T) error { _, err := New(nil, nil); return err }, "no points"},
		{"empty dataset", func(t *testing.T) error { return (&Dataset{}).Validate() }, "no points"},
		{"domain length", func(t *testing.T) error {
			_, err := New(mat.NewDense(3, 1, nil), []string{"a", "a"})
			return err
		}, "3 points but 2 domain entries"},
		{"one-point domain", func(t *testing.T) error {
			_, err := New(mat.NewDense(3, 1, []float64{1, 2, 3}), []string{"a", "a", "b"})
			return err
		}, `domain "b" has 1 point(s); every domain needs at least 2`},
		{"NaN input", func(t *testing.T) error {
			_, err := New(mat.NewDense(2, 3, []float64{1, 2, 3, 4, nan, 6}), []string{"a", "a"})
			return err
		}, "input row 1, column 1 (0-based): value NaN is not finite"},
		{"Inf input", func(t *testing.T) error {
			_, err := New(mat.NewDense(2, 2, []float64{inf, 2, 3, 4}), []string{"a", "a"})
			return err
		}, "input row 0, column 0 (0-based): value +Inf is not finite"},
		{"label length", func(t *testing.T) error { return small(t).SetLabels([]string{"x"}) }, "4 points but 1 labels"},
		{"target rows", func(t *testing.T) error { return small(t).SetTargets(mat.NewDense(3, 1, nil), nil) }, "4 points but 3 target rows"},
		{"target names", func(t *testing.T) error {
			return small(t).SetTargets(mat.NewDense(4, 2, nil), []string{"y"})
		}, "2 target columns but 1 target names"},
		{"NaN target", func(t *testing.T) error {
			return small(t).SetTargets(mat.NewDense(4, 1, []float64{0, 1, nan, 3}), nil)
		}, "target row 2, column 0 (0-based): value NaN is not finite"},
		{"empty targets", func(t *testing.T) error { return small(t).SetTargets(nil, nil) }, "empty targets"},
		{"feature names", func(t *testing.T) error {
			ds := small(t)
			ds.Features = []string{"CD3"}
			return ds.Validate()
		}, "2 columns but 1 feature names"},
		{"domain index", func(t *testing.T) error {
			ds := small(t)
			ds.Domain[2] = 5
			return ds.Validate()
		}, "row 2: domain index 5 out of range [0, 2)"},
		{"class index", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "y"}))
			ds.Label[3] = -2
			return ds.Validate()
		}, "row 3: class index -2 out of range [0, 2)"},
		{"class index past the names", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "y"}))
			ds.Label[1] = 2
			return ds.Validate()
		}, "row 1: class index 2 out of range [0, 2) (or NoLabel, -1, for a point without a label)"},
		{"one class among the labelled points", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "x"}))
			ds.Label[1] = NoLabel
			return ds.RequireSupervision()
		}, "one class only (1 class(es) present)"},
		{"labels and targets", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "y"}))
			ds.Target = mat.NewDense(4, 1, nil)
			return ds.Validate()
		}, "both class labels and real targets are set"},
		{"one domain", func(t *testing.T) error {
			ds, err := New(mat.NewDense(2, 1, []float64{1, 2}), []string{"a", "a"})
			require.NoError(t, err)
			return ds.RequireDomains(2)
		}, "1 domain(s); this method needs at least 2"},
		{"no supervision", func(t *testing.T) error { return small(t).RequireSupervision() }, "needs class labels or real targets"},
		{"one class", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "x", "x", "x"}))
			return ds.RequireSupervision()
		}, "one class only (1 class(es) present)"},
		{"one class present after subset", func(t *testing.T) error {
			ds := small(t)
			require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "x"}))
			return ds.Subset([]int{0, 2, 3}).RequireSupervision()
		}, "one class only"},
		{"collect empty source", func(t *testing.T) error {
			ds := small(t).Subset(nil)
			_, err := Collect(context.Background(), ds.Source())
			return err
		}, "no points"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(t)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.Contains(t, err.Error(), "dataset: ")
		})
	}
}

func TestSupervisionAccepted(t *testing.T) {
	ds := small(t)
	require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "y"}))
	require.NoError(t, ds.RequireSupervision())
	require.NoError(t, ds.RequireDomains(2))
	ds = small(t)
	require.NoError(t, ds.SetTargets(mat.NewDense(4, 1, []float64{1, 2, 3, 4}), []string{"y"}))
	require.Nil(t, ds.Label)
	require.NoError(t, ds.RequireSupervision())
}

func TestSubsetCompact(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 3, 4, 5})
	ds, err := New(x, []string{"a", "b", "c", "a", "b", "c"})
	require.NoError(t, err)
	require.NoError(t, ds.SetLabels([]string{"u", "v", "w", "u", "v", "w"}))
	sub := ds.Subset([]int{5, 2, 0, 3})
	require.Equal(t, []float64{5, 2, 0, 3}, sub.X.RawMatrix().Data)
	sub.Compact()
	require.Equal(t, []string{"a", "c"}, sub.DomainNames)
	require.Equal(t, []int{1, 1, 0, 0}, sub.Domain)
	require.Equal(t, []string{"u", "w"}, sub.ClassNames)
	require.Equal(t, []int{1, 1, 0, 0}, sub.Label)
	require.NoError(t, sub.Validate())
}

// TestPartialLabels checks a data set whose points are labelled in part
// (NoLabel for the others): it validates, counts classes over the labelled
// points only, keeps NoLabel through Subset, Compact and a stream, and
// lists the labelled rows.
func TestPartialLabels(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 3, 4, 5})
	ds, err := New(x, []string{"a", "a", "b", "b", "c", "c"})
	require.NoError(t, err)
	ds.Label, ds.ClassNames = []int{0, NoLabel, 1, 1, NoLabel, NoLabel}, []string{"u", "v", "w"}
	require.NoError(t, ds.Validate())
	require.NoError(t, ds.RequireSupervision())
	require.Equal(t, []int{1, 2, 0}, ds.ClassSizes())
	require.Equal(t, []int{2, 2, 2}, ds.DomainSizes())
	require.Equal(t, []int{0, 2, 3}, ds.LabelledRows())

	sub := ds.Subset([]int{5, 4, 3, 1})
	require.Equal(t, []int{NoLabel, NoLabel, 1, NoLabel}, sub.Label)
	sub.Compact()
	require.Equal(t, []string{"v"}, sub.ClassNames)
	require.Equal(t, []int{NoLabel, NoLabel, 0, NoLabel}, sub.Label)
	require.Equal(t, []string{"a", "b", "c"}, sub.DomainNames)
	require.Equal(t, []int{2, 2, 1, 0}, sub.Domain)
	require.Equal(t, []int{2}, sub.LabelledRows())

	got, err := Collect(context.Background(), ds.Source())
	require.NoError(t, err)
	require.Equal(t, ds.Label, got.Label)
	require.Equal(t, ds.ClassNames, got.ClassNames)
	require.True(t, ds.Source().Schema().Labelled)

	// No labelled point at all: no class, and not supervised.
	none := ds.Subset([]int{4, 5})
	none.Compact()
	require.NoError(t, none.Validate())
	require.Empty(t, none.ClassNames)
	require.Equal(t, []int{}, none.LabelledRows())
	require.ErrorContains(t, none.RequireSupervision(), "one class only (0 class(es) present)")
}

// TestSourceRoundTrip streams a data set in blocks of every size and
// collects it back.
func TestSourceRoundTrip(t *testing.T) {
	x := mat.NewDense(7, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	ds, err := New(x, []string{"a", "a", "b", "b", "b", "c", "c"})
	require.NoError(t, err)
	require.NoError(t, ds.SetLabels([]string{"x", "y", "x", "y", "x", "y", "x"}))
	ds.Features = []string{"f1", "f2"}
	got, err := Collect(context.Background(), ds.Source())
	require.NoError(t, err)
	require.Equal(t, ds.X.RawMatrix().Data, got.X.RawMatrix().Data)
	require.Equal(t, ds.Domain, got.Domain)
	require.Equal(t, ds.DomainNames, got.DomainNames)
	require.Equal(t, ds.Label, got.Label)
	require.Equal(t, ds.ClassNames, got.ClassNames)
	require.Equal(t, ds.Features, got.Features)
	require.Equal(t, 7, ds.Source().(Sizer).Len())
}
