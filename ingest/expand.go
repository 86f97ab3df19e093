package ingest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/fcs"
)

// Kind is a kind of data file.
type Kind int

// The kinds of data files.
const (
	CSV     Kind = iota + 1 // comma-separated values, with or without a header (.gz too)
	FCS                     // Flow Cytometry Standard 2.0, 3.0 and 3.1
	Parquet                 // Apache Parquet
	AnnData                 // an AnnData store in the Zarr v2 format (a folder)
)

// String returns the kind's name as a model records it (preprocess
// Pipeline.Format): "csv", "fcs", "parquet" or "zarr".
func (k Kind) String() string {
	switch k {
	case CSV:
		return "csv"
	case FCS:
		return "fcs"
	case Parquet:
		return "parquet"
	case AnnData:
		return "zarr"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// KindOf returns the kind of the file or folder at path: an AnnData store
// (a folder holding .zgroup), an FCS file (fcs.Detect), a Parquet file (by
// the extension .parquet or .parq, or the magic number PAR1), or else CSV.
func KindOf(path string) Kind {
	switch {
	case isZarrStore(path):
		return AnnData
	case fcs.Detect(path):
		return FCS
	case isParquet(path):
		return Parquet
	}
	return CSV
}

// isZarrStore reports whether path is a Zarr store (a folder with a
// .zgroup file), as dica and anndata's write_zarr write them.
func isZarrStore(path string) bool {
	fi, err := os.Stat(filepath.Join(path, ".zgroup"))
	return err == nil && fi.Mode().IsRegular()
}

// isParquet reports whether the file at path is Parquet: its name ends in
// .parquet or .parq, or it starts with the magic bytes PAR1.
func isParquet(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".parq":
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == "PAR1"
}

// Expand turns data arguments into the files to read, in reading order,
// and their kind: a glob ('sample*.csv', expanded in natural order:
// sample2 before sample10, see csvio.NaturalCompare), a file, a folder
// (the FCS files in it, symbolic links followed, in natural order) or an
// AnnData store (a folder with .zgroup, read alone). The files must be of
// one kind, and regular files: a pipe, socket or device is refused, since
// dica reads its data more than once (save the stream to a file first).
func Expand(patterns []string) ([]string, Kind, error) {
	if len(patterns) == 0 {
		return nil, 0, optErr("Files", patterns, "no data files")
	}
	var stores []string
	for _, p := range patterns {
		if isZarrStore(p) {
			stores = append(stores, p)
		}
	}
	if len(stores) > 0 {
		if len(stores) != len(patterns) {
			return nil, 0, optErr("Files", patterns, "an AnnData store (%s) mixed with other files: give one store alone", stores[0])
		}
		if len(stores) > 1 {
			return nil, 0, optErr("Files", patterns, "one AnnData store at a time (%s and %s)", stores[0], stores[1])
		}
		return stores, AnnData, nil
	}
	pats, err := expandDirs(patterns)
	if err != nil {
		return nil, 0, err
	}
	files, err := Glob(pats)
	if err != nil {
		return nil, 0, err
	}
	kinds := map[Kind]int{}
	var kind Kind
	for _, f := range files {
		if err := regular(f); err != nil {
			return nil, 0, err
		}
		kind = KindOf(f)
		kinds[kind]++
	}
	if len(kinds) > 1 {
		return nil, 0, optErr("Files", patterns, "the files mix kinds (%d FCS, %d Parquet, %d CSV): give files of one kind", kinds[FCS], kinds[Parquet], kinds[CSV])
	}
	return files, kind, nil
}

// Glob expands file patterns as csvio.Glob does (natural order, each file
// once, a pattern matching nothing is an error).
func Glob(patterns []string) ([]string, error) {
	files, err := csvio.Glob(patterns)
	if err != nil {
		return nil, optErr("Files", patterns, "%s", strings.TrimPrefix(err.Error(), "csvio: "))
	}
	return files, nil
}

// regular returns an error unless path is a regular file (or a symbolic
// link to one).
func regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return nil
	}
	what := StreamKind(fi.Mode())
	if fi.IsDir() {
		what = "a folder without FCS files"
	}
	return fmt.Errorf("%s is %s: dica reads its data more than once, from files; save the stream to a file first (for example: cat > cells.csv)", path, what)
}

// StreamKind names what a file that is not a regular file is, for messages
// that refuse to read it more than once: "a pipe", "a socket", "a device",
// or "not a regular file".
func StreamKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// expandDirs replaces each folder among the patterns by the FCS files in it
// (a folder of samples, one file each, is how cytometers and FlowJo export
// them), in natural order, following symbolic links. A folder without FCS
// files is an error: its CSV files may be data or label files, so they
// must be named by a glob.
func expandDirs(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			out = append(out, p)
			continue
		}
		fcsFiles, err := FolderFCS(p)
		if err != nil {
			return nil, err
		}
		if len(fcsFiles) == 0 {
			return nil, optErr("Files", p, "%s is a folder without FCS files; name CSV files with a glob such as '%s'", p, filepath.Join(p, "*.csv"))
		}
		out = append(out, fcsFiles...)
	}
	return out, nil
}

// FolderFCS returns the FCS files in the folder dir, in natural order
// (sample2 before sample10): its regular files (or links to them) that are
// not hidden and that fcs.Detect accepts. A folder without FCS files gives
// none and no error.
func FolderFCS(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f := filepath.Join(dir, e.Name())
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && fcs.Detect(f) {
			files = append(files, f)
		}
	}
	slices.SortFunc(files, csvio.NaturalCompare)
	return files, nil
}
