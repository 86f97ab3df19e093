package ingest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRawCSV: the raw channels of CSV files are their numeric columns but
// the domain, label and target columns, in file order, whatever the input
// channels selected; a column with a word in its first rows is left out.
func TestRawCSV(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s1.csv", "a,note,b,pop,c\n1,x,2,T,3\n4,y,5,B,6\n")
	writeFile(t, dir, "s2.csv", "a,note,b,pop,c\n7,z,8,T,9\n")
	in, err := Open([]string{filepath.Join(dir, "s*.csv")}, Options{Channels: []string{"c"}, Label: "pop"})
	require.NoError(t, err)
	raw, err := in.Raw()
	require.NoError(t, err)
	sc := raw.Source.Schema()
	require.Equal(t, []string{"a", "b", "c"}, sc.Features)
	require.True(t, sc.Labelled)
	got := readRows(t, raw.Source)
	require.Equal(t, [][]float64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, got.x)
	require.Equal(t, []string{"T", "B", "T"}, got.labels)
	require.Equal(t, []int64{1, 2, 1}, got.events)
}
