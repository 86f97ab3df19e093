package ingest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/fcs"
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

// TestFolderFCS: the FCS files of a folder (by extension or by content) in
// natural order, without hidden files, other files or subfolders; none for
// a folder without any.
func TestFolderFCS(t *testing.T) {
	dir := t.TempDir()
	set := &fcs.DataSet{Params: []fcs.Param{{Name: "A"}}, Events: mat.NewDense(1, 1, []float64{1})}
	for _, name := range []string{"s10.fcs", "s2.fcs", ".s3.fcs", "noext"} {
		require.NoError(t, fcs.WriteFile(filepath.Join(dir, name), set))
	}
	writeFile(t, dir, "notes.txt", "not an FCS file\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.fcs"), 0o755))
	got, err := FolderFCS(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "noext"), filepath.Join(dir, "s2.fcs"), filepath.Join(dir, "s10.fcs")}, got)
	got, err = FolderFCS(filepath.Join(dir, "sub.fcs"))
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = FolderFCS(filepath.Join(dir, "missing"))
	require.Error(t, err)
}
