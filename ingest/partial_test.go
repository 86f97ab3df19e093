package ingest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dataset"
)

// TestOpenCSVLabelPairs checks label files given as DATA=LABELS pairs for
// some of the data files: the rows of the others have no label
// (dataset.NoLabel, read back as ""), LabelsIgnore drops labelled rows
// only, and the data file is named by its base name or its path.
func TestOpenCSVLabelPairs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s1.csv", "1,2\n3,4\n")
	writeFile(t, dir, "s2.csv", "5,6\n7,8\n9,10\n")
	writeFile(t, dir, "s10.csv", "11,12\n13,14\n")
	l2 := writeFile(t, dir, "l2.csv", "b\n0\na\n")
	l10 := writeFile(t, dir, "l10.csv", "a\na\n")
	glob := filepath.Join(dir, "s*.csv")
	for _, c := range []struct {
		name   string
		labels []string
		want   []string // the label of each row read
		files  []string // Input.LabelFiles
		rows   [][]float64
	}{
		{"base name", []string{"s2.csv=" + l2}, []string{"", "", "b", "a", "", ""}, []string{"", l2, ""},
			[][]float64{{1, 2}, {3, 4}, {5, 6}, {9, 10}, {11, 12}, {13, 14}}},
		{"path and base name", []string{filepath.Join(dir, "s10.csv") + "=" + l10, "s2.csv=" + l2}, []string{"", "", "b", "a", "a", "a"}, []string{"", l2, l10},
			[][]float64{{1, 2}, {3, 4}, {5, 6}, {9, 10}, {11, 12}, {13, 14}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := Open([]string{glob}, Options{LabelFiles: c.labels, LabelsIgnore: []string{"0"}})
			require.NoError(t, err)
			require.Equal(t, c.files, in.LabelFiles)
			require.True(t, in.Source.Schema().Labelled)
			got := readRows(t, in.Source)
			require.Equal(t, c.rows, got.x)
			require.Equal(t, c.want, got.labels)
			require.Equal(t, []string{"s1", "s1", "s2", "s2", "s10", "s10"}, got.domains)
			ds, err := dataset.Collect(t.Context(), in.Source)
			require.NoError(t, err)
			require.Equal(t, len(c.rows), ds.N())
			var labelled []int
			for p, l := range c.want {
				if l != "" {
					labelled = append(labelled, p)
				}
			}
			require.Equal(t, labelled, ds.LabelledRows())
		})
	}
	// A relative data path in a pair names the file as the glob does.
	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(dir)
	in, err := Open([]string{"s*.csv"}, Options{LabelFiles: []string{"./s10.csv=l10.csv"}})
	require.NoError(t, err)
	require.Equal(t, []string{"", "", "l10.csv"}, in.LabelFiles)
	t.Chdir(wd)
}

// TestLabelPairErrors checks the mistakes a user can make with pairs:
// each is an OptionError naming LabelFiles and saying what to do.
func TestLabelPairErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s1.csv", "1,2\n3,4\n")
	writeFile(t, dir, "s2.csv", "5,6\n7,8\n")
	sub := filepath.Join(dir, "b")
	require.NoError(t, os.Mkdir(sub, 0o755))
	writeFile(t, sub, "s1.csv", "1,2\n3,4\n")
	l1 := writeFile(t, dir, "l1.csv", "a\nb\n")
	data := []string{filepath.Join(dir, "s*.csv"), filepath.Join(sub, "s1.csv")}
	for _, c := range []struct {
		name   string
		labels []string
		err    string
	}{
		{"unknown file", []string{"s3.csv=" + l1}, `"s3.csv" is none of the 3 data files`},
		{"ambiguous base name", []string{"s1.csv=" + l1}, `"s1.csv" names 2 data files`},
		{"twice", []string{"s2.csv=" + l1, filepath.Join(dir, "s2.csv") + "=" + l1}, "has a label file already"},
		{"mixed", []string{"s2.csv=" + l1, l1}, "label files and DATA=LABELS pairs are mixed"},
		{"missing label file", []string{"s2.csv=" + filepath.Join(dir, "none.csv")}, "none.csv: no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(data, Options{LabelFiles: c.labels})
			require.ErrorContains(t, err, c.err)
			if c.name != "missing label file" {
				var oe *dataset.OptionError
				require.ErrorAs(t, err, &oe)
				require.Equal(t, "LabelFiles", oe.Option)
			}
		})
	}
}

// TestSplitLabelPair checks which entries are pairs: a file whose name
// holds '=' is a file.
func TestSplitLabelPair(t *testing.T) {
	dir := t.TempDir()
	odd := writeFile(t, dir, "a=b.csv", "x\n")
	for _, c := range []struct {
		entry, data, labels string
		ok                  bool
	}{
		{"sample2.csv=labels2.csv", "sample2.csv", "labels2.csv", true},
		{"d/s.csv=l/x.csv", "d/s.csv", "l/x.csv", true},
		{"labels*.csv", "", "", false},
		{odd, "", "", false},
		{"=labels.csv", "", "", false},
		{"s.csv=", "", "", false},
	} {
		d, l, ok := SplitLabelPair(c.entry)
		require.Equal(t, []any{c.data, c.labels, c.ok}, []any{d, l, ok}, c.entry)
	}
}
